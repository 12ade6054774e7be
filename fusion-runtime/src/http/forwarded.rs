//! Clients behind a reverse proxy. A trusted proxy's connections are exempt from the
//! per-address connection cap (they carry many clients), so its clients are capped here
//! instead: the requests in flight per forwarded address (an IPv6 /64), each held until its
//! response body ends (an SSE stream until it closes). And forwarding headers from a peer
//! that is not a trusted proxy are ignored, which behind an untrusted proxy makes every
//! client one: said once in the log.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;

/// The de facto forwarding header (`Forwarded` is `http`'s own constant).
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
use http_body::{Frame, SizeHint};

use super::identity::Identity;

/// Open connections or requests per client key, at most `max` each.
pub(crate) struct PerClient {
    open: Mutex<HashMap<String, usize>>,
    /// The most one key may hold.
    pub(crate) max: usize,
}

impl PerClient {
    pub(crate) fn new(max: usize) -> Arc<PerClient> {
        Arc::new(PerClient {
            open: Mutex::new(HashMap::new()),
            max: max.max(1),
        })
    }

    /// A place for `key`, or `None` when it holds its maximum.
    pub(crate) fn take(this: &Arc<PerClient>, key: String) -> Option<Slot> {
        let mut open = this.open.lock().unwrap_or_else(PoisonError::into_inner);
        let n = open.entry(key.clone()).or_insert(0);
        if *n >= this.max {
            return None;
        }
        *n += 1;
        Some(Slot {
            per_client: Arc::clone(this),
            key,
        })
    }
}

/// One place of a key; dropping it gives the place back.
pub(crate) struct Slot {
    per_client: Arc<PerClient>,
    key: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .per_client
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// The requests of one HTTP endpoint as their peer forwards them.
pub(crate) struct Forwarded {
    identity: Identity,
    in_flight: Arc<PerClient>,
    /// Whether the untrusted-proxy warning was logged (once per endpoint).
    warned: AtomicBool,
}

impl Forwarded {
    /// `max`: the requests in flight one forwarded client may have (the per-address cap).
    pub(crate) fn new(identity: Identity, max: usize) -> Self {
        Forwarded {
            identity,
            in_flight: PerClient::new(max),
            warned: AtomicBool::new(false),
        }
    }

    /// Admits `request`: its forwarded client's place when its peer is a trusted proxy
    /// (`trusted`, which the identity step has just told), `None` for any other peer (the
    /// connection cap counts it), or [`Busy`].
    pub(crate) fn admit(&self, request: &Request, trusted: bool) -> Result<Option<Slot>, Busy> {
        let Some(peer) = request.extensions().get::<ConnectInfo<SocketAddr>>() else {
            return Ok(None);
        };
        if !trusted {
            self.warn_untrusted(peer.0, request.headers());
            return Ok(None);
        }
        let key = self.identity.key(Some(peer), request.headers()).0;
        match PerClient::take(&self.in_flight, key) {
            Some(slot) => Ok(Some(slot)),
            None => {
                tracing::warn!(proxy = %peer.0, max = self.in_flight.max, "refused a request: too many in flight from its forwarded address");
                Err(Busy)
            }
        }
    }

    fn warn_untrusted(&self, peer: SocketAddr, headers: &HeaderMap) {
        if self.warned.load(Ordering::Relaxed)
            || !(headers.contains_key(&X_FORWARDED_FOR) || headers.contains_key(header::FORWARDED))
            || self.warned.swap(true, Ordering::Relaxed)
        {
            return;
        }
        tracing::warn!(
            %peer,
            "a request carries X-Forwarded-For or Forwarded, but its peer {} is not a trusted proxy: the header is ignored, so behind a proxy every client is one identity (one rate bucket, one connection cap); trust the proxy with `--trust-proxy IP` (`HttpOptions::trust_proxy`); said once",
            peer.ip()
        );
    }
}

/// `response`, holding `slot` until its body ends (or is dropped, the client gone).
pub(crate) fn hold(slot: Option<Slot>, response: Response) -> Response {
    match slot {
        Some(slot) => response.map(|inner| Body::new(Held { inner, _slot: slot })),
        None => response,
    }
}

/// A forwarded client holds its maximum of requests in flight.
pub(crate) struct Busy;

impl Busy {
    /// The connection cap's answer (`BUSY` in `http`), to one request: the proxy's
    /// connection stays open for its other clients.
    pub(crate) fn response(self) -> Response {
        let mut response =
            Response::new(Body::from("Service Unavailable: too many connections\r\n"));
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        response
    }
}

/// A response body and the place its request holds.
struct Held {
    inner: Body,
    _slot: Slot,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_max_places_until_one_is_dropped() {
        let per = PerClient::new(2);
        let a1 = PerClient::take(&per, "ip:a".into());
        let a2 = PerClient::take(&per, "ip:a".into());
        assert!(a1.is_some() && a2.is_some());
        assert!(PerClient::take(&per, "ip:a".into()).is_none());
        assert!(
            PerClient::take(&per, "ip:b".into()).is_some(),
            "another key"
        );
        drop(a1);
        assert!(PerClient::take(&per, "ip:a".into()).is_some());
    }
}
