//! The calls the framework answers without rmcp, proven equal to rmcp's answers: generated
//! requests (valid and invalid arguments, unknown and misspelt tools, malformed JSON, odd
//! ids, every protocol version, `Accept`, `Content-Type`, `Origin` and `Host` combination,
//! bodies over the cap, batches, other methods and HTTP methods) sent to two servers that
//! differ only in [`HttpOptions::answer_plain_calls`] — one answering plain calls itself, one
//! sending every request through rmcp — stateless, and in a 2025 session. MCP 2026-07-28
//! requests too, without a session (the room answers the plain ones on either endpoint): their `_meta`
//! (versions, capabilities, log levels, progress tokens, the tasks extension, malformed) and
//! their standard headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`; matching, missing,
//! repeated, Base64-wrapped), calls that ask the user (`input_required`) and task tools.
//! Status, headers (less `date`), body bytes and SSE events must be equal.
//!
//! Fixed cases come first in every run (a plain call of each revision, a call that asks the
//! user, a task tool with and without the extension, a tool that logs at each level), then
//! the generated ones. The room is proven to have answered: the endpoint counts the calls it
//! answered without rmcp by kind ([`HttpServer::plain_calls_answered`]), and each run asserts
//! the kinds its endpoint has (stateless 2025 and 2026-07-28; a live session's and stateful
//! 2026-07-28), for the fixed cases and again for the generated ones, none of the kinds it
//! has not, and none at all on the reference (its room is off). The other half of the proof,
//! the door's answers against bare rmcp's own service, is `door_vs_rmcp.rs`.
//!
//! Intended differences, normalized before the comparison, each with its reason:
//! - a session's own id: each server made its own session (the ids are random UUIDs);
//! - a task's id and times (a 2026-07-28 call of a task tool from a client that declared the
//!   extension starts a task on each server; rmcp answers it on both);
//! - an `input_required` answer's `requestState`: each server seals its own (its own nonce,
//!   time and signature); what it binds and carries (`bind`, `ask`, `answers`) is compared;
//! - in a session, SSE `id:` lines and the priming event (no data: an id and a `retry`):
//!   rmcp's session worker numbers the events of a request's stream so a client may resume
//!   it; the framework's answer to a live session's plain call is one result on a stream of
//!   its own, with nothing to resume.
//!
//! A bump of rmcp (`Cargo.toml` pins its minor): change the version, run this suite.

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use fusion_runtime::context::{Elicited, LogLevel};
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::{
    Context, Elicitable, Server, ToolError, ToolInput, codes, error, tool_action,
};
use fusion_tests::raw_http::{self, RawResponse};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Generated requests per pair of servers (two pairs: 6,000 requests a run).
const CASES: u32 = 1500;
/// The body cap both servers hold (small, so that generated bodies cross it).
const MAX_BODY: usize = 4096;

#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "snake_case")]
enum Plan {
    Free,
    Pro,
    Team,
}

/// Where an account is.
#[derive(Deserialize, ToolInput, Debug)]
struct Address {
    /// The city.
    #[fusion(length(min = 1, max = 20))]
    city: String,
}

/// An account to look at.
#[derive(Deserialize, ToolInput, Debug)]
struct Account {
    /// The account's ID.
    #[fusion(pattern = "^acc_[a-z0-9]{3,8}$")]
    id: String,
    /// Seats.
    #[fusion(range(min = 1, max = 100))]
    seats: Option<i64>,
    /// The plan.
    plan: Option<Plan>,
    /// Where it is.
    address: Option<Address>,
    /// A note.
    note: Option<String>,
}

/// What the tool answers.
#[derive(Serialize, JsonSchema)]
struct Seen {
    id: String,
    seats: Option<i64>,
}

/// Looks at an account.
#[tool_action(name = "accounts.show", read_only)]
async fn show(input: Account) -> Result<Seen, ToolError> {
    if input.id == "acc_missing" {
        return Err(error(codes::NOT_FOUND, "No account with that ID")
            .recovery("List accounts first")
            .available_actions(["accounts.show"])
            .detail("requestedId", &input.id));
    }
    Ok(Seen {
        id: input.id,
        seats: input.seats,
    })
}

/// Nothing to say.
#[derive(Deserialize, ToolInput, Debug)]
struct Nothing {}

