//! The JSON-RPC check (`check.rs`) for a body it leaves to rmcp's parse, its only parse: a
//! 2026-07-28 request's, or a 2025 session's. The check runs only when rmcp refuses the body.

use axum::extract::Request;
use axum::http::{StatusCode, header};
use serde_json::{Value, json};

use super::super::check::JsonRpcStep;
use super::super::door::Cleared;
use super::check::{answered, check, post};
use super::through_check as guard;
use super::{Seen, canned, header_text, json_ok, read_json};
use crate::mcp::jsonrpc::Passed;

/// A POST in a 2025 session, on an endpoint that keeps sessions.
fn in_session(body: &'static str, version: Option<&str>) -> anyhow::Result<Request> {
    let mut request = post(body)?;
    let headers = request.headers_mut();
    headers.insert("mcp-session-id", header::HeaderValue::from_static("s-1"));
    if let Some(version) = version {
        headers.insert("mcp-protocol-version", version.parse()?);
    }
    Ok(request)
}

/// A POST of a 2026-07-28 request (no session).
fn modern(body: &'static str) -> anyhow::Result<Request> {
    let mut request = post(body)?;
    request.headers_mut().insert(
        "mcp-protocol-version",
        header::HeaderValue::from_static("2026-07-28"),
    );
    Ok(request)
}

/// The check of an endpoint without sessions, and of one that keeps them.
fn endpoints() -> anyhow::Result<(JsonRpcStep, JsonRpcStep)> {
    let mut stateful = check(1024)?;
    stateful.room.sessions = true;
    Ok((check(1024)?, stateful))
}

#[tokio::test]
async fn a_sessions_call_and_a_2026_request_go_to_rmcp_unprobed() -> anyhow::Result<()> {
    let (stateless, stateful) = endpoints()?;
    // Not even a malformed call is answered here: rmcp's parse reads it first (and rmcp
    // checks a 2026-07-28 request's headers before the handler answers it).
    let unusable = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#;
    let cases = [
        (&stateful, in_session(unusable, None)?, "a session's"),
        (
            &stateful,
            in_session(unusable, Some("2025-06-18"))?,
            "2025-06-18",
        ),
        (
            &stateful,
            in_session(unusable, Some("2025-11-25"))?,
            "2025-11-25",
        ),
        (
            &stateful,
            in_session(unusable, Some("2026-07-28"))?,
            "2026-07-28, a session id",
        ),
        (
            &stateful,
            modern(unusable)?,
            "2026-07-28, stateful endpoint",
        ),
        (
            &stateless,
            modern(unusable)?,
            "2026-07-28, stateless endpoint",
        ),
    ];
    for (check, request, why) in cases {
        let seen = Seen::default();
        let response = guard(
            check,
            Cleared::sessionless(),
            request,
            seen.next_routed(json_ok("{}")),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK, "{why}");
        let saw = seen.take()?;
        assert_eq!(saw.body.map_err(anyhow::Error::msg)?, unusable, "{why}");
        assert!(saw.parts.extensions.get::<Passed>().is_none(), "{why}");
    }
    // A 2025 request on an endpoint without sessions is probed as ever: the check answers it
    // itself.
    let (status, _, json) = answered(&stateless, in_session(unusable, None)?).await?;
    assert_eq!(
        (status, &json["result"]["isError"]),
        (StatusCode::OK, &json!(true))
    );
    Ok(())
}

#[tokio::test]
async fn a_body_rmcp_refuses_gets_the_checks_answer() -> anyhow::Result<()> {
    let (stateless, check) = endpoints()?;
    let refused = || {
        canned(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: fail",
        )
    };
    let cases = [
        (r#"{"id":3,"method":"ping"}"#, json!(3), -32600),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            Value::Null,
            -32600,
        ),
        ("{not json", Value::Null, -32700),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\ud800"}}"#,
            Value::Null,
            -32700,
        ),
    ];
    for (body, id, code) in cases {
        let seen = Seen::default();
        let response = guard(
            &check,
            Cleared::sessionless(),
            in_session(body, None)?,
            seen.next_routed(refused()),
        )
        .await;
        let (status, headers, json) = read_json(response).await?;
        assert!(seen.called(), "rmcp read it first: {body}");
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(header_text(&headers, "content-type"), "application/json");
        assert_eq!(
            (json["id"].clone(), json["error"]["code"].as_i64()),
            (id, Some(code)),
            "{body}"
        );
        // The answer the same body gets without a session (from the check, or after rmcp's
        // refusal), and as a 2026-07-28 request (after rmcp's refusal) on either endpoint.
        let response = guard(
            &check,
            Cleared::sessionless(),
            post(body)?,
            Seen::default().next_routed(refused()),
        )
        .await;
        let (_, _, without) = read_json(response).await?;
        assert_eq!(json, without, "{body}");
        for endpoint in [&check, &stateless] {
            let seen = Seen::default();
            let response = guard(
                endpoint,
                Cleared::sessionless(),
                modern(body)?,
                seen.next_routed(refused()),
            )
            .await;
            assert!(seen.called(), "rmcp read it first: {body}");
            let (status, _, modern) = read_json(response).await?;
            assert_eq!(
                (status, &modern),
                (StatusCode::BAD_REQUEST, &json),
                "{body}"
            );
        }
    }
    // Another refusal of rmcp's carries the request's id, read only now.
    let seen = Seen::default();
    let body = r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#;
    let gone = canned(StatusCode::NOT_FOUND, "Not Found: Session not found");
    let (status, _, json) = read_json(
        guard(
            &check,
            Cleared::sessionless(),
            in_session(body, None)?,
            seen.next_routed(gone),
        )
        .await,
    )
    .await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(json["id"], json!("x"), "{json}");
    Ok(())
}
