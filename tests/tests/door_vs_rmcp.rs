//! The door held against bare rmcp: every assumption the door makes about what rmcp does
//! with a request — whether it routes it into the session `mcp-session-id` names, how it
//! answers a foreign `Host` or `Origin` — is a comparison here with rmcp's own
//! `StreamableHttpService` serving the same handler ([`McpHandler`]) with the configuration
//! the endpoint gives it, not a comment.
//!
//! The matrix: every HTTP method the transport knows (`POST` of `initialize`, `tools/list`, a
//! plain `tools/call`, a notification; `GET`; `DELETE`; `PUT`) × every version header (none,
//! 2025-06-18, 2025-11-25, 2026-07-28, each request as that revision's client sends it) ×
//! every session case (none, made up, deleted, the sender's own, another client's) × every
//! `Host`/`Origin` case (as they come, a foreign `Host`, a foreign `Origin`, two `Host`s, two
//! `Origin`s, an absolute-form target naming a foreign host), on a stateful and a stateless
//! endpoint. Compared: the status, whether a session id came back, and the answer's words
//! (rmcp's plain-text refusal against the JSON-RPC error the endpoint rewrites it into; a
//! JSON-RPC answer's `error` message or that it has a `result`).
//!
//! The endpoint differs from bare rmcp on purpose, and each difference is named where it is
//! expected ([`Difference`]):
//! - **owner**: a session is its opener's. Another client's request that rmcp would route
//!   into it is `404 Not Found: Session not found`; bare rmcp serves it (it binds sessions to
//!   nothing).
//! - **one host**: two `Host` (or `Origin`) headers are `400` (RFC 9112 §3.2); rmcp reads the
//!   first. An absolute-form target's host is the one checked (RFC 9112 §3.2.2); rmcp reads
//!   `Host`.
//! - **closed**: a `DELETE` that closed a session is `200` (clients such as the Python SDK
//!   expect 200 or 204); rmcp answers `202`.
//! - **no such session**: a `DELETE` naming a session that is not a live one (made up, or
//!   already closed) is `404`, as every other request naming it is; rmcp answers `202` to any
//!   id, closing nothing.
//! - **unread stream**: none needed — a `GET` stream both keep open is compared by its head.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use fusion_runtime::mcp::{HttpOptions, HttpServer, McpHandler, spawn_http};
use fusion_runtime::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use fusion_runtime::rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use fusion_runtime::{Server, ToolError, ToolInput, tool_action};
use fusion_tests::raw_http::{self, RawResponse};
use serde::Deserialize;
use serde_json::{Value, json};

/// The sender of every case.
const ME: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
/// Another client (the endpoint tells clients apart by address without authentication).
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
/// How long a response that stays open (a `GET` stream) is read.
const STREAM_WAIT: Duration = Duration::from_millis(300);

/// Something to show.
#[derive(Deserialize, ToolInput)]
struct Show {
    /// An id.
    #[fusion(length(min = 1, max = 20))]
    id: String,
}

/// Shows it.
#[tool_action(name = "show", read_only)]
async fn show(input: Show) -> Result<String, ToolError> {
    Ok(input.id)
}

fn server() -> Server {
    Server::builder()
        .name("door-vs-rmcp")
        .action::<ShowAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn options(stateless: bool) -> HttpOptions {
    HttpOptions::default()
        .stateless(stateless)
        .max_sessions_per_client(100_000)
        .max_sessions(100_000)
}

/// Bare rmcp, configured as the endpoint configures it (`mcp/http/router.rs`), serving the
/// same handler, at `/mcp` in axum.
async fn bare(stateless: bool) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let options = options(stateless);
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless)
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .with_max_request_body_bytes(options.max_body_bytes);
    if options.allowed_origins.is_empty() {
        config = config.enforce_origin_validation();
    }
    let handler = McpHandler::new(server());
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let router = axum::Router::new().nest_service("/mcp", service);
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, task)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Initialize,
    List,
    Call,
    Notification,
    Get,
    Delete,
    Put,
}

