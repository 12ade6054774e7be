//! The door, as an attacker tries it: every method the server answers, on every path it
//! answers them on (rmcp's, the plain call answered without rmcp, the 2025-11-25 task
//! methods, the 2026-07-28 ones, the stream and the session's end), sent with each fault —
//! a foreign `Host` (DNS rebinding), a foreign `Origin`, both, a made-up session, a deleted
//! session, another principal's session, no session on a stateful server — on stateless and
//! stateful servers, with and without authentication.
//!
//! Each fault gets one refusal, whichever method and path it arrives on: byte for byte the
//! answer a plain `tools/list` with the same fault gets (status, content type, body; a body
//! the request never sent carries no id). And nothing is read or changed: the victim's tasks
//! keep running and are not cancelled, no task or charge is made, the invoice's money is the
//! same before and after, the victim's sessions live on.
//!
//! Without authentication every loopback client is one client (its address), so "another
//! principal's session" is tried with tokens only.

use std::net::SocketAddr;
use std::time::Duration;

use fusion_runtime::mcp::HttpServer;
use fusion_tests::fixtures;
use fusion_tests::raw_http::{self, RawResponse};
use serde_json::{Value, json};

const SECRET: &str = "door-secret-of-at-least-32-bytes-hs256";
/// The id of every request the attacker sends.
const ID: u64 = 99;

fn token(sub: &str) -> String {
    fixtures::token(SECRET, sub)
}

/// The billing example with `nap`, stateless or with 2025 sessions, bearer tokens required
/// when `auth`.
async fn serve(stateless: bool, auth: bool) -> HttpServer {
    fixtures::billing_with_nap(SECRET, stateless, auth).await
}

/// Who sends a request, and how.
#[derive(Clone, Default)]
struct From {
    host: Option<&'static str>,
    origin: Option<&'static str>,
    session: Option<String>,
    /// The bearer token's subject.
    who: Option<&'static str>,
}

