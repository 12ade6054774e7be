//! Asking the user for structured input in the middle of a call: [`Context::elicit`], written
//! once for every protocol generation. The MCP bridge implements [`Elicitor`]: a
//! server-to-client `elicitation/create` for 2025 clients; for 2026-07-28 ones a
//! multi-round-trip (`input_required`) answer after which the handler runs again and
//! `elicit` returns the answer the client sent with its retry.
//!
//! **Code before the last `elicit` may run more than once** (once per round on 2026-07-28):
//! move money, write files and send mail after it.

use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use crate::envelope::{ToolError, codes};
use crate::input::{JsonObject, ToolInput};

/// The old path of [`codes::ELICITATION_UNSUPPORTED`].
#[deprecated(
    since = "0.1.0",
    note = "use `codes::ELICITATION_UNSUPPORTED`; removed in 0.2.0"
)]
pub const ELICITATION_UNSUPPORTED: &str = "ELICITATION_UNSUPPORTED";

/// What the user did with a form.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited<T> {
    /// Submitted it; the answer passed `T`'s validation.
    Accept(T),
    /// Explicitly declined.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

/// A client's raw answer to one form.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitAnswer {
    /// Submitted, with this content (a JSON object).
    Accept(Value),
    /// Declined.
    Decline,
    /// Cancelled.
    Cancel,
}

/// Why an elicitation did not produce an answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitFailure {
    /// The client cannot be asked (see [`codes::ELICITATION_UNSUPPORTED`]); the text says why.
    Unsupported(String),
    /// The request failed on the way (connection closed, timeout, bad reply).
    Failed(String),
}

/// One form request: what the bridge sends.
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitRequest {
    /// The text shown to the user.
    pub message: String,
    /// The flat JSON Schema of the form (`{"type":"object","properties":…,"required":…}`).
    pub requested_schema: JsonObject,
}

/// Sends form requests to a client: implemented by the MCP bridge over its connection.
pub trait Elicitor: Send + Sync {
    /// Asks the client. On 2026-07-28 the future may never finish: the bridge ends the call
    /// with an `input_required` answer instead, and runs the handler again on the retry.
    fn elicit(
        &self,
        request: ElicitRequest,
    ) -> BoxFuture<'static, Result<ElicitAnswer, ElicitFailure>>;

    /// Sends `sampling/createMessage` with `params` (the request's params as MCP writes them)
    /// and returns the client's `CreateMessageResult` as JSON; by the same mechanism as
    /// [`elicit`](Elicitor::elicit) on each protocol generation.
    fn sample(&self, params: Value) -> BoxFuture<'static, Result<Value, ElicitFailure>>;
}

/// A [`ToolInput`] a form can show: implemented by `#[derive(Elicitable)]`, which checks at
/// compile time that no field is a nested object, a list of objects or a map.
pub trait Elicitable: ToolInput {}

#[doc(hidden)]
pub mod __private {
    //! The probes `#[derive(Elicitable)]` expands to (autoref specialization: the
    //! expansion writes `let _: ElicitFieldOk = (&&ElicitProbe::<T>::new()).elicit_shape();`).

    use std::marker::PhantomData;

    use crate::input::ToolInput;

    /// A probe for one field type.
    pub struct ElicitProbe<T: ?Sized>(PhantomData<T>);

    impl<T: ?Sized> ElicitProbe<T> {
        /// A probe.
        pub fn new() -> Self {
            ElicitProbe(PhantomData)
        }
    }

    impl<T: ?Sized> Default for ElicitProbe<T> {
        fn default() -> Self {
            ElicitProbe::new()
        }
    }

    /// The field can be a form field.
    pub struct ElicitFieldOk;
    /// The field is a nested object, a list of objects or a map: a form is flat.
    pub struct NestedObjectsCannotBeElicited;

    /// Chosen for a nested object.
    pub trait ProbeNestedObject {
        /// The verdict.
        fn elicit_shape(&self) -> NestedObjectsCannotBeElicited;
    }
    impl<T: Nested + ?Sized> ProbeNestedObject for &ElicitProbe<T> {
        fn elicit_shape(&self) -> NestedObjectsCannotBeElicited {
            NestedObjectsCannotBeElicited
        }
    }

