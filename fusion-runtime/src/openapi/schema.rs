//! OpenAPI schemas as JSON Schema 2020-12, the dialect the validation engine runs: 3.0's
//! `nullable` and boolean `exclusiveMinimum`, Swagger 2.0's `x-nullable` and `type: file`,
//! `example` as `examples`; `readOnly` properties left out of requests and `writeOnly` ones
//! out of answers; annotations no validator reads (`xml`, `discriminator`, `externalDocs`,
//! `x-…`) dropped. Every `$ref` becomes a reference into the result's own `$defs`, named after
//! the schema it points to (`#/components/schemas/Pet` → `#/$defs/Pet`), so recursive schemas
//! stay recursive and each schema is converted once per document.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::OpenApiError;
use super::document::{Document, Place, reference_of};

/// Which OpenAPI the document is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Swagger 2.0.
    V2,
    /// OpenAPI 3.0.x.
    V30,
    /// OpenAPI 3.1.x (JSON Schema 2020-12 already).
    V31,
}

/// Which way a value travels: readOnly properties are not sent, writeOnly ones not answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Direction {
    Request,
    Response,
}

/// How deep an inline schema may nest.
const MAX_NESTING: usize = 200;

/// Keywords whose value is one schema.
const ONE: [&str; 12] = [
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
    "items",
];
/// Keywords whose value is a list of schemas.
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to schemas.
const MAP: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];
/// Keywords dropped: annotations no validator reads, or identifiers that would change how
/// references resolve.
const DROPPED: [&str; 10] = [
    "xml",
    "externalDocs",
    "discriminator",
    "$schema",
    "$id",
    "$anchor",
    "$comment",
    "$defs",
    "definitions",
    "nullable",
];

/// The schemas of one document, converted once each.
pub(crate) struct Schemas {
    dialect: Dialect,
    max_schemas: usize,
    /// The `$defs` name of each schema a `$ref` points to.
    names: HashMap<Place, String>,
    taken: HashSet<String>,
    /// Converted `$defs` entries and the places each references.
    converted: HashMap<(Place, Direction), (Value, Vec<Place>)>,
}

/// One converted root schema and the `$defs` it needs.
pub(crate) struct Converted {
    pub(crate) schema: Value,
    pub(crate) defs: BTreeMap<String, Value>,
}

impl Schemas {
    pub(crate) fn new(dialect: Dialect, max_schemas: usize) -> Self {
        Schemas {
            dialect,
            max_schemas,
            names: HashMap::new(),
            taken: HashSet::new(),
            converted: HashMap::new(),
        }
    }

    /// The schema at `place` (inline, or a `$ref`), converted, with every schema it reaches.
    pub(crate) fn convert(
        &mut self,
        doc: &mut Document,
        place: &Place,
        dir: Direction,
    ) -> Result<Converted, OpenApiError> {
        let value = doc.at(place).cloned().unwrap_or(Value::Bool(true));
        self.convert_value(doc, place, &value, dir)
    }

    /// [`Schemas::convert`] of `value`, found at `place`.
    pub(crate) fn convert_value(
        &mut self,
        doc: &mut Document,
        place: &Place,
        value: &Value,
        dir: Direction,
    ) -> Result<Converted, OpenApiError> {
        let mut refs = Vec::new();
        let schema = self.node(doc, place, value, dir, &mut refs, 0)?;
        let mut defs = BTreeMap::new();
        let mut queue = refs;
        let mut done: HashSet<Place> = HashSet::new();
        while let Some(target) = queue.pop() {
            if !done.insert(target.clone()) {
                continue;
            }
            if done.len() > self.max_schemas {
                return Err(OpenApiError::document(
                    &doc.describe(place),
                    format!(
                        "the schema reaches more than {} other schemas (OpenApiLimits::max_schemas)",
                        self.max_schemas
                    ),
                ));
            }
            let key = (target.clone(), dir);
            if !self.converted.contains_key(&key) {
                let body = doc.at(&target).cloned().unwrap_or(Value::Bool(true));
                let mut inner = Vec::new();
                let converted = self.node(doc, &target, &body, dir, &mut inner, 0)?;
                self.converted.insert(key.clone(), (converted, inner));
            }
            let (converted, inner) = &self.converted[&key];
            defs.insert(self.names[&target].clone(), converted.clone());
            queue.extend(inner.iter().cloned());
        }
        Ok(Converted { schema, defs })
    }

