//! A derived input's compiled schema and `from_arguments`.
//!
//! **Valid path:** serde, then the derive's `typed_check`: each field's rules
//! ([`super::rules`]) on its typed value, then the key count. A field a typed value cannot
//! decide (a float, a `HashSet`, a nested input, a custom `Deserialize`) is checked by
//! `jsonschema` on its sub-schema. **Invalid path:** `jsonschema`'s `iter_errors`, worded by
//! `explain`. `tests/tests/fast_path_contract.rs` checks the typed path agrees with `jsonschema`.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::explain::{MAX_MESSAGE, SchemaIndex, cut, issues_from_errors};
use super::path::Path;
use super::rules::custom::Validate;
use super::rules::enum_const::{self, Options, distinct, is_only_type, only_annotations_and};
use super::rules::{Check, Typed};
use super::spec::ContainerSpec;
use super::{Issue, IssueKind, ValidationReport};
/// The crate's [`JsonObject`](crate::JsonObject), named here: `input` imports `validation`.
type JsonObject = serde_json::Map<String, serde_json::Value>;

/// A derived input's schema and validator, built once per type.
pub struct Compiled {
    /// What the explainer reads from the annotated schema the validator was built from.
    index: SchemaIndex,
    shown: Arc<JsonObject>,
    validator: Result<jsonschema::Validator, String>,
    /// `None` when the schema's root is not exactly the derive's fields: the validator then
    /// decides every call.
    plan: Option<Plan>,
    /// The deprecated fields, with the authors' notes (read from the annotated schema).
    deprecated: Arc<[super::DeprecatedField]>,
}

fn validator_for(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Builds a derived input's schema, its validator and, when the schema allows one, its plan.
pub fn compile_derived<T: schemars::JsonSchema>(spec: &ContainerSpec) -> Compiled {
    let annotated = super::spec::annotated_root_schema::<T>();
    let validator = validator_for(&annotated);
    let plan = validator
        .is_ok()
        .then(|| Plan::new(&annotated, spec))
        .flatten();
    Compiled {
        index: SchemaIndex::new(&annotated),
        shown: Arc::new(crate::schema::shown_schema(&annotated)),
        validator,
        plan,
        deprecated: super::deprecated::deprecated_fields(&annotated).into(),
    }
}

impl Compiled {
    /// The schema agents see.
    pub fn schema(&self) -> Arc<JsonObject> {
        Arc::clone(&self.shown)
    }

    /// The input's deprecated fields, with the authors' notes.
    pub fn deprecated_fields(&self) -> Arc<[super::DeprecatedField]> {
        Arc::clone(&self.deprecated)
    }

    /// The `jsonschema` validator's answer (`false` when the schema does not compile).
    pub fn schema_accepts(&self, arguments: &Value) -> bool {
        self.validator.as_ref().is_ok_and(|v| v.is_valid(arguments))
    }

    /// Every structural problem of `arguments` known to be invalid (no `is_valid` first).
    fn collect(&self, arguments: &Value) -> ValidationReport {
        match &self.validator {
            Ok(v) => issues_from_errors(&self.index, v.iter_errors(arguments)),
            Err(e) => root_issue(format!(
                "The server's input schema does not compile ({e}); report this to the server's author"
            )),
        }
    }
}

/// The JSON type a typed value proves, when the field's schema holds only it and its rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Str,
    Int,
    Bool,
    /// An array of plain strings.
    Strs,
}

/// One field of the typed check.
struct FieldPlan {
    name: &'static str,
    required: bool,
    /// An `Option` that is `Some` was sent (no serde default could have filled it).
    some_is_sent: bool,
    /// What a typed value of the field decides; `None`: only the engine does.
    kind: Option<Kind>,
    nullable: bool,
    /// When the field's schema is a choice among strings: its options.
    options: Option<Options>,
    /// `jsonschema` on the field's sub-schema.
    engine: jsonschema::Validator,
}

/// The typed check of a derived input, for the code `#[derive(ToolInput)]` writes (not an API).
#[doc(hidden)]
pub struct Plan {
    fields: Vec<FieldPlan>,
    /// `additionalProperties: false`: every key must be a field.
    deny_unknown: bool,
}

