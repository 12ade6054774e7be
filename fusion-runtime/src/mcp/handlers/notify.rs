//! The server's [`Notifier`](crate::Notifier) on the wire, for each protocol generation.
//!
//! - 2025-x sessions (stdio, stateful HTTP): once the client is initialized, one task per
//!   session passes every change on — `notifications/resources/updated` for the URIs the
//!   session subscribed to with `resources/subscribe`, the list-changed ones to every
//!   session. Over HTTP they go on the session's GET stream, where 2025 puts them. A
//!   stateless 2025 server has no way back to the client: it advertises neither
//!   `subscribe` nor `listChanged`, and refuses `resources/subscribe`.
//! - 2026-07-28: `subscriptions/listen`. rmcp sends the acknowledgment with the accepted
//!   filter ([`accepted_filter`]: the known URIs, at most [`MAX_SUBSCRIPTIONS`]), then
//!   [`listen`] passes on what the filter lets through, each notification carrying
//!   `io.modelcontextprotocol/subscriptionId`, until the client cancels it or goes away.
//!   Open listens are bounded per client and overall (see
//!   [`ServerBuilder::listen_limits`](crate::ServerBuilder::listen_limits)).
//!
//! A listener that falls behind the notifier's capacity loses the oldest changes; instead it
//! sends what tells the client to read again: the list-changed notifications its client
//! accepts, and `resources/updated` for each URI it subscribed to.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{SubscriptionContext, SubscriptionSendError};
use rmcp::{ErrorData, Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use super::subscriptions::{MAX_SUBSCRIPTIONS, Subscriptions};
use crate::context::{Change, Changes, ClientKey, ListenRefused, Received};
use crate::server::Server;
use crate::server::catalog::MAX_URI_BYTES;

/// Which list-changed notifications a session's client may get (what was advertised).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lists {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

impl Lists {
    pub(crate) fn of(server: &Server) -> Lists {
        let catalog = server.catalog();
        Lists {
            tools: true,
            prompts: !catalog.prompts().is_empty(),
            resources: !catalog.resources().is_empty(),
        }
    }
}

/// Passes the notifier's changes on to a 2025 session until `end` is cancelled (the
/// session's handler is gone), the notifier is, or the peer cannot be written to.
pub(crate) fn forward_to_session(
    server: &Server,
    peer: Peer<RoleServer>,
    subscriptions: Subscriptions,
    end: CancellationToken,
) {
    let lists = Lists::of(server);
    let mut changes = server.notifier().watch();
    tokio::spawn(async move {
        loop {
            let received = tokio::select! {
                () = end.cancelled() => return,
                received = changes.recv() => received,
            };
            let sent = match received {
                None => return,
                Some(Received::Change(change)) => {
                    session_change(&peer, &subscriptions, lists, change).await
                }
                Some(Received::Lagged(missed)) => {
                    tracing::debug!(missed, "a session fell behind the change notifications");
                    session_catch_up(&peer, &subscriptions, lists).await
                }
            };
            if let Err(e) = sent {
                tracing::debug!(error = %e, "the session is gone: no more change notifications");
                return;
            }
        }
    });
}

async fn session_change(
    peer: &Peer<RoleServer>,
    subscriptions: &Subscriptions,
    lists: Lists,
    change: Change,
) -> Result<(), rmcp::service::ServiceError> {
    match change {
        Change::ResourceUpdated(uri) if subscriptions.contains(&uri) => {
            peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.as_ref()))
                .await
        }
        Change::ResourcesListChanged if lists.resources => {
            peer.notify_resource_list_changed().await
        }
        Change::ToolsListChanged if lists.tools => peer.notify_tool_list_changed().await,
        Change::PromptsListChanged if lists.prompts => peer.notify_prompt_list_changed().await,
        _ => Ok(()),
    }
}

async fn session_catch_up(
    peer: &Peer<RoleServer>,
    subscriptions: &Subscriptions,
    lists: Lists,
) -> Result<(), rmcp::service::ServiceError> {
    for change in [
        Change::ToolsListChanged,
        Change::PromptsListChanged,
        Change::ResourcesListChanged,
    ] {
        session_change(peer, subscriptions, lists, change).await?;
    }
    for uri in subscriptions.uris() {
        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
            .await?;
    }
    Ok(())
}

/// The part of a `subscriptions/listen` filter the server takes: the list-changed kinds, and
/// the requested URIs a resource answers (at most [`MAX_SUBSCRIPTIONS`]). rmcp then keeps
/// only what the server's capabilities advertise.
pub(crate) fn accepted_filter(
    server: &Server,
    requested: &SubscriptionFilter,
) -> SubscriptionFilter {
    let mut accepted = requested.clone();
    if let Some(uris) = &requested.resource_subscriptions {
        let catalog = server.catalog();
        let mut known: Vec<String> = Vec::new();
        for uri in uris {
            if known.len() >= MAX_SUBSCRIPTIONS {
                break;
            }
            if uri.len() <= MAX_URI_BYTES && !known.contains(uri) && catalog.knows_uri(uri) {
                known.push(uri.clone());
            }
        }
        accepted.resource_subscriptions = (!known.is_empty()).then_some(known);
    }
    accepted
}

/// The error a listen past a bound gets (after rmcp's acknowledgment, which it sends before
/// the handler runs).
pub(crate) fn refused(refusal: ListenRefused) -> ErrorData {
    let (limit, scope) = match refusal {
        ListenRefused::ClientFull(n) => (n, "client"),
        ListenRefused::ServerFull(n) => (n, "server"),
    };
    ErrorData::invalid_params(
        refusal.to_string(),
        Some(serde_json::json!({ "limit": limit, "scope": scope })),
    )
}

