//! The guards under load over a real transport: streamable HTTP on 127.0.0.1 (ephemeral
//! port), `rmcp` clients, bounded and self-stopping.
//!
//! - 1,000 concurrent calls at an action limited to 4 running / 16 waiting (the handlers hold
//!   their places until the first call is shed, so the overflow does not depend on how fast
//!   a loaded machine sends): every call gets exactly one answer (a success or `SERVER_BUSY`), successes equal handler executions,
//!   nothing is lost or duplicated, every permit is free afterwards. The figures are printed
//!   (`--nocapture`).
//! - A queued call the client cancels (`notifications/cancelled`) frees its place and never
//!   runs.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fusion_runtime::client::parse_tool_error;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::{Context, Server, ToolError, ToolInput, tool_action};
use rmcp::model::{CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{Notify, Semaphore};

type Client = RunningService<RoleClient, ()>;

/// The whole test, connections included, must end within this.
const LIMIT: Duration = Duration::from_secs(60);

#[derive(Debug, Deserialize, ToolInput)]
struct Unit {
    /// A unique id per call.
    id: u64,
}

/// What the handlers did, and whether the client has seen a call shed yet.
#[derive(Default)]
struct Counter {
    executions: AtomicUsize,
    ids: Mutex<Vec<u64>>,
    shed_seen: AtomicBool,
    shed: Notify,
}

impl Counter {
    fn saw_shed(&self) {
        self.shed_seen.store(true, Ordering::SeqCst);
        self.shed.notify_waiters();
    }

    /// Until the client has seen a call shed (30 s at most): the guard must overflow however
    /// slowly a loaded machine sends the calls, so the first 4 + 16 hold their places.
    async fn wait_for_shed(&self) {
        let seen = async {
            loop {
                let next = self.shed.notified();
                if self.shed_seen.load(Ordering::SeqCst) {
                    break;
                }
                next.await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(30), seen).await;
    }
}

/// A few milliseconds of work; four at once, sixteen waiting.
#[tool_action(name = "load.work", max_active = 4, max_queue = 16)]
async fn work(input: Unit, counter: Context<Counter>) -> Result<u64, ToolError> {
    counter.state().executions.fetch_add(1, Ordering::SeqCst);
    counter
        .state()
        .ids
        .lock()
        .map(|mut v| v.push(input.id))
        .ok();
    counter.state().wait_for_shed().await;
    tokio::time::sleep(Duration::from_millis(3)).await;
    Ok(input.id)
}

/// The handler of the cancellation test: runs until the gate gives it a permit.
struct Gate {
    open: Semaphore,
    started: Mutex<Vec<u64>>,
}

/// Waits for the gate; one at a time, one waiting.
#[tool_action(name = "load.gated", max_active = 1, max_queue = 1)]
async fn gated(input: Unit, gate: Context<Gate>) -> Result<u64, ToolError> {
    gate.state()
        .started
        .lock()
        .map(|mut v| v.push(input.id))
        .ok();
    let _pass = gate
        .state()
        .open
        .acquire()
        .await
        .map_err(|_| fusion_runtime::error("CLOSED", "the gate closed"))?;
    Ok(input.id)
}

async fn serve(server: Server) -> HttpServer {
    let addr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
    // rmcp's client opens a connection per request, and the server sees each close a little
    // later: this test is about the guards, so the connection caps are set out of its way.
    let options = HttpOptions::default()
        .max_connections(4096)
        .max_connections_per_ip(4096);
    spawn_http(server, addr, options)
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"))
}

async fn connect(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .unwrap_or_else(|e| panic!("http handshake: {e}"))
}

fn params(tool: &str, id: u64) -> CallToolRequestParams {
    let arguments = json!({ "id": id }).as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)
}

/// One call's answer.
enum Answer {
    Ok(u64),
    Busy,
}

fn classify(id: u64, r: &CallToolResult) -> Answer {
    let text = r
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_else(|| panic!("call {id}: no text content"));
    if r.is_error.unwrap_or(false) {
        let e = parse_tool_error(&text).unwrap_or_else(|e| panic!("call {id}: {e}: {text}"));
        assert_eq!(e.code().as_str(), "SERVER_BUSY", "call {id}: {text}");
        assert!(e.retry_after_secs().is_some_and(|s| s >= 1), "{text}");
        Answer::Busy
    } else {
        let echoed: u64 = text
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("call {id}: {e}: {text}"));
        assert_eq!(echoed, id, "an answer for another call");
        Answer::Ok(echoed)
    }
}

