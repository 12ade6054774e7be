//! Delegation: a gateway hands a call to an upstream MCP server with a signed, short-lived,
//! one-time token saying on whose behalf, for which server, and with what carry-over state.
//!
//! # What is signed
//!
//! A token is the JSON object
//!
//! ```text
//! {"v":1,"iss":"triage","sub":"user-7","aud":"billing","iat":1796300000,"exp":1796300030,
//!  "jti":"q1Xo3cUe0mJb9vQy6Tg2Zw","carry":{"invoice":"inv_2026_0001"}}
//! ```
//!
//! — issuer (the gateway), subject (on whose behalf), audience (the upstream's domain),
//! issued-at and expiry (unix seconds), a one-time id (16 random bytes in base64url) and the
//! conversation's carry-over state — sealed with HMAC-SHA256 under a key the gateway and the
//! upstream share ([`Seal`]):
//!
//! ```text
//! dg1.<the object in unpadded base64url>.<HMAC-SHA256 of "dg1.<body>" in unpadded base64url>
//! ```
//!
//! The token is signed, not encrypted: put nothing in `carry` that the upstream's operator may
//! not read. It travels in the `tools/call` request's `_meta`, under [`DELEGATION_META_KEY`]:
//! `"_meta": {"dev.fusion/delegation": "dg1.…"}`.
//!
//! # What is checked, in order
//!
//! [`DelegationVerifier::verify`]: the size bound ([`MAX_TOKEN_BYTES`], before anything is
//! decoded), the MAC (constant time), the expiry and issued-at (with a leeway for clock skew),
//! the audience (this server), the issuer (when [`DelegationVerifier::issuers`] names the
//! trusted ones), the lifetime (`exp - iat` at most [`DelegationVerifier::max_ttl`]), and last
//! the one-time id: a token is accepted once. Only a token that passed every other check
//! takes a place in the replay store, so forged or stale tokens cannot fill it.
//!
//! # Bounds
//!
//! - the key is at least [`MIN_KEY_BYTES`] bytes (draw it at random: `openssl rand -base64 48`);
//!   while keys rotate, [`DelegationVerifier::also_accept`] takes the old one too;
//! - `carry` is at most [`MAX_CARRY_BYTES`] of JSON, issuer, subject and audience at most
//!   [`MAX_NAME_BYTES`] each, the whole token at most [`MAX_TOKEN_BYTES`];
//! - the replay store holds at most [`DelegationVerifier::replay_capacity`] ids (default
//!   [`DEFAULT_REPLAY_CAPACITY`]). Each id is kept until its token could no longer be
//!   accepted anyway (`exp` plus the leeway), then dropped. When the store is full of ids
//!   still live, a new token is refused (`ReplayStoreFull`, sent as `SERVER_BUSY` with the
//!   time until the first id leaves): the verifier fails closed rather than forget an id
//!   that could be replayed. It holds about `capacity / lifetime` calls per second: 65 536
//!   ids with 60-second tokens is over 1 000 delegated calls a second.
//!
//! # The replay store: per process, or shared
//!
//! By default it lives in the verifier's memory. Behind several upstream instances sharing
//! one key, a token accepted by one instance would be unknown to the others, and could be
//! replayed once on each of them within its lifetime; a restart forgets the store too.
//! [`DelegationVerifier::replay_store`] keeps the ids in a store every instance shares
//! ([`RedisOnce`](crate::store::RedisOnce): one `SET NX PX` per call, kept as long as the
//! token could be accepted): a token is then accepted once by the whole cluster, and while
//! the store cannot answer, calls are refused with `SERVER_BUSY` (retry in 5 s) rather than
//! run unchecked. The [`middleware`](DelegationVerifier::middleware) uses it;
//! [`verify`](DelegationVerifier::verify) stays in process.
//!
//! # On the wire
//!
//! [`DelegationVerifier::middleware`] answers a call whose token is missing, malformed,
//! tampered with, expired, replayed, or meant for another server with an `UNAUTHORIZED`
//! envelope whose recovery says what to do ([`DelegationError::to_tool_error`]); it never
//! echoes the token or the key. A call that passes reaches the handler with its
//! [`Delegation`] ([`Context::delegation`](crate::Context::delegation)). Like every
//! middleware it runs after routing, guards and argument validation: a call with invalid
//! arguments gets its `<validation_error>` whether or not its token is valid, and takes no
//! place in the replay store.
//!
//! Retrying a call means minting a new token: a gateway that re-sends the same request (with
//! the same token) to the same upstream process after a timeout gets `UNAUTHORIZED`
//! (already used).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::seal::{Seal, SealError};
use crate::envelope::{ToolError, codes, error};
use crate::store::OnceStore;

