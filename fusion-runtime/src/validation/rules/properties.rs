//! `properties`, `required`, `minProperties` / `maxProperties`: no attribute writes them (a
//! nested input's fields do), `jsonschema` decides them; their wording — the bounds' problems,
//! and what an object takes, key by key (`an object with: sku (a string matching …), quantity
//! (an integer >= 1 and <= 99), note (optional, a string)`), for the lines of an object sent
//! as another type, missing, or as too few items of an array.

use jsonschema::error::ValidationErrorKind as K;

use super::{Declaration, no_attribute};
use crate::validation::sent::push_int;
use crate::validation::{IssueKind, Measure};

/// The rule: no keyword of its own (a nested input's fields write them), `jsonschema`'s
/// errors for the bounds of an object's size (a bound, worded by its [`Measure`]).
pub(crate) const RULE: Declaration = Declaration {
    keywords: &[],
    reads: |error| match error {
        K::MinProperties { limit } => Some(IssueKind::bound(
            false,
            Measure::Properties,
            *limit as f64,
            true,
        )),
        K::MaxProperties { limit } => Some(IssueKind::bound(
            true,
            Measure::Properties,
            *limit as f64,
            true,
        )),
        _ => None,
    },
    issue: None,
    attribute: no_attribute,
};

/// The problems, below and above the bounds.
pub const PROBLEMS: (&str, &str) = ("Too few properties", "Too many properties");

/// The unit of its count.
pub const UNIT: (&str, &str) = ("property", "properties");

/// An object's words before its keys.
pub const WITH: &str = "an object with: ";

/// Before a key's rule, for a key that may be left out.
pub const OPTIONAL: &str = "optional, ";

/// Between an array's words and the words of each of its items.
pub const EACH: &str = ", each ";

/// Before an object's words, for an object that may also be `null` (first, so that `or null`
/// cannot be read as the last key's alternative).
pub const NULL_OR: &str = "null or ";

/// One key and its rule: `sku (a string matching ^[A-Z]{3}-[0-9]{4}$)`.
pub fn push_key(out: &mut String, key: &str, required: bool, rule: &str) {
    out.push_str(key);
    out.push_str(" (");
    if !required {
        out.push_str(OPTIONAL);
    }
    out.push_str(rule);
    out.push(')');
}

/// The keys left out of a list, and where the schema lists them all: `and 3 more keys, listed
/// at #/$defs/LineItem/properties in the tool's inputSchema`.
pub fn push_more(out: &mut String, more: usize, at: &str) {
    out.push_str("and ");
    push_int(out, more);
    out.push_str(if more == 1 { " more key" } else { " more keys" });
    push_listed_at(out, at);
}

/// An object whose keys are not written out (past the depth a line describes): `an object
/// of 3 keys, listed at #/$defs/Address/properties in the tool's inputSchema`.
pub fn push_keys_elsewhere(out: &mut String, keys: usize, at: &str) {
    out.push_str("an object of ");
    push_int(out, keys);
    out.push_str(if keys == 1 { " key" } else { " keys" });
    push_listed_at(out, at);
}

fn push_listed_at(out: &mut String, at: &str) {
    out.push_str(", listed at ");
    out.push_str(at);
    out.push_str("/properties in the tool's inputSchema");
}