/// Runs one `subscriptions/listen` stream: a place among the open listens of `client`, then
/// every change the accepted filter lets through, until the client cancels or goes away or
/// the server is `closing` (then `Ok`: rmcp sends the closing result when it still can).
pub(crate) async fn listen(
    server: &Server,
    client: &ClientKey,
    changes: Changes,
    context: SubscriptionContext,
    closing: &CancellationToken,
) -> Result<(), ErrorData> {
    let mut changes = server
        .notifier()
        .count(client, changes)
        .map_err(|refusal| {
            crate::metrics::refused(crate::metrics::Refusal::TooMany);
            refused(refusal)
        })?;
    crate::metrics::open_delta(crate::metrics::Open::Listens, 1);
    /// One fewer open listen however this one ends (the future may be dropped).
    struct Closed;
    impl Drop for Closed {
        fn drop(&mut self) {
            crate::metrics::open_delta(crate::metrics::Open::Listens, -1);
        }
    }
    let _closed = Closed;
    tokio::select! {
        () = run(&context, &mut changes) => {}
        () = closing.cancelled() => {}
    }
    Ok(())
}

/// How long a shutting-down server waits for its open listens to answer before rmcp ends
/// every stream anyway.
#[cfg(feature = "server-http")]
const LISTENS_CLOSE_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);
/// Time for the last closing results to be written once their listens returned.
#[cfg(feature = "server-http")]
const LAST_WRITES: std::time::Duration = std::time::Duration::from_millis(200);

/// Cancels `streams` (rmcp's token: it ends every stream it serves at once, a listen's closing
/// result with it) once `shutdown` is cancelled and the open listens have answered — at once
/// when none is open, else when the last one closed, within [`LISTENS_CLOSE_WITHIN`].
#[cfg(feature = "server-http")]
pub(crate) async fn stop_after_listens(
    shutdown: CancellationToken,
    notifier: crate::context::Notifier,
    streams: CancellationToken,
) {
    shutdown.cancelled().await;
    if notifier.listening() > 0 {
        let deadline = tokio::time::Instant::now() + LISTENS_CLOSE_WITHIN;
        while notifier.listening() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        tokio::time::sleep(LAST_WRITES).await;
    }
    streams.cancel();
}

/// Listeners taken before their `subscriptions/listen` was acknowledged, waiting for the
/// handler's `listen` to pick them up: rmcp acknowledges between the two calls, and a change
/// sent right after the acknowledgment must not be missed. At most [`MAX_PENDING`]; the
/// oldest goes first (it has seen at least what a newer one has).
#[derive(Clone, Debug, Default)]
pub(crate) struct Pending(Arc<Mutex<VecDeque<Changes>>>);

/// Listeners waiting in [`Pending`] (more only when acknowledgments fail to send).
const MAX_PENDING: usize = 64;

impl Pending {
    pub(crate) fn push(&self, changes: Changes) {
        let mut queue = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if queue.len() >= MAX_PENDING {
            queue.pop_front();
        }
        queue.push_back(changes);
    }

    pub(crate) fn take(&self, server: &Server) -> Changes {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or_else(|| server.notifier().watch())
    }
}

async fn run(context: &SubscriptionContext, changes: &mut Changes) {
    // rmcp's acknowledged filter keeps the request's duplicates: look URIs up in a set of
    // the distinct ones (at most MAX_SUBSCRIPTIONS, see `accepted_filter`).
    let uris: BTreeSet<String> = context
        .accepted()
        .resource_subscriptions
        .iter()
        .flatten()
        .cloned()
        .collect();
    loop {
        let received = tokio::select! {
            () = context.cancelled() => return,
            received = changes.recv() => received,
        };
        let sent = match received {
            None => return,
            Some(Received::Change(change)) => send(context, &uris, change).await,
            Some(Received::Lagged(missed)) => {
                tracing::debug!(missed, "a listen fell behind the change notifications");
                catch_up(context, &uris).await
            }
        };
        match sent {
            Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)) => {}
            Err(e) => {
                tracing::debug!(error = %e, "the listen stream is gone");
                return;
            }
        }
    }
}

/// Sends `change` when the accepted filter lets it through.
async fn send(
    context: &SubscriptionContext,
    uris: &BTreeSet<String>,
    change: Change,
) -> Result<(), SubscriptionSendError> {
    let accepted = context.accepted();
    let sink = context.sink();
    match change {
        Change::ResourceUpdated(uri) if uris.contains(uri.as_ref()) => {
            sink.notify_resource_updated(uri.as_ref()).await
        }
        Change::ToolsListChanged if accepted.tools_list_changed == Some(true) => {
            sink.notify_tool_list_changed().await
        }
        Change::PromptsListChanged if accepted.prompts_list_changed == Some(true) => {
            sink.notify_prompt_list_changed().await
        }
        Change::ResourcesListChanged if accepted.resources_list_changed == Some(true) => {
            sink.notify_resource_list_changed().await
        }
        _ => Ok(()),
    }
}

async fn catch_up(
    context: &SubscriptionContext,
    uris: &BTreeSet<String>,
) -> Result<(), SubscriptionSendError> {
    for change in [
        Change::ToolsListChanged,
        Change::PromptsListChanged,
        Change::ResourcesListChanged,
    ] {
        send(context, uris, change).await?;
    }
    for uri in uris {
        context.sink().notify_resource_updated(uri.as_str()).await?;
    }
    Ok(())
}
