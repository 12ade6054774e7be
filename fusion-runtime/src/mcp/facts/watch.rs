//! A running call listed for cancellation, from the handler side: [`watched_request`] runs a
//! call and lists it in the endpoint's [`Calls`](super::Calls) once it has to wait.
//!
//! Reads: the request's [`RequestFacts`] (its exchange, session, client). Writes: the call's
//! entry in the endpoint's calls, until it ends.

use std::future::poll_fn;
use std::pin::Pin;

use axum::http::request::Parts;
use rmcp::RoleServer;
use rmcp::model::RequestId;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use super::RequestFacts;
use super::exchange::{Owner, Tracked};
use crate::auth::Principal;
use crate::context::ClientKey;

/// Ties a running call to its HTTP request: it is cancelled when the client goes away before
/// the response's end, and listed for a later `notifications/cancelled` (session-less) or
/// session `DELETE`. `None` when the request did not come through the cancellation step or
/// the list is full; keep the value until the call ends. A session-less call is listed under
/// its client's key, as [`ClientKey::of`] works it out: the principal's (the request's, else
/// `principal`, the session's), else the request's client.
pub(crate) fn watch(
    cx: &RequestContext<RoleServer>,
    principal: Option<&Principal>,
) -> Option<Tracked> {
    watch_request(cx.extensions.get::<Parts>()?, &cx.id, &cx.ct, principal)
}

/// [`watch`] of the request `parts`, whose JSON-RPC id is `id` and cancellation `ct`.
pub(crate) fn watch_request(
    parts: &Parts,
    id: &RequestId,
    ct: &CancellationToken,
    principal: Option<&Principal>,
) -> Option<Tracked> {
    let facts = RequestFacts::of_parts(parts);
    let exchange = facts.exchange.as_ref()?;
    exchange.attach(ct);
    let owner = match &facts.session {
        Some(session) => Owner::Session(session.clone()),
        None => Owner::Client(ClientKey::owner(
            facts.principal.as_deref().or(principal),
            &facts.client,
        )),
    };
    exchange.inner.calls.track(owner, id.clone(), ct.clone())
}

/// Runs `call`, [`watch`]ed from the first time it has to wait: a call that ends in its first
/// poll (most do) is never listed, and nothing after its end could cancel it anyway. A
/// `notifications/cancelled` that arrives while that first poll runs finds nothing, as one
/// that arrives after the call's end does. For the request `parts` (none: not an HTTP
/// request, never watched), whose JSON-RPC id is `id` and cancellation `ct`.
///
/// `call` is pinned where the caller keeps it: moved in here, a call's future (the whole
/// pipeline's) would be held twice in the future rmcp spawns for the request, and copied
/// with it.
pub(crate) fn watched_request<'a, F: Future>(
    parts: Option<&'a Parts>,
    id: &'a RequestId,
    ct: &'a CancellationToken,
    principal: Option<&'a Principal>,
    mut call: Pin<&'a mut F>,
) -> impl Future<Output = F::Output> + 'a {
    // Held until the call ends (`Some(None)`: watched, but not listed).
    let mut tracked: Option<Option<Tracked>> = None;
    poll_fn(move |task| {
        let polled = call.as_mut().poll(task);
        if polled.is_pending() && tracked.is_none() {
            tracked = Some(parts.and_then(|parts| watch_request(parts, id, ct, principal)));
        }
        polled
    })
}
