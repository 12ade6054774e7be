//! Schemas as data: local `$ref` resolution ([`ref_target`], [`resolve`], [`resolve_overlaid`]),
//! the [`ANNOTATION_KEYWORDS`], the `x-fusion-*` annotations, walking subschemas. Every reader of schemas (the validation explainer, the contract diff, the catalog) goes
//! through it. What the derive builds from `#[fusion(..)]` is [`crate::validation::spec`].

mod walk;

pub(crate) use walk::for_each_schema;
pub use walk::{
    ANNOTATION_KEYWORDS, INSTANCE_KEYWORDS, MAX_REF_HOPS, Overlaid, SCHEMA_MAP_KEYWORDS, has_ref,
    ref_target, resolve, resolve_overlaid, unwrap_nullable, without_annotations,
};

use serde_json::{Map, Value};

/// A JSON object (the crate's [`JsonObject`](crate::JsonObject), named here so that `schema`
/// imports nothing of the crate).
type JsonObject = Map<String, Value>;

/// Prefix of the annotations kept only in the validator's copy of a schema (the author's
/// "Expected …" text, the declared key order); [`strip_annotations`] removes them from the copy
/// agents see. They are annotations: they never change what validates.
pub const ANNOTATION_PREFIX: &str = "x-fusion-";
/// The author's "Expected …" text of a field.
pub const EXPECTED_KEY: &str = "x-fusion-expected";
/// The declared order of an object's keys.
pub const KEYS_KEY: &str = "x-fusion-keys";

/// The `format`s `schemars` writes for Rust number types. They are not JSON Schema formats.
const RUST_NUMBER_FORMATS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double",
];

/// Removes the `format`s `schemars` writes for Rust number types (`uint32`, `int64`, `double`,
/// …) from a schema and all its subschemas: validators that check formats strictly (ajv in the
/// TypeScript SDK, some LLM providers) warn about or reject unknown ones. Real formats
/// (`email`, `uri`, `date-time`, …) stay. Used for input and output schemas alike.
pub(crate) fn strip_rust_formats(schema: &mut Value) {
    for_each_schema(schema, &mut |obj| {
        if obj
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| RUST_NUMBER_FORMATS.contains(&f))
        {
            obj.remove("format");
        }
    });
}

/// Removes every `x-fusion-*` annotation, recursively (property names are left alone).
pub fn strip_annotations(value: &mut Value) {
    match value {
        Value::Object(obj) => {
            obj.retain(|k, _| !k.starts_with(ANNOTATION_PREFIX));
            for (k, v) in obj.iter_mut() {
                if k == "properties" || k == "$defs" || k == "patternProperties" {
                    if let Value::Object(children) = v {
                        children.values_mut().for_each(strip_annotations);
                    }
                } else {
                    strip_annotations(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_annotations),
        _ => {}
    }
}

/// The schema agents see: the annotated schema without its annotations.
pub fn shown_schema(annotated: &Value) -> JsonObject {
    let mut shown = annotated.clone();
    strip_annotations(&mut shown);
    match shown {
        Value::Object(obj) => obj,
        _ => JsonObject::new(),
    }
}
