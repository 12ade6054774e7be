//! Reading a JSON Schema document as data: local `$ref` resolution, the annotation keywords,
//! and walking subschemas. Every reader of schemas in the crate (the validation explainer, the
//! contract diff, the schema builder) resolves and walks through here, so they agree on what
//! a `$ref` points at.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Prefix of the annotations kept only in the validator's copy of a schema (the author's
/// "Expected …" text, the declared key order); [`strip_annotations`](super::strip_annotations)
/// removes them from the copy agents see. They are annotations: they never change what validates.
pub const ANNOTATION_PREFIX: &str = "x-fusion-";
/// The author's "Expected …" text of a field.
pub const EXPECTED_KEY: &str = "x-fusion-expected";
/// The declared order of an object's keys.
pub const KEYS_KEY: &str = "x-fusion-keys";
/// The author's note on a deprecated field (`#[fusion(deprecated = "..")]`): what to use
/// instead. Agents see it in the field's description, beside `"deprecated": true`.
pub const DEPRECATED_KEY: &str = "x-fusion-deprecated";

/// Keywords that annotate a schema without changing what validates (JSON Schema 2020-12's
/// meta-data and core annotation keywords).
pub const ANNOTATION_KEYWORDS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
];

/// Keywords whose values are instances, never subschemas.
pub const INSTANCE_KEYWORDS: &[&str] = &["enum", "const", "default", "examples"];

/// Keywords whose value is an object of subschemas keyed by name.
pub const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];

/// How many `$ref`s a chain is followed through before giving up (recursive or very long
/// chains stop there).
pub const MAX_REF_HOPS: usize = 32;

/// The subschema a local `$ref` points at in `root`: `#` followed by a JSON pointer,
/// percent-decoded first (it is a URI fragment), then read with `~1` → `/` and `~0` → `~`, as
/// `jsonschema` reads it. `None` for a remote reference, a pointer to nowhere, or
/// percent-encoding that is not UTF-8.
pub fn ref_target<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    let pointer = if fragment.contains('%') {
        percent_encoding::percent_decode_str(fragment)
            .decode_utf8()
            .ok()?
    } else {
        Cow::Borrowed(fragment)
    };
    root.pointer(&pointer)
}

/// `schema` with its local `$ref` chain followed (sibling keywords are not kept): the first
/// subschema without a `$ref` that resolves, at most [`MAX_REF_HOPS`] hops away.
pub fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..MAX_REF_HOPS {
        match schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| ref_target(root, r))
        {
            Some(next) => schema = next,
            None => return schema,
        }
    }
    schema
}

/// A subschema with its `$ref` chain followed and each sibling keyword of a `$ref` laid over
/// its target (2020-12 applies both).
#[derive(Clone, Debug, PartialEq)]
pub struct Overlaid {
    /// The resulting schema: an object, `true`/`false`, or whatever non-schema value the chain
    /// ended at.
    pub schema: Value,
    /// The first `$ref` followed, if any: with the other side's, it names the pair a walk is
    /// expanding (to stop on recursive schemas).
    pub first_ref: Option<String>,
}

/// [`resolve`], keeping the keywords written beside each `$ref` (they win over the target's).
/// A `true` target reads as `{}`.
pub fn resolve_overlaid(root: &Value, schema: &Value) -> Overlaid {
    let mut current = schema.clone();
    let mut first_ref = None;
    for _ in 0..MAX_REF_HOPS {
        let Value::Object(m) = &current else { break };
        let Some(Value::String(r)) = m.get("$ref") else {
            break;
        };
        let Some(target) = ref_target(root, r) else {
            break;
        };
        if first_ref.is_none() {
            first_ref = Some(r.clone());
        }
        let mut merged = match target {
            Value::Object(t) => t.clone(),
            Value::Bool(true) => Map::new(),
            other => {
                current = other.clone();
                break;
            }
        };
        for (k, val) in m {
            if k != "$ref" {
                merged.insert(k.clone(), val.clone());
            }
        }
        current = Value::Object(merged);
    }
    Overlaid {
        schema: current,
        first_ref,
    }
}

/// The non-null branch of an `Option<T>`'s `anyOf: [T, null]`, resolved; else `schema`
/// resolved.
pub fn unwrap_nullable<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let schema = resolve(root, schema);
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        let non_null: Vec<&Value> = branches
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if let [only] = non_null.as_slice() {
            return resolve(root, only);
        }
    }
    schema
}

/// Whether a `$ref` key appears anywhere in `v` (instances included: a cautious answer).
pub fn has_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("$ref") || m.values().any(has_ref),
        Value::Array(items) => items.iter().any(has_ref),
        _ => false,
    }
}

/// `m` without its [`ANNOTATION_KEYWORDS`]: what it constrains.
pub fn without_annotations(m: &Map<String, Value>) -> Map<String, Value> {
    let mut m = m.clone();
    for k in ANNOTATION_KEYWORDS {
        m.remove(*k);
    }
    m
}

