//! MCP 2025-11-25 tasks shared by three instances through one real Redis (issue 51): three
//! `tasks-server` processes (stateful HTTP, bearer auth, `RedisTasks`), raw JSON-RPC as a
//! 2025-11-25 client sends it, one session per principal on each instance.
//!
//! - `tasks/list` on any instance shows alice the tasks she started on all three, page by
//!   page (the server's page size is 2), and bob none of them; a cursor that is not a string
//!   or was not issued by the server is `-32602`; a cursor from one instance pages on another
//!   (one `FUSION_REQUEST_STATE_KEY`); alice's cursor gives bob none of her tasks.
//! - A task started on A asks a question (`cx.elicit`): `tasks/get` on B shows
//!   `input_required`; `tasks/result` on C streams the `elicitation/create` request with the
//!   related-task `_meta` (bob's `tasks/result` of it is an unknown task's error, no stream);
//!   bob's answer to it is dropped; alice's, POSTed on B, resumes the
//!   handler on A, and C's stream tells the status changes, then the result.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fusion_tests::raw_http::Streaming;
use fusion_tests::services::{Instance, Redis};
use fusion_tests::tasks::{legacy_post, legacy_session, legacy_session_with, server_token};
use serde_json::{Value, json};

fn spawn(redis: &Redis) -> Instance {
    Instance::spawn(
        env!("CARGO_BIN_EXE_tasks-server"),
        &[],
        &[
            ("TASKS_REDIS_URL", redis.url.as_str()),
            // One key for every instance: a cursor issued by one is read by the others.
            (
                "FUSION_REQUEST_STATE_KEY",
                "shared-tasks-2025-cursor-key-of-32-bytes",
            ),
        ],
    )
}

/// One 2025-11-25 session of a principal on each of `instances`.
struct Sessions<'a> {
    token: String,
    on: Vec<(SocketAddr, String)>,
    _instances: std::marker::PhantomData<&'a Instance>,
}

