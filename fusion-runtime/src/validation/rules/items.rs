//! `items(min = .., max = ..)`: `minItems` / `maxItems`.

use serde_json::{Map, Value};

use super::{Check, Typed};
use super::{Keyword, On};

/// The keywords this rule writes into a field's schema, and the values they constrain.
pub(crate) const KEYWORDS: &[Keyword] = &[
    Keyword {
        name: "minItems",
        on: On::Array,
    },
    Keyword {
        name: "maxItems",
        on: On::Array,
    },
];

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
