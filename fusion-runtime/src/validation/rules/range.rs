//! `range(..)`: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.

use serde_json::{Map, Value};

use super::num::{self, Num};
use jsonschema::error::ValidationErrorKind as K;

use super::{Change, Check, Declaration, Keyword, On, Typed};
use crate::validation::sent::push_number;
use crate::validation::{IssueKind, Measure};

/// The rule: its keywords and `jsonschema`'s errors for them (a bound, worded by its
/// [`Measure`]).
pub(crate) const RULE: Declaration = Declaration {
    keywords: &[
        Keyword {
            name: "minimum",
            on: On::Number,
            change: Change::Lower,
        },
        Keyword {
            name: "maximum",
            on: On::Number,
            change: Change::Upper,
        },
        Keyword {
            name: "exclusiveMinimum",
            on: On::Number,
            change: Change::Lower,
        },
        Keyword {
            name: "exclusiveMaximum",
            on: On::Number,
            change: Change::Upper,
        },
    ],
    reads: |error| {
        let (upper, limit, inclusive) = match error {
            K::Minimum { limit } => (false, limit, true),
            K::ExclusiveMinimum { limit } => (false, limit, false),
            K::Maximum { limit } => (true, limit, true),
            K::ExclusiveMaximum { limit } => (true, limit, false),
            _ => return None,
        };
        let limit = limit.as_f64().unwrap_or(0.0);
        Some(IssueKind::bound(upper, Measure::Number, limit, inclusive))
    },
    issue: None,
    attribute,
};

/// `range(..)`: the tighter of each inclusive and exclusive bound, when some number fits.
fn attribute(schema: &Value, integer: bool) -> Option<String> {
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let lower = match (num("minimum"), num("exclusiveMinimum")) {
        (Some(m), Some(e)) if e >= m => Some(("exclusive_min", e)),
        (Some(m), _) => Some(("min", m)),
        (None, Some(e)) => Some(("exclusive_min", e)),
        (None, None) => None,
    };
    let upper = match (num("maximum"), num("exclusiveMaximum")) {
        (Some(m), Some(e)) if e <= m => Some(("exclusive_max", e)),
        (Some(m), _) => Some(("max", m)),
        (None, Some(e)) => Some(("exclusive_max", e)),
        (None, None) => None,
    };
    let fits = match (lower, upper) {
        (Some(("min", l)), Some(("max", u))) => l <= u,
        (Some((_, l)), Some((_, u))) => l < u,
        _ => true,
    };
    let range: Vec<String> = [lower.map(|b| (b, true)), upper.map(|b| (b, false))]
        .into_iter()
        .flatten()
        .map(|((key, x), is_lower)| format!("{key} = {}", num::literal(x, integer, is_lower)))
        .collect();
    (fits && !range.is_empty()).then(|| format!("range({})", range.join(", ")))
}

/// Its keywords.
pub fn keywords(
    min: Option<Num>,
    max: Option<Num>,
    exclusive_min: Option<Num>,
    exclusive_max: Option<Num>,
    schema: &mut Map<String, Value>,
) {
    for (k, v) in [
        ("minimum", min),
        ("maximum", max),
        ("exclusiveMinimum", exclusive_min),
        ("exclusiveMaximum", exclusive_max),
    ] {
        if let Some(v) = v {
            schema.insert(k.into(), v.to_json());
        }
    }
}

/// An integer within the bounds, compared exactly (a float bound is rounded to the integers
/// it lets through); the bounds apply to numbers only, and a float sent is the engine's.
#[inline]
pub fn check(
    value: Typed<'_>,
    min: Option<Num>,
    max: Option<Num>,
    exclusive_min: Option<Num>,
    exclusive_max: Option<Num>,
) -> Check {
    let x = match value {
        Typed::Int(x) => x,
        Typed::Opaque => return Check::Engine,
        _ => return Check::Pass,
    };
    let ok = min.is_none_or(|b| lowest(b, false, 1).is_some_and(|lo| lo <= x))
        && max.is_none_or(|b| lowest(b, false, -1).is_some_and(|hi| x <= -hi))
        && exclusive_min.is_none_or(|b| lowest(b, true, 1).is_some_and(|lo| lo <= x))
        && exclusive_max.is_none_or(|b| lowest(b, true, -1).is_some_and(|hi| x <= -hi));
    Check::from_bool(ok)
}

/// The lowest integer above `sign * b` (`exclusive`) or at least `sign * b`; `None` when none
/// fits in `i128` (a bound no integer of a Rust type reaches). The highest integer below an
/// upper bound is the lowest above its negation (`sign` -1), negated.
fn lowest(b: Num, exclusive: bool, sign: i8) -> Option<i128> {
    match b {
        Num::Int(i) => Some(i128::from(sign) * i128::from(i) + i128::from(exclusive)),
        Num::Float(f) if f.is_nan() => None,
        Num::Float(f) => {
            let f = f64::from(sign) * f;
            let c = if exclusive { f.floor() + 1.0 } else { f.ceil() };
            // Integers of the Rust types are within ±2^64; beyond it the bound decides alone.
            if c <= -1.8e19 {
                Some(-i128::MAX)
            } else if c >= 1.8e19 {
                None
            } else {
                Some(c as i128)
            }
        }
    }
}

/// The problems, below and above the bounds.
pub const PROBLEMS: (&str, &str) = ("Too small", "Too large");

/// The expected text: `a number >= 1` (`>`, `<=`, `<`).
pub fn push_expected(out: &mut String, limit: f64, inclusive: bool, upper: bool) {
    out.push_str(match (upper, inclusive) {
        (false, true) => "a number >= ",
        (false, false) => "a number > ",
        (true, true) => "a number <= ",
        (true, false) => "a number < ",
    });
    push_number(out, limit);
}