/// Calls `f` on every schema object in `schema`, itself included: subschemas of any keyword,
/// the values of [`SCHEMA_MAP_KEYWORDS`] — never the [`INSTANCE_KEYWORDS`]' values or an
/// `x-fusion-*` annotation.
pub(crate) fn for_each_schema(schema: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    match schema {
        Value::Object(obj) => {
            f(obj);
            for (k, v) in obj.iter_mut() {
                match k.as_str() {
                    k if INSTANCE_KEYWORDS.contains(&k) => {}
                    k if k.starts_with(ANNOTATION_PREFIX) => {}
                    k if SCHEMA_MAP_KEYWORDS.contains(&k) => {
                        if let Value::Object(children) = v {
                            children.values_mut().for_each(|c| for_each_schema(c, f));
                        }
                    }
                    _ => for_each_schema(v, f),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| for_each_schema(i, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn root() -> Value {
        json!({
            "$defs": {
                "a/b": {"type": "string"},
                "m~n": {"type": "integer"},
                "with space": {"type": "boolean"},
                "100%": {"type": "null"},
                "é": {"minimum": 1},
                "list": [{"type": "number"}],
                "loop": {"$ref": "#/$defs/loop"},
                "hop": {"$ref": "#/$defs/a~1b", "minLength": 2}
            }
        })
    }

    #[test]
    fn json_pointer_escapes_are_read() {
        let r = root();
        assert_eq!(
            ref_target(&r, "#/$defs/a~1b"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(
            ref_target(&r, "#/$defs/m~0n"),
            Some(&json!({"type": "integer"}))
        );
        assert_eq!(
            ref_target(&r, "#/$defs/list/0"),
            Some(&json!({"type": "number"}))
        );
        assert_eq!(ref_target(&r, "#"), Some(&r));
    }

    #[test]
    fn percent_encoding_is_decoded_before_the_pointer() {
        let r = root();
        assert_eq!(
            ref_target(&r, "#/$defs/with%20space"),
            Some(&json!({"type": "boolean"}))
        );
        assert_eq!(
            ref_target(&r, "#/$defs/100%25"),
            Some(&json!({"type": "null"}))
        );
        assert_eq!(
            ref_target(&r, "#/$defs/%C3%A9"),
            Some(&json!({"minimum": 1}))
        );
        // `%7E1` decodes to `~1`, which the pointer then reads as `/`.
        assert_eq!(
            ref_target(&r, "#/$defs/a%7E1b"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(
            ref_target(&r, "#%2F%24defs%2Fa~1b"),
            Some(&json!({"type": "string"}))
        );
    }

    #[test]
    fn what_does_not_resolve_is_none() {
        let r = root();
        for reference in [
            "#/$defs/missing",
            "#/$defs/%FF",
            "other.json#/$defs/a~1b",
            "https://example.invalid/s",
            "#$defs",
            "#/$defs/list/x",
        ] {
            assert_eq!(ref_target(&r, reference), None, "{reference}");
        }
    }

    #[test]
    fn chains_are_followed_and_loops_stop() {
        let r = root();
        assert_eq!(
            resolve(&r, &json!({"$ref": "#/$defs/hop"})),
            &json!({"type": "string"})
        );
        assert_eq!(
            resolve(&r, &json!({"$ref": "#/$defs/loop"})),
            &json!({"$ref": "#/$defs/loop"})
        );
        let unresolved = json!({"$ref": "#/nowhere"});
        assert_eq!(resolve(&r, &unresolved), &unresolved);
    }

    #[test]
    fn overlay_keeps_sibling_keywords() {
        let r = root();
        let o = resolve_overlaid(&r, &json!({"$ref": "#/$defs/hop", "maxLength": 5}));
        assert_eq!(
            o.schema,
            json!({"type": "string", "minLength": 2, "maxLength": 5})
        );
        assert_eq!(o.first_ref.as_deref(), Some("#/$defs/hop"));
        let looped = resolve_overlaid(&r, &json!({"$ref": "#/$defs/loop"}));
        assert_eq!(looped.schema, json!({"$ref": "#/$defs/loop"}));
    }

    #[test]
    fn nullable_unwraps_to_its_resolved_branch() {
        let r = root();
        let opt = json!({"anyOf": [{"$ref": "#/$defs/m~0n"}, {"type": "null"}]});
        assert_eq!(unwrap_nullable(&r, &opt), &json!({"type": "integer"}));
        let two = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(unwrap_nullable(&r, &two), &two);
    }

    #[test]
    fn annotations_are_removed_constraints_kept() {
        let v = json!({"title": "t", "description": "d", "default": 1, "minimum": 0});
        let m = v.as_object().expect("an object");
        assert_eq!(Value::Object(without_annotations(m)), json!({"minimum": 0}));
        assert!(has_ref(&json!({"items": [{"$ref": "#"}]})));
        assert!(!has_ref(&json!({"items": [{"type": "string"}]})));
    }
}
