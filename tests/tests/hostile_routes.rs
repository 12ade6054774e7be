//! Routes decide first: a call is answered only at the endpoint's path. Sent to every other
//! path the listener has — the probes, the resource-metadata paths, a made-up path, paths
//! one letter from the endpoint's, the asterisk target — and to the metrics listener, each
//! way a call can arrive (a plain 2025-06-18 `tools/call`, a 2026-07-28 one with its
//! standard headers, a live session's call, a 2025-11-25 task call, a 2026-07-28 task call,
//! `tasks/get` of the victim's task), on stateless and stateful servers, with and without
//! bearer tokens: nothing is answered with a result, no money moves, no task starts, and
//! every path the endpoint does not serve answers each of them as it answers `tools/list`
//! there.
//!
//! The reproduction this guards: `POST /admin/delete-everything` with a plain
//! `billing_charge` answered `200` and charged the invoice (the request steps wrapped the
//! router's `404` fallback, and the room answered without asking which route matched).

use std::net::SocketAddr;

use fusion_runtime::http::spawn_metrics;
use fusion_runtime::mcp::HttpServer;
use fusion_tests::fixtures;
use fusion_tests::raw_http::{self, RawResponse};
use serde_json::{Value, json};

const SECRET: &str = "routes-secret-of-at-least-32-bytes-hs256";

fn token(sub: &str) -> String {
    fixtures::token(SECRET, sub)
}

/// The billing example with `nap`, stateless or with 2025 sessions, bearer tokens required
/// when `auth`.
async fn serve(stateless: bool, auth: bool) -> HttpServer {
    fixtures::billing_with_nap(SECRET, stateless, auth).await
}

/// One way a call arrives: its name, headers beyond the usual ones, body.
struct Way {
    name: &'static str,
    headers: Vec<(&'static str, String)>,
    body: String,
    /// Sent with the victim's session id (on a stateful server).
    in_session: bool,
}

fn ways() -> Vec<Way> {
    let charge = json!({"name": "billing_charge", "arguments": {"invoice_id": "inv_2026_0001", "amount_cents": 1}});
    let rpc = |method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
    };
    let modern = |method: &str, mut params: Value, tasks: bool| {
        params["_meta"] = fusion_tests::tasks::meta(tasks);
        rpc(method, params)
    };
    let v = |version: &str| vec![("mcp-protocol-version", version.to_owned())];
    let standard = |method: &str, name: &str| {
        vec![
            ("mcp-protocol-version", "2026-07-28".to_owned()),
            ("mcp-method", method.to_owned()),
            ("mcp-name", name.to_owned()),
        ]
    };
    let mut task25 = json!({"name": "nap", "arguments": {"ms": 1}});
    task25["task"] = json!({"ttl": 60000});
    vec![
        Way {
            name: "tools/list",
            headers: v("2025-06-18"),
            body: rpc("tools/list", json!({})),
            in_session: false,
        },
        Way {
            name: "plain 2025-06-18 tools/call",
            headers: v("2025-06-18"),
            body: rpc("tools/call", charge.clone()),
            in_session: false,
        },
        Way {
            name: "a live session's tools/call",
            headers: v("2025-06-18"),
            body: rpc("tools/call", charge.clone()),
            in_session: true,
        },
        Way {
            name: "plain 2026-07-28 tools/call",
            headers: standard("tools/call", "billing_charge"),
            body: modern("tools/call", charge, false),
            in_session: false,
        },
        Way {
            name: "2026-07-28 task tools/call",
            headers: standard("tools/call", "nap"),
            body: modern(
                "tools/call",
                json!({"name": "nap", "arguments": {"ms": 1}}),
                true,
            ),
            in_session: false,
        },
        Way {
            name: "2025-11-25 task tools/call",
            headers: v("2025-11-25"),
            body: rpc("tools/call", task25),
            in_session: true,
        },
        Way {
            name: "2025-11-25 tasks/list",
            headers: v("2025-11-25"),
            body: rpc("tasks/list", json!({})),
            in_session: true,
        },
    ]
}

/// The paths the listener has besides the endpoint's, and made-up ones.
const PATHS: &[&str] = &[
    "/",
    "/admin/delete-everything",
    "/MCP",
    "/mcpx",
    "/mcp/",
    "/mcp/x",
    "/metrics",
    "*",
    "/healthz",
    "/readyz",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
];

