//! Delegation tokens (issue 21): what a gateway mints and an upstream's verifier accepts —
//! exactly the intact, fresh, first-seen tokens of its own audience and trusted issuers — and
//! the middleware that refuses every other call with an envelope, in-process and through the
//! spawned `delegated-server` over stdio, called by the typed client.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use fusion_runtime::auth::delegation::{MAX_CARRY_BYTES, MAX_TOKEN_BYTES};
use fusion_runtime::auth::{
    DELEGATION_META_KEY, Delegation, DelegationError, DelegationKey, DelegationVerifier,
};
use fusion_runtime::client::{CallOutcome, FusionClient};
use fusion_runtime::server::RequestScope;
use fusion_runtime::{Context, JsonObject, Server, ToolError, ToolInput, tool_action};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

const SECRET: &str = "the gateway and billing share this secret";
const LIMIT: Duration = Duration::from_secs(30);

fn key() -> DelegationKey {
    DelegationKey::new(SECRET).expect("a long enough key")
}

fn verifier() -> DelegationVerifier {
    DelegationVerifier::new(key(), "billing").issuers(["triage"])
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn mint_with(key: &DelegationKey, audience: &str, ttl: u64, carry: Value) -> String {
    key.mint(
        "triage",
        "user-7",
        audience,
        Duration::from_secs(ttl),
        carry,
    )
    .expect("mints")
}

fn mint(ttl: u64) -> String {
    mint_with(&key(), "billing", ttl, json!({"invoice": "inv_2026_0001"}))
}

/// The token's three parts: prefix, body, mac.
fn parts(token: &str) -> (&str, &str, &str) {
    let (signed, mac) = token.rsplit_once('.').expect("a mac");
    let (prefix, body) = signed.split_at(4);
    (prefix, body, mac)
}

#[test]
fn a_token_round_trips_every_field() {
    let before = now();
    let token = key()
        .mint(
            "triage",
            "user-7",
            "billing",
            Duration::from_secs(30),
            json!({"invoice": "inv_2026_0001", "turns": [1, 2]}),
        )
        .expect("mints");
    assert!(token.starts_with("dg1.") && token.len() < 400, "{token}");
    let d = verifier().verify(&token).expect("verifies");
    assert_eq!(
        (d.issuer.as_str(), d.subject.as_str(), d.audience.as_str()),
        ("triage", "user-7", "billing")
    );
    assert!(d.issued_at >= before && d.issued_at <= now());
    assert_eq!(d.expires_at - d.issued_at, 30);
    assert_eq!(d.id.len(), 22, "128 random bits in base64url");
    assert_eq!(
        d.carry,
        json!({"invoice": "inv_2026_0001", "turns": [1, 2]})
    );
}

#[test]
fn every_mint_has_its_own_one_time_id() {
    let ids: std::collections::BTreeSet<String> = (0..50)
        .map(|_| verifier().verify(&mint(30)).expect("verifies").id)
        .collect();
    assert_eq!(ids.len(), 50);
}

#[test]
fn a_tampered_payload_fails_the_signature() {
    let token = mint(30);
    let (prefix, body, mac) = parts(&token);
    let mut claims: Value =
        serde_json::from_slice(&BASE64_URL_SAFE_NO_PAD.decode(body).expect("base64url"))
            .expect("json");
    claims["sub"] = json!("admin");
    claims["carry"] = json!({"invoice": "inv_2026_0002"});
    let forged_body = BASE64_URL_SAFE_NO_PAD.encode(claims.to_string());
    let forged = format!("{prefix}{forged_body}.{mac}");
    assert_eq!(
        verifier().verify(&forged),
        Err(DelegationError::BadSignature)
    );
}

#[test]
fn a_tampered_mac_fails_the_signature() {
    let token = mint(30);
    let (prefix, body, mac) = parts(&token);
    let mut raw = BASE64_URL_SAFE_NO_PAD.decode(mac).expect("base64url");
    raw[0] ^= 1;
    let forged = format!("{prefix}{body}.{}", BASE64_URL_SAFE_NO_PAD.encode(raw));
    assert_eq!(
        verifier().verify(&forged),
        Err(DelegationError::BadSignature)
    );
}

#[test]
fn a_token_signed_with_another_key_fails_the_signature() {
    let other = DelegationKey::new("another gateway's secret, also 32+ bytes").expect("key");
    let token = mint_with(&other, "billing", 30, Value::Null);
    assert_eq!(
        verifier().verify(&token),
        Err(DelegationError::BadSignature)
    );
}

#[test]
fn a_previous_key_is_accepted_while_keys_rotate() {
    let old = DelegationKey::new("last quarter's key, 32 bytes or longer").expect("key");
    let signed_with_old = mint_with(&old, "billing", 30, Value::Null);
    assert_eq!(
        verifier().verify(&signed_with_old),
        Err(DelegationError::BadSignature)
    );
    let rotating = verifier().also_accept(old);
    assert!(rotating.verify(&signed_with_old).is_ok());
    assert!(rotating.verify(&mint(30)).is_ok());
    // One replay store across the keys.
    assert_eq!(
        rotating.verify(&signed_with_old),
        Err(DelegationError::Replayed)
    );
    let stranger = DelegationKey::new("another gateway's secret, also 32+ bytes").expect("key");
    assert_eq!(
        rotating.verify(&mint_with(&stranger, "billing", 30, Value::Null)),
        Err(DelegationError::BadSignature)
    );
}

#[test]
fn an_expired_token_is_refused_and_a_future_one_is_not_valid_yet() {
    let token = mint(1);
    let v = verifier().leeway(Duration::ZERO);
    let issued = now();
    // One second after its expiry, by the verifier's clock (no sleeping).
    assert_eq!(
        v.verify_at(&token, issued + 2),
        Err(DelegationError::Expired)
    );
    // The leeway tolerates skew: 5 seconds late is still accepted with the default.
    let lenient = verifier();
    assert!(lenient.verify_at(&mint(1), issued + 4).is_ok());
    assert_eq!(
        lenient.verify_at(&mint(1), issued + 8),
        Err(DelegationError::Expired)
    );
    // Minted a minute "before" the verifier's clock shows it: clocks disagree.
    assert_eq!(
        lenient.verify_at(&mint(30), issued.saturating_sub(60)),
        Err(DelegationError::NotYetValid)
    );
}

#[test]
fn a_replayed_token_is_refused_but_a_fresh_one_for_the_same_call_is_not() {
    let v = verifier();
    let token = mint(30);
    assert!(v.verify(&token).is_ok());
    assert_eq!(v.verify(&token), Err(DelegationError::Replayed));
    // A clone shares the store (one middleware per group, one verifier).
    assert_eq!(v.clone().verify(&token), Err(DelegationError::Replayed));
    // An honest gateway mints one per forwarded call: never refused.
    for _ in 0..10 {
        assert!(v.verify(&mint(30)).is_ok());
    }
}

#[test]
fn a_token_for_another_audience_or_from_an_unknown_issuer_is_refused() {
    let token = mint_with(&key(), "devops", 30, Value::Null);
    assert_eq!(
        verifier().verify(&token),
        Err(DelegationError::WrongAudience)
    );
    let rogue = key()
        .mint(
            "rogue",
            "user-7",
            "billing",
            Duration::from_secs(30),
            Value::Null,
        )
        .expect("mints");
    assert_eq!(
        verifier().verify(&rogue),
        Err(DelegationError::UnknownIssuer)
    );
    // Without `issuers`, any issuer holding the key is accepted.
    assert!(
        DelegationVerifier::new(key(), "billing")
            .verify(&rogue)
            .is_ok()
    );
}

#[test]
fn a_token_living_longer_than_max_ttl_is_refused() {
    let token = mint(301);
    assert_eq!(
        verifier().verify(&token),
        Err(DelegationError::LifetimeTooLong)
    );
    assert!(
        verifier()
            .max_ttl(Duration::from_secs(600))
            .verify(&token)
            .is_ok()
    );
}

#[test]
fn oversized_carry_names_and_tokens_are_refused_before_any_work() {
    let just = json!("x".repeat(MAX_CARRY_BYTES - 2));
    let token = mint_with(&key(), "billing", 30, just);
    assert!(token.len() <= MAX_TOKEN_BYTES);
    assert!(verifier().verify(&token).is_ok());

    let over = json!("x".repeat(MAX_CARRY_BYTES - 1));
    assert_eq!(
        key()
            .mint("triage", "u", "billing", Duration::from_secs(30), over)
            .err(),
        Some(DelegationError::TooLarge)
    );
    let long_name = "s".repeat(257);
    assert_eq!(
        key()
            .mint(
                "triage",
                &long_name,
                "billing",
                Duration::from_secs(30),
                Value::Null
            )
            .err(),
        Some(DelegationError::TooLarge)
    );
    let huge = format!("dg1.{}.{}", "A".repeat(MAX_TOKEN_BYTES), "B".repeat(43));
    assert_eq!(verifier().verify(&huge), Err(DelegationError::TooLarge));
}

#[test]
fn malformed_tokens_are_refused() {
    for bad in [
        "",
        "dg1.",
        "not a token",
        "rs1.e30.AAAA",
        "dg1.e30",
        "dg1.e30.too-short-for-a-mac",
    ] {
        assert_eq!(
            verifier().verify(bad),
            Err(DelegationError::Malformed),
            "{bad:?}"
        );
    }
}

#[test]
fn a_full_replay_store_refuses_until_an_id_expires_and_bad_tokens_take_no_place() {
    let v = verifier().replay_capacity(2).leeway(Duration::ZERO);
    let t0 = now();
    assert!(v.verify_at(&mint(10), t0).is_ok());
    assert!(v.verify_at(&mint(20), t0).is_ok());
    // Full of live ids: fail closed.
    assert_eq!(
        v.verify_at(&mint(30), t0),
        Err(DelegationError::ReplayStoreFull)
    );
    assert_eq!(v.replay_store_frees_in(t0), Some(Duration::from_secs(10)));
    // Refused tokens never take a place.
    let stranger = DelegationKey::new("another gateway's secret, also 32+ bytes").expect("key");
    assert_eq!(
        v.verify_at(&mint_with(&stranger, "billing", 30, Value::Null), t0),
        Err(DelegationError::BadSignature)
    );
    assert_eq!(v.replay_store_len(), 2);
    // Once the first token is dead, its id leaves and a new token fits.
    assert!(v.verify_at(&mint(30), t0 + 10).is_ok());
    assert_eq!(v.replay_store_len(), 2);
}

#[test]
fn keys_are_checked() {
    assert_eq!(
        DelegationKey::new("short").err(),
        Some(DelegationError::KeyTooShort)
    );
    assert_eq!(
        DelegationKey::from_env("FUSION_TEST_DELEGATION_KEY_THAT_IS_UNSET").err(),
        Some(DelegationError::KeyTooShort)
    );
    let shown = format!("{:?} {:?}", key(), verifier());
    assert!(!shown.contains(SECRET), "{shown}");
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(256))]

    /// No single-byte change anywhere in a token verifies (prefix, body, dot, mac — including
    /// the unused low bits of the last base64 character).
    #[test]
    fn no_byte_flip_verifies(index in any::<prop::sample::Index>(), mask in 1u8..128) {
        let token = mint(30);
        let mut bytes = token.into_bytes();
        let i = index.index(bytes.len());
        bytes[i] ^= mask;
        let flipped = String::from_utf8(bytes).expect("ASCII stays ASCII");
        prop_assert!(verifier().verify(&flipped).is_err());
    }
}

