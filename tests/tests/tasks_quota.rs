//! Tasks that cannot lock others out (issue 48), over real HTTP with 2025-11-25 sessions and
//! real bearer tokens, on the default bounds, with the in-process store and with a real
//! Redis:
//!
//! - 16 principals each asking for hour-long tasks (`"task": {"ttl": 3600000}`) until
//!   refused each get their whole bound and are refused by it ("already has 16 tasks"):
//!   light use is not squeezed. 47 more (63: what filled the 1,000 places before the fair
//!   share) are refused by their share, never by a full server, and a 64th still gets a
//!   task; every granted `ttl` is cut to the ceiling (15 min).
//! - Tasks that ended count until read: a principal at its bound whose tasks all ended is
//!   still refused; reading their results (`tasks/result`) frees the places at once, and
//!   it starts as many again.

use std::net::SocketAddr;
use std::time::Duration;

use fusion_runtime::auth::AuthMode;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::store::{
    DEFAULT_TASK_MAX_TTL, DEFAULT_TASKS_PER_OWNER, MemoryTasks, RedisTasks, TaskStore,
};
use fusion_tests::fixtures::{self, HangAction, QuickAction};
use fusion_tests::services::Redis;
use fusion_tests::tasks;
use serde_json::{Value, json};

const SECRET: &str = "quota-secret-of-at-least-32-bytes-hs256";
/// What the attacker asks for: an hour.
const HOUR_MS: u64 = 3_600_000;

fn token(sub: &str) -> String {
    fixtures::token(SECRET, sub)
}

/// The billing example and the actions above with 2025 sessions and optional bearer auth,
/// its tasks in `store` (default bounds).
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
    spawn_http(
        server,
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default().stateless(false).auth(auth),
    )
    .await
    .unwrap_or_else(|e| panic!("spawn: {e}"))
}

/// A 2025-11-25 session of `who`: its id.
async fn session(addr: SocketAddr, who: &str) -> String {
    tasks::legacy_session(addr, Some(&token(who))).await.0
}

/// POSTs `body` on 2025-11-25 session `session` as `who`: the message answered.
async fn legacy(addr: SocketAddr, who: &str, session: &str, body: Value) -> Value {
    tasks::legacy_post(addr, Some(&token(who)), session, &body).await
}

/// Asks `tool` as an hour-long task: the task created, or the refusal's envelope text.
async fn ask(addr: SocketAddr, who: &str, session: &str, tool: &str) -> Result<Value, String> {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": {}, "task": {"ttl": HOUR_MS}}});
    let answer = legacy(addr, who, session, call).await;
    match answer["result"].get("task") {
        Some(task) => Ok(task.clone()),
        None => Err(answer["result"]["content"][0]["text"]
            .as_str()
            .map_or_else(|| answer.to_string(), str::to_owned)),
    }
}

/// 16 principals fill their whole bounds with hour-long running tasks; 47 more take what
/// their share allows; a 64th still gets one.
async fn a_crowd_leaves_room_for_a_newcomer(addr: SocketAddr) {
    let ceiling = u64::try_from(DEFAULT_TASK_MAX_TTL.as_millis()).unwrap_or(u64::MAX);
    assert!(ceiling < HOUR_MS, "the ceiling is minutes");
    let mut granted = 0;
    for n in 0..63 {
        let who = format!("attacker-{n}");
        let session = session(addr, &who).await;
        let mut mine = 0;
        let refusal = loop {
            match ask(addr, &who, &session, "hang").await {
                Ok(task) => {
                    assert_eq!(task["ttl"], ceiling, "cut to the ceiling: {task}");
                    mine += 1;
                    assert!(mine <= DEFAULT_TASKS_PER_OWNER, "{who} got {mine} tasks");
                }
                Err(text) => break text,
            }
        };
        assert!(
            !refusal.contains("the most it keeps"),
            "{who} is refused by a full server: {refusal}"
        );
        if n < 16 {
            assert_eq!(mine, DEFAULT_TASKS_PER_OWNER, "{who}: {refusal}");
            assert!(
                refusal.contains(&format!("already has {DEFAULT_TASKS_PER_OWNER} tasks")),
                "{who} is refused by its own bound: {refusal}"
            );
        } else {
            assert!(mine >= 1, "{who} got nothing: {refusal}");
            assert!(
                refusal.contains(&format!("already has {mine} tasks")),
                "{who} is refused by its share: {refusal}"
            );
        }
        granted += mine;
    }
    let session = session(addr, "bystander").await;
    let task = ask(addr, "bystander", &session, "hang")
        .await
        .unwrap_or_else(|refusal| panic!("after {granted} tasks: {refusal}"));
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(task["ttl"], ceiling, "{task}");
}

