//! `/healthz`, `/readyz` and the drain on SIGTERM, on real `billing-server` processes with a
//! real Redis and a real nginx.
//!
//! nginx open source has no active health checks, so it stops routing to a draining instance
//! passively: the instance closes its listener, connecting fails, and `proxy_next_upstream
//! error` sends the request to the next instance (and `max_fails=1` keeps it off). A refused
//! connect is retried even for a POST; `non_idempotent` is set as well, for the one race a
//! closed listener leaves: a connection the kernel had accepted into the backlog but the
//! server never read is reset, after nginx sent its request. The server never saw that
//! request, so sending it elsewhere is safe; a draining instance never answers a request it
//! read with an error.

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use fusion_tests::raw_http;
use fusion_tests::services::{Instance, Nginx, Redis, free_port, mint, now, stateless_instance};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};

const SECRET: &str = "e2e-secret-of-at-least-32-bytes-for-hs256";
const ISSUER: &str = "https://auth.example.com";

fn spawn_billing(redis_url: &str, resource: &str) -> Instance {
    stateless_instance(
        env!("CARGO_BIN_EXE_billing-server"),
        redis_url,
        resource,
        ISSUER,
        &[("FUSION_AUTH_HS256_SECRET", SECRET)],
    )
}

fn token(resource: &str) -> String {
    let key = EncodingKey::from_secret(SECRET.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    mint(
        Algorithm::HS256,
        &key,
        &json!({"sub": "ops", "aud": resource, "iss": ISSUER, "exp": now() + 600}),
    )
}

async fn get(addr: SocketAddr, path: &str) -> raw_http::RawResponse {
    raw_http::request(addr, "GET", path, &[], "")
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// A tool call's structured result, asserting a 200 with a result (not an error).
async fn call(addr: SocketAddr, token: &str, id: u64, tool: &str, args: Value) -> Value {
    let r = raw_http::call_tool(addr, "/mcp", Some(token), id, tool, args)
        .await
        .unwrap_or_else(|e| panic!("call {id} ({tool}): {e}"));
    assert_eq!(r.status, 200, "call {id} ({tool}): {r:?}");
    let m = r.message();
    assert_eq!(m["id"], json!(id), "call {id}: {m}");
    assert_eq!(m["result"]["isError"], json!(false), "call {id}: {m}");
    m["result"].clone()
}

#[tokio::test]
async fn healthz_and_readyz_follow_the_process_and_its_redis() {
    let mut redis = Redis::start();
    let resource = format!("http://127.0.0.1:{}/mcp", free_port());
    let instance = spawn_billing(&redis.url, &resource);

    // No token, outside `/mcp`: the probes need none (the MCP path does).
    let health = get(instance.addr, "/healthz").await;
    assert_eq!(
        (health.status, health.body.trim()),
        (200, "ok"),
        "{health:?}"
    );
    let ready = get(instance.addr, "/readyz").await;
    assert_eq!(
        (ready.status, ready.body.trim()),
        (200, "ready"),
        "{ready:?}"
    );

    // Redis down: not ready, with the reason, once the cached result (1 s) is stale.
    redis.stop();
    let start = Instant::now();
    let down = loop {
        let r = get(instance.addr, "/readyz").await;
        if r.status != 200 || start.elapsed() > Duration::from_secs(10) {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(down.status, 503, "{down:?}");
    assert!(down.body.starts_with("redis: "), "{down:?}");
    assert_eq!(down.body.trim().lines().count(), 1, "{down:?}");
    // Alive all the same: liveness does not depend on Redis.
    assert_eq!(get(instance.addr, "/healthz").await.status, 200);

    // Redis back: ready again.
    redis.restart();
    let start = Instant::now();
    let up = loop {
        let r = get(instance.addr, "/readyz").await;
        if r.status == 200 || start.elapsed() > Duration::from_secs(10) {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!((up.status, up.body.trim()), (200, "ready"), "{up:?}");
}

#[tokio::test]
async fn sigterm_drains_one_of_three_behind_nginx_without_a_failed_request() {
    let redis = Redis::start();
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let mut instances: Vec<Instance> = (0..3)
        .map(|_| spawn_billing(&redis.url, &resource))
        .collect();
    let upstreams: Vec<SocketAddr> = instances.iter().map(|i| i.addr).collect();
    let nginx = Nginx::start_with(&upstreams, port, "error timeout http_503 non_idempotent");
    let token = token(&resource);

    // Load: 4 clients, 40 calls each, through nginx.
    let mut load = Vec::new();
    for client in 0..4u64 {
        let (addr, token) = (nginx.addr, token.clone());
        load.push(tokio::spawn(async move {
            for i in 0..40u64 {
                let id = client * 1000 + i;
                call(addr, &token, id, "billing_list_invoices", json!({})).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }

    // A slow call in flight on the instance about to drain, sent to it directly.
    let victim = instances.remove(1);
    let (addr, t) = (victim.addr, token.clone());
    let slow = tokio::spawn(async move {
        call(
            addr,
            &t,
            1,
            "billing_reconcile",
            json!({"duration_ms": 1500}),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let status = Command::new("kill")
        .args(["-TERM", &victim.child.id().to_string()])
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(status.success());
    let termed = Instant::now();

    // Draining: new connections are refused at once (so nginx moves on), while the slow
    // call is still running.
    let mut refused = false;
    while termed.elapsed() < Duration::from_secs(1) {
        if tokio::net::TcpStream::connect(victim.addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the draining instance still accepts connections");
    assert!(!slow.is_finished(), "the slow call ended before the check");

    // The call in flight finishes, then the process exits 0 within the grace (10 s).
    let result = slow.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(result.to_string().contains("1500"), "{result}");
    let mut victim = victim;
    let exit = loop {
        if let Some(exit) = victim
            .child
            .try_wait()
            .unwrap_or_else(|e| panic!("wait: {e}"))
        {
            break exit;
        }
        assert!(
            termed.elapsed() < Duration::from_secs(10),
            "still running 10 s after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(exit.success(), "exit after SIGTERM: {exit:?}");

    // Every call through nginx got its answer.
    for task in load {
        task.await.unwrap_or_else(|e| panic!("{e}"));
    }
    drop(nginx);
}

#[tokio::test]
async fn the_drain_grace_bounds_a_call_that_outlasts_it() {
    let redis = Redis::start();
    let resource = format!("http://127.0.0.1:{}/mcp", free_port());
    let instance = Instance::spawn(
        env!("CARGO_BIN_EXE_billing-server"),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--redis-url",
            &redis.url,
            "--auth-resource",
            &resource,
            "--auth-issuer",
            ISSUER,
            "--drain-grace",
            "500ms",
        ],
        &[("FUSION_AUTH_HS256_SECRET", SECRET)],
    );
    let (addr, t) = (instance.addr, token(&resource));
    let slow = tokio::spawn(async move {
        raw_http::call_tool(
            addr,
            "/mcp",
            Some(&t),
            1,
            "billing_reconcile",
            json!({"duration_ms": 5000}),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let status = Command::new("kill")
        .args(["-TERM", &instance.child.id().to_string()])
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(status.success());
    let termed = Instant::now();
    let mut instance = instance;
    let exit = loop {
        if let Some(exit) = instance
            .child
            .try_wait()
            .unwrap_or_else(|e| panic!("wait: {e}"))
        {
            break exit;
        }
        assert!(
            termed.elapsed() < Duration::from_secs(3),
            "still running 3 s after SIGTERM with a 500 ms grace"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let took = termed.elapsed();
    assert!(exit.success(), "exit after SIGTERM: {exit:?}");
    assert!(took >= Duration::from_millis(450), "exited after {took:?}");
    // The call was cut at the grace, not answered as if it had run.
    let cut = slow.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        cut.as_ref().map_or(true, |r| !r.body.contains("took_ms")),
        "{cut:?}"
    );
}
