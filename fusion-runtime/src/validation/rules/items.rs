//! `items(min = .., max = ..)`: `minItems` / `maxItems`.

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
            name: "minItems",
            on: On::Array,
            change: Change::Lower,
        },
        Keyword {
            name: "maxItems",
            on: On::Array,
            change: Change::Upper,
        },
    ],
    reads: |error| match error {
        K::MinItems { limit } => Some(IssueKind::bound(false, Measure::Items, *limit as f64, true)),
        K::MaxItems { limit } => Some(IssueKind::bound(true, Measure::Items, *limit as f64, true)),
        _ => None,
    },
    issue: None,
    attribute: |schema, _| counts_attribute("items", schema, ["minItems", "maxItems"]),
};

/// Its keywords.
pub fn keywords(min: Option<u64>, max: Option<u64>, schema: &mut Map<String, Value>) {
    if let Some(n) = min {
        schema.insert("minItems".into(), n.into());
    }
    if let Some(n) = max {
        schema.insert("maxItems".into(), n.into());
    }
}

/// An array's item count within the bounds (the keywords apply to arrays only).
#[inline]
pub fn check(value: Typed<'_>, min: Option<u64>, max: Option<u64>) -> Check {
    match value {
        Typed::Strs(n) => {
            let n = n as u64;
            Check::from_bool(min.is_none_or(|m| m <= n) && max.is_none_or(|m| n <= m))
        }
        Typed::Opaque => Check::Engine,
        _ => Check::Pass,
    }
}

/// The problems, below and above the bounds.
pub const PROBLEMS: (&str, &str) = ("Too few items", "Too many items");

/// The unit of its count.
pub const UNIT: (&str, &str) = ("item", "items");