/// The request `_meta` key that carries the delegation token of a `tools/call`.
pub const DELEGATION_META_KEY: &str = "dev.fusion/delegation";
/// The shortest key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 32;
/// The longest token written or read, in bytes.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// The largest carry-over state, in bytes of compact JSON.
pub const MAX_CARRY_BYTES: usize = 8 * 1024;
/// The longest issuer, subject or audience, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// How many one-time ids a verifier remembers, unless told otherwise.
pub const DEFAULT_REPLAY_CAPACITY: usize = 65_536;
/// The longest token lifetime a verifier accepts, unless told otherwise.
pub const DEFAULT_MAX_TTL: Duration = Duration::from_secs(300);
/// The clock skew a verifier tolerates, unless told otherwise.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(5);

const TOKEN: Seal = Seal::new("dg1.", MAX_TOKEN_BYTES);
const VERSION: u8 = 1;
/// A one-time id: 128 random bits, 22 base64url characters.
const ID_BYTES: usize = 16;
const ID_CHARS: usize = 22;

/// Why a delegation token was not minted or not accepted. Its `Display` names what failed,
/// never the token or the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DelegationError {
    /// The call carried no token.
    #[error("the call carried no delegation token")]
    Missing,
    /// Not a delegation token (wrong shape, prefix, encoding or contents).
    #[error("the delegation token is malformed")]
    Malformed,
    /// The MAC does not match: tampered with, or signed with another key.
    #[error("the delegation token's signature does not verify")]
    BadSignature,
    /// Past its expiry (and the leeway).
    #[error("the delegation token has expired")]
    Expired,
    /// Issued in the future (beyond the leeway): the clocks disagree.
    #[error("the delegation token is not valid yet")]
    NotYetValid,
    /// Issued for another server.
    #[error("the delegation token was issued for another audience")]
    WrongAudience,
    /// Issued by a gateway this server does not trust.
    #[error("the delegation token's issuer is not trusted")]
    UnknownIssuer,
    /// Lives longer than the verifier's `max_ttl`.
    #[error("the delegation token's lifetime exceeds the maximum")]
    LifetimeTooLong,
    /// Its one-time id was seen before.
    #[error("the delegation token was already used")]
    Replayed,
    /// Over a size bound (token, carry, or a name).
    #[error("the delegation token exceeds its size bounds")]
    TooLarge,
    /// The replay store is full of live ids: refused rather than forgotten.
    #[error("the replay store is full")]
    ReplayStoreFull,
    /// The shared replay store ([`DelegationVerifier::replay_store`]) could not say whether
    /// the id was used (Redis down or slow): refused rather than run unchecked.
    #[error("the shared replay store did not answer")]
    ReplayStoreUnavailable,
    /// The key is shorter than [`MIN_KEY_BYTES`] (or its variable is unset).
    #[error("the delegation key must be at least {MIN_KEY_BYTES} bytes")]
    KeyTooShort,
    /// The system's random source failed while minting an id.
    #[error("no randomness for the token's one-time id")]
    NoRandomness,
}

