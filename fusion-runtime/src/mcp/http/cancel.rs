//! Cancellation over streamable HTTP when the client goes away or cancels from another request.
//!
//! rmcp cancels a call on `notifications/cancelled` within a session, and a stateless call
//! whose connection closes before its answer. Left to itself it keeps running, holding its
//! guard slot, a call whose client:
//!
//! - closes the response stream of a session's call (the socket closes mid-call);
//! - deletes its session (`DELETE`): rmcp waits up to 5 s for running calls to finish;
//! - sends `notifications/cancelled` in a separate POST without a session (stateless mode,
//!   or a 2026-07-28 client): rmcp ignores notifications there;
//! - sends it in a live session for a call answered without rmcp's worker (see
//!   `room`): rmcp does not know the call.
//!
//! [`Cancelling`] is the step: it takes the request's [`Exchange`] from its [`RequestFacts`]
//! (the endpoint makes both; the handler finds them in the request's
//! `http::request::Parts`), cancels the calls attached to it when the response is dropped
//! before its end, and handles the two messages above. The handler attaches each call with [`watch`](crate::mcp::facts::watch);
//! the calls are listed by owner in [`Calls`].
//!
//! The [`Exchange`] also carries a 2025 session call's log messages onto the call's own
//! response stream: rmcp sends a session's `notifications/message` to the separate GET
//! stream, where a client reading only its POST answer never sees them. [`Exchange::inject`]
//! queues the event and the response body yields it before rmcp's next frame, so a call's logs come before its
//! result.

use std::borrow::Cow;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderName, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use rmcp::model::RequestId;
use serde::Deserialize;

use crate::http::body::read_bounded;
use crate::mcp::facts::{Calls, Exchange, Owner, RequestFacts};
use crate::mcp::jsonrpc::Passed;

/// Larger POST bodies are not inspected for a session-less `notifications/cancelled` (a real
/// one is a few hundred bytes); neither are bodies of unknown length.
const MAX_INSPECTED_BODY: usize = 64 * 1024;

const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
const CANCELLED: &str = "notifications/cancelled";

/// Cancels the exchange's calls when dropped, unless the response reached its end first.
struct GoneGuard {
    exchange: Option<Exchange>,
}

impl GoneGuard {
    fn disarm(&mut self) {
        self.exchange = None;
    }
}

impl Drop for GoneGuard {
    fn drop(&mut self) {
        if let Some(exchange) = self.exchange.take() {
            exchange.client_gone();
        }
    }
}

/// A response body that tells its exchange when it is dropped before its end and, for a
/// session call's SSE stream (`inject`), yields the events queued with
/// [`Exchange::inject`] before the inner body's next frame.
struct GuardedBody {
    body: Body,
    guard: GoneGuard,
    inject: Option<Exchange>,
    /// An inner frame held back while queued events go first.
    stashed: Option<Frame<Bytes>>,
    /// The inner body ended; queued events are still yielded.
    inner_done: bool,
}

impl GuardedBody {
    fn queued(&self) -> Option<Bytes> {
        self.inject.as_ref()?.pop_event()
    }

    fn finish(&mut self) {
        if let Some(exchange) = self.inject.take() {
            exchange.end();
        }
    }
}

impl HttpBody for GuardedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if let Some(event) = this.queued() {
            return Poll::Ready(Some(Ok(Frame::data(event))));
        }
        if let Some(frame) = this.stashed.take() {
            return Poll::Ready(Some(Ok(frame)));
        }
        if this.inner_done {
            this.finish();
            return Poll::Ready(None);
        }
        if let Some(exchange) = &this.inject {
            exchange.inner.waker.register(cx.waker());
        }
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        match &polled {
            Poll::Ready(None) => this.guard.disarm(),
            Poll::Ready(Some(Ok(_))) if this.body.is_end_stream() => this.guard.disarm(),
            _ => {}
        }
        match polled {
            // An event queued while the inner body was polled was queued before the frame
            // it produced was made (the handler logs before it answers): it goes first.
            Poll::Ready(Some(Ok(frame))) => match this.queued() {
                Some(event) => {
                    this.stashed = Some(frame);
                    Poll::Ready(Some(Ok(Frame::data(event))))
                }
                None => Poll::Ready(Some(Ok(frame))),
            },
            Poll::Ready(None) => match this.queued() {
                Some(event) => {
                    this.inner_done = true;
                    Poll::Ready(Some(Ok(Frame::data(event))))
                }
                None => {
                    this.finish();
                    Poll::Ready(None)
                }
            },
            Poll::Pending => match this.queued() {
                Some(event) => Poll::Ready(Some(Ok(Frame::data(event)))),
                None => Poll::Pending,
            },
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.stashed.is_none()
            && (self.inner_done || self.body.is_end_stream())
            && self.inject.as_ref().is_none_or(|e| !e.has_events())
    }

    fn size_hint(&self) -> SizeHint {
        match self.inject {
            Some(_) => SizeHint::default(),
            None => self.body.size_hint(),
        }
    }
}

