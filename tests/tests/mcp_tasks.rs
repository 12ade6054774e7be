//! MCP tasks (`io.modelcontextprotocol/tasks`, SEP-2663) over real HTTP, raw JSON-RPC as a
//! 2026-07-28 client sends it: the billing example with a few task actions of its own, real
//! bearer tokens for two principals.
//!
//! - A client that declared the extension gets `resultType: "task"` and polls `tasks/get` to
//!   a result equal to the one a client that did not declare it gets synchronously — the same
//!   JSON, the text blocks byte for byte (a success, and an envelope that stays an `isError`
//!   result in a `completed` task).
//! - `billing_reconcile` of 6 s: the synchronous call answers `TIMEOUT` at 5 s; as a task it
//!   completes.
//! - A handler that panics, and a task that outlives its TTL: `failed`, with a readable
//!   message and the envelope in `error.data`.
//! - `tasks/cancel` stops the handler; another principal's `tasks/get` / `tasks/cancel` is
//!   answered as an unknown task.
//! - Bounds, each pushed past: tasks per principal, tasks overall, result size, the TTL
//!   ceiling; `task = "required"` refuses a client without the extension (`-32021`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use fusion_runtime::auth::AuthMode;
use fusion_runtime::context::Elicited;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::store::{MemoryTasks, TaskLimits};
use fusion_runtime::{Context, Elicitable, ToolError, ToolInput, tool_action};
use fusion_tests::tasks;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const SECRET: &str = "tasks-secret-of-at-least-32-bytes-hs256";
const ISSUER: &str = "https://auth.example.com";
const RESOURCE: &str = "http://127.0.0.1/mcp";

/// How long to sleep.
#[derive(Deserialize, Serialize, ToolInput)]
struct Nap {
    /// Milliseconds.
    #[fusion(range(min = 0, max = 60000))]
    ms: u64,
}

/// Naps that finished (not cancelled, not stopped), by length: each test naps its own.
static NAPS_DONE: Mutex<BTreeMap<u64, usize>> = Mutex::new(BTreeMap::new());

fn naps_done(ms: u64) -> usize {
    let done = NAPS_DONE.lock().unwrap_or_else(PoisonError::into_inner);
    done.get(&ms).copied().unwrap_or(0)
}

/// Sleeps `ms` milliseconds, saying so halfway, and counts itself done.
#[tool_action(name = "nap", task)]
async fn nap(input: Nap, cx: Context) -> Result<Value, ToolError> {
    tokio::time::sleep(Duration::from_millis(input.ms / 2)).await;
    cx.progress(1.0, Some(2.0), Some("halfway through the nap"))
        .await;
    tokio::time::sleep(Duration::from_millis(input.ms / 2)).await;
    *NAPS_DONE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(input.ms)
        .or_default() += 1;
    Ok(json!({ "slept_ms": input.ms }))
}

/// Nothing.
#[derive(Deserialize, ToolInput)]
struct Nothing {}

/// Panics.
#[tool_action(name = "boom", task)]
async fn boom(_input: Nothing) -> Result<Value, ToolError> {
    panic!("the handler fell over")
}

/// How big an answer.
#[derive(Deserialize, ToolInput)]
struct Size {
    /// Bytes of text.
    #[fusion(range(min = 0, max = 100000))]
    bytes: usize,
}

/// Answers `bytes` bytes of text.
#[tool_action(name = "big", task)]
async fn big(input: Size) -> Result<String, ToolError> {
    Ok("x".repeat(input.bytes))
}

/// A name to greet.
#[derive(Deserialize, ToolInput, Elicitable)]
struct Name {
    /// The name.
    #[fusion(length(min = 1, max = 40))]
    name: String,
}

/// Asks for a name twice over (two questions), then greets both.
#[tool_action(name = "greet", task)]
async fn greet(_input: Nothing, cx: Context) -> Result<String, ToolError> {
    let mut names = Vec::new();
    for question in ["Who is first?", "Who is second?"] {
        match cx.elicit::<Name>(question).await? {
            Elicited::Accept(n) => names.push(n.name),
            Elicited::Decline | Elicited::Cancel => return Ok("nobody".to_owned()),
        }
    }
    Ok(format!("hello {}", names.join(" and ")))
}

