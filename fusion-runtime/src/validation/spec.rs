//! What `#[derive(ToolInput)]` writes down: each field's [`Rule`]s from its `#[fusion(..)]`
//! attributes, and the JSON Schema (draft 2020-12) built from them. One attribute gives a
//! field both its [`Rule`] (its rule's keywords) and its typed check (its rule's `check`),
//! with the same arguments, so the two cannot disagree.

use serde_json::{Map, Value};

pub use super::rules::num::Num;
use crate::schema::{DEPRECATED_KEY, EXPECTED_KEY, KEYS_KEY, for_each_schema, strip_rust_formats};

/// One constraint of a field, as written in `#[fusion(..)]`: its rule's keywords, written
/// into the field's schema. The derive writes it as
/// `Rule(|schema| rules::<rule>::keywords(<the attribute's arguments>, schema))`, so the rule's
/// file alone knows its keywords.
#[derive(Clone, Copy, Debug)]
pub struct Rule(pub fn(&mut Map<String, Value>));

impl Rule {
    /// Writes this rule's keywords into a field's schema object.
    pub fn apply(&self, schema: &mut Map<String, Value>) {
        (self.0)(schema)
    }
}

/// The schema of a field's type, as a `fn` pointer the derive can store in a `const`.
pub fn schema_for<T: schemars::JsonSchema>(
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    generator.subschema_for::<T>()
}

/// One field of a derived input, as the derive writes it down.
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec {
    /// The JSON key (after serde renames).
    pub name: &'static str,
    /// `description = ".."`, else the doc comment (raw, one leading space per line).
    pub description: Option<&'static str>,
    /// `expected = ".."`: replaces the "Expected …" text of issues at this field.
    pub expected: Option<&'static str>,
    /// Whether the key must be present (not an `Option`, no serde default).
    pub required: bool,
    /// A serde default fills the field when it is absent (`#[serde(default)]` on the field or
    /// on the struct), so an `Option` that is `Some` may not have been sent.
    pub default: bool,
    /// `deprecated = ".."`: the author's note on what to use instead. The schema marks the
    /// field `"deprecated": true` and adds the note to its description; a call that sends it
    /// gets a `DEPRECATED` warning.
    pub deprecated: Option<&'static str>,
    /// The field's constraints.
    pub rules: &'static [Rule],
    /// The schema of the field's type, through `schemars`.
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
}

/// A derived input type, as the derive writes it down.
#[derive(Clone, Copy, Debug)]
pub struct ContainerSpec {
    /// The Rust name.
    pub name: &'static str,
    /// `description = ".."`, else the doc comment.
    pub description: Option<&'static str>,
    /// The fields, in declaration order (skipped fields left out).
    pub fields: &'static [FieldSpec],
    /// `#[fusion(allow_unknown_fields)]`: no `additionalProperties: false`.
    pub allow_unknown_fields: bool,
}

/// A doc comment as a description: one leading space a line and the outer blank lines gone.
pub fn clean_doc(raw: &str) -> Option<String> {
    let lines: Vec<&str> = raw
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect();
    let start = lines.iter().position(|l| !l.is_empty())?;
    let end = lines.iter().rposition(|l| !l.is_empty())?;
    Some(lines[start..=end].join("\n"))
}

/// A field's schema: its type's, its rules, its description and the author's expected text.
fn field_schema(generator: &mut schemars::SchemaGenerator, field: &FieldSpec) -> Value {
    let mut obj = match (field.schema)(generator).to_value() {
        Value::Object(obj) => obj,
        // `true` schemas (serde_json::Value fields) become `{}` so keywords can be added.
        _ => Map::new(),
    };
    for rule in field.rules {
        rule.apply(&mut obj);
    }
    let description = field.description.and_then(clean_doc);
    match (description, field.deprecated) {
        (Some(d), Some(note)) => {
            obj.insert(
                "description".into(),
                format!("{d}\n\n{}", deprecation_text(note)).into(),
            );
        }
        (None, Some(note)) => {
            obj.insert("description".into(), deprecation_text(note).into());
        }
        (Some(d), None) => {
            obj.insert("description".into(), d.into());
        }
        (None, None) => {}
    }
    if let Some(note) = field.deprecated {
        obj.insert("deprecated".into(), true.into());
        obj.insert(DEPRECATED_KEY.into(), note.into());
    }
    if let Some(e) = field.expected {
        obj.insert(EXPECTED_KEY.into(), e.into());
    }
    Value::Object(obj)
}

