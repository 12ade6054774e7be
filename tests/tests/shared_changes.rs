//! Change notifications that reach every instance: three `billing-server serve --http`
//! processes sharing one real `redis-server` (`--redis-url`, the Redis change bus). A charge
//! on one instance (it tells `billing://invoices/{id}`'s subscribers) reaches a 2026-07-28
//! `subscriptions/listen` on another and a 2025 session's GET stream on a third; with Redis
//! stopped, the change stays on its instance and the others get the list-changed re-sync
//! once it is back; what anyone else publishes on the channel is checked, never delivered.

use std::net::SocketAddr;
use std::time::Duration;

use fusion_tests::raw_http::{self, Streaming};
use fusion_tests::raw_stdio::WAIT;
use fusion_tests::services::{Instance, Redis};
use serde_json::{Value, json};

const INVOICE: &str = "billing://invoices/inv_2026_0001";
const CHANNEL: &str = "fusion:changes";

/// A `billing-server serve --http` on a free port with the Redis change bus (and, Redis or
/// not, charges admitted: `--redis-on-failure open`).
fn spawn_billing(redis_url: &str, stateless: bool) -> Instance {
    let mut args = vec![
        "serve",
        "--http",
        "127.0.0.1:0",
        "--trust-proxy",
        "127.0.0.1",
        "--redis-url",
        redis_url,
        "--redis-timeout",
        "300ms",
        "--redis-on-failure",
        "open",
    ];
    if stateless {
        args.push("--stateless");
    }
    Instance::spawn(env!("CARGO_BIN_EXE_billing-server"), &args, &[])
}

/// A charge of one cent on `inv_2026_0001` at `addr` (a 2025 stateless call), from the
/// client `who` (its `X-Forwarded-For`: each has its own 3-a-minute bucket).
async fn charge(addr: SocketAddr, who: &str) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "billing_charge", "arguments": {"invoice_id": "inv_2026_0001", "amount_cents": 1}},
    })
    .to_string();
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
        ("x-forwarded-for", who),
    ];
    let r = raw_http::request(addr, "POST", "/mcp", &headers, &body)
        .await
        .unwrap_or_else(|e| panic!("charge: {e}"));
    let m = r.message();
    assert_eq!(
        m["result"]["structuredContent"]["charged"], true,
        "the charge went through: {m}"
    );
}

/// A 2026-07-28 `subscriptions/listen` on `addr` for `INVOICE` and every list, acknowledged.
async fn listen(addr: SocketAddr) -> Streaming {
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "subscriptions/listen"),
    ];
    let body = json!({
        "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            },
            "notifications": {
                "resourceSubscriptions": [INVOICE],
                "toolsListChanged": true,
                "promptsListChanged": true,
                "resourcesListChanged": true,
            },
        },
    });
    let mut listen = Streaming::open(addr, "POST", &headers, Some(&body)).await;
    listen.until("acknowledged").await;
    let ack = listen.messages();
    assert_eq!(
        ack[0]["params"]["notifications"]["resourceSubscriptions"],
        json!([INVOICE]),
        "{ack:?}"
    );
    listen
}

/// A 2025 session on the stateful `addr`: initialized, subscribed to `INVOICE`, its GET
/// stream open.
async fn session_get_stream(addr: SocketAddr) -> Streaming {
    let session = Streaming::initialize(addr).await;
    let headers = |close: bool| {
        let mut h = vec![
            ("mcp-session-id", session.clone()),
            ("mcp-protocol-version", "2025-11-25".to_owned()),
        ];
        if close {
            h.push(("connection", "close".to_owned()));
        }
        h
    };
    let owned = headers(true);
    let closing: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    Streaming::open(addr, "POST", &closing, Some(&initialized))
        .await
        .until("HTTP/1.1 202")
        .await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": INVOICE}});
    let mut sub = Streaming::open(addr, "POST", &closing, Some(&subscribe)).await;
    let answer = sub.until("\"result\"").await.to_owned();
    assert!(!answer.contains("\"error\""), "{answer}");
    let owned = headers(false);
    let open: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut get = Streaming::open(addr, "GET", &open, None).await;
    get.until("\r\n\r\n").await;
    assert!(get.text.starts_with("HTTP/1.1 200"), "{}", get.text);
    // rmcp attaches the stream to the session just after it answered the head.
    get.during(Duration::from_millis(300)).await;
    get
}

async fn redis_connection(redis: &Redis) -> redis::aio::MultiplexedConnection {
    redis::Client::open(redis.url.as_str())
        .unwrap_or_else(|e| panic!("{e}"))
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("connect to Redis: {e}"))
}

