//! [`NoInput`]: the input of an action that takes none.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::input::{JsonObject, ToolInput};
use crate::validation::derived::{self, Compiled, Derived, Plan};
use crate::validation::rules::custom::Validate;
use crate::validation::spec::{ContainerSpec, object_schema};
use crate::validation::{DeprecatedField, Issue, Path, ValidationReport};

/// The input of an action whose function takes none (`async fn ping() -> ..`, or only its
/// `Context`): `#[tool_action]` uses it for such a function. Its schema is an object with no
/// properties, `{"type": "object", "properties": {}, "additionalProperties": false}`; a call
/// that sends a key is refused with `unrecognized_keys`, as any input refuses a key it does
/// not declare. The test kit calls such an action with `&NoInput`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct NoInput {}

/// What `#[derive(ToolInput)]` writes down for `struct NoInput {}`.
const SPEC: ContainerSpec = ContainerSpec {
    name: "NoInput",
    description: None,
    fields: &[],
    allow_unknown_fields: false,
};

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| derived::compile_derived::<NoInput>(&SPEC))
}

impl schemars::JsonSchema for NoInput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("NoInput")
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("fusion_runtime::action::NoInput")
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        object_schema(generator, &SPEC)
    }
}

impl Validate for NoInput {
    fn validate(&self, _: &Value, _: &Path<'_>, _: &mut Vec<Issue>) {}
}

impl Derived for NoInput {
    fn compiled() -> &'static Compiled {
        compiled()
    }

    fn typed_check(&self, plan: &Plan, obj: &JsonObject) -> bool {
        plan.done(0, obj)
    }
}

// Not offered by rustc as "the trait `ToolInput` is implemented for `NoInput`" when a user's
// input type lacks the derive: the fix is the derive, never this type.
#[diagnostic::do_not_recommend]
impl ToolInput for NoInput {
    fn input_schema() -> Arc<JsonObject> {
        compiled().schema()
    }

    fn from_arguments(arguments: &Value) -> Result<Self, ValidationReport> {
        derived::from_arguments::<Self>(arguments)
    }

    fn deprecated_fields() -> Arc<[DeprecatedField]> {
        compiled().deprecated_fields()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schema_is_an_empty_object_that_refuses_every_key() {
        let schema = Value::Object(NoInput::input_schema().as_ref().clone());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"], json!({}));
        assert_eq!(schema["additionalProperties"], false);
        assert!(NoInput::from_arguments(&json!({})).is_ok());
        let report = NoInput::from_arguments(&json!({"verbose": true}))
            .err()
            .unwrap_or_else(|| panic!("a key was accepted"));
        assert_eq!(report.issues().len(), 1);
        assert_eq!(report.issues()[0].kind.code(), "unrecognized_keys");
        assert!(NoInput::from_arguments(&json!([1])).is_err());
    }
}
