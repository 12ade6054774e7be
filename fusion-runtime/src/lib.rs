//! Fusion: MCP servers whose errors are written for the language model that reads them.
//!
//! Every failure becomes a structured envelope the agent can act on — a `<tool_error>` with a
//! code, a recovery hint and the actions to call instead, or a `<validation_error>` that says,
//! field by field, what was sent and what was expected.
//!
//! ```
//! use fusion_runtime::{error, codes::NOT_FOUND};
//!
//! let e = error(NOT_FOUND, "No invoice with that ID")
//!     .suggest("List invoices first, then retry with a real ID")
//!     .actions(["billing.list_invoices"]);
//! println!("{}", e.render());
//! ```
#![warn(missing_docs)]

pub mod auth;
pub mod client;
pub mod contract;
pub mod envelope;
pub mod guard;
pub mod input;

pub use envelope::{
    Content, ErrorCode, RetryAfter, Severity, ToolError, ToolResponse, codes, error,
};
pub mod validation;

pub use input::{JsonObject, ToolInput};
pub use validation::{Issue, IssueKind, ValidationReport};

// `#[derive(ToolInput)]` (issue 3)
#[doc(hidden)]
pub mod __private;
pub mod schema;
/// Derives [`ToolInput`](trait@ToolInput): one JSON Schema (draft 2020-12) from the struct's
/// fields, doc comments and `#[fusion(..)]` attributes — shown to agents by `tools/list` and
/// run on every call — then serde on the parsed arguments, then custom validators.
///
/// Every problem is found in one pass and becomes a `<field>` line of a
/// `<validation_error>` ([`ValidationReport`]).
///
/// # Field attributes
///
/// | key | applies to | schema keyword | issue kind |
/// |---|---|---|---|
/// | `length(min = n, max = n)` | strings | `minLength`, `maxLength` | `too_small`, `too_big` |
/// | `range(min = x, max = x)` (inclusive) | numbers | `minimum`, `maximum` | `too_small`, `too_big` |
/// | `range(exclusive_min = x, exclusive_max = x)` | numbers | `exclusiveMinimum`, `exclusiveMaximum` | `too_small`, `too_big` |
/// | `items(min = n, max = n)` | arrays (`Vec`, sets, …) | `minItems`, `maxItems` | `too_small`, `too_big` |
/// | `email` | strings | `format: "email"` | `invalid_format` |
/// | `url` | strings | `format: "uri"` | `invalid_format` |
/// | `uuid` | strings | `format: "uuid"` | `invalid_format` |
/// | `date_time` | strings | `format: "date-time"` | `invalid_format` |
/// | `date` | strings | `format: "date"` | `invalid_format` |
/// | `ipv4` | strings | `format: "ipv4"` | `invalid_format` |
/// | `ipv6` | strings | `format: "ipv6"` | `invalid_format` |
/// | `pattern = "regex"` (ECMA-262, as the validator reads it; checked at compile time by the same engine) | strings | `pattern` | `invalid_format` |
/// | `multiple_of = x` (> 0) | numbers | `multipleOf` | `not_multiple_of` |
/// | `expected = "…"` | any field | — | replaces the "Expected …" text of every issue at the field |
/// | `description = "…"` | any field | `description` (else the doc comment) | — |
/// | `validate = path::to_fn` | any field | — (describe it in the doc comment) | `custom` |
///
/// A `range` takes `min` or `exclusive_min` (not both) and `max` or `exclusive_max`. One
/// format per field, and a format excludes `pattern`. `validate` names a
/// `fn(&T) -> Result<(), E>` with `E: Display`, where `T` is the field's type — or, for an
/// `Option<T>` field, the inner type, and the check runs only when a value was sent. Its
/// message becomes the `custom` line.
///
/// # Container attributes
///
/// | key | schema | effect |
/// |---|---|---|
/// | `allow_unknown_fields` | no `additionalProperties: false` | extra keys are ignored instead of `unrecognized_keys` |
/// | `description = "…"` | `description` (else the doc comment) | — |
/// | `#[serde(rename = "…")]` (or `rename(deserialize = "…")`) | the schema's name: its `$defs` key, `$ref`s and root `title` (`rename_all` renames fields only) | ASCII letters, digits, `_`, `-`, `.` only, else a compile error |
///
/// # Types and serde
///
/// Field types get their schema from [`schemars`](https://docs.rs/schemars): derive
/// `Deserialize` and `schemars::JsonSchema` on enums of unit variants to make string enums
/// (`invalid_value`). Integer types carry their range (`300` for a `u8` is `too_big`).
/// schemars' Rust number formats (`uint32`, `int64`, `double`, …) are not JSON Schema formats
/// and are stripped from the schema; the range stays in `minimum` / `maximum`. Nested
/// `#[derive(ToolInput)]` structs, `Vec<T>` and `Option<T>` work, with paths such as
/// `items.0.sku`. The derive implements `schemars::JsonSchema` for the struct, so do not
/// derive it as well.
///
/// The struct derives `serde::Deserialize` itself. The serde attributes that change the JSON
/// shape are read: `rename`, `rename(deserialize = ..)`, `rename_all`, `default` (field or
/// container: the key becomes optional), `skip` / `skip_deserializing` (left out of the
/// schema). `alias`, `flatten`, `with`, `deserialize_with`, `tag`, `untagged`, `transparent`,
/// `from` and `try_from` are compile errors: the schema could not describe what serde
/// accepts. An `Option<T>` field or a field with a default is optional; every other field is
/// required.
///
/// # Example
///
/// ```
/// use fusion_runtime::ToolInput;
/// use serde::Deserialize;
///
/// fn not_weekend(days: &u32) -> Result<(), String> {
///     if *days % 7 == 0 { Err("Reminders are not sent on whole weeks".into()) } else { Ok(()) }
/// }
///
/// /// Send a payment reminder for an overdue invoice.
/// #[derive(Deserialize, ToolInput)]
/// struct SendReminder {
///     /// The invoice, e.g. inv_2026_0001.
///     #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$", expected = "an invoice ID like inv_2026_0001")]
///     invoice_id: String,
///     /// Where the reminder goes.
///     #[fusion(email)]
///     email: String,
///     #[fusion(range(min = 1), validate = not_weekend)]
///     days_overdue: u32,
/// }
///
/// let schema = SendReminder::input_schema();
/// assert_eq!(schema["additionalProperties"], false);
///
/// let report = SendReminder::from_arguments(&serde_json::json!({
///     "invoice_id": "inv_2026_0001", "email": "not-an-email", "days_overdue": 3
/// }))
/// .err()
/// .unwrap();
/// assert_eq!(
///     report.render("billing.send_reminder"),
///     "<validation_error action=\"billing.send_reminder\">
///   <field name=\"email\">Invalid email format. You sent: 'not-an-email'. Expected a valid email address.</field>
///   <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
/// </validation_error>"
/// );
/// ```
pub use fusion_macros::ToolInput;

// `#[tool_action]`, the pipeline, MCP, CLI (issue 4)
pub mod action;
pub mod cli;
pub mod mcp;
pub mod server;

pub use action::{
    ActionHints, ActionInfo, ActionLimits, IntoActionOutput, ToolAction, WithWarnings,
};
pub use auth::Principal;
pub use server::{Context, LogLevel, Server, ServerBuilder};

/// The MCP SDK Fusion speaks through, re-exported so servers and clients use the same version.
pub use rmcp;

#[doc = include_str!("../TOOL_ACTION.md")]
pub use fusion_macros::tool_action;
