//! The task store's places cannot be held by a crowd (issue 56), over real HTTP with real
//! bearer tokens and a real trusted-proxy hop, in process and on a real Redis:
//!
//! - 100 principals (2026-07-28 tasks) and 100 addresses (2025-11-25 tasks on sessions, each
//!   through the proxy) each start hour-long tasks until refused: they are refused by their
//!   fair share of a filling store (`SERVER_BUSY`, saying what to do), never by a full one,
//!   and a newcomer of each kind still gets a task. (Before the share, 63 principals filled
//!   the 1,000 places and every other client was refused.)
//! - Addresses count by network for the bound: a hundred loopback addresses are one machine,
//!   a hundred /64s of one IPv6 /48 one site; each group together holds one client's tasks.
//! - The in-process store and the Redis script decide alike: the same requests, the same
//!   answers, refusal by refusal.
//! - A client asking a TTL of 0 or 1 ms is granted the floor, and its task can be read.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use fusion_runtime::auth::AuthMode;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::store::{
    DEFAULT_TASKS_OVERALL, DEFAULT_TASKS_PER_OWNER, MIN_TASK_TTL, MemoryTasks, RedisTasks,
    TaskLimits, TaskOutcome, TaskRefused, TaskStore,
};
use fusion_tests::fixtures::{self, HangAction, QuickAction};
use fusion_tests::raw_http;
use fusion_tests::services::Redis;
use fusion_tests::tasks;
use serde_json::{Value, json};

const SECRET: &str = "crowd-secret-of-at-least-32-bytes-hs256";
const HOUR_MS: u64 = 3_600_000;

fn token(sub: &str) -> String {
    fixtures::token(SECRET, sub)
}