/// A principal at its bound reads its ended tasks' results and starts as many again.
async fn a_read_result_frees_its_place(addr: SocketAddr) {
    let session = session(addr, "reader").await;
    let mut ids = Vec::new();
    for _ in 0..DEFAULT_TASKS_PER_OWNER {
        let task = ask(addr, "reader", &session, "quick")
            .await
            .unwrap_or_else(|refusal| panic!("{refusal}"));
        ids.push(task["taskId"].as_str().unwrap_or_default().to_owned());
    }
    // Every one ended (but none read).
    for id in &ids {
        let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
            "params": {"taskId": id}});
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let task = legacy(addr, "reader", &session, get.clone()).await;
            if task["result"]["status"] == "completed" {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "not ended: {task}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let refusal = ask(addr, "reader", &session, "quick").await;
    assert!(
        refusal
            .as_ref()
            .is_err_and(|text| text.contains("already has")),
        "ended but unread, they still count: {refusal:?}"
    );
    for id in &ids {
        let read = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result",
            "params": {"taskId": id}});
        let result = legacy(addr, "reader", &session, read).await;
        assert_eq!(
            result["result"]["content"][0]["text"], r#""done""#,
            "{result}"
        );
    }
    for _ in 0..DEFAULT_TASKS_PER_OWNER {
        ask(addr, "reader", &session, "quick")
            .await
            .unwrap_or_else(|refusal| panic!("read, they count no more: {refusal}"));
    }
    // Read, a task is still its owner's to read again until its TTL lapses.
    let again = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
        "params": {"taskId": ids[0]}});
    let task = legacy(addr, "reader", &session, again).await;
    assert_eq!(task["result"]["status"], "completed", "{task}");
}

#[tokio::test]
async fn in_process_a_crowd_at_its_bounds_leaves_room_for_a_newcomer() {
    let server = serve(MemoryTasks::default()).await;
    a_read_result_frees_its_place(server.local_addr).await;
    a_crowd_leaves_room_for_a_newcomer(server.local_addr).await;
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn redis_a_crowd_at_its_bounds_leaves_room_for_a_newcomer() {
    let redis = Redis::start();
    let store = RedisTasks::new(&redis.url).unwrap_or_else(|e| panic!("{e}"));
    let server = serve(store).await;
    a_read_result_frees_its_place(server.local_addr).await;
    a_crowd_leaves_room_for_a_newcomer(server.local_addr).await;
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// The Redis store's own bounds: an ended task frees its place once read, or once the hold
/// passed unread, and stays readable; at most `overall` ended records are kept.
#[tokio::test]
async fn redis_an_ended_task_frees_its_place_once_read_or_past_the_hold() {
    use fusion_runtime::store::{TaskLimits, TaskOutcome, TaskRefused};
    let redis = Redis::start();
    let limits = TaskLimits {
        per_owner: 2,
        overall: 3,
        hold: Duration::from_millis(300),
        ..TaskLimits::default()
    };
    let store = RedisTasks::new(&redis.url)
        .unwrap_or_else(|e| panic!("{e}"))
        .limits(limits);
    let ttl = Duration::from_secs(60);
    let done = || {
        let result = json!({"content": [{"type": "text", "text": "ok"}], "isError": false});
        TaskOutcome::Completed(result.as_object().cloned().unwrap_or_default())
    };
    let create = |owner: &'static str| store.create(owner, ttl);
    let a = create("sub:a").await.unwrap_or_else(|e| panic!("{e}"));
    let b = create("sub:a").await.unwrap_or_else(|e| panic!("{e}"));
    let full = create("sub:a").await;
    assert!(matches!(full, Err(TaskRefused::OwnerFull(2))), "{full:?}");
    // Read: the place is free at once (another owner's read frees nothing).
    assert!(
        store
            .finish(&a.id, done())
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    );
    store
        .release("sub:b", &a.id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        create("sub:a").await.is_err(),
        "another owner's read freed it"
    );
    store
        .release("sub:a", &a.id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let c = create("sub:a").await.unwrap_or_else(|e| panic!("{e}"));
    let read = store
        .get("sub:a", &a.id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(read.is_some(), "still readable until its ttl");
    // Unread: the place is free once the hold passed. (Ended a few ms after `a`: the two
    // expire in that order.)
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(
        store
            .finish(&b.id, done())
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    );
    assert!(create("sub:a").await.is_err(), "within the hold it counts");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let d = create("sub:a").await.unwrap_or_else(|e| panic!("{e}"));
    // A running task's place is never freed by a read.
    store
        .release("sub:a", &c.id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(create("sub:a").await.is_err(), "a running task was freed");
    // Ended records past `overall` (3): the ones expiring first are dropped.
    let mut ended = vec![a.id.clone(), b.id.clone()];
    for id in [&c.id, &d.id] {
        assert!(
            store
                .finish(id, done())
                .await
                .unwrap_or_else(|e| panic!("{e}"))
        );
        store
            .release("sub:a", id)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        ended.push(id.clone());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut kept = Vec::new();
    for id in &ended {
        let read = store
            .get("sub:a", id)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        kept.push(read.is_some());
    }
    assert_eq!(
        kept,
        [false, true, true, true],
        "at most overall ended records, the first to expire dropped"
    );
}
