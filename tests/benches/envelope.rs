//! Bench (1): rendering the SPEC §1 example envelope, alone and with the builder chain.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use fusion_runtime::{ErrorCode, ToolError, error};

fn seed() -> ToolError {
    error(ErrorCode::NotFound, "No invoice with that ID")
        .suggest("List invoices first, then retry with a real ID")
        .actions(["billing.list_invoices"])
        .details([("requestedId", "inv_2026_9999")])
        .retry_after(30)
}

fn envelope(c: &mut Criterion) {
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