impl Drop for GuardedBody {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The cancellation step of one request (see the module's documentation): made from the
/// request's facts as it reads a `notifications/cancelled` before the route
/// ([`read`](Self::read)), and after it cancels what that message (or a session's `DELETE`)
/// named and guards the answer's body ([`end`](Self::end)).
pub(crate) struct Cancelling {
    calls: Arc<Calls>,
    guard: GoneGuard,
    session: Option<Arc<str>>,
    client: crate::context::ClientKey,
    /// What to cancel once the route accepted the request: an owner's call, or all its calls.
    after: Option<(Owner, Option<RequestId>)>,
    is_session_post: bool,
}

impl Cancelling {
    /// The step for the request whose `facts` (with their exchange) the endpoint made.
    fn new(facts: &RequestFacts, calls: &Arc<Calls>) -> Self {
        Cancelling {
            calls: Arc::clone(calls),
            guard: GoneGuard {
                exchange: facts.exchange.clone(),
            },
            session: facts.session.clone(),
            client: facts.client.clone(),
            after: None,
            is_session_post: facts.post && facts.session.is_some(),
        }
    }

    /// The step for `request`, from the facts the endpoint put in it (their exchange lists
    /// its calls in `calls`): reads a `notifications/cancelled` the request may carry (a
    /// session's that the check read, see [`Passed`]; a session-less one, sniffed), and
    /// notes a session's `DELETE`; the request goes on whole, or a body that failed is `400`.
    /// A request without facts (no endpoint made it) is a `500`.
    pub(crate) async fn read(
        request: Request,
        calls: &Arc<Calls>,
    ) -> Result<(Request, Self), Response> {
        let (parts, body) = request.into_parts();
        let Some(facts) = parts.extensions.get::<RequestFacts>() else {
            return Err(StatusCode::INTERNAL_SERVER_ERROR.into_response());
        };
        let step = Cancelling::new(facts, calls);
        step.check_body(parts, body).await
    }

    async fn check_body(
        mut self,
        parts: axum::http::request::Parts,
        body: Body,
    ) -> Result<(Request, Self), Response> {
        // A live session's `notifications/cancelled` (the check read it, see `Passed`) may
        // name a call answered without rmcp, which rmcp does not know to cancel.
        let session_cancels =
            self.session.is_some() && parts.extensions.get::<Passed>().is_some_and(|p| p.cancels);
        let body = if parts.method == Method::POST
            && (session_cancels || (self.session.is_none() && may_cancel(&parts, &body)))
        {
            let Ok(bytes) = read_bounded(body, MAX_INSPECTED_BODY).await else {
                self.guard.disarm();
                return Err(StatusCode::BAD_REQUEST.into_response());
            };
            if let Some(id) = cancelled_request(&bytes) {
                let owner = match &self.session {
                    Some(session) => Owner::Session(session.clone()),
                    None => Owner::Client(self.client.clone()),
                };
                self.after = Some((owner, Some(id)));
            }
            Body::from(bytes)
        } else {
            if parts.method == Method::DELETE
                && let Some(session) = &self.session
            {
                self.after = Some((Owner::Session(session.clone()), None));
            }
            body
        };
        Ok((Request::from_parts(parts, body), self))
    }

    /// The route's `response`: what the request named cancelled if the route accepted it, and
    /// the body guarded (the calls attached to the exchange are cancelled if it is dropped
    /// before its end; a session call's SSE stream carries the events queued for it).
    pub(crate) fn end(self, response: Response) -> Response {
        let Cancelling {
            calls,
            guard,
            after,
            is_session_post,
            ..
        } = self;
        if let Some((owner, id)) = after {
            let accepted = match id {
                Some(_) => response.status() == StatusCode::ACCEPTED,
                None => response.status().is_success(),
            };
            if accepted {
                let n = calls.cancel(&owner, id.as_ref());
                tracing::debug!(?owner, ?id, cancelled = n, "cancelled from another request");
            }
        }
        let is_sse = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let inject = match is_session_post && is_sse {
            true => guard.exchange.clone(),
            false => {
                if let Some(exchange) = &guard.exchange {
                    exchange.end();
                }
                None
            }
        };
        response.map(|body| {
            Body::new(GuardedBody {
                body,
                guard,
                inject,
                stashed: None,
                inner_done: false,
            })
        })
    }
}

/// Whether a session-less POST may be a `notifications/cancelled` worth reading first. A body
/// the JSON-RPC check has read says so itself ([`Passed`]); only one that did not pass there
/// (which rmcp then refuses) is sniffed here.
fn may_cancel(parts: &Parts, body: &Body) -> bool {
    let method_ok = match parts.extensions.get::<Passed>() {
        Some(passed) => passed.cancels,
        None => parts
            .headers
            .get(&METHOD_HEADER)
            .is_none_or(|m| m.as_bytes() == CANCELLED.as_bytes()),
    };
    method_ok
        && body
            .size_hint()
            .exact()
            .is_some_and(|n| n <= MAX_INSPECTED_BODY as u64)
}

/// The request a `notifications/cancelled` message names, if `body` is one.
fn cancelled_request(body: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    #[derive(Deserialize)]
    struct Cancelled {
        params: Params,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        request_id: RequestId,
    }
    let probe: Probe<'_> = serde_json::from_slice(body).ok()?;
    if probe.method.as_deref() != Some(CANCELLED) {
        return None;
    }
    let cancelled: Cancelled = serde_json::from_slice(body).ok()?;
    Some(cancelled.params.request_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    #[test]
    fn only_a_cancelled_notification_names_a_request() {
        let n = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}"#;
        assert_eq!(cancelled_request(n), Some(id(7)));
        let s =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}"#;
        assert_eq!(cancelled_request(s), Some(RequestId::String("r".into())));
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notifications/cancelled"}}"#;
        assert_eq!(cancelled_request(call), None);
        assert_eq!(
            cancelled_request(br#"{"method":"notifications/cancelled"}"#),
            None
        );
        assert_eq!(cancelled_request(b"[1,2"), None);
    }
}
