//! `required`: a field that is not an `Option` and has no serde default. serde decides it on
//! the valid path (it fails on a missing key), `jsonschema` on the invalid one.

/// The problem of a key not sent (nothing was sent: the line has no "You sent").
pub const PROBLEM: &str = "Required field is missing";
