//! [`HttpOptions`]: the bounds of the streamable HTTP transport and their defaults.
//!
//! Reads: nothing. Writes: nothing; the router and the listener read the options.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::auth::Auth;
use crate::http::listener::Listening;
use crate::http::{ForwardedHeader, ReadyCheck};

/// Options of the streamable HTTP transport. The defaults are safe to face the internet:
///
/// | bound | default | [`HttpOptions`] | `serve --http` flag |
/// |---|---|---|---|
/// | open connections; beyond: `503` and closed at once | 512 | [`max_connections`](HttpOptions::max_connections) | `--max-connections` |
/// | open connections from one IP address (an IPv6 /64); through a trusted proxy, requests in flight (SSE streams until they end) per forwarded address; beyond: `503` | 256 | [`max_connections_per_ip`](HttpOptions::max_connections_per_ip) | `--max-connections-per-ip` |
/// | waiting for a request's headers, idle keep-alive included | 10 s | [`header_timeout`](HttpOptions::header_timeout) | `--header-timeout` |
/// | reading a request's body; beyond: `408` | 30 s | [`body_timeout`](HttpOptions::body_timeout) | `--body-timeout` |
/// | request body size; beyond: `413` | 1 MiB | [`max_body_bytes`](HttpOptions::max_body_bytes) | `--max-body-bytes` |
/// | request header size; beyond: `431` | 64 KiB | | |
/// | live sessions; beyond: `503` | 1,024 | [`max_sessions`](HttpOptions::max_sessions) | `--max-sessions` |
/// | live sessions per client; beyond: `429` | 32 | [`max_sessions_per_client`](HttpOptions::max_sessions_per_client) | `--max-sessions-per-client` |
/// | idle session; then `404` (start a new one) | 5 min | [`session_idle_timeout`](HttpOptions::session_idle_timeout) | `--session-idle-timeout` |
/// | in-flight requests after shutdown (draining); then closed | 10 s | [`drain_grace`](HttpOptions::drain_grace) | `--drain-grace` |
///
/// A refused session is answered with a JSON-RPC error body (`id` null, code `-32000`) and a
/// `Retry-After` header. Requests whose `Origin` is not allowed get `403` (loopback origins
/// and requests without `Origin` by default; `Origin: null` is refused); requests whose
/// `Host` is not allowed get `403` too (DNS-rebinding protection). A session `DELETE` answers
/// `200`.
///
/// [`spawn_http`](crate::mcp::spawn_http) also answers `GET /healthz` (`200 ok` while it serves) and `GET /readyz`
/// (`200 ready`; `503` and a one-line reason while draining or while a
/// [`ready_check`](HttpOptions::ready_check) fails), outside [`path`](HttpOptions::path),
/// without authentication. On the shutdown token it drains, in the order a load balancer
/// needs: not ready at once, the listener closed (new connections are refused), requests in
/// flight finished within [`drain_grace`](HttpOptions::drain_grace), then it stops. Open
/// `subscriptions/listen` calls are answered with their closing result at once; a stateful
/// session's standalone SSE stream stays open until the grace is over.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// No sessions: every request stands alone, so instances can sit behind any load
    /// balancer. An answer is plain JSON, or an SSE stream when the call sends progress or
    /// log messages before it (they travel on the request's own stream).
    pub stateless: bool,
    /// Hosts accepted in the `Host` header (DNS-rebinding protection). Loopback names by
    /// default; add the public host names when serving beyond this machine.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted in the `Origin` header, as `scheme://host:port` (`:*` for any port).
    /// Loopback origins by default; a request without `Origin` is always accepted.
    pub allowed_origins: Vec<String>,
    /// The path the endpoint is mounted at (`/mcp`).
    pub path: String,
    /// Stops the server when cancelled.
    pub shutdown: CancellationToken,
    /// Reverse proxies whose forwarding header names the client (none by default).
    pub trusted_proxies: Vec<IpAddr>,
    /// The header trusted proxies write the client's address in.
    pub forwarded_header: ForwardedHeader,
    /// Open connections at most.
    pub max_connections: usize,
    /// Open connections from one IP address (an IPv6 /64) at most. A trusted proxy's
    /// connections are exempt: its clients are held to as many requests in flight each, by
    /// forwarded address.
    pub max_connections_per_ip: usize,
    /// How long a connection may take to send a request's headers, counted from when it
    /// starts waiting for one: also how long an idle keep-alive connection stays open.
    pub header_timeout: Duration,
    /// How long a request may take to send its body, counted from its headers.
    pub body_timeout: Duration,
    /// The largest request body.
    pub max_body_bytes: usize,
    /// Live sessions at most (stateful mode).
    pub max_sessions: usize,
    /// Live sessions one client may hold (stateful mode).
    pub max_sessions_per_client: usize,
    /// A session nobody used for this long is closed; its id then answers `404`.
    pub session_idle_timeout: Duration,
    /// Bearer-token authentication (see [`auth`](crate::auth)); when `None`, the server's
    /// own ([`ServerBuilder::auth`](crate::ServerBuilder::auth)), if any.
    pub auth: Option<Arc<Auth>>,
    /// After the shutdown token, how long requests in flight may take to finish; then their
    /// connections are closed.
    pub drain_grace: Duration,
    /// What `/readyz` requires beyond not draining (a Redis that answers, …).
    pub ready_checks: Vec<ReadyCheck>,
    /// Whether a plain 2025 `tools/call` (a name and arguments, nothing to negotiate) is
    /// answered by the framework without rmcp's per-request service or session worker: the
    /// same answer, byte for byte (`tests/tests/differential.rs` sends thousands of generated
    /// requests to a server with it on and one with it off and compares), about twice as
    /// fast. On by default; off, every request goes through rmcp.
    pub answer_plain_calls: bool,
}