/// Tokens a key holder signed with arbitrary times and ids (a buggy or hostile gateway that
/// has the key): the verifier decides without panicking or overflowing, and accepts only a
/// well-formed, live, short-lived one.
fn signed(claims: &Value) -> String {
    fusion_runtime::auth::Seal::new("dg1.", MAX_TOKEN_BYTES)
        .seal(SECRET.as_bytes(), claims.to_string().as_bytes())
        .expect("seals")
}

#[test]
fn signed_but_unreadable_claims_are_malformed() {
    let t = now();
    let good = json!({
        "v": 1, "iss": "triage", "sub": "u", "aud": "billing",
        "iat": t, "exp": t + 30, "jti": "AAAAAAAAAAAAAAAAAAAAAA", "carry": null,
    });
    assert!(verifier().verify(&signed(&good)).is_ok());
    let mut v2 = good.clone();
    v2["v"] = json!(2);
    let mut no_sub = good.clone();
    no_sub.as_object_mut().map(|o| o.remove("sub"));
    let mut long_id = good.clone();
    long_id["jti"] = json!("A".repeat(64));
    let mut negative = good.clone();
    negative["exp"] = json!(-1);
    for claims in [v2, no_sub, long_id, negative, json!([1, 2]), json!("dg1")] {
        assert_eq!(
            verifier().verify(&signed(&claims)),
            Err(DelegationError::Malformed),
            "{claims}"
        );
    }
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(256))]

    #[test]
    fn signed_claims_with_any_times_and_ids_never_panic(
        iat in prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>(), Just(1_796_300_000u64)],
        life in prop_oneof![Just(0u64), Just(30u64), any::<u64>()],
        id in prop_oneof![Just("AAAAAAAAAAAAAAAAAAAAAA".to_owned()), "\\PC{0,30}"],
        now in prop_oneof![Just(0u64), Just(u64::MAX), Just(1_796_300_010u64), any::<u64>()],
    ) {
        let exp = iat.wrapping_add(life);
        let claims = json!({
            "v": 1, "iss": "triage", "sub": "u", "aud": "billing",
            "iat": iat, "exp": exp, "jti": id, "carry": null,
        });
        let verdict = verifier().verify_at(&signed(&claims), now);
        if verdict.is_ok() {
            prop_assert!(exp >= iat && exp - iat <= 300);
            prop_assert!(now < exp.saturating_add(5) && iat <= now.saturating_add(5));
            prop_assert_eq!(id.len(), 22);
        }
        if exp < iat {
            prop_assert_eq!(verdict, Err(DelegationError::Malformed));
        }
    }

    #[test]
    fn any_text_is_refused_without_panicking(text in "\\PC{0,200}") {
        prop_assert!(verifier().verify(&text).is_err());
    }
}