    /// Chosen otherwise.
    pub trait ProbeFlat {
        /// The verdict.
        fn elicit_shape(&self) -> ElicitFieldOk;
    }
    impl<T: ?Sized> ProbeFlat for ElicitProbe<T> {
        fn elicit_shape(&self) -> ElicitFieldOk {
            ElicitFieldOk
        }
    }

    /// Field types that are objects on the wire.
    pub trait Nested {}
    impl<T: ToolInput> Nested for T {}
    impl<T: Nested> Nested for Option<T> {}
    impl<T: Nested> Nested for Vec<T> {}
    impl<K, V> Nested for std::collections::HashMap<K, V> {}
    impl<K, V> Nested for std::collections::BTreeMap<K, V> {}
    impl Nested for serde_json::Map<String, serde_json::Value> {}
    impl Nested for serde_json::Value {}
}

/// The form schema of `T`, or why `T` cannot be a form: elicitation allows only a flat object
/// of strings, numbers, integers, booleans, string enums and arrays of string enums.
pub fn elicitation_schema<T: ToolInput>() -> Result<JsonObject, String> {
    form_schema(&T::input_schema())
}

/// The form schema of a `ToolInput` schema (see [`elicitation_schema`]).
pub fn form_schema(input: &JsonObject) -> Result<JsonObject, String> {
    let defs = input
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let resolve = |v: &Value| -> Value {
        let Some(r) = v.get("$ref").and_then(Value::as_str) else {
            return v.clone();
        };
        let name = r.trim_start_matches("#/$defs/");
        let mut target = defs.get(name).cloned().unwrap_or(Value::Null);
        // Keep the field's own description over the type's.
        if let (Some(obj), Some(d)) = (target.as_object_mut(), v.get("description")) {
            obj.insert("description".into(), d.clone());
        }
        target
    };
    let mut properties = Map::new();
    let required: Vec<Value> = input
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let empty = Map::new();
    let props = input
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, raw) in props {
        let mut prop = resolve(raw);
        // `Option<T>`: `anyOf: [T, null]` or `type: [t, "null"]`.
        if let Some(any) = prop.get("anyOf").and_then(Value::as_array) {
            let non_null: Vec<&Value> = any
                .iter()
                .filter(|v| v.get("type") != Some(&Value::from("null")))
                .collect();
            if let [only] = non_null.as_slice() {
                let mut inner = resolve(only);
                if let (Some(obj), Some(d)) = (inner.as_object_mut(), prop.get("description")) {
                    obj.entry("description").or_insert(d.clone());
                }
                prop = inner;
            }
        }
        if let Some(types) = prop.get("type").and_then(Value::as_array) {
            let t: Vec<&Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .collect();
            if let [only] = t.as_slice() {
                let only = (*only).clone();
                prop["type"] = only;
            }
        }
        properties.insert(name.clone(), flat_property(name, &prop, &resolve)?);
    }
    let mut out = JsonObject::new();
    out.insert("type".into(), "object".into());
    out.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    Ok(out)
}

const KEPT: &[&str] = &[
    "type",
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "enum",
    "oneOf",
];

fn flat_property(
    name: &str,
    prop: &Value,
    resolve: &dyn Fn(&Value) -> Value,
) -> Result<Value, String> {
    let nested = || format!("field `{name}` is a nested object, which a form cannot show");
    let kind = prop.get("type").and_then(Value::as_str);
    let is_enum = prop.get("enum").is_some() || prop.get("oneOf").is_some();
    match kind {
        Some("object") => return Err(nested()),
        Some("string" | "number" | "integer" | "boolean") => {}
        Some("array") => {
            let items = prop.get("items").map(resolve).unwrap_or(Value::Null);
            if items.get("enum").is_none()
                && items.get("oneOf").is_none()
                && items.get("anyOf").is_none()
            {
                return Err(format!(
                    "field `{name}` is a list of something other than enum values"
                ));
            }
            let mut out = Map::new();
            for key in [
                "type",
                "title",
                "description",
                "default",
                "minItems",
                "maxItems",
            ] {
                if let Some(v) = prop.get(key) {
                    out.insert(key.into(), v.clone());
                }
            }
            let mut item = Map::new();
            for key in ["type", "enum", "anyOf"] {
                if let Some(v) = items.get(key) {
                    item.insert(key.into(), v.clone());
                }
            }
            if let Some(one_of) = items.get("oneOf").and_then(Value::as_array) {
                item.insert(
                    "anyOf".into(),
                    Value::Array(one_of.iter().map(titled).collect()),
                );
            }
            out.insert("items".into(), Value::Object(item));
            return Ok(Value::Object(out));
        }
        None if is_enum => {}
        _ => return Err(nested()),
    }
    let mut out = Map::new();
    for key in KEPT {
        if let Some(v) = prop.get(*key) {
            out.insert((*key).into(), v.clone());
        }
    }
    // A documented enum: `oneOf: [{const, description}]` → the titled single-select forms
    // know, `[{const, title}]`, the variant's doc as its title.
    if let Some(one_of) = prop.get("oneOf").and_then(Value::as_array) {
        out.insert(
            "oneOf".into(),
            Value::Array(one_of.iter().map(titled).collect()),
        );
    }
    if let Some(format) = prop.get("format").and_then(Value::as_str)
        && matches!(format, "email" | "uri" | "date" | "date-time")
    {
        out.insert("format".into(), format.into());
    }
    if !out.contains_key("type") {
        out.insert("type".into(), "string".into());
    }
    Ok(Value::Object(out))
}

