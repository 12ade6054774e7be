//! `minProperties` / `maxProperties`: no attribute writes them, `jsonschema` decides them
//! when a field's type carries them; their wording.

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
