//! Benches (2) and (3): validate + deserialize a valid 5-field input against bare serde into
//! the same struct; an invalid input with 3 problems to the full `<validation_error>` text.

mod common;

use std::hint::black_box;

use common::{Signup, interleaved, invalid_args, report, valid_args};
use criterion::{Criterion, criterion_group, criterion_main};
use fusion_runtime::ToolInput;
use serde::Deserialize;
use serde_json::Value;

fn invalid_text(v: &Value) -> usize {
    match Signup::from_arguments(v) {
        Ok(_) => 0,
        Err(report) => report.render("accounts.register").len(),
    }
}

fn validate(c: &mut Criterion) {
    let valid = valid_args();
    let invalid = invalid_args();
    assert!(
        Signup::from_arguments(&valid).is_ok(),
        "the valid input validates"
    );
    assert_eq!(
        fusion_runtime::__private::typed_accepts::<Signup>(&valid),
        Some(true),
        "the valid input takes the typed path"
    );
    match Signup::from_arguments(&invalid) {
        Ok(_) => panic!("the invalid input fails"),
        Err(r) => assert_eq!(r.issues().len(), 3, "{r}"),
    }

    // `from_arguments` borrows the arguments, as `T::deserialize(&value)` does: both sides
    // read the same parsed value, and the typed result is dropped on both sides.
    let mut g = c.benchmark_group("validate");
    g.bench_function("valid_5_fields_from_arguments", |b| {
        b.iter(|| Signup::from_arguments(black_box(&valid)).is_ok())
    });
    g.bench_function("baseline_bare_serde_deserialize", |b| {
        b.iter(|| Signup::deserialize(black_box(&valid)).is_ok())
    });
    g.bench_function("invalid_3_problems_to_validation_error_text", |b| {
        b.iter(|| invalid_text(black_box(&invalid)))
    });
    g.finish();

    // The figures again, interleaved so both sides of a ratio see the same load.
    let (ours, bare) = interleaved(
        || {
            black_box(Signup::from_arguments(black_box(&valid)).is_ok());
        },
        || {
            black_box(Signup::deserialize(black_box(&valid)).is_ok());
        },
        2_000,
        101,
    );
    report(
        "(2) Signup::from_arguments(valid 5-field input)",
        ours,
        "bare serde Signup::deserialize(&value)",
        bare,
        "<= 2.0x",
    );
    let (text, bare) = interleaved(
        || {
            black_box(invalid_text(black_box(&invalid)));
        },
        || {
            black_box(Signup::deserialize(black_box(&invalid)).is_ok());
        },
        1_000,
        51,
    );
    report(
        "(3) invalid input, 3 problems -> full <validation_error> text",
        text,
        "bare serde on the same input (fails at the first problem)",
        bare,
        "< 3000 ns",
    );
}

criterion_group!(benches, validate);
criterion_main!(benches);
