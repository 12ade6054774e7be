//! The JSON-RPC check (`check.rs`): the one bounded read of a JSON POST's body, the
//! framework's own answers, and rmcp's plain-text errors rewritten as JSON-RPC.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use serde_json::{Value, json};

use super::super::check::JsonRpcStep;
use super::super::door::Cleared;
use super::through_check as guard;
use super::{Seen, canned, header_text, json_ok, read, read_json, streamed_body};
use crate::mcp::jsonrpc::Passed;

const ACCEPT: &str = "application/json, text/event-stream";

pub(super) fn check(max_body_bytes: usize) -> anyhow::Result<JsonRpcStep> {
    Ok(JsonRpcStep {
        server: crate::Server::builder().build()?,
        max_body_bytes,
        room: super::super::room::RoomRoute {
            on: false,
            sessions: false,
            live: None,
        },
        tasks: false,
    })
}

/// A JSON POST with the headers rmcp reads (`Accept` both types, `Host`).
pub(super) fn post(body: impl Into<Body>) -> anyhow::Result<Request> {
    Ok(Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, ACCEPT)
        .body(body.into())?)
}

pub(super) fn json_error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The check's own answer to `request`: `next` never ran. Its status, headers and JSON.
pub(super) async fn answered(
    check: &JsonRpcStep,
    request: Request,
) -> anyhow::Result<(StatusCode, axum::http::HeaderMap, Value)> {
    let seen = Seen::default();
    let answer = read_json(
        guard(
            check,
            Cleared::sessionless(),
            request,
            seen.next_routed(json_ok("{}")),
        )
        .await,
    )
    .await?;
    assert!(!seen.called(), "the check answered itself");
    Ok(answer)
}

#[tokio::test]
async fn a_request_other_than_a_json_post_reaches_next_unread() -> anyhow::Result<()> {
    let check = check(1024)?;
    let get = Request::builder()
        .method(Method::GET)
        .uri("/mcp")
        .header(header::ACCEPT, "text/event-stream")
        .body(Body::from("not json {"))?;
    let text_post = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header(header::CONTENT_TYPE, "text/plain")
        .header(header::ACCEPT, ACCEPT)
        .body(Body::from("not json {"))?;
    for request in [get, text_post] {
        let method = request.method().clone();
        let seen = Seen::default();
        let response = guard(
            &check,
            Cleared::sessionless(),
            request,
            seen.next_routed(json_ok("{}")),
        )
        .await;
        let (status, _, body) = read(response).await?;
        assert_eq!(
            (status, &body[..]),
            (StatusCode::OK, &b"{}"[..]),
            "{method}"
        );
        let saw = seen.take()?;
        assert_eq!(saw.body.map_err(anyhow::Error::msg)?, "not json {");
        assert!(saw.parts.extensions.get::<Passed>().is_none(), "{method}");
    }
    Ok(())
}

