//! `anyOf` / `oneOf` of shapes: `jsonschema` decides them; their wording. A union of constants
//! (a documented Rust enum) is worded as [`super::enum_const`].

/// The problem of a value no branch accepts.
pub const PROBLEM: &str = "No allowed shape matched";

/// The expected text: the shapes, `; `-separated.
pub fn push_expected(out: &mut String, shapes: &[String]) {
    if shapes.is_empty() {
        out.push_str("one of the allowed shapes");
    } else {
        out.push_str("one of: ");
        crate::validation::push_list(out, shapes, "; ", |out, s| out.push_str(s));
    }
}