/// Answers "done"; only as a task.
#[tool_action(name = "only_task", task = "required")]
async fn only_task(_input: Nothing) -> Result<String, ToolError> {
    Ok("done".to_owned())
}

fn token(sub: &str) -> String {
    fusion_tests::services::hs256_token(SECRET, RESOURCE, ISSUER, sub)
}

/// The billing example and the actions above, stateless HTTP, bearer auth (optional), its
/// tasks kept within `limits`.
async fn serve(limits: TaskLimits) -> HttpServer {
    serve_with(limits, true).await
}

/// [`serve`], stateless or with 2025 sessions.
async fn serve_with(limits: TaskLimits, stateless: bool) -> HttpServer {
    let server = examples::billing::builder()
        .action::<NapAction>()
        .action::<BoomAction>()
        .action::<BigAction>()
        .action::<OnlyTaskAction>()
        .action::<GreetAction>()
        .task_store(MemoryTasks::new(limits))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let auth = fusion_tests::services::hs256_auth(SECRET, RESOURCE, ISSUER, AuthMode::Optional);
    spawn_http(
        server,
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default().stateless(stateless).auth(auth),
    )
    .await
    .unwrap_or_else(|e| panic!("spawn: {e}"))
}

async fn rpc(addr: SocketAddr, who: &str, method: &str, params: Value, tasks: bool) -> Value {
    tasks::rpc(addr, &token(who), method, params, tasks).await
}

async fn call(addr: SocketAddr, who: &str, tool: &str, arguments: Value, tasks: bool) -> Value {
    tasks::call(addr, &token(who), tool, arguments, tasks).await
}

async fn start(addr: SocketAddr, who: &str, tool: &str, arguments: Value) -> String {
    tasks::start(addr, &token(who), tool, arguments).await
}

async fn get(addr: SocketAddr, who: &str, id: &str) -> Value {
    tasks::get(addr, &token(who), id).await
}

async fn poll(addr: SocketAddr, who: &str, id: &str, limit: Duration) -> Value {
    tasks::poll(addr, &token(who), id, limit).await
}

