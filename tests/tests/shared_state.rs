//! One-time state shared by every instance through Redis (issue 29): three
//! `billing-server serve --http --stateless --redis-url` processes behind a real nginx with
//! one real Redis — a confirmation answered on one instance is never run again on another,
//! a delegation token accepted by one is refused by the others, and while Redis is down a
//! confirmation fails closed (nothing runs) and runs once when it is back. Money is counted
//! on every instance (each keeps its own invoices).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fusion_runtime::Server;
use fusion_runtime::auth::{DelegationKey, DelegationVerifier};
use fusion_runtime::mcp::{HttpOptions, spawn_http};
use fusion_runtime::store::RedisOnce;
use fusion_tests::mrtr::{accept, first_round, paid, post, retry};
use fusion_tests::raw_http;
use fusion_tests::services::{Instance, Nginx, Redis, free_port, mint, now, stateless_instance};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};

const SECRET: &str = "shared-state-secret-of-32-bytes-hs256";
const ISSUER: &str = "https://auth.example.com";
const STATE_KEY: &str = "one request-state key for every instance, 32+ bytes";

fn spawn_billing(redis_url: &str, resource: &str) -> Instance {
    stateless_instance(
        env!("CARGO_BIN_EXE_billing-server"),
        redis_url,
        resource,
        ISSUER,
        &[
            ("FUSION_AUTH_HS256_SECRET", SECRET),
            ("FUSION_REQUEST_STATE_KEY", STATE_KEY),
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

/// What was paid on inv_2026_0002, all instances together.
async fn paid_everywhere(instances: &[Instance], token: &str) -> u64 {
    let mut total = 0;
    for i in instances {
        total += paid(i.addr, Some(token)).await;
    }
    total
}

fn result_type(m: &Value) -> &str {
    m["result"]["resultType"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_answered_on_one_instance_is_never_run_on_another() {
    let mut redis = Redis::start();
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let instances: Vec<Instance> = (0..3)
        .map(|_| spawn_billing(&redis.url, &resource))
        .collect();
    let upstreams: Vec<SocketAddr> = instances.iter().map(|i| i.addr).collect();
    let nginx = Nginx::start(&upstreams, port);
    let alice = token(&resource, "alice");
    let before = paid_everywhere(&instances, &alice).await;

    // Asked through nginx, answered on A: one refund.
    let state = first_round(nginx.addr, Some(&alice)).await;
    let answered = retry(json!(state), accept());
    let m = post(instances[0].addr, Some(&alice), None, true, &answered)
        .await
        .message();
    assert_eq!(m["result"]["structuredContent"]["amount_cents"], 500, "{m}");
    assert_eq!(paid_everywhere(&instances, &alice).await, before - 500);

    // The same answered state on B, on C, and three times through nginx: asked afresh.
    let mut targets = vec![instances[1].addr, instances[2].addr];
    targets.extend([nginx.addr; 3]);
    for addr in targets {
        let m = post(addr, Some(&alice), None, true, &answered)
            .await
            .message();
        assert_eq!(result_type(&m), "input_required", "{addr}: {m}");
    }
    assert_eq!(paid_everywhere(&instances, &alice).await, before - 500);

    // Redis stops: an answered confirmation cannot be checked, so it does not run.
    let state = first_round(instances[0].addr, Some(&alice)).await;
    let answered = retry(json!(state), accept());
    redis.stop();
    let m = post(instances[1].addr, Some(&alice), None, true, &answered)
        .await
        .message();
    let text = m["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(m["result"]["isError"], true, "{m}");
    assert!(text.contains("code=\"SERVER_BUSY\""), "{text}");
    assert!(text.contains("could not be checked"), "{text}");
    assert!(
        text.contains("<retry_after>5 seconds</retry_after>"),
        "{text}"
    );
    assert_eq!(paid_everywhere(&instances, &alice).await, before - 500);

    // Redis is back (empty): the same retry runs once, then never again.
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(20);
    let m = loop {
        let m = post(instances[2].addr, Some(&alice), None, true, &answered)
            .await
            .message();
        if !m.to_string().contains("SERVER_BUSY") {
            break m;
        }
        assert!(Instant::now() < deadline, "Redis did not come back: {m}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(m["result"]["structuredContent"]["amount_cents"], 500, "{m}");
    for addr in [instances[0].addr, instances[1].addr, nginx.addr] {
        let m = post(addr, Some(&alice), None, true, &answered)
            .await
            .message();
        assert_eq!(result_type(&m), "input_required", "{addr}: {m}");
    }
    assert_eq!(paid_everywhere(&instances, &alice).await, before - 1000);
    drop(nginx);
}

/// A billing server that takes only delegated calls, its replay store in Redis.
async fn delegated(redis_url: &str, key: &DelegationKey) -> fusion_runtime::mcp::HttpServer {
    let store = RedisOnce::new(redis_url)
        .unwrap_or_else(|e| panic!("{e}"))
        .timeout(Duration::from_millis(300));
    let verifier = DelegationVerifier::new(key.clone(), "billing").replay_store(Arc::new(store));
    let server: Server = examples::billing::builder()
        .middleware(verifier.middleware())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let options = HttpOptions::default().stateless(true);
    spawn_http(server, SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

async fn delegated_call(addr: SocketAddr, id: u64, token: &str) -> String {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "billing_list_invoices", "arguments": {},
                   "_meta": {"dev.fusion/delegation": token}},
    });
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let r = raw_http::request(addr, "POST", "/mcp", &headers, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    r.message()["result"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegation_accepted_by_one_instance_is_refused_by_the_others() {
    let mut redis = Redis::start();
    let key = DelegationKey::new("a delegation key shared by gateway and upstreams")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut servers = Vec::new();
    for _ in 0..3 {
        servers.push(delegated(&redis.url, &key).await);
    }
    let upstreams: Vec<SocketAddr> = servers.iter().map(|s| s.local_addr).collect();
    let nginx = Nginx::start(&upstreams, free_port());
    let mint = || {
        key.mint(
            "triage",
            "user-7",
            "billing",
            Duration::from_secs(30),
            json!({}),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };

    // One token, sent through nginx to each instance in turn: accepted once.
    let token = mint();
    let answers: Vec<String> = futures_answers(nginx.addr, &token, 3).await;
    let accepted = answers
        .iter()
        .filter(|a| a.contains("inv_2026_0001"))
        .count();
    let replayed = answers
        .iter()
        .filter(|a| a.contains("already used"))
        .count();
    assert_eq!((accepted, replayed), (1, 2), "{answers:?}");
    // Sent to each instance directly: already used everywhere.
    for s in &upstreams {
        assert!(delegated_call(*s, 9, &token).await.contains("already used"));
    }
    // A fresh token works on any instance.
    assert!(
        delegated_call(upstreams[2], 10, &mint())
            .await
            .contains("inv_2026_0001")
    );

    // Redis down: a new token is refused (not run unchecked), then accepted once Redis is back.
    let token = mint();
    redis.stop();
    let down = delegated_call(upstreams[0], 11, &token).await;
    assert!(
        down.contains("SERVER_BUSY") && down.contains("could not be checked"),
        "{down}"
    );
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let a = delegated_call(upstreams[1], 12, &token).await;
        if !a.contains("SERVER_BUSY") {
            assert!(a.contains("inv_2026_0001"), "{a}");
            break;
        }
        assert!(Instant::now() < deadline, "Redis did not come back: {a}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        delegated_call(upstreams[2], 13, &token)
            .await
            .contains("already used")
    );
    drop(nginx);
    for s in servers {
        s.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

/// `n` calls with `token` through `addr`, one after another.
async fn futures_answers(addr: SocketAddr, token: &str, n: u64) -> Vec<String> {
    let mut out = Vec::new();
    for id in 0..n {
        out.push(delegated_call(addr, id, token).await);
    }
    out
}
