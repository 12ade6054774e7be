//! `type`: serde decides it on the valid path (a value read as a `String` was a string), and
//! `jsonschema` on the invalid one; its wording.

use std::borrow::Cow;

use jsonschema::JsonType;
use jsonschema::error::TypeKind;

/// The problem of a value of another JSON type.
pub const PROBLEM: &str = "Invalid type";

/// A JSON type in words, by its `type` name (`a value` for an unknown name).
pub fn words(name: &str) -> &'static str {
    match name {
        "null" => "null",
        "boolean" => "a boolean (true or false)",
        "integer" => "an integer",
        "number" => "a number",
        "string" => "a string",
        "array" => "an array",
        "object" => "an object",
        _ => "a value",
    }
}

/// Several types in words, `null` last: "a string or null" reads as the optional field it is.
pub fn words_of<'a>(names: impl Iterator<Item = &'a str>) -> Cow<'static, str> {
    let mut names: Vec<&str> = names.collect();
    names.sort_by_key(|t| *t == "null");
    names
        .into_iter()
        .map(words)
        .collect::<Vec<_>>()
        .join(" or ")
        .into()
}

/// The expected text of a `jsonschema` type error.
pub fn expected(kind: &TypeKind) -> Cow<'static, str> {
    match kind {
        TypeKind::Single(t) => words(t.as_str()).into(),
        TypeKind::Multiple(set) => words_of(set.iter().map(JsonType::as_str)),
    }
}
