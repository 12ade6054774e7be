//! The plain call answered without rmcp (the `room`): which requests the check routes
//! there, and its answer beside rmcp's own for the same call.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use serde_json::Value;

use super::super::check::JsonRpcStep;
use super::super::door::Cleared;
use super::super::front::http_router;
use super::super::options::HttpOptions;
use super::super::room::{Plain, PlainKind, legacy_headers_pass as headers_pass};
use super::through_check as guard;
use super::{Seen, header_text, json_ok, read};

const PLAIN: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"billing.nothing","arguments":{"a":[1,"b"]}}}"#;

/// The headers a 2025 streamable HTTP client sends on a stateless call.
fn client_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::HOST, HeaderValue::from_static("localhost:8080"));
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        "mcp-protocol-version",
        HeaderValue::from_static("2025-06-18"),
    );
    headers
}

fn post(headers: &HeaderMap, body: &'static str) -> anyhow::Result<Request> {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .body(Body::from(body))?;
    *request.headers_mut() = headers.clone();
    Ok(request)
}

#[test]
fn only_headers_rmcp_takes_straight_to_its_handler_pass() {
    // (Their `Host` is the door's: `headers::tests`.)
    let base = client_headers();
    assert!(headers_pass(&base, false));
    let mut newer_2025 = base.clone();
    newer_2025.insert(
        "mcp-protocol-version",
        HeaderValue::from_static("2025-11-25"),
    );
    assert!(headers_pass(&newer_2025, false));

    let with = |name: &'static str, value: &'static str| {
        let mut headers = base.clone();
        headers.insert(name, HeaderValue::from_static(value));
        headers
    };
    let without = |name: &'static str| {
        let mut headers = base.clone();
        headers.remove(name);
        headers
    };
    let mut two_versions = base.clone();
    two_versions.append(
        "mcp-protocol-version",
        HeaderValue::from_static("2025-06-18"),
    );
    let refused = [
        ("an Origin", with("origin", "http://localhost:8080")),
        ("a session", with("mcp-session-id", "s")),
        (
            "a 2026-07-28 version",
            with("mcp-protocol-version", "2026-07-28"),
        ),
        (
            "an unknown version",
            with("mcp-protocol-version", "2024-01-01"),
        ),
        ("no version", without("mcp-protocol-version")),
        ("two versions", two_versions),
        (
            "a weighted Accept",
            with("accept", "application/json;q=0, text/event-stream"),
        ),
        ("an Accept without SSE", with("accept", "application/json")),
    ];
    for (what, headers) in &refused {
        assert!(!headers_pass(headers, false), "{what}");
    }
    // A live session's call: the same headers, with one session id.
    let session = with("mcp-session-id", "s");
    assert!(headers_pass(&session, true));
    assert!(!headers_pass(&base, true), "no session");
    let mut two_sessions = session.clone();
    two_sessions.append("mcp-session-id", HeaderValue::from_static("t"));
    assert!(!headers_pass(&two_sessions, true), "two sessions");
    let mut session_origin = session.clone();
    session_origin.insert("origin", HeaderValue::from_static("http://localhost:8080"));
    assert!(!headers_pass(&session_origin, true), "an Origin");
}

/// What the check passes on for `body` with `headers`: whether it routed it to the room.
async fn marked(
    plain_calls: bool,
    headers: &HeaderMap,
    body: &'static str,
) -> anyhow::Result<bool> {
    Ok(routed(plain_calls, headers, body).await?.is_some())
}

