//! Canonical JSON: object keys sorted at every depth, written explicitly.
//!
//! Keys are sorted by their UTF-8 bytes (that is, by Unicode code point). Strings and numbers
//! are written exactly as `serde_json` writes them. Nothing here relies on the iteration order
//! of `serde_json::Map`, so the output does not depend on serde_json's `preserve_order`
//! feature or on the order in which keys were inserted.

use serde_json::Value;

/// `value` as canonical JSON: sorted keys at every depth, no insignificant whitespace.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_compact(&mut out, value);
    out
}

/// `value` as canonical JSON, pretty-printed: sorted keys at every depth, two-space
/// indentation, `"key": value`, `{}` and `[]` for empty containers, no trailing newline.
pub fn to_canonical_pretty(value: &Value) -> String {
    let mut out = String::with_capacity(512);
    write_pretty(&mut out, value, 0);
    out
}

fn push_string(out: &mut String, s: &str) {
    // Serializing a `&str` cannot fail; the fallback keeps this free of panics regardless.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

fn push_scalar(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => push_string(out, s),
        Value::Array(_) | Value::Object(_) => {}
    }
}

fn sorted_entries(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    entries
}

fn write_compact(out: &mut String, value: &Value) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in sorted_entries(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_string(out, k);
                out.push(':');
                write_compact(out, v);
            }
            out.push('}');
        }
        scalar => push_scalar(out, scalar),
    }
}

fn indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_pretty(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_pretty(out, item, depth + 1);
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in sorted_entries(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                push_string(out, k);
                out.push_str(": ");
                write_pretty(out, v, depth + 1);
            }
            indent(out, depth);
            out.push('}');
        }
        scalar => push_scalar(out, scalar),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let v = json!({"b": {"z": 1, "a": [ {"y": true, "x": null} ]}, "a": "s"});
        assert_eq!(
            to_canonical_string(&v),
            r#"{"a":"s","b":{"a":[{"x":null,"y":true}],"z":1}}"#
        );
    }

    #[test]
    fn insertion_order_does_not_matter() {
        let mut m1 = serde_json::Map::new();
        m1.insert("x".into(), json!(1));
        m1.insert("é".into(), json!(2));
        m1.insert("Z".into(), json!(3));
        let mut m2 = serde_json::Map::new();
        m2.insert("Z".into(), json!(3));
        m2.insert("é".into(), json!(2));
        m2.insert("x".into(), json!(1));
        let (a, b) = (Value::Object(m1), Value::Object(m2));
        assert_eq!(to_canonical_string(&a), to_canonical_string(&b));
        assert_eq!(to_canonical_string(&a), r#"{"Z":3,"x":1,"é":2}"#);
        assert_eq!(to_canonical_pretty(&a), to_canonical_pretty(&b));
    }

    #[test]
    fn strings_and_numbers_as_serde_json_writes_them() {
        let v = json!({"s": "a\"b\\c\n\u{1}", "n": [1, -2, 1.5, 1e300]});
        assert_eq!(
            to_canonical_string(&v),
            r#"{"n":[1,-2,1.5,1e+300],"s":"a\"b\\c\n\u0001"}"#
        );
        assert_eq!(
            to_canonical_string(&v["n"]),
            serde_json::to_string(&v["n"]).expect("serializes")
        );
    }

    #[test]
    fn pretty_matches_serde_json_layout_for_sorted_input() {
        let v = json!({"a": [], "b": {}, "c": [1, {"d": "e"}], "f": {"g": null}});
        let ours = to_canonical_pretty(&v);
        let theirs = serde_json::to_string_pretty(&v).expect("serializes");
        assert_eq!(ours, theirs);
        let reparsed: Value = serde_json::from_str(&ours).expect("parses");
        assert_eq!(reparsed, v);
    }
}