/// Logs, then answers.
#[tool_action(name = "accounts.audit")]
async fn audit(_input: Nothing, cx: Context) -> Result<String, ToolError> {
    cx.log(LogLevel::Warning, json!({"audit": "started"})).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    Ok("audited".into())
}

/// Falls over.
#[tool_action(name = "accounts.crash")]
async fn crash(_input: Nothing) -> Result<String, ToolError> {
    panic!("the handler fell over")
}

/// Fails with an I/O error.
#[tool_action(name = "accounts.disk")]
async fn disk(_input: Nothing) -> Result<String, std::io::Error> {
    Err(std::io::Error::other("disk full"))
}

/// The user's answer.
#[derive(Deserialize, ToolInput, Elicitable)]
struct Consent {
    /// Whether to go on.
    go: bool,
}

/// Asks the user first (a 2026-07-28 call ends `input_required`).
#[tool_action(name = "accounts.close")]
async fn close(_input: Nothing, cx: Context) -> Result<String, ToolError> {
    match cx.elicit::<Consent>("Close the account?").await? {
        Elicited::Accept(consent) if consent.go => Ok("closed".into()),
        _ => Ok("kept".into()),
    }
}

/// May run as a task (the room leaves its 2026-07-28 calls to rmcp).
#[tool_action(name = "accounts.export", task)]
async fn export(_input: Nothing) -> Result<String, ToolError> {
    Ok("exported".into())
}

fn server() -> Server {
    Server::builder()
        .name("differential")
        .action::<ShowAction>()
        .action::<AuditAction>()
        .action::<CrashAction>()
        .action::<DiskAction>()
        .action::<CloseAction>()
        .action::<ExportAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// One generated request.
#[derive(Clone, Debug)]
struct Request {
    method: &'static str,
    headers: Vec<(&'static str, String)>,
    body: String,
    /// Sent without the session's id, as a 2026-07-28 client sends every request (the
    /// revision has no session).
    sessionless: bool,
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("accounts_show".to_owned()),
        1 => Just("accounts_audit".to_owned()),
        1 => Just("accounts_crash".to_owned()),
        1 => Just("accounts_disk".to_owned()),
        1 => Just("accounts_close".to_owned()),
        1 => Just("accounts_export".to_owned()),
        1 => Just("accounts.show".to_owned()),
        1 => Just("acounts_show".to_owned()),
        1 => Just("".to_owned()),
        1 => "[a-z_./]{0,12}",
    ]
}

/// A JSON leaf from a small alphabet that reaches every branch of the rules.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("acc_abc12")),
        Just(json!("acc_missing")),
        Just(json!("ACC-1")),
        Just(json!("pro")),
        Just(json!("prro")),
        Just(json!("")),
        Just(json!("é<&>\"'")),
        Just(json!(7)),
        Just(json!(0)),
        Just(json!(101)),
        Just(json!(1.5)),
        Just(json!(-1)),
        Just(json!(true)),
        Just(Value::Null),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"city": "Lyon"})),
        Just(json!({"city": ""})),
    ]
}

fn arguments() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("id".to_owned()),
        Just("seats".to_owned()),
        Just("plan".to_owned()),
        Just("address".to_owned()),
        Just("note".to_owned()),
        Just("sets".to_owned()),
        Just("zzz".to_owned()),
    ];
    prop_oneof![
        6 => prop::collection::btree_map(key, leaf(), 0..5)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        1 => leaf(),
    ]
}

fn id() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => Just(Some(json!(1))),
        1 => Just(Some(json!("req-1"))),
        1 => Just(Some(json!(0))),
        1 => Just(Some(json!(-5))),
        1 => Just(Some(json!(1.5))),
        1 => Just(Some(Value::Null)),
        1 => Just(Some(json!(9_007_199_254_740_993_u64))),
        1 => Just(Some(json!("é"))),
        1 => Just(None),
    ]
}

/// A `tools/call`, generated.
fn call() -> impl Strategy<Value = String> {
    (id(), tool_name(), prop::option::of(arguments())).prop_map(|(id, name, args)| {
        let mut params = json!({"name": name});
        if let Some(args) = args {
            params["arguments"] = args;
        }
        let mut m = json!({"jsonrpc": "2.0", "method": "tools/call", "params": params});
        if let Some(id) = id {
            m["id"] = id;
        }
        m.to_string()
    })
}