#[tokio::test]
async fn a_task_completes_with_the_synchronous_result_and_a_client_without_tasks_gets_that_result()
{
    let server = serve(TaskLimits::default()).await;
    let addr = server.local_addr;
    for arguments in [
        json!({"duration_ms": 200}),
        // An invalid argument: a `<validation_error>`, an `isError` result in a completed task.
        json!({"duration_ms": "soon"}),
    ] {
        let sync = call(addr, "alice", "billing_reconcile", arguments.clone(), false).await;
        assert!(sync["result"]["content"].is_array(), "{sync}");
        assert_ne!(sync["result"]["resultType"], "task", "{sync}");
        let id = start(addr, "alice", "billing_reconcile", arguments).await;
        let task = poll(addr, "alice", &id, Duration::from_secs(10)).await;
        assert_eq!(task["status"], "completed", "{task}");
        assert_eq!(
            task["result"].to_string(),
            sync["result"].to_string(),
            "the task's result is the synchronous call's"
        );
        let text = |m: &Value| m["content"][0]["text"].as_str().map(str::to_owned);
        assert!(
            text(&sync["result"]).is_some_and(|t| !t.is_empty()),
            "{sync}"
        );
        assert_eq!(
            text(&task["result"]),
            text(&sync["result"]),
            "the text, byte for byte"
        );
        assert_eq!(task["taskId"], id.as_str());
        assert_eq!(task["pollIntervalMs"], 500, "{task}");
        assert!(task["ttlMs"].as_u64().is_some_and(|t| t > 0), "{task}");
    }
    let invalid = call(
        addr,
        "alice",
        "billing_reconcile",
        json!({"duration_ms": "soon"}),
        false,
    )
    .await;
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    // The server says it speaks tasks.
    let discover = rpc(addr, "alice", "server/discover", json!({}), false).await;
    assert!(
        discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{discover}"
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn billing_reconcile_of_six_seconds_times_out_synchronously_and_completes_as_a_task() {
    let server = serve(TaskLimits::default()).await;
    let addr = server.local_addr;
    let six = json!({"duration_ms": 6000});
    let sync = call(addr, "alice", "billing_reconcile", six.clone(), false).await;
    let text = sync["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("<tool_error code=\"TIMEOUT\""), "{sync}");
    // The timed-out call's slot is free again; as a task the same call completes.
    let started = Instant::now();
    let id = start(addr, "alice", "billing_reconcile", six).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "answered at once"
    );
    let task = poll(addr, "alice", &id, Duration::from_secs(15)).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["isError"], false, "{task}");
    assert_eq!(
        task["result"]["structuredContent"]["took_ms"], 6000,
        "{task}"
    );
    assert!(started.elapsed() >= Duration::from_secs(6));
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_panicking_handler_and_a_lapsed_ttl_fail_the_task_readably() {
    let server = serve(TaskLimits {
        default_ttl: Duration::from_millis(800),
        ..TaskLimits::default()
    })
    .await;
    let addr = server.local_addr;
    let id = start(addr, "alice", "boom", json!({})).await;
    let task = poll(addr, "alice", &id, Duration::from_secs(5)).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["error"]["code"], -32603, "{task}");
    assert_eq!(task["error"]["data"]["code"], "INTERNAL_ERROR", "{task}");
    let envelope = task["error"]["data"]["envelope"]
        .as_str()
        .unwrap_or_default();
    assert!(
        envelope.starts_with("<tool_error code=\"INTERNAL_ERROR\""),
        "{task}"
    );
    let message = task["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("boom"), "names the action: {task}");
    assert_eq!(task["statusMessage"], task["error"]["message"], "{task}");

    // A 3-second nap in a task that lives 800 ms: stopped, `failed` with `TIMEOUT`.
    let id = start(addr, "alice", "nap", json!({"ms": 3000})).await;
    let task = poll(addr, "alice", &id, Duration::from_secs(5)).await;
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(task["error"]["data"]["code"], "TIMEOUT", "{task}");
    let message = task["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("time to live (800 ms)"), "{task}");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(naps_done(3000), 0, "the nap was stopped");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn cancel_stops_the_handler_and_progress_is_the_status_message() {
    let server = serve(TaskLimits::default()).await;
    let addr = server.local_addr;
    let id = start(addr, "alice", "nap", json!({"ms": 1600})).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let halfway = get(addr, "alice", &id).await;
    assert_eq!(halfway["result"]["status"], "working", "{halfway}");
    assert_eq!(
        halfway["result"]["statusMessage"], "halfway through the nap",
        "{halfway}"
    );
    let cancelled = rpc(addr, "alice", "tasks/cancel", json!({"taskId": id}), true).await;
    assert!(cancelled["result"].is_object(), "{cancelled}");
    let task = get(addr, "alice", &id).await;
    assert_eq!(task["result"]["status"], "cancelled", "{task}");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(naps_done(1600), 0, "the nap was stopped");
    let task = get(addr, "alice", &id).await;
    assert_eq!(
        task["result"]["status"], "cancelled",
        "stays cancelled: {task}"
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn another_principal_cannot_read_or_cancel_a_task_and_learns_nothing() {
    let server = serve(TaskLimits::default()).await;
    let addr = server.local_addr;
    let id = start(addr, "alice", "nap", json!({"ms": 1000})).await;
    let unknown = get(addr, "bob", "0123456789abcdef0123456789abcdef").await;
    let theirs = get(addr, "bob", &id).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    assert_eq!(
        theirs["error"]["message"]
            .as_str()
            .map(|m| m.replace(&id, "ID")),
        unknown["error"]["message"]
            .as_str()
            .map(|m| m.replace("0123456789abcdef0123456789abcdef", "ID")),
        "the same answer as for an unknown task"
    );
    let cancel = rpc(addr, "bob", "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(cancel["error"]["code"], -32602, "{cancel}");
    // SEP-2663: `Mcp-Name` carries the task id; one naming another task is refused.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
        "params": {"taskId": id, "_meta": tasks::meta(true)}});
    let bearer = format!("Bearer {}", token("alice"));
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tasks/get"),
        ("mcp-name", "0123456789abcdef0123456789abcdef"),
        ("authorization", bearer.as_str()),
    ];
    let wrong = fusion_tests::raw_http::request(addr, "POST", "/mcp", &headers, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert!(wrong.message()["error"].is_object(), "{}", wrong.body);
    // A poll that did not declare the extension: -32021, as the spec says.
    let undeclared = rpc(addr, "alice", "tasks/get", json!({"taskId": id}), false).await;
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
    let task = poll(addr, "alice", &id, Duration::from_secs(5)).await;
    assert_eq!(
        task["status"], "completed",
        "bob's cancel did nothing: {task}"
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn tasks_per_principal_and_overall_are_bounded() {
    let server = serve(TaskLimits {
        per_owner: 2,
        overall: 3,
        ..TaskLimits::default()
    })
    .await;
    let addr = server.local_addr;
    for _ in 0..2 {
        start(addr, "alice", "nap", json!({"ms": 10})).await;
    }
    let refused = call(addr, "alice", "nap", json!({"ms": 10}), true).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("<tool_error code=\"SERVER_BUSY\""),
        "{text}"
    );
    assert!(text.contains("already has 2 tasks"), "{text}");
    // Bob has his own bound, but the server's is 3.
    start(addr, "bob", "nap", json!({"ms": 10})).await;
    let full = call(addr, "carol", "nap", json!({"ms": 10}), true).await;
    let text = full["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("the server holds 3 tasks"), "{text}");
    // A client without tasks is not held to them.
    let sync = call(addr, "carol", "nap", json!({"ms": 10}), false).await;
    assert_eq!(
        sync["result"]["content"][0]["text"], r#"{"slept_ms":10}"#,
        "{sync}"
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_result_past_the_size_bound_fails_and_the_ttl_is_cut_to_its_ceiling() {
    let server = serve(TaskLimits {
        max_result_bytes: 4096,
        default_ttl: Duration::from_secs(24 * 3600),
        max_ttl: Duration::from_secs(90),
        ..TaskLimits::default()
    })
    .await;
    let addr = server.local_addr;
    let small = start(addr, "alice", "big", json!({"bytes": 1000})).await;
    let task = poll(addr, "alice", &small, Duration::from_secs(5)).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["ttlMs"], 90_000, "cut to the ceiling: {task}");
    let large = start(addr, "alice", "big", json!({"bytes": 5000})).await;
    let task = poll(addr, "alice", &large, Duration::from_secs(5)).await;
    assert_eq!(task["status"], "failed", "{task}");
    let message = task["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("more than the 4096"), "{task}");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_required_task_refuses_a_client_without_the_extension() {
    let server = serve(TaskLimits::default()).await;
    let addr = server.local_addr;
    let refused = call(addr, "alice", "only_task", json!({}), false).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{refused}"
    );
    let id = start(addr, "alice", "only_task", json!({})).await;
    let task = poll(addr, "alice", &id, Duration::from_secs(5)).await;
    assert_eq!(task["result"]["content"][0]["text"], r#""done""#, "{task}");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// Polls task `id` of `who` until it is `status` (at most 5 s): the `tasks/get` result.
async fn until(addr: SocketAddr, who: &str, id: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let m = get(addr, who, id).await;
        if m["result"]["status"] == status {
            return m["result"].clone();
        }
        assert!(Instant::now() < deadline, "not {status}: {m}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_question_inside_a_task_is_input_required_and_answered_by_tasks_update() {
    let server = serve(TaskLimits::default()).await;
    let addr = server.local_addr;
    // The client declares elicitation as well as tasks.
    let mut params = json!({"name": "greet", "arguments": {}});
    let mut meta = tasks::meta(true);
    meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"] = json!({});
    params["_meta"] = meta;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let m = fusion_tests::mrtr::post(addr, Some(&token("alice")), None, true, &body)
        .await
        .message();
    assert_eq!(m["result"]["resultType"], "task", "{m}");
    let id = m["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    let task = until(addr, "alice", &id, "input_required").await;
    let asked = &task["inputRequests"]["e0"];
    assert_eq!(asked["method"], "elicitation/create", "{task}");
    assert_eq!(asked["params"]["message"], "Who is first?", "{task}");
    // Bob cannot answer alice's question; an answer to a key never asked is ignored.
    let update = |who: &'static str, responses: Value| {
        let id = id.clone();
        async move {
            rpc(
                addr,
                who,
                "tasks/update",
                json!({"taskId": id, "inputResponses": responses}),
                true,
            )
            .await
        }
    };
    let theirs = update(
        "bob",
        json!({"e0": {"action": "accept", "content": {"name": "Mallory"}}}),
    )
    .await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    let stray = update(
        "alice",
        json!({"e7": {"action": "accept", "content": {"name": "Eve"}}}),
    )
    .await;
    assert!(stray["result"].is_object(), "{stray}");
    let still = get(addr, "alice", &id).await;
    assert_eq!(still["result"]["status"], "input_required", "{still}");

    let ok = update(
        "alice",
        json!({"e0": {"action": "accept", "content": {"name": "Ada"}}}),
    )
    .await;
    assert!(ok["result"].is_object(), "{ok}");
    let task = until(addr, "alice", &id, "input_required").await;
    assert_eq!(
        task["inputRequests"]["e1"]["params"]["message"], "Who is second?",
        "{task}"
    );
    assert!(
        task["inputRequests"].get("e0").is_none(),
        "answered: {task}"
    );
    // The same answer again, now to a question already answered: ignored.
    update(
        "alice",
        json!({"e0": {"action": "accept", "content": {"name": "Ada"}}}),
    )
    .await;
    update(
        "alice",
        json!({"e1": {"action": "accept", "content": {"name": "Grace"}}}),
    )
    .await;
    let task = poll(addr, "alice", &id, Duration::from_secs(5)).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], r#""hello Ada and Grace""#,
        "{task}"
    );

    // A client that did not declare elicitation: the handler's question fails as on a
    // synchronous call, and the task completes with that envelope.
    let id = start(addr, "alice", "greet", json!({})).await;
    let task = poll(addr, "alice", &id, Duration::from_secs(5)).await;
    assert_eq!(task["status"], "completed", "{task}");
    let text = task["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("ELICITATION_UNSUPPORTED"), "{task}");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// A 2025-11-25 session of `who` on `addr`: its id (initialized) and the `initialize`
/// answer.
async fn session(addr: SocketAddr, who: &str) -> (String, Value) {
    tasks::legacy_session(addr, Some(&token(who))).await
}

/// POSTs `body` on 2025-11-25 session `session` as `who`: the message answered.
async fn legacy(addr: SocketAddr, who: &str, session: &str, body: Value) -> Value {
    tasks::legacy_post(addr, Some(&token(who)), session, &body).await
}

#[tokio::test]
async fn experimental_2025_tasks_are_owned_bounded_and_answer_the_synchronous_result() {
    let server = serve_with(
        TaskLimits {
            max_ttl: Duration::from_secs(90),
            ..TaskLimits::default()
        },
        false,
    )
    .await;
    let addr = server.local_addr;
    let ((alice, init), (bob, _)) = (session(addr, "alice").await, session(addr, "bob").await);
    // The session's answers say what runs as a task (rmcp's types carry neither field); an
    // authenticated client is offered tasks/list.
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    let listed = legacy(
        addr,
        "alice",
        &alice,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    )
    .await;
    let tools = listed["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let execution = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"].clone())
            .unwrap_or_else(|| panic!("no {name}: {listed}"))
    };
    assert_eq!(
        execution("billing_reconcile"),
        json!({"taskSupport": "optional"})
    );
    assert_eq!(execution("only_task"), json!({"taskSupport": "required"}));
    assert_eq!(execution("billing_list_invoices"), Value::Null);
    assert_eq!(tools.len(), 15, "every tool still listed: {listed}");
    let rpc = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});

    // A TTL past the ceiling is cut to it.
    let call = rpc(
        "tools/call",
        json!({"name": "billing_reconcile",
        "arguments": {"duration_ms": 300}, "task": {"ttl": 36_000_000}}),
    );
    let created = legacy(addr, "alice", &alice, call).await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 90_000, "cut to the ceiling: {created}");
    let id = task["taskId"].as_str().unwrap_or_default().to_owned();

    // Bob, on his own session, learns nothing of alice's task.
    let theirs = legacy(addr, "bob", &bob, rpc("tasks/get", json!({"taskId": id}))).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    let theirs = legacy(
        addr,
        "bob",
        &bob,
        rpc("tasks/result", json!({"taskId": id})),
    )
    .await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");

    // tasks/result waits for the end and answers the synchronous call's result.
    let result = legacy(
        addr,
        "alice",
        &alice,
        rpc("tasks/result", json!({"taskId": id})),
    )
    .await;
    let sync = legacy(
        addr,
        "alice",
        &alice,
        rpc(
            "tools/call",
            json!({"name": "billing_reconcile",
        "arguments": {"duration_ms": 300}}),
        ),
    )
    .await;
    let mut got = result["result"].clone();
    let related = got["_meta"]
        .as_object_mut()
        .and_then(|m| m.remove("io.modelcontextprotocol/related-task"));
    assert_eq!(related, Some(json!({"taskId": id})), "{result}");
    if got["_meta"].as_object().is_some_and(|m| m.is_empty()) {
        got.as_object_mut().map(|o| o.remove("_meta"));
    }
    assert_eq!(got, sync["result"], "{result} against {sync}");
    let done = legacy(
        addr,
        "alice",
        &alice,
        rpc("tasks/get", json!({"taskId": id})),
    )
    .await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let again = legacy(
        addr,
        "alice",
        &alice,
        rpc("tasks/cancel", json!({"taskId": id})),
    )
    .await;
    assert_eq!(again["error"]["code"], -32602, "ended: {again}");

    // A tool that does not run as a task: -32601, as the 2025-11-25 spec says.
    let call = rpc(
        "tools/call",
        json!({"name": "billing_list_invoices", "arguments": {}, "task": {}}),
    );
    let refused = legacy(addr, "alice", &alice, call).await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let call = rpc("tools/call", json!({"name": "only_task", "arguments": {}}));
    let refused = legacy(addr, "alice", &alice, call).await;
    assert_eq!(refused["error"]["code"], -32601, "required: {refused}");
    // A panic fails the task; tasks/result answers its JSON-RPC error.
    let call = rpc(
        "tools/call",
        json!({"name": "boom", "arguments": {}, "task": {}}),
    );
    let created = legacy(addr, "alice", &alice, call).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let failed = legacy(
        addr,
        "alice",
        &alice,
        rpc("tasks/result", json!({"taskId": id})),
    )
    .await;
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert_eq!(
        failed["error"]["data"]["code"], "INTERNAL_ERROR",
        "{failed}"
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// The typed client speaks tasks: over real HTTP as alice (a 2026-07-28 connection), a task
/// waited to its end reads exactly as the synchronous call; a tool that runs no task answers
/// at once; a panic is a failed task read as its `INTERNAL_ERROR` envelope; progress is the
/// working task's message; a cancelled task, a question (answered with `tasks/update`) and a
/// wait past its limit are the client's task errors; bob reads none of alice's tasks.
#[tokio::test]
async fn the_typed_client_starts_waits_answers_and_cancels_tasks() {
    use fusion_runtime::client::{
        FusionClient, FusionClientError, TaskError, TaskStart, TaskState,
    };

    let server = serve(TaskLimits::default()).await;
    let alice = FusionClient::connect_http_with_token(&server.url, &token("alice"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let task_of = |start: TaskStart| match start {
        TaskStart::Task(task) => task,
        TaskStart::Done(outcome) => panic!("answered at once: {outcome:?}"),
    };
    let deadline = |what| move |e: tokio::time::error::Elapsed| panic!("{what}: {e}");
    let limit = Duration::from_secs(10);

    // A success and a validation error, each equal to the synchronous call's outcome.
    for args in [json!({"ms": 120}), json!({"ms": -1})] {
        let sync = alice
            .call_tool("nap", args.clone())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let task = task_of(
            alice
                .call_tool_as_task("nap", args)
                .await
                .unwrap_or_else(|e| panic!("{e}")),
        );
        assert!(
            task.ttl.is_some() && task.poll_interval.is_some(),
            "{task:?}"
        );
        let waited = tokio::time::timeout(limit, alice.wait_task(&task))
            .await
            .unwrap_or_else(deadline("wait"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(waited, sync);
    }

    // A tool with no task key answers at once.
    let at_once = alice
        .call_tool_as_task("billing_get_invoice", json!({"id": "inv_2026_0001"}))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(&at_once, TaskStart::Done(o) if !o.is_error),
        "{at_once:?}"
    );

    // A panic: the failed task reads as the INTERNAL_ERROR envelope.
    let boom = task_of(
        alice
            .call_tool_as_task("boom", json!({}))
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let failed = alice
        .wait_task(&boom)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let error = failed.error().unwrap_or_else(|| panic!("{failed:?}"));
    assert_eq!(error.code.as_str(), "INTERNAL_ERROR", "{error:?}");
    assert!(matches!(
        alice.task_state(&boom).await,
        Ok(TaskState::Failed(_))
    ));

    // Progress is the working task's message; cancel ends it and the handler never finishes.
    let long = task_of(
        alice
            .call_tool_as_task("nap", json!({"ms": 3002}))
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let started = Instant::now();
    let message = loop {
        match alice.task_state(&long).await {
            Ok(TaskState::Working { message: Some(m) }) => break m,
            Ok(TaskState::Working { message: None }) if started.elapsed() < limit => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(message, "halfway through the nap");
    // Bob knows nothing of alice's task.
    let bob = FusionClient::connect_http_with_token(&server.url, &token("bob"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(
            bob.task_state(&long).await,
            Err(FusionClientError::Service(_))
        ),
        "bob read alice's task"
    );
    assert!(
        bob.cancel_task(&long).await.is_err(),
        "bob cancelled alice's task"
    );
    alice
        .cancel_task(&long)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    match alice.wait_task(&long).await {
        Err(FusionClientError::Task(TaskError::Cancelled { task_id })) => {
            assert_eq!(task_id, long.id);
        }
        other => panic!("{other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert_eq!(naps_done(3002), 0, "the cancelled handler ran on");

    // Two questions, each answered with tasks/update, then the greeting.
    let greet = task_of(
        alice
            .call_tool_as_task("greet", json!({}))
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    for (key, name) in [("e0", "Ada"), ("e1", "Grace")] {
        match alice.wait_task(&greet).await {
            Err(FusionClientError::Task(TaskError::InputRequired { requests, .. })) => {
                assert!(requests.contains_key(key), "{requests:?}");
            }
            other => panic!("{other:?}"),
        }
        let answer = json!({"action": "accept", "content": {"name": name}});
        alice
            .answer_task(&greet, BTreeMap::from([(key.to_owned(), answer)]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // The answer is taken in eventually: wait until the question is gone.
        let asked = Instant::now();
        while let Ok(TaskState::InputRequired { requests, .. }) = alice.task_state(&greet).await {
            if !requests.contains_key(key) || asked.elapsed() > limit {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let greeted = alice
        .wait_task(&greet)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(greeted.text(), r#""hello Ada and Grace""#);

    // A wait shorter than the task.
    let slow = task_of(
        alice
            .call_tool_as_task("nap", json!({"ms": 1500}))
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    );
    match alice.wait_task_for(&slow, Duration::from_millis(100)).await {
        Err(FusionClientError::Task(TaskError::StillRunning { waited, .. })) => {
            assert!(waited >= Duration::from_millis(100), "{waited:?}");
        }
        other => panic!("{other:?}"),
    }
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// The typed task call, `call::<A>`'s twin, on both revisions over real HTTP: on a 2026-07-28
/// connection (the tasks extension) and on a 2025-11-25 session (the `task` parameter,
/// `tasks/get`, `tasks/result`), a task waited to its end decodes to the value `call::<A>`
/// decodes, and a validation error is the same `FusionClientError::Tool`. On 2025-11-25,
/// `list_tasks` shows alice her tasks page by page and bob none; on 2026-07-28 there is no
/// `tasks/list`.
#[tokio::test]
async fn the_typed_task_call_answers_as_call_on_both_revisions() {
    use fusion_runtime::client::{FusionClient, FusionClientError, TaskError};

    let server = serve_with(TaskLimits::default(), false).await;
    let modern = FusionClient::connect_http_with_token(&server.url, &token("alice"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let legacy = FusionClient::connect_http_session(&server.url, Some(&token("alice")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let limit = Duration::from_secs(10);
    let mut started = Vec::new();
    for (revision, client) in [("2026-07-28", &modern), ("2025-11-25", &legacy)] {
        let input = Nap { ms: 150 };
        let sync = client
            .call::<NapAction>(&input)
            .await
            .unwrap_or_else(|e| panic!("{revision}: {e}"));
        let handle = client
            .call_as_task::<NapAction>(&input)
            .await
            .unwrap_or_else(|e| panic!("{revision}: {e}"));
        let task = handle
            .task()
            .unwrap_or_else(|| panic!("{revision}: answered at once"))
            .clone();
        assert_eq!(task.tool, "nap", "{revision}");
        assert!(task.ttl.is_some(), "{revision}: {task:?}");
        let typed = tokio::time::timeout(limit, handle.wait(client))
            .await
            .unwrap_or_else(|e| panic!("{revision}: {e}"))
            .unwrap_or_else(|e| panic!("{revision}: {e}"));
        assert_eq!(typed, sync, "{revision}");
        assert_eq!(typed.value, json!({"slept_ms": 150}), "{revision}");
        started.push(task.id);

        // A validation error: the same error `call` raises.
        let bad = Nap { ms: 70_000 };
        let called = client.call::<NapAction>(&bad).await;
        let waited = match client.call_as_task::<NapAction>(&bad).await {
            Ok(handle) => handle.wait(client).await,
            Err(e) => Err(e),
        };
        match (called, waited) {
            (Err(FusionClientError::Tool(a)), Err(FusionClientError::Tool(b))) => {
                assert_eq!(a.code, b.code, "{revision}");
                assert_eq!(a.message, b.message, "{revision}");
            }
            other => panic!("{revision}: {other:?}"),
        }
    }

    // tasks/list: 2025-11-25 only; alice sees her session's task, bob none.
    let listed = legacy
        .list_tasks(None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        listed.tasks.iter().any(|t| t.id == started[1]),
        "{listed:?}"
    );
    assert!(
        listed.tasks.iter().all(|t| t.created_at.ends_with('Z')),
        "{listed:?}"
    );
    let bob = FusionClient::connect_http_session(&server.url, Some(&token("bob")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let none = bob.list_tasks(None).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(none.tasks.is_empty(), "bob sees alice's tasks: {none:?}");
    assert!(
        matches!(
            modern.list_tasks(None).await,
            Err(FusionClientError::Task(TaskError::Unexpected(_)))
        ),
        "2026-07-28 has no tasks/list"
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