/// One request as the attacker (or the victim) sends it.
struct Sent {
    method: &'static str,
    version: Option<&'static str>,
    /// `Mcp-Method` and `Mcp-Name` (2026-07-28).
    standard: Option<(&'static str, String)>,
    body: String,
}

async fn send(addr: SocketAddr, from: &From, sent: &Sent) -> RawResponse {
    let bearer = from.who.map(|w| format!("Bearer {}", token(w)));
    let mut headers: Vec<(&str, &str)> = vec![("accept", "application/json, text/event-stream")];
    if !sent.body.is_empty() {
        headers.push(("content-type", "application/json"));
    }
    if let Some(host) = from.host {
        headers.push(("host", host));
    }
    if let Some(origin) = from.origin {
        headers.push(("origin", origin));
    }
    if let Some(session) = &from.session {
        headers.push(("mcp-session-id", session));
    }
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    if let Some(v) = sent.version {
        headers.push(("mcp-protocol-version", v));
    }
    if let Some((method, name)) = &sent.standard {
        headers.push(("mcp-method", method));
        if !name.is_empty() {
            headers.push(("mcp-name", name));
        }
    }
    // A stream that is served would be held open: the request times out instead, and
    // the test fails on its status.
    match raw_http::request(addr, sent.method, "/mcp", &headers, &sent.body).await {
        Ok(response) => response,
        Err(e) => RawResponse {
            status: 0,
            headers: Vec::new(),
            body: format!("no answer: {e}"),
        },
    }
}

/// A 2025 JSON-RPC POST.
fn legacy(version: &'static str, method: &str, params: Value) -> Sent {
    Sent {
        method: "POST",
        version: Some(version),
        standard: None,
        body: json!({"jsonrpc": "2.0", "id": ID, "method": method, "params": params}).to_string(),
    }
}

/// A 2026-07-28 JSON-RPC POST, its `_meta` and standard headers as a client sends them.
fn modern(method: &'static str, mut params: Value, tasks: bool) -> Sent {
    params["_meta"] = fusion_tests::tasks::meta(tasks);
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .unwrap_or_default()
        .to_owned();
    Sent {
        method: "POST",
        version: Some("2026-07-28"),
        standard: Some((method, name)),
        body: json!({"jsonrpc": "2.0", "id": ID, "method": method, "params": params}).to_string(),
    }
}

fn bare(method: &'static str) -> Sent {
    Sent {
        method,
        version: Some("2025-11-25"),
        standard: None,
        body: String::new(),
    }
}

/// Every method the server answers, on every path: its name and the request. `t25` and
/// `t26` are the victim's 2025-11-25 and 2026-07-28 tasks.
fn methods(t25: &str, t26: &str, nap_ms: u64) -> Vec<(&'static str, Sent, bool)> {
    let charge = json!({"name": "billing_charge", "arguments": {"invoice_id": "inv_2026_0001", "amount_cents": 100}});
    let nap = json!({"name": "nap", "arguments": {"ms": nap_ms}});
    let mut nap_task = nap.clone();
    nap_task["task"] = json!({"ttl": 60000});
    // (name, request, whether it is a 2025 request a session applies to)
    vec![
        (
            "initialize",
            legacy(
                "2025-11-25",
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tasks": {"cancel": {}}}, "clientInfo": {"name": "attacker", "version": "1"}}),
            ),
            true,
        ),
        (
            "tools/list",
            legacy("2025-11-25", "tools/list", json!({})),
            true,
        ),
        (
            "plain tools/call",
            legacy("2025-06-18", "tools/call", charge.clone()),
            true,
        ),
        (
            "2025-11-25 task tools/call",
            legacy("2025-11-25", "tools/call", nap_task),
            true,
        ),
        (
            "2025-11-25 tasks/get",
            legacy("2025-11-25", "tasks/get", json!({"taskId": t25})),
            true,
        ),
        (
            "2025-11-25 tasks/result",
            legacy("2025-11-25", "tasks/result", json!({"taskId": t25})),
            true,
        ),
        (
            "2025-11-25 tasks/cancel",
            legacy("2025-11-25", "tasks/cancel", json!({"taskId": t25})),
            true,
        ),
        ("GET stream", bare("GET"), true),
        ("DELETE", bare("DELETE"), true),
        // rmcp sends an `initialize` into the session it names whatever version it names:
        // a session fault is a fault here too.
        (
            "2026-07-28 initialize",
            Sent {
                method: "POST",
                version: Some("2026-07-28"),
                standard: None,
                body: json!({"jsonrpc": "2.0", "id": ID, "method": "initialize", "params": {
                    "protocolVersion": "2026-07-28", "capabilities": {},
                    "clientInfo": {"name": "attacker", "version": "1"}}})
                .to_string(),
            },
            true,
        ),
        (
            "2026-07-28 tools/call",
            modern("tools/call", charge, false),
            false,
        ),
        (
            "2026-07-28 task tools/call",
            modern("tools/call", nap, true),
            false,
        ),
        (
            "2026-07-28 tasks/get",
            modern("tasks/get", json!({"taskId": t26}), true),
            false,
        ),
        (
            "2026-07-28 tasks/cancel",
            modern("tasks/cancel", json!({"taskId": t26}), true),
            false,
        ),
    ]
}

/// Opens a 2025-11-25 session as `who`: its id.
async fn open_session(addr: SocketAddr, who: Option<&'static str>) -> String {
    let from = From {
        who,
        ..From::default()
    };
    let mut init = legacy(
        "2025-11-25",
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"tasks": {"cancel": {}}}, "clientInfo": {"name": "victim", "version": "1"}}),
    );
    init.version = None;
    let r = send(addr, &from, &init).await;
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {r:?}"))
        .to_owned();
    let from = From {
        session: Some(id.clone()),
        ..from
    };
    let note = Sent {
        method: "POST",
        version: Some("2025-11-25"),
        standard: None,
        body: json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    };
    let r = send(addr, &from, &note).await;
    assert_eq!(r.status, 202, "{r:?}");
    id
}

/// What the victim can see of its own state: its 2026-07-28 task, its 2025-11-25 task (in
/// its session), the invoice's money.
async fn victim_state(
    addr: SocketAddr,
    victim: &From,
    t25: Option<&str>,
    t26: &str,
) -> (Value, Value, Value) {
    let task26 = send(
        addr,
        &From {
            session: None,
            ..victim.clone()
        },
        &modern("tasks/get", json!({"taskId": t26}), true),
    )
    .await
    .message();
    let task25 = match t25 {
        Some(t25) => send(
            addr,
            victim,
            &legacy("2025-11-25", "tasks/get", json!({"taskId": t25})),
        )
        .await
        .message(),
        None => Value::Null,
    };
    let invoice = send(
        addr,
        victim,
        &legacy(
            "2025-06-18",
            "tools/call",
            json!({"name": "billing_get_invoice", "arguments": {"id": "inv_2026_0001"}}),
        ),
    )
    .await
    .message();
    (
        task26["result"]["status"].clone(),
        task25["result"]["status"].clone(),
        invoice["result"]["structuredContent"].clone(),
    )
}