    /// Where a `$ref` written at `at` leads, past every pure alias, named for `$defs`.
    fn reference(
        &mut self,
        doc: &mut Document,
        at: &Place,
        reference: &str,
    ) -> Result<(Place, String), OpenApiError> {
        let first = doc.target(at.file, reference, at)?;
        let target = doc.follow(&first)?;
        if let Some(name) = self.names.get(&target) {
            return Ok((target, name.clone()));
        }
        let base: String = target
            .pointer
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("schema")
            .replace("~1", "_")
            .replace("~0", "_")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut name = base.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        self.names.insert(target.clone(), name.clone());
        Ok((target, name))
    }

    fn node(
        &mut self,
        doc: &mut Document,
        at: &Place,
        value: &Value,
        dir: Direction,
        refs: &mut Vec<Place>,
        depth: usize,
    ) -> Result<Value, OpenApiError> {
        if depth > MAX_NESTING {
            return Err(OpenApiError::document(
                &doc.describe(at),
                format!("a schema nested more than {MAX_NESTING} levels deep"),
            ));
        }
        let Value::Object(map) = value else {
            // 3.1 allows `true` / `false` schemas; anything else says nothing.
            return Ok(match value {
                Value::Bool(_) => value.clone(),
                _ => json!({}),
            });
        };
        let mut out = Map::new();
        if let Some(reference) = reference_of(value) {
            let (target, name) = self.reference(doc, at, reference)?;
            refs.push(target);
            out.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
            if self.dialect != Dialect::V31 {
                // 3.0 and 2.0 ignore a `$ref`'s siblings; a description and `nullable` are
                // kept, as authors mean them.
                if let Some(d) = map.get("description") {
                    out.insert("description".into(), d.clone());
                }
                return Ok(self.nullable(map, Value::Object(out)));
            }
        }
        let mut left_out: Vec<String> = Vec::new();
        for (key, v) in map {
            let here = || at.join(key);
            match key.as_str() {
                "$ref" => {}
                k if k.starts_with("x-") || DROPPED.contains(&k) => {}
                k if MAP.contains(&k) => {
                    let Value::Object(props) = v else { continue };
                    let mut converted = Map::new();
                    for (name, p) in props {
                        if k == "properties" && hidden(p, dir) {
                            left_out.push(name.clone());
                            continue;
                        }
                        let place = here().join(name);
                        converted.insert(
                            name.clone(),
                            self.node(doc, &place, p, dir, refs, depth + 1)?,
                        );
                    }
                    out.insert(key.clone(), Value::Object(converted));
                }
                "items" if v.is_array() => {
                    let list = self.list(doc, &here(), v, dir, refs, depth)?;
                    out.insert("prefixItems".into(), list);
                }
                k if ONE.contains(&k) => {
                    out.insert(
                        key.clone(),
                        self.node(doc, &here(), v, dir, refs, depth + 1)?,
                    );
                }
                k if LIST.contains(&k) => {
                    let list = self.list(doc, &here(), v, dir, refs, depth)?;
                    out.insert(key.clone(), list);
                }
                "exclusiveMinimum" | "exclusiveMaximum" if v.is_boolean() => {
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    if v == &Value::Bool(true)
                        && let Some(b) = map.get(bound)
                    {
                        out.insert(key.clone(), b.clone());
                    }
                }
                "example" => {
                    out.insert("examples".into(), Value::Array(vec![v.clone()]));
                }
                // Swagger-era documents (httpbin's among them) write `int`, `long`, `bool`…:
                // read as the JSON type they mean rather than refused.
                "type"
                    if self.dialect != Dialect::V31 && v.as_str().and_then(json_type).is_some() =>
                {
                    let t = v.as_str().and_then(json_type).unwrap_or("string");
                    out.insert("type".into(), t.into());
                }
                "type" if v == "file" => {
                    out.insert("type".into(), "string".into());
                    out.insert("format".into(), "binary".into());
                }
                "readOnly" | "writeOnly" => {}
                _ => {
                    out.insert(key.clone(), v.clone());
                }
            }
        }
        // A 3.0 / 2.0 `minimum` made exclusive by a boolean moved into `exclusiveMinimum`.
        for (exclusive, bound) in [
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ] {
            if map.get(exclusive) == Some(&Value::Bool(true)) && out.contains_key(exclusive) {
                out.remove(bound);
            }
        }
        if !left_out.is_empty()
            && let Some(Value::Array(required)) = out.get_mut("required")
        {
            required.retain(|r| !r.as_str().is_some_and(|r| left_out.iter().any(|l| l == r)));
        }
        Ok(self.nullable(map, Value::Object(out)))
    }

