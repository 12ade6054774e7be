//! The request span of a `tools/call`: the parent of the pipeline's stage spans, continuing
//! the client's W3C trace context (feature `otel`).
//!
//! The context is the request's `_meta.traceparent` / `_meta.tracestate` when it sends them
//! (the keys the 2026-07-28 specification reserves for it, `basic/index.mdx`, "OpenTelemetry
//! trace context"), else the HTTP request's `traceparent` / `tracestate` headers.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tracing::Span;
use tracing::field::Empty;

use crate::server::SPANS;

/// The span a `tools/call` runs in: `mcp.request`, with the method; the pipeline records the
/// tool, the client key and the outcome on it. Disabled (and free) when nothing listens.
pub(crate) fn call_span(cx: &RequestContext<RoleServer>) -> Span {
    let span = new_call_span();
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        #[cfg(feature = "server-http")]
        let header = |key: &str| {
            cx.extensions
                .get::<axum::http::request::Parts>()
                .and_then(|p| p.headers.get(key))
                .and_then(|v| v.to_str().ok())
        };
        #[cfg(not(feature = "server-http"))]
        let header = |_: &str| None::<&str>;
        continue_trace(
            &span,
            |key| cx.meta.0.get(key).and_then(|v| v.as_str()),
            header,
        );
    }
    #[cfg(not(feature = "otel"))]
    let _ = cx;
    span
}

/// [`call_span`] of a call rmcp never saw (`http::room`): the trace context of its `_meta`
/// (a 2026-07-28 call's; a 2025 call the room reads sent none), else of the HTTP request's
/// headers.
#[cfg(feature = "server-http")]
pub(crate) fn room_call_span(
    parts: &axum::http::request::Parts,
    meta: Option<&rmcp::model::RequestMetaObject>,
) -> Span {
    let span = new_call_span();
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        let header = |key: &str| parts.headers.get(key).and_then(|v| v.to_str().ok());
        let meta = |key: &str| meta.and_then(|m| m.0.get(key)).and_then(|v| v.as_str());
        continue_trace(&span, meta, header);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (parts, meta);
    span
}

fn new_call_span() -> Span {
    tracing::info_span!(
        target: SPANS,
        "mcp.request",
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.tool.name = Empty,
        fusion.client_key = Empty,
        fusion.outcome = Empty,
    )
}

/// Makes the client's trace context, when it sent one, the parent of `span`: the request's
/// `_meta` values (`meta`), else its HTTP headers' (`header`).
#[cfg(feature = "otel")]
fn continue_trace<'a>(
    span: &Span,
    meta: impl Fn(&str) -> Option<&'a str>,
    header: impl Fn(&str) -> Option<&'a str>,
) {
    use opentelemetry::propagation::TextMapPropagator;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let carrier = match meta("traceparent") {
        Some(parent) => Carrier {
            parent,
            state: meta("tracestate"),
        },
        None => match header("traceparent") {
            Some(parent) => Carrier {
                parent,
                state: header("tracestate"),
            },
            None => return,
        },
    };
    let parent = opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
    // A malformed `traceparent` extracts to an empty context: the span starts a new trace.
    let _ = span.set_parent(parent);
}

/// The two W3C trace-context values, as the propagator reads them.
#[cfg(feature = "otel")]
struct Carrier<'a> {
    parent: &'a str,
    state: Option<&'a str>,
}

#[cfg(feature = "otel")]
impl opentelemetry::propagation::Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => Some(self.parent),
            "tracestate" => self.state,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}