/// The [`Plain`] call the check routed `body` with `headers` as, if it routed it to the room.
async fn routed(
    plain_calls: bool,
    headers: &HeaderMap,
    body: &'static str,
) -> anyhow::Result<Option<Plain>> {
    let check = JsonRpcStep {
        server: crate::Server::builder().build()?,
        max_body_bytes: 4096,
        room: super::super::room::RoomRoute {
            on: plain_calls,
            sessions: false,
            live: None,
        },
        tasks: false,
    };
    let seen = Seen::default();
    let response = guard(
        &check,
        Cleared::sessionless(),
        post(headers, body)?,
        seen.next_routed(json_ok("{}")),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let saw = seen.take()?;
    if let Some(plain) = &saw.plain {
        assert_eq!(
            &plain.bytes[..],
            body.as_bytes(),
            "the body read once, kept"
        );
        assert_eq!(&body[plain.call.name.clone()], "billing.nothing");
    }
    Ok(saw.plain)
}

const MODERN: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"billing.nothing","arguments":{"a":[1,"b"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// The headers a 2026-07-28 client sends on a call of `billing.nothing`.
fn modern_headers() -> HeaderMap {
    let mut headers = client_headers();
    headers.insert(
        "mcp-protocol-version",
        HeaderValue::from_static("2026-07-28"),
    );
    headers.insert("mcp-method", HeaderValue::from_static("tools/call"));
    headers.insert("mcp-name", HeaderValue::from_static("billing.nothing"));
    headers
}

#[tokio::test]
async fn the_check_routes_a_plain_2026_call_whose_standard_headers_say_what_its_body_says()
-> anyhow::Result<()> {
    let headers = modern_headers();
    let plain = routed(true, &headers, MODERN).await?;
    let Some(plain) = plain else {
        panic!("a plain 2026-07-28 call was not routed to the room");
    };
    assert!(matches!(plain.kind, PlainKind::Modern), "{:?}", plain.kind);
    let meta = plain.call.meta.clone().unwrap_or_default();
    assert!(MODERN[meta].starts_with(r#"{"io.modelcontextprotocol/protocolVersion""#));
    assert!(!marked(false, &headers, MODERN).await?, "the room off");
    let edits: [(&str, &str, Option<&'static str>); 7] = [
        ("no Mcp-Method", "mcp-method", None),
        ("another method", "mcp-method", Some("tools/list")),
        ("no Mcp-Name", "mcp-name", None),
        ("another tool", "mcp-name", Some("billing.other")),
        (
            "a Base64-wrapped name",
            "mcp-name",
            Some("=?base64?YmlsbGluZy5ub3RoaW5n?="),
        ),
        ("an Mcp-Param-*", "mcp-param-id", Some("x")),
        ("an Origin", "origin", Some("http://localhost")),
    ];
    for (what, name, value) in edits {
        let mut edited = headers.clone();
        match value {
            Some(v) => {
                edited.insert(name, HeaderValue::from_static(v));
            }
            None => {
                edited.remove(name);
            }
        }
        assert!(!marked(true, &edited, MODERN).await?, "{what}");
    }
    let mut twice = headers.clone();
    twice.append("mcp-name", HeaderValue::from_static("billing.nothing"));
    assert!(!marked(true, &twice, MODERN).await?, "Mcp-Name twice");
    let with_state = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"billing.nothing","_meta":{},"requestState":"x"}}"#;
    assert!(
        !marked(true, &headers, with_state).await?,
        "a retry's state"
    );
    let without_meta =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"billing.nothing"}}"#;
    assert!(!marked(true, &headers, without_meta).await?, "no _meta");
    Ok(())
}

#[tokio::test]
async fn the_check_marks_a_plain_call_with_plain_headers_on_a_server_that_allows_it()
-> anyhow::Result<()> {
    let headers = client_headers();
    assert!(marked(true, &headers, PLAIN).await?);
    assert!(!marked(false, &headers, PLAIN).await?, "a stateful server");
    let mut origin = headers.clone();
    origin.insert(header::ORIGIN, HeaderValue::from_static("http://localhost"));
    assert!(!marked(true, &origin, PLAIN).await?, "an Origin");
    let with_meta = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"billing.nothing","arguments":{},"_meta":{"progressToken":1}}}"#;
    assert!(!marked(true, &headers, with_meta).await?, "a _meta");
    Ok(())
}

/// The answer of the stateless endpoint to `body`, through the whole chain.
async fn answer(
    app: &mut axum::Router,
    body: &'static str,
) -> anyhow::Result<(StatusCode, String, axum::body::Bytes)> {
    let mut request = post(&client_headers(), body)?;
    request.extensions_mut().insert(axum::extract::ConnectInfo(
        "127.0.0.1:4000".parse::<std::net::SocketAddr>()?,
    ));
    std::future::poll_fn(|cx| tower_service::Service::<Request>::poll_ready(app, cx)).await?;
    let call = tower_service::Service::<Request>::call(app, request);
    let response = tokio::time::timeout(std::time::Duration::from_secs(10), call).await??;
    let (status, headers, bytes) = read(response).await?;
    Ok((
        status,
        header_text(&headers, "content-type").to_owned(),
        bytes,
    ))
}

/// The same call, plain (answered without rmcp) and with an empty `_meta` (which makes it
/// rmcp's): the same status, type and message, byte for byte.
#[tokio::test]
async fn a_plain_call_is_answered_as_rmcp_answers_it() -> anyhow::Result<()> {
    let mut app = http_router(
        crate::Server::builder().build()?,
        &HttpOptions::default().stateless(true),
    );
    let pairs = [
        (
            PLAIN,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"billing.nothing","arguments":{"a":[1,"b"]},"_meta":{}}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"billing.nothing"}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"_meta":{},"name":"billing.nothing"}}"#,
        ),
    ];
    for (plain, by_rmcp) in pairs {
        let ours = answer(&mut app, plain).await?;
        let rmcps = answer(&mut app, by_rmcp).await?;
        assert_eq!(ours.0, StatusCode::OK);
        assert_eq!(ours.1, "application/json");
        let message: Value = serde_json::from_slice(&ours.2)?;
        assert_eq!(message["result"]["isError"], true, "{message}");
        assert_eq!(ours, rmcps, "{plain}");
    }
    Ok(())
}
