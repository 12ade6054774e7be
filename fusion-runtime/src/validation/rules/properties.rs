//! `minProperties` / `maxProperties`: no attribute writes them, `jsonschema` decides them
//! when a field's type carries them; their wording.

/// The problems, below and above the bounds.
pub const PROBLEMS: (&str, &str) = ("Too few properties", "Too many properties");

/// The unit of its count.
pub const UNIT: (&str, &str) = ("property", "properties");
