//! rmcp's refusals as the framework writes them: a plain-text error of rmcp's (`406`, `415`,
//! `413`, `404`, `405`, `403`, …) keeps its status and gets a JSON-RPC error body, with the
//! id of the request when its body was read. The JSON-RPC step ([`check`](super::check))
//! rewrites rmcp's answers so; the door ([`door`](super::door)) writes its refusals as rmcp's
//! and rewrites them the same way, so a fault gets one answer whichever step finds it.
//!
//! Reads: a response, what was read of its request ([`Read`]). Writes: the response rewritten.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{ErrorCode, RequestId};
use serde_json::Value;

use super::headers::is_json;
use crate::http::body::read_bounded;
use crate::mcp::jsonrpc::{self, Reply, SERVER_ERROR, request_id};
use crate::server::Server;

/// The longest plain-text error body of rmcp's rewritten into JSON.
pub(super) const MAX_PLAIN_ERROR_BYTES: usize = 16 * 1024;

/// What the check read of a request it passed on.
pub(crate) enum Read {
    /// Nothing: not a JSON POST, or one rmcp refuses for its headers.
    Unread,
    /// The body, probed: the id an error answer about it carries, and its bytes.
    Probed { id: Option<RequestId>, bytes: Bytes },
    /// A body left to rmcp's parse (its only parse): a 2026-07-28 request's, or a 2025
    /// session's. Its id is read, and the check run, only when rmcp refuses it. What rmcp
    /// reads and the check would have answered — a `tools/call` with unusable params —
    /// reaches the handler as a custom request, answered there as the check answers it,
    /// after rmcp's own checks of the request (a 2026-07-28 request's standard headers).
    Unprobed { bytes: Bytes },
}

impl Read {
    pub(super) fn bytes(&self) -> Option<&Bytes> {
        match self {
            Read::Unread => None,
            Read::Probed { bytes, .. } | Read::Unprobed { bytes } => Some(bytes),
        }
    }
}

/// The framework's answer with its status: `400` for an error, `200` for a result.
pub(super) fn answer_with_status(answer: &Reply) -> Response {
    let status = if answer.is_error() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    reply(status, answer)
}

/// `413` with a JSON-RPC error: a body past `max` bytes.
pub(super) fn too_large(max: usize) -> Response {
    reply(
        StatusCode::PAYLOAD_TOO_LARGE,
        &Reply::error(
            None,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: the body exceeds {max} bytes"),
        ),
    )
}

/// `408`, in plain text, and the connection closed: a body that did not arrive in time.
pub(super) fn body_timed_out() -> Response {
    let mut response = Response::new(Body::from(
        "Request Timeout: the body was not received in time",
    ));
    *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

pub(super) fn reply(status: StatusCode, answer: &Reply) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        answer.to_json(),
    )
        .into_response()
}

/// rmcp's plain-text errors as JSON-RPC errors, status kept; a body rmcp could not read
/// (it answers `415` for it) becomes `400`, as the checks above answer the same failures —
/// with the check's own `Parse error` when `serde_json` refuses it, and for a body the check
/// left to rmcp's parse, the check's answer (rmcp refused it before its own header checks, and
/// the framework answers it as it answers such a body of any version).
pub(super) async fn json_errors(response: Response, read: Read, server: &Server) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(response.headers()) {
        return response;
    }
    let (id, passed) = match read {
        Read::Unread => (None, None),
        Read::Probed { id, bytes } => (id, Some(bytes)),
        Read::Unprobed { bytes } => {
            if status == StatusCode::UNSUPPORTED_MEDIA_TYPE
                && let Err(answer) = jsonrpc::check_body(&bytes, server)
            {
                return answer_with_status(&answer);
            }
            let id = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|m| m.get("id").and_then(request_id));
            (id, Some(bytes))
        }
    };
    if status == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && let Some(answer) = passed.as_deref().and_then(jsonrpc::refused_by_rmcp)
    {
        return reply(StatusCode::BAD_REQUEST, &answer);
    }
    let body_was_json = passed.is_some();
    let (mut parts, body) = response.into_parts();
    let text = match read_bounded(body, MAX_PLAIN_ERROR_BYTES).await {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => status.canonical_reason().unwrap_or("error").to_owned(),
    };
    let (status, code) = match status {
        StatusCode::UNSUPPORTED_MEDIA_TYPE if body_was_json => {
            (StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST)
        }
        StatusCode::BAD_REQUEST | StatusCode::PAYLOAD_TOO_LARGE => {
            (status, ErrorCode::INVALID_REQUEST)
        }
        _ => (status, SERVER_ERROR),
    };
    parts.status = status;
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let body = Reply::error(id, code, text).to_json();
    Response::from_parts(parts, Body::from(body))
}
