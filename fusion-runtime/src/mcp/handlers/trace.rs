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

/// The span a `tools/call` runs in, however it was read (by rmcp, or by the HTTP side):
/// `mcp.request`, with the method; the pipeline records the tool, the client key and the
/// outcome on it. It continues the trace context of the request's `_meta` (`meta`), else of
/// its HTTP headers (`header`). Disabled (and free) when nothing listens.
pub(crate) fn call_span<'a>(
    meta: Option<&'a crate::input::JsonObject>,
    header: impl Fn(&str) -> Option<&'a str>,
) -> Span {
    let span = new_call_span();
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        let meta = |key: &str| meta.and_then(|m| m.get(key)).and_then(|v| v.as_str());
        continue_trace(&span, meta, header);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (meta, header);
    span
}

/// [`call_span`] of a request rmcp read: its `_meta`, and over HTTP its headers.
pub(crate) fn rmcp_call_span(cx: &RequestContext<RoleServer>) -> Span {
    #[cfg(feature = "server-http")]
    let parts = cx.extensions.get::<axum::http::request::Parts>();
    call_span(Some(&cx.meta.0), |key: &str| {
        #[cfg(feature = "server-http")]
        return parts
            .and_then(|p| p.headers.get(key))
            .and_then(|v| v.to_str().ok());
        #[cfg(not(feature = "server-http"))]
        {
            let _ = key;
            None
        }
    })
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