impl DelegationError {
    /// The envelope a call refused for this reason gets: `UNAUTHORIZED` (`SERVER_BUSY` for
    /// [`DelegationError::ReplayStoreFull`]), with a recovery that says what to do.
    pub fn to_tool_error(&self) -> ToolError {
        const AGAIN: &str =
            "Call the tool again through the gateway, which signs a new token for every call";
        const OPERATOR: &str = "Do not retry: the gateway and this server are configured differently; tell the user to report it to the operator";
        let (message, recovery) = match self {
            DelegationError::Missing => (
                "This tool only answers calls delegated by a trusted gateway, and this call carried no delegation token",
                "Call this tool through the gateway that hands conversations off to this server; it attaches a delegation token to every call",
            ),
            DelegationError::Malformed | DelegationError::TooLarge => {
                ("The delegation token of this call could not be read", AGAIN)
            }
            DelegationError::BadSignature => (
                "The delegation token of this call failed signature verification",
                "Call the tool again through the gateway; if this repeats, the gateway and this server do not share a key: tell the user to report it to the operator",
            ),
            DelegationError::Expired => (
                "The delegation token of this call has expired",
                "Call the tool again through the gateway, which signs a fresh token for every call; if this repeats, the gateway's and this server's clocks disagree",
            ),
            DelegationError::NotYetValid => (
                "The delegation token of this call is not valid yet",
                "Call the tool again in a few seconds; if this repeats, the gateway's and this server's clocks disagree",
            ),
            DelegationError::WrongAudience => (
                "The delegation token of this call was issued for another server",
                "Call this server's tools through the gateway's handoff to this server's own domain",
            ),
            DelegationError::UnknownIssuer => (
                "The delegation token of this call was issued by a gateway this server does not trust",
                OPERATOR,
            ),
            DelegationError::LifetimeTooLong => (
                "The delegation token of this call lives longer than this server allows",
                OPERATOR,
            ),
            DelegationError::Replayed => {
                ("The delegation token of this call was already used", AGAIN)
            }
            DelegationError::ReplayStoreFull => {
                return error(
                    codes::SERVER_BUSY,
                    "This server is receiving more delegated calls than it can keep track of",
                )
                .recovery("Wait for the time below, then call the tool again through the gateway");
            }
            DelegationError::ReplayStoreUnavailable => {
                return error(
                    codes::SERVER_BUSY,
                    "The delegation token of this call could not be checked just now (the shared replay store did not answer); the call was not run",
                )
                .recovery("Wait for the time below, then call the tool again through the gateway")
                .detail("replayStore", "unreachable")
                .retry_after(Duration::from_secs(5));
            }
            DelegationError::KeyTooShort | DelegationError::NoRandomness => {
                ("The delegation of this call could not be checked", OPERATOR)
            }
        };
        error(codes::UNAUTHORIZED, message).recovery(recovery)
    }
}

/// The secret a gateway signs delegation tokens with and an upstream verifies them with: at
/// least [`MIN_KEY_BYTES`] bytes. Its `Debug` shows no key material.
#[derive(Clone)]
pub struct DelegationKey {
    secret: Arc<[u8]>,
}

impl fmt::Debug for DelegationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelegationKey").finish_non_exhaustive()
    }
}

/// What a delegation token says.
#[derive(Clone, Debug, PartialEq)]
pub struct Delegation {
    /// Who minted it: the gateway.
    pub issuer: String,
    /// On whose behalf the call is made.
    pub subject: String,
    /// The server it is for: the upstream's domain.
    pub audience: String,
    /// When it was minted, in unix seconds.
    pub issued_at: u64,
    /// When it stops being accepted, in unix seconds.
    pub expires_at: u64,
    /// Its one-time id: random, accepted once.
    pub id: String,
    /// The conversation's carry-over state.
    pub carry: Value,
}

/// The signed form: the version, then the delegation's fields (flat: `#[serde(flatten)]`
/// would buffer the whole object, carry included, before reading it).
#[derive(Serialize, Deserialize)]
struct Claims {
    v: u8,
    iss: String,
    sub: String,
    aud: String,
    iat: u64,
    exp: u64,
    jti: String,
    carry: Value,
}

impl DelegationKey {
    /// A key of `secret`'s bytes; [`DelegationError::KeyTooShort`] under [`MIN_KEY_BYTES`].
    pub fn new(secret: impl AsRef<[u8]>) -> Result<Self, DelegationError> {
        let secret = secret.as_ref();
        if secret.len() < MIN_KEY_BYTES {
            return Err(DelegationError::KeyTooShort);
        }
        Ok(DelegationKey {
            secret: secret.into(),
        })
    }