/// The sentence a deprecated field's description ends with: the author's note, so the model
/// reading `tools/list` learns what to send instead.
fn deprecation_text(note: &str) -> String {
    let note = note.trim();
    let end = if note.ends_with(['.', '!', '?']) {
        ""
    } else {
        "."
    };
    format!("Deprecated: {note}{end}")
}

/// The range of the Rust integer type `schemars` names in `format`, on this object only.
fn add_integer_range(obj: &mut Map<String, Value>) {
    let is_integer = match obj.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    let (lo, hi): (Value, Value) = match obj.get("format").and_then(Value::as_str) {
        _ if !is_integer => return,
        Some("int8") => (i8::MIN.into(), i8::MAX.into()),
        Some("int16") => (i16::MIN.into(), i16::MAX.into()),
        Some("uint8") => (0.into(), u8::MAX.into()),
        Some("uint16") => (0.into(), u16::MAX.into()),
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("int64" | "int") => (i64::MIN.into(), i64::MAX.into()),
        Some("uint32") => (0.into(), u32::MAX.into()),
        Some("uint64" | "uint") => (0.into(), u64::MAX.into()),
        _ => return,
    };
    // The type's range, unless the author's bound is tighter: a value the schema accepts must
    // also fit the Rust type. (As `f64`, an `i64` bound compares right with the ranges' ends:
    // rounding keeps the order, and the ends are the extremes.)
    let tighter = |bound: Option<&Value>, end: &Value, lower: bool| {
        bound
            .and_then(Value::as_f64)
            .zip(end.as_f64())
            .is_some_and(|(b, e)| if lower { b >= e } else { b <= e })
    };
    if !tighter(obj.get("minimum"), &lo, true) {
        obj.insert("minimum".into(), lo);
    }
    if !tighter(obj.get("maximum"), &hi, false) {
        obj.insert("maximum".into(), hi);
    }
}

/// The object schema of a derived input (what its `JsonSchema::json_schema` returns).
pub fn object_schema(
    generator: &mut schemars::SchemaGenerator,
    spec: &ContainerSpec,
) -> schemars::Schema {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut keys = Vec::with_capacity(spec.fields.len());
    for field in spec.fields {
        properties.insert(field.name.to_owned(), field_schema(generator, field));
        keys.push(Value::from(field.name));
        if field.required {
            required.push(Value::from(field.name));
        }
    }
    let mut obj = Map::new();
    obj.insert("type".into(), "object".into());
    if let Some(d) = spec.description.and_then(clean_doc) {
        obj.insert("description".into(), d.into());
    }
    obj.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        obj.insert("required".into(), Value::Array(required));
    }
    if !spec.allow_unknown_fields {
        obj.insert("additionalProperties".into(), false.into());
    }
    obj.insert(KEYS_KEY.into(), Value::Array(keys));
    schemars::Schema::from(obj)
}

/// The root schema of `T` (draft 2020-12) with annotations, each integer's Rust range in
/// `minimum` / `maximum`, and the Rust number `format`s (`uint32`, …) stripped: the validator
/// compiles it, and agents see it without its annotations.
pub fn annotated_root_schema<T: schemars::JsonSchema>() -> Value {
    let mut root = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    for_each_schema(&mut root, &mut add_integer_range);
    strip_rust_formats(&mut root);
    root
}