/// The fault's refusal for a request that sent `sent`: the reference (a plain `tools/list`'s
/// answer), its id left out where the request had no body.
fn expected(reference: &RawResponse, sent: &Sent) -> (u16, Option<String>, String) {
    let body = match sent.body.is_empty() {
        true => reference
            .body
            .replace(&format!("\"id\":{ID}"), "\"id\":null"),
        false => reference.body.clone(),
    };
    (
        reference.status,
        reference.header("content-type").map(str::to_owned),
        body,
    )
}

fn got(r: &RawResponse) -> (u16, Option<String>, String) {
    (
        r.status,
        r.header("content-type").map(str::to_owned),
        r.body.clone(),
    )
}

/// The whole matrix on one server.
async fn attack(stateless: bool, auth: bool, nap_ms: u64) {
    let server = serve(stateless, auth).await;
    let addr = server.local_addr;
    let who = |name| auth.then_some(name);
    let victim_session = match stateless {
        true => None,
        false => Some(open_session(addr, who("victim")).await),
    };
    let victim = From {
        who: who("victim"),
        session: victim_session.clone(),
        ..From::default()
    };

    // The victim's tasks: a 2026-07-28 one, and on a stateful server a 2025-11-25 one.
    let started = send(
        addr,
        &From {
            session: None,
            ..victim.clone()
        },
        &modern(
            "tools/call",
            json!({"name": "nap", "arguments": {"ms": nap_ms}}),
            true,
        ),
    )
    .await
    .message();
    let t26 = started["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {started}"))
        .to_owned();
    let t25 = match &victim_session {
        Some(_) => {
            let m = send(
                addr,
                &victim,
                &legacy(
                    "2025-11-25",
                    "tools/call",
                    json!({"name": "nap", "arguments": {"ms": nap_ms}, "task": {"ttl": 60000}}),
                ),
            )
            .await
            .message();
            Some(
                m["result"]["task"]["taskId"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no 2025-11-25 task: {m}"))
                    .to_owned(),
            )
        }
        None => None,
    };
    // A task's handler runs in a task of its own: it has started once counted (bounded wait;
    // a loaded machine may run it a moment after the answer).
    let tasks = 1 + usize::from(t25.is_some());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while fixtures::naps_started(nap_ms) < tasks && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let naps_before = fixtures::naps_started(nap_ms);
    assert_eq!(naps_before, tasks);
    let before = victim_state(addr, &victim, t25.as_deref(), &t26).await;
    assert_eq!(before.0, "working", "{before:?}");
    // The victim's 2025-11-25 task (a stateful server's) and the invoice are there to lose.
    if t25.is_some() {
        assert_eq!(before.1, "working", "{before:?}");
    }
    assert!(
        before.2["paid_cents"].is_u64() && before.2["total_cents"].is_u64(),
        "no invoice amount: {before:?}"
    );

    // The faults, each with the status its refusal must have.
    let deleted = match stateless {
        true => None,
        false => {
            let gone = open_session(addr, who("victim")).await;
            let from = From {
                session: Some(gone.clone()),
                ..victim.clone()
            };
            let r = send(addr, &from, &bare("DELETE")).await;
            assert_eq!(r.status, 200, "{r:?}");
            Some(gone)
        }
    };
    let mut faults: Vec<(&str, From, u16)> = vec![
        (
            "foreign Host",
            From {
                host: Some("evil.example:8080"),
                ..victim.clone()
            },
            403,
        ),
        (
            "foreign Origin",
            From {
                origin: Some("http://evil.example:8080"),
                ..victim.clone()
            },
            403,
        ),
        (
            "foreign Host, a made-up session",
            From {
                host: Some("evil.example:8080"),
                session: Some("no-such-session".into()),
                ..victim.clone()
            },
            403,
        ),
        (
            "foreign Host and Origin",
            From {
                host: Some("evil.example:8080"),
                origin: Some("http://evil.example:8080"),
                ..victim.clone()
            },
            403,
        ),
    ];
    if let Some(deleted) = deleted {
        faults.push((
            "made-up session",
            From {
                session: Some("no-such-session".into()),
                ..victim.clone()
            },
            404,
        ));
        faults.push((
            "deleted session",
            From {
                session: Some(deleted),
                ..victim.clone()
            },
            404,
        ));
        if auth {
            faults.push((
                "another principal's session",
                From {
                    who: Some("mallory"),
                    ..victim.clone()
                },
                404,
            ));
        }
        faults.push((
            "no session on a stateful server",
            From {
                session: None,
                ..victim.clone()
            },
            400,
        ));
    }

    let methods = methods(t25.as_deref().unwrap_or("none"), &t26, nap_ms);
    let mut checked = 0;
    for (fault, from, status) in &faults {
        let session_fault = from.host.is_none() && from.origin.is_none();
        let reference = send(addr, from, &legacy("2025-06-18", "tools/list", json!({}))).await;
        assert_eq!(reference.status, *status, "{fault}: {reference:?}");
        for (name, sent, in_a_session) in &methods {
            // A 2026-07-28 request other than `initialize` is served without a session: a
            // session id there is no fault. `initialize` with no session is how a session
            // starts.
            if session_fault
                && (!in_a_session || (name.ends_with("initialize") && from.session.is_none()))
            {
                continue;
            }
            let answer = send(addr, from, sent).await;
            assert_eq!(
                got(&answer),
                expected(&reference, sent),
                "{fault} × {name} (stateless: {stateless}, auth: {auth})"
            );
            checked += 1;
        }
    }
    // Every method under each `Host`/`Origin` fault; under each session fault, every method a
    // session applies to (less `initialize` where none is named: that opens one).
    let in_a_session = methods.iter().filter(|m| m.2).count();
    let initializes = methods
        .iter()
        .filter(|m| m.2 && m.0.ends_with("initialize"))
        .count();
    let expected: usize = faults
        .iter()
        .map(
            |(_, from, _)| match (from.host.is_none() && from.origin.is_none(), &from.session) {
                (false, _) => methods.len(),
                (true, Some(_)) => in_a_session,
                (true, None) => in_a_session - initializes,
            },
        )
        .sum();
    assert_eq!(checked, expected, "cases checked");

    // A stateless server has no sessions: a made-up id opens no path of its own — the
    // 2025-11-25 task methods naming the victim's task are not answered with it.
    if stateless {
        let from = From {
            session: Some("no-such-session".into()),
            ..victim.clone()
        };
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let answer = send(
                addr,
                &from,
                &legacy("2025-11-25", method, json!({"taskId": t26})),
            )
            .await
            .message();
            assert!(answer.get("result").is_none(), "{method}: {answer}");
            assert!(answer.get("error").is_some(), "{method}: {answer}");
        }
    }

    // Nothing read or changed.
    assert_eq!(
        fixtures::naps_started(nap_ms),
        naps_before,
        "a nap was started"
    );
    let after = victim_state(addr, &victim, t25.as_deref(), &t26).await;
    assert_eq!(after, before, "the victim's state changed");
    if let Some(session) = &victim_session {
        let from = From {
            session: Some(session.clone()),
            ..victim.clone()
        };
        let r = send(addr, &from, &legacy("2025-11-25", "tools/list", json!({}))).await;
        assert_eq!(r.status, 200, "the victim's session is gone: {r:?}");
    }
    // The victim's task ends as it would have: completed, not cancelled.
    let done = fusion_tests::tasks::poll(
        addr,
        &if auth { token("victim") } else { String::new() },
        &t26,
        Duration::from_millis(nap_ms) + Duration::from_secs(10),
    )
    .await;
    assert_eq!(done["status"], "completed", "{done}");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_without_auth_refuses_every_fault_on_every_path() {
    attack(true, false, 4001).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_with_auth_refuses_every_fault_on_every_path() {
    attack(true, true, 4002).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_server_without_auth_refuses_every_fault_on_every_path() {
    attack(false, false, 4003).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_server_with_auth_refuses_every_fault_on_every_path() {
    attack(false, true, 4004).await;
}