async fn send(
    addr: SocketAddr,
    path: &str,
    way: &Way,
    session: Option<&str>,
    bearer: Option<&str>,
) -> RawResponse {
    let mut headers: Vec<(&str, &str)> = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    for (n, v) in &way.headers {
        headers.push((n, v));
    }
    if let Some(s) = session.filter(|_| way.in_session) {
        headers.push(("mcp-session-id", s));
    }
    if let Some(b) = bearer {
        headers.push(("authorization", b));
    }
    raw_http::request(addr, "POST", path, &headers, &way.body)
        .await
        .unwrap_or_else(|e| panic!("POST {path}: {e}"))
}

/// The invoice's money, read at the endpoint.
async fn invoice(addr: SocketAddr, session: Option<&str>, bearer: Option<&str>) -> Value {
    let way = Way {
        name: "get",
        headers: vec![("mcp-protocol-version", "2025-06-18".to_owned())],
        body: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "billing_get_invoice", "arguments": {"id": "inv_2026_0001"}}}).to_string(),
        in_session: true,
    };
    let m = send(addr, "/mcp", &way, session, bearer).await.message();
    let content = m["result"]["structuredContent"].clone();
    assert!(content.is_object(), "no invoice: {m}");
    content
}

async fn open_session(addr: SocketAddr, bearer: Option<&str>) -> String {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if let Some(b) = bearer {
        headers.push(("authorization", b));
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"tasks": {"list": {}, "cancel": {}}},
        "clientInfo": {"name": "victim", "version": "1"}}});
    let r = raw_http::request(addr, "POST", "/mcp", &headers, &init.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {r:?}"))
        .to_owned();
    headers.push(("mcp-session-id", &id));
    headers.push(("mcp-protocol-version", "2025-11-25"));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = raw_http::request(addr, "POST", "/mcp", &headers, &note.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.status, 202, "{r:?}");
    id
}

async fn every_path(stateless: bool, auth: bool) {
    let server = serve(stateless, auth).await;
    let addr = server.local_addr;
    let bearer = auth.then(|| format!("Bearer {}", token("mallory")));
    let bearer = bearer.as_deref();
    let session = match stateless {
        true => None,
        false => Some(open_session(addr, bearer).await),
    };
    // The ways in work at the endpoint (so their refusal elsewhere means something): a
    // charge, in the session on a stateful server.
    let charge = &ways()[2];
    let at_endpoint = send(addr, "/mcp", charge, session.as_deref(), bearer)
        .await
        .message();
    assert!(
        at_endpoint["result"]["structuredContent"].is_object(),
        "the charge at /mcp: {at_endpoint}"
    );
    let money = invoice(addr, session.as_deref(), bearer).await;
    let naps = fixtures::all_naps_started();
    let mut checked = 0;
    for path in PATHS {
        let ways = ways();
        let list = send(addr, path, &ways[0], session.as_deref(), bearer).await;
        for way in &ways {
            let r = send(addr, path, way, session.as_deref(), bearer).await;
            let m = r.message();
            let what = format!(
                "{} at {path} (stateless: {stateless}, auth: {auth}): {r:?}",
                way.name
            );
            assert!(m.get("result").is_none(), "answered: {what}");
            assert_ne!(r.status, 200, "{what}");
            let served_elsewhere = matches!(*path, "/healthz" | "/readyz")
                || (auth && path.starts_with("/.well-known/"));
            if !served_elsewhere {
                assert_eq!(r.status, 404, "{what}");
                // Each way in answered as `tools/list` is answered there.
                assert_eq!(
                    (r.status, r.header("content-type"), &r.body),
                    (list.status, list.header("content-type"), &list.body),
                    "{what}"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, PATHS.len() * ways().len());
    assert_eq!(
        invoice(addr, session.as_deref(), bearer).await,
        money,
        "money moved"
    );
    assert_eq!(fixtures::all_naps_started(), naps, "a nap started");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_answers_calls_only_at_its_path() {
    every_path(true, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_with_auth_answers_calls_only_at_its_path() {
    every_path(true, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_server_answers_calls_only_at_its_path() {
    every_path(false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_server_with_auth_answers_calls_only_at_its_path() {
    every_path(false, true).await;
}

/// The metrics listener answers its scrape and nothing else: a call posted to it (at its
/// path or another) is no call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_listener_answers_no_call() {
    let metrics = spawn_metrics(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = metrics.local_addr;
    for path in ["/metrics", "/mcp", "/"] {
        for way in ways() {
            let r = send(addr, path, &way, None, None).await;
            assert!(
                r.message().get("result").is_none() && r.status != 200,
                "{} at the metrics listener's {path}: {r:?}",
                way.name
            );
        }
    }
    metrics.stop();
}