// ---- the middleware, in-process ----

/// What to look up.
#[derive(Deserialize, ToolInput)]
struct Lookup {
    /// An invoice id.
    #[fusion(length(min = 1, max = 40))]
    invoice: String,
}

/// Echoes the delegation the handler received.
#[tool_action(name = "billing.lookup")]
async fn lookup(input: Lookup, cx: Context) -> Result<Value, ToolError> {
    let d: Option<&Delegation> = cx.delegation();
    Ok(json!({
        "invoice": input.invoice,
        "subject": d.map(|d| d.subject.clone()),
        "carry": d.map(|d| d.carry.clone()),
    }))
}

fn server(verifier: DelegationVerifier) -> Server {
    Server::builder()
        .action::<LookupAction>()
        .middleware(verifier.middleware())
        .build()
        .expect("builds")
}

fn scope_with(meta: Value) -> RequestScope {
    let mut scope = RequestScope::detached();
    if let Value::Object(map) = meta {
        scope.meta = Some(Arc::new(map));
    }
    scope
}

fn args() -> Option<JsonObject> {
    json!({"invoice": "inv_2026_0001"}).as_object().cloned()
}

const MISSING: &str = r#"<tool_error code="UNAUTHORIZED" severity="error">
  <message>This tool only answers calls delegated by a trusted gateway, and this call carried no delegation token</message>
  <recovery>Call this tool through the gateway that hands conversations off to this server; it attaches a delegation token to every call</recovery>
