//! `enum` / `const` (and the `oneOf` of constants schemars writes for a Rust enum with
//! documented variants): their wording, and the typed path's check of a field whose schema is
//! exactly a choice among strings.
//!
//! serde having read a variant does not prove the value sent is one of the schema's strings:
//! `#[serde(alias)]`, `#[serde(other)]`, the `{"pro": null}` form serde also reads, or a
//! hand-written `Deserialize` accept more. So [`check`] looks the value sent up among the
//! [`Options`] instead; any other shape is left to `jsonschema`.

use jsonschema::error::ValidationErrorKind as K;
use serde_json::{Map, Value};

use super::unknown_keys::{closest, push_did_you_mean};
use super::{Change, Check, Declaration, Keyword, On, no_attribute};
use crate::schema::{ANNOTATION_KEYWORDS, ANNOTATION_PREFIX, ref_target};
use crate::validation::sent::push_sent;
use crate::validation::{IssueKind, push_list};

/// The rule: its keyword and `jsonschema`'s errors for `enum` and `const` (an
/// `invalid_value` issue, worded here).
pub(crate) const RULE: Declaration = Declaration {
    keywords: &[Keyword {
        name: "enum",
        on: On::Any,
        change: Change::Choice,
    }],
    reads: |error| match error {
        K::Enum { options } => Some(IssueKind::InvalidValue {
            options: match &**options {
                Value::Array(items) => items.clone(),
                other => vec![other.clone()],
            },
        }),
        K::Constant { expected_value } => Some(IssueKind::InvalidValue {
            options: vec![(**expected_value).clone()],
        }),
        _ => None,
    },
    issue: None,
    attribute: no_attribute,
};

/// The problem: `Invalid option (did you mean 'open'?)`, or `Invalid value` for a constant.
pub fn push_problem(out: &mut String, options: &[Value], sent: Option<&Value>) {
    if options.len() == 1 {
        out.push_str("Invalid value");
        return;
    }
    out.push_str("Invalid option");
    if let Some(Value::String(s)) = sent {
        push_did_you_mean(out, closest(s, options.iter().filter_map(Value::as_str)));
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

/// What a choice among strings accepts: one of `strings`, and `null` when `null` is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    strings: Box<[Box<str>]>,
    null: bool,
}

/// The values `schema` accepts when it is exactly a choice among strings (annotations aside):
/// `{"type": "string", "enum": [..]}` (`type` optional) or a `oneOf` of string constants,
/// behind `$ref`s, alone or in `anyOf` with `{"type": "null"}`. `None` for any other schema.
pub fn options(root: &Value, schema: &Value) -> Option<Options> {
    let schema = follow(root, schema)?;
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        let obj = schema.as_object()?;
        let [a, b] = branches.as_slice() else {
            return None;
        };
        let other = match (is_only_type(a, "null"), is_only_type(b, "null")) {
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

/// `schema`'s `$ref` chain followed while each step holds only its `$ref` and annotations.
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

/// Whether `obj` holds no keyword besides `allowed` and annotations.
pub(crate) fn only_annotations_and(obj: &Map<String, Value>, allowed: &[&str]) -> bool {
    obj.keys().all(|k| {
        allowed.contains(&k.as_str())
            || ANNOTATION_KEYWORDS.contains(&k.as_str())
            || k.starts_with(ANNOTATION_PREFIX)
    })
}

/// Whether `schema` is `{"type": name}`, besides annotations.
pub(crate) fn is_only_type(schema: &Value, name: &str) -> bool {
    schema.as_object().is_some_and(|m| {
        only_annotations_and(m, &["type"]) && m.get("type").and_then(Value::as_str) == Some(name)
    })
}

/// Whether `names` holds no name twice.
pub(crate) fn distinct(mut names: Vec<&str>) -> bool {
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    names.len() == n
}

/// The strings of a resolved `{"type": "string", "enum": [..]}` or `oneOf` of string constants.
fn choice(schema: &Value) -> Option<Options> {
    let obj = schema.as_object()?;
    let strings = if let Some(Value::Array(values)) = obj.get("enum") {
        let typed = obj.get("type").is_none_or(|t| t == "string");
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
        distinct(strings.iter().map(|s| &**s).collect()).then_some(strings)?
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
