//! `multiple_of = n`: `multipleOf`.

use serde_json::{Map, Value};

use super::num::Num;
use super::{Check, Typed};
use super::{Keyword, On};
use crate::validation::sent::push_number;

/// The keywords this rule writes into a field's schema, and the values they constrain.
pub(crate) const KEYWORDS: &[Keyword] = &[Keyword {
    name: "multipleOf",
    on: On::Number,
}];

/// Its keyword.
pub fn keywords(divisor: Num, schema: &mut Map<String, Value>) {
    schema.insert("multipleOf".into(), divisor.to_json());
}

/// An integer by an integer divisor, exactly; a fraction (divisor or sent) is the engine's.
#[inline]
pub fn check(value: Typed<'_>, divisor: Num) -> Check {
    match (value, divisor) {
        (Typed::Int(x), Num::Int(d)) if d > 0 => Check::from_bool(x % i128::from(d) == 0),
        (Typed::Int(_) | Typed::Opaque, _) => Check::Engine,
        _ => Check::Pass,
    }
}

/// The problem: `Not a multiple of 5`.
pub fn push_problem(out: &mut String, divisor: f64) {
    out.push_str("Not a multiple of ");
    push_number(out, divisor);
}

/// The expected text: `a multiple of 5`.
pub fn push_expected(out: &mut String, divisor: f64) {
    out.push_str("a multiple of ");
    push_number(out, divisor);
}
