//! Bounded cost per request, whatever the input: a megabyte tool name, 100,000 unknown keys,
//! a megabyte key or value, through the spawned `billing-server` over stdio and through
//! streamable HTTP on 127.0.0.1, each answered fast with an envelope under
//! `MAX_ENVELOPE_BYTES`; and a property test of the bound through `Server::call_json`.

use std::time::{Duration, Instant};

use fusion_runtime::client::{parse_tool_error, parse_validation_error};
use fusion_runtime::envelope::MAX_ENVELOPE_BYTES;
use fusion_runtime::mcp::HttpOptions;
use fusion_runtime::server::Exposure;
use fusion_runtime::{ErrorCode, JsonObject, Server, ToolResponse};
use fusion_tests::clients::{self, Client, billing_command, over_http, over_stdio};
use proptest::prelude::*;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};

/// Generous: a hostile call is answered in milliseconds; CI is a loaded 2-core machine.
const FAST: Duration = Duration::from_secs(5);
/// For 100,000 keys: in a debug build, parsing and writing the 800 KB request on both sides of
/// the transport alone takes about a second of CPU (0.6 s measured for serde_json's parse).
const MANY: Duration = Duration::from_secs(15);
const LIMIT: Duration = Duration::from_secs(60);

async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    clients::bounded(what, LIMIT, f).await
}

fn billing() -> Server {
    examples::billing::server().unwrap_or_else(|e| panic!("{e}"))
}

/// Calls `tool`, and returns the result with how long it took.
async fn timed_call(
    client: &Client,
    tool: String,
    arguments: JsonObject,
) -> (CallToolResult, Duration) {
    let started = Instant::now();
    let result = bounded(
        "hostile call",
        client.call_tool(CallToolRequestParams::new(tool).with_arguments(arguments)),
    )
    .await
    .unwrap_or_else(|e| panic!("a JSON-RPC error instead of a result: {e}"));
    (result, started.elapsed())
}

fn texts(r: &CallToolResult) -> Vec<String> {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// The one envelope of an error result, checked against the bound.
fn envelope(r: &CallToolResult) -> String {
    assert_eq!(r.is_error, Some(true));
    let t = texts(r);
    assert_eq!(t.len(), 1, "one envelope");
    let text = t.into_iter().next().unwrap_or_default();
    assert!(
        text.len() <= MAX_ENVELOPE_BYTES,
        "an envelope of {} bytes",
        text.len()
    );
    text
}

/// 100,000 distinct keys of three characters (about 800 KB of JSON), plus `id`.
fn many_keys() -> JsonObject {
    const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut args = JsonObject::new();
    args.insert("id".into(), json!("inv_2026_0001"));
    for i in 0..100_000usize {
        let key: String = [i / (62 * 62), (i / 62) % 62, i % 62]
            .iter()
            .map(|&d| char::from(ALPHABET[d]))
            .collect();
        args.insert(key, json!(0));
    }
    args
}

/// The hostile calls, through whatever transport `client` uses; prints what each cost.
async fn hostile_calls(client: &Client, transport: &str) {
    // A 1 MB tool name: no search, no echo.
    let name = "x".repeat(1_000_000);
    let (r, took) = timed_call(client, name, JsonObject::new()).await;
    let text = envelope(&r);
    let e = parse_tool_error(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(e.code(), &ErrorCode::UnknownAction);
    assert_eq!(e.detail_value("length"), Some("1000000"));
    assert!(took < FAST, "{transport}: a 1 MB tool name took {took:?}");
    println!(
        "{transport}: 1 MB tool name: {took:?}, {} bytes",
        text.len()
    );

    // 100,000 unknown keys: 20 lines, the rest counted.
    let (r, took) = timed_call(client, "billing_get_invoice".into(), many_keys()).await;
    let text = envelope(&r);
    let parsed = parse_validation_error(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(parsed.fields.len(), 20);
    assert!(
        text.contains("<omitted count=\"99980\">"),
        "{transport}: {text}"
    );
    assert!(
        took < FAST,
        "{transport}: 100,000 unknown keys took {took:?}"
    );
    println!(
        "{transport}: 100,000 unknown keys: {took:?}, {} bytes",
        text.len()
    );

    // A 1 MB key: cut, and no did-you-mean search.
    let mut args = JsonObject::new();
    args.insert("id".into(), json!("inv_2026_0001"));
    args.insert("i".repeat(1_000_000), json!(1));
    let (r, took) = timed_call(client, "billing_get_invoice".into(), args).await;
    let text = envelope(&r);
    assert!(text.contains(&format!("Unrecognized key '{}...'", "i".repeat(47))));
    assert!(took < FAST, "{transport}: a 1 MB key took {took:?}");
    println!(
        "{transport}: 1 MB unknown key: {took:?}, {} bytes",
        text.len()
    );

    // A 1 MB value the handler echoes in its own envelope (NOT_FOUND with the ID sent).
    let mut args = JsonObject::new();
    args.insert("id".into(), json!("v".repeat(1_000_000)));
    let (r, took) = timed_call(client, "billing_find_invoice".into(), args).await;
    let text = envelope(&r);
    let e = parse_tool_error(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(e.code(), &ErrorCode::NotFound);
    assert!(
        took < FAST,
        "{transport}: a 1 MB echoed value took {took:?}"
    );
    println!(
        "{transport}: 1 MB value echoed by the handler: {took:?}, {} bytes",
        text.len()
    );

    // Two hostile calls at once do not hold up an ordinary one.
    let mut args = JsonObject::new();
    args.insert("limit".into(), json!(1));
    let (a, b, (ordinary, took)) = tokio::join!(
        timed_call(client, "y".repeat(1_000_000), JsonObject::new()),
        timed_call(client, "billing_get_invoice".into(), many_keys()),
        timed_call(client, "billing_list_invoices".into(), args),
    );
    envelope(&a.0);
    envelope(&b.0);
    assert_eq!(ordinary.is_error, Some(false));
    assert!(took < MANY, "{transport}: the ordinary call took {took:?}");
    println!(
        "{transport}: an ordinary call beside two hostile ones: {took:?} (they took {:?} and {:?})",
        a.1, b.1
    );
}

#[tokio::test]
async fn stdio_hostile_requests_cost_little_and_answer_little() {
    let client = over_stdio(billing_command(env!("CARGO_BIN_EXE_billing-server"))).await;
    hostile_calls(&client, "stdio").await;
    let _ = client.cancel().await;
}

#[tokio::test]
async fn http_hostile_requests_cost_little_and_answer_little() {
    let (client, running) = over_http(billing(), HttpOptions::default()).await;
    hostile_calls(&client, "http").await;
    let _ = client.cancel().await;
    bounded("shutdown", running.shutdown())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Every envelope of a response is within the bound (a successful result's JSON is not an
/// envelope; its warnings are).
fn assert_bounded(r: &ToolResponse) -> Result<(), TestCaseError> {
    for t in r.texts() {
        if r.is_error || t.starts_with("<tool_error") {
            prop_assert!(t.len() <= MAX_ENVELOPE_BYTES, "{} bytes", t.len());
        }
    }
    Ok(())
}

/// Any JSON value, nested up to eight levels, strings and keys up to a few KB.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,64}".prop_map(Value::String),
        (0usize..4000, "[a-z<&\"é\u{0}]").prop_map(|(n, s)| Value::String(s.repeat(n))),
    ];
    leaf.prop_recursive(8, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Keys and names: billing's own, short ones, long ones.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "id",
            "invoice_id",
            "email",
            "days_overdue",
            "amount_cents",
            "status",
            "limit",
            "reason",
            "action",
            "duration_ms",
        ])
        .prop_map(str::to_owned),
        "\\PC{0,40}",
        (0usize..3000, "[a-z.<&\"é]{1,3}").prop_map(|(n, s)| s.repeat(n)),
    ]
}

fn tool() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "billing",
            "billing_get_invoice",
            "billing_send_reminder",
            "billing_charge",
            "billing_find_invoice",
            "billing_void_invoice",
            "billing_list_invoices",
            "billing_get_invoicx",
        ])
        .prop_map(str::to_owned),
        key(),
    ]
}

