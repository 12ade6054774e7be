//! The gateway: upstream MCP servers mounted under a prefix, their failures written as
//! envelopes (`HANDOFF_*`).
//!
//! ```text
//! let server = Server::builder()
//!     .name("triage")
//!     .action::<ClassifyAction>()
//!     .mount("finance", Upstream::stdio(Command::new("billing")))
//!     .mount("devops", Upstream::http("http://127.0.0.1:8081/mcp"))
//!     .build()?;
//! ```
//!
//! Each upstream's tools are listed under its prefix with the separator of the server's
//! exposure (`finance_get_invoice`); calls are forwarded with their arguments, and progress,
//! log messages and cancellation travel both ways. An upstream's
//! `notifications/tools/list_changed` refreshes the listed tools and is passed on.
//!
//! What the model reads when the upstream cannot answer:
//!
//! | situation | answer |
//! |---|---|
//! | the connection is coming up (first use, or a probe after a failure) | `HANDOFF_CONNECTING`, severity warning, `retry_after` 2 |
//! | cannot connect, crashed, closed, timed out | `HANDOFF_UPSTREAM_UNAVAILABLE`, `retry_after` from the [`Backoff`], growing while it stays down |
//! | while the circuit is open (after a failure, until the backoff ends) | the same, at once, without touching the upstream |
//! | the upstream is a Fusion server and answered with an envelope | that envelope, intact but for the tool names in `<available_actions>` and `<recovery>`, written as the gateway exposes them |
//! | a plain-text error (`isError` text, a JSON-RPC error) | `INTERNAL_ERROR` quoting it (bounded), with a recovery |
//!
//! This module names no `rmcp` type: the connection is a [`Connector`], which `mcp`
//! implements for stdio ([`Upstream::stdio`]) and streamable HTTP ([`Upstream::http`]).

mod answers;
mod backoff;
mod handle;
mod handoff;
mod mount;

pub use answers::{CONNECTING_RETRY_SECS, MAX_QUOTED_CHARS};
pub use backoff::{Backoff, DEFAULT_BACKOFF};
pub use handle::{HANDLE_ARGUMENT, HANDLE_TTL};

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::action::Hints;
use crate::auth::DelegationKey;
use crate::context::RequestScope;
use crate::envelope::Content;
use crate::guard::{ConcurrencyLimit, RateLimit};
use crate::input::JsonObject;

/// An upstream MCP server to mount: how to reach it.
#[derive(Clone)]
pub struct Upstream {
    connector: Arc<dyn Connector>,
}

impl Upstream {
    /// An upstream reached through `connector` (the MCP bridge provides
    /// [`Upstream::stdio`] and [`Upstream::http`]).
    pub fn custom(connector: impl Connector) -> Upstream {
        Upstream {
            connector: Arc::new(connector),
        }
    }

    /// What it is, for messages and logs.
    pub fn describe(&self) -> String {
        self.connector.describe()
    }
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Upstream").field(&self.describe()).finish()
    }
}

/// Opens connections to one upstream. Each call of [`Connector::connect`] makes a new one
/// (respawning a stdio child, a new HTTP session).
pub trait Connector: Send + Sync + 'static {
    /// What it connects to (`stdio: billing serve`, `http://…/mcp`).
    fn describe(&self) -> String;

    /// Connects; `events` hears what the upstream announces on its own.
    fn connect(
        &self,
        events: Arc<dyn UpstreamEvents>,
    ) -> BoxFuture<'static, Result<Arc<dyn Connection>, String>>;
}

/// What an upstream announces without being asked.
pub trait UpstreamEvents: Send + Sync + 'static {
    /// `notifications/tools/list_changed`.
    fn tools_changed(&self);
}

/// One open connection to an upstream.
pub trait Connection: Send + Sync + 'static {
    /// Whether it is closed (the child exited, the transport ended).
    fn is_closed(&self) -> bool;

    /// `tools/list`, every page.
    fn list_tools(&self) -> BoxFuture<'static, Result<Vec<UpstreamTool>, UpstreamFailure>>;

    /// `tools/call` of the upstream's `tool`, with `meta` in the request's `_meta` (the
    /// delegation token). Progress and log messages go to `scope`'s notifier; dropping the
    /// future cancels the upstream request.
    fn call(
        &self,
        tool: String,
        arguments: Option<JsonObject>,
        meta: Option<JsonObject>,
        scope: RequestScope,
    ) -> BoxFuture<'static, Result<UpstreamReply, UpstreamFailure>>;
}

