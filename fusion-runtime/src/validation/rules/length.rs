//! `length(min = .., max = ..)`: `minLength` / `maxLength`, in characters.

use serde_json::{Map, Value};

use jsonschema::error::ValidationErrorKind as K;

use super::num::counts_attribute;
use super::{Change, Check, Declaration, Keyword, On, Typed};
use crate::validation::{IssueKind, Measure};

/// The rule: its keywords and `jsonschema`'s errors for them (a bound, worded by its
/// [`Measure`]).
pub(crate) const RULE: Declaration = Declaration {
    keywords: &[
        Keyword {
            name: "minLength",
            on: On::String,
            change: Change::Lower,
        },
        Keyword {
            name: "maxLength",
            on: On::String,
            change: Change::Upper,
        },
    ],
    reads: |error| match error {
        K::MinLength { limit } => Some(IssueKind::bound(
            false,
            Measure::Length,
            *limit as f64,
            true,
        )),
        K::MaxLength { limit } => {
            Some(IssueKind::bound(true, Measure::Length, *limit as f64, true))
        }
        _ => None,
    },
    issue: None,
    attribute: |schema, _| counts_attribute("length", schema, ["minLength", "maxLength"]),
};

/// Its keywords.
pub fn keywords(min: Option<u64>, max: Option<u64>, schema: &mut Map<String, Value>) {
    if let Some(n) = min {
        schema.insert("minLength".into(), n.into());
    }
    if let Some(n) = max {
        schema.insert("maxLength".into(), n.into());
    }
}

/// A string's length in characters within the bounds (which apply to strings only).
#[inline]
pub fn check(value: Typed<'_>, min: Option<u64>, max: Option<u64>) -> Check {
    match value {
        Typed::Str(s) => Check::from_bool(within(s, min.unwrap_or(0), max.unwrap_or(u64::MAX))),
        Typed::Opaque => Check::Engine,
        _ => Check::Pass,
    }
}

/// Whether `s` has `min..=max` characters, without counting past what decides it.
fn within(s: &str, min: u64, max: u64) -> bool {
    // A string has at most as many characters as bytes, and at least a quarter as many.
    let bytes = s.len() as u64;
    if bytes < min || bytes.div_ceil(4) > max {
        return false;
    }
    if min <= bytes.div_ceil(4) && bytes <= max {
        return true;
    }
    let n = s.chars().count() as u64;
    min <= n && n <= max
}

/// The problems, below and above the bounds.
pub const PROBLEMS: (&str, &str) = ("Too short", "Too long");

/// The unit of its count.
pub const UNIT: (&str, &str) = ("character", "characters");