/// Arguments: a few values, or many keys of one shape.
fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::btree_map(key(), value(), 0..12)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        (0usize..3000, "[a-z]{1,6}").prop_map(|(n, stem)| {
            Value::Object((0..n).map(|i| (format!("{stem}{i}"), json!(i))).collect())
        }),
        value(),
    ]
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(64))]

    /// No tool name, key, value, nesting or count pushes an envelope past the bound, flat or
    /// grouped (where the discriminator's value is the client's too).
    #[test]
    fn no_input_pushes_an_envelope_past_the_bound(
        tool in tool(),
        args in arguments(),
        action in prop::option::of(prop_oneof![key().prop_map(Value::String), value()]),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let flat = billing();
        let grouped = examples::billing::builder()
            .exposure(Exposure::Grouped { discriminator: "action".into() })
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut grouped_args = args.clone();
        if let (Some(a), Value::Object(m)) = (action, &mut grouped_args) {
            m.insert("action".into(), a);
        }
        let r = runtime.block_on(flat.call_json(&tool, args));
        assert_bounded(&r)?;
        let r = runtime.block_on(grouped.call_json("billing", grouped_args));
        assert_bounded(&r)?;
    }
}

/// A deeply nested value built in-process (serde_json's parser stops at 128 levels; a
/// `Value` built in code has no such limit) is described, not walked, in the envelope.
#[tokio::test]
async fn a_deep_value_built_in_process_is_not_walked() {
    let mut deep = json!("bottom");
    for _ in 0..1_000 {
        deep = json!({ "a": [deep] });
    }
    let server = billing();
    let started = Instant::now();
    let r = server
        .call_json(
            "billing_get_invoice",
            json!({ "id": deep.clone(), "extra": deep.clone() }),
        )
        .await;
    assert!(started.elapsed() < FAST);
    let text = r.texts().next().unwrap_or_default().to_owned();
    assert!(r.is_error && text.len() <= MAX_ENVELOPE_BYTES, "{text}");
    assert!(text.contains(r#"You sent: {"a":[{"a":[{"a":["#), "{text}");
    // Taken apart level by level: dropping 1,000 levels at once recurses 2,000 frames deep.
    while let Value::Object(mut m) = deep {
        deep = match m.remove("a") {
            Some(Value::Array(mut items)) => items.pop().unwrap_or(Value::Null),
            _ => Value::Null,
        };
    }
}