</tool_error>"#;

const REPLAYED: &str = r#"<tool_error code="UNAUTHORIZED" severity="error">
  <message>The delegation token of this call was already used</message>
  <recovery>Call the tool again through the gateway, which signs a new token for every call</recovery>
</tool_error>"#;

const TAMPERED: &str = r#"<tool_error code="UNAUTHORIZED" severity="error">
  <message>The delegation token of this call failed signature verification</message>
  <recovery>Call the tool again through the gateway; if this repeats, the gateway and this server do not share a key: tell the user to report it to the operator</recovery>
</tool_error>"#;

const WRONG_AUDIENCE: &str = r#"<tool_error code="UNAUTHORIZED" severity="error">
  <message>The delegation token of this call was issued for another server</message>
  <recovery>Call this server's tools through the gateway's handoff to this server's own domain</recovery>
</tool_error>"#;

const MALFORMED: &str = r#"<tool_error code="UNAUTHORIZED" severity="error">
  <message>The delegation token of this call could not be read</message>
  <recovery>Call the tool again through the gateway, which signs a new token for every call</recovery>
</tool_error>"#;

fn text(r: &fusion_runtime::envelope::ToolResponse) -> String {
    r.texts().collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn the_middleware_refuses_without_a_valid_token_and_hands_the_delegation_on() {
    let s = server(verifier());
    let refused = s
        .call("billing_lookup", args(), RequestScope::detached())
        .await;
    assert!(refused.is_error);
    assert_eq!(text(&refused), MISSING);
    let other_meta = s
        .call(
            "billing_lookup",
            args(),
            scope_with(json!({"progressToken": 1})),
        )
        .await;
    assert_eq!(text(&other_meta), MISSING);
    let not_a_string = s
        .call(
            "billing_lookup",
            args(),
            scope_with(json!({DELEGATION_META_KEY: 42})),
        )
        .await;
    assert_eq!(text(&not_a_string), MALFORMED);

    let token = mint(30);
    let ok = s
        .call(
            "billing_lookup",
            args(),
            scope_with(json!({DELEGATION_META_KEY: token})),
        )
        .await;
    assert!(!ok.is_error, "{}", text(&ok));
    let body: Value = serde_json::from_str(&text(&ok)).expect("json");
    assert_eq!(body["subject"], "user-7");
    assert_eq!(body["carry"], json!({"invoice": "inv_2026_0001"}));

    let again = s
        .call(
            "billing_lookup",
            args(),
            scope_with(json!({DELEGATION_META_KEY: token})),
        )
        .await;
    assert_eq!(text(&again), REPLAYED);
}

#[tokio::test]
async fn a_full_replay_store_answers_server_busy_with_retry_after() {
    let s = server(verifier().replay_capacity(1));
    let first = s
        .call(
            "billing_lookup",
            args(),
            scope_with(json!({DELEGATION_META_KEY: mint(30)})),
        )
        .await;
    assert!(!first.is_error);
    let busy = s
        .call(
            "billing_lookup",
            args(),
            scope_with(json!({DELEGATION_META_KEY: mint(30)})),
        )
        .await;
    let t = text(&busy);
    assert!(busy.is_error);
    assert!(
        t.starts_with("<tool_error code=\"SERVER_BUSY\" severity=\"error\">\n  <message>This server is receiving more delegated calls than it can keep track of</message>"),
        "{t}"
    );
    // 30 s of life and 5 s of leeway, give or take the second the call took.
    assert!(
        t.ends_with("<retry_after>35 seconds</retry_after>\n</tool_error>")
            || t.ends_with("<retry_after>34 seconds</retry_after>\n</tool_error>"),
        "{t}"
    );
}

// ---- through a real server over stdio ----

async fn spawn_upstream() -> FusionClient {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_delegated-server"));
    command
        .arg("serve")
        .env("RUST_LOG", "off")
        .env("FUSION_DELEGATION_KEY", SECRET);
    tokio::time::timeout(LIMIT, FusionClient::spawn(command))
        .await
        .expect("handshake in time")
        .expect("spawns and connects")
}

/// Every text block of a result, as sent.
fn wire(outcome: &CallOutcome) -> String {
    outcome
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn meta(token: &str) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        DELEGATION_META_KEY.to_owned(),
        Value::String(token.to_owned()),
    );
    m
}

