//! The cancellation step (`cancel.rs`): each request's exchange, a call cancelled when its
//! response is dropped before its end, and cancellation from another request.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use futures::StreamExt as _;
use futures::future::BoxFuture;
use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

use super::through_cancel as layer;
use super::{Seen, canned, read, stalling_body, streamed_body};
use crate::context::ClientKey;
use crate::mcp::facts::{Calls, Owner, RequestFacts};
use crate::mcp::jsonrpc::Passed;

/// A request with the facts the guard would have written: from `client`, naming `session`.
fn with_facts(
    method: Method,
    client: &str,
    session: Option<&str>,
    body: Body,
) -> anyhow::Result<Request> {
    let mut builder = Request::builder().method(method).uri("/mcp");
    if let Some(session) = session {
        builder = builder.header("mcp-session-id", session);
    }
    let mut request = builder.body(body)?;
    let facts = RequestFacts::new(
        ClientKey::new(client),
        None,
        session.map(Into::into),
        request.method(),
    );
    request.extensions_mut().insert(facts);
    Ok(request)
}

/// A `next` that attaches `token` to the request's exchange (as a handler's `watch` does)
/// and answers with `body`.
fn attaching_next(
    token: CancellationToken,
    body: Body,
) -> impl FnOnce(Request) -> BoxFuture<'static, Response> {
    move |request: Request| {
        Box::pin(async move {
            let exchange = request
                .extensions()
                .get::<RequestFacts>()
                .and_then(|facts| facts.exchange.clone());
            match exchange {
                Some(exchange) => {
                    exchange.attach(&token);
                    let mut response = Response::new(body);
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        header::HeaderValue::from_static("text/event-stream"),
                    );
                    response
                }
                None => canned(StatusCode::INTERNAL_SERVER_ERROR, "no exchange"),
            }
        })
    }
}

fn cancelled(request_id: i64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{request_id},"reason":"user"}}}}"#
    )
}

#[tokio::test]
async fn the_facts_reaching_next_carry_an_exchange() -> anyhow::Result<()> {
    let calls = Arc::new(Calls::default());
    // The endpoint's facts: kept, with their exchange.
    let seen = Seen::default();
    let request = with_facts(Method::POST, "ip:192.0.2.1", Some("s-1"), Body::from("{}"))?;
    let response = layer(&calls, request, seen.next(canned(StatusCode::OK, "done"))).await;
    let (status, _, body) = read(response).await?;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"done"[..]));
    let saw = seen.take()?;
    let facts = saw.facts()?;
    assert!(facts.exchange.is_some());
    assert_eq!(facts.client, ClientKey::new("ip:192.0.2.1"));
    assert_eq!(facts.session.as_deref(), Some("s-1"));
    assert_eq!(saw.body.map_err(anyhow::Error::msg)?, "{}");

    Ok(())
}

#[tokio::test]
async fn dropping_the_response_before_its_end_cancels_the_attached_call() -> anyhow::Result<()> {
    let calls = Arc::new(Calls::default());

    // Dropped unread.
    let token = CancellationToken::new();
    let request = with_facts(Method::POST, "ip:192.0.2.1", None, Body::from("{}"))?;
    let response = layer(
        &calls,
        request,
        attaching_next(token.clone(), stalling_body(&["data: 1\n\n"])),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(!token.is_cancelled(), "not while the response is there");
    drop(response);
    assert!(token.is_cancelled());

    // Dropped after a first frame.
    let token = CancellationToken::new();
    let request = with_facts(Method::POST, "ip:192.0.2.1", None, Body::from("{}"))?;
    let response = layer(
        &calls,
        request,
        attaching_next(token.clone(), stalling_body(&["data: 1\n\n"])),
    )
    .await;
    let mut stream = response.into_body().into_data_stream();
    let first = stream
        .next()
        .await
        .ok_or_else(|| anyhow::anyhow!("no frame"))??;
    assert_eq!(&first[..], b"data: 1\n\n");
    assert!(!token.is_cancelled());
    drop(stream);
    assert!(token.is_cancelled());
    Ok(())
}

#[tokio::test]
async fn reading_the_response_to_its_end_does_not_cancel() -> anyhow::Result<()> {
    let calls = Arc::new(Calls::default());
    for body in [
        Body::from("data: done\n\n"),
        streamed_body(&["data: 1\n\n", "data: 2\n\n"]),
    ] {
        let token = CancellationToken::new();
        let request = with_facts(Method::POST, "ip:192.0.2.1", None, Body::from("{}"))?;
        let response = layer(&calls, request, attaching_next(token.clone(), body)).await;
        let (status, _, bytes) = read(response).await?;
        assert_eq!(status, StatusCode::OK);
        assert!(bytes.starts_with(b"data: "));
        assert!(!token.is_cancelled());
    }
    Ok(())
}

/// Three tracked calls: client A's 7 and 8, client B's 7.
struct Three {
    a7: CancellationToken,
    a8: CancellationToken,
    b7: CancellationToken,
    _tracked: Vec<crate::mcp::facts::Tracked>,
}

fn three(calls: &Arc<Calls>) -> anyhow::Result<Three> {
    let (a7, a8, b7) = (
        CancellationToken::new(),
        CancellationToken::new(),
        CancellationToken::new(),
    );
    let a = || Owner::Client(ClientKey::new("ip:192.0.2.1"));
    let b = Owner::Client(ClientKey::new("ip:192.0.2.2"));
    let tracked = [
        calls.track(a(), RequestId::Number(7), a7.clone()),
        calls.track(a(), RequestId::Number(8), a8.clone()),
        calls.track(b, RequestId::Number(7), b7.clone()),
    ];
    let tracked = tracked
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| anyhow::anyhow!("not tracked"))?;
    Ok(Three {
        a7,
        a8,
        b7,
        _tracked: tracked,
    })
}

