//! Bench (4): the full in-process pipeline for one action — route, validate, handler,
//! response — with valid and with invalid arguments. Routing (the billing example's
//! server): a grouped tool called by its `action`, against the same action's flat tool; an
//! unknown action in the grouped tool (the closest-name search included); an unknown tool.

mod common;

use std::hint::black_box;

use common::{
    Signup, TOOL, fusion_server, interleaved_owned, invalid_args, registered, report, valid_args,
};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use fusion_runtime::server::RequestScope;
use fusion_runtime::{JsonObject, ToolInput, ToolResponse};
use futures::executor::block_on;
use serde_json::Value;

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// The same work without the framework: validate, run the handler, answer the JSON. It takes
/// the arguments by value and drops them, as the pipeline does.
fn by_hand(args: JsonObject) -> ToolResponse {
    match Signup::from_arguments(&Value::Object(args)) {
        Ok(input) => match serde_json::to_value(registered(input)) {
            Ok(v) => ToolResponse::json(v),
            Err(e) => ToolResponse::text(e.to_string()),
        },
        Err(report) => ToolResponse::text(report.render("accounts.register")),
    }
}

fn pipeline(c: &mut Criterion) {
    let server = fusion_server();
    let valid = object(valid_args());
    let invalid = object(invalid_args());
    let call = |args: JsonObject| block_on(server.call(TOOL, Some(args), RequestScope::detached()));
    assert!(!call(valid.clone()).is_error, "the valid call succeeds");
    assert!(call(invalid.clone()).is_error, "the invalid call fails");

    let mut g = c.benchmark_group("pipeline");
    g.bench_function("valid_call", |b| {
        b.iter_batched(
            || valid.clone(),
            |a| black_box(call(a)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("invalid_call", |b| {
        b.iter_batched(
            || invalid.clone(),
            |a| black_box(call(a)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("baseline_by_hand_valid", |b| {
        b.iter_batched(
            || valid.clone(),
            |a| black_box(by_hand(a)),
            BatchSize::SmallInput,
        )
    });
    g.finish();

    for (what, args, budget) in [
        ("(4) pipeline, valid call", &valid, "< 1000 ns"),
        (
            "(4) pipeline, invalid call (3 problems)",
            &invalid,
            "< 4000 ns",
        ),
    ] {
        let (ours, base) = interleaved_owned(
            || args.clone(),
            |a| black_box(call(a)).is_error,
            |a| black_box(by_hand(a)).is_error,
            2_000,
            101,
        );
        report(
            what,
            ours,
            "the same validate + handler + response by hand, no routing/middleware",
            base,
            budget,
        );
    }
}

/// Routing through the billing example's server, flat and grouped (`billing` with `action`).
fn routing(c: &mut Criterion) {
    let build = |grouped: bool| {
        let builder = examples::billing::builder();
        let builder = if grouped { builder.grouped() } else { builder };
        match builder.build() {
            Ok(s) => s,
            Err(e) => panic!("the billing server builds: {e}"),
        }
    };
    let (flat, grouped) = (build(false), build(true));
    let call = |server: &fusion_runtime::Server, tool: &str, args: JsonObject| {
        block_on(server.call(tool, Some(args), RequestScope::detached()))
    };
    let get = object(serde_json::json!({"id": "inv_2026_0001"}));
    let by_action = object(serde_json::json!({"action": "get_invoice", "id": "inv_2026_0001"}));
    let typo = object(serde_json::json!({"action": "get_invoce", "id": "inv_2026_0001"}));
    let flat_get = call(&flat, "billing_get_invoice", get.clone());
    let grouped_get = call(&grouped, "billing", by_action.clone());
    assert!(
        !flat_get.is_error && !grouped_get.is_error,
        "both find the invoice"
    );
    assert_eq!(
        flat_get.texts().collect::<Vec<_>>(),
        grouped_get.texts().collect::<Vec<_>>()
    );
    let unknown_action = call(&grouped, "billing", typo.clone());
    let text: String = unknown_action.texts().collect();
    assert!(
        unknown_action.is_error && text.contains("UNKNOWN_ACTION") && text.contains("get_invoice"),
        "the closest action is named: {text}"
    );
    let unknown_tool = call(&flat, "billing_get_invoce", get.clone());
    let text: String = unknown_tool.texts().collect();
    assert!(
        unknown_tool.is_error && text.contains("billing_get_invoice"),
        "the closest tool is named: {text}"
    );

    let mut g = c.benchmark_group("routing");
    g.bench_function("flat_tool_get_invoice", |b| {
        b.iter_batched(
            || get.clone(),
            |a| black_box(call(&flat, "billing_get_invoice", a)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("grouped_tool_by_action_get_invoice", |b| {
        b.iter_batched(
            || by_action.clone(),
            |a| black_box(call(&grouped, "billing", a)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("grouped_unknown_action_closest_name", |b| {
        b.iter_batched(
            || typo.clone(),
            |a| black_box(call(&grouped, "billing", a)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("flat_unknown_tool_closest_name", |b| {
        b.iter_batched(
            || get.clone(),
            |a| black_box(call(&flat, "billing_get_invoce", a)),
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let (ours, base) = interleaved_owned(
        || (by_action.clone(), get.clone()),
        |(a, _)| black_box(call(&grouped, "billing", a)).is_error,
        |(_, a)| black_box(call(&flat, "billing_get_invoice", a)).is_error,
        1_000,
        51,
    );
    report(
        "routing, grouped tool by action (billing.get_invoice)",
        ours,
        "the same call through the flat tool",
        base,
        "none",
    );
}

/// The largest, worst-shaped requests under a 4 MiB body, through the billing server: each
/// answered with an envelope of at most `MAX_ENVELOPE_BYTES`, in time linear in the body.
fn hostile(c: &mut Criterion) {
    const BODY: usize = 4 << 20;
    let server = match examples::billing::server() {
        Ok(s) => s,
        Err(e) => panic!("the billing server builds: {e}"),
    };
    let call = |tool: &str, args: JsonObject| {
        block_on(server.call(tool, Some(args), RequestScope::detached()))
    };
    let one = |k: String, v: Value| -> JsonObject { std::iter::once((k, v)).collect() };
    let mut many_keys = one("id".into(), Value::from("inv_2026_0001"));
    // `"abcd":0,` is 9 bytes: 450,000 keys are about 4 MB.
    for i in 0..450_000usize {
        many_keys.insert(format!("{i:04x}"), Value::from(0));
    }
    let mut deep = Value::from(0);
    for _ in 0..127 {
        deep = Value::Object(one("a".into(), deep));
    }
    let mut deep_unknown = one("id".into(), Value::from("inv_2026_0001"));
    deep_unknown.insert("b".into(), deep.clone());
    let cases: Vec<(&str, String, JsonObject)> = vec![
        ("tool_name_4mib", "x".repeat(BODY - 256), JsonObject::new()),
        ("tool_name_128", "x".repeat(128), JsonObject::new()),
        ("unknown_keys_450k", "billing_get_invoice".into(), many_keys),
        (
            "unknown_key_4mib",
            "billing_get_invoice".into(),
            one("k".repeat(BODY - 256), Value::from(0)),
        ),
        (
            "deep_value_127",
            "billing_get_invoice".into(),
            one("id".into(), deep),
        ),
        (
            "deep_unknown_127",
            "billing_get_invoice".into(),
            deep_unknown,
        ),
        (
            "echoed_value_4mib",
            "billing_find_invoice".into(),
            one("id".into(), Value::from("v".repeat(BODY - 256))),
        ),
    ];
    let mut g = c.benchmark_group("hostile");
    g.sample_size(10);
    for (name, tool, args) in &cases {
        let r = call(tool, args.clone());
        let size = r.texts().map(str::len).max().unwrap_or(0);
        assert!(r.is_error, "{name} is refused");
        assert!(
            size <= fusion_runtime::envelope::MAX_ENVELOPE_BYTES,
            "{name}: {size} bytes"
        );
        println!("hostile/{name}: envelope of {size} bytes");
        g.bench_function(*name, |b| {
            b.iter_batched(
                || args.clone(),
                |a| black_box(call(tool, a)),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, pipeline, routing, hostile);
criterion_main!(benches);
