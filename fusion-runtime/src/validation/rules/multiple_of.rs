//! `multiple_of = n`: `multipleOf`, and its issue, `not_multiple_of`.

use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};

use super::num::{self, Num};
use super::{Change, Check, Declaration, Keyword, On, OwnIssue, Typed};
use crate::validation::IssueKind;
use crate::validation::sent::push_number;

/// The rule: its keyword, `jsonschema`'s error for it, and its issue.
pub(crate) const RULE: Declaration = Declaration {
    keywords: &[Keyword {
        name: "multipleOf",
        on: On::Number,
        change: Change::Divisor,
    }],
    reads: |error| match error {
        ValidationErrorKind::MultipleOf { multiple_of } => Some(IssueKind::NotMultipleOf {
            divisor: *multiple_of,
        }),
        _ => None,
    },
    issue: Some(OwnIssue {
        code: "not_multiple_of",
        is: |kind| matches!(kind, IssueKind::NotMultipleOf { .. }),
        problem: |kind, out| {
            if let IssueKind::NotMultipleOf { divisor } = kind {
                push_problem(out, *divisor);
            }
        },
        expected: |kind, out| {
            if let IssueKind::NotMultipleOf { divisor } = kind {
                push_expected(out, *divisor);
            }
        },
    }),
    attribute: |schema, integer| {
        let m = schema.get("multipleOf").and_then(Value::as_f64)?;
        (m > 0.0 && (!integer || m.fract() == 0.0))
            .then(|| format!("multiple_of = {}", num::literal(m, integer, true)))
    },
};

/// Its keyword.
pub fn keywords(divisor: Num, schema: &mut Map<String, Value>) {
    schema.insert("multipleOf".into(), divisor.to_json());
}

/// An integer by an integer divisor, exactly; a fraction (divisor or sent) is the engine's.
#[inline]
pub fn check(value: Typed<'_>, divisor: Num) -> Check {
    match (value, divisor) {
        (Typed::Int(x), Num::Int(d)) if d > 0 => Check::from_bool(x % i128::from(d) == 0),
        (Typed::Int(_) | Typed::Opaque, _) => Check::Engine,
        _ => Check::Pass,
    }
}

/// The problem: `Not a multiple of 5`.
pub fn push_problem(out: &mut String, divisor: f64) {
    out.push_str("Not a multiple of ");
    push_number(out, divisor);
}

/// The expected text: `a multiple of 5`.
pub fn push_expected(out: &mut String, divisor: f64) {
    out.push_str("a multiple of ");
    push_number(out, divisor);
}
