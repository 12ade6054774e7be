//! Change notifications from application code (`Notifier`), on the wire of each protocol
//! generation: raw JSON-RPC lines over an in-memory stdio connection and raw HTTP.
//!
//! - 2026-07-28 `subscriptions/listen`: the exact acknowledgment (the accepted subset) and
//!   notifications (each with `io.modelcontextprotocol/subscriptionId`), a resource update
//!   triggered by a tool call, nothing the filter did not ask for, a clean end on cancel,
//!   the bounds on open listens (per client, overall), a lagged listener, and the same over
//!   HTTP (the POST's SSE stream; the place is given back when the client goes away).
//! - 2025 sessions: `resources/subscribe` → `notifications/resources/updated` for that URI
//!   only, list-changed to every session, a lagged session; the GET stream of a stateful
//!   HTTP session; a stateless 2025 server advertises and accepts no subscription.

use std::time::Duration;

use fusion_runtime::context::ClientKey;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::{
    Context, PromptReply, ResourceContent, Server, ToolError, ToolInput, prompt, resource,
    tool_action,
};
use fusion_tests::raw_http::Streaming;
use fusion_tests::raw_stdio::{RawStdio, WAIT};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

/// A document's ID.
#[derive(Deserialize, ToolInput)]
struct Doc {
    /// The document, e.g. `a`.
    #[fusion(pattern = "^[a-z]{1,8}$")]
    id: String,
}

/// One document.
#[resource(template = "test://docs/{id}", name = "doc", mime = "text/plain")]
async fn doc(d: Doc) -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(format!("document {}", d.id)))
}

/// The index of every document.
#[resource(uri = "test://index", name = "index", mime = "text/plain")]
async fn index() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("a, b"))
}

/// Says hello.
#[prompt]
async fn hello() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("hello"))
}

/// Edits a document and tells the clients that subscribed to it.
#[tool_action(name = "docs.touch")]
async fn touch(input: Doc, cx: Context) -> Result<Value, ToolError> {
    let reached = cx
        .notifier()
        .resource_updated(format!("test://docs/{}", input.id));
    Ok(json!({ "listeners": reached }))
}

fn builder() -> fusion_runtime::ServerBuilder {
    Server::builder()
        .name("changes")
        .action::<TouchAction>()
        .resource::<DocResource>()
        .resource::<IndexResource>()
        .prompt::<HelloPrompt>()
}

fn server() -> Server {
    builder().build().unwrap_or_else(|e| panic!("{e}"))
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    })
}

fn listen_params(notifications: Value) -> Value {
    json!({ "_meta": meta(), "notifications": notifications })
}

fn touch_params(id: &str) -> Value {
    json!({ "_meta": meta(), "name": "docs_touch", "arguments": { "id": id } })
}

/// Waits until `check` holds (the listen tasks run beside the test).
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        if tokio::time::Instant::now() >= deadline {
            panic!("{what} did not happen in {WAIT:?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn connection() -> ClientKey {
    ClientKey::new("connection")
}

#[tokio::test]
async fn a_listen_is_acknowledged_then_gets_exactly_what_it_asked_for_until_cancelled() {
    let server = server();
    let notifier = server.notifier().clone();
    let mut raw = RawStdio::serve(server);
    raw.send(json!({
        "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": listen_params(json!({
            "toolsListChanged": true,
            "resourceSubscriptions": ["test://docs/a", "test://nowhere"],
        })),
    }))
    .await;
    // The accepted subset: the unknown URI left out.
    assert_eq!(
        raw.next().await,
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
                "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://docs/a"]},
            },
        })
    );
    eventually("the listen holds its place", || {
        notifier.open_listens(&connection()) == (1, 1)
    })
    .await;

    // A tool call changes the resource: the update arrives on the listen.
    let (before, answer) = raw.request(8, "tools/call", touch_params("a")).await;
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap_or_default(),
        json!({"listeners": 1}),
        "{answer}"
    );
    let mut seen = before;
    if seen.is_empty() {
        seen.push(raw.next().await);
    }
    assert_eq!(
        seen,
        [json!({
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 7}, "uri": "test://docs/a"},
        })]
    );

    // What the filter did not ask for does not come: another URI, the prompts list.
    let (before, _) = raw.request(9, "tools/call", touch_params("b")).await;
    assert_eq!(before, Vec::<Value>::new());
    notifier.prompts_list_changed();
    notifier.resources_list_changed();
    notifier.tools_list_changed();
    assert_eq!(
        raw.next().await,
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 7}},
        })
    );

    // Cancelled: nothing more, no response to the listen, its place given back.
    raw.send(json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "done"},
    }))
    .await;
    eventually("the cancelled listen gives its place back", || {
        notifier.open_listens(&connection()) == (0, 0)
    })
    .await;
    notifier.tools_list_changed();
    notifier.resource_updated("test://docs/a");
    assert_eq!(raw.maybe_next(Duration::from_millis(300)).await, None);
    // The connection still serves.
    let (_, answer) = raw
        .request(
            10,
            "resources/read",
            json!({"_meta": meta(), "uri": "test://docs/a"}),
        )
        .await;
    assert_eq!(answer["result"]["contents"][0]["text"], "document a");
}

