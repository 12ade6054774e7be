//! Bench (4): the full in-process pipeline for one action — route, validate, handler,
//! response — with valid and with invalid arguments.

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

criterion_group!(benches, pipeline);
criterion_main!(benches);
