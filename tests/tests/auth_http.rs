//! MCP authorization over streamable HTTP, with tokens minted here (RSA and P-256 key pairs
//! from the `openssl` command line, and an HS256 secret): `401` and its challenge, the
//! Protected Resource Metadata, per-action scopes (`FORBIDDEN`, `AUTH_REQUIRED`), the
//! principal in handlers, per-subject rate limits, and the typed client's bearer token.

use std::net::SocketAddr;

use fusion_runtime::auth::{Auth, AuthMode, JwtVerifier};
use fusion_runtime::client::FusionClient;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::{Context, Server, ToolError, ToolInput, tool_action};
use fusion_tests::raw_http::{self, RawResponse};
use fusion_tests::services::{KeyPair, key_pair, mint, now};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde::Deserialize;
use serde_json::{Value, json};

const RESOURCE: &str = "https://billing.example.com/mcp";
const ISSUER: &str = "https://auth.example.com";
const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef-hs256";

/// Nothing to send.
#[derive(Deserialize, ToolInput)]
struct Note {
    /// Anything.
    note: Option<String>,
}

/// Who am I.
#[tool_action(name = "acct.whoami", read_only)]
async fn whoami(_input: Note, cx: Context) -> Result<Value, ToolError> {
    Ok(match cx.principal() {
        Some(p) => json!({"subject": p.subject(), "scopes": p.scopes(), "client": p.client_id()}),
        None => json!({"subject": null}),
    })
}

/// Charge something; needs the billing:write scope.
#[tool_action(
    name = "acct.charge",
    scopes = ["billing:write"],
    rate_limit(calls = 2, per = "1min", per_client)
)]
async fn charge(_input: Note, _cx: Context) -> Result<Value, ToolError> {
    Ok(json!({"charged": true}))
}

struct Keys {
    rsa: KeyPair,
    ec: KeyPair,
}

fn keys() -> Keys {
    Keys {
        rsa: key_pair("rsa"),
        ec: key_pair("ec"),
    }
}

fn verifier(keys: &Keys) -> JwtVerifier {
    JwtVerifier::new(RESOURCE)
        .issuer(ISSUER)
        .rs256_pem(&keys.rsa.public_pem)
        .and_then(|v| v.es256_pem(&keys.ec.public_pem))
        .and_then(|v| v.hs256_secret(SECRET))
        .unwrap_or_else(|e| panic!("verifier: {e}"))
}

