//! The whole endpoint: `http_router` (the endpoint's paths routed to an `HttpHandler`, whose
//! `Endpoint` runs the steps in front of rmcp) called through `tower_service::Service::call`;
//! and the handler a listener serves, which answers only the endpoint's path.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use serde_json::json;

use super::super::front::http_router;
use super::super::options::HttpOptions;
use super::{header_text, read, read_json};

const A: &str = "127.0.0.1:4000";
const B: &str = "127.0.0.2:4000";

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"steps","version":"1"}}}"#;

fn app(options: &HttpOptions) -> anyhow::Result<axum::Router> {
    Ok(http_router(crate::Server::builder().build()?, options))
}

/// A request from `peer` as the accept loop hands it over (its `ConnectInfo`), with the
/// headers a streamable HTTP client sends.
fn request(
    method: Method,
    peer: &str,
    session: Option<&str>,
    body: &'static str,
) -> anyhow::Result<Request> {
    let mut builder = Request::builder()
        .method(method)
        .uri("/mcp")
        .header(header::HOST, "localhost")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(session) = session {
        builder = builder
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18");
    }
    let mut request = builder.body(Body::from(body))?;
    request
        .extensions_mut()
        .insert(ConnectInfo(peer.parse::<SocketAddr>()?));
    Ok(request)
}

async fn call(app: &mut axum::Router, request: Request) -> anyhow::Result<Response> {
    std::future::poll_fn(|cx| tower_service::Service::<Request>::poll_ready(app, cx)).await?;
    let call = tower_service::Service::<Request>::call(app, request);
    Ok(tokio::time::timeout(Duration::from_secs(10), call).await??)
}

/// Opens a session for `peer`: its id.
async fn initialize(app: &mut axum::Router, peer: &str) -> anyhow::Result<String> {
    let response = call(app, request(Method::POST, peer, None, INITIALIZE)?).await?;
    anyhow::ensure!(
        response.status() == StatusCode::OK,
        "initialize: {}",
        response.status()
    );
    let id = header_text(response.headers(), "mcp-session-id").to_owned();
    anyhow::ensure!(!id.is_empty(), "no session id");
    Ok(id)
}

#[tokio::test]
async fn a_session_is_its_owners_alone_and_closes_with_200() -> anyhow::Result<()> {
    let mut app = app(&HttpOptions::default())?;
    let id = initialize(&mut app, A).await?;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

    // Another client naming it: rmcp's unknown session, as JSON-RPC.
    let response = call(&mut app, request(Method::POST, B, Some(&id), list)?).await?;
    let (status, _, json) = read_json(response).await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        json,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "Not Found: Session not found"}})
    );

    // Another client deleting it: the same 404 (no body, so no id), and the session lives on.
    let response = call(&mut app, request(Method::DELETE, B, Some(&id), "")?).await?;
    let (status, _, json) = read_json(response).await?;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        json,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Not Found: Session not found"}})
    );

    // Its owner deleting it: 200 (rmcp's 202), then it is gone.
    let response = call(&mut app, request(Method::DELETE, A, Some(&id), "")?).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let response = call(&mut app, request(Method::DELETE, A, Some(&id), "")?).await?;
    assert_eq!(response.status(), StatusCode::NOT_FOUND, "already closed");
    Ok(())
}

#[tokio::test]
async fn new_sessions_past_the_caps_are_503_and_429() -> anyhow::Result<()> {
    let mut app = app(&HttpOptions::default().max_sessions(1))?;
    initialize(&mut app, A).await?;
    let response = call(&mut app, request(Method::POST, B, None, INITIALIZE)?).await?;
    let (status, headers, json) = read_json(response).await?;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(header_text(&headers, "retry-after"), "30");
    assert_eq!(json["error"]["code"], -32000);

    let mut app = self::app(&HttpOptions::default().max_sessions_per_client(1))?;
    initialize(&mut app, A).await?;
    let response = call(&mut app, request(Method::POST, A, None, INITIALIZE)?).await?;
    let (status, headers, json) = read_json(response).await?;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(header_text(&headers, "retry-after"), "30");
    assert_eq!(json["error"]["code"], -32000);
    initialize(&mut app, B).await?;
    Ok(())
}

