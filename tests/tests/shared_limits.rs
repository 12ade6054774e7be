//! Rate limits that hold across instances: the Redis store (a real `redis-server` this test
//! starts), its failure modes, and three `billing serve --http --stateless` processes behind
//! a real nginx (round robin) sharing one Redis.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fusion_runtime::guard::{OnStoreFailure, RateLimit, Verdict};
use fusion_runtime::server::RequestScope;
use fusion_runtime::store::RedisStore;
use fusion_runtime::{Principal, Server};
use fusion_tests::raw_http;
use fusion_tests::services::{Instance, Nginx, Redis, free_port, mint, now, stateless_instance};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};

const SECRET: &str = "e2e-secret-of-at-least-32-bytes-for-hs256";
const ISSUER: &str = "https://auth.example.com";

fn charge_args() -> serde_json::Map<String, Value> {
    json!({"invoice_id": "inv_2026_0001", "amount_cents": 1})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn billing_with(store: RedisStore, on_failure: OnStoreFailure) -> Server {
    examples::billing::builder()
        .rate_limit_store(store, on_failure)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `RATE_LIMITED` and its `retry_after` in seconds, or `None` for an admitted call.
fn limited(text: &str) -> Option<u64> {
    if !text.contains("code=\"RATE_LIMITED\"") {
        return None;
    }
    let secs = text
        .split("<retry_after>")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok());
    Some(secs.unwrap_or(0))
}

async fn charge(server: &Server, who: &str) -> String {
    let scope = RequestScope::detached().with_principal(Principal::new(who));
    let r = server
        .call("billing_charge", Some(charge_args()), scope)
        .await;
    r.content
        .iter()
        .filter_map(|c| match c {
            fusion_runtime::Content::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn two_servers_share_one_bucket_in_redis_and_the_wait_counts_down() {
    let redis = Redis::start();
    let prefix = format!("t{}", free_port());
    let store = || {
        RedisStore::new(&redis.url)
            .unwrap_or_else(|e| panic!("{e}"))
            .prefix(prefix.clone())
    };
    let a = billing_with(store(), OnStoreFailure::Closed);
    let b = billing_with(store(), OnStoreFailure::Closed);
    let mut admitted = 0;
    let mut waits = Vec::new();
    for i in 0..10 {
        let text = charge(if i % 2 == 0 { &a } else { &b }, "alice").await;
        match limited(&text) {
            None => admitted += 1,
            Some(w) => waits.push(w),
        }
    }
    assert_eq!(admitted, 3, "billing.charge allows 3 a minute per client");
    assert!(waits.iter().all(|w| (1..=20).contains(w)), "{waits:?}");
    // Another subject has its own bucket.
    assert!(limited(&charge(&a, "bob").await).is_none());
    // The store's own wait counts down between two refused checks.
    let limit = RateLimit::per_minute(3).per_client();
    let s = store();
    let first = s.check("billing.charge", "sub:alice", &limit).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let second = s.check("billing.charge", "sub:alice", &limit).await;
    match (first, second) {
        (Ok(Verdict::Wait(w1)), Ok(Verdict::Wait(w2))) => {
            assert!(w1 > w2 + Duration::from_millis(900), "{w1:?} then {w2:?}");
        }
        other => panic!("expected two waits, got {other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_redis_fails_closed_or_open_as_configured_and_never_hangs() {
    let nobody = format!("redis://127.0.0.1:{}/0", free_port());
    let store = || {
        RedisStore::new(&nobody)
            .unwrap_or_else(|e| panic!("{e}"))
            .timeout(Duration::from_millis(300))
    };
    let closed = billing_with(store(), OnStoreFailure::Closed);
    let started = Instant::now();
    let text = charge(&closed, "carol").await;
    assert!(started.elapsed() < Duration::from_secs(3), "bounded");
    assert_eq!(limited(&text), Some(5), "{text}");
    assert!(text.contains("could not be checked"), "{text}");
    assert!(text.contains("limitStore"), "{text}");
    let open = billing_with(store(), OnStoreFailure::Open);
    for _ in 0..5 {
        assert_eq!(limited(&charge(&open, "carol").await), None);
    }
}

#[tokio::test]
async fn a_redis_that_never_answers_is_cut_off_at_the_timeout() {
    // Accepts connections, reads, never writes.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let store = RedisStore::new(&format!("redis://{addr}/0"))
        .unwrap_or_else(|e| panic!("{e}"))
        .timeout(Duration::from_millis(300));
    let server = billing_with(store, OnStoreFailure::Closed);
    for _ in 0..3 {
        let started = Instant::now();
        let text = charge(&server, "erin").await;
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "took {took:?}");
        assert!(text.contains("limitStore"), "{text}");
    }
}

fn spawn_billing(redis_url: &str, resource: &str) -> Instance {
    stateless_instance(
        env!("CARGO_BIN_EXE_billing-server"),
        redis_url,
        resource,
        ISSUER,
        &[("FUSION_AUTH_HS256_SECRET", SECRET)],
    )
}

struct Client {
    nginx: SocketAddr,
    token: String,
    next_id: u64,
}

/// What one call got: admitted, or `RATE_LIMITED` with its wait (and whether the limit could
/// not be checked).
#[derive(Debug, PartialEq)]
enum Answer {
    Admitted,
    Limited(u64),
    Unchecked,
}

impl Client {
    fn new(nginx: SocketAddr, resource: &str, who: &str) -> Client {
        let key = EncodingKey::from_secret(SECRET.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let token = mint(
            Algorithm::HS256,
            &key,
            &json!({"sub": who, "aud": resource, "iss": ISSUER, "exp": now() + 600}),
        );
        Client {
            nginx,
            token,
            next_id: 1,
        }
    }

    async fn charge(&mut self) -> Answer {
        let id = self.next_id;
        self.next_id += 1;
        let r = raw_http::call_tool(
            self.nginx,
            "/mcp",
            Some(&self.token),
            id,
            "billing_charge",
            Value::Object(charge_args()),
        )
        .await
        .unwrap_or_else(|e| panic!("call {id}: {e}"));
        assert_eq!(r.status, 200, "call {id}: {r:?}");
        let m = r.message();
        assert_eq!(m["id"], json!(id), "each call gets its own answer: {m}");
        let text = m["result"]["content"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        if text.contains("limitStore") {
            return Answer::Unchecked;
        }
        match limited(&text) {
            None => Answer::Admitted,
            Some(w) => Answer::Limited(w),
        }
    }

    async fn run(&mut self, calls: usize) -> Vec<Answer> {
        let mut out = Vec::new();
        for _ in 0..calls {
            out.push(self.charge().await);
        }
        out
    }
}

fn admitted(answers: &[Answer]) -> usize {
    answers.iter().filter(|a| **a == Answer::Admitted).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_behind_nginx_share_one_redis() {
    let mut redis = Redis::start();
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let mut instances: Vec<Instance> = (0..3)
        .map(|_| spawn_billing(&redis.url, &resource))
        .collect();
    let upstreams: Vec<SocketAddr> = instances.iter().map(|i| i.addr).collect();
    let nginx = Nginx::start(&upstreams, port);

    // 60 calls of one subject through round robin: exactly the limit (3 a minute) passes.
    let mut alice = Client::new(nginx.addr, &resource, "alice");
    let answers = alice.run(60).await;
    assert_eq!(admitted(&answers), 3, "{answers:?}");
    let waits: Vec<u64> = answers
        .iter()
        .filter_map(|a| match a {
            Answer::Limited(w) => Some(*w),
            _ => None,
        })
        .collect();
    assert_eq!(waits.len(), 57, "{answers:?}");
    assert!(
        waits.windows(2).all(|w| w[0] >= w[1]),
        "never up: {waits:?}"
    );
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let Answer::Limited(later) = alice.charge().await else {
        panic!("still limited")
    };
    assert!(
        later < waits[0],
        "the wait counts down: {} then {later}",
        waits[0]
    );

    // Another subject has its own bucket.
    let mut bob = Client::new(nginx.addr, &resource, "bob");
    assert_eq!(admitted(&bob.run(6).await), 3);

    // One instance dies mid-run: nginx moves on, every call gets one answer, the limit holds.
    let mut carol = Client::new(nginx.addr, &resource, "carol");
    let mut answers = carol.run(2).await;
    drop(instances.remove(1));
    answers.extend(carol.run(20).await);
    assert_eq!(answers.len(), 22);
    assert_eq!(admitted(&answers), 3, "{answers:?}");

    // Redis restarts mid-run: while it is down the calls fail closed (the default); once it
    // is back (empty) the limit holds again.
    let mut dave = Client::new(nginx.addr, &resource, "dave");
    assert_eq!(admitted(&dave.run(2).await), 2);
    redis.stop();
    let down = dave.run(4).await;
    assert!(down.iter().all(|a| *a == Answer::Unchecked), "{down:?}");
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut back = Vec::new();
    while back.len() < 10 {
        let a = dave.charge().await;
        if a == Answer::Unchecked {
            assert!(Instant::now() < deadline, "Redis did not come back");
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        back.push(a);
    }
    assert_eq!(admitted(&back), 3, "{back:?}");
    assert!(matches!(back[9], Answer::Limited(1..)), "{back:?}");
    drop(nginx);
}

/// The Redis backend attached as one bundle (`ServerBuilder::stores`), as `serve --redis-url`
/// attaches it: two servers share the rate limit's bucket, and each keeps its one-time ids
/// and tasks in Redis too.
#[tokio::test]
async fn one_redis_bundle_attaches_every_store() {
    let redis = Redis::start();
    let backend = fusion_runtime::store::Redis::new(redis.url.clone())
        .prefix(format!("t{}", free_port()))
        .timeout(Duration::from_secs(2));
    let server = || {
        let stores = backend.stores().unwrap_or_else(|e| panic!("{e}"));
        examples::billing::builder()
            .stores(stores, OnStoreFailure::Closed)
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (a, b) = (server(), server());
    let mut admitted = 0;
    for i in 0..6 {
        if limited(&charge(if i % 2 == 0 { &a } else { &b }, "carol").await).is_none() {
            admitted += 1;
        }
    }
    assert_eq!(
        admitted, 3,
        "one bucket for both servers: 3 a minute per client"
    );
    assert_eq!(a.once_store().name(), "redis");
    assert!(a.has_tasks(), "billing has task actions");
    assert_eq!(a.task_store().name(), "redis");
    // Attached to a built server, what it already has is kept and said.
    let kept = a.attach_stores(
        backend.stores().unwrap_or_else(|e| panic!("{e}")),
        OnStoreFailure::Open,
    );
    assert_eq!(
        kept,
        [
            "rate limits",
            "one-time ids",
            "tasks",
            "change notifications"
        ]
    );
}