#[tokio::test]
async fn a_stdio_upstream_answers_only_delegated_calls() {
    let client = spawn_upstream().await;
    let arguments = json!({"invoice": "inv_2026_0001"});

    let bare = client
        .call_tool("billing_lookup", arguments.clone())
        .await
        .expect("a result");
    assert!(bare.is_error);
    assert_eq!(wire(&bare), MISSING);
    let e = bare.error().expect("an error");
    assert_eq!(e.code.as_str(), "UNAUTHORIZED");
    assert!(
        e.recovery
            .is_some_and(|r| r.contains("through the gateway"))
    );

    let carry = json!({"invoice": "inv_2026_0001", "reason": "refund asked in triage"});
    let token = mint_with(&key(), "billing", 30, carry.clone());
    let ok = client
        .call_tool_with_meta("billing_lookup", arguments.clone(), meta(&token))
        .await
        .expect("a result");
    assert!(!ok.is_error, "{}", ok.text());
    let body = ok.json().expect("json");
    assert_eq!(body["subject"], "user-7");
    assert_eq!(body["issuer"], "triage");
    assert_eq!(body["carry"], carry);

    let replayed = client
        .call_tool_with_meta("billing_lookup", arguments.clone(), meta(&token))
        .await
        .expect("a result");
    assert_eq!(wire(&replayed), REPLAYED);

    let (prefix, body, mac) = parts(&token);
    let mut raw = BASE64_URL_SAFE_NO_PAD.decode(body).expect("base64url");
    let last = raw.len() - 2;
    raw[last] ^= 1;
    let tampered = format!("{prefix}{}.{mac}", BASE64_URL_SAFE_NO_PAD.encode(raw));
    let refused = client
        .call_tool_with_meta("billing_lookup", arguments.clone(), meta(&tampered))
        .await
        .expect("a result");
    assert_eq!(wire(&refused), TAMPERED);

    let elsewhere = mint_with(&key(), "devops", 30, Value::Null);
    let refused = client
        .call_tool_with_meta("billing_lookup", arguments.clone(), meta(&elsewhere))
        .await
        .expect("a result");
    assert_eq!(wire(&refused), WRONG_AUDIENCE);

    // The refusals never echo the token.
    assert!(!wire(&refused).contains(&elsewhere[4..20]));
    client.close().await.expect("closes");
}

#[tokio::test]
async fn an_http_upstream_reads_the_token_from_meta_too() {
    use fusion_runtime::mcp::{HttpOptions, spawn_http};
    let running = spawn_http(
        server(verifier()),
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("binds loopback");
    let client = tokio::time::timeout(LIMIT, FusionClient::connect_http(&running.url))
        .await
        .expect("connects in time")
        .expect("connects");
    let arguments = json!({"invoice": "inv_2026_0001"});
    let bare = client
        .call_tool("billing_lookup", arguments.clone())
        .await
        .expect("a result");
    assert_eq!(wire(&bare), MISSING);
    let ok = client
        .call_tool_with_meta("billing_lookup", arguments, meta(&mint(30)))
        .await
        .expect("a result");
    assert!(!ok.is_error, "{}", wire(&ok));
    assert_eq!(
        ok.json().expect("json")["carry"]["invoice"],
        "inv_2026_0001"
    );
    client.close().await.expect("closes");
    running.shutdown().await.expect("shuts down");
}
