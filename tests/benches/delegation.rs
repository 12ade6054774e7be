//! Bench: what checking a delegation token costs (issue 21).
//!
//! - `delegation/verify` (a fresh token each time, so the replay store admits it) against
//!   `delegation/baseline_jwt_hs256_verify`: the project's bearer-token check of a JWT with the
//!   same claims and carry, also HMAC-SHA256 — the cost of the familiar way to do it;
//! - `delegation/mint`, what a gateway pays per forwarded call;
//! - `delegation_pipeline/*`: one in-process call through the full pipeline with the
//!   delegation middleware, against the same call with a pass-through middleware (the chain
//!   without the check) and with none.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use common::{TOOL, valid_args};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use fusion_runtime::auth::{DELEGATION_META_KEY, DelegationKey, DelegationVerifier, JwtVerifier};
use fusion_runtime::server::{CallRequest, Next, RequestScope, middleware_fn};
use fusion_runtime::{JsonObject, Server, ToolError};
use futures::executor::block_on;
use serde_json::{Value, json};

const SECRET: &str = "the gateway and billing share this secret";

fn key() -> DelegationKey {
    DelegationKey::new(SECRET).unwrap_or_else(|e| panic!("{e}"))
}

fn carry() -> Value {
    json!({"invoice": "inv_2026_0001", "reason": "refund asked in triage", "turn": 7})
}

fn mint(key: &DelegationKey) -> String {
    key.mint(
        "triage",
        "user-7",
        "billing",
        Duration::from_secs(30),
        carry(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn verifier() -> DelegationVerifier {
    DelegationVerifier::new(key(), "billing")
        .issuers(["triage"])
        .replay_capacity(usize::MAX)
}

fn jwt() -> (JwtVerifier, String) {
    let verifier = JwtVerifier::new("billing")
        .issuer("triage")
        .hs256_secret(SECRET.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = json!({
        "iss": "triage", "sub": "user-7", "aud": "billing", "iat": now, "exp": now + 30,
        "jti": "q1Xo3cUe0mJb9vQy6Tg2Zw", "carry": carry(),
    });
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes())
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    (verifier, token)
}

fn tokens(c: &mut Criterion) {
    let key = key();
    let v = verifier();
    assert!(v.verify(&mint(&key)).is_ok(), "a fresh token verifies");
    let (jwt, jwt_token) = jwt();
    assert!(jwt.verify_token(&jwt_token).is_ok(), "the JWT verifies");

    let mut g = c.benchmark_group("delegation");
    g.bench_function("verify", |b| {
        b.iter_batched(
            || (verifier(), mint(&key)),
            |(v, token)| {
                let verdict = black_box(v.verify(&token));
                (v, verdict)
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("baseline_jwt_hs256_verify", |b| {
        b.iter(|| black_box(jwt.verify_token(&jwt_token)))
    });
    g.bench_function("mint", |b| b.iter(|| black_box(mint(&key))));
    g.finish();
}

fn server(middleware: Option<bool>) -> Server {
    let builder = Server::builder()
        .name("bench")
        .version("0.1.0")
        .action::<common::RegisterAction>();
    let builder = match middleware {
        None => builder,
        Some(false) => {
            builder.middleware(middleware_fn(|req: CallRequest, next: Next| async move {
                Ok::<_, ToolError>(next.run(req).await)
            }))
        }
        Some(true) => builder.middleware(verifier().middleware()),
    };
    builder.build().unwrap_or_else(|e| panic!("{e}"))
}

fn scope(token: Option<String>) -> RequestScope {
    let mut scope = RequestScope::detached();
    if let Some(token) = token {
        let mut meta = JsonObject::new();
        meta.insert(DELEGATION_META_KEY.to_owned(), Value::String(token));
        scope.meta = Some(Arc::new(meta));
    }
    scope
}

fn pipeline(c: &mut Criterion) {
    let key = key();
    let args = match valid_args() {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    };
    let (bare, passthrough, delegated) = (server(None), server(Some(false)), server(Some(true)));
    let call =
        |s: &Server, scope: RequestScope, a: JsonObject| block_on(s.call(TOOL, Some(a), scope));
    assert!(!call(&delegated, scope(Some(mint(&key))), args.clone()).is_error);
    assert!(call(&delegated, scope(None), args.clone()).is_error);
    assert!(!call(&passthrough, scope(None), args.clone()).is_error);

    let mut g = c.benchmark_group("delegation_pipeline");
    g.bench_function("call_with_delegation", |b| {
        b.iter_batched(
            || (args.clone(), scope(Some(mint(&key)))),
            |(a, sc)| black_box(call(&delegated, sc, a)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("baseline_passthrough_middleware", |b| {
        b.iter_batched(
            || (args.clone(), scope(Some(mint(&key)))),
            |(a, sc)| black_box(call(&passthrough, sc, a)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("baseline_no_middleware", |b| {
        b.iter_batched(
            || (args.clone(), scope(Some(mint(&key)))),
            |(a, sc)| black_box(call(&bare, sc, a)),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, tokens, pipeline);
criterion_main!(benches);
