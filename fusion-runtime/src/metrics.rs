//! What a running server counts, in the Prometheus / OpenMetrics text format: calls by tool,
//! action and outcome, their latency, the validation issues by tool, action, field and kind,
//! the calls that *healed* (succeeded after a `<validation_error>` for the same action from the
//! same client), refusals by bound, open connections, sessions and listens, Redis store errors
//! and upstream state.
//!
//! Off until [`enable`] is called (`serve --metrics ADDR` calls it and serves [`render`] at
//! `http://ADDR/metrics`); while off, every hook is one atomic load. One set of metrics per
//! process, as one `/metrics` endpoint describes one process.
//!
//! `tool` is the name the client called, as `tools/list` shows it (`billing_get_invoice` flat,
//! `billing` grouped); `action` the action's registered name (`billing.get_invoice`, empty for
//! a mounted tool). Label values are bounded: tool and action names are the server's own (a
//! name no tool has is `<unknown>`), outcomes are `ok`, `validation` or an envelope code,
//! fields come from the issue's path with array indices written `*`, and each label keeps at most
//! [`MAX_LABEL_VALUES`] distinct values (later ones are counted as `<other>`) — a client's
//! bytes never make a new series without bound.
//!
//! Built on `prometheus-client` (feature `metrics`): 2 crates beyond what the tree already
//! has, typed label sets, and the OpenMetrics text encoder Prometheus scrapes.
// The recording points are called from the transports (`mcp`: the HTTP listener's open
// connections and refusals), the gateway and the Redis stores; a build without one of them
// (`--no-default-features`, `server-stdio` alone) has the points it does not call.
#![cfg_attr(
    not(all(feature = "server-http", feature = "redis", feature = "gateway")),
    allow(dead_code, unused_imports)
)]

use std::borrow::Cow;
use std::time::Duration;

/// Distinct values one label keeps; beyond, a value is counted as `<other>`.
pub const MAX_LABEL_VALUES: usize = 1000;

/// How long after a `<validation_error>` a success of the same action by the same client counts
/// as healed.
pub const HEAL_WINDOW: Duration = Duration::from_secs(300);

/// Clients × actions remembered with a pending `<validation_error>`; when full, entries older
/// than [`HEAL_WINDOW`] are dropped, and if none is, the new failure is not remembered.
pub const MAX_PENDING_HEALS: usize = 10_000;

/// An HTTP refusal, by the bound that refused it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `413`: the body is over `max_body_bytes`.
    BodyTooLarge,
    /// `429`: a client over its sessions or listens.
    TooMany,
    /// `503`: the server's connections, sessions or a forwarded client's requests are full.
    Busy,
    /// `503` before any request is read: the connection caps.
    Connection,
}

impl Refusal {
    fn label(self) -> &'static str {
        match self {
            Refusal::BodyTooLarge => "413",
            Refusal::TooMany => "429",
            Refusal::Busy => "503",
            Refusal::Connection => "connection",
        }
    }
}

/// A gauge of things open now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// HTTP connections.
    Connections,
    /// MCP sessions (2025 streamable HTTP).
    Sessions,
    /// 2026-07-28 `subscriptions/listen` streams.
    Listens,
}

#[cfg(feature = "metrics")]
mod imp;
mod record;

#[cfg(feature = "metrics")]
pub use imp::{enable, enabled, render};
pub(crate) use record::{call, open, open_delta, refused, store_error, upstream, validation_issue};

/// Whether [`enable`] was called (always `false` without the `metrics` feature).
#[cfg(not(feature = "metrics"))]
pub fn enabled() -> bool {
    false
}

/// A call's outcome as counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome<'a> {
    /// Not an error.
    Ok,
    /// A `<validation_error>`.
    Validation,
    /// A `<tool_error>` with this code (or `other` when the text has none).
    Code(Cow<'a, str>),
}

impl Outcome<'_> {
    /// The label value.
    pub fn as_str(&self) -> &str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Validation => "validation",
            Outcome::Code(c) => c,
        }
    }
}

/// The outcome of a result: `is_error` and the text of its first block. Only an error's text
/// is read: the code of its `<tool_error code="…">`, if the code is a plain identifier of at
/// most 64 characters, else `other`.
pub fn outcome_of(is_error: bool, first_text: Option<&str>) -> Outcome<'_> {
    if !is_error {
        return Outcome::Ok;
    }
    let Some(text) = first_text.map(str::trim_start) else {
        return Outcome::Code(Cow::Borrowed("other"));
    };
    if text.starts_with("<validation_error") {
        return Outcome::Validation;
    }
    let code = text
        .strip_prefix("<tool_error code=\"")
        .and_then(|rest| rest.split_once('"'))
        .map(|(code, _)| code)
        .filter(|c| {
            !c.is_empty()
                && c.len() <= 64
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        });
    Outcome::Code(Cow::Borrowed(code.unwrap_or("other")))
}

/// A field path as a label: array indices become `*` (`items.0.sku` → `items.*.sku`), the
/// root is `(root)`.
pub fn field_label(path: &str) -> Cow<'_, str> {
    if path.is_empty() {
        return Cow::Borrowed("(root)");
    }
    if !path.split('.').any(is_index) {
        return Cow::Borrowed(path);
    }
    let parts: Vec<&str> = path
        .split('.')
        .map(|p| if is_index(p) { "*" } else { p })
        .collect();
    Cow::Owned(parts.join("."))
}

fn is_index(segment: &str) -> bool {
    !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes() {
        assert_eq!(
            outcome_of(false, Some("<tool_error code=\"X\">")),
            Outcome::Ok
        );
        assert_eq!(
            outcome_of(true, Some("<validation_error action=\"a\">")),
            Outcome::Validation
        );
        assert_eq!(
            outcome_of(
                true,
                Some("<tool_error code=\"NOT_FOUND\" severity=\"error\">")
            )
            .as_str(),
            "NOT_FOUND"
        );
        assert_eq!(outcome_of(true, Some("plain text")).as_str(), "other");
        assert_eq!(outcome_of(true, None).as_str(), "other");
        assert_eq!(
            outcome_of(true, Some("<tool_error code=\"a b\">")).as_str(),
            "other"
        );
    }

    #[test]
    fn fields() {
        assert_eq!(field_label(""), "(root)");
        assert_eq!(field_label("email"), "email");
        assert_eq!(field_label("items.0.sku"), "items.*.sku");
        assert_eq!(field_label("a.12.b.3"), "a.*.b.*");
    }
}