fn body() -> impl Strategy<Value = String> {
    let other = prop_oneof![
        Just(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string()),
        Just(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string()),
        Just(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string()),
        Just(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "accounts_show", "arguments": {"id": "acc_abc12"}, "_meta": {"progressToken": 9}}}).to_string()),
        Just(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ["accounts_show"]}).to_string()),
        Just(json!({"jsonrpc": "1.0", "id": 6, "method": "tools/call", "params": {"name": "accounts_show"}}).to_string()),
        Just(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "accounts_show", "arguments": {"id": "acc_abc12"}}, "extra": 1}).to_string()),
    ];
    prop_oneof![
        10 => call(),
        3 => other,
        // Malformed: cut short, not an object, a batch, over the cap.
        1 => call().prop_map(|b| {
            // Cut on a character's boundary (a generated string may hold `é`).
            let cut = (0..=b.len() / 2).rev().find(|&i| b.is_char_boundary(i)).unwrap_or(0);
            b[..cut].to_owned()
        }),
        1 => Just("[]".to_owned()),
        1 => Just("null".to_owned()),
        1 => Just("{}".to_owned()),
        1 => call().prop_map(|b| format!("[{b},{b}]")),
        1 => call().prop_map(|b| {
            let pad = "x".repeat(MAX_BODY);
            b.replacen("\"tools/call\"", &format!("\"tools/call\",\"pad\":\"{pad}\""), 1)
        }),
        1 => Just(String::new()),
    ]
}

/// A request; in a session no `GET` (it opens the session's standing stream, which stays
/// open) and no `DELETE` (the session's end is compared once, last).
fn request(session: bool) -> impl Strategy<Value = Request> {
    let version = prop_oneof![
        2 => Just(None),
        4 => Just(Some("2025-06-18")),
        3 => Just(Some("2025-11-25")),
        1 => Just(Some("2026-07-28")),
        1 => Just(Some("1999-01-01")),
    ];
    let accept = prop_oneof![
        6 => Just(Some("application/json, text/event-stream")),
        1 => Just(Some("text/event-stream, application/json")),
        1 => Just(Some("application/json")),
        1 => Just(Some("application/json;q=0.9, text/event-stream")),
        1 => Just(None),
    ];
    let content_type = prop_oneof![
        8 => Just(Some("application/json")),
        1 => Just(Some("application/json; charset=utf-8")),
        1 => Just(Some("text/plain")),
        1 => Just(None),
    ];
    let origin = prop_oneof![
        8 => Just(None),
        1 => Just(Some("http://localhost:3000")),
        1 => Just(Some("http://evil.example")),
    ];
    let host = prop_oneof![9 => Just(None), 1 => Just(Some("evil.example"))];
    let get = if session { "PUT" } else { "GET" };
    let method = prop_oneof![12 => Just("POST"), 1 => Just(get), 1 => Just("PUT")];
    (method, version, accept, content_type, origin, host, body()).prop_map(
        |(method, version, accept, content_type, origin, host, body)| {
            let mut headers = Vec::new();
            for (name, value) in [
                ("mcp-protocol-version", version),
                ("accept", accept),
                ("content-type", content_type),
                ("origin", origin),
                ("host", host),
            ] {
                if let Some(v) = value {
                    headers.push((name, v.to_owned()));
                }
            }
            Request {
                method,
                headers,
                body,
                sessionless: false,
            }
        },
    )
}

/// A 2026-07-28 request's `_meta`, generated: mostly what the revision requires, else
/// without it, with another version, a progress token, a log level (valid or not), the tasks
/// extension, elicitation, a trace context, or not an object.
fn meta() -> impl Strategy<Value = Value> {
    let base = || {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "differential", "version": "1"},
        })
    };
    let with = move |key: &'static str, value: Value| {
        let mut m = base();
        m[key] = value;
        m
    };
    prop_oneof![
        8 => Just(base()),
        2 => prop_oneof![
            Just("debug"), Just("warning"), Just("emergency"), Just("loud"), Just("WARNING"),
        ]
        .prop_map(move |l| with("io.modelcontextprotocol/logLevel", json!(l))),
        1 => Just(with("io.modelcontextprotocol/clientCapabilities", json!({"elicitation": {}}))),
        1 => Just(with(
            "io.modelcontextprotocol/clientCapabilities",
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
        )),
        1 => Just(with("io.modelcontextprotocol/clientCapabilities", json!("none"))),
        1 => Just(with("io.modelcontextprotocol/protocolVersion", json!("2025-06-18"))),
        1 => Just(with("io.modelcontextprotocol/protocolVersion", json!(20260728))),
        1 => Just(with("progressToken", json!(5))),
        1 => Just(with("traceparent", json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))),
        1 => Just(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})),
        1 => Just(json!({})),
        1 => Just(json!([])),
    ]
}