    /// The key in environment variable `var` (its bytes); [`DelegationError::KeyTooShort`]
    /// when it is unset or shorter than [`MIN_KEY_BYTES`].
    pub fn from_env(var: &str) -> Result<Self, DelegationError> {
        let secret = std::env::var_os(var).ok_or(DelegationError::KeyTooShort)?;
        DelegationKey::new(secret.into_encoded_bytes())
    }

    /// A token from `issuer` on behalf of `subject` for the server `audience`, valid for
    /// `ttl` (whole seconds, rounded up) from now, with a fresh one-time id and `carry`.
    ///
    /// Mint one per forwarded call: each is accepted once. [`DelegationError::TooLarge`]
    /// when `carry` exceeds [`MAX_CARRY_BYTES`] or a name [`MAX_NAME_BYTES`].
    pub fn mint(
        &self,
        issuer: &str,
        subject: &str,
        audience: &str,
        ttl: Duration,
        carry: Value,
    ) -> Result<String, DelegationError> {
        if [issuer, subject, audience]
            .iter()
            .any(|n| n.len() > MAX_NAME_BYTES)
            || carry_too_large(&carry)
        {
            return Err(DelegationError::TooLarge);
        }
        let mut id: Id = [0; ID_BYTES];
        getrandom::fill(&mut id).map_err(|_| DelegationError::NoRandomness)?;
        let issued_at = now_secs();
        let ttl = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
        let claims = Claims {
            v: VERSION,
            iss: issuer.to_owned(),
            sub: subject.to_owned(),
            aud: audience.to_owned(),
            iat: issued_at,
            exp: issued_at.saturating_add(ttl),
            jti: BASE64_URL_SAFE_NO_PAD.encode(id),
            carry,
        };
        let payload = serde_json::to_vec(&claims).map_err(|_| DelegationError::Malformed)?;
        TOKEN
            .seal(&self.secret, &payload)
            .map_err(|_| DelegationError::TooLarge)
    }
}

