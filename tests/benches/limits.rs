//! Bench (issue 16): one rate-limit check per call — the in-process `governor` limiter the
//! server uses by default against the Redis store (a `redis-server` on loopback, started
//! here; one GCRA script per check over the multiplexed connection). Criterion gives the
//! mean; a plain latency loop after it gives p50 and p99 of each, interleaved in rounds so
//! both see the same machine.
//!
//! Issue 29: the one-time check an answered confirmation (or a delegation id) pays, beside
//! it — `MemoryOnce` in process against `RedisOnce` (one `SET NX PX`), each id new, as every
//! answered confirmation's is.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use fusion_runtime::guard::{RateLimit, RateLimiterGuard, Verdict};
use fusion_runtime::store::RedisStore;
use fusion_runtime::store::{MemoryOnce, OnceStore, RedisOnce};
use fusion_tests::services::Redis;

const CLIENTS: usize = 1000;

/// A limit no bench call reaches: every check is an admitted call, as most are.
fn limit() -> RateLimit {
    RateLimit::new(u32::MAX, Duration::from_secs(1))
        .burst(u32::MAX)
        .per_client()
}

fn percentiles(mut samples: Vec<u64>) -> (f64, f64) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize] as f64 / 1000.0;
    (at(0.50), at(0.99))
}

fn limits(c: &mut Criterion) {
    let redis = Redis::start();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let limit = limit();
    let keys: Vec<String> = (0..CLIENTS).map(|i| format!("sub:user-{i}")).collect();
    let local = RateLimiterGuard::new("bench.charge", limit);
    let store = rt.block_on(async {
        RedisStore::new(&redis.url)
            .unwrap_or_else(|e| panic!("redis store: {e}"))
            .prefix("bench")
    });
    let redis_check = |key: &str| {
        rt.block_on(store.check("bench.charge", key, &limit))
            .unwrap_or_else(|e| panic!("redis check: {e}"))
    };
    assert_eq!(redis_check("sub:warmup"), Verdict::Admit);
    assert!(local.check("sub:warmup").is_ok());

    let mut g = c.benchmark_group("rate_limit_check");
    let mut i = 0usize;
    g.bench_function("in_process", |b| {
        b.iter(|| {
            i = (i + 1) % CLIENTS;
            black_box(local.check(&keys[i]).is_ok())
        })
    });
    g.bench_function("redis", |b| {
        b.iter(|| {
            i = (i + 1) % CLIENTS;
            black_box(redis_check(&keys[i]))
        })
    });
    g.finish();

    // One-time ids: each check a new id, kept 1 s (the live set stays bounded while the bench
    // runs millions of checks).
    let ttl = Duration::from_secs(1);
    let memory = MemoryOnce::new(usize::MAX);
    let once = rt.block_on(async {
        RedisOnce::new(&redis.url)
            .unwrap_or_else(|e| panic!("redis once: {e}"))
            .prefix("bench")
    });
    let mut n = 0u64;
    let mut g = c.benchmark_group("one_time_check");
    g.bench_function("in_process", |b| {
        b.iter(|| {
            n += 1;
            black_box(memory.take("rs", &n.to_le_bytes(), ttl))
        })
    });
    g.bench_function("redis", |b| {
        b.iter(|| {
            n += 1;
            black_box(rt.block_on(once.first_use("rs", &n.to_le_bytes(), ttl)))
        })
    });
    g.finish();
    let (mut c1, mut c2) = (Vec::new(), Vec::new());
    for _ in 0..20_000 {
        n += 1;
        let t = Instant::now();
        black_box(memory.take("rs", &n.to_le_bytes(), ttl).is_ok());
        c1.push(t.elapsed().as_nanos() as u64);
        let t = Instant::now();
        black_box(
            rt.block_on(once.first_use("rs", &n.to_le_bytes(), ttl))
                .is_ok(),
        );
        c2.push(t.elapsed().as_nanos() as u64);
    }
    let (c50, c99) = percentiles(c1);
    let (d50, d99) = percentiles(c2);
    println!(
        "FIGURE one-time check latency (20,000 new ids each, µs): in-process p50 {c50:.2} p99 {c99:.2} | redis p50 {d50:.1} p99 {d99:.1} | ratio p50 {:.0}x p99 {:.0}x",
        d50 / c50.max(0.001),
        d99 / c99.max(0.001)
    );

    // Latency percentiles, one call timed at a time, the two interleaved in rounds.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        for k in 0..1000 {
            let key = &keys[k % CLIENTS];
            let t = Instant::now();
            black_box(local.check(key).is_ok());
            a.push(t.elapsed().as_nanos() as u64);
            let t = Instant::now();
            black_box(redis_check(key));
            b.push(t.elapsed().as_nanos() as u64);
        }
    }
    let (a50, a99) = percentiles(a);
    let (b50, b99) = percentiles(b);
    println!(
        "FIGURE rate-limit check latency (20,000 calls each, µs): in-process p50 {a50:.2} p99 {a99:.2} | redis p50 {b50:.1} p99 {b99:.1} | ratio p50 {:.0}x p99 {:.0}x",
        b50 / a50.max(0.001),
        b99 / a99.max(0.001)
    );
    drop(redis);
}

criterion_group!(benches, limits);
criterion_main!(benches);
