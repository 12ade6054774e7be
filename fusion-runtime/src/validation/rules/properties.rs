//! `minProperties` / `maxProperties`: no attribute writes them, `jsonschema` decides them
//! when a field's type carries them; their wording.

use serde_json::Value;

use crate::validation::sent::push_u64;

/// The problem: `Too few properties` / `Too many properties`.
pub fn problem(upper: bool) -> &'static str {
    if upper {
        "Too many properties"
    } else {
        "Too few properties"
    }
}

/// The unit of its count.
pub const UNIT: (&str, &str) = ("property", "properties");

/// After "You sent": the sent object's size, ` (2 properties)`.
pub fn push_measured(out: &mut String, sent: &Value) {
    if let Value::Object(m) = sent {
        let n = m.len();
        out.push_str(" (");
        push_u64(out, n as u64);
        out.push(' ');
        out.push_str(if n == 1 { UNIT.0 } else { UNIT.1 });
        out.push(')');
    }
}
