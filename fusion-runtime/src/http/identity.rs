//! Who an HTTP client is, for per-client limits and session caps: never something the client
//! picks (the order is documented on [`ClientKey`]).

use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::HeaderMap;

use crate::context::ClientKey;

/// Where a trusted reverse proxy writes the client's address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, …` (nginx, HAProxy, most load balancers).
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy1`.
    Forwarded,
}

/// How to tell clients apart, from [`HttpOptions`](super::HttpOptions).
#[derive(Clone, Debug)]
pub(crate) struct Identity {
    trusted_proxies: Vec<IpAddr>,
    header: ForwardedHeader,
}

impl Identity {
    pub(crate) fn new(trusted_proxies: &[IpAddr], header: ForwardedHeader) -> Self {
        Identity {
            trusted_proxies: trusted_proxies.iter().map(|ip| ip.to_canonical()).collect(),
            header,
        }
    }

    pub(crate) fn trusts(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.contains(&ip.to_canonical())
    }

    /// Whether `request`'s peer is a trusted proxy (no peer address: not one).
    pub(crate) fn peer_is_trusted_proxy(&self, request: &axum::extract::Request) -> bool {
        request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .is_some_and(|peer| self.trusts(peer.ip()))
    }

    /// Who sent `request`: the key already in its extensions (an authentication layer's, or
    /// the accept loop's for a peer that is not a trusted proxy), else the key of its peer
    /// address (`ConnectInfo`) and forwarding headers, which is put there.
    pub(crate) fn client(&self, request: &mut axum::extract::Request) -> ClientKey {
        if let Some(key) = request.extensions().get::<ClientKey>() {
            return key.clone();
        }
        let key = self.key(
            request.extensions().get::<ConnectInfo<SocketAddr>>(),
            request.headers(),
        );
        request.extensions_mut().insert(key.clone());
        key
    }

    /// The key of a request from `peer` with `headers` (rules 2 and 3 of the module docs).
    pub(crate) fn key(
        &self,
        peer: Option<&ConnectInfo<SocketAddr>>,
        headers: &HeaderMap,
    ) -> ClientKey {
        let Some(ConnectInfo(peer)) = peer else {
            return ClientKey::new("http");
        };
        ip_key(self.client_ip(peer.ip(), headers))
    }

    /// The right-most address of the forwarding chain that is not a trusted proxy, when the
    /// peer is one; else the peer. A chain the proxy wrote but this cannot read falls back to
    /// the proxy's own address: coarser, never chosen by the client.
    fn client_ip(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let mut chain: Vec<Option<IpAddr>> = Vec::new();
        match self.header {
            ForwardedHeader::XForwardedFor => {
                for value in headers.get_all("x-forwarded-for") {
                    let Ok(value) = value.to_str() else {
                        return peer;
                    };
                    chain.extend(value.split(',').map(|hop| parse_node(hop.trim())));
                }
            }
            ForwardedHeader::Forwarded => {
                for value in headers.get_all("forwarded") {
                    let Ok(value) = value.to_str() else {
                        return peer;
                    };
                    for element in value.split(',') {
                        let node = element.split(';').find_map(|pair| {
                            let (name, value) = pair.trim().split_once('=')?;
                            name.trim()
                                .eq_ignore_ascii_case("for")
                                .then(|| value.trim())
                        });
                        chain.push(node.and_then(parse_node));
                    }
                }
            }
        }
        for hop in chain.into_iter().rev() {
            match hop {
                Some(ip) if self.trusts(ip) => continue,
                Some(ip) => return ip,
                None => return peer,
            }
        }
        peer
    }
}

/// One address of a forwarding chain: `203.0.113.7`, `203.0.113.7:4711`, `2001:db8::1`,
/// `[2001:db8::1]:4711`, each possibly quoted. Obfuscated or `unknown` nodes are `None`.
fn parse_node(node: &str) -> Option<IpAddr> {
    let node = node.trim().trim_matches('"');
    if let Ok(ip) = node.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(addr) = node.parse::<SocketAddr>() {
        return Some(addr.ip());
    }
    let inner = node.strip_prefix('[')?;
    let (ip, _) = inner.split_once(']')?;
    ip.parse().ok()
}

/// `ip:203.0.113.7`, or for IPv6 the /64 network: `ip:2001:db8:1:2::/64`.
pub(crate) fn ip_key(ip: IpAddr) -> ClientKey {
    match ip.to_canonical() {
        IpAddr::V4(v4) => ClientKey::new(format!("ip:{v4}")),
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 64) - 1);
            ClientKey::new(format!("ip:{}/64", std::net::Ipv6Addr::from(network)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(trusted: &[&str], header: ForwardedHeader) -> Identity {
        let trusted: Vec<IpAddr> = trusted
            .iter()
            .map(|t| t.parse::<IpAddr>().unwrap_or_else(|e| panic!("{e}")))
            .collect();
        Identity::new(&trusted, header)
    }

    fn key(identity: &Identity, peer: &str, headers: &[(&str, &str)]) -> String {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes())
                    .unwrap_or_else(|e| panic!("{e}")),
                value.parse().unwrap_or_else(|e| panic!("{e}")),
            );
        }
        let peer = ConnectInfo(peer.parse::<SocketAddr>().unwrap_or_else(|e| panic!("{e}")));
        identity.key(Some(&peer), &map).0
    }

    #[test]
    fn without_a_trusted_proxy_the_forwarding_headers_are_ignored() {
        let id = identity(&[], ForwardedHeader::XForwardedFor);
        let k = key(
            &id,
            "198.51.100.1:5000",
            &[("x-forwarded-for", "203.0.113.9")],
        );
        assert_eq!(k, "ip:198.51.100.1");
        let id = identity(&["10.0.0.1"], ForwardedHeader::XForwardedFor);
        let k = key(
            &id,
            "198.51.100.1:5000",
            &[("x-forwarded-for", "203.0.113.9")],
        );
        assert_eq!(k, "ip:198.51.100.1", "the peer is not the trusted proxy");
    }

    #[test]
    fn the_right_most_untrusted_address_is_the_client() {
        let id = identity(&["10.0.0.1", "10.0.0.2"], ForwardedHeader::XForwardedFor);
        let spoofed = "1.1.1.1, 203.0.113.9, 10.0.0.2";
        assert_eq!(
            key(&id, "10.0.0.1:80", &[("x-forwarded-for", spoofed)]),
            "ip:203.0.113.9"
        );
        let split = [
            ("x-forwarded-for", "1.1.1.1"),
            ("x-forwarded-for", "203.0.113.9"),
        ];
        assert_eq!(key(&id, "10.0.0.1:80", &split), "ip:203.0.113.9");
        assert_eq!(
            key(&id, "10.0.0.1:80", &[("x-forwarded-for", "10.0.0.2")]),
            "ip:10.0.0.1",
            "only proxies in the chain: the peer"
        );
        assert_eq!(
            key(
                &id,
                "10.0.0.1:80",
                &[("x-forwarded-for", "1.1.1.1, garbage")]
            ),
            "ip:10.0.0.1",
            "an unreadable hop: the peer, not an earlier client-written hop"
        );
        assert_eq!(key(&id, "10.0.0.1:80", &[]), "ip:10.0.0.1");
    }

    #[test]
    fn forwarded_is_read_only_when_chosen() {
        let id = identity(&["10.0.0.1"], ForwardedHeader::Forwarded);
        let headers = [
            (
                "forwarded",
                r#"for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https"#,
            ),
            ("x-forwarded-for", "203.0.113.9"),
        ];
        assert_eq!(key(&id, "10.0.0.1:80", &headers), "ip:2001:db8:cafe::/64");
        let id = identity(&["10.0.0.1"], ForwardedHeader::XForwardedFor);
        assert_eq!(key(&id, "10.0.0.1:80", &headers), "ip:203.0.113.9");
    }

    #[test]
    fn ipv6_peers_count_by_their_64_network_and_mapped_ipv4_as_ipv4() {
        let id = identity(&[], ForwardedHeader::XForwardedFor);
        assert_eq!(
            key(&id, "[2001:db8:1:2::1]:80", &[]),
            "ip:2001:db8:1:2::/64"
        );
        assert_eq!(
            key(&id, "[2001:db8:1:2:ffff::9]:80", &[]),
            "ip:2001:db8:1:2::/64"
        );
        assert_eq!(key(&id, "[::ffff:192.0.2.1]:80", &[]), "ip:192.0.2.1");
    }

    #[test]
    fn no_recorded_peer_is_one_shared_bucket() {
        let id = identity(&[], ForwardedHeader::XForwardedFor);
        assert_eq!(id.key(None, &HeaderMap::new()).0, "http");
    }
}