/// A 2026-07-28 `tools/call`, generated: its tool name (for the headers) and body.
fn modern_call() -> impl Strategy<Value = (String, String)> {
    let extra = prop_oneof![
        8 => Just(None),
        1 => Just(Some(("requestState", json!("not-a-state")))),
        1 => Just(Some(("task", json!({"ttl": 1000})))),
        1 => Just(Some(("inputResponses", json!({"e0": {"action": "decline"}})))),
    ];
    (
        id(),
        tool_name(),
        prop::option::weighted(0.9, arguments()),
        meta(),
        extra,
    )
        .prop_map(|(id, name, args, meta, extra)| {
            let mut params = json!({"name": name, "_meta": meta});
            if let Some(args) = args {
                params["arguments"] = args;
            }
            if let Some((key, value)) = extra {
                params[key] = value;
            }
            let mut m = json!({"jsonrpc": "2.0", "method": "tools/call", "params": params});
            if let Some(id) = id {
                m["id"] = id;
            }
            (name, m.to_string())
        })
}

/// A 2026-07-28 request: a `tools/call` with the revision's headers — the standard ones
/// mostly as its body says, else missing, repeated, naming another method or tool,
/// Base64-wrapped, or with an `Mcp-Param-*` — and sometimes another version, `Accept`,
/// `Origin` or `Host`.
fn modern_request() -> impl Strategy<Value = Request> {
    let method_header = prop_oneof![
        8 => Just(vec!["tools/call"]),
        1 => Just(vec![]),
        1 => Just(vec!["tools/list"]),
        1 => Just(vec!["tools/call", "tools/call"]),
    ];
    let name_header = prop_oneof![
        8 => Just(0_u8), // the body's name
        1 => Just(1),    // none
        1 => Just(2),    // another
        1 => Just(3),    // Base64-wrapped
        1 => Just(4),    // twice
    ];
    let version = prop_oneof![
        10 => Just(Some("2026-07-28")),
        1 => Just(Some("2025-06-18")),
        1 => Just(None),
    ];
    let accept = prop_oneof![
        10 => Just(Some("application/json, text/event-stream")),
        1 => Just(Some("application/json")),
        1 => Just(Some("application/json;q=0.9, text/event-stream")),
    ];
    let origin = prop_oneof![10 => Just(None), 1 => Just(Some("http://evil.example"))];
    let host = prop_oneof![10 => Just(None), 1 => Just(Some("evil.example"))];
    let param = prop_oneof![10 => Just(false), 1 => Just(true)];
    (
        modern_call(),
        method_header,
        name_header,
        version,
        accept,
        origin,
        host,
        param,
    )
        .prop_map(
            |((name, body), methods, name_header, version, accept, origin, host, param)| {
                let mut headers = vec![("content-type", "application/json".to_owned())];
                for (key, value) in [
                    ("mcp-protocol-version", version),
                    ("accept", accept),
                    ("origin", origin),
                    ("host", host),
                ] {
                    if let Some(v) = value {
                        headers.push((key, v.to_owned()));
                    }
                }
                for m in methods {
                    headers.push(("mcp-method", m.to_owned()));
                }
                match name_header {
                    0 => headers.push(("mcp-name", name.clone())),
                    1 => {}
                    2 => headers.push(("mcp-name", "accounts_other".to_owned())),
                    3 => {
                        headers.push(("mcp-name", format!("=?base64?{}?=", STANDARD.encode(&name))))
                    }
                    _ => {
                        headers.push(("mcp-name", name.clone()));
                        headers.push(("mcp-name", name.clone()));
                    }
                }
                if param {
                    headers.push(("mcp-param-id", "acc_abc12".to_owned()));
                }
                // A header value must be visible ASCII: a generated name that is not stays out.
                headers.retain(|(_, v)| v.bytes().all(|b| (0x20..0x7f).contains(&b)));
                Request {
                    method: "POST",
                    headers,
                    body,
                    sessionless: true,
                }
            },
        )
}

