//! Who is calling, as a key: what per-client bounds and change listens are counted by.

/// Who a per-client rate limit ([`RateLimit::per_client`](crate::guard::RateLimit::per_client))
/// counts a call against: never something the client picks.
///
/// Worked out from the call's [`RequestScope`](super::RequestScope), first match wins:
///
/// 0. the caller's [`Principal`](crate::auth::Principal), when it has one:
///    `sub:<subject>`, the same on every instance and from every address;
/// 1. the scope's `client`. Over streamable HTTP the transport always sets it: the embedding
///    code's, when a layer around [`http_router`](crate::mcp::http_router) inserted a
///    `ClientKey` into the HTTP request's extensions (the hook for an authentication layer
///    that knows the principal); else the peer's IP address (`ip:203.0.113.7`; an IPv6 peer
///    by its /64), or the address a trusted reverse proxy forwarded
///    ([`HttpOptions::trust_proxy`](crate::mcp::HttpOptions::trust_proxy)). An
///    `mcp-session-id` never makes a new client, stateful or stateless;
/// 2. any other transport with a connection (stdio serves one client per process):
///    `connection`;
/// 3. in-process calls with no connection: `local`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientKey(pub String);

impl ClientKey {
    /// A key set by the embedding code.
    pub fn new(key: impl Into<String>) -> Self {
        ClientKey(key.into())
    }
}
