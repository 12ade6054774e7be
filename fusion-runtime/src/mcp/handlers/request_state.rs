//! A 2026-07-28 call's `requestState`: what it is bound to ([`Binding`]), the answers it
//! carries, sealed with the server's key and a time to live, and opened again on the retry
//! ([`answers`]), each one-time state consumed once.
//!
//! Reads: a retry's `requestState` and `inputResponses`, the one-time store. Writes: the
//! sealed state of an `input_required` result.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

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

/// What a `requestState` is bound to: the tool, its arguments and who called (the
/// principal's subject, else the client's key), so it cannot be replayed on another call or
/// by another caller; and the key it is signed with.
pub(crate) struct Binding(pub(crate) String, Option<Arc<[u8]>>);

impl Binding {
    /// The SHA-256 of `tool`, the arguments as [canonical JSON](write_sorted) and `owner`, one
    /// line each, streamed into the hash (no copy of the arguments, no text of them).
    pub(crate) fn of(
        tool: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        owner: &str,
    ) -> Self {
        let mut hash = Hashing(Sha256::new());
        hash.0.update(tool.as_bytes());
        hash.0.update(b"\n");
        if let Some(arguments) = arguments {
            // A hash takes every byte: nothing here can fail.
            let _ = write_sorted_map(&mut hash, arguments);
        }
        hash.0.update(b"\n");
        hash.0.update(owner.as_bytes());
        Binding(BASE64_URL_SAFE_NO_PAD.encode(hash.0.finalize()), None)
    }

    /// Signed with `key` (the builder's), or else [`REQUEST_STATE_KEY_ENV`] or the
    /// process's own.
    pub(crate) fn signed_with(mut self, key: Option<Arc<[u8]>>) -> Self {
        self.1 = key;
        self
    }

    pub(crate) fn key(&self) -> Option<&[u8]> {
        match &self.1 {
            Some(own) => Some(own),
            None => key(),
        }
    }
}

/// Writes `value` as compact JSON with every object's keys sorted (by their bytes), whatever
/// the maps' order: the text `serde_json` prints for the value rebuilt with sorted maps.
pub(crate) fn write_sorted(out: &mut impl io::Write, value: &Value) -> io::Result<()> {
    match value {
        Value::Object(map) => write_sorted_map(out, map),
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_sorted(out, item)?;
            }
            out.write_all(b"]")
        }
        scalar => Ok(serde_json::to_writer(out, scalar)?),
    }
}

fn write_sorted_map(
    out: &mut impl io::Write,
    map: &serde_json::Map<String, Value>,
) -> io::Result<()> {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.write_all(b"{")?;
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, key)?;
        out.write_all(b":")?;
        write_sorted(out, value)?;
    }
    out.write_all(b"}")
}

/// A hash written to as a byte sink.
struct Hashing(Sha256);

impl io::Write for Hashing {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The version of [`State`] written and read.
pub(crate) const STATE_VERSION: u8 = 2;

#[derive(Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) v: u8,
    pub(crate) iat: u64,
    pub(crate) bind: String,
    /// The one-time id: a state that brings answers is taken once ([`OnceStore`]).
    pub(crate) n: String,
    /// The key of the question this state waits for: the only answer a retry may add.
    pub(crate) ask: String,
    pub(crate) answers: BTreeMap<String, Value>,
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

pub(crate) fn bad_state() -> ErrorData {
    ErrorData::invalid_params(
        "requestState failed verification; call the tool again without it",
        None,
    )
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Seals `state` with rmcp's [`RequestStateCodec`] (HMAC-SHA256 over the JSON, readable
/// but not forgeable) and an expiry of [`REQUEST_STATE_TTL`] plus the clock skew allowed
/// between instances. `Err` when the key is unusable or the state outgrows
/// [`MAX_REQUEST_STATE_BYTES`].
pub(crate) fn seal(state: &State, key: &[u8]) -> Result<String, String> {
    let codec = RequestStateCodec::try_new(key).map_err(|e| e.to_string())?;
    let options = SealOptions::new().ttl(REQUEST_STATE_TTL + REQUEST_STATE_SKEW);
    let sealed = codec
        .seal_json_with(state, &options)
        .map_err(|e| e.to_string())?;
    if sealed.len() > MAX_REQUEST_STATE_BYTES {
        return Err(format!(
            "the answers so far exceed {MAX_REQUEST_STATE_BYTES} bytes"
        ));
    }
    Ok(sealed)
}

/// Opens a `requestState` sealed by [`seal`] with `key`: `None` when it is longer than
/// [`MAX_REQUEST_STATE_BYTES`] (not read at all), forged, altered, expired, or not a
/// [`State`].
pub(crate) fn open(sealed: &str, key: &[u8]) -> Option<State> {
    if sealed.len() > MAX_REQUEST_STATE_BYTES {
        return None;
    }
    let codec = RequestStateCodec::try_new(key).ok()?;
    codec.open_json(sealed).ok()
}

/// The signing key without one from the builder: [`REQUEST_STATE_KEY_ENV`] when it holds at
/// least 32 bytes, else the process's own ([`process_key`](crate::auth::seal::process_key));
/// `None` only when that one cannot be drawn.
pub(crate) fn key() -> Option<&'static [u8]> {
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