#[tokio::test]
async fn the_framework_answers_before_rmcp() -> anyhow::Result<()> {
    let mut app = app(&HttpOptions::default().stateless(true).max_body_bytes(64))?;
    let cases = [
        ("{ not json", StatusCode::BAD_REQUEST, -32700),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            StatusCode::BAD_REQUEST,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"0123456789abcdef0123456789"}}"#,
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
        ),
    ];
    for (body, status_expected, code) in cases {
        let response = call(&mut app, request(Method::POST, A, None, body)?).await?;
        let (status, _, json) = read_json(response).await?;
        assert_eq!(status, status_expected, "{body}");
        assert_eq!(json["error"]["code"], code, "{body}");
    }
    // A stateless ping reaches rmcp and is answered.
    let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    let response = call(&mut app, request(Method::POST, A, None, ping)?).await?;
    let (status, _, json) = read_json(response).await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json["id"], 7);
    assert!(json.get("result").is_some(), "{json}");
    Ok(())
}

/// A verifier that refuses every token (only its presence matters here).
struct RefuseAll;

impl crate::auth::TokenVerifier for RefuseAll {
    fn verify<'a>(
        &'a self,
        _: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<crate::auth::Principal, crate::auth::InvalidToken>>
    {
        Box::pin(std::future::ready(Err(crate::auth::InvalidToken(
            "refused".to_owned(),
        ))))
    }
}

#[tokio::test]
async fn the_handler_serves_the_endpoints_path_and_authenticates_first() -> anyhow::Result<()> {
    use super::super::front::HttpHandler;
    use crate::http::health::Readiness;

    let closing = tokio_util::sync::CancellationToken::new();
    let options = HttpOptions::default().stateless(true);
    let server = crate::Server::builder().build()?;
    let readiness = || Readiness {
        draining: closing.clone(),
        checks: Vec::new().into(),
    };
    let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    let post = |path: &str| -> anyhow::Result<Request> {
        let mut request = request(Method::POST, A, None, ping)?;
        *request.uri_mut() = path.parse()?;
        Ok(request)
    };

    // The path goes to the endpoint (rmcp answers the ping); any other is `404`.
    let handler = HttpHandler::listening(server.clone(), &options, &closing, readiness());
    for (path, expected) in [
        ("/mcp", StatusCode::OK),
        ("/mcp/", StatusCode::NOT_FOUND),
        ("/mcp/x", StatusCode::NOT_FOUND),
        ("/MCP", StatusCode::NOT_FOUND),
        ("/elsewhere", StatusCode::NOT_FOUND),
    ] {
        let (status, _, body) = read(handler.handle(post(path)?).await).await?;
        assert_eq!(status, expected, "{path}");
        if expected == StatusCode::OK {
            assert_eq!(
                &body[..],
                br#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
                "{path}"
            );
        }
    }

    // With authentication (the options' or the server's), the steps authenticate first, and
    // the resource-metadata document is served.
    let auth = crate::auth::Auth::new(RefuseAll, "http://localhost/mcp")
        .authorization_server("http://localhost/issuer");
    let by_options = HttpHandler::listening(
        server,
        &options.clone().auth(auth.clone()),
        &closing,
        readiness(),
    );
    let authenticated = crate::Server::builder().auth(auth).build()?;
    let by_server = HttpHandler::listening(authenticated, &options, &closing, readiness());
    for handler in [&by_options, &by_server] {
        let (status, headers, _) = read(handler.handle(post("/mcp")?).await).await?;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(header_text(&headers, "www-authenticate").starts_with("Bearer"));
        let metadata = "/.well-known/oauth-protected-resource/mcp";
        let mut get = request(Method::GET, A, None, "")?;
        *get.uri_mut() = metadata.parse()?;
        let (status, _, body) = read(handler.handle(get).await).await?;
        assert_eq!(status, StatusCode::OK, "{metadata}");
        assert!(body.starts_with(b"{"), "{metadata}");
    }
    Ok(())
}
