//! The probes (`health.rs`): `/healthz`, `/readyz`, and the handler that sends every other
//! path to the endpoint.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use tokio_util::sync::CancellationToken;

use super::super::front::HttpHandler;
use super::super::options::HttpOptions;
use super::{header_text, read};
use crate::http::health::{Readiness, ReadyCheck};

fn readiness(checks: Vec<ReadyCheck>) -> Readiness {
    Readiness {
        draining: CancellationToken::new(),
        checks: Arc::from(checks),
    }
}

/// A listener's handler, with its probes, of a stateless endpoint.
fn front(readiness: Readiness) -> HttpHandler {
    let server = match crate::Server::builder().build() {
        Ok(server) => server,
        Err(e) => panic!("{e}"),
    };
    let options = HttpOptions::default().stateless(true);
    HttpHandler::listening(server, &options, &CancellationToken::new(), readiness)
}

/// A ping.
const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

async fn call(front: &mut HttpHandler, method: Method, path: &str) -> anyhow::Result<Response> {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(Body::from(PING))?;
    std::future::poll_fn(|cx| tower_service::Service::<Request>::poll_ready(front, cx)).await?;
    Ok(tower_service::Service::<Request>::call(front, request).await?)
}

#[tokio::test]
async fn healthz_answers_ok() -> anyhow::Result<()> {
    let mut front = front(readiness(Vec::new()));
    let (status, headers, body) = read(call(&mut front, Method::GET, "/healthz").await?).await?;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"ok\n"[..]));
    assert_eq!(
        header_text(&headers, "content-type"),
        "text/plain; charset=utf-8"
    );
    assert_eq!(header_text(&headers, "cache-control"), "no-store");
    Ok(())
}

#[tokio::test]
async fn readyz_answers_ready_or_why_not() -> anyhow::Result<()> {
    let mut ready = front(readiness(Vec::new()));
    let (status, headers, body) = read(call(&mut ready, Method::GET, "/readyz").await?).await?;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"ready\n"[..]));
    assert_eq!(header_text(&headers, "cache-control"), "no-store");

    let failing = ReadyCheck::new("db", || async {
        Err("connection refused\nsecond line".to_owned())
    });
    let mut not_ready = front(readiness(vec![failing]));
    let (status, _, body) = read(call(&mut not_ready, Method::GET, "/readyz").await?).await?;
    assert_eq!(
        (status, &body[..]),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            &b"db: connection refused\n"[..]
        ),
        "the first line of the reason, after the check's name"
    );

    let draining = readiness(Vec::new());
    draining.draining.cancel();
    let mut draining = front(draining);
    let (status, _, body) = read(call(&mut draining, Method::GET, "/readyz").await?).await?;
    assert_eq!(
        (status, &body[..]),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            &b"draining: shutting down\n"[..]
        )
    );
    // Draining: not ready, yet alive.
    let (status, _, _) = read(call(&mut draining, Method::GET, "/healthz").await?).await?;
    assert_eq!(status, StatusCode::OK);
    Ok(())
}

#[tokio::test]
async fn a_probe_path_with_another_method_is_405_and_never_reaches_mcp() -> anyhow::Result<()> {
    let mut front = front(readiness(Vec::new()));
    for path in ["/healthz", "/readyz"] {
        for method in [Method::POST, Method::DELETE, Method::PUT] {
            let (status, headers, body) =
                read(call(&mut front, method.clone(), path).await?).await?;
            assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
            let allow = header_text(&headers, "allow");
            assert!(allow.contains("GET"), "{method} {path}: allow {allow:?}");
            assert!(
                !body.starts_with(b"{"),
                "{method} {path}: not the endpoint's"
            );
        }
        // HEAD is answered as GET, without a body.
        let (status, _, body) = read(call(&mut front, Method::HEAD, path).await?).await?;
        assert_eq!((status, body.len()), (StatusCode::OK, 0), "HEAD {path}");
    }
    Ok(())
}

#[tokio::test]
async fn every_other_path_goes_to_the_endpoint_which_serves_only_its_own() -> anyhow::Result<()> {
    let mut front = front(readiness(Vec::new()));
    let (status, _, body) = read(call(&mut front, Method::POST, "/mcp").await?).await?;
    assert_eq!(
        (status, &body[..]),
        (
            StatusCode::OK,
            &br#"{"jsonrpc":"2.0","id":7,"result":{}}"#[..]
        )
    );
    for (method, path) in [
        (Method::GET, "/"),
        (Method::GET, "/healthz/"),
        (Method::GET, "/healthz/x"),
        (Method::GET, "/HEALTHZ"),
        (Method::POST, "/readyzz"),
        (Method::POST, "/mcp/"),
    ] {
        let (status, _, body) = read(call(&mut front, method.clone(), path).await?).await?;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
        assert!(
            body.windows(9).any(|w| w == b"Not Found"),
            "{method} {path}: the endpoint's 404"
        );
    }
    Ok(())
}
