//! Bounded cost per request, whatever the input: a megabyte tool name, 100,000 unknown keys,
//! a megabyte key or value, through the spawned `billing-server` over stdio and through
//! streamable HTTP on 127.0.0.1, each answered with an envelope under `MAX_ENVELOPE_BYTES`;
//! and a property test of the bound through `Server::call_json`.
//!
//! The cost is counted, not timed: over stdio, the validation issues the server collected, read
//! from its own metrics (`serve --metrics`); over HTTP, where server and client run on the
//! test's thread, the bytes allocated on that thread during the call (this binary's global
//! allocator counts them). Both are the same whatever the machine's load. The allocations must
//! stay within a small multiple of the request's size, so a copy, a table or a list that grows
//! with the hostile input (an issue collected per key) shows; work that spends only CPU and
//! allocates nothing (a search through the bytes) does not: that is for the benches.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::time::Duration;

use fusion_runtime::client::{parse_tool_error, parse_validation_error};
use fusion_runtime::envelope::MAX_ENVELOPE_BYTES;
use fusion_runtime::mcp::HttpOptions;
use fusion_runtime::server::Exposure;
use fusion_runtime::validation::{MAX_COLLECTED_ISSUES, MAX_FIELD_LINES};
use fusion_runtime::{ErrorCode, JsonObject, Server, ToolResponse};
use fusion_tests::clients::{self, Client, billing_command, over_http, over_stdio};
use fusion_tests::raw_http;
use fusion_tests::services::free_port;
use proptest::prelude::*;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};

/// Stops a hang; not a claim about speed.
const LIMIT: Duration = Duration::from_secs(60);

/// Bytes a call may allocate, on top of [`ALLOCATED_PER_REQUEST_BYTE`] per byte of its request:
/// the connection's and the pipeline's own.
const ALLOCATED_BASE: u64 = 1 << 20;
/// Bytes a call with a long string may allocate per byte of its request: the request written,
/// read and parsed, the arguments checked, the answer written and read (10 to 14 measured).
const ALLOCATED_PER_REQUEST_BYTE: u64 = 24;
/// Bytes 100,000 unknown keys may allocate beyond the same keys sent as one unknown key's
/// value (the same request to write, read and parse, one issue): a few per key looked at (35
/// measured), and what the collected issues cost, at most [`MAX_COLLECTED_ISSUES`] of them.
/// An issue collected per key would be over 100 bytes per key.
fn allowed_for_unknown_keys(keys: u64) -> u64 {
    keys * 64 + MAX_COLLECTED_ISSUES as u64 * 4096
}

/// Counts the bytes each thread allocates (in [`ALLOCATED`]), and allocates with [`System`].
struct Counting;

thread_local! {
    /// Bytes allocated on this thread so far (grown reallocations count their growth).
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

fn count(bytes: usize) {
    let _ = ALLOCATED.try_with(|a| a.set(a.get().saturating_add(bytes as u64)));
}

// SAFETY: every call is passed to `System` unchanged; counting touches a thread-local `Cell`
// only (no allocation, no lock).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size.saturating_sub(layout.size()));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Bytes allocated on this thread so far.
fn allocated() -> u64 {
    ALLOCATED.try_with(Cell::get).unwrap_or(0)
}

async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    clients::bounded(what, LIMIT, f).await
}

fn billing() -> Server {
    examples::billing::server().unwrap_or_else(|e| panic!("{e}"))
}

/// How a test counts what a call cost the server.
#[derive(Clone, Copy)]
enum Meter {
    /// The spawned server's metrics at this address: validation issues collected.
    Metrics(SocketAddr),
    /// Bytes allocated on this thread, where the in-process server runs.
    Allocations,
}

/// What the server counted so far, as far as the [`Meter`] sees.
#[derive(Clone, Copy, Debug, Default)]
struct Count {
    /// Validation issues collected for `billing.get_invoice` (metrics only).
    issues: Option<u64>,
    /// Bytes allocated (in process only).
    allocated: Option<u64>,
}