#[tokio::test]
async fn listens_past_the_per_client_bound_are_refused_with_the_limit() {
    let server = builder()
        .listen_limits(2, 100)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let notifier = server.notifier().clone();
    let mut raw = RawStdio::serve(server);
    for id in [1, 2] {
        raw.send(json!({
            "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": listen_params(json!({"toolsListChanged": true})),
        }))
        .await;
        assert_eq!(
            raw.next().await["method"],
            "notifications/subscriptions/acknowledged"
        );
    }
    eventually("two listens open", || {
        notifier.open_listens(&connection()).0 == 2
    })
    .await;
    // The third: rmcp acknowledges before the handler runs, then the refusal ends it.
    let (before, answer) = raw
        .request(
            3,
            "subscriptions/listen",
            listen_params(json!({"toolsListChanged": true})),
        )
        .await;
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["data"],
        json!({"limit": 2, "scope": "client"})
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cancel one before opening another")),
        "{answer}"
    );
    assert_eq!(notifier.open_listens(&connection()), (2, 2));
    // The two open ones still get what they asked for.
    notifier.tools_list_changed();
    let ids: Vec<Value> = vec![raw.next().await, raw.next().await]
        .into_iter()
        .map(|m| m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone())
        .collect();
    assert!(
        ids.contains(&json!(1)) && ids.contains(&json!(2)),
        "{ids:?}"
    );
}

#[tokio::test]
async fn listens_past_the_server_bound_are_refused_for_every_client() {
    let server = builder()
        .listen_limits(10, 1)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut raw = RawStdio::serve(server.clone());
    raw.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": listen_params(json!({"toolsListChanged": true})),
    }))
    .await;
    let _ack = raw.next().await;
    let notifier = server.notifier().clone();
    eventually("one listen open", || {
        notifier.open_listens(&connection()).1 == 1
    })
    .await;
    let mut other = RawStdio::serve(server);
    let (_, answer) = other
        .request(
            2,
            "subscriptions/listen",
            listen_params(json!({"toolsListChanged": true})),
        )
        .await;
    assert_eq!(
        answer["error"]["data"],
        json!({"limit": 1, "scope": "server"})
    );
}