/// The cases every run sends first, before the generated ones, so that each kind the room
/// answers, and the calls it must leave to rmcp or answer as rmcp does, are reached in every
/// run: a plain 2025 call; a plain 2026-07-28 call; a 2026-07-28 call that asks the user
/// (`input_required`); a task tool called with and without the tasks extension; a tool that
/// logs, at each log level (and a level that is not one, and none).
fn fixed_cases() -> Vec<Request> {
    let legacy = |name: &str, arguments: Value| Request {
        method: "POST",
        headers: vec![
            ("mcp-protocol-version", "2025-06-18".to_owned()),
            ("accept", "application/json, text/event-stream".to_owned()),
            ("content-type", "application/json".to_owned()),
        ],
        body: json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                     "params": {"name": name, "arguments": arguments}})
        .to_string(),
        sessionless: false,
    };
    let modern = |name: &str, arguments: Value, meta: Value| Request {
        method: "POST",
        headers: vec![
            ("mcp-protocol-version", "2026-07-28".to_owned()),
            ("accept", "application/json, text/event-stream".to_owned()),
            ("content-type", "application/json".to_owned()),
            ("mcp-method", "tools/call".to_owned()),
            ("mcp-name", name.to_owned()),
        ],
        body: json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call",
                     "params": {"name": name, "arguments": arguments, "_meta": meta}})
        .to_string(),
        sessionless: true,
    };
    let meta = |key: Option<(&str, Value)>| {
        let mut m = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "differential", "version": "1"},
        });
        if let Some((key, value)) = key {
            m[key] = value;
        }
        m
    };
    let capabilities = "io.modelcontextprotocol/clientCapabilities";
    let mut cases = vec![
        legacy("accounts_show", json!({"id": "acc_abc12", "seats": 3})),
        legacy("accounts_show", json!({"id": "ACC-1", "seats": 0})),
        modern("accounts_show", json!({"id": "acc_abc12"}), meta(None)),
        modern("accounts_show", json!({"id": "ACC-1"}), meta(None)),
        modern(
            "accounts_close",
            json!({}),
            meta(Some((capabilities, json!({"elicitation": {}})))),
        ),
        modern(
            "accounts_export",
            json!({}),
            meta(Some((
                capabilities,
                json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
            ))),
        ),
        modern("accounts_export", json!({}), meta(None)),
        modern("accounts_audit", json!({}), meta(None)),
        modern(
            "accounts_audit",
            json!({}),
            meta(Some(("io.modelcontextprotocol/logLevel", json!("loud")))),
        ),
    ];
    for level in [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ] {
        cases.push(modern(
            "accounts_audit",
            json!({}),
            meta(Some(("io.modelcontextprotocol/logLevel", json!(level)))),
        ));
    }
    cases
}

/// Any request of either revision.
fn any_request(session: bool) -> impl Strategy<Value = Request> {
    prop_oneof![1 => request(session), 1 => modern_request()]
}

/// One server of a pair, and its session (stateful).
struct Side {
    server: HttpServer,
    session: Option<String>,
}

impl Side {
    async fn start(stateless: bool, plain: bool) -> Side {
        let options = HttpOptions::default()
            .stateless(stateless)
            .max_body_bytes(MAX_BODY)
            .answer_plain_calls(plain);
        let server = spawn_http(server(), SocketAddr::from(([127, 0, 0, 1], 0)), options)
            .await
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        let mut side = Side {
            server,
            session: None,
        };
        if !stateless {
            side.session = Some(side.open().await);
        }
        side
    }

