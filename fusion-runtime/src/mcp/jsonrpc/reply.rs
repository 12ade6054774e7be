//! The framework's own JSON-RPC answers, in rmcp's types: an error is rmcp's [`ErrorData`]
//! (with its [`ErrorCode`]s), a malformed `tools/call`'s answer rmcp's [`CallToolResult`],
//! an id rmcp's [`RequestId`]. Only the message around them is written here: rmcp's
//! `JsonRpcError` leaves out an id it could not read (2026-07-28's rule), where JSON-RPC 2.0
//! and the 2025 revisions want `"id": null`, which every revision accepts.

use std::borrow::Cow;

use rmcp::model::{CallToolResult, ErrorCode, ErrorData, RequestId};
#[cfg(feature = "server-http")]
use serde_json::Value;

/// JSON-RPC `Parse error` (rmcp's [`ErrorCode::PARSE_ERROR`]).
pub const PARSE_ERROR: i64 = ErrorCode::PARSE_ERROR.0 as i64;
/// JSON-RPC `Invalid Request` (rmcp's [`ErrorCode::INVALID_REQUEST`]).
pub const INVALID_REQUEST: i64 = ErrorCode::INVALID_REQUEST.0 as i64;
/// JSON-RPC `Invalid params` (rmcp's [`ErrorCode::INVALID_PARAMS`]).
pub const INVALID_PARAMS: i64 = ErrorCode::INVALID_PARAMS.0 as i64;

/// JSON-RPC's implementation-defined server error, for transport refusals (a full server, a
/// status rmcp answered in plain text).
#[cfg(feature = "server-http")]
pub(crate) const SERVER_ERROR: ErrorCode = ErrorCode(-32000);

/// An answer the framework gives itself, without rmcp.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reply {
    /// A JSON-RPC error; `id` is `None` (sent as `null`) when none could be read.
    Error {
        id: Option<RequestId>,
        error: ErrorData,
    },
    /// A `tools/call` answered with an `isError` result carrying an envelope.
    ToolResult {
        id: RequestId,
        result: Box<CallToolResult>,
    },
}

impl Reply {
    pub(crate) fn error(
        id: Option<RequestId>,
        code: ErrorCode,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Reply::Error {
            id,
            error: ErrorData::new(code, message, None),
        }
    }

    /// An error with `data` (the versions a server speaks, say).
    #[cfg(feature = "server-http")]
    pub(crate) fn error_with_data(
        id: Option<RequestId>,
        code: ErrorCode,
        message: impl Into<Cow<'static, str>>,
        data: Value,
    ) -> Self {
        Reply::Error {
            id,
            error: ErrorData::new(code, message, Some(data)),
        }
    }

    /// The answer as one line of JSON (no trailing newline).
    pub(crate) fn to_json(&self) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Message<'a> {
            jsonrpc: &'static str,
            /// `null` when unread (not left out: see the module's documentation).
            id: Option<&'a RequestId>,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a CallToolResult>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a ErrorData>,
        }
        let message = match self {
            Reply::Error { id, error } => Message {
                jsonrpc: "2.0",
                id: id.as_ref(),
                result: None,
                error: Some(error),
            },
            Reply::ToolResult { id, result } => Message {
                jsonrpc: "2.0",
                id: Some(id),
                result: Some(result),
                error: None,
            },
        };
        serde_json::to_vec(&message).unwrap_or_default()
    }

    /// Whether it is a JSON-RPC error (HTTP answers it with status 400).
    #[cfg(feature = "server-http")]
    pub(crate) fn is_error(&self) -> bool {
        matches!(self, Reply::Error { .. })
    }
}

/// The `-32700` answer to bytes `serde_json` cannot parse.
pub(crate) fn parse_error(e: &serde_json::Error) -> Reply {
    tracing::debug!(error = %e, "unparsable message");
    Reply::error(None, ErrorCode::PARSE_ERROR, format!("Parse error: {e}"))
}

/// The id of a JSON value, as rmcp reads one: a string or an integer.
#[cfg(feature = "server-http")]
pub(crate) fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(s) => Some(RequestId::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}