/// The sum of every sample of `metric` whose labels start with `labels`.
fn sum(exposition: &str, metric: &str, labels: &str) -> u64 {
    exposition
        .lines()
        .filter_map(|l| {
            l.strip_prefix(metric)?
                .strip_prefix('{')?
                .strip_prefix(labels)
        })
        .filter_map(|rest| rest.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

impl Meter {
    async fn read(self) -> Count {
        match self {
            Meter::Allocations => Count {
                issues: None,
                allocated: Some(allocated()),
            },
            Meter::Metrics(addr) => {
                let r = bounded(
                    "scrape",
                    raw_http::request(addr, "GET", "/metrics", &[], ""),
                )
                .await
                .unwrap_or_else(|e| panic!("GET /metrics: {e}"));
                assert_eq!(r.status, 200, "{r:?}");
                let issues = sum(
                    &r.body,
                    "fusion_validation_issues_total",
                    "tool=\"billing_get_invoice\",",
                );
                Count {
                    issues: Some(issues),
                    allocated: None,
                }
            }
        }
    }
}

/// Bytes a call with a long string may allocate: [`ALLOCATED_PER_REQUEST_BYTE`] per byte of the
/// request, and [`ALLOCATED_BASE`].
fn allowed(request_bytes: usize) -> u64 {
    ALLOCATED_BASE + ALLOCATED_PER_REQUEST_BYTE * request_bytes as u64
}

/// What happened between two [`Count`]s, checked: `issues` collected (where counted) within
/// the range, bytes allocated (where counted) at most `allowed`. Returns the bytes allocated
/// (0 where not counted).
fn check(
    transport: &str,
    what: &str,
    (before, after): (Count, Count),
    allowed: u64,
    issues: RangeInclusive<u64>,
) -> u64 {
    if let (Some(b), Some(a)) = (before.issues, after.issues) {
        let n = a - b;
        assert!(
            issues.contains(&n),
            "{transport}: {what}: the server collected {n} validation issues, expected {issues:?}"
        );
        println!("{transport}: {what}: {n} validation issues collected");
    }
    let Some(n) = before.allocated.zip(after.allocated).map(|(b, a)| a - b) else {
        return 0;
    };
    assert!(
        n <= allowed,
        "{transport}: {what}: {n} bytes allocated, more than {allowed}"
    );
    if allowed == u64::MAX {
        println!("{transport}: {what}: {n} bytes allocated");
    } else {
        println!("{transport}: {what}: {n} bytes allocated (at most {allowed})");
    }
    n
}

/// The size of a `tools/call` of `tool` with `arguments`, as sent.
fn request_bytes(tool: &str, arguments: &JsonObject) -> usize {
    serde_json::to_string(&json!({"name": tool, "arguments": arguments}))
        .map(|s| s.len())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Calls `tool`, and returns the result with what the server counted before and after.
async fn counted_call(
    client: &Client,
    meter: Meter,
    tool: String,
    arguments: JsonObject,
) -> (CallToolResult, (Count, Count)) {
    let before = meter.read().await;
    let result = call(client, tool, arguments).await;
    (result, (before, meter.read().await))
}

async fn call(client: &Client, tool: String, arguments: JsonObject) -> CallToolResult {
    bounded(
        "hostile call",
        client.call_tool(CallToolRequestParams::new(tool).with_arguments(arguments)),
    )
    .await
    .unwrap_or_else(|e| panic!("a JSON-RPC error instead of a result: {e}"))
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

/// The hostile calls, through whatever transport `client` uses, their cost counted by `meter`.
async fn hostile_calls(client: &Client, transport: &str, meter: Meter) {
    let collected = MAX_FIELD_LINES as u64..=MAX_COLLECTED_ISSUES as u64;

    // A 1 MB tool name: no search, no echo.
    let name = "x".repeat(1_000_000);
    let size = request_bytes(&name, &JsonObject::new());
    let (r, counts) = counted_call(client, meter, name, JsonObject::new()).await;
    let text = envelope(&r);
    let e = parse_tool_error(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(e.code(), &ErrorCode::UnknownAction);
    assert_eq!(e.detail_value("length"), Some("1000000"));
    check(transport, "a 1 MB tool name", counts, allowed(size), 0..=0);

    // The same 100,000 keys as the value of one unknown key: what writing, reading and
    // parsing them costs, with one issue.
    let mut args = JsonObject::new();
    args.insert("id".into(), json!("inv_2026_0001"));
    args.insert("extra".into(), Value::Object(many_keys()));
    let (r, counts) = counted_call(client, meter, "billing_get_invoice".into(), args).await;
    let text = envelope(&r);
    assert!(
        text.contains("Unrecognized key 'extra'"),
        "{transport}: {text}"
    );
    let parse = check(
        transport,
        "100,000 keys as one key's value",
        counts,
        u64::MAX,
        1..=1,
    );

    // 100,000 unknown keys: 20 lines, the rest counted, no more issues collected than the
    // collection's bound, and no more allocated than reading them and those issues cost.
    let args = many_keys();
    let (r, counts) = counted_call(client, meter, "billing_get_invoice".into(), args).await;
    let text = envelope(&r);
    let parsed = parse_validation_error(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(parsed.fields.len(), 20);
    assert!(
        text.contains("<omitted count=\"99980\">"),
        "{transport}: {text}"
    );
    let many_allowed = parse + allowed_for_unknown_keys(100_000);
    check(
        transport,
        "100,000 unknown keys",
        counts,
        many_allowed,
        collected.clone(),
    );

    // A 1 MB key: cut, and no did-you-mean search.
    let mut args = JsonObject::new();
    args.insert("id".into(), json!("inv_2026_0001"));
    args.insert("i".repeat(1_000_000), json!(1));
    let size = request_bytes("billing_get_invoice", &args);
    let (r, counts) = counted_call(client, meter, "billing_get_invoice".into(), args).await;
    let text = envelope(&r);
    assert!(text.contains(&format!("Unrecognized key '{}...'", "i".repeat(47))));
    check(
        transport,
        "a 1 MB unknown key",
        counts,
        allowed(size),
        1..=1,
    );

    // A 1 MB value the handler echoes in its own envelope (NOT_FOUND with the ID sent).
    let mut args = JsonObject::new();
    args.insert("id".into(), json!("v".repeat(1_000_000)));
    let size = request_bytes("billing_find_invoice", &args);
    let (r, counts) = counted_call(client, meter, "billing_find_invoice".into(), args).await;
    let text = envelope(&r);
    let e = parse_tool_error(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(e.code(), &ErrorCode::NotFound);
    let echoed = "a 1 MB value echoed by the handler";
    check(transport, echoed, counts, allowed(size), 0..=0);

    // Two hostile calls at once beside an ordinary one: the ordinary one is answered, and the
    // three together cost what their requests bound.
    let mut args = JsonObject::new();
    args.insert("limit".into(), json!(1));
    let (name, keys) = ("y".repeat(1_000_000), many_keys());
    let all_allowed = allowed(request_bytes(&name, &JsonObject::new()))
        + many_allowed
        + allowed(request_bytes("billing_list_invoices", &args));
    let before = meter.read().await;
    let (a, b, ordinary) = tokio::join!(
        call(client, name, JsonObject::new()),
        call(client, "billing_get_invoice".into(), keys),
        call(client, "billing_list_invoices".into(), args),
    );
    let after = meter.read().await;
    envelope(&a);
    envelope(&b);
    assert_eq!(ordinary.is_error, Some(false), "{ordinary:?}");
    check(
        transport,
        "two hostile calls and an ordinary one at once",
        (before, after),
        all_allowed,
        collected,
    );
}

#[tokio::test]
async fn stdio_hostile_requests_cost_little_and_answer_little() {
    let metrics: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let mut command = billing_command(env!("CARGO_BIN_EXE_billing-server"));
    command.arg("--metrics").arg(metrics.to_string());
    let client = over_stdio(command).await;
    hostile_calls(&client, "stdio", Meter::Metrics(metrics)).await;
    let _ = client.cancel().await;
}

/// On the test's one thread (tokio's current-thread runtime): the server's allocations are
/// counted with the client's.
#[tokio::test(flavor = "current_thread")]
async fn http_hostile_requests_cost_little_and_answer_little() {
    let (client, running) = over_http(billing(), HttpOptions::default()).await;
    hostile_calls(&client, "http", Meter::Allocations).await;
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

/// Bytes the call with a 1,000-level value may allocate (about 670 KB measured; a description
/// of each level with what it holds would be megabytes).
const DEEP_ALLOCATED: u64 = 1 << 20;

/// A deeply nested value built in-process (serde_json's parser stops at 128 levels; a
/// `Value` built in code has no such limit) is described, not walked, in the envelope.
#[tokio::test]
async fn a_deep_value_built_in_process_is_not_walked() {
    let mut deep = json!("bottom");
    for _ in 0..1_000 {
        deep = json!({ "a": [deep] });
    }
    let server = billing();
    let arguments = json!({ "id": deep.clone(), "extra": deep.clone() });
    let before = allocated();
    let r = server.call_json("billing_get_invoice", arguments).await;
    // Counted on this thread, where `call_json` runs: the envelope's description of the value,
    // not a copy or a rendering of its 1,000 levels.
    let spent = allocated() - before;
    assert!(spent <= DEEP_ALLOCATED, "{spent} bytes allocated");
    println!("a 1,000-level value: {spent} bytes allocated");
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