    /// A 2025-06-18 session with a client that declares nothing (so its calls may be
    /// answered without rmcp's worker).
    async fn open(&self) -> String {
        let headers = [
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "differential", "version": "1"}}});
        let addr = self.server.local_addr;
        let r = raw_http::request(addr, "POST", "/mcp", &headers, &init.to_string())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let id = r
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("no session: {r:?}"))
            .to_owned();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let mut with = headers.to_vec();
        with.push(("mcp-session-id", &id));
        with.push(("mcp-protocol-version", "2025-06-18"));
        let r = raw_http::request(addr, "POST", "/mcp", &with, &note.to_string())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.status, 202, "{r:?}");
        id
    }

    async fn send(&self, request: &Request) -> RawResponse {
        let mut headers: Vec<(&str, &str)> = request
            .headers
            .iter()
            .map(|(n, v)| (*n, v.as_str()))
            .collect();
        if let Some(session) = self.session.as_ref().filter(|_| !request.sessionless) {
            headers.push(("mcp-session-id", session));
        }
        raw_http::request(
            self.server.local_addr,
            request.method,
            "/mcp",
            &headers,
            &request.body,
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// A response as compared: status, headers less `date`, and the body (an SSE body as its
/// events), with the intended differences (see the module's doc) normalized.
fn seen(r: &RawResponse, session: Option<&str>) -> (u16, Vec<(String, String)>, Vec<String>) {
    let mut headers: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(n, _)| n != "date")
        .cloned()
        .collect();
    let body = match session {
        Some(id) => r.body.replace(id, "SESSION"),
        None => r.body.clone(),
    };
    let body = unsealed(&own_values(
        &body,
        &["taskId", "createdAt", "lastUpdatedAt"],
    ));
    for (_, v) in &mut headers {
        if let Some(id) = session {
            *v = v.replace(id, "SESSION");
        }
    }
    let sse = r
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let events = if sse {
        body.split("\n\n")
            .map(|event| {
                event
                    .lines()
                    .filter(|l| session.is_none() || !l.starts_with("id:"))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            // A priming event: no data, only its id and `retry`.
            .filter(|event| {
                session.is_none()
                    || event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .any(|d| !d.trim().is_empty())
            })
            .collect()
    } else {
        vec![body]
    };
    (r.status, headers, events)
}

/// `text` with the string value of each JSON member named in `keys` replaced by its key.
fn own_values(text: &str, keys: &[&str]) -> String {
    let mut out = text.to_owned();
    for key in keys {
        let mut from = 0;
        let needle = format!("\"{key}\":\"");
        while let Some(at) = out[from..].find(&needle) {
            let start = from + at + needle.len();
            let Some(len) = out[start..].find('"') else {
                break;
            };
            out.replace_range(start..start + len, key);
            from = start + key.len();
        }
    }
    out
}

/// `text` with each sealed `requestState` (`rs1.<payload>.<signature>`) replaced by what its
/// payload binds and carries, less the seal's own expiry, nonce (`n`) and time (`iat`).
fn unsealed(text: &str) -> String {
    const NEEDLE: &str = "\"requestState\":\"";
    let mut out = text.to_owned();
    let mut from = 0;
    while let Some(at) = out[from..].find(NEEDLE) {
        let start = from + at + NEEDLE.len();
        let Some(len) = out[start..].find('"') else {
            break;
        };
        let sealed = &out[start..start + len];
        let payload = sealed
            .split('.')
            .nth(1)
            .and_then(|p| {
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(p)
                    .ok()
            })
            // The seal's own header (its expiry, whose bytes may hold a `{`) comes before
            // the JSON: the first `{` from which the rest parses.
            .and_then(|p| {
                (0..p.len())
                    .filter(|&i| p[i] == b'{')
                    .find_map(|i| serde_json::from_slice::<Value>(&p[i..]).ok())
            });
        let shown = match payload {
            Some(Value::Object(mut m)) => {
                m.remove("n");
                m.remove("iat");
                Value::Object(m).to_string().replace('"', "'")
            }
            _ => format!("unreadable {sealed}"),
        };
        out.replace_range(start..start + len, &shown);
        from = start + shown.len();
    }
    out
}

fn differential(stateless: bool) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (room, rmcp) = runtime.block_on(async {
        tokio::join!(Side::start(stateless, true), Side::start(stateless, false))
    });
    // The fixed cases first, compared as the generated ones are.
    let fixed = fixed_cases();
    for request in &fixed {
        let (a, b) =
            runtime.block_on(async { tokio::join!(room.send(request), rmcp.send(request)) });
        let (a_seen, b_seen) = (
            seen(&a, room.session.as_deref()),
            seen(&b, rmcp.session.as_deref()),
        );
        assert_eq!(
            a_seen, b_seen,
            "fixed case {request:?} (stateless: {stateless})\nthe room answered\n{a:#?}\nrmcp answered\n{b:#?}"
        );
    }
    let after_fixed = room.server.plain_calls_answered();
    // A plain call of each revision, and the logging tool at each of the 8 levels and at
    // none, are the room's; the rest (an invalid level, a task tool, a question) its answer
    // or rmcp's.
    let (legacy_kind, modern_kind) = match stateless {
        true => (after_fixed.stateless_2025, after_fixed.stateless_2026),
        false => (after_fixed.live_session, after_fixed.stateful_2026),
    };
    assert!(
        legacy_kind >= 2,
        "fixed 2025 calls answered by the room: {after_fixed:?}"
    );
    assert!(
        modern_kind >= 11,
        "fixed 2026-07-28 calls answered by the room: {after_fixed:?}"
    );
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    // What the cases reached: tool results (either server); the room's own counts are read
    // from the server after the run.
    let results = std::cell::Cell::new(0_u32);
    let modern_results = std::cell::Cell::new(0_u32);
    let result = runner.run(&any_request(!stateless), |request| {
        let (a, b) =
            runtime.block_on(async { tokio::join!(room.send(&request), rmcp.send(&request)) });
        if a.message()
            .get("result")
            .is_some_and(|r| r.get("content").is_some())
        {
            results.set(results.get() + 1);
            let modern = request
                .headers
                .iter()
                .any(|(n, v)| *n == "mcp-protocol-version" && v == "2026-07-28");
            if modern {
                modern_results.set(modern_results.get() + 1);
            }
        }
        let a_seen = seen(&a, room.session.as_deref());
        let b_seen = seen(&b, rmcp.session.as_deref());
        if a_seen != b_seen {
            return Err(TestCaseError::fail(format!(
                "the room answered\n{a:#?}\nrmcp answered\n{b:#?}\ncompared:\n{a_seen:#?}\n{b_seen:#?}"
            )));
        }
        Ok(())
    });
    // A session's end, then a call on the ended session.
    let ended = match (&result, stateless) {
        (Ok(()), false) => runtime.block_on(async {
            let delete = Request {
                method: "DELETE",
                headers: vec![("mcp-protocol-version", "2025-06-18".to_owned())],
                body: String::new(),
                sessionless: false,
            };
            let call = Request {
                method: "POST",
                headers: vec![
                    ("mcp-protocol-version", "2025-06-18".to_owned()),
                    ("accept", "application/json, text/event-stream".to_owned()),
                    ("content-type", "application/json".to_owned()),
                ],
                body: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "accounts_show", "arguments": {"id": "acc_abc12"}}}).to_string(),
                sessionless: false,
            };
            let mut out = Vec::new();
            for request in [&delete, &call] {
                let (a, b) = tokio::join!(room.send(request), rmcp.send(request));
                out.push((seen(&a, room.session.as_deref()), seen(&b, rmcp.session.as_deref())));
            }
            out
        }),
        _ => Vec::new(),
    };
    let answered = room.server.plain_calls_answered();
    let reference = rmcp.server.plain_calls_answered();
    runtime.block_on(async {
        room.server
            .shutdown()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        rmcp.server
            .shutdown()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    });
    if let Err(e) = result {
        panic!("stateless: {stateless}: {e}");
    }
    eprintln!(
        "stateless: {stateless}: {} fixed and {CASES} generated requests, {} tool results ({} of 2026-07-28 calls); answered by the room: {answered:?}",
        fixed.len(),
        results.get(),
        modern_results.get(),
    );
    // The reference sends everything through rmcp: its room is off.
    assert_eq!(
        reference,
        fusion_runtime::mcp::PlainCallsAnswered::default(),
        "the reference answered calls without rmcp"
    );
    // The room answered, in this run, each kind its endpoint has, beyond the fixed cases.
    let (legacy_kind, modern_kind) = match stateless {
        true => (
            answered.stateless_2025 - after_fixed.stateless_2025,
            answered.stateless_2026 - after_fixed.stateless_2026,
        ),
        false => (
            answered.live_session - after_fixed.live_session,
            answered.stateful_2026 - after_fixed.stateful_2026,
        ),
    };
    let other_kinds = match stateless {
        true => answered.live_session + answered.stateful_2026,
        false => answered.stateless_2025 + answered.stateless_2026,
    };
    assert_eq!(
        other_kinds, 0,
        "kinds this endpoint does not have: {answered:?}"
    );
    assert!(
        legacy_kind >= u64::from(CASES / 50),
        "generated 2025 calls answered by the room: {answered:?}"
    );
    assert!(
        modern_kind >= u64::from(CASES / 50),
        "generated 2026-07-28 calls answered by the room: {answered:?}"
    );
    assert!(
        results.get() >= CASES / 10,
        "{} tool results",
        results.get()
    );
    // The 2026-07-28 calls that reached a tool: on a stateless endpoint, the room answers
    // the plain ones.
    assert!(
        modern_results.get() >= CASES / 20,
        "{} tool results of 2026-07-28 calls",
        modern_results.get()
    );
    for (room, rmcp) in &ended {
        assert_eq!(room, rmcp, "a session's end");
    }
    if !stateless {
        assert_eq!(ended.len(), 2);
        assert_eq!(ended[0].0.0, 200, "the DELETE: {:?}", ended[0]);
        assert_eq!(
            ended[1].0.0, 404,
            "a call on the ended session: {:?}",
            ended[1]
        );
    }
}

