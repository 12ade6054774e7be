//! `enum` / `const` (and a `oneOf` of constants, which schemars writes for a Rust enum whose
//! variants have doc comments): their wording, with a did-you-mean when a string sent is close
//! to one option, and the typed path's check of a field that is a choice among strings.
//!
//! **Typed path.** A Rust unit-variant enum field has the schema schemars derives for it: a
//! `$ref` to `{"type": "string", "enum": [..]}`, or to a `oneOf` of string constants when its
//! variants are documented (inside `anyOf: [.., {"type": "null"}]` for an `Option`). serde
//! having read the variant does not prove the value sent is one of those strings: a
//! `#[serde(alias)]`, a `#[serde(other)]` variant, the `{"pro": null}` form serde also reads,
//! or a hand-written `Deserialize` accept more. So [`Options`] keeps the strings of a field
//! whose schema is exactly that choice (annotations aside), and [`check`] looks the value
//! sent up among them: what the schema's `enum` / `oneOf` decides, without a sub-validator.
//! Any other shape is left to `jsonschema`.

use serde_json::{Map, Value};

use super::Check;
use super::unknown_keys::closest;
use crate::schema::{ANNOTATION_KEYWORDS, ANNOTATION_PREFIX, ref_target};
use crate::validation::push_list;
use crate::validation::sent::{push_quoted, push_sent};

/// The problem, with the closest option to a string sent: `Invalid option (did you mean
/// 'open'?)`.
pub fn push_problem(out: &mut String, options: &[Value], sent: Option<&Value>) {
    if options.len() == 1 {
        out.push_str("Invalid value");
        return;
    }
    out.push_str("Invalid option");
    if let Some(Value::String(s)) = sent
        && let Some(best) = closest(s, options.iter().filter_map(Value::as_str))
    {
        out.push_str(" (did you mean ");
        push_quoted(out, best);
        out.push_str("?)");
    }
}

/// The expected text: `exactly 'v2'`, or `one of: 'open', 'paid', 'void'`.
pub fn push_expected(out: &mut String, options: &[Value]) {
    if let [only] = options {
        out.push_str("exactly ");
        push_sent(out, only);
    } else {
        out.push_str("one of: ");
        push_list(out, options, ", ", push_sent);
    }
}

/// The options of a union whose every branch is one constant (`const`, or an `enum` of one
/// value), each branch already resolved by `resolve`; `None` for any other union.
pub fn union_options<'a>(
    branches: &'a [Value],
    resolve: impl Fn(&'a Value) -> &'a Value,
) -> Option<Vec<Value>> {
    if branches.len() < 2 {
        return None;
    }
    branches
        .iter()
        .map(|b| {
            let b = resolve(b);
            match (b.get("const"), b.get("enum")) {
                (Some(c), None) => Some(c.clone()),
                (None, Some(Value::Array(one))) if one.len() == 1 => one.first().cloned(),
                _ => None,
            }
        })
        .collect()
}

/// What a field whose schema is a choice among strings accepts: one of `strings`, or `null`
/// when `null` is one of the choices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    strings: Box<[Box<str>]>,
    null: bool,
}

/// The values a field schema `schema` (in the document `root`) accepts when it is exactly a
/// choice among strings, besides annotations: `{"type": "string", "enum": [..]}` (the `type`
/// may be absent), a `oneOf` of string constants, either behind `$ref`s, or one of them in
/// `anyOf` with `{"type": "null"}`. `None` for any other schema.
pub fn options(root: &Value, schema: &Value) -> Option<Options> {
    let schema = follow(root, schema)?;
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        let obj = schema.as_object()?;
        let [a, b] = branches.as_slice() else {
            return None;
        };
        let is_null = |v: &Value| {
            v.as_object().is_some_and(|m| {
                only_annotations_and(m, &["type"]) && m.get("type") == Some(&Value::from("null"))
            })
        };
        let other = match (is_null(a), is_null(b)) {
            (true, false) => b,
            (false, true) => a,
            _ => return None,
        };
        if !only_annotations_and(obj, &["anyOf"]) {
            return None;
        }
        let mut options = choice(follow(root, other)?)?;
        options.null = true;
        return Some(options);
    }
    choice(schema)
}

/// `schema`'s `$ref` chain followed, as long as each step holds nothing besides its `$ref`
/// and annotations.
fn follow<'a>(root: &'a Value, mut schema: &'a Value) -> Option<&'a Value> {
    for _ in 0..crate::schema::MAX_REF_HOPS {
        let obj = schema.as_object()?;
        let Some(r) = obj.get("$ref") else {
            return Some(schema);
        };
        if !only_annotations_and(obj, &["$ref"]) {
            return None;
        }
        schema = ref_target(root, r.as_str()?)?;
    }
    None
}

