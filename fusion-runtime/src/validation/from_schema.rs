//! `jsonschema` errors → [`Issue`]s: one pass over the arguments, every problem mapped to its
//! SPEC §4 kind, with the value sent at its path and the expected text its schema implies.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

use super::{Format, Issue, IssueKind, Measure};
use crate::schema::{EXPECTED_KEY, KEYS_KEY};

/// How deep `$ref` chains and nested unions are followed before giving up.
const MAX_DEPTH: usize = 32;

/// Longest message kept from a `jsonschema` error that has no kind of its own.
const MAX_MESSAGE: usize = 160;

/// Every issue `errors` describe, in the schema's declared key order. `root` is the annotated
/// schema the validator was built from (it carries the author's expected texts).
pub fn issues_from_errors<'i>(
    root: &Value,
    errors: impl Iterator<Item = ValidationError<'i>>,
) -> Vec<Issue> {
    let mut out = Vec::new();
    for e in errors {
        push_error(root, e, 0, &mut out);
    }
    let mut keyed: Vec<(Vec<usize>, Issue)> = out
        .into_iter()
        .map(|i| (order_key(root, &i.path), i))
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, i)| i).collect()
}

fn push_error(root: &Value, e: ValidationError<'_>, depth: usize, out: &mut Vec<Issue>) {
    let segments: Vec<String> = e
        .instance_path()
        .segments()
        .map(|s| match s {
            LocationSegment::Property(p) => p.into_owned(),
            LocationSegment::Index(i) => i.to_string(),
        })
        .collect();
    let path = segments.join(".");
    // The error's own text is only used for kinds without a mapping of their own.
    let message = if has_own_mapping(e.kind()) {
        String::new()
    } else {
        e.to_string()
    };
    let parts = e.into_parts();
    let kind = match parts.kind {
        ValidationErrorKind::Type { kind } => IssueKind::InvalidType {
            expected: type_words(&kind).into(),
        },
        ValidationErrorKind::Required { property } => {
            let name = match &property {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mut segs = segments.clone();
            segs.push(name);
            let schema = schema_at(root, &segs);
            let expected = schema.map_or_else(|| "a value".to_owned(), |s| describe(root, s, 0));
            let issue = Issue::new(
                segs.join("."),
                IssueKind::Missing {
                    expected: expected.into(),
                },
                None,
            );
            out.push(issue);
            return;
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let known = known_keys(root, &segments);
            for key in unexpected {
                out.push(Issue::new(
                    path.clone(),
                    IssueKind::UnrecognizedKey {
                        key,
                        known: known.clone(),
                    },
                    None,
                ));
            }
            return;
        }
        ValidationErrorKind::Minimum { limit } => bound(false, Measure::Number, &limit, true),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            bound(false, Measure::Number, &limit, false)
        }
        ValidationErrorKind::Maximum { limit } => bound(true, Measure::Number, &limit, true),
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            bound(true, Measure::Number, &limit, false)
        }
        ValidationErrorKind::MinLength { limit } => count(false, Measure::Length, limit),
        ValidationErrorKind::MaxLength { limit } => count(true, Measure::Length, limit),
        ValidationErrorKind::MinItems { limit } => count(false, Measure::Items, limit),
        ValidationErrorKind::MaxItems { limit } => count(true, Measure::Items, limit),
        ValidationErrorKind::MinProperties { limit } => count(false, Measure::Properties, limit),
        ValidationErrorKind::MaxProperties { limit } => count(true, Measure::Properties, limit),
        ValidationErrorKind::Format { format } => IssueKind::InvalidFormat {
            format: Format::from_keyword(&format),
        },
        ValidationErrorKind::Pattern { pattern } => IssueKind::InvalidFormat {
            format: Format::Pattern(pattern),
        },
        ValidationErrorKind::MultipleOf { multiple_of } => IssueKind::NotMultipleOf {
            divisor: multiple_of,
        },
        ValidationErrorKind::Enum { options } => IssueKind::InvalidValue {
            options: match &*options {
                Value::Array(items) => items.clone(),
                other => vec![other.clone()],
            },
        },
        ValidationErrorKind::Constant { expected_value } => IssueKind::InvalidValue {
            options: vec![(*expected_value).clone()],
        },
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            // `Option<T>` is `anyOf: [T, null]`: when something other than null was sent,
            // the one branch that is not a plain type mismatch says what is wrong.
            let mut informative: Vec<Vec<ValidationError<'static>>> = context
                .into_iter()
                .filter(|errs| !is_type_mismatch_at(errs, &parts.instance_path))
                .collect();
            if informative.len() == 1
                && depth < MAX_DEPTH
                && let Some(errs) = informative.pop()
            {
                for inner in errs {
                    push_error(root, inner, depth + 1, out);
                }
                return;
            }
            IssueKind::InvalidUnion {
                shapes: union_shapes(root, &segments),
            }
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => IssueKind::InvalidUnion {
            shapes: union_shapes(root, &segments),
        },
        ValidationErrorKind::UniqueItems => IssueKind::Custom {
            message: "Items must be unique".into(),
        },
        _ => IssueKind::Custom {
            message: cut(&message, MAX_MESSAGE),
        },
    };
    // The value sent, copied only for the issues that show it (not for `required` or
    // unknown keys, whose instance is the whole object).
    let mut issue = Issue::new(path, kind, Some(parts.instance.into_owned()));
    if let Some(e) = schema_at(root, &segments).and_then(|s| expected_override(root, s)) {
        issue = issue.with_expected(e);
    }
    out.push(issue);
}