/// One enum choice as `{const, title}`.
fn titled(choice: &Value) -> Value {
    let mut out = Map::new();
    if let Some(c) = choice.get("const") {
        out.insert("const".into(), c.clone());
    }
    let title = choice
        .get("title")
        .or_else(|| choice.get("description"))
        .or_else(|| choice.get("const"))
        .cloned()
        .unwrap_or(Value::Null);
    out.insert("title".into(), title);
    Value::Object(out)
}

/// The schema of `T`, converted once per type.
pub(crate) fn cached_schema<T: ToolInput>() -> Result<Arc<JsonObject>, String> {
    use std::any::TypeId;
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Converted = Result<Arc<JsonObject>, String>;
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Converted>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    map.entry(TypeId::of::<T>())
        .or_insert_with(|| elicitation_schema::<T>().map(Arc::new))
        .clone()
}

/// The error a handler gets when its client cannot be asked.
pub(crate) fn unsupported(why: &str) -> ToolError {
    ToolError::new(
        codes::ELICITATION_UNSUPPORTED,
        format!("This client cannot show a form: {why}"),
    )
    .recovery("This client cannot show a form; ask the user in conversation and call again with the answer as an argument")
}

/// The error a handler gets when the request failed on the way.
pub(crate) fn failed(why: &str) -> ToolError {
    ToolError::new(
        codes::INTERNAL_ERROR,
        format!("Asking the user failed: {why}"),
    )
    .recovery("Call the tool again; if it keeps failing, ask the user in conversation")
}

/// The error a handler gets when `T` cannot be a form (a bug in the server).
pub(crate) fn not_a_form(type_name: &str, why: &str) -> ToolError {
    ToolError::new(
        codes::INTERNAL_ERROR,
        format!("{type_name} cannot be elicited: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn a_flat_schema_keeps_what_forms_allow_and_inlines_refs() {
        let input = obj(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "name": {"type": "string", "description": "Your name", "maxLength": 40, "pattern": "^a"},
                "age": {"type": ["integer", "null"], "minimum": 0},
                "reason": {"$ref": "#/$defs/Reason", "description": "Why"},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Reason"}}
            },
            "required": ["name", "reason"],
            "$defs": {"Reason": {"type": "string", "enum": ["duplicate", "fraud"]}}
        }));
        let form = form_schema(&input).unwrap_or_default();
        assert_eq!(
            Value::Object(form),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Your name", "maxLength": 40},
                    "age": {"type": "integer", "minimum": 0},
                    "reason": {"type": "string", "enum": ["duplicate", "fraud"], "description": "Why"},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["duplicate", "fraud"]}}
                },
                "required": ["name", "reason"]
            })
        );
    }

    #[test]
    fn a_nested_object_is_refused_by_name() {
        let input = obj(json!({
            "type": "object",
            "properties": {"address": {"$ref": "#/$defs/Address"}},
            "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}}
        }));
        let err = form_schema(&input).err().unwrap_or_default();
        assert!(err.contains("`address` is a nested object"), "{err}");
        let input = obj(json!({
            "type": "object",
            "properties": {"lines": {"type": "array", "items": {"type": "object"}}}
        }));
        assert!(form_schema(&input).is_err());
    }
}