#[tokio::test]
async fn a_listen_that_falls_behind_gets_the_list_changed_it_accepted_and_its_uris_again() {
    let server = builder()
        .change_capacity(2)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let notifier = server.notifier().clone();
    let mut raw = RawStdio::serve(server);
    raw.send(json!({
        "jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
        "params": listen_params(json!({
            "resourcesListChanged": true,
            "resourceSubscriptions": ["test://docs/a", "test://index"],
        })),
    }))
    .await;
    let _ack = raw.next().await;
    eventually("the listen is open", || notifier.listeners() == 1).await;
    // A burst with no await between: the listener cannot keep up with a capacity of 2.
    for _ in 0..200 {
        notifier.resource_updated("test://docs/a");
    }
    let mut got = Vec::new();
    while let Some(m) = raw.maybe_next(Duration::from_millis(500)).await {
        got.push(m);
    }
    let methods: Vec<(&str, &str)> = got
        .iter()
        .map(|m| {
            (
                m["method"].as_str().unwrap_or("?"),
                m["params"]["uri"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        methods[..3],
        [
            ("notifications/resources/list_changed", ""),
            ("notifications/resources/updated", "test://docs/a"),
            ("notifications/resources/updated", "test://index"),
        ],
        "{got:?}"
    );
    // Then at most what the channel kept: never the whole burst.
    assert!(got.len() <= 3 + 2, "{} notifications: {got:?}", got.len());
    assert!(
        got.iter()
            .all(|m| m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 5),
        "{got:?}"
    );
}

#[tokio::test]
async fn a_2025_session_gets_updates_for_its_subscriptions_and_every_list_change() {
    for version in ["2025-06-18", "2025-11-25"] {
        let server = server();
        let notifier = server.notifier().clone();
        let mut raw = RawStdio::serve(server);
        let init = raw.initialize(version, json!({})).await;
        assert_eq!(
            init["result"]["capabilities"]["resources"],
            json!({"subscribe": true, "listChanged": true}),
            "{init}"
        );
        assert_eq!(
            init["result"]["capabilities"]["tools"],
            json!({"listChanged": true})
        );
        assert_eq!(
            init["result"]["capabilities"]["prompts"],
            json!({"listChanged": true})
        );
        eventually("the session forwards changes", || notifier.listeners() == 1).await;
        let (_, answer) = raw
            .request(1, "resources/subscribe", json!({"uri": "test://docs/a"}))
            .await;
        assert_eq!(answer["result"], json!({}), "{answer}");

        let (before, answer) = raw
            .request(
                2,
                "tools/call",
                json!({"name": "docs_touch", "arguments": {"id": "a"}}),
            )
            .await;
        assert!(answer["result"]["isError"] == false, "{answer}");
        let update = match before.into_iter().next() {
            Some(m) => m,
            None => raw.next().await,
        };
        assert_eq!(
            update,
            json!({
                "jsonrpc": "2.0",
                "method": "notifications/resources/updated",
                "params": {"uri": "test://docs/a"},
            }),
            "{version}"
        );
        // Not subscribed: nothing.
        let (before, _) = raw
            .request(
                3,
                "tools/call",
                json!({"name": "docs_touch", "arguments": {"id": "b"}}),
            )
            .await;
        assert_eq!(before, Vec::<Value>::new());
        // Lists: to every session, without asking.
        notifier.tools_list_changed();
        assert_eq!(
            raw.next().await,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        );
        notifier.prompts_list_changed();
        assert_eq!(
            raw.next().await["method"],
            "notifications/prompts/list_changed"
        );
        // Unsubscribed: nothing more for that URI.
        let (_, answer) = raw
            .request(4, "resources/unsubscribe", json!({"uri": "test://docs/a"}))
            .await;
        assert_eq!(answer["result"], json!({}));
        notifier.resource_updated("test://docs/a");
        assert_eq!(raw.maybe_next(Duration::from_millis(300)).await, None);
    }
}

#[tokio::test]
async fn a_2025_session_that_falls_behind_gets_every_list_changed_and_its_uris_again() {
    let server = builder()
        .change_capacity(2)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let notifier = server.notifier().clone();
    let mut raw = RawStdio::serve(server);
    raw.initialize("2025-11-25", json!({})).await;
    eventually("the session forwards changes", || notifier.listeners() == 1).await;
    let (_, _) = raw
        .request(1, "resources/subscribe", json!({"uri": "test://index"}))
        .await;
    for _ in 0..200 {
        notifier.resource_updated("test://index");
    }
    let mut got = Vec::new();
    while let Some(m) = raw.maybe_next(Duration::from_millis(500)).await {
        got.push(m["method"].as_str().unwrap_or("?").to_owned());
    }
    assert_eq!(
        got[..4],
        [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/updated",
        ],
        "{got:?}"
    );
    assert!(got.len() <= 4 + 2, "{got:?}");
}

#[tokio::test]
async fn a_closed_session_stops_listening() {
    let server = server();
    let notifier = server.notifier().clone();
    let raw = {
        let mut raw = RawStdio::serve(server);
        raw.initialize("2025-11-25", json!({})).await;
        raw
    };
    eventually("the session forwards changes", || notifier.listeners() == 1).await;
    drop(raw);
    eventually("the closed session's listener is gone", || {
        notifier.listeners() == 0
    })
    .await;
}

// ---- HTTP ----

async fn http(server: Server, stateless: bool) -> HttpServer {
    spawn_http(
        server,
        "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        HttpOptions::default().stateless(stateless),
    )
    .await
    .unwrap_or_else(|e| panic!("bind: {e}"))
}

#[tokio::test]
async fn a_listen_over_http_streams_on_its_post_and_gives_its_place_back_when_the_client_leaves() {
    for stateless in [true, false] {
        let server = server();
        let notifier = server.notifier().clone();
        let running = http(server, stateless).await;
        let addr = running.local_addr;
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ];
        let body = json!({
            "jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen",
            "params": listen_params(json!({"resourceSubscriptions": ["test://docs/a"]})),
        });
        let mut listen = Streaming::open(addr, "POST", &headers, Some(&body)).await;
        listen.until("acknowledged").await;
        eventually("the listen is open", || notifier.listeners() == 1).await;
        // A tool call on another request changes the resource.
        let call =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": touch_params("a")});
        let mut tool = Streaming::open(
            addr,
            "POST",
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "docs_touch"),
                ("connection", "close"),
            ],
            Some(&call),
        )
        .await;
        tool.until("listeners").await;
        listen.until("resources/updated").await;
        let messages = listen.messages();
        assert_eq!(
            messages,
            [
                json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {
                        "_meta": {"io.modelcontextprotocol/subscriptionId": "L1"},
                        "notifications": {"resourceSubscriptions": ["test://docs/a"]},
                    },
                }),
                json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}, "uri": "test://docs/a"},
                }),
            ],
            "stateless: {stateless}"
        );
        drop(listen);
        eventually("the place of a client that left is given back", || {
            notifier.listeners() == 0
        })
        .await;
        let _ = running.shutdown().await;
    }
}

