//! [`Num`], the number a `#[fusion(..)]` attribute writes (`range`, `multiple_of`): below
//! both the rules that check it and [`spec`](crate::validation::spec) that records it, so
//! neither imports the other for it.

use serde_json::Value;

/// A number written in an attribute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// A negative or positive integer.
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
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
