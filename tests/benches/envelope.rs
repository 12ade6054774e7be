//! Bench (1): rendering the SPEC §1 example envelope (`NOT_FOUND`: 1 action, 1 detail, nothing
//! to escape), alone and with the builder chain; and the anchor's fixture (MCP Fusion's
//! envelope bench: `RATE_LIMITED`, 2 actions, 2 details, `retry_after`, and `" & <` to escape
//! in the message), so the figures compare with the anchor's.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use fusion_runtime::{ErrorCode, ToolError, error};

fn seed() -> ToolError {
    error(ErrorCode::NotFound, "No invoice with that ID")
        .recovery("List invoices first, then retry with a real ID")
        .available_actions(["billing.list_invoices"])
        .details([("requestedId", "inv_2026_9999")])
        .retry_after(30)
}

/// The anchor's fixture, as its bench builds it.
fn anchor() -> ToolError {
    error(
        ErrorCode::RateLimited,
        "Too many requests for workspace \"ws_1\" & user <u_2>.",
    )
    .recovery("Wait and retry; call quota.status first.")
    .available_actions(["quota.status", "billing.upgrade"])
    .details([("limit", "100"), ("window", "60s")])
    .retry_after(30)
}

fn envelope(c: &mut Criterion) {
    let rendered = anchor().into_rendered();
    for needle in [
        "code=\"RATE_LIMITED\"",
        "workspace \"ws_1\" &amp; user &lt;u_2>.",
        "<action>billing.upgrade</action>",
        "<detail key=\"window\">60s</detail>",
        "<retry_after>30 seconds</retry_after>",
    ] {
        assert!(rendered.contains(needle), "{needle} in {rendered}");
    }

    let mut g = c.benchmark_group("envelope");
    g.bench_function("render_spec_example", |b| {
        let e = seed();
        // Clone outside the timing would hit the render cache: time a fresh render each time.
        b.iter_batched(
            || e.clone(),
            |e| black_box(e.into_rendered()),
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("builder_chain_and_render", |b| {
        b.iter(|| black_box(seed().into_rendered()))
    });
    g.bench_function("render_anchor_rate_limited", |b| {
        let e = anchor();
        b.iter_batched(
            || e.clone(),
            |e| black_box(e.into_rendered()),
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("anchor_builder_chain_and_render", |b| {
        b.iter(|| black_box(anchor().into_rendered()))
    });
    g.bench_function("baseline_push_str_same_text", |b| {
        // The floor: the same bytes written with push_str and no escaping or options.
        b.iter(|| {
            let mut s = String::with_capacity(400);
            s.push_str("<tool_error code=\"NOT_FOUND\" severity=\"error\">\n  <message>");
            s.push_str(black_box("No invoice with that ID"));
            s.push_str("</message>\n  <recovery>");
            s.push_str(black_box("List invoices first, then retry with a real ID"));
            s.push_str("</recovery>\n  <available_actions>\n    <action>");
            s.push_str(black_box("billing.list_invoices"));
            s.push_str(
                "</action>\n  </available_actions>\n  <details>\n    <detail key=\"requestedId\">",
            );
            s.push_str(black_box("inv_2026_9999"));
            s.push_str(
                "</detail>\n  </details>\n  <retry_after>30 seconds</retry_after>\n</tool_error>",
            );
            black_box(s)
        })
    });
    g.finish();
}

criterion_group!(benches, envelope);
criterion_main!(benches);