#[tokio::test]
async fn a_server_shutting_down_ends_each_listen_with_its_closing_result() {
    // 2026-07-28, subscriptions: a server that tears a subscription down SHOULD answer the
    // `subscriptions/listen` request with a completion result before closing the stream —
    // what tells the client it ended cleanly, not by a dropped connection.
    for stateless in [true, false] {
        let running = http(server(), stateless).await;
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ];
        let body = json!({
            "jsonrpc": "2.0", "id": "L9", "method": "subscriptions/listen",
            "params": listen_params(json!({"toolsListChanged": true})),
        });
        let mut listen = Streaming::open(running.local_addr, "POST", &headers, Some(&body)).await;
        listen.until("acknowledged").await;
        let stopping = tokio::spawn(running.shutdown());
        listen.read_to_end().await;
        let messages = listen.messages();
        assert_eq!(
            messages.last(),
            Some(&json!({
                "jsonrpc": "2.0",
                "id": "L9",
                "result": {
                    "resultType": "complete",
                    "_meta": {
                        "io.modelcontextprotocol/subscriptionId": "L9",
                        "io.modelcontextprotocol/serverInfo": {"name": "changes", "version": "0.1.0"},
                    },
                },
            })),
            "stateless: {stateless}: {messages:?}"
        );
        let stopped = tokio::time::timeout(WAIT, stopping).await;
        assert!(
            matches!(stopped, Ok(Ok(Ok(())))),
            "the server stops once its listens are closed: {stopped:?}"
        );
    }
}

#[tokio::test]
async fn a_stateful_2025_session_gets_its_updates_on_the_get_stream() {
    let server = server();
    let notifier = server.notifier().clone();
    let running = http(server, false).await;
    let addr = running.local_addr;
    let session = Streaming::initialize(addr).await;
    let with_session = |extra: &[(&'static str, &'static str)]| -> Vec<(&'static str, String)> {
        let mut h = vec![
            ("mcp-session-id", session.clone()),
            ("mcp-protocol-version", "2025-11-25".to_owned()),
        ];
        h.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
        h
    };
    let owned = with_session(&[("connection", "close")]);
    let headers: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut ack = Streaming::open(addr, "POST", &headers, Some(&initialized)).await;
    ack.until("HTTP/1.1 202").await;
    eventually("the session forwards changes", || notifier.listeners() == 1).await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "test://docs/a"}});
    let mut sub = Streaming::open(addr, "POST", &headers, Some(&subscribe)).await;
    sub.until("\"result\"").await;

    let owned = with_session(&[]);
    let get_headers: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut get = Streaming::open(addr, "GET", &get_headers, None).await;
    get.until("\r\n\r\n").await;
    // The GET stream is open once rmcp answered its head; then the change comes on it.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        notifier.resource_updated("test://docs/a");
        let mut buf = [0u8; 4096];
        if let Ok(Ok(n)) =
            tokio::time::timeout(Duration::from_millis(200), get.stream.read(&mut buf)).await
        {
            get.text.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        if get.text.contains("resources/updated") || tokio::time::Instant::now() >= deadline {
            break;
        }
    }
    get.until("resources/updated").await;
    let updates: Vec<Value> = get
        .messages()
        .into_iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .collect();
    assert_eq!(
        updates[0],
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://docs/a"}})
    );
    drop(get);
    let _ = running.shutdown().await;
}

