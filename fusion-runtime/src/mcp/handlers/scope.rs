//! What the pipeline learns of an rmcp request: its [`RequestScope`] — cancellation, who is
//! calling, and a [`RequestSink`] that sends progress and log messages over the request's
//! connection.

use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
#[allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
#[cfg(feature = "server-http")]
#[allow(deprecated)]
use rmcp::model::{LoggingMessageNotification, ServerJsonRpcMessage, ServerNotification};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};

use super::elicit::{LegacyElicitor, LegacyFacts};
use crate::context::{Elicitor, LogLevel, LogThreshold, RequestScope, RequestSink};
#[cfg(feature = "server-http")]
use crate::mcp::facts::{Exchange, RequestFacts};

/// The scope of an rmcp request, with the default log threshold.
pub fn request_scope(cx: &RequestContext<RoleServer>) -> RequestScope {
    request_scope_in_session(cx, LogThreshold::default())
}

/// The scope of an rmcp request in a session whose log threshold is `log_threshold`. Over
/// HTTP, the client is the one the request layer worked out (see `identity`), or one key for
/// every HTTP caller when the router is served without it; over other transports the
/// connection is the client.
pub(crate) fn request_scope_in_session(
    cx: &RequestContext<RoleServer>,
    log_threshold: LogThreshold,
) -> RequestScope {
    scope_with_sink(cx, log_threshold, false)
}

/// [`request_scope_in_session`] for a 2025 `tools/call`: its sink makes the call's
/// `elicitation/create` elicitor when the handler first asks.
pub(crate) fn legacy_call_scope(
    cx: &RequestContext<RoleServer>,
    log_threshold: LogThreshold,
) -> RequestScope {
    scope_with_sink(cx, log_threshold, true)
}

fn scope_with_sink(
    cx: &RequestContext<RoleServer>,
    log_threshold: LogThreshold,
    legacy: bool,
) -> RequestScope {
    // Over HTTP, the facts the HTTP side worked out once (`mcp::facts`): read here, once.
    #[cfg(feature = "server-http")]
    let facts = RequestFacts::of(cx);
    #[cfg(feature = "server-http")]
    let (client, principal, session_stream, stateless) = match &facts {
        Some(facts) => (
            Some(facts.client.clone()),
            facts.principal.clone(),
            facts.session_stream(),
            facts.is_stateless(),
        ),
        None => (None, None, None, false),
    };
    #[cfg(not(feature = "server-http"))]
    let (client, principal, stateless) = (None, None, false);
    RequestScope {
        cancellation: Some(cx.ct.clone()),
        client,
        sink: Some(Arc::new(PeerSink {
            peer: cx.peer.clone(),
            progress_token: cx.meta.get_progress_token(),
            #[cfg(feature = "server-http")]
            session_stream,
            legacy: legacy.then(|| {
                let facts = LegacyFacts {
                    stateless,
                    meta_capabilities: cx.meta.client_capabilities(),
                };
                (facts, OnceLock::new())
            }),
        })),
        log_threshold,
        principal,
        elicitor: None,
        handoff: None,
        meta: None,
        as_task: false,
    }
}

/// The scope of a 2025 `tools/call` that the HTTP side read and answers without rmcp
/// (`http::room`): the request's facts from `parts`, its log messages sent to
/// `notes` (it has no progress token). Nothing is asked of the client: a stateless request has
/// no way back to it, and a session's (`in_session`) is answered so only when its client
/// declared no way to be asked.
#[cfg(feature = "server-http")]
pub(crate) fn stateless_call_scope(
    parts: &axum::http::request::Parts,
    cancellation: tokio_util::sync::CancellationToken,
    log_threshold: LogThreshold,
    notes: tokio::sync::mpsc::Sender<ServerJsonRpcMessage>,
    in_session: bool,
) -> RequestScope {
    let facts = RequestFacts::of_parts(parts);
    RequestScope {
        cancellation: Some(cancellation),
        client: Some(facts.client.clone()),
        sink: Some(Arc::new(NoteSink { notes, in_session })),
        log_threshold,
        principal: facts.principal.clone(),
        elicitor: None,
        handoff: None,
        meta: None,
        as_task: false,
    }
}

/// The sink of a call rmcp never saw: its log messages go to the HTTP side's channel, which
/// answers in JSON or, once something comes before the result, in SSE (as rmcp would).
#[cfg(feature = "server-http")]
struct NoteSink {
    notes: tokio::sync::mpsc::Sender<ServerJsonRpcMessage>,
    in_session: bool,
}

