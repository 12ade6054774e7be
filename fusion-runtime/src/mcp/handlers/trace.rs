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
    let span = tracing::info_span!(
        target: SPANS,
        "mcp.request",
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.tool.name = Empty,
        fusion.client_key = Empty,
        fusion.outcome = Empty,
    );
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        continue_trace(&span, cx);
    }
    #[cfg(not(feature = "otel"))]
    let _ = cx;
    span
}

/// Makes the client's trace context, when it sent one, the parent of `span`.
#[cfg(feature = "otel")]
fn continue_trace(span: &Span, cx: &RequestContext<RoleServer>) {
    use opentelemetry::propagation::TextMapPropagator;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let meta = |key: &str| cx.meta.0.get(key).and_then(|v| v.as_str());
    #[cfg(feature = "server-http")]
    let header = |key: &str| {
        cx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get(key))
            .and_then(|v| v.to_str().ok())
    };
    #[cfg(not(feature = "server-http"))]
    let header = |_: &str| None::<&str>;
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
