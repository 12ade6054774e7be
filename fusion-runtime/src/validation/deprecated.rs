//! Deprecated fields (`"deprecated": true` on a property, JSON Schema 2020-12's meta-data
//! vocabulary): found once per input in its schema, then looked up in a call's arguments.
//! A call that sends one still works; the pipeline answers it with a `DEPRECATED` warning.

use std::fmt::Write as _;

use serde_json::Value;

use crate::schema::{DEPRECATED_KEY, resolve};

/// How deep into nested objects and arrays deprecated fields are looked for.
pub const MAX_DEPRECATED_DEPTH: usize = 8;

/// At most this many deprecated fields are kept per input, and at most this many are reported
/// per call: what a client can make the server do grows with a bound, not with its input.
pub const MAX_DEPRECATED_FIELDS: usize = 32;

/// One step from an object to a deprecated field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A property of an object.
    Key(String),
    /// Every item of an array.
    Items,
}

/// A deprecated field of an input: where it is and the author's note on what to use instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeprecatedField {
    /// The steps from the arguments object to the field.
    pub steps: Vec<Step>,
    /// The author's note (`#[fusion(deprecated = "use `due_date`")]`); `None` when the schema
    /// marks the field without one.
    pub note: Option<String>,
}

/// A deprecated field a call sent: its dotted path (`items.0.due`) and the author's note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentDeprecated<'a> {
    /// The field's path in the arguments, as issues name fields.
    pub path: String,
    /// The author's note, if any.
    pub note: Option<&'a str>,
}

/// Every property of `root` (an input's schema) marked `"deprecated": true`, through nested
/// objects, arrays, `$ref`s and `anyOf` / `oneOf` / `allOf` branches, up to
/// [`MAX_DEPRECATED_DEPTH`] levels and [`MAX_DEPRECATED_FIELDS`] fields. Empty for most
/// inputs: the pipeline then checks nothing.
pub fn deprecated_fields(root: &Value) -> Vec<DeprecatedField> {
    let mut out = Vec::new();
    walk(root, root, &mut Vec::new(), 0, &mut out);
    out
}

fn walk(
    root: &Value,
    schema: &Value,
    steps: &mut Vec<Step>,
    depth: usize,
    out: &mut Vec<DeprecatedField>,
) {
    if depth > MAX_DEPRECATED_DEPTH || out.len() >= MAX_DEPRECATED_FIELDS {
        return;
    }
    let schema = resolve(root, schema);
    let Value::Object(obj) = schema else { return };
    if let Some(Value::Object(props)) = obj.get("properties") {
        for (name, prop) in props {
            steps.push(Step::Key(name.clone()));
            let flagged = [prop, resolve(root, prop)]
                .iter()
                .any(|p| p.get("deprecated") == Some(&Value::Bool(true)));
            if flagged && out.len() < MAX_DEPRECATED_FIELDS {
                let note = [prop, resolve(root, prop)]
                    .iter()
                    .find_map(|p| p.get(DEPRECATED_KEY).and_then(Value::as_str))
                    .map(str::to_owned);
                out.push(DeprecatedField {
                    steps: steps.clone(),
                    note,
                });
            }
            walk(root, prop, steps, depth + 1, out);
            steps.pop();
        }
    }
    if let Some(items) = obj.get("items").filter(|i| i.is_object()) {
        steps.push(Step::Items);
        walk(root, items, steps, depth + 1, out);
        steps.pop();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = obj.get(key) {
            for b in branches {
                walk(root, b, steps, depth + 1, out);
            }
        }
    }
}

/// The deprecated fields `arguments` sends, each at its path, at most
/// [`MAX_DEPRECATED_FIELDS`]. A field counts when its key is present with a value other than
/// `null` (a `null` sets nothing the author could have moved elsewhere).
pub fn sent<'a>(fields: &'a [DeprecatedField], arguments: &Value) -> Vec<SentDeprecated<'a>> {
    let mut out = Vec::new();
    for field in fields {
        find(&field.steps, arguments, &mut String::new(), field, &mut out);
    }
    out
}

fn find<'a>(
    steps: &[Step],
    value: &Value,
    path: &mut String,
    field: &'a DeprecatedField,
    out: &mut Vec<SentDeprecated<'a>>,
) {
    if out.len() >= MAX_DEPRECATED_FIELDS {
        return;
    }
    let Some((step, rest)) = steps.split_first() else {
        if !value.is_null() {
            out.push(SentDeprecated {
                path: path.clone(),
                note: field.note.as_deref(),
            });
        }
        return;
    };
    let len = path.len();
    match (step, value) {
        (Step::Key(k), Value::Object(obj)) => {
            if let Some(v) = obj.get(k) {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                find(rest, v, path, field, out);
            }
        }
        (Step::Items, Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                if !path.is_empty() {
                    path.push('.');
                }
                let _ = write!(path, "{i}");
                find(rest, v, path, field, out);
                path.truncate(len);
                if out.len() >= MAX_DEPRECATED_FIELDS {
                    break;
                }
            }
        }
        _ => {}
    }
    path.truncate(len);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn finds_flagged_properties_through_refs_options_and_arrays() {
        let schema = json!({
            "type": "object",
            "properties": {
                "due": {"type": "string", "deprecated": true, "x-fusion-deprecated": "use `due_date`"},
                "due_date": {"type": "string"},
                "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
                "extra": {"anyOf": [{"$ref": "#/$defs/Line"}, {"type": "null"}]}
            },
            "$defs": {"Line": {"type": "object", "properties": {"sku": {"type": "string", "deprecated": true}}}}
        });
        let fields = deprecated_fields(&schema);
        assert_eq!(fields.len(), 3);
        assert_eq!(fields[0].note.as_deref(), Some("use `due_date`"));
        let args =
            json!({"due": "2026-01-01", "lines": [{"sku": "a"}, {}, {"sku": null}], "extra": null});
        let paths: Vec<String> = sent(&fields, &args).into_iter().map(|s| s.path).collect();
        assert_eq!(paths, ["due", "lines.0.sku"]);
        assert!(sent(&fields, &json!({"due_date": "x"})).is_empty());
    }

    #[test]
    fn a_recursive_schema_ends() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {
                "old": {"type": "string", "deprecated": true},
                "next": {"$ref": "#/$defs/Node"}
            }}}
        });
        let fields = deprecated_fields(&schema);
        assert!(!fields.is_empty() && fields.len() <= MAX_DEPRECATED_FIELDS);
    }
}
