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

pub mod client;
pub mod envelope;
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
pub use fusion_macros::ToolInput;

// `#[tool_action]`, the pipeline, MCP, CLI (issue 4)
pub mod action;
pub mod cli;
pub mod mcp;
pub mod server;

pub use action::{ActionHints, ActionInfo, IntoActionOutput, ToolAction, WithWarnings};
pub use server::{Context, Server, ServerBuilder};

/// The MCP SDK Fusion speaks through, re-exported so servers and clients use the same version.
pub use rmcp;

#[doc = include_str!("../TOOL_ACTION.md")]
pub use fusion_macros::tool_action;