/// Waits until `n` connections are subscribed to the change channel.
async fn subscribed(redis: &Redis, n: i64) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut c = redis_connection(redis).await;
        let counts: Vec<(String, i64)> = redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(CHANNEL)
            .query_async(&mut c)
            .await
            .unwrap_or_else(|e| panic!("PUBSUB NUMSUB: {e}"));
        if counts.first().map(|(_, n)| *n) == Some(n) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not {n} subscribers within {WAIT:?}: {counts:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn updates(stream: &Streaming) -> usize {
    notified(stream)
        .iter()
        .filter(|m| *m == "notifications/resources/updated")
        .count()
}

#[tokio::test]
async fn a_charge_on_one_instance_reaches_a_listen_and_a_2025_session_on_the_others_once() {
    let redis = Redis::start();
    let a = spawn_billing(&redis.url, true);
    let b = spawn_billing(&redis.url, true);
    let c = spawn_billing(&redis.url, false);
    subscribed(&redis, 3).await;
    let mut on_a = listen(a.addr).await;
    let mut on_b = listen(b.addr).await;
    let mut on_c = session_get_stream(c.addr).await;

    charge(a.addr, "10.0.0.1").await;

    let expected = json!({
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}, "uri": INVOICE},
    });
    on_b.until("resources/updated").await;
    assert_eq!(on_b.messages()[1], expected, "{:?}", on_b.messages());
    on_c.until("resources/updated").await;
    let on_c_updates: Vec<Value> = on_c
        .messages()
        .into_iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .collect();
    assert_eq!(
        on_c_updates[0],
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": INVOICE}})
    );
    on_a.until("resources/updated").await;
    // Once each: A skips its own change coming back from Redis.
    for s in [&mut on_a, &mut on_b, &mut on_c] {
        s.during(Duration::from_millis(500)).await;
    }
    assert_eq!(notified(&on_a), ["notifications/resources/updated"]);
    assert_eq!(notified(&on_b), ["notifications/resources/updated"]);
    assert_eq!(updates(&on_c), 1, "{:?}", on_c.text);
}

#[tokio::test]
async fn while_redis_is_down_changes_stay_local_and_back_up_the_others_resync_and_hear_again() {
    let mut redis = Redis::start();
    let a = spawn_billing(&redis.url, true);
    let b = spawn_billing(&redis.url, true);
    subscribed(&redis, 2).await;
    let mut on_a = listen(a.addr).await;
    let mut on_b = listen(b.addr).await;

    redis.stop();
    for instance in [&a, &b] {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !instance.logged("lost the Redis subscription") {
            assert!(tokio::time::Instant::now() < deadline, "no warning logged");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    charge(a.addr, "10.0.0.2").await;
    on_a.until("resources/updated").await;
    on_b.during(Duration::from_secs(1)).await;
    assert_eq!(
        notified(&on_b),
        Vec::<String>::new(),
        "pub/sub keeps nothing: B misses what A changed while Redis was down"
    );

    redis.restart();
    // Back: B's clients are told to read their lists again.
    on_b.until("resources/list_changed").await;
    let mut resync = notified(&on_b);
    resync.sort();
    assert_eq!(
        resync,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed",
        ]
    );
    assert!(b.logged("subscribed to Redis again"));
    subscribed(&redis, 2).await;
    charge(a.addr, "10.0.0.3").await;
    on_b.until("resources/updated").await;
    assert_eq!(updates(&on_b), 1);
}

#[tokio::test]
async fn what_anyone_publishes_on_the_channel_is_checked_and_nothing_of_it_delivered() {
    let redis = Redis::start();
    let a = spawn_billing(&redis.url, true);
    subscribed(&redis, 1).await;
    let mut on_a = listen(a.addr).await;
    let mut c = redis_connection(&redis).await;
    let huge_uri = format!("billing://invoices/{}", "9".repeat(100_000));
    let hostile: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"\xff\xfe\x00 not json".to_vec(),
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[".to_vec(),
        json!({"from": "x", "change": {"kind": "reboot"}}).to_string().into_bytes(),
        json!({"from": "x", "change": {"kind": "resource_updated"}}).to_string().into_bytes(),
        json!({"from": "x", "change": {"kind": "resource_updated", "uri": 7}}).to_string().into_bytes(),
        json!({"from": "x", "change": {"kind": "resource_updated", "uri": huge_uri}}).to_string().into_bytes(),
        json!({"from": "x", "change": {"kind": "tools_list_changed"}, "pad": "a".repeat(4 << 20)})
            .to_string()
            .into_bytes(),
        json!({"change": {"kind": "tools_list_changed"}}).to_string().into_bytes(),
    ];
    for payload in &hostile {
        let _: i64 = redis::cmd("PUBLISH")
            .arg(CHANNEL)
            .arg(payload.as_slice())
            .query_async(&mut c)
            .await
            .unwrap_or_else(|e| panic!("PUBLISH: {e}"));
    }
    // Then one well-formed change from "another instance": it comes, alone.
    let _: i64 = redis::cmd("PUBLISH")
        .arg(CHANNEL)
        .arg(
            json!({"from": "another", "change": {"kind": "resource_updated", "uri": INVOICE}})
                .to_string(),
        )
        .query_async(&mut c)
        .await
        .unwrap_or_else(|e| panic!("PUBLISH: {e}"));
    on_a.until("resources/updated").await;
    on_a.during(Duration::from_millis(300)).await;
    assert_eq!(notified(&on_a), ["notifications/resources/updated"]);
    // Still serving, its own changes included.
    charge(a.addr, "10.0.0.4").await;
    on_a.during(Duration::from_millis(300)).await;
    assert_eq!(updates(&on_a), 2);
    subscribed(&redis, 1).await;
}

/// The methods of the notifications `stream` got so far, in order, without the
/// acknowledgment.
fn notified(stream: &Streaming) -> Vec<String> {
    stream
        .messages()
        .iter()
        .filter_map(|m| m["method"].as_str())
        .filter(|m| *m != "notifications/subscriptions/acknowledged")
        .map(str::to_owned)
        .collect()
}