#[tokio::test]
async fn a_stateless_2025_server_advertises_and_accepts_no_subscription() {
    let server = server();
    let running = http(server, true).await;
    let addr = running.local_addr;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let mut post = Streaming::open(addr, "POST", &[("connection", "close")], Some(&init)).await;
    post.until("\"result\"").await;
    // Plain JSON: read to the end.
    let mut rest = String::new();
    let _ = tokio::time::timeout(WAIT, post.stream.read_to_string(&mut rest)).await;
    post.text.push_str(&rest);
    let body = post.text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let init: Value = serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {body}"));
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["resources"], json!({}), "{init}");
    assert_eq!(caps["prompts"], json!({}), "{init}");
    assert_eq!(caps["tools"], json!({}), "{init}");

    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "test://docs/a"}});
    let mut sub = Streaming::open(
        addr,
        "POST",
        &[
            ("mcp-protocol-version", "2025-11-25"),
            ("connection", "close"),
        ],
        Some(&subscribe),
    )
    .await;
    sub.until("\"error\"").await;
    let mut rest = String::new();
    let _ = tokio::time::timeout(WAIT, sub.stream.read_to_string(&mut rest)).await;
    sub.text.push_str(&rest);
    let body = sub.text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let answer: Value = serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("subscriptions/listen")),
        "{answer}"
    );
    let _ = running.shutdown().await;
}

#[tokio::test]
async fn a_uri_asked_for_twice_is_sent_once_and_at_most_the_bound_of_known_uris_is_taken() {
    let server = server();
    let notifier = server.notifier().clone();
    let mut raw = RawStdio::serve(server);
    let letters = |i: usize| -> String {
        [i / 676, i / 26 % 26, i % 26]
            .iter()
            .map(|&d| char::from(b'a' + d as u8))
            .collect()
    };
    let mut uris: Vec<String> = vec!["test://docs/a".into(); 3];
    uris.push("test://nowhere".into());
    uris.extend((1..=300).map(|i| format!("test://docs/b{}", letters(i))));
    uris.push("test://index".into());
    raw.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": listen_params(json!({ "resourceSubscriptions": uris })),
    }))
    .await;
    let ack = raw.next().await;
    let acked: Vec<&str> = ack["params"]["notifications"]["resourceSubscriptions"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // rmcp echoes the request's duplicates of an accepted URI; the unknown one and every
    // known one past MAX_SUBSCRIPTIONS distinct URIs are left out.
    let max = fusion_runtime::mcp::MAX_SUBSCRIPTIONS;
    assert_eq!(acked.len(), 2 + max, "{ack}");
    assert_eq!(acked[..3], ["test://docs/a"; 3]);
    assert!(!acked.contains(&"test://nowhere") && !acked.contains(&"test://index"));
    eventually("the listen is open", || notifier.listeners() == 1).await;
    notifier.resource_updated("test://index");
    notifier.resource_updated("test://docs/a");
    notifier.resource_updated(format!("test://docs/b{}", letters(max - 1)));
    notifier.resource_updated(format!("test://docs/b{}", letters(max)));
    assert_eq!(raw.next().await["params"]["uri"], "test://docs/a");
    assert_eq!(
        raw.next().await["params"]["uri"],
        format!("test://docs/b{}", letters(max - 1))
    );
    assert_eq!(raw.maybe_next(Duration::from_millis(300)).await, None);
}

