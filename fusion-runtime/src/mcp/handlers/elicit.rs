//! [`Elicitor`]s over rmcp: `elicitation/create` to a 2025 client, and multi-round-trip
//! requests (MRTR) for a 2026-07-28 one, whose `requestState` carries the answers so far,
//! signed and bounded, so that no server keeps anything between rounds and any stateless
//! instance (sharing the key) can take the retry.
//!
//! rmcp 3.11 has the MRTR types but no per-version elicitation: `Peer::elicit` refuses a
//! 2026-07-28 request, and the state between rounds is left to the server.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use futures::future::BoxFuture;
use rmcp::model::{InputRequest, InputRequests, ServerRequest};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::context::{ElicitAnswer, ElicitFailure, ElicitRequest, Elicitor};

use super::request_state::{Binding, STATE_VERSION, State, now_secs, seal};
pub use super::request_state::{
    MAX_ELICITATION_ROUNDS, MAX_REQUEST_STATE_BYTES, REQUEST_STATE_KEY_ENV, REQUEST_STATE_SKEW,
    REQUEST_STATE_TTL,
};

/// Whether the client of `cx` declared the `elicitation` capability (per request for
/// 2026-07-28, from `initialize` for a 2025 session).
pub(crate) fn client_can_elicit(cx: &RequestContext<RoleServer>) -> bool {
    cx.client_capabilities()
        .is_some_and(|c| c.elicitation.is_some())
}

const STATELESS: &str = "a stateless HTTP request has no way back to the client";
const NO_CAPABILITY: &str = "it did not declare the elicitation capability";
const NO_SAMPLING: &str = "it did not declare the sampling capability";

/// Why a 2025 request cannot be asked anything, if it cannot.
fn legacy_unsupported(cx: &RequestContext<RoleServer>) -> Option<&'static str> {
    if is_stateless_http(cx) {
        return Some(STATELESS);
    }
    (!client_can_elicit(cx)).then_some(NO_CAPABILITY)
}

/// Whether `cx` is an HTTP request without a session.
fn is_stateless_http(cx: &RequestContext<RoleServer>) -> bool {
    #[cfg(feature = "server-http")]
    if let Some(facts) = crate::mcp::facts::RequestFacts::of(cx) {
        return facts.is_stateless();
    }
    let _ = cx;
    false
}

/// The elicitor of a 2025 call rmcp never saw (`http::room`): it asks nothing,
/// and says why as [`LegacyElicitor`] would — [`CannotAsk::STATELESS`] for a stateless
/// request (no way back to the client), [`CannotAsk::UNDECLARED`] for a live session's (its
/// client declared neither `elicitation` nor `sampling`; only such sessions' calls are).
#[cfg(feature = "server-http")]
pub(crate) struct CannotAsk {
    elicit: &'static str,
    sample: &'static str,
}

#[cfg(feature = "server-http")]
impl CannotAsk {
    pub(crate) const STATELESS: CannotAsk = CannotAsk {
        elicit: STATELESS,
        sample: STATELESS,
    };
    pub(crate) const UNDECLARED: CannotAsk = CannotAsk {
        elicit: NO_CAPABILITY,
        sample: NO_SAMPLING,
    };
}

#[cfg(feature = "server-http")]
impl Elicitor for CannotAsk {
    fn elicit(&self, _: ElicitRequest) -> BoxFuture<'static, Result<ElicitAnswer, ElicitFailure>> {
        let why = self.elicit;
        Box::pin(async move { Err(ElicitFailure::Unsupported(why.to_owned())) })
    }

    fn sample(&self, _: Value) -> BoxFuture<'static, Result<Value, ElicitFailure>> {
        let why = self.sample;
        Box::pin(async move { Err(ElicitFailure::Unsupported(why.to_owned())) })
    }
}

/// What a 2025 request's elicitor needs of its [`RequestContext`], kept so that the elicitor
/// is made only when the handler first asks ([`RequestSink::elicitor`](crate::context::RequestSink::elicitor)).
pub(crate) struct LegacyFacts {
    /// The request names no session (stateless HTTP).
    pub(crate) stateless: bool,
    /// The capabilities the request's `_meta` declared, if any (the session's otherwise).
    pub(crate) meta_capabilities: Option<rmcp::model::ClientCapabilities>,
}

/// `elicitation/create` over a 2025 session.
pub(crate) struct LegacyElicitor {
    peer: Peer<RoleServer>,
    unsupported: Option<&'static str>,
    can_sample: bool,
    asked: AtomicUsize,
}

