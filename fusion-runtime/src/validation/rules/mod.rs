//! The rules: each file is one rule, and owns its JSON Schema keyword(s), its check on the
//! typed value serde has read, its SPEC §4 wording (the text of its `<field>` line), and its
//! [`Declaration`] (`RULE`): the keywords it writes and what a change of each means to a
//! caller, how `jsonschema`'s error for them reads as an issue, and an issue kind of its own
//! with its code and words. What reads "the rules" reads [`table::ALL`], never a list of
//! its own: the derive's typed path, the healing generator, the contract diff, the issue
//! reader (`explain`), the report's lines, OpenAPI's import.
//!
//! A rule the derive writes (`length`, `range`, `items`, `format`, `pattern`, `multiple_of`)
//! has `fn keywords(args, schema)`, which the field's [`Rule`] calls, and
//! `fn check(value: Typed<'_>, args) -> Check`, whose [`Check::Engine`] says a typed value
//! cannot decide: `jsonschema` then checks the value sent on the field's sub-schema. The other
//! rules have no attribute: serde, the key count or `jsonschema` decide them (the typed path
//! looks a string sent up among an enum field's options, `enum_const::check`).
//!
//! # How to add a rule
//!
//! 1. `rules/<name>.rs`, with its `RULE` ([`Declaration`]), `keywords`, `check` and the
//!    wording of its issue; its `mod` line below and its row in [`table::ALL`] (a test fails
//!    when a rule file is missing from the table). A new issue kind is one [`IssueKind`]
//!    variant, its code and words in the rule's [`OwnIssue`].
//! 2. One row in fusion-macros' attribute table (`fusion-macros/src/rules.rs`): the
//!    attribute's name, the value it takes, the fields it applies to and the rule it writes.
//!    The derive writes `Rule(|schema| rules::<name>::keywords(args, schema))` and
//!    `rules::<name>::check(value, args)`. A test fails when a row names no rule of the
//!    table, or a rule with `keywords` has no row.
//!
//! A new `format` is one [`Format`](crate::validation::Format) variant, its row in
//! [`format::FORMATS`] and its row in the macro's attribute table.
//!
//! [`Rule`]: crate::validation::spec::Rule
//! [`IssueKind`]: super::IssueKind

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::IssueKind;

pub mod custom;
pub mod enum_const;
pub mod format;
pub mod items;
pub mod length;
pub mod multiple_of;
pub mod num;
pub mod pattern;
pub mod properties;
pub mod range;
pub mod required;
pub(crate) mod table;
pub mod types;
pub mod union;
pub mod unknown_keys;

/// A rule, declared once in its file as its `RULE` and listed in [`table::ALL`].
pub(crate) struct Declaration {
    /// The keywords it writes into a field's schema.
    pub(crate) keywords: &'static [Keyword],
    /// `jsonschema`'s error, when it is about one of its keywords, as the issue.
    pub(crate) reads: fn(&ValidationErrorKind) -> Option<IssueKind>,
    /// An issue kind of its own; `None` when its issues are of a kind several rules share
    /// (a bound, a format), which the report words by its measure or format.
    pub(crate) issue: Option<OwnIssue>,
    /// The `#[fusion(..)]` attribute that writes what a field's schema holds of its keywords,
    /// for a field of the type its keywords constrain (`true`: an integer field, whose bounds
    /// are written as integers); `None` when the schema holds none of them, or holds what the
    /// macro would refuse. What `openapi gen` writes.
    #[cfg_attr(not(feature = "openapi"), allow(dead_code))]
    pub(crate) attribute: fn(&Value, bool) -> Option<String>,
}

/// Writes no attribute: a rule no attribute writes.
pub(crate) fn no_attribute(_: &Value, _: bool) -> Option<String> {
    None
}

/// An issue kind a rule owns: its code and the words of its line.
pub(crate) struct OwnIssue {
    /// Its Zod-style code (`not_multiple_of`).
    pub(crate) code: &'static str,
    /// Whether an issue kind is this one.
    pub(crate) is: fn(&IssueKind) -> bool,
    /// The problem (`Not a multiple of 5`), for a kind this one.
    pub(crate) problem: fn(&IssueKind, &mut String),
    /// The default "Expected …" text (`a multiple of 5`), for a kind this one.
    pub(crate) expected: fn(&IssueKind, &mut String),
}

/// Reads no error: a rule whose keywords `jsonschema` reports as another rule's issue.
pub(crate) fn reads_none(_: &ValidationErrorKind) -> Option<IssueKind> {
    None
}

/// A JSON Schema keyword a rule writes (declared once, in the rule's [`Declaration`]), the
/// values it constrains, and what a change of it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Keyword {
    /// The keyword, as the schema spells it.
    pub(crate) name: &'static str,
    /// What it constrains beyond the value's type.
    pub(crate) on: On,
    /// What a change of it between two versions of a schema means for a caller that learned
    /// the old one (the contract diff reads it).
    pub(crate) change: Change,
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

/// What a change of a rule's keyword means for a caller (`contract::diff` words it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// A lower bound: adding or raising it tightens, removing or lowering it loosens.
    Lower,
    /// An upper bound: adding or lowering it tightens.
    Upper,
    /// Restricts when present: adding or changing it tightens, removing it loosens. The words
    /// after the subject when it is added, changed, removed.
    WhenSet([&'static str; 3]),
    /// A divisor: a new one that divides the old loosens (every old value stays valid).
    Divisor,
    /// A list of the values allowed, compared value by value.
    Choice,
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