#[tokio::test]
async fn billing_refund_tells_a_listen_of_the_invoice_only_once_money_moved() {
    let server = examples::billing::server().unwrap_or_else(|e| panic!("{e}"));
    let notifier = server.notifier().clone();
    let mut raw = RawStdio::serve(server);
    raw.send(json!({
        "jsonrpc": "2.0", "id": "watch", "method": "subscriptions/listen",
        "params": listen_params(json!({"resourceSubscriptions": ["billing://invoices/inv_2026_0002"]})),
    }))
    .await;
    let ack = raw.next().await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["billing://invoices/inv_2026_0002"]})
    );
    eventually("the listen is open", || notifier.listeners() == 1).await;
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let call = json!({
        "_meta": meta,
        "name": "billing_refund",
        "arguments": {"invoice_id": "inv_2026_0002", "amount_cents": 500},
    });
    // Round one asks for the confirmation: nothing moved, nothing said.
    let (before, first) = raw.request(1, "tools/call", call.clone()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(before, Vec::<Value>::new());
    let mut retry = call;
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"e0": {"action": "accept", "content": {"invoice_id": "inv_2026_0002", "reason": "fraud"}}});
    let (mut seen, done) = raw.request(2, "tools/call", retry).await;
    assert_eq!(
        done["result"]["structuredContent"]["amount_cents"], 500,
        "{done}"
    );
    if seen.is_empty() {
        seen.push(raw.next().await);
    }
    assert_eq!(
        seen,
        [json!({
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": "watch"},
                "uri": "billing://invoices/inv_2026_0002",
            },
        })]
    );
}

/// The Python SDK caught this one over stdio: it calls a tool the moment the acknowledgment
/// arrives. Two worker threads give the race a chance here too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_sent_right_after_the_acknowledgment_is_not_missed() {
    for round in 0..50 {
        let server = server();
        let notifier = server.notifier().clone();
        let mut raw = RawStdio::serve(server);
        raw.send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
            "params": listen_params(json!({"toolsListChanged": true})),
        }))
        .await;
        let ack = raw.next().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        // No waiting for the handler: the listener was taken before the acknowledgment.
        notifier.tools_list_changed();
        assert_eq!(
            raw.next().await["method"],
            "notifications/tools/list_changed",
            "round {round}"
        );
    }
}

#[tokio::test]
async fn a_listen_whose_filter_cannot_be_read_is_invalid_params() {
    let mut raw = RawStdio::serve(server());
    let (before, answer) = raw
        .request(
            1,
            "subscriptions/listen",
            json!({"_meta": meta(), "notifications": {"resourceSubscriptions": "test://index"}}),
        )
        .await;
    assert_eq!(before, Vec::<Value>::new());
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

/// Not a change notification, but the same resources: per-resource cache hints on a
/// 2026-07-28 read (by URI or by template), the default for the others, none for 2025.
#[tokio::test]
async fn reads_carry_the_builders_per_resource_cache_hints() {
    use fusion_runtime::server::CacheScope;
    let server = builder()
        .resource_cache(
            "test://docs/{id}",
            Duration::from_secs(5),
            CacheScope::Public,
        )
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut raw = RawStdio::serve(server);
    let (_, doc) = raw
        .request(
            1,
            "resources/read",
            json!({"_meta": meta(), "uri": "test://docs/a"}),
        )
        .await;
    assert_eq!(
        (&doc["result"]["ttlMs"], &doc["result"]["cacheScope"]),
        (&json!(5000), &json!("public")),
        "{doc}"
    );
    let (_, index) = raw
        .request(
            2,
            "resources/read",
            json!({"_meta": meta(), "uri": "test://index"}),
        )
        .await;
    assert_eq!(
        (&index["result"]["ttlMs"], &index["result"]["cacheScope"]),
        (&json!(0), &json!("private")),
        "{index}"
    );
    let mut legacy = RawStdio::serve(
        builder()
            .read_cache(Duration::from_secs(9), CacheScope::Public)
            .build()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let (_, index) = legacy
        .request(
            3,
            "resources/read",
            json!({"_meta": meta(), "uri": "test://index"}),
        )
        .await;
    assert_eq!(index["result"]["ttlMs"], 9000, "{index}");
    legacy.initialize("2025-11-25", json!({})).await;
    let (_, old) = legacy
        .request(4, "resources/read", json!({"uri": "test://index"}))
        .await;
    assert!(old["result"].get("ttlMs").is_none(), "{old}");
    let unknown = builder()
        .resource_cache("test://nothing", Duration::from_secs(1), CacheScope::Public)
        .build();
    assert!(matches!(
        unknown,
        Err(fusion_runtime::server::BuildError::ResourceCache(r)) if r == "test://nothing"
    ));
}