/// Whether [`push_error`] maps `kind` without the error's message.
fn has_own_mapping(kind: &ValidationErrorKind) -> bool {
    matches!(
        kind,
        ValidationErrorKind::Type { .. }
            | ValidationErrorKind::Required { .. }
            | ValidationErrorKind::AdditionalProperties { .. }
            | ValidationErrorKind::UnevaluatedProperties { .. }
            | ValidationErrorKind::Minimum { .. }
            | ValidationErrorKind::ExclusiveMinimum { .. }
            | ValidationErrorKind::Maximum { .. }
            | ValidationErrorKind::ExclusiveMaximum { .. }
            | ValidationErrorKind::MinLength { .. }
            | ValidationErrorKind::MaxLength { .. }
            | ValidationErrorKind::MinItems { .. }
            | ValidationErrorKind::MaxItems { .. }
            | ValidationErrorKind::MinProperties { .. }
            | ValidationErrorKind::MaxProperties { .. }
            | ValidationErrorKind::Format { .. }
            | ValidationErrorKind::Pattern { .. }
            | ValidationErrorKind::MultipleOf { .. }
            | ValidationErrorKind::Enum { .. }
            | ValidationErrorKind::Constant { .. }
            | ValidationErrorKind::AnyOf { .. }
            | ValidationErrorKind::OneOfNotValid { .. }
            | ValidationErrorKind::OneOfMultipleValid { .. }
            | ValidationErrorKind::UniqueItems
    )
}

fn is_type_mismatch_at(errs: &[ValidationError<'_>], at: &jsonschema::paths::Location) -> bool {
    !errs.is_empty()
        && errs.iter().all(|e| {
            matches!(e.kind(), ValidationErrorKind::Type { .. }) && e.instance_path() == at
        })
}

fn bound(upper: bool, measure: Measure, limit: &Value, inclusive: bool) -> IssueKind {
    let limit = limit.as_f64().unwrap_or(0.0);
    if upper {
        IssueKind::TooBig {
            measure,
            limit,
            inclusive,
        }
    } else {
        IssueKind::TooSmall {
            measure,
            limit,
            inclusive,
        }
    }
}

fn count(upper: bool, measure: Measure, limit: u64) -> IssueKind {
    bound(upper, measure, &Value::from(limit), true)
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((i, _)) => format!("{}...", &s[..i]),
    }
}

fn json_type_words(t: JsonType) -> &'static str {
    match t {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean (true or false)",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

fn type_words(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => json_type_words(*t).to_owned(),
        TypeKind::Multiple(set) => {
            // `null` last: "a string or null" reads as the optional field it is.
            let mut types: Vec<JsonType> = set.iter().collect();
            types.sort_by_key(|t| *t == JsonType::Null);
            let words: Vec<&str> = types.into_iter().map(json_type_words).collect();
            words.join(" or ")
        }
    }
}

/// Follows `$ref`s to local definitions.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..MAX_DEPTH {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) if r.starts_with('#') => match root.pointer(&r[1..]) {
                Some(next) => schema = next,
                None => return schema,
            },
            _ => return schema,
        }
    }
    schema
}

/// The non-null branch of an `Option<T>`'s `anyOf: [T, null]`, resolved; else `schema`.
fn unwrap_nullable<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
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

/// The (unresolved) subschema describing the instance at `segments`.
fn schema_at<'a>(root: &'a Value, segments: &[String]) -> Option<&'a Value> {
    let mut schema = root;
    for seg in segments {
        let s = unwrap_nullable(root, schema);
        schema = match s.get("properties").and_then(|p| p.get(seg.as_str())) {
            Some(p) => p,
            None => match s.get("items") {
                Some(items) if seg.parse::<usize>().is_ok() => items,
                _ => match s.get("additionalProperties") {
                    Some(ap) if ap.is_object() => ap,
                    _ => return None,
                },
            },
        };
    }
    Some(schema)
}

