//! Schemas as data: local `$ref` resolution ([`ref_target`], [`resolve`], [`resolve_overlaid`]),
//! the [`ANNOTATION_KEYWORDS`], the `x-fusion-*` annotations, walking subschemas. Every reader of schemas (the validation explainer, the contract diff, the catalog) goes
//! through it. What the derive builds from `#[fusion(..)]` is [`crate::validation::spec`].

mod walk;

pub(crate) use walk::for_each_schema;
pub use walk::{
    ANNOTATION_KEYWORDS, ANNOTATION_PREFIX, DEPRECATED_KEY, EXPECTED_KEY, INSTANCE_KEYWORDS,
    KEYS_KEY, MAX_REF_HOPS, Overlaid, SCHEMA_MAP_KEYWORDS, has_ref, ref_target, resolve,
    resolve_overlaid, unwrap_nullable, without_annotations,
};

use serde_json::{Map, Value};

/// A JSON object (the crate's [`JsonObject`](crate::JsonObject), named here so that `schema`
/// imports nothing of the crate).
type JsonObject = Map<String, Value>;

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

/// A tool's input or output schema as `tools/list` shows it, without the root annotations
/// that only repeat what the tool already says (each one costs every model that reads the
/// list its tokens, and none constrains a value):
///
/// - the root `title` when it is a Rust type's name (`ListInvoices`, `Page_for_Invoice`:
///   letters, digits and `_` only, as `schemars` writes it); a title with words in it stays;
/// - the root `description` of an input schema (`tool_description` is `Some`) when the
///   tool's description starts with it (its final `.` aside, ending at a word's end): "Get
///   one invoice." beside "Get one invoice by its ID: …". One that adds something stays.
///
/// Nothing below the root changes: property titles and descriptions, `$defs` (a
/// JSON Schema 2020-12 document keeps its `$defs`; MCP has no way for one tool's schema to
/// point at another's), constraints. The same `Arc` comes back when nothing is dropped.
pub fn for_tools_list(
    schema: &std::sync::Arc<JsonObject>,
    tool_description: Option<&str>,
) -> std::sync::Arc<JsonObject> {
    let drop_title = schema
        .get("title")
        .and_then(Value::as_str)
        .is_some_and(is_type_name);
    let drop_description = match (tool_description, schema.get("description")) {
        (Some(tool), Some(Value::String(own))) => repeats(own, tool),
        _ => false,
    };
    if !drop_title && !drop_description {
        return std::sync::Arc::clone(schema);
    }
    let mut shown = JsonObject::clone(schema);
    if drop_title {
        shown.remove("title");
    }
    if drop_description {
        shown.remove("description");
    }
    std::sync::Arc::new(shown)
}

/// Whether `title` is a Rust type's name as `schemars` writes it.
fn is_type_name(title: &str) -> bool {
    !title.is_empty() && title.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `tool` starts with `own` (without its final `.`), at a word's end.
fn repeats(own: &str, tool: &str) -> bool {
    let own = own.trim();
    let own = own.strip_suffix('.').unwrap_or(own).trim_end();
    if own.is_empty() {
        return true;
    }
    tool.trim_start()
        .strip_prefix(own)
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()))
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn schema(v: Value) -> Arc<JsonObject> {
        Arc::new(v.as_object().cloned().unwrap_or_default())
    }

    #[test]
    fn tools_list_drops_only_root_annotations_that_repeat_the_tool() {
        let input = schema(json!({
            "title": "GetInvoice",
            "description": "Get one invoice.",
            "type": "object",
            "properties": {
                "id": {"title": "Id", "description": "Get one invoice.", "type": "string", "minLength": 1}
            },
            "$defs": {"S": {"title": "S", "type": "string"}},
        }));
        let shown = for_tools_list(&input, Some("Get one invoice by its ID: customer, status."));
        assert_eq!(
            shown.get("title"),
            None,
            "a type's name: the tool's name says it"
        );
        assert_eq!(
            shown.get("description"),
            None,
            "the tool's description starts with it"
        );
        assert_eq!(
            shown["properties"], input["properties"],
            "below the root, all stays"
        );
        assert_eq!(shown["$defs"], input["$defs"]);
        assert_eq!(shown["type"], "object");
        assert_eq!(shown.len(), input.len() - 2);

        let longer_word = for_tools_list(&input, Some("Get one invoiceable thing."));
        assert_eq!(
            longer_word["description"], "Get one invoice.",
            "not at a word's end"
        );
        let other = for_tools_list(&input, Some("Charge an amount (in cents)."));
        assert_eq!(
            other["description"], "Get one invoice.",
            "another sentence stays"
        );

        let output =
            schema(json!({"title": "Invoice", "description": "One invoice.", "type": "object"}));
        let shown = for_tools_list(&output, None);
        assert_eq!(shown.get("title"), None);
        assert_eq!(
            shown["description"], "One invoice.",
            "an output schema's description stays"
        );

        let titled = schema(json!({"title": "Invoice lookup", "type": "object"}));
        let shown = for_tools_list(&titled, None);
        assert!(
            Arc::ptr_eq(&shown, &titled),
            "a title with words stays; nothing is copied"
        );
    }
}
