//! The typed check: a derived input's rules run on the fields serde has already read, so a
//! valid call costs serde plus the rules themselves, with no walk over the arguments.
//!
//! `#[derive(ToolInput)]` writes `typed_check`, one [`FastCheck::field`] call per field, each
//! handed what the field's Rust type tells ([`Typed`]). The check relies on what a successful
//! `T::deserialize` proves, and only that:
//! - a field of a type serde reads as exactly one JSON type (`String`, the integer types,
//!   `bool`, `Vec<String>`, and `Option` / `Box` of them) was sent as that type, so its schema
//!   node only has its rules left to check, on the typed value;
//! - a required field was sent (serde would have failed on a missing key), and an `Option`
//!   that is `Some` without a serde default was sent too;
//! - anything else (enums, nested inputs, floats, defaults) is checked by the fast path on the
//!   value sent, found by key.
//!
//! Counting the keys known to be present and comparing with the object's size replaces the
//! walk that finds unknown keys. When the typed check says no, or serde fails, the caller runs
//! the full path ([`FastCheck::accepts`], then the validator), so the typed check only has to
//! be right when it says yes: `tests/tests/fast_path_contract.rs` checks that it never says yes
//! to arguments the schema rejects.

use serde_json::{Map, Value};

use super::{Additional, FastCheck, Kind, Node, is_plain_email, string_length_within};
use crate::schema::ContainerSpec;

/// What a field's value, as serde read it, tells the typed check.
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
    /// The type tells nothing: the value sent is checked.
    Opaque,
}

/// Types whose successful deserialization proves the JSON type that was sent.
pub trait Trusted {
    /// What the value tells the typed check.
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
                Typed::Int(i128::from(*self))
            }
        }
    )*};
}
trusted_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Trusted for isize {
    fn typed(&self) -> Typed<'_> {
        // `isize` is at most 64 bits wide on every target Rust supports.
        i64::try_from(*self).map_or(Typed::Opaque, |v| Typed::Int(i128::from(v)))
    }
}

impl Trusted for usize {
    fn typed(&self) -> Typed<'_> {
        u64::try_from(*self).map_or(Typed::Opaque, |v| Typed::Int(i128::from(v)))
    }
}

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

/// What the typed check does with a field's typed value, decided from its schema node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    /// A string node without `enum`: its string keywords.
    Str,
    /// An integer node without `enum` whose bounds are all integers.
    Int,
    /// A boolean node without `enum`: nothing.
    Bool,
    /// An array node without `enum` whose items are plain strings: its item count.
    Strs,
    /// Check the value sent.
    Raw,
}

/// One field of the plan.
#[derive(Debug)]
struct Field {
    name: &'static str,
    node: usize,
    required: bool,
    /// An `Option` that is `Some` was sent (no serde default could have filled it).
    some_is_sent: bool,
    how: How,
}

/// The typed check of a derived input: its fields, in the derive's order.
#[derive(Debug)]
pub(crate) struct Plan {
    fields: Vec<Field>,
    /// `additionalProperties: false`: every key must be a field.
    deny_unknown: bool,
}

impl FastCheck {
    /// Builds the typed check for the input `spec` describes, when the compiled schema's root
    /// is exactly that object: its properties are the spec's fields, with the same `required`,
    /// and `additionalProperties` is `false` or absent. Otherwise the input keeps the walk.
    pub(crate) fn plan(&mut self, spec: &ContainerSpec) {
        self.typed = self.build_plan(spec);
    }

