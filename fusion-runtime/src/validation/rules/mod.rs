//! The rules: each file is one rule, and owns its JSON Schema keyword(s), its check on the
//! typed value serde has read, and its SPEC §4 wording (the text of its `<field>` line).
//!
//! A rule the derive writes (`length`, `range`, `items`, `format`, `pattern`, `multiple_of`)
//! has `fn keywords(args, schema)`, which [`Rule::apply`] calls for `Rule::<Name>(args)`, and
//! `fn check(value: Typed<'_>, args) -> Check`, whose [`Check::Engine`] says a typed value
//! cannot decide: `jsonschema` then checks the value sent on the field's sub-schema. The other
//! rules have no attribute: serde, the key count or `jsonschema` decide them (the typed path
//! looks a string sent up among an enum field's options, `enum_const::check`).
//!
//! # How to add a rule
//!
//! 1. `rules/<name>.rs`, with its `KEYWORDS` (the keywords it writes, declared once: the
//!    derive's typed path, the healing generator and the contract diff read them through
//!    `keywords::ALL`, and a test fails when a rule writes one it does not declare, or the
//!    contract diff has no row for one), `keywords`, `check` and the wording of its issue (a
//!    new [`IssueKind`] variant when no existing one says it), and its `mod` line below and
//!    its row in `keywords.rs`; its [`Rule`] variant, whose [`Rule::apply`] arm calls its
//!    `keywords`.
//! 2. One row in fusion-macros' `expand/tool_input.rs` `RULES` table (plus the attribute's
//!    parsing in `attr.rs`, and a line in `check.rs` if it fits some types only): the derive
//!    writes `Rule::<Name>(args)` and `rules::<name>::check(value, args)`. State built once
//!    (the pattern's matcher) comes through the row's `check_args`, as a `static`.
//!
//! A new `format` is one [`Format`](crate::validation::Format) variant, its row in
//! [`format::FORMATS`] and its attribute in the macro's format table.
//!
//! [`Rule`]: crate::validation::spec::Rule
//! [`Rule::apply`]: crate::validation::spec::Rule::apply
//! [`IssueKind`]: super::IssueKind

pub mod custom;
pub mod enum_const;
pub mod format;
pub mod items;
pub(crate) mod keywords;
pub mod length;
pub mod multiple_of;
pub mod num;
pub mod pattern;
pub mod properties;
pub mod range;
pub mod required;
pub mod types;
pub mod union;
pub mod unknown_keys;

/// A JSON Schema keyword a rule writes (declared once, in the rule's file, as its
/// `KEYWORDS`), and the values it constrains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Keyword {
    /// The keyword, as the schema spells it.
    pub(crate) name: &'static str,
    /// What it constrains beyond the value's type.
    pub(crate) on: On,
}

/// The values a rule's keyword constrains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum On {
    String,
    Number,
    Array,
    /// Any value (`enum`).
    Any,
}

/// A rule's verdict on a typed value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Check {
    /// The value satisfies the rule.
    Pass,
    /// The value breaks the rule: the schema rejects the arguments.
    Fail,
    /// The typed value cannot decide: `jsonschema` checks the value sent on the field's
    /// sub-schema.
    Engine,
}

impl Check {
    /// Both verdicts: a failure wins, then the engine.
    #[inline(always)]
    pub const fn and(self, other: Check) -> Check {
        match (self, other) {
            (Check::Fail, _) | (_, Check::Fail) => Check::Fail,
            (Check::Engine, _) | (_, Check::Engine) => Check::Engine,
            _ => Check::Pass,
        }
    }

    /// [`Check::Pass`] when `ok`, else [`Check::Fail`].
    #[inline(always)]
    pub const fn from_bool(ok: bool) -> Check {
        if ok { Check::Pass } else { Check::Fail }
    }
}

/// What a field's value, as serde read it, tells its rules.
#[derive(Clone, Copy, Debug)]
pub enum Typed<'a> {
    /// A string was sent.
    Str(&'a str),
    /// An integer was sent.
    Int(i128),
    /// A boolean was sent.
    Bool,
    /// An array of this many strings was sent.
    Strs(usize),
    /// An `Option` holds `None`: the key was absent or `null`.
    Unset,
    /// The type tells nothing: `jsonschema` checks the value sent.
    Opaque,
}

/// Types whose successful deserialization proves the JSON type that was sent.
pub trait Trusted {
    /// What the value tells the rules.
    fn typed(&self) -> Typed<'_>;
}

impl Trusted for String {
    fn typed(&self) -> Typed<'_> {
        Typed::Str(self)
    }
}

impl Trusted for str {
    fn typed(&self) -> Typed<'_> {
        Typed::Str(self)
    }
}

impl Trusted for bool {
    fn typed(&self) -> Typed<'_> {
        Typed::Bool
    }
}

macro_rules! trusted_int {
    ($($t:ty),*) => {$(
        impl Trusted for $t {
            fn typed(&self) -> Typed<'_> {
                i128::try_from(*self).map_or(Typed::Opaque, Typed::Int)
            }
        }
    )*};
}
trusted_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl Trusted for Vec<String> {
    fn typed(&self) -> Typed<'_> {
        Typed::Strs(self.len())
    }
}

impl<T: Trusted + ?Sized> Trusted for Box<T> {
    fn typed(&self) -> Typed<'_> {
        (**self).typed()
    }
}

impl<T: Trusted> Trusted for Option<T> {
    fn typed(&self) -> Typed<'_> {
        match self {
            Some(v) => v.typed(),
            None => Typed::Unset,
        }
    }
}

/// A field the derive probes: `(&Probe(&field)).typed()` is the field's [`Trusted`] answer
/// when its type has one, and [`Typed::Opaque`] otherwise (autoref specialization).
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// The [`Probe`] branch for [`Trusted`] types.
pub trait ProbeTrusted {
    /// What the value tells.
    fn typed(&self) -> Typed<'_>;
}

impl<T: Trusted + ?Sized> ProbeTrusted for Probe<'_, T> {
    fn typed(&self) -> Typed<'_> {
        self.0.typed()
    }
}

/// The [`Probe`] branch for every other type.
pub trait ProbeOpaque {
    /// Nothing.
    fn typed(&self) -> Typed<'_> {
        Typed::Opaque
    }
}

impl<T: ?Sized> ProbeOpaque for &Probe<'_, T> {}
