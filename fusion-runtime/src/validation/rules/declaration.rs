//! What a rule declares of itself ([`Declaration`], its file's `RULE`): the keywords it
//! writes, what a change of each means, how `jsonschema`'s error for them reads as an issue,
//! an issue kind of its own with its code and words, and the attribute `openapi gen` writes
//! for them.

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::validation::IssueKind;

/// A rule, declared once in its file as its `RULE` and listed in [`ALL`](super::ALL).
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
