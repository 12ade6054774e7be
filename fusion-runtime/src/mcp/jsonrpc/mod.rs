//! What the framework answers itself, before rmcp sees a message: bytes that are not JSON,
//! JSON that is not a JSON-RPC message, batches, and `tools/call` requests whose `name` or
//! `arguments` cannot be used. Shared by the stdio and HTTP transports.
//!
//! The check is one pass over the bytes that allocates nothing for a valid message (strings
//! are borrowed, nested values skipped) yet validates everything `serde_json` would: syntax,
//! nesting depth, lone surrogates.
//!
//! | file | holds |
//! |---|---|
//! | `reply.rs` | `Reply`, the framework's own answers, in rmcp's types |
//! | `probe.rs` | the one-pass probe of a message's bytes, its verdict and what it passes on |
//! | `plain.rs` | `plain_call`: HTTP's hot path, a plain `tools/call` read by `serde`'s derive (the `PlainCall` the framework answers without rmcp) |
//! | `check.rs` | the per-transport checks: `read_line` (stdio), `check_body` (HTTP), and `unusable_call` (a session's call rmcp read as a custom request) |

mod check;
#[cfg(feature = "server-http")]
mod plain;
mod probe;
mod reply;
#[cfg(test)]
mod tests;

#[cfg(feature = "server-stdio")]
pub(crate) use check::{Refusal, read_line};
#[cfg(feature = "server-http")]
pub(crate) use check::{check_body, refused_by_rmcp};
#[cfg(feature = "server-http")]
pub(crate) use check::{cursor_not_a_string, unusable_call};
#[cfg(feature = "server-http")]
pub(crate) use plain::{PlainCall, modern_call, plain_call};
#[cfg(feature = "server-http")]
pub(crate) use probe::Passed;
pub(crate) use reply::Reply;
pub use reply::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};
#[cfg(feature = "server-http")]
pub(crate) use reply::{SERVER_ERROR, request_id};