async fn serve(keys: &Keys, mode: AuthMode) -> HttpServer {
    let server = Server::builder()
        .name("acct")
        .action::<WhoamiAction>()
        .action::<ChargeAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let auth = Auth::new(verifier(keys), RESOURCE)
        .authorization_server(ISSUER)
        .mode(mode);
    let options = HttpOptions::default().stateless(true).auth(auth);
    spawn_http(server, SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

fn claims(sub: &str, scope: &str) -> Value {
    json!({
        "sub": sub, "scope": scope, "aud": RESOURCE, "iss": ISSUER,
        "exp": now() + 600, "iat": now(), "client_id": "test-client",
    })
}

fn rs256(keys: &Keys, claims: &Value) -> String {
    let key = EncodingKey::from_rsa_pem(&keys.rsa.private_pem).unwrap_or_else(|e| panic!("{e}"));
    mint(Algorithm::RS256, &key, claims)
}

async fn call(server: &HttpServer, token: Option<&str>, tool: &str) -> RawResponse {
    raw_http::call_tool(server.local_addr, "/mcp", token, 1, tool, json!({}))
        .await
        .unwrap_or_else(|e| panic!("call: {e}"))
}

/// The text of a `tools/call` result and its `isError`.
fn result_text(r: &RawResponse) -> (String, bool) {
    let m = r.message();
    let text = m["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (text, m["result"]["isError"].as_bool().unwrap_or(false))
}

#[tokio::test]
async fn no_token_is_401_with_the_metadata_url_and_the_metadata_parses() {
    let keys = keys();
    let server = serve(&keys, AuthMode::Required).await;
    let r = call(&server, None, "acct_whoami").await;
    assert_eq!(r.status, 401, "{r:?}");
    let challenge = r.header("www-authenticate").unwrap_or_default();
    let url = "https://billing.example.com/.well-known/oauth-protected-resource/mcp";
    assert_eq!(challenge, format!("Bearer resource_metadata=\"{url}\""));
    assert!(!challenge.contains("error="), "no token, no error code");

    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let m = raw_http::request(server.local_addr, "GET", path, &[], "")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.status, 200, "{path}: {m:?}");
        assert_eq!(m.header("content-type"), Some("application/json"));
        let doc = m.json();
        assert_eq!(doc["resource"], RESOURCE);
        assert_eq!(doc["authorization_servers"], json!([ISSUER]));
        assert_eq!(doc["scopes_supported"], json!(["billing:write"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
    let _ = server.shutdown().await;
}

#[tokio::test]
async fn bad_tokens_are_401_invalid_token() {
    let keys = keys();
    let server = serve(&keys, AuthMode::Required).await;
    let other = key_pair("rsa");
    let other_key = EncodingKey::from_rsa_pem(&other.private_pem).unwrap_or_else(|e| panic!("{e}"));
    let mut expired = claims("u1", "billing:write");
    expired["exp"] = json!(now() - 3600);
    let mut wrong_aud = claims("u1", "billing:write");
    wrong_aud["aud"] = json!("https://other.example.com/mcp");
    let mut wrong_iss = claims("u1", "billing:write");
    wrong_iss["iss"] = json!("https://evil.example.com");
    let cases = [
        ("expired", rs256(&keys, &expired), "expired"),
        ("wrong audience", rs256(&keys, &wrong_aud), "audience"),
        ("wrong issuer", rs256(&keys, &wrong_iss), "issuer"),
        (
            "bad signature",
            mint(Algorithm::RS256, &other_key, &claims("u1", "billing:write")),
            "signature",
        ),
        ("garbage", "not-a-jwt".to_owned(), "well-formed"),
        (
            "past the 8 KiB bound",
            rs256(&keys, &{
                let mut c = claims("u1", "billing:write");
                c["pad"] = json!("x".repeat(9 * 1024));
                c
            }),
            "too long",
        ),
    ];
    for (what, token, says) in cases {
        let r = call(&server, Some(&token), "acct_whoami").await;
        assert_eq!(r.status, 401, "{what}: {r:?}");
        let challenge = r.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.starts_with("Bearer resource_metadata=\"https://billing.example.com/.well-known/oauth-protected-resource/mcp\""),
            "{what}: {challenge}"
        );
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
        assert!(challenge.contains(says), "{what}: {challenge}");
        assert_eq!(r.json()["error"], "invalid_token", "{what}");
    }
    let _ = server.shutdown().await;
}

#[tokio::test]
async fn valid_tokens_of_each_algorithm_reach_the_handler_as_the_principal() {
    let keys = keys();
    let server = serve(&keys, AuthMode::Required).await;
    let es = EncodingKey::from_ec_pem(&keys.ec.private_pem).unwrap_or_else(|e| panic!("{e}"));
    let hs = EncodingKey::from_secret(SECRET).unwrap_or_else(|e| panic!("{e}"));
    let tokens = [
        ("alice", rs256(&keys, &claims("alice", "billing:read"))),
        (
            "bob",
            mint(Algorithm::ES256, &es, &claims("bob", "billing:read")),
        ),
        (
            "carol",
            mint(Algorithm::HS256, &hs, &claims("carol", "billing:read")),
        ),
    ];
    for (who, token) in tokens {
        let r = call(&server, Some(&token), "acct_whoami").await;
        assert_eq!(r.status, 200, "{who}: {r:?}");
        let (text, is_error) = result_text(&r);
        assert!(!is_error, "{who}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert_eq!(v["subject"], who);
        assert_eq!(v["scopes"], json!(["billing:read"]));
        assert_eq!(v["client"], "test-client");
    }
    let _ = server.shutdown().await;
}

#[tokio::test]
async fn a_missing_scope_is_forbidden_naming_it_and_the_scope_admits() {
    let keys = keys();
    let server = serve(&keys, AuthMode::Required).await;
    let reader = rs256(&keys, &claims("dave", "billing:read"));
    let r = call(&server, Some(&reader), "acct_charge").await;
    assert_eq!(r.status, 200);
    let (text, is_error) = result_text(&r);
    assert!(is_error);
    assert!(text.starts_with("<tool_error code=\"FORBIDDEN\""), "{text}");
    assert!(text.contains("'billing:write'"), "{text}");
    assert!(text.contains("Do not retry"), "{text}");

    let writer = rs256(&keys, &claims("dave", "billing:read billing:write"));
    let (text, is_error) = result_text(&call(&server, Some(&writer), "acct_charge").await);
    assert!(!is_error, "{text}");
    let _ = server.shutdown().await;
}

#[tokio::test]
async fn anonymous_calls_pass_an_optional_endpoint_but_scoped_actions_answer_auth_required() {
    let keys = keys();
    let server = serve(&keys, AuthMode::Optional).await;
    let (text, is_error) = result_text(&call(&server, None, "acct_whoami").await);
    assert!(!is_error, "{text}");
    assert!(text.contains("\"subject\":null"), "{text}");
    let r = call(&server, None, "acct_charge").await;
    assert_eq!(r.status, 200);
    let (text, is_error) = result_text(&r);
    assert!(is_error);
    assert!(
        text.starts_with("<tool_error code=\"AUTH_REQUIRED\""),
        "{text}"
    );
    assert!(text.contains("sign in"), "{text}");
    // A token that is sent must still be valid, even where anonymous calls pass.
    let mut expired = claims("erin", "billing:write");
    expired["exp"] = json!(now() - 3600);
    let r = call(&server, Some(&rs256(&keys, &expired)), "acct_whoami").await;
    assert_eq!(r.status, 401);
    let _ = server.shutdown().await;
}

#[tokio::test]
async fn per_client_rate_limits_count_by_subject() {
    let keys = keys();
    let server = serve(&keys, AuthMode::Required).await;
    let count_admitted = |texts: &[(String, bool)]| texts.iter().filter(|(_, e)| !e).count();
    for who in ["frank", "grace"] {
        let token = rs256(&keys, &claims(who, "billing:write"));
        let mut answers = Vec::new();
        for _ in 0..4 {
            answers.push(result_text(
                &call(&server, Some(&token), "acct_charge").await,
            ));
        }
        // Same address, separate buckets: each subject gets its own two calls.
        assert_eq!(count_admitted(&answers), 2, "{who}: {answers:?}");
        assert!(answers[3].0.contains("RATE_LIMITED"), "{answers:?}");
    }
    let _ = server.shutdown().await;
}

#[tokio::test]
async fn the_typed_client_sends_a_bearer_token() {
    let keys = keys();
    let server = serve(&keys, AuthMode::Required).await;
    assert!(
        FusionClient::connect_http(&server.url).await.is_err(),
        "no token: the connection is refused"
    );
    let token = rs256(&keys, &claims("heidi", "billing:write"));
    let client = FusionClient::connect_http_with_token(&server.url, &token)
        .await
        .unwrap_or_else(|e| panic!("connect with a token: {e}"));
    let outcome = client
        .call_tool("acct_whoami", json!({}))
        .await
        .unwrap_or_else(|e| panic!("call: {e}"));
    assert!(!outcome.is_error, "{outcome:?}");
    assert!(outcome.text().contains("heidi"), "{outcome:?}");
    let _ = server.shutdown().await;
}

/// base64url without padding (RFC 7515), for the JWKS below.
fn b64url(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ABC[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// The RSA modulus of a public key, from `openssl rsa -modulus`.
fn modulus(public_pem: &[u8]) -> Vec<u8> {
    let dir = fusion_tests::services::TempDir::new("jwks");
    let path = dir.join("pub.pem");
    std::fs::write(&path, public_pem).unwrap_or_else(|e| panic!("{e}"));
    let out = std::process::Command::new("openssl")
        .args(["rsa", "-pubin", "-modulus", "-noout", "-in"])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("openssl: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let hex = text.trim().trim_start_matches("Modulus=");
    (0..hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
        .collect()
}

#[test]
fn a_jwks_file_verifies_by_key_id() {
    let (one, two) = (key_pair("rsa"), key_pair("rsa"));
    let jwk = |kid: &str, k: &KeyPair| {
        json!({"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
               "n": b64url(&modulus(&k.public_pem)), "e": "AQAB"})
    };
    let dir = fusion_tests::services::TempDir::new("jwks");
    let path = dir.join("jwks.json");
    let set = json!({"keys": [jwk("one", &one), jwk("two", &two)]});
    std::fs::write(&path, set.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let verifier = JwtVerifier::new(RESOURCE)
        .issuer(ISSUER)
        .jwks_file(&path)
        .unwrap_or_else(|e| panic!("jwks: {e}"));
    let sign = |kid: &str, k: &KeyPair| {
        let key = EncodingKey::from_rsa_pem(&k.private_pem).unwrap_or_else(|e| panic!("{e}"));
        let mut header = jsonwebtoken::Header::new(Algorithm::RS256);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, &claims("ivan", "a"), &key).unwrap_or_else(|e| panic!("{e}"))
    };
    let p = verifier.verify_token(&sign("two", &two));
    assert_eq!(
        p.map(|p| p.subject().to_owned()).ok().as_deref(),
        Some("ivan")
    );
    assert!(
        verifier.verify_token(&sign("one", &two)).is_err(),
        "kid one, key two"
    );
    assert!(
        JwtVerifier::new(RESOURCE)
            .jwks_file(dir.join("missing.json"))
            .is_err()
    );
}