    fn build_plan(&self, spec: &ContainerSpec) -> Option<Plan> {
        let root = &self.nodes[self.root];
        let deny_unknown = match root.additional {
            Additional::Denied => true,
            Additional::Allowed => false,
            Additional::Schema(_) => return None,
        };
        if root.kind != Kind::Object
            || root.types & super::NULL != 0
            || !root.enums.is_empty()
            || !root.required_other.is_empty()
            || root.properties.len() != spec.fields.len()
            || deny_unknown == spec.allow_unknown_fields
        {
            return None;
        }
        let fields = spec
            .fields
            .iter()
            .map(|f| {
                let i = root
                    .properties
                    .binary_search_by(|p| p.0.as_str().cmp(f.name))
                    .ok()?;
                let (_, node, required) = root.properties[i];
                (required == f.required).then(|| Field {
                    name: f.name,
                    node,
                    required,
                    some_is_sent: !f.required && !f.default,
                    how: self.how(&self.nodes[node]),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        // Each property was found once: the names are the properties, one to one.
        let mut names: Vec<&str> = fields.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        (names.len() == fields.len()).then_some(Plan {
            fields,
            deny_unknown,
        })
    }

    fn how(&self, n: &Node) -> How {
        if !n.enums.is_empty() {
            return How::Raw;
        }
        match n.kind {
            Kind::String => How::Str,
            Kind::Integer if n.int_bounds.is_some() || n.number_delegate.is_none() => How::Int,
            Kind::Boolean => How::Bool,
            Kind::Array
                if n.items.is_none_or(|i| {
                    let item = &self.nodes[i];
                    item.kind == Kind::String && item.plain_string && item.enums.is_empty()
                }) =>
            {
                How::Strs
            }
            _ => How::Raw,
        }
    }

    /// Whether this input has a typed check.
    pub(crate) fn has_plan(&self) -> bool {
        self.typed.is_some()
    }

    /// Checks field `i` of the input (the derive's order): its typed value when `typed` and
    /// the schema node allow, else the value sent. `present` counts the keys known to be sent.
    #[inline(always)]
    pub fn field(
        &self,
        i: usize,
        typed: Typed<'_>,
        obj: &Map<String, Value>,
        present: &mut usize,
    ) -> bool {
        let Some(f) = self.typed.as_ref().and_then(|p| p.fields.get(i)) else {
            return false;
        };
        let n = &self.nodes[f.node];
        let fits = matches!(
            (typed, f.how),
            (Typed::Str(_), How::Str)
                | (Typed::Int(_), How::Int)
                | (Typed::Bool, How::Bool)
                | (Typed::Strs(_), How::Strs)
        );
        if !fits {
            return match obj.get(f.name) {
                Some(v) => {
                    *present += 1;
                    self.check(f.node, v)
                }
                None => !f.required,
            };
        }
        // serde read a value of the node's type: it was sent, unless a serde default filled
        // the field, in which case the schema checks nothing.
        if !f.required && !f.some_is_sent && !obj.contains_key(f.name) {
            return true;
        }
        *present += 1;
        match typed {
            Typed::Str(s) => n.plain_string || str_ok(n, s, || obj.get(f.name)),
            Typed::Int(x) => n
                .int_bounds
                .is_none_or(|b| b.lo <= x && x <= b.hi && b.multiple.is_none_or(|m| x % m == 0)),
            Typed::Strs(len) => {
                let len = len as u64;
                n.min_items <= len && len <= n.max_items
            }
            Typed::Bool | Typed::Unset | Typed::Opaque => true,
        }
    }

    /// After every [`FastCheck::field`]: whether the object holds no other key than the
    /// `present` ones counted, when unknown keys are denied.
    #[inline(always)]
    pub fn done(&self, present: usize, obj: &Map<String, Value>) -> bool {
        self.typed
            .as_ref()
            .is_some_and(|p| !p.deny_unknown || present == obj.len())
    }
}

/// A string node's keywords on a string sent; `sent` finds the JSON value for the checks the
/// validator makes (formats other than a plain email, patterns the fast path does not parse).
fn str_ok<'v>(n: &Node, s: &str, sent: impl FnOnce() -> Option<&'v Value>) -> bool {
    if !string_length_within(s, n.min_length, n.max_length)
        || !n.pattern.as_ref().is_none_or(|p| p.is_match(s))
    {
        return false;
    }
    let plain_email = n.email.is_none() || is_plain_email(s);
    if plain_email && n.string_delegate.is_none() {
        return true;
    }
    sent().is_some_and(|v| {
        (plain_email || n.email.as_ref().is_none_or(|d| d.is_valid(v)))
            && n.string_delegate.as_ref().is_none_or(|d| d.is_valid(v))
    })
}
