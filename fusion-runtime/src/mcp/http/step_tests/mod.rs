//! Unit tests of the HTTP request steps' contracts, one file per step: each step is called
//! alone — as `steps.rs` calls it, before and after the route — with a `next` (the route)
//! that records what it received and answers a canned response; the tests assert on both.
//! `guard.rs` runs the whole walk ([`Steps::serve`](super::steps::Steps::serve)) with such a
//! route; `endpoint.rs` the handler with rmcp behind the steps.

mod body;
mod cancel;
mod check;
mod endpoint;
mod guard;
mod health;
mod sessions;
mod stateless_call;
mod unprobed;

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use futures::future::BoxFuture;
use serde_json::Value;

use super::check::{JsonRpcStep, Route};
use super::door::Cleared;
use crate::mcp::facts::{Calls, Exchange, RequestFacts};

/// A `next` taking only the request, as the route the steps lead to (the route the check
/// decided left unread).
pub(super) fn after_door<F, Fut>(next: F) -> impl FnOnce(Request, Route) -> Fut
where
    F: FnOnce(Request) -> Fut,
{
    move |request, _route| next(request)
}

/// The check as the endpoint runs it (`steps.rs`): `check::check`, `next` on the route it
/// decided, then `Checked::finish` on the answer.
pub(super) async fn through_check<F, Fut>(
    step: &JsonRpcStep,
    cleared: Cleared,
    request: Request,
    next: F,
) -> Response
where
    F: FnOnce(Request, Route) -> Fut,
    Fut: Future<Output = Response>,
{
    match super::check::check(step, &cleared, request).await {
        Ok((request, route, checked)) => {
            checked
                .finish(next(request, route).await, &step.server)
                .await
        }
        Err(answer) => answer,
    }
}

/// The cancellation step as the endpoint runs it: made from the request's facts (given an
/// exchange of `calls` when they have none), then its read, `next`, its end.
pub(super) async fn through_cancel<F, Fut>(
    calls: &Arc<Calls>,
    mut request: Request,
    next: F,
) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    match request.extensions_mut().get_mut::<RequestFacts>() {
        Some(facts) => {
            facts
                .exchange
                .get_or_insert_with(|| Exchange::new(Arc::clone(calls)));
        }
        None => return Response::new(Body::from("the request has no facts")),
    };
    match super::cancel::Cancelling::read(request, calls).await {
        Ok((request, cancelling)) => cancelling.end(next(request).await),
        Err(answer) => answer,
    }
}

/// What a recording `next` received: the request's parts and its body as read to its end
/// (`Err` with the error when reading failed).
pub(super) struct Saw {
    pub(super) parts: Parts,
    pub(super) body: Result<Bytes, String>,
    /// The plain call the check routed to the room, when it did (a `next` after the check).
    pub(super) plain: Option<super::room::Plain>,
}

impl Saw {
    /// The request's facts, as the steps before `next` left them.
    pub(super) fn facts(&self) -> anyhow::Result<&crate::mcp::facts::RequestFacts> {
        self.parts
            .extensions
            .get()
            .ok_or_else(|| anyhow::anyhow!("no RequestFacts"))
    }
}

/// Where a recording `next` puts what it saw; `None` while it was not called.
#[derive(Clone, Default)]
pub(super) struct Seen(Arc<Mutex<Option<Saw>>>);

impl Seen {
    /// A `next` that records the request (reading its body to its end) and answers
    /// `response`.
    pub(super) fn next(
        &self,
        response: Response,
    ) -> impl FnOnce(Request) -> BoxFuture<'static, Response> + use<> {
        let seen = self.clone();
        move |request: Request| {
            Box::pin(async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .map_err(|e| e.to_string());
                seen.put(Saw {
                    parts,
                    body,
                    plain: None,
                });
                response
            })
        }
    }

    /// [`Seen::next`] for the JSON-RPC check's `next`, which gets the request's route too.
    pub(super) fn next_routed(
        &self,
        response: Response,
    ) -> impl FnOnce(Request, Route) -> BoxFuture<'static, Response> + use<> {
        let seen = self.clone();
        move |request: Request, route| {
            Box::pin(async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .map_err(|e| e.to_string());
                let plain = match route {
                    Route::Room(plain) => Some(*plain),
                    Route::Rmcp => None,
                };
                seen.put(Saw { parts, body, plain });
                response
            })
        }
    }

    pub(super) fn put(&self, saw: Saw) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(saw);
    }

    /// What `next` saw; an error when it was not called.
    pub(super) fn take(&self) -> anyhow::Result<Saw> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or_else(|| anyhow::anyhow!("`next` was not called"))
    }

    pub(super) fn called(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// A response with `status` and `body`, no headers (as rmcp writes its plain refusals).
pub(super) fn canned(status: StatusCode, body: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
}

/// A `200` JSON answer.
pub(super) fn json_ok(body: &'static str) -> Response {
    let mut response = canned(StatusCode::OK, body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// The response's status, headers and body read to its end.
pub(super) async fn read(response: Response) -> anyhow::Result<(StatusCode, HeaderMap, Bytes)> {
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await?;
    Ok((parts.status, parts.headers, bytes))
}

/// The response's status, headers and body parsed as JSON.
pub(super) async fn read_json(
    response: Response,
) -> anyhow::Result<(StatusCode, HeaderMap, Value)> {
    let (status, headers, bytes) = read(response).await?;
    let json = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))?;
    Ok((status, headers, json))
}

/// A header's value as text (`""` when absent).
pub(super) fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// A body of `chunks`, then one that never comes (a client that stalls); no size hint.
pub(super) fn stalling_body(chunks: &[&'static str]) -> Body {
    use futures::StreamExt as _;
    let chunks: Vec<Result<Bytes, std::io::Error>> = chunks
        .iter()
        .map(|c| Ok(Bytes::from_static(c.as_bytes())))
        .collect();
    Body::from_stream(futures::stream::iter(chunks).chain(futures::stream::pending()))
}

/// A body of `chunks` that ends after them, without a size hint.
pub(super) fn streamed_body(chunks: &[&'static str]) -> Body {
    let chunks: Vec<Result<Bytes, std::io::Error>> = chunks
        .iter()
        .map(|c| Ok(Bytes::from_static(c.as_bytes())))
        .collect();
    Body::from_stream(futures::stream::iter(chunks))
}