impl LegacyElicitor {
    pub(crate) fn new(cx: &RequestContext<RoleServer>) -> Self {
        LegacyElicitor {
            peer: cx.peer.clone(),
            unsupported: legacy_unsupported(cx),
            can_sample: client_can_sample(cx),
            asked: AtomicUsize::new(0),
        }
    }

    /// The elicitor of a request whose facts were kept (see [`LegacyFacts`]), made when its
    /// handler first asks.
    pub(crate) fn from_facts(peer: &Peer<RoleServer>, facts: &LegacyFacts) -> Self {
        // As `RequestContext::client_capabilities` for a 2025 request: `_meta`'s, else the
        // session's.
        let capabilities = facts
            .meta_capabilities
            .clone()
            .or_else(|| peer.peer_info().map(|info| info.capabilities.clone()));
        let can_elicit = capabilities
            .as_ref()
            .is_some_and(|c| c.elicitation.is_some());
        let unsupported = if facts.stateless {
            Some(STATELESS)
        } else {
            (!can_elicit).then_some(NO_CAPABILITY)
        };
        LegacyElicitor {
            peer: peer.clone(),
            unsupported,
            can_sample: capabilities.is_some_and(|c| c.sampling.is_some()),
            asked: AtomicUsize::new(0),
        }
    }

    /// Sends `method` with `params` to the client and returns its result as JSON.
    fn ask(
        &self,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, ElicitFailure>> {
        if self.asked.fetch_add(1, Ordering::Relaxed) >= MAX_ELICITATION_ROUNDS {
            return Box::pin(async { Err(too_many()) });
        }
        let peer = self.peer.clone();
        Box::pin(async move {
            let wire = json!({ "method": method, "params": params });
            let request: ServerRequest = serde_json::from_value(wire)
                .map_err(|e| ElicitFailure::Failed(format!("building the request: {e}")))?;
            let result = peer
                .send_request(request)
                .await
                .map_err(|e| ElicitFailure::Failed(e.to_string()))?;
            serde_json::to_value(result).map_err(|e| ElicitFailure::Failed(e.to_string()))
        })
    }
}

/// Whether the client of `cx` declared the `sampling` capability.
pub(crate) fn client_can_sample(cx: &RequestContext<RoleServer>) -> bool {
    cx.client_capabilities()
        .is_some_and(|c| c.sampling.is_some())
}

impl Elicitor for LegacyElicitor {
    fn elicit(
        &self,
        request: ElicitRequest,
    ) -> BoxFuture<'static, Result<ElicitAnswer, ElicitFailure>> {
        if let Some(why) = self.unsupported {
            return Box::pin(async move { Err(ElicitFailure::Unsupported(why.to_owned())) });
        }
        read_answer(self.ask("elicitation/create", form_params(&request)))
    }

    fn sample(&self, params: Value) -> BoxFuture<'static, Result<Value, ElicitFailure>> {
        let why = match self.unsupported {
            Some(why) if why.starts_with("a stateless") => Some(why),
            _ if !self.can_sample => Some(NO_SAMPLING),
            _ => None,
        };
        if let Some(why) = why {
            return Box::pin(async move { Err(ElicitFailure::Unsupported(why.to_owned())) });
        }
        self.ask("sampling/createMessage", params)
    }
}

pub(crate) fn too_many() -> ElicitFailure {
    ElicitFailure::Failed(format!(
        "a call may ask at most {MAX_ELICITATION_ROUNDS} questions"
    ))
}

pub(crate) fn form_params(request: &ElicitRequest) -> Value {
    json!({
        "mode": "form",
        "message": request.message,
        "requestedSchema": request.requested_schema,
    })
}

/// An `ElicitResult` as JSON → the answer.
pub(crate) fn parse_answer(value: &Value) -> Option<ElicitAnswer> {
    match value.get("action")?.as_str()? {
        "accept" => Some(ElicitAnswer::Accept(
            value
                .get("content")
                .filter(|c| c.is_object())
                .cloned()
                .unwrap_or_else(|| json!({})),
        )),
        "decline" => Some(ElicitAnswer::Decline),
        "cancel" => Some(ElicitAnswer::Cancel),
        _ => None,
    }
}

/// A form the handler is waiting for, to send as `input_required`.
pub(crate) struct Needed {
    key: String,
    method: &'static str,
    params: Value,
}