/// Whether `obj` holds no keyword besides `allowed` and annotations (the typed path's test of
/// a schema it can decide alone).
pub(crate) fn only_annotations_and(obj: &Map<String, Value>, allowed: &[&str]) -> bool {
    obj.keys().all(|k| {
        allowed.contains(&k.as_str())
            || ANNOTATION_KEYWORDS.contains(&k.as_str())
            || k.starts_with(ANNOTATION_PREFIX)
    })
}

/// The strings of a resolved `{"type": "string", "enum": [..]}` or `oneOf` of string constants.
fn choice(schema: &Value) -> Option<Options> {
    let obj = schema.as_object()?;
    let strings = if let Some(Value::Array(values)) = obj.get("enum") {
        let typed = match obj.get("type") {
            None => true,
            Some(t) => t == "string",
        };
        if !typed || !only_annotations_and(obj, &["type", "enum"]) {
            return None;
        }
        values
            .iter()
            .map(|v| v.as_str().map(Box::from))
            .collect::<Option<Vec<Box<str>>>>()?
    } else if let Some(Value::Array(branches)) = obj.get("oneOf") {
        if !only_annotations_and(obj, &["oneOf"]) {
            return None;
        }
        let strings = branches
            .iter()
            .map(|b| {
                let b = b.as_object()?;
                let typed = b.get("type").is_none_or(|t| t == "string");
                (typed && only_annotations_and(b, &["type", "const"]))
                    .then(|| b.get("const")?.as_str().map(Box::from))
                    .flatten()
            })
            .collect::<Option<Vec<Box<str>>>>()?;
        // `oneOf` takes a value that exactly one branch takes: the constants must differ.
        let mut sorted: Vec<&str> = strings.iter().map(|s| &**s).collect();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != strings.len() {
            return None;
        }
        strings
    } else {
        return None;
    };
    (!strings.is_empty()).then(|| Options {
        strings: strings.into_boxed_slice(),
        null: false,
    })
}

/// The value sent is one of the options.
#[inline]
pub fn check(sent: &Value, options: &Options) -> Check {
    Check::from_bool(match sent {
        Value::String(s) => options.strings.iter().any(|o| **o == **s),
        Value::Null => options.null,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn opts(root: &Value, schema: &Value) -> Option<(Vec<String>, bool)> {
        options(root, schema).map(|o| (o.strings.iter().map(|s| s.to_string()).collect(), o.null))
    }

    #[test]
    fn the_shapes_schemars_writes_for_an_enum_are_choices() {
        let root = json!({"$defs": {
            "Plan": {"type": "string", "enum": ["free", "pro"], "description": "A plan."},
            "Status": {"oneOf": [
                {"type": "string", "const": "open", "description": "Open."},
                {"const": "paid"}
            ]},
            "Alias": {"$ref": "#/$defs/Plan"},
        }});
        let plan = Some((vec!["free".to_owned(), "pro".to_owned()], false));
        assert_eq!(
            opts(&root, &json!({"$ref": "#/$defs/Plan", "description": "d"})),
            plan
        );
        assert_eq!(opts(&root, &json!({"$ref": "#/$defs/Alias"})), plan);
        assert_eq!(
            opts(
                &root,
                &json!({"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Status"}]})
            ),
            Some((vec!["open".to_owned(), "paid".to_owned()], true))
        );
    }

    #[test]
    fn anything_else_is_left_to_the_engine() {
        let root = json!({"$defs": {
            "Plan": {"type": "string", "enum": ["free", "pro"]},
            "Num": {"enum": [1, 2]},
            "Twice": {"oneOf": [{"const": "a"}, {"const": "a"}]},
            "Mixed": {"oneOf": [{"const": "a"}, {"type": "integer"}]},
        }});
        for schema in [
            json!({"$ref": "#/$defs/Plan", "minLength": 4}),
            json!({"$ref": "#/$defs/Num"}),
            json!({"$ref": "#/$defs/Twice"}),
            json!({"$ref": "#/$defs/Mixed"}),
            json!({"$ref": "#/$defs/Nowhere"}),
            json!({"type": "integer", "enum": ["a"]}),
            json!({"type": "string", "enum": ["a"], "pattern": "b"}),
            json!({"anyOf": [{"type": "null"}, {"type": "null"}]}),
            json!({"anyOf": [{"$ref": "#/$defs/Plan"}, {"type": "null"}], "maxLength": 1}),
            json!({"type": "string"}),
        ] {
            assert_eq!(opts(&root, &schema), None, "{schema}");
        }
    }

    #[test]
    fn the_check_looks_the_value_sent_up() {
        let root = json!({"type": "string", "enum": ["free", "pro"]});
        let plain = options(&root, &root).expect("a choice");
        assert_eq!(check(&json!("pro"), &plain), Check::Pass);
        for bad in [json!("Pro"), json!(null), json!({"pro": null}), json!(1)] {
            assert_eq!(check(&bad, &plain), Check::Fail, "{bad}");
        }
        let optional = options(&root, &json!({"anyOf": [root.clone(), {"type": "null"}]}))
            .expect("a choice or null");
        assert_eq!(check(&json!(null), &optional), Check::Pass);
    }
}