#[tokio::test]
async fn a_sessionless_cancelled_notification_answered_202_cancels_that_clients_call()
-> anyhow::Result<()> {
    let calls = Arc::new(Calls::default());
    let three = three(&calls)?;
    let body = cancelled(7);
    let mut request = with_facts(Method::POST, "ip:192.0.2.1", None, Body::from(body.clone()))?;
    // What the JSON-RPC check says of it.
    request.extensions_mut().insert(Passed {
        id: None,
        cancels: true,
    });
    let seen = Seen::default();
    let response = layer(&calls, request, seen.next(canned(StatusCode::ACCEPTED, ""))).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert_eq!(
        seen.take()?.body.map_err(anyhow::Error::msg)?,
        body,
        "the body read here reaches next whole"
    );
    assert!(
        three.a7.is_cancelled(),
        "the call named, of the same client"
    );
    assert!(!three.a8.is_cancelled(), "another call of the same client");
    assert!(!three.b7.is_cancelled(), "the same id, another client's");

    // Without the check's word (no `Passed`), the body is sniffed: the same.
    let calls = Arc::new(Calls::default());
    let three = self::three(&calls)?;
    let request = with_facts(Method::POST, "ip:192.0.2.2", None, Body::from(cancelled(7)))?;
    layer(
        &calls,
        request,
        Seen::default().next(canned(StatusCode::ACCEPTED, "")),
    )
    .await;
    assert!(three.b7.is_cancelled());
    assert!(!three.a7.is_cancelled() && !three.a8.is_cancelled());
    Ok(())
}

#[tokio::test]
async fn a_cancelled_notification_not_answered_202_cancels_nothing() -> anyhow::Result<()> {
    let calls = Arc::new(Calls::default());
    let three = three(&calls)?;
    for status in [StatusCode::BAD_REQUEST, StatusCode::OK] {
        let request = with_facts(Method::POST, "ip:192.0.2.1", None, Body::from(cancelled(7)))?;
        let response = layer(&calls, request, Seen::default().next(canned(status, ""))).await;
        assert_eq!(response.status(), status);
    }
    // Nor one the check says is no cancellation, nor one in a session (rmcp's to handle).
    let mut request = with_facts(Method::POST, "ip:192.0.2.1", None, Body::from(cancelled(7)))?;
    request.extensions_mut().insert(Passed {
        id: None,
        cancels: false,
    });
    layer(
        &calls,
        request,
        Seen::default().next(canned(StatusCode::ACCEPTED, "")),
    )
    .await;
    let request = with_facts(
        Method::POST,
        "ip:192.0.2.1",
        Some("s-1"),
        Body::from(cancelled(7)),
    )?;
    layer(
        &calls,
        request,
        Seen::default().next(canned(StatusCode::ACCEPTED, "")),
    )
    .await;
    assert!(!three.a7.is_cancelled() && !three.a8.is_cancelled() && !three.b7.is_cancelled());
    Ok(())
}

#[tokio::test]
async fn a_session_delete_that_succeeds_cancels_the_sessions_calls() -> anyhow::Result<()> {
    let calls = Arc::new(Calls::default());
    let (s1, s2) = (CancellationToken::new(), CancellationToken::new());
    let _tracked = [
        calls.track(
            Owner::Session("s-1".into()),
            RequestId::Number(1),
            s1.clone(),
        ),
        calls.track(
            Owner::Session("s-2".into()),
            RequestId::Number(1),
            s2.clone(),
        ),
    ];
    let delete = |session| with_facts(Method::DELETE, "ip:192.0.2.1", Some(session), Body::empty());
    layer(
        &calls,
        delete("s-1")?,
        Seen::default().next(canned(StatusCode::NOT_FOUND, "")),
    )
    .await;
    assert!(!s1.is_cancelled(), "a refused DELETE cancels nothing");
    layer(
        &calls,
        delete("s-1")?,
        Seen::default().next(canned(StatusCode::ACCEPTED, "")),
    )
    .await;
    assert!(s1.is_cancelled());
    assert!(!s2.is_cancelled(), "another session's call");
    Ok(())
}