/// Origins a local client (a browser page on this machine, an inspector) sends.
pub(crate) const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

impl HttpOptions {
    /// The listener's bounds among these options.
    pub(crate) fn listening(&self) -> Listening {
        Listening {
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            header_timeout: self.header_timeout,
            trusted_proxies: self.trusted_proxies.clone(),
            forwarded_header: self.forwarded_header,
            drain_grace: self.drain_grace,
            shutdown: self.shutdown.clone(),
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            stateless: false,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()).collect(),
            path: "/mcp".into(),
            shutdown: CancellationToken::new(),
            trusted_proxies: Vec::new(),
            forwarded_header: ForwardedHeader::default(),
            max_connections: 512,
            max_connections_per_ip: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_body_bytes: 1024 * 1024,
            max_sessions: 1024,
            max_sessions_per_client: 32,
            session_idle_timeout: Duration::from_secs(300),
            auth: None,
            drain_grace: Duration::from_secs(10),
            ready_checks: Vec::new(),
            answer_plain_calls: true,
        }
    }
}

impl HttpOptions {
    /// Stateless or not.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Adds accepted host names.
    pub fn allow_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// Adds accepted origins, as `scheme://host:port` or `scheme://host:*`
    /// (`https://app.example.com:443`).
    pub fn allow_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// A shutdown token.
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    /// Trusts the reverse proxy at `ip`: a request whose TCP peer it is counts against the
    /// right-most address of its [`forwarded_header`](Self::forwarded_header) that is not
    /// itself a trusted proxy.
    pub fn trust_proxy(mut self, ip: IpAddr) -> Self {
        self.trusted_proxies.push(ip);
        self
    }

    /// The header trusted proxies write (`X-Forwarded-For` by default). Only the header the
    /// proxy appends to is safe to read: a client can send the other one as it likes.
    pub fn forwarded_header(mut self, header: ForwardedHeader) -> Self {
        self.forwarded_header = header;
        self
    }

    /// Open connections at most (at least 1).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Open connections from one IP address at most (at least 1).
    pub fn max_connections_per_ip(mut self, n: usize) -> Self {
        self.max_connections_per_ip = n.max(1);
        self
    }

    /// The request header timeout, also the idle keep-alive timeout.
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// The request body timeout.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// The largest request body, in bytes.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Live sessions at most.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// Live sessions per client at most.
    pub fn max_sessions_per_client(mut self, n: usize) -> Self {
        self.max_sessions_per_client = n;
        self
    }

    /// How long an unused session lives.
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// Authenticates requests with `auth` (bearer tokens, `401`, Protected Resource
    /// Metadata), instead of the server's own. [`spawn_http`](crate::mcp::spawn_http) refuses to start when it
    /// requires tokens but names no issuer ([`Auth::check`]).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// How long requests in flight may take to finish after the shutdown token.
    pub fn drain_grace(mut self, grace: Duration) -> Self {
        self.drain_grace = grace;
        self
    }

    /// Adds a condition `/readyz` requires.
    pub fn ready_check(mut self, check: ReadyCheck) -> Self {
        self.ready_checks.push(check);
        self
    }

    /// Turns off (or on) the answers to plain 2025 calls made without rmcp
    /// ([`answer_plain_calls`](HttpOptions::answer_plain_calls)).
    pub fn answer_plain_calls(mut self, on: bool) -> Self {
        self.answer_plain_calls = on;
        self
    }
}