/// One tool as the upstream lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct UpstreamTool {
    /// Its name upstream.
    pub name: String,
    /// Its title.
    pub title: Option<String>,
    /// Its description.
    pub description: String,
    /// Its input schema.
    pub input_schema: JsonObject,
    /// Its output schema.
    pub output_schema: Option<JsonObject>,
    /// Its annotations.
    pub hints: Option<Hints>,
}

/// An upstream's `tools/call` result.
#[derive(Clone, Debug, PartialEq)]
pub struct UpstreamReply {
    /// Its content.
    pub content: Vec<Content>,
    /// Its `isError`.
    pub is_error: bool,
    /// Its structured content.
    pub structured_content: Option<Value>,
}

/// Why an upstream request got no result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamFailure {
    /// The connection is gone (crashed, closed).
    Closed(String),
    /// The upstream answered with a JSON-RPC error.
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// Anything else (an unexpected answer).
    Other(String),
}

/// The bounds of one mount, each with a sane default.
#[derive(Clone, Debug)]
pub struct MountOptions {
    /// Connecting (spawn or HTTP handshake, then `tools/list`) gives up after this
    /// (default 10 s).
    pub connect_timeout: Duration,
    /// A forwarded call gives up after this (default 60 s): `HANDOFF_UPSTREAM_UNAVAILABLE`.
    pub call_timeout: Duration,
    /// Calls forwarded at once and waiting to be (default 32 and 64); beyond: `SERVER_BUSY`.
    pub pending: ConcurrencyLimit,
    /// A rate limit on the mount's calls, all tools together (default none).
    pub rate_limit: Option<RateLimit>,
    /// At most this many upstream tools are listed (default 256); the rest are left out.
    pub max_tools: usize,
    /// An upstream tool whose name is longer is left out (default 64, the exposed name must
    /// also be a valid tool name).
    pub max_name_chars: usize,
    /// A reply whose content is larger is replaced by an envelope (default 4 MiB).
    pub max_response_bytes: usize,
    /// The wait before trying a failed upstream again.
    pub backoff: Backoff,
    /// How long a first `tools/list` waits for the first connection (default 10 s).
    pub list_wait: Duration,
    /// Signs every forwarded call with a fresh delegation token (default none).
    pub delegation: Option<MountDelegation>,
    /// A domain entered only by handoff (default false): its tools are listed only to a
    /// session handed off to it ([`ServerBuilder::handoff_domain`]).
    ///
    /// [`ServerBuilder::handoff_domain`]: crate::server::ServerBuilder::handoff_domain
    pub handoff_only: bool,
    /// The OAuth scopes every call of the mount's tools requires (default none), checked
    /// before anything is forwarded, as `#[tool_action(scopes = [..])]` is for an action:
    /// without a principal `AUTH_REQUIRED`, missing one `FORBIDDEN`. Scopes set for one tool
    /// with [`ServerBuilder::scopes`] (by its prefixed name) are required on top.
    ///
    /// [`ServerBuilder::scopes`]: crate::server::ServerBuilder::scopes
    pub scopes: Vec<std::borrow::Cow<'static, str>>,
}

/// The delegation a mount sends with each forwarded call: a fresh token (see
/// [`auth::delegation`](crate::auth::delegation)) from `issuer` for `audience`, on behalf of
/// the caller (its principal's subject, else its [`ClientKey`](crate::context::ClientKey)),
/// valid for `ttl`, in the request's `_meta` under
/// [`DELEGATION_META_KEY`](crate::auth::DELEGATION_META_KEY).
#[derive(Clone)]
pub struct MountDelegation {
    /// The key the upstream shares.
    pub key: DelegationKey,
    /// Who signs: the gateway's name.
    pub issuer: String,
    /// Whom for: the upstream's name, as its verifier expects.
    pub audience: String,
    /// How long each token is valid (seconds are enough: one per call).
    pub ttl: Duration,
}

impl MountDelegation {
    /// Tokens from `issuer` for `audience` under `key`, valid 30 seconds.
    pub fn new(key: DelegationKey, issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        MountDelegation {
            key,
            issuer: issuer.into(),
            audience: audience.into(),
            ttl: Duration::from_secs(30),
        }
    }
}

impl fmt::Debug for MountDelegation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MountDelegation")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl Default for MountOptions {
    fn default() -> Self {
        MountOptions {
            connect_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(60),
            pending: ConcurrencyLimit::new(32, 64),
            rate_limit: None,
            max_tools: 256,
            max_name_chars: 64,
            max_response_bytes: 4 << 20,
            backoff: Backoff::default(),
            list_wait: Duration::from_secs(10),
            delegation: None,
            handoff_only: false,
            scopes: Vec::new(),
        }
    }
}
