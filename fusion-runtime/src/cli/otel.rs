//! `serve --otlp-endpoint` (feature `otel`): the request and stage spans exported as
//! OTLP/HTTP protobuf, batched on a background thread, flushed when the server stops.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::filter::{LevelFilter, Targets};

/// The exporter's pipeline for `endpoint` (a collector's base URL; `/v1/traces` is
/// appended, as `OTEL_EXPORTER_OTLP_ENDPOINT` specifies), the service named
/// `OTEL_SERVICE_NAME` or else `server`.
pub(crate) fn provider(endpoint: &str, server: &str) -> anyhow::Result<SdkTracerProvider> {
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .build()?;
    let service = std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| server.to_owned());
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name(service).build())
        .build())
}

/// The layer that turns spans into OpenTelemetry spans: Fusion's, and a handler's own at
/// `info` and above; not the HTTP stack's, nor the exporter's own (it would trace itself).
pub(crate) fn layer<S>(provider: &SdkTracerProvider) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    let filter = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("rmcp", LevelFilter::WARN)
        .with_target("opentelemetry", LevelFilter::OFF)
        .with_target("opentelemetry_sdk", LevelFilter::OFF)
        .with_target("opentelemetry_otlp", LevelFilter::OFF)
        .with_target("opentelemetry_http", LevelFilter::OFF)
        .with_target("reqwest", LevelFilter::OFF)
        .with_target("hyper", LevelFilter::OFF)
        .with_target("hyper_util", LevelFilter::OFF)
        .with_target("h2", LevelFilter::OFF);
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("fusion-runtime"))
        .with_filter(filter)
}

/// Sends the spans still batched, then stops the exporter (on its own thread: it blocks).
pub(crate) async fn shutdown(provider: SdkTracerProvider) {
    let stopped = tokio::task::spawn_blocking(move || provider.shutdown()).await;
    if let Ok(Err(e)) = stopped {
        eprintln!("fusion: flushing the OTLP spans failed: {e}");
    }
}