    fn list(
        &mut self,
        doc: &mut Document,
        at: &Place,
        v: &Value,
        dir: Direction,
        refs: &mut Vec<Place>,
        depth: usize,
    ) -> Result<Value, OpenApiError> {
        let Value::Array(items) = v else {
            return Ok(v.clone());
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(self.node(doc, &at.join(&i.to_string()), item, dir, refs, depth + 1)?);
        }
        Ok(Value::Array(out))
    }

    /// `schema` accepting `null` too when the source says `nullable: true` (3.0) or
    /// `x-nullable: true` (2.0).
    fn nullable(&self, source: &Map<String, Value>, schema: Value) -> Value {
        let on = |k: &str| source.get(k) == Some(&Value::Bool(true));
        if self.dialect == Dialect::V31 || !(on("nullable") || on("x-nullable")) {
            return schema;
        }
        let Value::Object(mut m) = schema else {
            return schema;
        };
        if let Some(Value::Array(options)) = m.get_mut("enum")
            && !options.contains(&Value::Null)
        {
            options.push(Value::Null);
        }
        match m.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                m.insert("type".into(), json!([t, "null"]));
                Value::Object(m)
            }
            Some(Value::Array(types)) => {
                if !types.contains(&json!("null")) {
                    types.push(json!("null"));
                }
                Value::Object(m)
            }
            _ => json!({"anyOf": [Value::Object(m), {"type": "null"}]}),
        }
    }
}

/// The JSON type a loose type name means (`int` → `integer`); `None` for JSON's own names
/// and for `file`.
fn json_type(t: &str) -> Option<&'static str> {
    Some(match t {
        "int" | "int32" | "int64" | "long" => "integer",
        "float" | "double" | "decimal" => "number",
        "bool" => "boolean",
        "str" => "string",
        "dict" | "map" => "object",
        "list" => "array",
        _ => return None,
    })
}

/// Whether a property is left out in `dir`: read-only ones are not sent, write-only ones not
/// answered.
fn hidden(p: &Value, dir: Direction) -> bool {
    let key = match dir {
        Direction::Request => "readOnly",
        Direction::Response => "writeOnly",
    };
    p.get(key) == Some(&Value::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::OpenApiLimits;
    use crate::openapi::document::Source;

    fn convert(doc: Value, dialect: Dialect, at: &str, dir: Direction) -> Converted {
        let mut doc = Document::load(
            &Source::Value(std::sync::Arc::new(doc), None),
            &OpenApiLimits::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        Schemas::new(dialect, 100)
            .convert(&mut doc, &Place::root(at), dir)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn nullable_becomes_a_null_type_and_a_null_option() {
        let doc = json!({"s": {"type": "string", "enum": ["a", "b"], "nullable": true}});
        let c = convert(doc, Dialect::V30, "/s", Direction::Request);
        assert_eq!(
            c.schema,
            json!({"type": ["string", "null"], "enum": ["a", "b", null]})
        );
        let doc =
            json!({"s": {"allOf": [{"$ref": "#/P"}], "nullable": true}, "P": {"type": "object"}});
        let c = convert(doc, Dialect::V30, "/s", Direction::Request);
        assert_eq!(
            c.schema,
            json!({"anyOf": [{"allOf": [{"$ref": "#/$defs/P"}]}, {"type": "null"}]})
        );
        assert_eq!(c.defs["P"], json!({"type": "object"}));
    }

    #[test]
    fn a_recursive_schema_stays_recursive() {
        let doc = json!({"components": {"schemas": {"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}}}});
        let c = convert(
            doc,
            Dialect::V30,
            "/components/schemas/Node",
            Direction::Request,
        );
        assert_eq!(
            c.schema["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert!(c.defs.contains_key("Node"));
    }

    #[test]
    fn old_exclusive_bounds_and_read_only_properties() {
        let doc = json!({"s": {"type": "object", "required": ["id", "n"], "properties": {
            "id": {"type": "integer", "readOnly": true},
            "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "example": 3}}}});
        let c = convert(doc.clone(), Dialect::V30, "/s", Direction::Request);
        assert_eq!(
            c.schema,
            json!({"type": "object", "required": ["n"], "properties": {
                "n": {"type": "number", "exclusiveMinimum": 0, "examples": [3]}}})
        );
        let c = convert(doc, Dialect::V30, "/s", Direction::Response);
        assert!(c.schema["properties"].get("id").is_some());
    }
}
