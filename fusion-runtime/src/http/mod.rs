//! Serving HTTP, whatever is served: nothing here is MCP. The listener (`listener.rs`: the
//! connection caps, the drain, a service of the caller's for each request), who a client is
//! (`identity.rs`: the peer, or the client a trusted proxy names) and the cap on a forwarded
//! client's requests in flight (`forwarded.rs`), the probes (`health.rs`: `/healthz`,
//! `/readyz` and the checks readiness waits for), the metrics listener (`metrics.rs`), and a
//! request body read once, bounded in size and time (`body.rs`).
//!
//! The MCP endpoint (`mcp/http/`) is served by it, and imports it; nothing here imports
//! `mcp`: the listener is generic over the service it serves (`listener::Serve`).
//!
//! Reads: sockets, requests' peers and forwarding headers, bodies. Writes: connections
//! served or refused, client keys, bodies' bytes, probe and metrics answers.

pub(crate) mod body;
pub(crate) mod forwarded;
pub(crate) mod health;
pub(crate) mod identity;
pub(crate) mod listener;
#[cfg(feature = "metrics")]
mod metrics;

pub use health::ReadyCheck;
pub use identity::ForwardedHeader;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use metrics::{MetricsServer, spawn_metrics};
