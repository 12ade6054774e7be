//! What `#[derive(ToolInput)]` expands to calls. Not a public API: it changes in any release.
//! Re-exports only: the validation core is [`crate::validation`], the schema builder
//! [`crate::schema`].

pub use schemars;
pub use schemars::{JsonSchema, Schema, SchemaGenerator};
pub use serde_json;

pub use crate::schema::{
    ContainerSpec, FieldSpec, Num, Rule, StringFormat, object_schema, schema_for,
};
pub use crate::validation::Path;
pub use crate::validation::derived::{
    Compiled, Derived, Plan, compile, compile_derived, from_arguments, typed_accepts,
};
pub use crate::validation::rules;
pub use crate::validation::rules::custom::{Dive, DiveNone, DiveValidate, Validate, run_validator};
pub use crate::validation::rules::{Check, Probe, ProbeOpaque, ProbeTrusted, Trusted, Typed};

// `#[tool_action]` (issue 4)
mod tool_action;
pub use tool_action::*;
