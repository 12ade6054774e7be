//! The framework's own JSON-RPC answers: the error codes it uses and [`Reply`].

use std::borrow::Cow;

use serde_json::Value;

/// JSON-RPC `Parse error`.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC `Invalid Request`.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC `Invalid params`.
pub const INVALID_PARAMS: i64 = -32602;

/// An answer the framework gives itself, without rmcp.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reply {
    /// A JSON-RPC error; `id` is `null` when none could be read.
    Error {
        id: Value,
        code: i64,
        message: Cow<'static, str>,
    },
    /// A `tools/call` answered with an `isError` result carrying an envelope.
    ToolResult { id: Value, result: Value },
}

impl Reply {
    pub(crate) fn error(id: Value, code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        Reply::Error {
            id,
            code,
            message: message.into(),
        }
    }

    /// The answer as one line of JSON (no trailing newline).
    pub(crate) fn to_json(&self) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Answer<'a> {
            jsonrpc: &'static str,
            id: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<ErrorObject<'a>>,
        }
        #[derive(serde::Serialize)]
        struct ErrorObject<'a> {
            code: i64,
            message: &'a str,
        }
        let answer = match self {
            Reply::Error { id, code, message } => Answer {
                jsonrpc: "2.0",
                id,
                result: None,
                error: Some(ErrorObject {
                    code: *code,
                    message,
                }),
            },
            Reply::ToolResult { id, result } => Answer {
                jsonrpc: "2.0",
                id,
                result: Some(result),
                error: None,
            },
        };
        serde_json::to_vec(&answer).unwrap_or_default()
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
    Reply::error(Value::Null, PARSE_ERROR, format!("Parse error: {e}"))
}
