//! What `#[derive(ToolInput)]` expands to calls. Not a public API: it changes in any release.
//! Re-exports only: the validation core is [`crate::validation`], the schema builder
//! [`crate::validation::spec`].

pub use schemars;
pub use schemars::{JsonSchema, Schema, SchemaGenerator};
pub use serde_json;

pub use crate::validation::derived::{
    Compiled, Derived, Plan, compile_derived, from_arguments, typed_accepts,
};
pub use crate::validation::rules;
pub use crate::validation::rules::custom::{Dive, DiveNone, DiveValidate, Validate, run_validator};
pub use crate::validation::rules::{Check, Probe, ProbeOpaque, ProbeTrusted, Trusted, Typed};
pub use crate::validation::spec::{ContainerSpec, FieldSpec, Num, Rule, object_schema, schema_for};
pub use crate::validation::{DeprecatedField, Format, Path};

// `#[tool_action]` (issue 4)
pub use crate::action::expand::*;