/// The keywords a typed field's schema may carry besides annotations: its `type`, a list's
/// `items`, and every rule's keyword but `enum` (an enum field is decided by its options,
/// `enum_const`), read from the rules' own declarations.
static TYPED_KEYWORDS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    let rules = super::rules::keywords().filter(|k| k.on != super::rules::On::Any);
    ["type", "items"]
        .into_iter()
        .chain(rules.map(|k| k.name))
        .collect()
});

/// What a typed value decides of the field schema `s`, and whether it takes `null`.
fn kind_of(s: &Value) -> (Option<Kind>, bool) {
    let Some(obj) = s
        .as_object()
        .filter(|o| only_annotations_and(o, &TYPED_KEYWORDS))
    else {
        return (None, false);
    };
    let (name, nullable) = match obj.get("type") {
        Some(Value::String(t)) => (t.as_str(), false),
        Some(Value::Array(ts)) => match ts.as_slice() {
            [Value::String(t)] => (t.as_str(), false),
            [Value::String(t), Value::String(n)] | [Value::String(n), Value::String(t)]
                if n == "null" && t != "null" =>
            {
                (t.as_str(), true)
            }
            _ => return (None, false),
        },
        _ => return (None, false),
    };
    let plain_string_items = obj.get("items").is_none_or(|i| is_only_type(i, "string"));
    let kind = match name {
        "string" => Kind::Str,
        "integer" => Kind::Int,
        "boolean" => Kind::Bool,
        "array" if plain_string_items => Kind::Strs,
        _ => return (None, nullable),
    };
    (Some(kind), nullable)
}