const METHODS: [Method; 7] = [
    Method::Initialize,
    Method::List,
    Method::Call,
    Method::Notification,
    Method::Get,
    Method::Delete,
    Method::Put,
];

const VERSIONS: [Option<&str>; 4] = [
    None,
    Some("2025-06-18"),
    Some("2025-11-25"),
    Some("2026-07-28"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Session {
    None,
    MadeUp,
    Deleted,
    Own,
    Others,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    ForeignHost,
    ForeignOrigin,
    TwoHosts,
    TwoOrigins,
    AbsoluteForeign,
}

const FAULTS: [Fault; 6] = [
    Fault::None,
    Fault::ForeignHost,
    Fault::ForeignOrigin,
    Fault::TwoHosts,
    Fault::TwoOrigins,
    Fault::AbsoluteForeign,
];

/// A difference from bare rmcp the endpoint makes on purpose (see the module's doc).
#[derive(Debug, PartialEq, Eq)]
enum Difference {
    Owner,
    OneHost,
    Closed,
    NoSuchSession,
}

/// A request as the case's client sends it: HTTP method, target, headers, body.
fn request(
    method: Method,
    version: Option<&'static str>,
) -> (&'static str, Vec<(&'static str, String)>, String) {
    let modern = version == Some("2026-07-28");
    let mut headers = Vec::new();
    if let Some(v) = version {
        headers.push(("mcp-protocol-version", v.to_owned()));
    }
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "door", "version": "1"},
    });
    let rpc = |rpc_method: &str, mut params: Value, standard: Option<&str>| {
        let mut headers = headers.clone();
        headers.push(("content-type", "application/json".to_owned()));
        headers.push(("accept", "application/json, text/event-stream".to_owned()));
        if modern && rpc_method != "initialize" {
            params["_meta"] = meta.clone();
            headers.push(("mcp-method", rpc_method.to_owned()));
            if let Some(name) = standard {
                headers.push(("mcp-name", name.to_owned()));
            }
        }
        let body =
            json!({"jsonrpc": "2.0", "id": 7, "method": rpc_method, "params": params}).to_string();
        ("POST", headers, body)
    };
    match method {
        Method::Initialize => rpc(
            "initialize",
            json!({"protocolVersion": version.unwrap_or("2025-11-25"), "capabilities": {},
                   "clientInfo": {"name": "door", "version": "1"}}),
            None,
        ),
        Method::List => rpc("tools/list", json!({}), None),
        Method::Call => rpc(
            "tools/call",
            json!({"name": "show", "arguments": {"id": "a"}}),
            Some("show"),
        ),
        Method::Notification => {
            let mut headers = headers.clone();
            headers.push(("content-type", "application/json".to_owned()));
            headers.push(("accept", "application/json, text/event-stream".to_owned()));
            let body = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            ("POST", headers, body.to_string())
        }
        Method::Get => {
            let mut headers = headers.clone();
            headers.push(("accept", "text/event-stream".to_owned()));
            ("GET", headers, String::new())
        }
        Method::Delete => ("DELETE", headers.clone(), String::new()),
        Method::Put => {
            let mut headers = headers.clone();
            headers.push(("content-type", "application/json".to_owned()));
            ("PUT", headers, "{}".to_owned())
        }
    }
}

/// Opens a 2025-06-18 session at `addr` from `from`: its id.
async fn open(addr: SocketAddr, from: IpAddr) -> String {
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "door", "version": "1"}}});
    let r = raw_http::request_from(
        Some(from),
        addr,
        "POST",
        "/mcp",
        &headers,
        &init.to_string(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {r:?}"))
        .to_owned();
    let mut with = headers.to_vec();
    with.push(("mcp-session-id", &id));
    with.push(("mcp-protocol-version", "2025-06-18"));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = raw_http::request_from(Some(from), addr, "POST", "/mcp", &with, &note.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.status, 202, "{r:?}");
    id
}

/// The session id a case names at `addr` (made for it, on a stateful endpoint).
async fn session_for(addr: SocketAddr, case: Session) -> Option<String> {
    match case {
        Session::None => None,
        Session::MadeUp => Some("no-such-session".to_owned()),
        Session::Own => Some(open(addr, ME).await),
        Session::Others => Some(open(addr, OTHER).await),
        Session::Deleted => {
            let id = open(addr, ME).await;
            let headers = [
                ("mcp-session-id", id.as_str()),
                ("mcp-protocol-version", "2025-06-18"),
            ];
            let r = raw_http::request_from(Some(ME), addr, "DELETE", "/mcp", &headers, "")
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(matches!(r.status, 200 | 202), "{r:?}");
            Some(id)
        }
    }
}

/// What is compared of an answer: status, whether a session id came back, and its words.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    status: u16,
    session: bool,
    words: String,
}

