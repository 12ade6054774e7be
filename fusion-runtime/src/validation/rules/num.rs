//! [`Num`], the number a `#[fusion(..)]` attribute writes (`range`, `multiple_of`): below
//! both the rules that check it and [`spec`](crate::validation::spec) that records it, so
//! neither imports the other for it; and the numbers of an attribute `openapi gen` writes
//! (bounds, counts).

use serde_json::Value;

/// A number written in an attribute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// A negative or positive integer.
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
}

/// A bound as an attribute's literal: an integer field's bounds are integers, a fractional
/// lower bound rounded up and an upper one down (the same integers fit).
pub(crate) fn literal(x: f64, integer: bool, lower: bool) -> String {
    if !integer {
        return format!("{x:?}");
    }
    let x = if lower { x.ceil() } else { x.floor() };
    format!("{}", x as i64)
}

impl Num {
    /// As a JSON number.
    pub fn to_json(self) -> Value {
        match self {
            Num::Int(i) => Value::from(i),
            Num::Float(f) => Value::from(f),
        }
    }
}

/// A count rule's attribute (`length(min = 1, max = 64)`) from its two keywords; `None`
/// when neither is there or no count fits both.
pub(crate) fn counts_attribute(
    name: &str,
    schema: &Value,
    [min, max]: [&str; 2],
) -> Option<String> {
    let int = |k: &str| schema.get(k).and_then(Value::as_u64);
    match (int(min), int(max)) {
        (Some(a), Some(b)) if a > b => None,
        (Some(a), Some(b)) => Some(format!("{name}(min = {a}, max = {b})")),
        (Some(a), None) => Some(format!("{name}(min = {a})")),
        (None, Some(b)) => Some(format!("{name}(max = {b})")),
        (None, None) => None,
    }
}