#[tokio::test]
async fn a_body_over_the_cap_is_413_by_its_length_or_streamed() -> anyhow::Result<()> {
    let check = check(16)?;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut declared = post(body)?;
    declared
        .headers_mut()
        .insert(header::CONTENT_LENGTH, body.len().into());
    let streamed = post(streamed_body(&[
        "{\"jsonrpc\":",
        "\"2.0\",\"id\":1,",
        "\"method\":\"ping\"}",
    ]))?;
    for (how, request) in [("by its length", declared), ("streamed", streamed)] {
        let (status, headers, json) = answered(&check, request).await?;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{how}");
        assert_eq!(header_text(&headers, "content-type"), "application/json");
        assert_eq!(
            json,
            json_error(
                Value::Null,
                -32600,
                "Invalid Request: the body exceeds 16 bytes"
            ),
            "{how}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_body_at_the_cap_passes() -> anyhow::Result<()> {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let check = check(body.len())?;
    let seen = Seen::default();
    let response = guard(
        &check,
        Cleared::sessionless(),
        post(streamed_body(&[body]))?,
        seen.next_routed(json_ok("{}")),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(seen.take()?.body.map_err(anyhow::Error::msg)?, body);
    Ok(())
}

#[tokio::test]
async fn an_oversized_body_with_headers_rmcp_refuses_goes_on_to_rmcp() -> anyhow::Result<()> {
    // rmcp refuses it for its `Accept` (406) before reading a body: the check leaves it
    // that answer, rewritten as JSON-RPC.
    let check = check(16)?;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut request = post(body)?;
    request.headers_mut().insert(
        header::ACCEPT,
        header::HeaderValue::from_static("application/json"),
    );
    let seen = Seen::default();
    let response = guard(
        &check,
        Cleared::sessionless(),
        request,
        seen.next_routed(canned(StatusCode::NOT_ACCEPTABLE, "Not Acceptable")),
    )
    .await;
    let (status, _, json) = read_json(response).await?;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(json, json_error(Value::Null, -32000, "Not Acceptable"));
    assert_eq!(seen.take()?.body.map_err(anyhow::Error::msg)?, body);
    Ok(())
}

#[tokio::test]
async fn a_body_that_is_not_json_is_a_400_parse_error() -> anyhow::Result<()> {
    let check = check(1024)?;
    let (status, headers, json) = answered(&check, post("{\"jsonrpc\": nope")?).await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(header_text(&headers, "content-type"), "application/json");
    assert_eq!(json["jsonrpc"], "2.0");
    assert_eq!(json["id"], Value::Null);
    assert_eq!(json["error"]["code"], -32700);
    let message = json["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("Parse error: "), "{message}");
    Ok(())
}

#[tokio::test]
async fn a_batch_is_400() -> anyhow::Result<()> {
    let check = check(1024)?;
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
    let (status, _, json) = answered(&check, post(batch)?).await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        json,
        json_error(
            Value::Null,
            -32600,
            "Invalid Request: batches are not supported (MCP 2025-06-18 removed them)"
        )
    );
    Ok(())
}

#[tokio::test]
async fn a_tools_call_with_arguments_not_an_object_is_a_200_is_error_result() -> anyhow::Result<()>
{
    let check = check(1024)?;
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":[1,2]}}"#;
    let (status, headers, json) = answered(&check, post(call)?).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header_text(&headers, "content-type"), "application/json");
    assert_eq!(json["jsonrpc"], "2.0");
    assert_eq!(json["id"], 3);
    assert!(json.get("error").is_none(), "{json}");
    assert_eq!(json["result"]["isError"], true, "{json}");
    let content = json["result"]["content"].as_array().map_or(0, Vec::len);
    assert!(content > 0, "an envelope to read: {json}");
    Ok(())
}

#[tokio::test]
async fn a_protocol_version_the_server_does_not_speak_is_400_with_the_supported_ones()
-> anyhow::Result<()> {
    let check = check(1024)?;
    let supported = serde_json::to_value(rmcp::model::ProtocolVersion::KNOWN_VERSIONS)?;
    assert!(supported.as_array().is_some_and(|v| !v.is_empty()));
    let expected = |id: Value| {
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"requested": "1999-01-01", "supported": supported},
            },
        })
    };

    // A JSON POST: the refusal carries the request's id.
    let mut request = post(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#)?;
    request.headers_mut().insert(
        "mcp-protocol-version",
        header::HeaderValue::from_static("1999-01-01"),
    );
    let seen = Seen::default();
    let response = guard(
        &check,
        Cleared::sessionless(),
        request,
        seen.next_routed(json_ok("{}")),
    )
    .await;
    let (status, _, json) = read_json(response).await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(json, expected(json!(9)));
    assert!(!seen.called());

    // A GET (no body read): the same refusal, id null.
    let get = Request::builder()
        .method(Method::GET)
        .uri("/mcp")
        .header("mcp-protocol-version", "1999-01-01")
        .body(Body::empty())?;
    let seen = Seen::default();
    let (status, _, json) = read_json(
        guard(
            &check,
            Cleared::sessionless(),
            get,
            seen.next_routed(json_ok("{}")),
        )
        .await,
    )
    .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(json, expected(Value::Null));
    assert!(!seen.called());

    // A version it speaks passes.
    let mut request = post(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#)?;
    request.headers_mut().insert(
        "mcp-protocol-version",
        header::HeaderValue::from_static("2025-06-18"),
    );
    let seen = Seen::default();
    let response = guard(
        &check,
        Cleared::sessionless(),
        request,
        seen.next_routed(json_ok("{}")),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(seen.called());
    Ok(())
}

#[tokio::test]
async fn a_valid_body_reaches_next_byte_identical_with_what_passed() -> anyhow::Result<()> {
    let check = check(1024)?;
    let cases = [
        (
            "{ \"jsonrpc\" : \"2.0\",\n \"id\":\"a1\", \"method\":\"ping\" }",
            Passed {
                id: Some(rmcp::model::RequestId::String("a1".into())),
                cancels: false,
            },
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
            Passed {
                id: None,
                cancels: true,
            },
        ),
    ];
    for (body, passed) in cases {
        let seen = Seen::default();
        let response = guard(
            &check,
            Cleared::sessionless(),
            post(body)?,
            seen.next_routed(json_ok(r#"{"answer":1}"#)),
        )
        .await;
        let (status, _, answer) = read(response).await?;
        assert_eq!(
            (status, &answer[..]),
            (StatusCode::OK, &br#"{"answer":1}"#[..]),
            "next's answer unchanged"
        );
        let saw = seen.take()?;
        assert_eq!(saw.body.map_err(anyhow::Error::msg)?, body);
        assert_eq!(saw.parts.extensions.get::<Passed>(), Some(&passed));
    }
    Ok(())
}

#[tokio::test]
async fn a_plain_text_error_from_next_becomes_a_json_rpc_error_with_the_request_id()
-> anyhow::Result<()> {
    let check = check(1024)?;
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#;
    let cases = [
        (
            StatusCode::NOT_FOUND,
            "Not Found: Session not found",
            StatusCode::NOT_FOUND,
            -32000,
        ),
        (
            StatusCode::BAD_REQUEST,
            "Bad Request: no session",
            StatusCode::BAD_REQUEST,
            -32600,
        ),
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "Payload Too Large",
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
        ),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error",
            StatusCode::INTERNAL_SERVER_ERROR,
            -32000,
        ),
    ];
    for (from, text, status_after, code) in cases {
        let mut plain = canned(from, text);
        plain
            .headers_mut()
            .insert(header::CONTENT_LENGTH, text.len().into());
        let response = guard(
            &check,
            Cleared::sessionless(),
            post(body)?,
            Seen::default().next_routed(plain),
        )
        .await;
        let (status, headers, json) = read_json(response).await?;
        assert_eq!(status, status_after, "{from}");
        assert_eq!(header_text(&headers, "content-type"), "application/json");
        assert_eq!(json, json_error(json!(5), code, text), "{from}");
    }

    // A JSON error from next, and a success, pass unchanged.
    let mut answer = json_ok(r#"{"already":"json"}"#);
    *answer.status_mut() = StatusCode::CONFLICT;
    let response = guard(
        &check,
        Cleared::sessionless(),
        post(body)?,
        Seen::default().next_routed(answer),
    )
    .await;
    let (status, _, bytes) = read(response).await?;
    assert_eq!(
        (status, &bytes[..]),
        (StatusCode::CONFLICT, &br#"{"already":"json"}"#[..])
    );
    let response = guard(
        &check,
        Cleared::sessionless(),
        post(body)?,
        Seen::default().next_routed(canned(StatusCode::ACCEPTED, "")),
    )
    .await;
    let (status, _, bytes) = read(response).await?;
    assert_eq!((status, bytes.len()), (StatusCode::ACCEPTED, 0));
    Ok(())
}

#[tokio::test]
async fn a_415_from_next_for_a_json_body_becomes_400() -> anyhow::Result<()> {
    // rmcp answers 415 when it cannot read a body the check passed: the same failure
    // the check answers 400 for.
    let check = check(1024)?;
    let body = r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#;
    let response = guard(
        &check,
        Cleared::sessionless(),
        post(body)?,
        Seen::default().next_routed(canned(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: bad body",
        )),
    )
    .await;
    let (status, _, json) = read_json(response).await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        json,
        json_error(json!(6), -32600, "Unsupported Media Type: bad body")
    );
    Ok(())
}