impl Plan {
    /// The plan for the input `spec` describes, when the schema's root is exactly that object
    /// (the same fields, `required` and `additionalProperties`).
    fn new(root: &Value, spec: &ContainerSpec) -> Option<Plan> {
        let obj = root.as_object()?;
        let allowed = [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "$defs",
        ];
        let deny_unknown = match obj.get("additionalProperties") {
            None => false,
            Some(Value::Bool(false)) => true,
            Some(_) => return None,
        };
        let props = obj.get("properties")?.as_object()?;
        let required: Vec<&str> = match obj.get("required") {
            None => Vec::new(),
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            Some(_) => return None,
        };
        if !only_annotations_and(obj, &allowed)
            || obj.get("type") != Some(&Value::from("object"))
            || deny_unknown == spec.allow_unknown_fields
            || props.len() != spec.fields.len()
        {
            return None;
        }
        let defs = obj.get("$defs");
        let fields = spec
            .fields
            .iter()
            .map(|f| {
                let schema = props.get(f.name)?;
                if required.contains(&f.name) != f.required {
                    return None;
                }
                // The field's sub-schema, with the root's `$defs` its `$ref`s point into.
                let mut sub = schema.clone();
                if let (Value::Object(m), Some(defs)) = (&mut sub, defs) {
                    m.entry("$defs").or_insert_with(|| defs.clone());
                }
                let (kind, nullable) = kind_of(schema);
                Some(FieldPlan {
                    name: f.name,
                    required: f.required,
                    some_is_sent: !f.required && !f.default,
                    kind,
                    nullable,
                    options: kind
                        .is_none()
                        .then(|| enum_const::options(root, schema))
                        .flatten(),
                    engine: validator_for(&sub).ok()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        // Each property was found once: the names are the properties, one to one.
        distinct(fields.iter().map(|f| f.name).collect()).then_some(Plan {
            fields,
            deny_unknown,
        })
    }

    /// Checks field `i`: `rules` on its typed value when the value decides the field, else
    /// `jsonschema` on the value sent; `present` counts the keys known to be sent.
    #[inline(always)]
    pub fn field(
        &self,
        i: usize,
        typed: Typed<'_>,
        rules: impl FnOnce(Typed<'_>) -> Check,
        obj: &JsonObject,
        present: &mut usize,
    ) -> bool {
        let Some(f) = self.fields.get(i) else {
            return false;
        };
        let decides = match (typed, f.kind) {
            (Typed::Str(_), Some(Kind::Str))
            | (Typed::Int(_), Some(Kind::Int))
            | (Typed::Bool, Some(Kind::Bool))
            | (Typed::Strs(_), Some(Kind::Strs)) => true,
            // `None`: the key was absent, or `null`, which the field takes.
            (Typed::Unset, Some(_)) if f.nullable => {
                *present += usize::from(obj.contains_key(f.name));
                return true;
            }
            _ => false,
        };
        if !decides {
            return match sent(obj, f.name) {
                Some(v) => {
                    *present += 1;
                    match &f.options {
                        Some(options) => enum_const::check(v, options) == Check::Pass,
                        None => f.engine.is_valid(v),
                    }
                }
                None => !f.required,
            };
        }
        // serde read a value of the field's type: it was sent, unless a serde default filled
        // the field, in which case the schema checks nothing.
        if !f.required && !f.some_is_sent && !obj.contains_key(f.name) {
            return true;
        }
        *present += 1;
        match rules(typed) {
            Check::Pass => true,
            Check::Fail => false,
            Check::Engine => obj.get(f.name).is_some_and(|v| f.engine.is_valid(v)),
        }
    }

    /// After every [`Plan::field`]: the unknown-keys rule on the keys counted.
    #[inline(always)]
    pub fn done(&self, present: usize, obj: &JsonObject) -> bool {
        super::rules::unknown_keys::check(self.deny_unknown, present, obj.len())
    }
}

/// The value sent at `key`: in a small object a scan that compares lengths first costs less
/// than the map's search, whose every step compares bytes.
#[inline(always)]
fn sent<'a>(obj: &'a JsonObject, key: &str) -> Option<&'a Value> {
    if obj.len() <= 8 {
        obj.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        obj.get(key)
    }
}

/// What `#[derive(ToolInput)]` implements besides [`ToolInput`](crate::ToolInput).
pub trait Derived: DeserializeOwned + Validate + schemars::JsonSchema {
    /// The input's schema and validator, built once.
    fn compiled() -> &'static Compiled;

    /// The rules on the fields serde read, one [`Plan::field`] per field, then
    /// [`Plan::done`]; `obj` is the arguments object they were read from.
    fn typed_check(&self, plan: &Plan, obj: &JsonObject) -> bool;
}

/// `ToolInput::from_arguments` of a derived input: the typed path; when a rule says no,
/// `jsonschema` collects every problem; when serde fails (or there is no typed check),
/// `jsonschema` decides, then serde reads it. The custom validators run last.
pub fn from_arguments<T: Derived>(arguments: &Value) -> Result<T, ValidationReport> {
    let compiled = T::compiled();
    let report = match typed::<T>(compiled, arguments) {
        Some((value, true)) => return validated(value, arguments),
        // serde read the arguments and a rule failed: the schema rejects them too. Should they
        // disagree after all, no problem is collected and serde decides below.
        Some((_, false)) => compiled.collect(arguments),
        None if compiled.schema_accepts(arguments) => ValidationReport::default(),
        None => compiled.collect(arguments),
    };
    if !report.is_empty() {
        return Err(report);
    }
    match T::deserialize(arguments) {
        Ok(value) => validated(value, arguments),
        // A type whose `Deserialize` is stricter than its schema.
        Err(e) => Err(root_issue(format!(
            "The arguments could not be read: {}",
            cut(&e.to_string(), MAX_MESSAGE)
        ))),
    }
}

/// The typed path: serde's value, and whether every rule holds (then the schema accepts the
/// arguments, else it rejects them). `None` when the input has no typed check, the arguments
/// are not an object, or serde fails.
fn typed<T: Derived>(compiled: &Compiled, arguments: &Value) -> Option<(T, bool)> {
    let (plan, obj) = (compiled.plan.as_ref()?, arguments.as_object()?);
    let value = T::deserialize(arguments).ok()?;
    let accepted = value.typed_check(plan, obj);
    Some((value, accepted))
}

/// The typed path's answer, for contract tests: `None`, or [`Compiled::schema_accepts`]'s.
pub fn typed_accepts<T: Derived>(arguments: &Value) -> Option<bool> {
    typed::<T>(T::compiled(), arguments).map(|(_, accepted)| accepted)
}

/// A `custom` issue on the arguments object.
fn root_issue(message: String) -> ValidationReport {
    ValidationReport::new(vec![Issue::new("", IssueKind::Custom { message }, None)])
}

/// Runs the custom validators on a value that passed the schema.
fn validated<T: Validate>(value: T, arguments: &Value) -> Result<T, ValidationReport> {
    let mut issues = Vec::new();
    value.validate(arguments, &Path::Root, &mut issues);
    if issues.is_empty() {
        Ok(value)
    } else {
        Err(ValidationReport::new(issues))
    }
}