/// The author's expected text at this subschema.
fn expected_override(root: &Value, schema: &Value) -> Option<String> {
    schema
        .get(EXPECTED_KEY)
        .or_else(|| unwrap_nullable(root, schema).get(EXPECTED_KEY))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// What a subschema takes, in words: the author's text, a format, a pattern, the options of
/// an enum, else its type.
fn describe(root: &Value, schema: &Value, depth: usize) -> String {
    if let Some(e) = expected_override(root, schema) {
        return e;
    }
    let s = resolve(root, schema);
    if let Some(f) = s.get("format").and_then(Value::as_str)
        && let known @ (Format::Email
        | Format::Url
        | Format::Uuid
        | Format::DateTime
        | Format::Date
        | Format::Time
        | Format::Ipv4
        | Format::Ipv6) = Format::from_keyword(f)
    {
        return known.expected().into_owned();
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str) {
        return Format::Pattern(p.to_owned()).expected().into_owned();
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        let list: Vec<String> = options.iter().map(super::describe_sent).collect();
        return format!("one of: {}", list.join(", "));
    }
    if let Some(c) = s.get("const") {
        return format!("exactly {}", super::describe_sent(c));
    }
    match s.get("type") {
        Some(Value::String(t)) => return type_name_words(t).to_owned(),
        Some(Value::Array(ts)) => {
            let mut names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            names.sort_by_key(|t| *t == "null");
            let words: Vec<&str> = names.into_iter().map(type_name_words).collect();
            return words.join(" or ");
        }
        _ => {}
    }
    if depth < 4
        && let Some(Value::Array(branches)) = s.get("anyOf").or_else(|| s.get("oneOf"))
    {
        let words: Vec<String> = branches
            .iter()
            .map(|b| describe(root, b, depth + 1))
            .collect();
        return words.join(" or ");
    }
    "a value".to_owned()
}

fn type_name_words(t: &str) -> &'static str {
    match t {
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

fn union_shapes(root: &Value, segments: &[String]) -> Vec<String> {
    let Some(schema) = schema_at(root, segments) else {
        return Vec::new();
    };
    let inner = unwrap_nullable(root, schema);
    let s = if inner.get("anyOf").is_some() || inner.get("oneOf").is_some() {
        inner
    } else {
        resolve(root, schema)
    };
    match s.get("anyOf").or_else(|| s.get("oneOf")) {
        Some(Value::Array(branches)) => branches.iter().map(|b| describe(root, b, 1)).collect(),
        _ => Vec::new(),
    }
}

/// The keys the object at `segments` accepts, in declared order.
fn known_keys(root: &Value, segments: &[String]) -> Vec<String> {
    let Some(schema) = schema_at(root, segments) else {
        return Vec::new();
    };
    let s = unwrap_nullable(root, schema);
    if let Some(Value::Array(keys)) = s.get(KEYS_KEY) {
        return keys
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    match s.get("properties") {
        Some(Value::Object(p)) => p.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Sort key of a path: at each level, the field's declared position (or the array index), so
/// issues come in the order the schema shows the fields.
fn order_key(root: &Value, path: &str) -> Vec<usize> {
    if path.is_empty() {
        return Vec::new();
    }
    let segments: Vec<String> = path.split('.').map(str::to_owned).collect();
    let mut key = Vec::with_capacity(segments.len());
    for (i, seg) in segments.iter().enumerate() {
        let pos = schema_at(root, &segments[..i])
            .map(|s| unwrap_nullable(root, s))
            .and_then(|s| s.get(KEYS_KEY))
            .and_then(Value::as_array)
            .and_then(|keys| keys.iter().position(|k| k == seg.as_str()));
        key.push(pos.or_else(|| seg.parse().ok()).unwrap_or(usize::MAX));
    }
    key
}

/// The value at a dotted path, for "You sent" of issues found after deserialization.
pub fn value_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return Some(root);
    }
    path.split('.').try_fold(root, |v, seg| match v {
        Value::Object(m) => m.get(seg),
        Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

/// The issue for arguments the schema accepted but serde could not read (a type whose
/// `Deserialize` is stricter than its schema).
pub fn serde_issue(error: &serde_json::Error) -> Issue {
    Issue::new(
        "",
        IssueKind::Custom {
            message: format!(
                "The arguments could not be read: {}",
                cut(&error.to_string(), MAX_MESSAGE)
            ),
        },
        None,
    )
}
