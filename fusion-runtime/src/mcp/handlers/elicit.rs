//! [`Elicitor`]s over rmcp: `elicitation/create` to a 2025 client, and multi-round-trip
//! requests (MRTR) for a 2026-07-28 one, whose `requestState` carries the answers so far,
//! signed and bounded, so that no server keeps anything between rounds and any stateless
//! instance (sharing the key) can take the retry.
//!
//! rmcp 3.11 has the MRTR types but no per-version elicitation: `Peer::elicit` refuses a
//! 2026-07-28 request, and the state between rounds is left to the server.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use futures::future::BoxFuture;
use rmcp::model::{InputRequest, InputRequests, ServerRequest};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use crate::auth::Seal;
use crate::context::{ElicitAnswer, ElicitFailure, ElicitRequest, Elicitor};
use crate::store::OnceStore;

/// At most this many forms per call (rounds of a 2026-07-28 call).
pub const MAX_ELICITATION_ROUNDS: usize = 8;
/// The longest `requestState` the server writes or reads.
pub const MAX_REQUEST_STATE_BYTES: usize = 16 * 1024;
/// How long a `requestState` stays valid.
pub const REQUEST_STATE_TTL: Duration = Duration::from_secs(600);
/// How far in the future a `requestState`'s issue time may lie (clock skew between
/// instances); beyond, it is refused.
pub const REQUEST_STATE_SKEW: Duration = Duration::from_secs(5);
/// The environment variable holding the key `requestState` is signed with (at least 32
/// bytes). Without it each process draws its own, so a retry must reach the same process:
/// set it on every instance of a stateless deployment.
pub const REQUEST_STATE_KEY_ENV: &str = "FUSION_REQUEST_STATE_KEY";

/// Whether the client of `cx` declared the `elicitation` capability (per request for
/// 2026-07-28, from `initialize` for a 2025 session).
pub(crate) fn client_can_elicit(cx: &RequestContext<RoleServer>) -> bool {
    cx.client_capabilities()
        .is_some_and(|c| c.elicitation.is_some())
}

const STATELESS: &str = "a stateless HTTP request has no way back to the client";
const NO_CAPABILITY: &str = "it did not declare the elicitation capability";

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

/// What a 2025 request's elicitor needs of its [`RequestContext`], kept so that the elicitor
/// is made only when the handler first asks ([`RequestSink::elicitor`](crate::context::RequestSink::elicitor)).
pub(crate) struct LegacyFacts {
    stateless: bool,
    /// The capabilities the request's `_meta` declared, if any (the session's otherwise).
    meta_capabilities: Option<rmcp::model::ClientCapabilities>,
}