#[test]
fn stateless_plain_calls_are_answered_as_rmcp_answers_them() {
    differential(true);
}

#[test]
fn session_plain_calls_are_answered_as_rmcp_answers_them() {
    differential(false);
}

/// The handler with no listener ([`HttpHandler`]) answers every generated request as
/// `serve --http --stateless` does: status, headers and body bytes (SSE events), with what
/// only a connection adds left out (`date`, and the framing hyper writes: `content-length`,
/// `transfer-encoding`, `connection`). The handler runs on a current-thread runtime, as a
/// function runtime may drive it.
#[test]
fn the_handler_answers_as_serve_http_stateless() {
    use fusion_runtime::mcp::HttpHandler;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let options = || {
        HttpOptions::default()
            .stateless(true)
            .max_body_bytes(MAX_BODY)
    };
    let served = runtime.block_on(async {
        spawn_http(server(), SocketAddr::from(([127, 0, 0, 1], 0)), options())
            .await
            .unwrap_or_else(|e| panic!("spawn: {e}"))
    });
    let handler = runtime
        .block_on(async { HttpHandler::new(server(), &options()) })
        .unwrap_or_else(|e| panic!("{e}"));
    let framing = ["date", "content-length", "transfer-encoding", "connection"];
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    let fixed = fixed_cases();
    let check = |request: &Request| -> Result<(), TestCaseError> {
        let over_tcp = runtime.block_on(async {
            raw_http::request(
                served.local_addr,
                request.method,
                "/mcp",
                &request
                    .headers
                    .iter()
                    .map(|(n, v)| (*n, v.as_str()))
                    .collect::<Vec<_>>(),
                &request.body,
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
        });
        let in_process = runtime.block_on(async {
            // The peer as a function runtime's adapter names it (the event's source address).
            let peer = axum::extract::ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40000)));
            let mut builder = axum::http::Request::builder()
                .method(request.method)
                .uri("/mcp")
                .extension(peer);
            if !request.headers.iter().any(|(n, _)| *n == "host") {
                builder = builder.header("host", "127.0.0.1");
            }
            for (name, value) in &request.headers {
                builder = builder.header(*name, value);
            }
            let http_request = builder
                .body(axum::body::Body::from(request.body.clone()))
                .unwrap_or_else(|e| panic!("{e}"));
            let response = handler.handle(http_request).await;
            let status = response.status().as_u16();
            let headers = response
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            RawResponse {
                status,
                headers,
                body: String::from_utf8_lossy(&body).into_owned(),
            }
        });
        let strip = |r: &RawResponse| {
            let mut r = r.clone();
            r.headers.retain(|(n, _)| !framing.contains(&n.as_str()));
            seen(&r, None)
        };
        let (a, b) = (strip(&in_process), strip(&over_tcp));
        if a != b {
            return Err(TestCaseError::fail(format!(
                "the handler answered\n{in_process:#?}\nserve --http --stateless answered\n{over_tcp:#?}"
            )));
        }
        Ok(())
    };
    for request in &fixed {
        if let Err(e) = check(request) {
            panic!("fixed case {request:?}: {e}");
        }
    }
    let result = runner.run(&any_request(false), |request| check(&request));
    let answered = handler.plain_calls_answered();
    runtime.block_on(async {
        served.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The handler's own room answered plain calls of both revisions.
    assert!(
        answered.stateless_2025 > 0 && answered.stateless_2026 > 0,
        "{answered:?}"
    );
}