/// MRTR for a 2026-07-28 request: the k-th `elicit` of a run is `e{k}`; its answer is in
/// the opened `requestState` or the retry's `inputResponses`, or the call ends with
/// `input_required`.
pub(crate) struct ModernElicitor {
    answers: BTreeMap<String, Value>,
    capable: bool,
    can_sample: bool,
    asked: AtomicUsize,
    needed: Mutex<Option<Needed>>,
    notify: Notify,
}

impl ModernElicitor {
    /// The elicitor of a request that carried `answers` (by key), from a client that declared
    /// `capabilities`.
    pub(crate) fn new(
        answers: BTreeMap<String, Value>,
        capabilities: Option<&rmcp::model::ClientCapabilities>,
    ) -> Self {
        ModernElicitor {
            answers,
            capable: capabilities.is_some_and(|c| c.elicitation.is_some()),
            can_sample: capabilities.is_some_and(|c| c.sampling.is_some()),
            asked: AtomicUsize::new(0),
            needed: Mutex::new(None),
            notify: Notify::new(),
        }
    }

    /// Resolves when the handler asked a question it has no answer for.
    pub(crate) async fn input_needed(&self) {
        loop {
            let notified = self.notify.notified();
            if self
                .needed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
            {
                return;
            }
            notified.await;
        }
    }

    /// The `input_required` answer: the pending form and the sealed answers so far.
    pub(crate) fn input_required(
        &self,
        binding: &Binding,
    ) -> Result<(InputRequests, String), String> {
        let needed = self
            .needed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or("no pending question")?;
        let request: InputRequest = serde_json::from_value(json!({
            "method": needed.method,
            "params": needed.params,
        }))
        .map_err(|e| e.to_string())?;
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce)
            .map_err(|_| "no randomness for the requestState's one-time id")?;
        let state = seal(
            &State {
                v: STATE_VERSION,
                iat: now_secs(),
                bind: binding.0.clone(),
                n: BASE64_URL_SAFE_NO_PAD.encode(nonce),
                ask: needed.key.clone(),
                answers: self.answers.clone(),
            },
            binding
                .key()
                .ok_or("no key to sign the requestState: the system gave no randomness")?,
        )?;
        Ok((BTreeMap::from([(needed.key, request)]), state))
    }
}

impl ModernElicitor {
    /// The k-th question of this run: its answer when the client sent one, else the call
    /// ends with `input_required` (this future never resolves; the handler is dropped).
    fn ask(
        &self,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, ElicitFailure>> {
        let k = self.asked.fetch_add(1, Ordering::Relaxed);
        if k >= MAX_ELICITATION_ROUNDS {
            return Box::pin(async { Err(too_many()) });
        }
        let key = format!("e{k}");
        if let Some(answer) = self.answers.get(&key) {
            let answer = answer.clone();
            return Box::pin(async move { Ok(answer) });
        }
        *self.needed.lock().unwrap_or_else(PoisonError::into_inner) = Some(Needed {
            key,
            method,
            params,
        });
        self.notify.notify_waiters();
        Box::pin(std::future::pending())
    }
}

impl Elicitor for Arc<ModernElicitor> {
    fn elicit(
        &self,
        request: ElicitRequest,
    ) -> BoxFuture<'static, Result<ElicitAnswer, ElicitFailure>> {
        if !self.capable {
            return Box::pin(async {
                Err(ElicitFailure::Unsupported(
                    "it did not declare the elicitation capability".to_owned(),
                ))
            });
        }
        read_answer(self.ask("elicitation/create", form_params(&request)))
    }

    fn sample(&self, params: Value) -> BoxFuture<'static, Result<Value, ElicitFailure>> {
        if !self.can_sample {
            return Box::pin(async {
                Err(ElicitFailure::Unsupported(
                    "it did not declare the sampling capability".to_owned(),
                ))
            });
        }
        self.ask("sampling/createMessage", params)
    }
}

/// What the client answered to an `elicitation/create` `asked`: its action and content.
fn read_answer(
    asked: BoxFuture<'static, Result<Value, ElicitFailure>>,
) -> BoxFuture<'static, Result<ElicitAnswer, ElicitFailure>> {
    Box::pin(async move {
        let value = asked.await?;
        parse_answer(&value).ok_or_else(|| {
            ElicitFailure::Failed("the client's answer has no valid action".to_owned())
        })
    })
}

#[cfg(test)]
mod tests;
