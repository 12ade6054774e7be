//! MCP tasks shared by every instance through Redis (issue 34): three
//! `billing-server serve --http --stateless --redis-url` processes behind a real nginx with
//! one real Redis, `billing_reconcile` as the task.
//!
//! - A task started through nginx is polled through nginx (round robin: the polls land on
//!   the other instances) to completion, and every instance reads it; another principal on
//!   another instance reads nothing.
//! - `tasks/cancel` sent to another instance stops the call on the instance running it (its
//!   one reconciliation slot is free again at once).
//! - The instance running a task is killed: the task reads `failed`, with a message saying
//!   so, within the lease (`--task-lease 1500ms`), on the instances left.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fusion_tests::services::{Instance, Nginx, Redis, free_port, mint, now, stateless_instance};
use fusion_tests::tasks::{call, cancel, get, poll, start};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::json;

const SECRET: &str = "shared-tasks-secret-of-32-bytes-hs256";
const ISSUER: &str = "https://auth.example.com";
/// The lease the instances renew: a dead instance's task fails this long after its last
/// renewal.
const LEASE: Duration = Duration::from_millis(1500);

fn spawn_billing(redis_url: &str, resource: &str) -> Instance {
    stateless_instance(
        env!("CARGO_BIN_EXE_billing-server"),
        redis_url,
        resource,
        ISSUER,
        &[
            ("FUSION_AUTH_HS256_SECRET", SECRET),
            ("FUSION_TASK_LEASE", "1500ms"),
        ],
    )
}