/// The billing example and the actions above, with sessions, optional bearer auth, and
/// loopback as a trusted proxy (`X-Forwarded-For` names the client), tasks in `store`.
async fn serve(store: impl TaskStore) -> HttpServer {
    let server = examples::billing::builder()
        .action::<HangAction>()
        .action::<QuickAction>()
        .task_store(store)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let auth = fusion_tests::services::hs256_auth(
        SECRET,
        fixtures::RESOURCE,
        fixtures::ISSUER,
        AuthMode::Optional,
    );
    let options = HttpOptions::default()
        .stateless(false)
        .auth(auth)
        .trust_proxy(IpAddr::from([127, 0, 0, 1]))
        .max_sessions(2048)
        .max_sessions_per_client(2048);
    spawn_http(server, SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

/// POSTs `body` as the client at `forwarded`, through the proxy.
async fn as_address(
    addr: SocketAddr,
    forwarded: &str,
    session: Option<&str>,
    body: &Value,
) -> raw_http::RawResponse {
    tasks::forwarded_post(addr, forwarded, session, body).await
}

/// A 2025-11-25 session of the client at `forwarded`: its id.
async fn address_session(addr: SocketAddr, forwarded: &str) -> String {
    tasks::forwarded_session(addr, forwarded).await
}

/// What a task request was answered: a task, or a refusal's envelope text.
type Asked = Result<Value, String>;

/// Asks `tool` as an hour-long 2025-11-25 task from the client at `forwarded`.
async fn ask_as_address(addr: SocketAddr, forwarded: &str, session: &str, tool: &str) -> Asked {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": {}, "task": {"ttl": HOUR_MS}}});
    let answer = as_address(addr, forwarded, Some(session), &call)
        .await
        .message();
    match answer["result"].get("task") {
        Some(task) => Ok(task.clone()),
        None => Err(refusal_text(&answer)),
    }
}

/// Asks `tool` as a 2026-07-28 task as principal `who`.
async fn ask_as_principal(addr: SocketAddr, who: &str, tool: &str) -> Asked {
    let answer = tasks::call(addr, &token(who), tool, json!({}), true).await;
    match answer["result"]["resultType"].as_str() {
        Some("task") => Ok(answer["result"].clone()),
        _ => Err(refusal_text(&answer)),
    }
}

/// The `SERVER_BUSY` envelope of a refused task request (an `isError` result).
fn refusal_text(answer: &Value) -> String {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        text.starts_with("<tool_error code=\"SERVER_BUSY\""),
        "{answer}"
    );
    text
}

/// Asks until refused: how many tasks were granted, and the refusal.
async fn fill<F, Fut>(mut ask: F) -> (usize, String)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Asked>,
{
    let mut granted = 0;
    loop {
        match ask().await {
            Ok(_) => {
                granted += 1;
                assert!(granted <= DEFAULT_TASKS_PER_OWNER, "{granted} tasks");
            }
            Err(refusal) => return (granted, refusal),
        }
    }
}

/// A refusal by the client's own bound or its share, never by a full server, with words
/// that say what to do and when to come back.
fn refused_by_its_share(who: &str, refusal: &str) {
    assert!(
        refusal.contains("this client already has"),
        "{who} is refused by its own bound or share: {refusal}"
    );
    assert!(
        !refusal.contains("the most it keeps"),
        "{who}: the server is full: {refusal}"
    );
    assert!(
        refusal.contains("<recovery>Read the result of one of your tasks that ended"),
        "{refusal}"
    );
    assert!(
        refusal.contains("<retry_after>5 seconds</retry_after>"),
        "{refusal}"
    );
}

/// 100 principals and 100 addresses hold every task they can; a newcomer of each kind is
/// served.
async fn a_crowd_leaves_a_newcomer_served(addr: SocketAddr) {
    let mut held = 0;
    let mut squeezed = 0;
    for n in 0..100 {
        let who = format!("crowd-{n}");
        let (granted, refusal) = fill(|| ask_as_principal(addr, &who, "hang")).await;
        refused_by_its_share(&who, &refusal);
        squeezed += usize::from(granted < DEFAULT_TASKS_PER_OWNER);
        held += granted;
    }
    for n in 0..100 {
        let forwarded = format!("203.0.113.{}", n + 1);
        let session = address_session(addr, &forwarded).await;
        let (granted, refusal) = fill(|| ask_as_address(addr, &forwarded, &session, "hang")).await;
        refused_by_its_share(&forwarded, &refusal);
        held += granted;
    }
    assert!(squeezed > 0, "the share never shrank");
    assert!(
        held < DEFAULT_TASKS_OVERALL,
        "{held} tasks held: the crowd filled the store"
    );
    let task = ask_as_principal(addr, "newcomer", "hang")
        .await
        .unwrap_or_else(|refusal| panic!("after {held} tasks: {refusal}"));
    assert_eq!(task["status"], "working", "{task}");
    let session = address_session(addr, "198.51.100.7").await;
    let task = ask_as_address(addr, "198.51.100.7", &session, "hang")
        .await
        .unwrap_or_else(|refusal| panic!("after {held} tasks: {refusal}"));
    assert_eq!(task["status"], "working", "{task}");
}

#[tokio::test]
async fn in_process_a_crowd_of_principals_and_addresses_leaves_a_newcomer_served() {
    let server = serve(MemoryTasks::default()).await;
    a_crowd_leaves_a_newcomer_served(server.local_addr).await;
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn redis_a_crowd_of_principals_and_addresses_leaves_a_newcomer_served() {
    let redis = Redis::start();
    let store = RedisTasks::new(&redis.url).unwrap_or_else(|e| panic!("{e}"));
    let server = serve(store).await;
    a_crowd_leaves_a_newcomer_served(server.local_addr).await;
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// A hundred addresses of one machine (loopback), and a hundred /64s of one IPv6 /48, each
/// hold together what one client may: their tasks' owners stay apart (each reads its own).
async fn a_network_counts_as_one_client(addr: SocketAddr) {
    let loopback = |n: usize| format!("127.0.0.{}", n + 1);
    let site = |n: usize| format!("2001:db8:77:{n:x}::1");
    for (group, address) in [
        ("loopback", &loopback as &dyn Fn(usize) -> String),
        ("a /48", &site),
    ] {
        let mut held = 0;
        let mut first = None;
        for n in 0..100 {
            let forwarded = address(n);
            let session = address_session(addr, &forwarded).await;
            match ask_as_address(addr, &forwarded, &session, "hang").await {
                Ok(task) => {
                    held += 1;
                    first.get_or_insert((forwarded, session, task));
                }
                Err(refusal) => {
                    assert!(
                        refusal.contains(&format!("already has {DEFAULT_TASKS_PER_OWNER} tasks")),
                        "{group} {forwarded}: {refusal}"
                    );
                }
            }
        }
        assert_eq!(held, DEFAULT_TASKS_PER_OWNER, "{group}");
        // The first address's task is its own: another of the group cannot read it.
        let Some((forwarded, session, task)) = first else {
            panic!("{group}: no task")
        };
        let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
            "params": {"taskId": task["taskId"]}});
        let mine = as_address(addr, &forwarded, Some(&session), &get)
            .await
            .message();
        assert_eq!(mine["result"]["taskId"], task["taskId"], "{mine}");
        let other = address(99);
        let other_session = address_session(addr, &other).await;
        let theirs = as_address(addr, &other, Some(&other_session), &get)
            .await
            .message();
        assert_eq!(theirs["error"]["code"], -32602, "{group}: {theirs}");
    }
}

#[tokio::test]
async fn in_process_a_network_counts_as_one_client() {
    let server = serve(MemoryTasks::default()).await;
    a_network_counts_as_one_client(server.local_addr).await;
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn redis_a_network_counts_as_one_client() {
    let redis = Redis::start();
    let store = RedisTasks::new(&redis.url).unwrap_or_else(|e| panic!("{e}"));
    let server = serve(store).await;
    a_network_counts_as_one_client(server.local_addr).await;
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// One step of the script both stores run.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// `owner` asks for a task.
    Create(&'static str),
    /// The `n`-th task created ends, and its owner reads it.
    EndAndRead(usize),
}

/// What `store` answers to the script: one line per step.
async fn run_script(store: &dyn TaskStore, script: &[Step]) -> Vec<String> {
    let mut created = Vec::new();
    let mut answers = Vec::new();
    for step in script {
        let answer = match *step {
            Step::Create(owner) => match store.create(owner, Duration::from_secs(60)).await {
                Ok(task) => {
                    created.push((owner, task.id));
                    "ok".to_owned()
                }
                Err(TaskRefused::Store(e)) => panic!("{e}"),
                Err(refused) => format!("{refused:?}"),
            },
            Step::EndAndRead(n) => {
                let (owner, id) = &created[n];
                let done = json!({"content": [], "isError": false});
                let outcome = TaskOutcome::Completed(done.as_object().cloned().unwrap_or_default());
                let ended = store.finish(id, outcome).await;
                store
                    .release(owner, id)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                format!("ended {ended:?}")
            }
        };
        answers.push(answer);
    }
    answers
}

#[tokio::test]
async fn the_in_process_store_and_the_redis_script_decide_alike() {
    let limits = TaskLimits {
        per_owner: 4,
        overall: 24,
        ..TaskLimits::default()
    };
    // Owners arriving one after another, each asking five times; some tasks ended and read
    // along the way; networks (loopback, one /48) counted as one client.
    let owners = [
        "sub:a",
        "sub:b",
        "ip:203.0.113.1",
        "sub:c",
        "ip:127.0.0.1",
        "ip:127.0.0.2",
        "ip:2001:db8:1:1::/64",
        "ip:2001:db8:1:2::/64",
        "sub:d",
        "sub:e",
        "sub:f",
        "sub:g",
        "sub:h",
        "sub:i",
        "sub:j",
        "sub:k",
        "sub:l",
        "sub:m",
        "sub:n",
        "sub:o",
    ];
    let mut script = Vec::new();
    for (k, owner) in owners.into_iter().enumerate() {
        script.extend([Step::Create(owner); 5]);
        if k % 4 == 3 {
            script.push(Step::EndAndRead(k));
        }
    }
    let memory = MemoryTasks::new(limits);
    let in_process = run_script(&memory, &script).await;
    let redis = Redis::start();
    let shared = RedisTasks::new(&redis.url)
        .unwrap_or_else(|e| panic!("{e}"))
        .limits(limits);
    let in_redis = run_script(&shared, &script).await;
    assert_eq!(in_process, in_redis);
    // The script reaches each bound: the owner's, its share, a full store.
    let all = in_process.join("\n");
    for bound in ["OwnerFull(4)", "ShareFull", "StoreFull(24)"] {
        assert!(all.contains(bound), "{bound} never reached:\n{all}");
    }
}

#[tokio::test]
async fn a_tiny_ttl_is_granted_the_floor_and_the_task_can_be_read() {
    let server = serve(MemoryTasks::default()).await;
    let addr = server.local_addr;
    let floor = u64::try_from(MIN_TASK_TTL.as_millis()).unwrap_or(u64::MAX);
    let (session, _) = tasks::legacy_session(addr, Some(&token("tiny"))).await;
    for asked in [0, 1] {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "quick", "arguments": {}, "task": {"ttl": asked}}});
        let created = tasks::legacy_post(addr, Some(&token("tiny")), &session, &call).await;
        let task = &created["result"]["task"];
        assert_eq!(task["ttl"], floor, "asked {asked} ms: {created}");
        // Past what was asked, the task is still there to be read.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result",
            "params": {"taskId": task["taskId"]}});
        let read = tasks::legacy_post(addr, Some(&token("tiny")), &session, &get).await;
        assert_eq!(
            read["result"]["content"][0]["text"], r#""done""#,
            "asked {asked} ms: {read}"
        );
    }
    // A 2026-07-28 client asks no TTL: it is granted the server's default.
    let default = TaskLimits::default().default_ttl.as_millis();
    let modern = ask_as_principal(addr, "tiny", "quick")
        .await
        .unwrap_or_else(|refusal| panic!("{refusal}"));
    assert_eq!(
        modern["ttlMs"].as_u64().map(u128::from),
        Some(default),
        "{modern}"
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
