//! The `ToolInput` trait: what `#[derive(ToolInput)]` implements for an action's input type.

use std::sync::Arc;

use serde_json::Value;

use crate::validation::{DeprecatedField, ValidationReport};

/// A JSON object, as MCP carries schemas and arguments.
pub type JsonObject = serde_json::Map<String, Value>;

/// An action's input: one JSON Schema shown to agents and run on every call.
///
/// Implemented by `#[derive(ToolInput)]`; the schema and the validation come from the same
/// attributes, so they cannot disagree.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool input",
    label = "this type has no `#[derive(ToolInput)]`",
    note = "derive it on a struct with named fields: `#[derive(serde::Deserialize, fusion_runtime::ToolInput)]`"
)]
pub trait ToolInput: Sized + Send + 'static {
    /// The JSON Schema (draft 2020-12) of the arguments, as `tools/list` shows it. Built once
    /// per type; every call returns the same `Arc`.
    fn input_schema() -> Arc<JsonObject>;

    /// Checks the raw arguments against the schema — every problem in one pass — then builds
    /// the typed value and runs custom validators. `Err` carries every problem found.
    ///
    /// The arguments are borrowed: the caller keeps them (the pipeline hands them to
    /// middleware afterwards), and nothing is copied or dropped here.
    fn from_arguments(arguments: &Value) -> Result<Self, ValidationReport>;

    /// The fields marked `"deprecated": true` in the schema, found once per action when it is
    /// registered: a call that sends one gets a `DEPRECATED` warning. The derive returns them
    /// with the authors' notes (`#[fusion(deprecated = "..")]`); this default reads
    /// [`input_schema`](ToolInput::input_schema), which has no notes.
    fn deprecated_fields() -> Arc<[DeprecatedField]> {
        crate::validation::deprecated::deprecated_fields(&Value::Object(
            Self::input_schema().as_ref().clone(),
        ))
        .into()
    }
}
