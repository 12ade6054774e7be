//! The recording points: one function per thing counted, called where it happens. Each is
//! one atomic load while metrics are off, and nothing at all without the `metrics` feature.

use std::time::Duration;

#[cfg(feature = "metrics")]
use super::imp;
use super::{Open, Outcome, Refusal};

/// A call's end: `called` is the tool as clients call it and the action's registered name
/// (`""` for a mounted tool; `None`: no tool has the name sent), `outcome` its result (see
/// [`outcome_of`](super::outcome_of)), `client` who made it (for healing), `elapsed` its time.
#[inline]
pub(crate) fn call(
    called: Option<(&str, &str)>,
    outcome: &Outcome<'_>,
    client: &str,
    elapsed: Duration,
) {
    #[cfg(feature = "metrics")]
    if let Some(m) = imp::get() {
        m.call(called, outcome, client, elapsed);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (called, outcome, client, elapsed);
}

/// One validation issue of a call (the tool called, the action's name): at `field` (its
/// path as rendered), of `kind` (`invalid_type`, `missing`, …).
#[inline]
pub(crate) fn validation_issue(called: (&str, &str), field: &str, kind: &'static str) {
    #[cfg(feature = "metrics")]
    if let Some(m) = imp::get() {
        m.validation_issue(called, field, kind);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (called, field, kind);
}

/// An HTTP request or connection refused by a bound.
#[inline]
pub(crate) fn refused(refusal: Refusal) {
    #[cfg(feature = "metrics")]
    if let Some(m) = imp::get() {
        m.refused(refusal);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = refusal;
}

/// Sets a gauge of things open now.
#[inline]
pub(crate) fn open(what: Open, now: usize) {
    #[cfg(feature = "metrics")]
    if let Some(m) = imp::get() {
        m.open(what, now);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (what, now);
}

/// One more (`+1`) or one fewer (`-1`) of a gauge of things open now.
#[inline]
pub(crate) fn open_delta(what: Open, delta: i64) {
    #[cfg(feature = "metrics")]
    if let Some(m) = imp::get() {
        m.open_delta(what, delta);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (what, delta);
}

/// A shared store (`rate_limit`, `once`, `bus`, `tasks`) failed to answer.
#[inline]
pub(crate) fn store_error(store: &'static str) {
    #[cfg(feature = "metrics")]
    if let Some(m) = imp::get() {
        m.store_error(store);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = store;
}

/// A mounted upstream's state: `up` when its last connection attempt succeeded.
#[inline]
pub(crate) fn upstream(name: &str, up: bool) {
    #[cfg(feature = "metrics")]
    if let Some(m) = imp::get() {
        m.upstream(name, up);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (name, up);
}