fn carry_too_large(carry: &Value) -> bool {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            if self.0 > MAX_CARRY_BYTES {
                return Err(std::io::Error::other("too large"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Counter(0), carry).is_err()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Checks delegation tokens for one server (its audience): see the [module](self) for what
/// is checked and bounded.
///
/// Clones share one replay store, so a token accepted through one clone is refused by all.
///
/// ```
/// use std::time::Duration;
/// use fusion_runtime::auth::{DelegationError, DelegationKey, DelegationVerifier};
///
/// let key = DelegationKey::new("a shared secret of at least 32 bytes")?;
/// let token = key.mint("triage", "user-7", "billing", Duration::from_secs(30),
///     serde_json::json!({"invoice": "inv_2026_0001"}))?;
///
/// let verifier = DelegationVerifier::new(key, "billing").issuers(["triage"]);
/// let delegation = verifier.verify(&token)?;
/// assert_eq!(delegation.subject, "user-7");
/// assert_eq!(delegation.carry["invoice"], "inv_2026_0001");
/// assert_eq!(verifier.verify(&token), Err(DelegationError::Replayed));
/// # Ok::<(), DelegationError>(())
/// ```
#[derive(Clone)]
pub struct DelegationVerifier {
    key: DelegationKey,
    previous: Vec<DelegationKey>,
    audience: String,
    issuers: Vec<String>,
    max_ttl: Duration,
    leeway: Duration,
    capacity: usize,
    seen: Arc<Mutex<ReplayStore>>,
    shared: Option<Arc<dyn OnceStore>>,
}

impl fmt::Debug for DelegationVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelegationVerifier")
            .field("audience", &self.audience)
            .field("keys", &(1 + self.previous.len()))
            .field("issuers", &self.issuers)
            .field("max_ttl", &self.max_ttl)
            .field("leeway", &self.leeway)
            .field("replay_capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl DelegationVerifier {
    /// Accepts tokens signed with `key` for `audience` (this server's domain), from any
    /// issuer until [`DelegationVerifier::issuers`] names the trusted ones.
    pub fn new(key: DelegationKey, audience: impl Into<String>) -> Self {
        DelegationVerifier {
            key,
            previous: Vec::new(),
            audience: audience.into(),
            issuers: Vec::new(),
            max_ttl: DEFAULT_MAX_TTL,
            leeway: DEFAULT_LEEWAY,
            capacity: DEFAULT_REPLAY_CAPACITY,
            seen: Arc::default(),
            shared: None,
        }
    }

    /// Accepts only tokens from these issuers.
    pub fn issuers(mut self, issuers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.issuers.extend(issuers.into_iter().map(Into::into));
        self
    }

    /// Also accepts tokens signed with `key`: the old key while a new one is rolled out to
    /// the gateways (remove it once they all sign with the new one). Each key tried costs one
    /// HMAC of the token.
    pub fn also_accept(mut self, key: DelegationKey) -> Self {
        self.previous.push(key);
        self
    }

    /// The longest lifetime (`exp - iat`) accepted; default [`DEFAULT_MAX_TTL`].
    pub fn max_ttl(mut self, max_ttl: Duration) -> Self {
        self.max_ttl = max_ttl;
        self
    }

    /// The clock skew tolerated on expiry and issued-at; default [`DEFAULT_LEEWAY`].
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// How many one-time ids are remembered at most; default [`DEFAULT_REPLAY_CAPACITY`].
    pub fn replay_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// Keeps the one-time ids in `store` (e.g. [`RedisOnce`](crate::store::RedisOnce)),
    /// shared by every instance using it, so a token accepted by one instance is refused by
    /// all. Its [`middleware`](Self::middleware) then checks there; when the store cannot
    /// answer, the call is refused (`SERVER_BUSY`, retry in 5 s), never run unchecked.
    /// [`verify`](Self::verify) stays in process.
    pub fn replay_store(mut self, store: Arc<dyn OnceStore>) -> Self {
        self.shared = Some(store);
        self
    }

    /// Whether one-time ids are kept in a shared store ([`replay_store`](Self::replay_store)).
    pub fn shares_replays(&self) -> bool {
        self.shared.is_some()
    }

    /// The audience this verifier accepts.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// What `token` says, if it passes every check now (and records its one-time id).
    pub fn verify(&self, token: &str) -> Result<Delegation, DelegationError> {
        self.verify_at(token, now_secs())
    }

    /// [`DelegationVerifier::verify`] with the clock at `now` (unix seconds).
    pub fn verify_at(&self, token: &str, now: u64) -> Result<Delegation, DelegationError> {
        let (d, id, forget_at) = self.check_at(token, now)?;
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .admit(id, forget_at, now, self.capacity)?;
        Ok(d)
    }

    /// [`DelegationVerifier::verify_at`], the one-time id recorded in the shared store when
    /// one is set ([`replay_store`](Self::replay_store)), else in process.
    pub async fn verify_shared_at(
        &self,
        token: &str,
        now: u64,
    ) -> Result<Delegation, DelegationError> {
        let Some(store) = &self.shared else {
            return self.verify_at(token, now);
        };
        let (d, id, forget_at) = self.check_at(token, now)?;
        let ttl = Duration::from_secs(forget_at.saturating_sub(now).max(1));
        match store.first_use("dg", &id, ttl).await {
            Ok(true) => Ok(d),
            Ok(false) => Err(DelegationError::Replayed),
            Err(e) => {
                tracing::warn!(store = store.name(), error = %e, "a delegation token could not be checked");
                Err(DelegationError::ReplayStoreUnavailable)
            }
        }
    }

    /// Every check but the one-time id: what the token says, its id, and when the id may be
    /// forgotten.
    fn check_at(&self, token: &str, now: u64) -> Result<(Delegation, Id, u64), DelegationError> {
        let mut opened = TOKEN.open(&self.key.secret, token);
        for key in &self.previous {
            if opened != Err(SealError::BadSignature) {
                break;
            }
            opened = TOKEN.open(&key.secret, token);
        }
        let payload = opened.map_err(|e| match e {
            SealError::TooLarge => DelegationError::TooLarge,
            SealError::BadSignature => DelegationError::BadSignature,
            SealError::Malformed | SealError::InvalidKey => DelegationError::Malformed,
        })?;
        let claims: Claims =
            serde_json::from_slice(&payload).map_err(|_| DelegationError::Malformed)?;
        // The bounds the minting side holds, held again: a token signed by anyone with the
        // key is only as small as its signer made it.
        if [&claims.iss, &claims.sub, &claims.aud]
            .iter()
            .any(|n| n.len() > MAX_NAME_BYTES)
            || carry_too_large(&claims.carry)
        {
            return Err(DelegationError::TooLarge);
        }
        let d = Delegation {
            issuer: claims.iss,
            subject: claims.sub,
            audience: claims.aud,
            issued_at: claims.iat,
            expires_at: claims.exp,
            id: claims.jti,
            carry: claims.carry,
        };
        let id = one_time_id(&d.id).ok_or(DelegationError::Malformed)?;
        if claims.v != VERSION || d.expires_at < d.issued_at {
            return Err(DelegationError::Malformed);
        }
        let leeway = self.leeway.as_secs();
        let forget_at = d.expires_at.saturating_add(leeway);
        if now >= forget_at {
            return Err(DelegationError::Expired);
        }
        if d.issued_at > now.saturating_add(leeway) {
            return Err(DelegationError::NotYetValid);
        }
        if d.audience != self.audience {
            return Err(DelegationError::WrongAudience);
        }
        if !self.issuers.is_empty() && !self.issuers.contains(&d.issuer) {
            return Err(DelegationError::UnknownIssuer);
        }
        if d.expires_at - d.issued_at > self.max_ttl.as_secs() {
            return Err(DelegationError::LifetimeTooLong);
        }
        Ok((d, id, forget_at))
    }

    /// How long until the replay store frees a place (its first id expires), from `now`;
    /// `None` when it is empty.
    pub fn replay_store_frees_in(&self, now: u64) -> Option<Duration> {
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let Reverse((first, _)) = seen.by_expiry.peek()?;
        Some(Duration::from_secs(first.saturating_sub(now).max(1)))
    }

    /// How many one-time ids the replay store holds now.
    pub fn replay_store_len(&self) -> usize {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .ids
            .len()
    }
}

/// A minted one-time id: 16 random bytes.
type Id = [u8; ID_BYTES];

/// The 16 bytes of a one-time id written as 22 base64url characters; `None` for anything else.
fn one_time_id(text: &str) -> Option<Id> {
    if text.len() != ID_CHARS {
        return None;
    }
    BASE64_URL_SAFE_NO_PAD.decode(text).ok()?.try_into().ok()
}

/// The one-time ids seen, each until its token could no longer be accepted: about 60 bytes
/// an id, so the default capacity is a few megabytes at most.
#[derive(Default)]
struct ReplayStore {
    ids: HashMap<Id, u64>,
    by_expiry: BinaryHeap<Reverse<(u64, Id)>>,
}

impl ReplayStore {
    fn admit(
        &mut self,
        id: Id,
        forget_at: u64,
        now: u64,
        capacity: usize,
    ) -> Result<(), DelegationError> {
        while let Some(Reverse((at, _))) = self.by_expiry.peek()
            && *at <= now
        {
            if let Some(Reverse((_, old))) = self.by_expiry.pop() {
                self.ids.remove(&old);
            }
        }
        if self.ids.contains_key(&id) {
            return Err(DelegationError::Replayed);
        }
        if self.ids.len() >= capacity {
            return Err(DelegationError::ReplayStoreFull);
        }
        self.ids.insert(id, forget_at);
        self.by_expiry.push(Reverse((forget_at, id)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    fn key() -> DelegationKey {
        DelegationKey::new(SECRET).unwrap_or_else(|e| panic!("{e}"))
    }

    fn mint(ttl: u64) -> String {
        key()
            .mint(
                "triage",
                "user-1",
                "billing",
                Duration::from_secs(ttl),
                json!({"k": 1}),
            )
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A token signed with the key but larger inside than `mint` writes (another signer's):
    /// refused on verify, and it takes no place in the replay store.
    #[test]
    fn carry_and_names_are_bounded_on_verify_too() {
        let verifier = DelegationVerifier::new(key(), "billing");
        let now = now_secs();
        let sealed = |carry: Value, sub: &str| {
            let claims = json!({"v": VERSION, "iss": "triage", "sub": sub, "aud": "billing",
                "iat": now, "exp": now + 30, "jti": "q1Xo3cUe0mJb9vQy6Tg2Zw", "carry": carry});
            TOKEN
                .seal(SECRET.as_bytes(), claims.to_string().as_bytes())
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let big = json!({"blob": "x".repeat(MAX_CARRY_BYTES)});
        assert_eq!(
            verifier.verify(&sealed(big, "user-1")),
            Err(DelegationError::TooLarge)
        );
        let long = "u".repeat(MAX_NAME_BYTES + 1);
        assert_eq!(
            verifier.verify(&sealed(json!({}), &long)),
            Err(DelegationError::TooLarge)
        );
        assert_eq!(verifier.replay_store_len(), 0);
        assert!(verifier.verify(&sealed(json!({}), "user-1")).is_ok());
    }

    #[test]
    fn keys_are_at_least_32_bytes() {
        assert_eq!(
            DelegationKey::new([0u8; 31]).err(),
            Some(DelegationError::KeyTooShort)
        );
        assert!(DelegationKey::new([0u8; 32]).is_ok());
        assert_eq!(format!("{:?}", key()), "DelegationKey { .. }");
    }

    #[test]
    fn the_replay_store_drops_expired_ids_and_refuses_when_full_of_live_ones() {
        let (a, b, c) = ([1; ID_BYTES], [2; ID_BYTES], [3; ID_BYTES]);
        let mut store = ReplayStore::default();
        assert_eq!(store.admit(a, 10, 0, 2), Ok(()));
        assert_eq!(store.admit(a, 10, 0, 2), Err(DelegationError::Replayed));
        assert_eq!(store.admit(b, 20, 0, 2), Ok(()));
        assert_eq!(
            store.admit(c, 20, 5, 2),
            Err(DelegationError::ReplayStoreFull)
        );
        // At 10 `a` leaves: room for `c`, and `a` is forgotten (its token is dead anyway).
        assert_eq!(store.admit(c, 20, 10, 2), Ok(()));
        assert_eq!(store.ids.len(), 2);
        assert!(!store.ids.contains_key(&a));
        assert_eq!(store.by_expiry.len(), 2);
    }

    #[test]
    fn one_time_ids_are_exactly_16_bytes_in_base64url() {
        assert_eq!(one_time_id("AAAAAAAAAAAAAAAAAAAAAA"), Some([0; ID_BYTES]));
        for bad in [
            "",
            "AAAA",
            "AAAAAAAAAAAAAAAAAAAAAAA",
            "AAAAAAAAAAAAAAAAAAAAA!",
            "AAAAAAAAAAAAAAAAAAAAAB",
        ] {
            assert_eq!(one_time_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn ttl_rounds_up_and_the_token_is_valid_until_expiry_plus_leeway() {
        let token = key()
            .mint(
                "t",
                "s",
                "billing",
                Duration::from_millis(1500),
                Value::Null,
            )
            .unwrap_or_default();
        let v = DelegationVerifier::new(key(), "billing").leeway(Duration::ZERO);
        let d = v.verify(&token).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.expires_at - d.issued_at, 2);
        let fresh = mint(10);
        assert_eq!(
            v.verify_at(&fresh, now_secs() + 10),
            Err(DelegationError::Expired)
        );
        let lenient = DelegationVerifier::new(key(), "billing");
        assert!(lenient.verify_at(&fresh, now_secs() + 10).is_ok());
    }

    #[test]
    fn every_refusal_is_an_envelope_without_the_token() {
        use DelegationError::*;
        for e in [
            Missing,
            Malformed,
            BadSignature,
            Expired,
            NotYetValid,
            WrongAudience,
            UnknownIssuer,
            LifetimeTooLong,
            Replayed,
            TooLarge,
            ReplayStoreFull,
            KeyTooShort,
            NoRandomness,
        ] {
            let te = e.to_tool_error();
            let text = te.render().to_string();
            let expected = if e == ReplayStoreFull {
                &codes::SERVER_BUSY
            } else {
                &codes::UNAUTHORIZED
            };
            assert_eq!(te.code(), expected, "{e:?}");
            assert!(te.recovery_text().is_some_and(|s| !s.is_empty()), "{e:?}");
            assert!(!text.contains(SECRET) && !text.contains("dg1."), "{text}");
        }
    }
}