impl LegacyFacts {
    /// The facts of `cx`, whose HTTP request names no session when `stateless`.
    pub(crate) fn of(cx: &RequestContext<RoleServer>, stateless: bool) -> Self {
        LegacyFacts {
            stateless,
            meta_capabilities: cx.meta.client_capabilities(),
        }
    }
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
        let asked = self.ask("elicitation/create", form_params(&request));
        Box::pin(async move {
            let value = asked.await?;
            parse_answer(&value).ok_or_else(|| {
                ElicitFailure::Failed("the client's answer has no valid action".to_owned())
            })
        })
    }

    fn sample(&self, params: Value) -> BoxFuture<'static, Result<Value, ElicitFailure>> {
        let why = match self.unsupported {
            Some(why) if why.starts_with("a stateless") => Some(why),
            _ if !self.can_sample => Some("it did not declare the sampling capability"),
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
    pub(crate) fn new(answers: BTreeMap<String, Value>, cx: &RequestContext<RoleServer>) -> Self {
        ModernElicitor {
            answers,
            capable: client_can_elicit(cx),
            can_sample: client_can_sample(cx),
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
        let asked = self.ask("elicitation/create", form_params(&request));
        Box::pin(async move {
            let value = asked.await?;
            parse_answer(&value).ok_or_else(|| {
                ElicitFailure::Failed("the client's answer has no valid action".to_owned())
            })
        })
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

/// What a `requestState` is bound to: the tool, its arguments and who called (the
/// principal's subject, else the client's key), so it cannot be replayed on another call or
/// by another caller; and the key it is signed with.
pub(crate) struct Binding(String, Option<Arc<[u8]>>);

impl Binding {
    pub(crate) fn of(
        tool: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        owner: &str,
    ) -> Self {
        let canonical = arguments.map(canonical_json).unwrap_or_default();
        let digest = Sha256::digest(format!("{tool}\n{canonical}\n{owner}").as_bytes());
        Binding(BASE64_URL_SAFE_NO_PAD.encode(digest), None)
    }

    /// Signed with `key` (the builder's), or else [`REQUEST_STATE_KEY_ENV`] or the
    /// process's own.
    pub(crate) fn signed_with(mut self, key: Option<Arc<[u8]>>) -> Self {
        self.1 = key;
        self
    }

    fn key(&self) -> Option<&[u8]> {
        match &self.1 {
            Some(own) => Some(own),
            None => key(),
        }
    }
}

/// JSON with object keys sorted, whatever the map's order.
fn canonical_json(map: &serde_json::Map<String, Value>) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let b: BTreeMap<&String, Value> = m.iter().map(|(k, v)| (k, sorted(v))).collect();
                serde_json::to_value(b).unwrap_or(Value::Null)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(&Value::Object(map.clone())).to_string()
}

/// The version of [`State`] written and read.
const STATE_VERSION: u8 = 2;

#[derive(Serialize, Deserialize)]
struct State {
    v: u8,
    iat: u64,
    bind: String,
    /// The one-time id: a state that brings answers is taken once ([`OnceStore`]).
    n: String,
    /// The key of the question this state waits for: the only answer a retry may add.
    ask: String,
    answers: BTreeMap<String, Value>,
}

/// Why a retry's answers were not taken.
pub(crate) enum Refused {
    /// The state fails verification, expired, lies in the future, or belongs to another
    /// call or caller: `-32602`.
    Invalid(ErrorData),
    /// The one-time store could not say whether the state was used: nothing runs (fail
    /// closed); the same retry may be sent again later.
    Unchecked(String),
}

/// The answers of a retried request: the sealed ones plus the retry's answer to the question
/// the state waits for — nothing else of `inputResponses` (a first call's, or answers to keys
/// the server never asked, are dropped). A state that brings answers is used once: presented
/// again, its answers are dropped and the handler asks afresh.
pub(crate) async fn answers(
    state: Option<&str>,
    responses: Option<&BTreeMap<String, Value>>,
    binding: &Binding,
    once: &dyn OnceStore,
) -> Result<BTreeMap<String, Value>, Refused> {
    let Some(sealed) = state else {
        return Ok(BTreeMap::new());
    };
    let state = binding
        .key()
        .and_then(|key| open(sealed, key))
        .ok_or_else(|| Refused::Invalid(bad_state()))?;
    let now = now_secs();
    let fresh = state.iat <= now.saturating_add(REQUEST_STATE_SKEW.as_secs())
        && now.saturating_sub(state.iat) <= REQUEST_STATE_TTL.as_secs();
    if state.v != STATE_VERSION || !fresh || state.bind != binding.0 {
        return Err(Refused::Invalid(bad_state()));
    }
    let mut answers = state.answers;
    if answers.len() < MAX_ELICITATION_ROUNDS
        && let Some(answer) = responses.and_then(|r| r.get(&state.ask))
    {
        answers.entry(state.ask).or_insert_with(|| answer.clone());
    }
    if answers.is_empty() {
        return Ok(answers);
    }
    let lives = (state.iat + REQUEST_STATE_TTL.as_secs() + REQUEST_STATE_SKEW.as_secs())
        .saturating_sub(now)
        .max(1);
    match once
        .first_use("rs", state.n.as_bytes(), Duration::from_secs(lives))
        .await
    {
        Ok(true) => Ok(answers),
        Ok(false) => {
            tracing::info!("a requestState was presented again: its answers are not taken");
            Ok(BTreeMap::new())
        }
        Err(e) => {
            tracing::warn!(store = once.name(), error = %e, "a requestState could not be checked");
            Err(Refused::Unchecked(
                "The answers of this request could not be checked just now (the one-time \
                 store did not answer); nothing was run"
                    .to_owned(),
            ))
        }
    }
}

fn bad_state() -> ErrorData {
    ErrorData::invalid_params(
        "requestState failed verification; call the tool again without it",
        None,
    )
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `requestState`: `rs1.`, the state in base64url, `.`, its HMAC-SHA256 (see [`Seal`]).
const SEALED_STATE: Seal = Seal::new("rs1.", MAX_REQUEST_STATE_BYTES);

fn seal(state: &State, key: &[u8]) -> Result<String, String> {
    let payload = serde_json::to_vec(state).map_err(|e| e.to_string())?;
    SEALED_STATE
        .seal(key, &payload)
        .map_err(|_| format!("the answers so far exceed {MAX_REQUEST_STATE_BYTES} bytes"))
}

fn open(sealed: &str, key: &[u8]) -> Option<State> {
    let payload = SEALED_STATE.open(key, sealed).ok()?;
    serde_json::from_slice(&payload).ok()
}

/// The signing key without one from the builder: [`REQUEST_STATE_KEY_ENV`] when it holds at
/// least 32 bytes, else the process's own ([`process_key`](crate::auth::seal::process_key));
/// `None` only when that one cannot be drawn.
pub(super) fn key() -> Option<&'static [u8]> {
    static KEY: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    KEY.get_or_init(|| {
        let own = || crate::auth::seal::process_key().map(|k| k.to_vec());
        match std::env::var(REQUEST_STATE_KEY_ENV) {
            Ok(k) if k.len() >= 32 => Some(k.into_bytes()),
            Ok(_) => {
                tracing::warn!(
                    "{REQUEST_STATE_KEY_ENV} is shorter than 32 bytes: using a per-process key"
                );
                own()
            }
            Err(_) => own(),
        }
    })
    .as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::MemoryOnce;

    fn binding() -> Binding {
        Binding::of("billing_refund", Some(&serde_json::Map::new()), "sub:alice")
    }

    fn state(iat: u64, bind: &str) -> State {
        State {
            v: STATE_VERSION,
            iat,
            bind: bind.to_owned(),
            n: format!("n{iat}{bind}"),
            ask: "e1".to_owned(),
            answers: BTreeMap::from([("e0".to_owned(), json!({"action": "decline"}))]),
        }
    }

    /// The answers of a retry, or the refusal's JSON-RPC code (`0` for an unchecked one).
    async fn taken(
        sealed: Option<&str>,
        responses: Option<&BTreeMap<String, Value>>,
        binding: &Binding,
        once: &MemoryOnce,
    ) -> Result<BTreeMap<String, Value>, i32> {
        answers(sealed, responses, binding, once)
            .await
            .map_err(|r| match r {
                Refused::Invalid(e) => e.code.0,
                Refused::Unchecked(_) => 0,
            })
    }

    /// rmcp parses the request into its typed schema on the way out: every SEP-1330 enum form
    /// and every SEP-1034 default must survive it.
    #[test]
    fn every_form_shape_survives_rmcps_typed_request() {
        let schema = json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2"]},
                "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["One", "Two"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First"}]}},
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "verified": {"type": "boolean", "default": true},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"}
            },
            "required": ["name"]
        });
        let params = json!({"mode": "form", "message": "m", "requestedSchema": schema});
        let wire = json!({"method": "elicitation/create", "params": params});
        let request: Result<ServerRequest, _> = serde_json::from_value(wire.clone());
        let back = request
            .map_err(|e| e.to_string())
            .and_then(|r| serde_json::to_value(r).map_err(|e| e.to_string()));
        let back = back.unwrap_or_else(|e| panic!("{e}"));
        let props = &back["params"]["requestedSchema"]["properties"];
        for (name, expected) in schema["properties"].as_object().into_iter().flatten() {
            for (key, value) in expected.as_object().into_iter().flatten() {
                assert_eq!(&props[name][key], value, "{name}.{key}: {back}");
            }
        }
        let input: Result<InputRequest, _> = serde_json::from_value(wire);
        assert!(input.is_ok(), "{input:?}");
    }

    #[tokio::test]
    async fn a_sealed_state_opens_only_untampered_fresh_and_for_its_own_call_and_caller() {
        let once = MemoryOnce::default();
        let b = binding();
        let k = key().expect("a key");
        let sealed = seal(&state(now_secs(), &b.0), k).unwrap_or_default();
        let opened = taken(Some(&sealed), None, &b, &once).await;
        assert_eq!(opened.map(|a| a.len()), Ok(1));

        // Tampered: one character of the payload changed.
        let mut tampered = sealed.clone().into_bytes();
        tampered[SEALED_STATE.prefix().len() + 3] ^= 1;
        let tampered = String::from_utf8(tampered).unwrap_or_default();
        assert_eq!(taken(Some(&tampered), None, &b, &once).await, Err(-32602));

        // Expired, and issued in the future (past the skew).
        let old = seal(
            &state(now_secs() - REQUEST_STATE_TTL.as_secs() - 5, &b.0),
            k,
        );
        let old = old.unwrap_or_default();
        assert_eq!(taken(Some(&old), None, &b, &once).await, Err(-32602));
        let ahead = seal(&state(now_secs() + 60, &b.0), k).unwrap_or_default();
        assert_eq!(taken(Some(&ahead), None, &b, &once).await, Err(-32602));

        // Another call's (other arguments), another caller's.
        let mut args = serde_json::Map::new();
        args.insert("invoice_id".into(), json!("inv_2026_0002"));
        let other = Binding::of("billing_refund", Some(&args), "sub:alice");
        assert_eq!(taken(Some(&sealed), None, &other, &once).await, Err(-32602));
        let bob = Binding::of("billing_refund", Some(&serde_json::Map::new()), "sub:bob");
        assert_eq!(taken(Some(&sealed), None, &bob, &once).await, Err(-32602));

        // Signed with another key (the builder's): refused; opened with that key: fine.
        let own: Arc<[u8]> = Arc::from(&[7u8; 32][..]);
        let keyed = binding().signed_with(Some(own.clone()));
        assert!(taken(Some(&sealed), None, &keyed, &once).await.is_err());
        let mut fresh = state(now_secs(), &keyed.0);
        fresh.n = "another".into();
        let sealed_own = seal(&fresh, &own).unwrap_or_default();
        assert!(taken(Some(&sealed_own), None, &keyed, &once).await.is_ok());

        // Oversized.
        let huge = format!("rs1.{}", "a".repeat(MAX_REQUEST_STATE_BYTES));
        assert_eq!(taken(Some(&huge), None, &b, &once).await, Err(-32602));
    }

    #[tokio::test]
    async fn only_the_asked_key_is_answered_and_a_state_with_answers_is_taken_once() {
        let once = MemoryOnce::default();
        let b = binding();
        let sealed = seal(&state(now_secs(), &b.0), key().expect("a key")).unwrap_or_default();
        let mut responses = BTreeMap::new();
        responses.insert("e0".to_owned(), json!({"action": "accept", "content": {}}));
        responses.insert("e1".to_owned(), json!({"action": "accept", "content": {}}));
        for i in 2..100 {
            responses.insert(format!("e{i}"), json!({"action": "cancel"}));
        }
        let merged = taken(Some(&sealed), Some(&responses), &b, &once).await;
        let merged = merged.unwrap_or_default();
        assert_eq!(
            merged.len(),
            2,
            "the sealed e0 and the asked e1: {merged:?}"
        );
        assert_eq!(
            merged["e0"],
            json!({"action": "decline"}),
            "sealed answers stay"
        );
        // Presented again: nothing is taken, the handler asks afresh.
        let again = taken(Some(&sealed), Some(&responses), &b, &once).await;
        assert_eq!(again, Ok(BTreeMap::new()));
        // A first call (no state) answers nothing, whatever it sends.
        let first = taken(None, Some(&responses), &b, &once).await;
        assert_eq!(first, Ok(BTreeMap::new()));
        // A store that cannot decide: refused, unchecked.
        let full = MemoryOnce::new(0);
        let mut other = state(now_secs(), &b.0);
        other.n = "other".into();
        let other = seal(&other, key().expect("a key")).unwrap_or_default();
        assert_eq!(taken(Some(&other), None, &b, &full).await, Err(0));
    }

    #[test]
    fn argument_order_does_not_change_the_binding() {
        let a: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"a":1,"b":{"y":2,"x":3}}"#).unwrap_or_default();
        let b: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"b":{"x":3,"y":2},"a":1}"#).unwrap_or_default();
        let of = |tool, args, owner| Binding::of(tool, Some(args), owner).0;
        assert_eq!(of("t", &a, "o"), of("t", &b, "o"));
        assert_ne!(of("t", &a, "o"), of("u", &a, "o"));
        assert_ne!(of("t", &a, "o"), of("t", &a, "p"));
    }
}