const CALLS: u64 = 1_000;
const CLIENTS: u64 = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_each_get_exactly_one_answer() {
    let counter = Arc::new(Counter::default());
    let server = Server::builder()
        .name("load")
        .state_arc(Arc::clone(&counter))
        .action::<WorkAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let running = serve(server.clone()).await;
    let run = async {
        let mut clients = Vec::new();
        for _ in 0..CLIENTS {
            clients.push(Arc::new(connect(&running.url).await));
        }
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for id in 0..CALLS {
            let client = Arc::clone(&clients[(id % CLIENTS) as usize]);
            let counter = Arc::clone(&counter);
            tasks.spawn(async move {
                let r = client
                    .call_tool(params("load_work", id))
                    .await
                    .unwrap_or_else(|e| panic!("call {id}: a JSON-RPC error: {e}"));
                let answer = classify(id, &r);
                if matches!(answer, Answer::Busy) {
                    counter.saw_shed();
                }
                (id, answer)
            });
        }
        let mut answered = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            answered.push(joined.unwrap_or_else(|e| panic!("call task: {e}")));
        }
        let wall = started.elapsed();
        for c in clients {
            if let Ok(c) = Arc::try_unwrap(c) {
                let _ = c.cancel().await;
            }
        }
        (answered, wall)
    };
    let (answered, wall) = match tokio::time::timeout(LIMIT, run).await {
        Ok(v) => v,
        Err(_) => panic!("the load test took more than {LIMIT:?}"),
    };

    let answered_ids: HashSet<u64> = answered.iter().map(|(id, _)| *id).collect();
    assert_eq!(answered.len() as u64, CALLS, "one answer per call");
    assert_eq!(answered_ids.len() as u64, CALLS, "no call answered twice");
    let successes: Vec<u64> = answered
        .iter()
        .filter_map(|(_, a)| match a {
            Answer::Ok(id) => Some(*id),
            Answer::Busy => None,
        })
        .collect();
    let shed = answered
        .iter()
        .filter(|(_, a)| matches!(a, Answer::Busy))
        .count();
    let executions = counter.executions.load(Ordering::SeqCst);
    let executed: Vec<u64> = counter.ids.lock().map(|v| v.clone()).unwrap_or_default();
    let executed_set: HashSet<u64> = executed.iter().copied().collect();
    let success_set: HashSet<u64> = successes.iter().copied().collect();

    eprintln!(
        "load_http: {CALLS} concurrent calls over streamable HTTP ({CLIENTS} clients) at max_active 4 / max_queue 16: \
         {} succeeded, {shed} shed with SERVER_BUSY, {executions} handler executions, wall time {wall:?}",
        successes.len()
    );
    assert_eq!(successes.len() + shed, CALLS as usize);
    assert_eq!(
        successes.len(),
        executions,
        "successes == handler executions"
    );
    assert_eq!(executed.len(), executed_set.len(), "no handler ran twice");
    assert_eq!(
        executed_set, success_set,
        "exactly the successful calls ran"
    );
    assert!(
        successes.len() >= 20,
        "at least the first 4 + 16 were admitted"
    );
    assert!(shed > 0, "1,000 calls at once must overflow 4 + 16");
    assert_eq!(
        server
            .guard_state("load.work")
            .map(|g| (g.active, g.queued)),
        Some((0, 0)),
        "every permit is free"
    );
    if tokio::time::timeout(Duration::from_secs(10), running.shutdown())
        .await
        .is_err()
    {
        panic!("server shutdown took more than 10 s");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_call_cancelled_by_the_client_frees_its_place() {
    let gate = Arc::new(Gate {
        open: Semaphore::new(0),
        started: Mutex::new(Vec::new()),
    });
    let server = Server::builder()
        .state_arc(Arc::clone(&gate))
        .action::<GatedAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let running = serve(server.clone()).await;
    let state = |s: &Server| s.guard_state("load.gated").map(|g| (g.active, g.queued));
    let wait_for = |want: (usize, usize)| {
        let server = server.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            while state(&server) != Some(want) {
                assert!(
                    Instant::now() < deadline,
                    "expected {want:?} (active, queued), got {:?}",
                    state(&server)
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    let test = async {
        let client = connect(&running.url).await;
        let first = client.call_tool(params("load_gated", 1));
        let rest = async {
            wait_for((1, 0)).await;
            let request =
                ClientRequest::CallToolRequest(CallToolRequest::new(params("load_gated", 2)));
            let queued = client
                .peer()
                .send_cancellable_request(request, PeerRequestOptions::no_options())
                .await
                .unwrap_or_else(|e| panic!("send: {e}"));
            wait_for((1, 1)).await;
            // Full: a third call is shed.
            let shed = client
                .call_tool(params("load_gated", 3))
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(shed.is_error.unwrap_or(false));
            queued
                .cancel(Some("the user changed their mind".into()))
                .await
                .unwrap_or_else(|e| panic!("cancel: {e}"));
            // The server hears notifications/cancelled and frees the queue place.
            wait_for((1, 0)).await;
            let fourth = client.call_tool(params("load_gated", 4));
            let release = async {
                wait_for((1, 1)).await;
                gate.open.add_permits(2);
            };
            let (fourth, ()) = tokio::join!(fourth, release);
            fourth.unwrap_or_else(|e| panic!("{e}"))
        };
        let (first, fourth) = tokio::join!(first, rest);
        let first = first.unwrap_or_else(|e| panic!("{e}"));
        assert!(!first.is_error.unwrap_or(false));
        assert!(!fourth.is_error.unwrap_or(false), "{fourth:?}");
        let _ = client.cancel().await;
    };
    if tokio::time::timeout(LIMIT, test).await.is_err() {
        panic!("the cancellation test took more than {LIMIT:?}");
    }
    assert_eq!(
        gate.started.lock().map(|v| v.clone()).unwrap_or_default(),
        vec![1, 4],
        "the cancelled call never ran"
    );
    assert_eq!(state(&server), Some((0, 0)));
    let _ = tokio::time::timeout(Duration::from_secs(10), running.shutdown()).await;
}