fn seen(r: &RawResponse) -> Seen {
    let message = r.message();
    let words = if let Some(error) = message.get("error") {
        format!("error: {}", error["message"].as_str().unwrap_or_default())
    } else if message.get("result").is_some() {
        "result".to_owned()
    } else if r.status >= 400 {
        // rmcp's refusal in plain text.
        format!("error: {}", r.body.trim())
    } else {
        String::new()
    };
    Seen {
        status: r.status,
        session: r.header("mcp-session-id").is_some(),
        words,
    }
}

async fn send(
    addr: SocketAddr,
    method: Method,
    version: Option<&'static str>,
    session: Option<&str>,
    fault: Fault,
) -> RawResponse {
    let (http_method, headers, body) = request(method, version);
    let mut headers: Vec<(&str, String)> = headers;
    let mut target = "/mcp".to_owned();
    match fault {
        Fault::None => {}
        Fault::ForeignHost => headers.push(("host", "evil.example".to_owned())),
        Fault::ForeignOrigin => headers.push(("origin", "http://evil.example".to_owned())),
        Fault::TwoHosts => {
            headers.push(("host", "127.0.0.1".to_owned()));
            headers.push(("host", "evil.example".to_owned()));
        }
        Fault::TwoOrigins => {
            headers.push(("origin", "http://localhost".to_owned()));
            headers.push(("origin", "http://evil.example".to_owned()));
        }
        Fault::AbsoluteForeign => target = "http://evil.example/mcp".to_owned(),
    }
    if let Some(id) = session {
        headers.push(("mcp-session-id", id.to_owned()));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let (response, _open) = raw_http::request_within(
        Some(ME),
        addr,
        http_method,
        &target,
        &headers,
        &body,
        STREAM_WAIT,
    )
    .await
    .unwrap_or_else(|e| panic!("{http_method} {target}: {e}"));
    response
}

/// Whether rmcp 3.11 routes the request into the session it names (the door's table, in
/// `mcp/http/door.rs`).
fn rmcp_routes_into_session(method: Method, version: Option<&str>) -> bool {
    let modern = version == Some("2026-07-28");
    match method {
        Method::Initialize => true,
        Method::List | Method::Call | Method::Notification | Method::Get | Method::Delete => {
            !modern
        }
        Method::Put => false,
    }
}

/// The difference a case is expected to show, if any.
fn difference(
    stateless: bool,
    method: Method,
    version: Option<&str>,
    session: Session,
    fault: Fault,
) -> Option<Difference> {
    if matches!(
        fault,
        Fault::TwoHosts | Fault::TwoOrigins | Fault::AbsoluteForeign
    ) {
        return Some(Difference::OneHost);
    }
    if fault != Fault::None {
        return None;
    }
    let routed = !stateless && rmcp_routes_into_session(method, version);
    if routed && session == Session::Others {
        return Some(Difference::Owner);
    }
    if routed && method == Method::Delete && session == Session::Own {
        return Some(Difference::Closed);
    }
    if routed && method == Method::Delete && matches!(session, Session::MadeUp | Session::Deleted) {
        return Some(Difference::NoSuchSession);
    }
    None
}

async fn compare(stateless: bool) {
    let fusion: HttpServer = spawn_http(
        server(),
        SocketAddr::from(([127, 0, 0, 1], 0)),
        options(stateless),
    )
    .await
    .unwrap_or_else(|e| panic!("spawn: {e}"));
    let (rmcp, task) = bare(stateless).await;
    let sessions: &[Session] = match stateless {
        true => &[Session::None, Session::MadeUp],
        false => &[
            Session::None,
            Session::MadeUp,
            Session::Deleted,
            Session::Own,
            Session::Others,
        ],
    };
    let mut compared = 0;
    let mut by_difference = std::collections::BTreeMap::<String, usize>::new();
    for method in METHODS {
        for version in VERSIONS {
            for &session in sessions {
                for fault in FAULTS {
                    // Faults of `Host` and `Origin` are crossed with the plainest sessions.
                    if fault != Fault::None && !matches!(session, Session::None | Session::Own) {
                        continue;
                    }
                    let ours = session_for(fusion.local_addr, session).await;
                    let theirs = session_for(rmcp, session).await;
                    let a = send(fusion.local_addr, method, version, ours.as_deref(), fault).await;
                    let b = send(rmcp, method, version, theirs.as_deref(), fault).await;
                    let (a_seen, b_seen) = (seen(&a), seen(&b));
                    let case = format!(
                        "{method:?} × {version:?} × {session:?} × {fault:?} (stateless: {stateless})\nendpoint: {a:?}\nbare rmcp: {b:?}"
                    );
                    match difference(stateless, method, version, session, fault) {
                        None => assert_eq!(a_seen, b_seen, "{case}"),
                        Some(Difference::Owner) => {
                            assert_eq!(
                                (a_seen.status, a_seen.words.as_str()),
                                (404, "error: Not Found: Session not found"),
                                "{case}"
                            );
                            assert_ne!(b_seen.status, 404, "bare rmcp serves it: {case}");
                            *by_difference.entry("owner".into()).or_default() += 1;
                        }
                        Some(Difference::OneHost) => {
                            let expected = match fault {
                                Fault::TwoHosts => {
                                    (400, "error: Bad Request: more than one Host header")
                                }
                                Fault::TwoOrigins => {
                                    (400, "error: Bad Request: more than one Origin header")
                                }
                                _ => (403, "error: Forbidden: Host header is not allowed"),
                            };
                            assert_eq!((a_seen.status, a_seen.words.as_str()), expected, "{case}");
                            assert_ne!(a_seen, b_seen, "bare rmcp reads one of them: {case}");
                            *by_difference.entry("one host".into()).or_default() += 1;
                        }
                        Some(Difference::NoSuchSession) => {
                            assert_eq!(
                                (a_seen.status, a_seen.words.as_str(), b_seen.status),
                                (404, "error: Not Found: Session not found", 202),
                                "{case}"
                            );
                            *by_difference.entry("no such session".into()).or_default() += 1;
                        }
                        Some(Difference::Closed) => {
                            assert_eq!((a_seen.status, b_seen.status), (200, 202), "{case}");
                            *by_difference.entry("closed".into()).or_default() += 1;
                        }
                    }
                    compared += 1;
                }
            }
        }
    }
    eprintln!(
        "stateless: {stateless}: {compared} cases compared, named differences: {by_difference:?}"
    );
    let plainest = sessions
        .iter()
        .filter(|s| matches!(s, Session::None | Session::Own))
        .count();
    let expected_cases =
        METHODS.len() * VERSIONS.len() * (sessions.len() + plainest * (FAULTS.len() - 1));
    assert_eq!(compared, expected_cases);
    // Every named difference was met, on the endpoint where it can be.
    assert!(by_difference.get("one host").copied().unwrap_or(0) > 0);
    if !stateless {
        assert!(by_difference.get("owner").copied().unwrap_or(0) > 0);
        assert!(by_difference.get("closed").copied().unwrap_or(0) > 0);
        assert!(by_difference.get("no such session").copied().unwrap_or(0) > 0);
    }
    fusion.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_door_answers_as_bare_rmcp_but_where_it_means_to() {
    compare(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_door_answers_as_bare_rmcp_but_where_it_means_to() {
    compare(true).await;
}