impl<'a> Sessions<'a> {
    async fn open(instances: &'a [Instance], who: &str, capabilities: Value) -> Sessions<'a> {
        let token = server_token(who);
        let mut on = Vec::new();
        for i in instances {
            let (session, _) =
                legacy_session_with(i.addr, Some(&token), capabilities.clone()).await;
            on.push((i.addr, session));
        }
        Sessions {
            token,
            on,
            _instances: std::marker::PhantomData,
        }
    }

    /// POSTs `method` with `params` on the session on instance `k`: the message answered.
    async fn rpc(&self, k: usize, method: &str, params: Value) -> Value {
        let (addr, session) = &self.on[k];
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        legacy_post(*addr, Some(&self.token), session, &body).await
    }

    /// Every task `tasks/list` shows on instance `k`, following the cursors; each page has
    /// at most two tasks.
    async fn list_all(&self, k: usize) -> Vec<Value> {
        let mut tasks = Vec::new();
        let mut params = json!({});
        for _ in 0..10 {
            let m = self.rpc(k, "tasks/list", params.clone()).await;
            let page = m["result"]["tasks"]
                .as_array()
                .unwrap_or_else(|| panic!("no tasks: {m}"))
                .clone();
            assert!(page.len() <= 2, "a page past the page size: {m}");
            tasks.extend(page);
            match m["result"]["nextCursor"].as_str() {
                Some(cursor) => params = json!({ "cursor": cursor }),
                None => return tasks,
            }
        }
        panic!("more than ten pages")
    }
}

fn ids(tasks: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = tasks
        .iter()
        .map(|t| t["taskId"].as_str().unwrap_or_default().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_list_shows_each_principal_only_its_own_tasks_on_every_instance() {
    let redis = Redis::start();
    let instances: Vec<Instance> = (0..3).map(|_| spawn(&redis)).collect();
    let alice = Sessions::open(&instances, "alice", json!({"tasks": {}})).await;
    let bob = Sessions::open(&instances, "bob", json!({"tasks": {}})).await;

    // tasks.list is offered to an authenticated client.
    let (_, init) = legacy_session(instances[0].addr, Some(&server_token("carol"))).await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"]["list"],
        json!({}),
        "{init}"
    );

    // Alice starts a task on each instance, bob one on A.
    let mut started = Vec::new();
    for k in 0..3 {
        let params =
            json!({"name": "nap_task", "arguments": {"ms": 20 + k}, "task": {"ttl": 60000}});
        let m = alice.rpc(k, "tools/call", params).await;
        let id = m["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("no task: {m}"));
        started.push(json!({ "taskId": id }));
    }
    let theirs = bob
        .rpc(
            0,
            "tools/call",
            json!({"name": "nap_task", "arguments": {"ms": 5}, "task": {}}),
        )
        .await;
    let bobs = theirs["result"]["task"]["taskId"].clone();
    assert!(bobs.is_string(), "{theirs}");

    for k in 0..3 {
        // Alice's three on every instance, in two pages, oldest first; never bob's.
        let listed = alice.list_all(k).await;
        assert_eq!(ids(&listed), ids(&started), "instance {k}: {listed:?}");
        let created: Vec<&str> = listed
            .iter()
            .map(|t| t["createdAt"].as_str().unwrap_or_default())
            .collect();
        assert!(created.is_sorted(), "not oldest first: {created:?}");
        assert!(
            listed
                .iter()
                .all(|t| t["ttl"] == 60000 && t["status"].is_string()),
            "{listed:?}"
        );
        // Bob's one task only, wherever he asks.
        let seen = bob.list_all(k).await;
        assert_eq!(ids(&seen), ids(&[json!({ "taskId": bobs })]), "{seen:?}");
        // Bob reads none of alice's by id either: as an unknown task.
        let id = &started[k]["taskId"];
        let got = bob.rpc(k, "tasks/get", json!({ "taskId": id })).await;
        assert_eq!(got["error"]["code"], -32602, "{got}");
    }

    // A page from B, the next one from C: the rest of alice's tasks.
    let first = alice.rpc(1, "tasks/list", json!({})).await;
    let cursor = first["result"]["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("one page only: {first}"))
        .to_owned();
    let rest = alice
        .rpc(2, "tasks/list", json!({ "cursor": cursor }))
        .await;
    let mut both = first["result"]["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    both.extend(
        rest["result"]["tasks"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
    );
    assert_eq!(ids(&both), ids(&started), "{first} then {rest}");
    // Alice's cursor, replayed by bob: only bob's own tasks after it (none are newer).
    let replayed = bob.rpc(2, "tasks/list", json!({ "cursor": cursor })).await;
    let shown = replayed["result"]["tasks"].as_array().cloned();
    assert!(
        shown.is_some_and(|t| t.iter().all(|t| t["taskId"] == bobs)),
        "{replayed}"
    );

    // Cursors the server did not issue, or that are not strings.
    // The last character changed (to one it is not: the MAC no longer verifies).
    let last = if cursor.ends_with('A') { "B" } else { "A" };
    let forged = format!("{}{last}", &cursor[..cursor.len() - 1]);
    for bad in [json!(forged), json!(5), json!({}), json!("x".repeat(300))] {
        let m = alice.rpc(0, "tasks/list", json!({ "cursor": bad })).await;
        assert_eq!(m["error"]["code"], -32602, "{bad}: {m}");
    }
}

/// Polls `tasks/get` on the session until the task's status is `status`.
async fn until_status(who: &Sessions<'_>, k: usize, id: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let m = who.rpc(k, "tasks/get", json!({ "taskId": id })).await;
        if m["result"]["status"] == status {
            return m;
        }
        assert!(Instant::now() < deadline, "never {status}: {m}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_asked_on_one_instance_is_answered_through_the_others() {
    let redis = Redis::start();
    let instances: Vec<Instance> = (0..3).map(|_| spawn(&redis)).collect();
    let asks = json!({"tasks": {}, "elicitation": {}});
    let alice = Sessions::open(&instances, "alice", asks.clone()).await;
    let bob = Sessions::open(&instances, "bob", asks).await;

    // Started on A.
    let m = alice
        .rpc(
            0,
            "tools/call",
            json!({"name": "confirm_task", "arguments": {"amount_cents": 700}, "task": {"ttl": 60000}}),
        )
        .await;
    let id = m["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {m}"))
        .to_owned();
    // The question shows on B.
    until_status(&alice, 1, &id, "input_required").await;

    // tasks/result on C streams it, with the related-task _meta.
    let (c_addr, c_session) = &alice.on[2];
    let bearer = format!("Bearer {}", alice.token);
    let headers = [
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", c_session.as_str()),
        ("authorization", bearer.as_str()),
        ("connection", "close"),
    ];
    let body =
        json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/result", "params": {"taskId": id}});
    let mut stream = Streaming::open(*c_addr, "POST", &headers, Some(&body)).await;
    stream.until("elicitation/create").await;
    let question = stream
        .messages()
        .into_iter()
        .find(|m| m["method"] == "elicitation/create")
        .unwrap_or_else(|| panic!("no question in {}", stream.text));
    let question_id = format!("tasks:{id}:e0");
    assert_eq!(question["id"], question_id.as_str(), "{question}");
    assert_eq!(
        question["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str(),
        "{question}"
    );
    assert!(
        question["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Move 700 cents?")),
        "{question}"
    );

    // Bob gets no stream of alice's task (no question, no status): an unknown task.
    let theirs = bob.rpc(2, "tasks/result", json!({ "taskId": id })).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");

    // Bob's answer to alice's question is dropped: the task still waits.
    let accept = json!({"action": "accept", "content": {"confirm": true}});
    let decline = json!({"action": "accept", "content": {"confirm": false}});
    let (b_addr, b_bob) = &bob.on[1];
    let bobs = json!({"jsonrpc": "2.0", "id": question_id, "result": decline});
    legacy_post(*b_addr, Some(&bob.token), b_bob, &bobs).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    until_status(&alice, 0, &id, "input_required").await;

    // Alice's, POSTed on B, resumes the handler on A.
    let (b_addr, b_alice) = &alice.on[1];
    let hers = json!({"jsonrpc": "2.0", "id": question_id, "result": accept});
    let r = fusion_tests::raw_http::request(
        *b_addr,
        "POST",
        "/mcp",
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-session-id", b_alice.as_str()),
            ("authorization", bearer.as_str()),
        ],
        &hers.to_string(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.status, 202, "{r:?}");

    // C's stream: the status changes, then the result of the call.
    stream.read_to_end().await;
    let messages = stream.messages();
    let statuses: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/tasks/status")
        .map(|m| m["params"]["status"].as_str().unwrap_or_default())
        .collect();
    assert!(statuses.contains(&"completed"), "{}", stream.text);
    let answer = messages
        .iter()
        .find(|m| m["id"] == 9)
        .unwrap_or_else(|| panic!("no answer in {}", stream.text));
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let result: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(result, json!({"amount_cents": 700, "outcome": "moved"}));
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
}