#[cfg(feature = "server-http")]
impl RequestSink for NoteSink {
    fn has_progress_token(&self) -> bool {
        false
    }

    fn elicitor(&self) -> Option<Arc<dyn Elicitor>> {
        Some(Arc::new(match self.in_session {
            true => super::elicit::CannotAsk::UNDECLARED,
            false => super::elicit::CannotAsk::STATELESS,
        }))
    }

    fn progress(
        &self,
        _: f64,
        _: Option<f64>,
        _: Option<String>,
    ) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(async { Err(NO_PROGRESS_TOKEN.to_owned()) })
    }

    #[allow(deprecated)]
    fn log(
        &self,
        level: LogLevel,
        logger: &'static str,
        data: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), String>> {
        let param = LoggingMessageNotificationParam::new(to_rmcp(level), data).with_logger(logger);
        let note = ServerJsonRpcMessage::notification(
            ServerNotification::LoggingMessageNotification(LoggingMessageNotification::new(param)),
        );
        let notes = self.notes.clone();
        Box::pin(async move { notes.send(note).await.map_err(|e| e.to_string()) })
    }
}

/// Why a call's progress went nowhere: its request carried no progress token.
const NO_PROGRESS_TOKEN: &str = "the client sent no progress token";

/// The request's `_meta`, moved out of `cx` (read everything else of it first); `None` when
/// it sent none.
pub(crate) fn take_meta(
    cx: &mut RequestContext<RoleServer>,
) -> Option<Arc<crate::input::JsonObject>> {
    let meta = std::mem::take(&mut cx.meta.0.0);
    (!meta.is_empty()).then(|| Arc::new(meta))
}

/// Notifications over an rmcp peer, with the request's progress token. A 2025 session
/// call over HTTP sends its log messages on its own response stream (`session_stream`)
/// rather than through the peer, which would put them on the session's GET stream.
struct PeerSink {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    #[cfg(feature = "server-http")]
    session_stream: Option<Exchange>,
    /// A 2025 call's elicitor: what it needs, and the elicitor once made.
    legacy: Option<(LegacyFacts, OnceLock<Arc<LegacyElicitor>>)>,
}

impl RequestSink for PeerSink {
    fn has_progress_token(&self) -> bool {
        self.progress_token.is_some()
    }

    fn elicitor(&self) -> Option<Arc<dyn Elicitor>> {
        let (facts, made) = self.legacy.as_ref()?;
        let elicitor = made.get_or_init(|| Arc::new(LegacyElicitor::from_facts(&self.peer, facts)));
        Some(Arc::clone(elicitor) as Arc<dyn Elicitor>)
    }

    fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'static, Result<(), String>> {
        let Some(token) = self.progress_token.clone() else {
            return Box::pin(async { Err(NO_PROGRESS_TOKEN.to_owned()) });
        };
        let mut param = ProgressNotificationParam::new(token, progress);
        if let Some(total) = total {
            param = param.with_total(total);
        }
        if let Some(message) = message {
            param = param.with_message(message);
        }
        let peer = self.peer.clone();
        Box::pin(async move { peer.notify_progress(param).await.map_err(|e| e.to_string()) })
    }

    #[allow(deprecated)]
    fn log(
        &self,
        level: LogLevel,
        logger: &'static str,
        data: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), String>> {
        let param = LoggingMessageNotificationParam::new(to_rmcp(level), data).with_logger(logger);
        #[cfg(feature = "server-http")]
        if let Some(stream) = &self.session_stream {
            let sent = serde_json::to_value(&param)
                .map_err(|e| e.to_string())
                .and_then(|params| {
                    stream.inject(&serde_json::json!({
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": params,
                    }))
                });
            return Box::pin(async move { sent });
        }
        let peer = self.peer.clone();
        Box::pin(async move {
            peer.notify_logging_message(param)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// The rmcp level of `level`.
#[allow(deprecated)]
pub(crate) fn to_rmcp(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// The level of an rmcp level.
#[allow(deprecated)]
pub(crate) fn from_rmcp(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_trip_through_rmcp() {
        for level in [
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Notice,
            LogLevel::Warning,
            LogLevel::Error,
            LogLevel::Critical,
            LogLevel::Alert,
            LogLevel::Emergency,
        ] {
            assert_eq!(from_rmcp(to_rmcp(level)), level);
        }
    }
}
