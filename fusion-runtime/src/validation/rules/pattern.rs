//! `pattern = ".."`: `pattern`, an ECMA-262 regex: the macro compiles it with `jsonschema`
//! and the typed check hands the string to `jsonschema`, so one dialect decides.

use serde_json::{Map, Value};

use super::{Check, Typed};
use crate::validation::spec::Rule;

/// The rule `pattern = ".."` writes.
pub const fn rule(pattern: &'static str) -> Rule {
    Rule::Pattern(pattern)
}

/// Its keyword.
pub fn keywords(pattern: &'static str, schema: &mut Map<String, Value>) {
    schema.insert("pattern".into(), pattern.into());
}

/// The engine decides a string; `pattern` applies to strings only.
#[inline]
pub fn check(value: Typed<'_>, _pattern: &'static str) -> Check {
    match value {
        Typed::Str(_) | Typed::Opaque => Check::Engine,
        _ => Check::Pass,
    }
}

/// The problem of a string the pattern does not match.
pub const PROBLEM: &str = "Invalid format";

/// The expected text: `a string matching ^inv_[0-9]{4}$`.
pub fn push_expected(out: &mut String, pattern: &str) {
    out.push_str("a string matching ");
    out.push_str(pattern);
}