fn token(resource: &str, sub: &str) -> String {
    let key = EncodingKey::from_secret(SECRET.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    mint(
        Algorithm::HS256,
        &key,
        &json!({"sub": sub, "aud": resource, "iss": ISSUER, "exp": now() + 600}),
    )
}

/// Redis, three instances and nginx in front of them, and the resource the tokens are for.
fn cluster() -> (Redis, Vec<Instance>, Nginx, String) {
    let redis = Redis::start();
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let instances: Vec<Instance> = (0..3)
        .map(|_| spawn_billing(&redis.url, &resource))
        .collect();
    let upstreams: Vec<SocketAddr> = instances.iter().map(|i| i.addr).collect();
    let nginx = Nginx::start(&upstreams, port);
    (redis, instances, nginx, resource)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_polled_and_cancelled_through_any_instance() {
    let (_redis, instances, nginx, resource) = cluster();
    let (alice, bob) = (token(&resource, "alice"), token(&resource, "bob"));

    // Started and polled through nginx: every poll may land on another instance.
    let id = start(
        nginx.addr,
        &alice,
        "billing_reconcile",
        json!({"duration_ms": 1500}),
    )
    .await;
    for i in &instances {
        let m = get(i.addr, &alice, &id).await;
        assert_eq!(m["result"]["taskId"], id.as_str(), "{}: {m}", i.addr);
        let theirs = get(i.addr, &bob, &id).await;
        assert_eq!(theirs["error"]["code"], -32602, "{}: {theirs}", i.addr);
    }
    let task = poll(nginx.addr, &alice, &id, Duration::from_secs(10)).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["structuredContent"]["took_ms"], 1500,
        "{task}"
    );
    for i in &instances {
        let m = get(i.addr, &alice, &id).await;
        assert_eq!(m["result"]["result"], task["result"], "{}: {m}", i.addr);
    }

    // Started on A, cancelled on B, read on C; A's one reconciliation slot is free at once
    // (a call stopped, not left running for its 8 seconds).
    let id = start(
        instances[0].addr,
        &alice,
        "billing_reconcile",
        json!({"duration_ms": 8000}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let busy = call(
        instances[0].addr,
        &alice,
        "billing_reconcile",
        json!({"duration_ms": 10}),
        false,
    )
    .await;
    let text = busy["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("SERVER_BUSY"),
        "the task holds the slot: {busy}"
    );
    let refused = cancel(instances[1].addr, &bob, &id).await;
    assert_eq!(refused["error"]["code"], -32602, "not bob's: {refused}");
    let cancelled = cancel(instances[1].addr, &alice, &id).await;
    assert!(cancelled["result"].is_object(), "{cancelled}");
    let m = get(instances[2].addr, &alice, &id).await;
    assert_eq!(m["result"]["status"], "cancelled", "{m}");
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let m = call(
            instances[0].addr,
            &alice,
            "billing_reconcile",
            json!({"duration_ms": 10}),
            false,
        )
        .await;
        if m["result"]["structuredContent"]["took_ms"] == 10 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "A still runs the cancelled task: {m}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let m = get(nginx.addr, &alice, &id).await;
    assert_eq!(m["result"]["status"], "cancelled", "stays cancelled: {m}");
}

/// A connection to `redis`.
async fn redis_connection(redis: &Redis) -> redis::aio::MultiplexedConnection {
    redis::Client::open(redis.url.as_str())
        .unwrap_or_else(|e| panic!("{e}"))
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("connect to Redis: {e}"))
}

/// Redis's clock (`TIME`), in milliseconds: the clock the task scripts stamp with.
async fn redis_now_ms(c: &mut redis::aio::MultiplexedConnection) -> i64 {
    let (secs, micros): (i64, i64) = redis::cmd("TIME")
        .query_async(c)
        .await
        .unwrap_or_else(|e| panic!("TIME: {e}"));
    secs * 1000 + micros / 1000
}

/// A field of task `id`'s hash (the store's default prefix, `fusion`), as a number.
async fn task_field(c: &mut redis::aio::MultiplexedConnection, id: &str, field: &str) -> i64 {
    let value: Option<i64> = redis::cmd("HGET")
        .arg(format!("fusion:task:{id}"))
        .arg(field)
        .query_async(c)
        .await
        .unwrap_or_else(|e| panic!("HGET {field}: {e}"));
    value.unwrap_or_else(|| panic!("task {id} has no `{field}` in Redis"))
}

/// Checked on the times the store records, on Redis's clock, not on how long the test waited:
/// the lease the dead instance last renewed ends no later than `LEASE` after its death, and
/// the first `tasks/get` once Redis's clock is past that end reads the task `failed`, stamped
/// no earlier than the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_dies_fails_within_the_lease() {
    let (redis, mut instances, _nginx, resource) = cluster();
    let alice = token(&resource, "alice");
    let id = start(
        instances[0].addr,
        &alice,
        "billing_reconcile",
        json!({"duration_ms": 8000}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let m = get(instances[1].addr, &alice, &id).await;
    assert_eq!(
        m["result"]["status"], "working",
        "renewed while it runs: {m}"
    );
    let mut c = redis_connection(&redis).await;
    let mut runner = instances.remove(0);
    let _ = runner.child.kill();
    let _ = runner.child.wait();
    // On one connection, in this order: every renewal Redis ran came before `died`.
    let lease_end = task_field(&mut c, &id, "lease").await;
    let died = redis_now_ms(&mut c).await;
    let lease_ms = i64::try_from(LEASE.as_millis()).unwrap_or(i64::MAX);
    assert!(
        lease_end <= died + lease_ms,
        "the lease ends {} ms after the instance died (Redis's clock), more than {LEASE:?}",
        lease_end - died
    );
    // Waits for Redis's clock, not the test's, to pass the lease's end (the deadline only
    // stops a hang).
    let deadline = Instant::now() + LEASE * 20;
    while redis_now_ms(&mut c).await <= lease_end {
        assert!(Instant::now() < deadline, "Redis's clock stands still");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let m = get(instances[1].addr, &alice, &id).await;
    let task = &m["result"];
    assert_eq!(
        task["status"], "failed",
        "the first read past the lease: {m}"
    );
    let failed_at = task_field(&mut c, &id, "updated").await;
    assert!(
        failed_at >= lease_end,
        "failed at {failed_at}, before the lease ended at {lease_end} (Redis's clock)"
    );
    let message = task["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("instance running this task stopped"),
        "{task}"
    );
    assert_eq!(task["statusMessage"], task["error"]["message"], "{task}");
    assert_eq!(task["error"]["data"]["code"], "INTERNAL_ERROR", "{task}");
    let m = get(instances[0].addr, &alice, &id).await;
    assert_eq!(
        m["result"]["status"], "failed",
        "the same on every instance: {m}"
    );
    drop(runner);
}

#[tokio::test]
async fn the_redis_store_keeps_the_bounds_and_the_owner() {
    use fusion_runtime::store::{
        RedisTasks, TaskLimits, TaskOutcome, TaskRefused, TaskStatus, TaskStore,
    };
    let redis = Redis::start();
    let limits = TaskLimits {
        per_owner: 2,
        overall: 3,
        max_result_bytes: 64,
        max_ttl: Duration::from_secs(10),
        ..TaskLimits::default()
    };
    let store = RedisTasks::new(&redis.url)
        .unwrap_or_else(|e| panic!("{e}"))
        .limits(limits);
    let ttl = Duration::from_secs(3600);
    let a1 = store
        .create("sub:a", ttl)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a1.ttl_ms, 10_000, "cut to the ceiling");
    store
        .create("sub:a", ttl)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let refused = store.create("sub:a", ttl).await;
    assert!(
        matches!(refused, Err(TaskRefused::OwnerFull(2))),
        "{refused:?}"
    );
    store
        .create("sub:b", ttl)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let full = store.create("sub:c", ttl).await;
    assert!(matches!(full, Err(TaskRefused::StoreFull(3))), "{full:?}");

    // Someone else's, an unknown id, an id no store makes: nothing.
    assert!(
        store
            .get("sub:b", &a1.id)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .is_none()
    );
    assert!(
        !store
            .cancel("sub:b", &a1.id)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    );
    for id in ["0123456789abcdef0123456789abcdef", "fusion:task:*", ""] {
        assert!(
            store
                .get("sub:a", id)
                .await
                .unwrap_or_else(|e| panic!("{e}"))
                .is_none()
        );
    }

    // A result past the bound fails the task, saying so; a cancelled task stays cancelled.
    let big = serde_json::json!({"content": [{"type": "text", "text": "x".repeat(100)}]});
    let big = big.as_object().cloned().unwrap_or_default();
    assert!(
        store
            .finish(&a1.id, TaskOutcome::Completed(big))
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    );
    let read = store
        .get("sub:a", &a1.id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let read = read.unwrap_or_else(|| panic!("gone"));
    assert_eq!(read.status, TaskStatus::Failed);
    let message = read.status_message.unwrap_or_default();
    assert!(message.contains("more than the 64"), "{message}");
    assert!(
        !store
            .cancel("sub:a", "0123456789abcdef0123456789abcdef")
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    );
    assert!(
        store
            .cancel("sub:a", &a1.id)
            .await
            .unwrap_or_else(|e| panic!("{e}")),
        "found"
    );
    let read = store
        .get("sub:a", &a1.id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        read.map(|r| r.status),
        Some(TaskStatus::Failed),
        "an ended task keeps its end"
    );

    // Redis down: no task is created and no read pretends to know (errors, not "none").
    let mut redis = redis;
    redis.stop();
    let refused = store.create("sub:d", ttl).await;
    assert!(matches!(refused, Err(TaskRefused::Store(_))), "{refused:?}");
    assert!(store.get("sub:a", &a1.id).await.is_err());
    assert!(store.cancel("sub:a", &a1.id).await.is_err());
}

/// A name to greet.
#[derive(serde::Deserialize, fusion_runtime::ToolInput, fusion_runtime::Elicitable)]
struct Name {
    /// The name.
    #[fusion(length(min = 1, max = 40))]
    name: String,
}

/// Nothing.
#[derive(serde::Deserialize, fusion_runtime::ToolInput)]
struct Nothing {}

/// Asks for a name, then greets it.
#[fusion_runtime::tool_action(name = "greet", task)]
async fn greet(
    _input: Nothing,
    cx: fusion_runtime::Context,
) -> Result<String, fusion_runtime::ToolError> {
    match cx.elicit::<Name>("Who is it?").await? {
        fusion_runtime::context::Elicited::Accept(n) => Ok(format!("hello {}", n.name)),
        _ => Ok("nobody".to_owned()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_asked_on_one_instance_is_answered_through_another() {
    use fusion_runtime::auth::{Auth, AuthMode, JwtVerifier};
    use fusion_runtime::mcp::{HttpOptions, spawn_http};
    use fusion_runtime::store::RedisTasks;
    let redis = Redis::start();
    let resource = "http://127.0.0.1/mcp";
    let mut servers = Vec::new();
    for _ in 0..3 {
        let server = fusion_runtime::Server::builder()
            .name("greeter")
            .action::<GreetAction>()
            .task_store(RedisTasks::new(&redis.url).unwrap_or_else(|e| panic!("{e}")))
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let verifier = JwtVerifier::new(resource)
            .issuer(ISSUER)
            .hs256_secret(SECRET.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let auth = Auth::new(verifier, resource)
            .authorization_server(ISSUER)
            .mode(AuthMode::Required);
        let http = spawn_http(
            server,
            SocketAddr::from(([127, 0, 0, 1], 0)),
            HttpOptions::default().stateless(true).auth(auth),
        )
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"));
        servers.push(http);
    }
    let alice = token(resource, "alice");
    let mut params = json!({"name": "greet", "arguments": {}});
    let mut meta = fusion_tests::tasks::meta(true);
    meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"] = json!({});
    params["_meta"] = meta;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let m = fusion_tests::mrtr::post(servers[0].local_addr, Some(&alice), None, true, &body)
        .await
        .message();
    let id = m["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!id.is_empty(), "{m}");
    let deadline = Instant::now() + Duration::from_secs(5);
    let task = loop {
        let m = get(servers[1].local_addr, &alice, &id).await;
        if m["result"]["status"] == "input_required" {
            break m["result"].clone();
        }
        assert!(Instant::now() < deadline, "no question: {m}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        task["inputRequests"]["e0"]["params"]["message"], "Who is it?",
        "{task}"
    );
    let answer = json!({"taskId": id, "inputResponses": {"e0": {"action": "accept", "content": {"name": "Ada"}}}});
    let ok =
        fusion_tests::tasks::rpc(servers[1].local_addr, &alice, "tasks/update", answer, true).await;
    assert!(ok["result"].is_object(), "{ok}");
    let task = poll(servers[2].local_addr, &alice, &id, Duration::from_secs(5)).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"], r#""hello Ada""#,
        "{task}"
    );
    for s in servers {
        s.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
