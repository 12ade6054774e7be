//! OpenTelemetry traces (feature `otel`): the billing example, `serve --otlp-endpoint`,
//! exports its request and stage spans as OTLP/HTTP protobuf to a receiver in this test.
//!
//! No OpenTelemetry collector is packaged for Debian, so the receiver is a loopback HTTP
//! server here that accepts `POST /v1/traces`, and the bodies are decoded with the official
//! protobuf definitions (the `opentelemetry-proto` crate, generated from them).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fusion_tests::raw_http;
use fusion_tests::services::{Instance, mint, now};
use jsonwebtoken::{Algorithm, EncodingKey};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};

const SECRET: &str = "otel-secret-of-at-least-32-bytes-for-hs256";
const ISSUER: &str = "https://auth.example.com";
const RESOURCE: &str = "http://127.0.0.1/mcp";
/// The client's trace, sent as the HTTP header.
const HEADER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const HEADER_PARENT: &str = "00f067aa0ba902b7";
/// The client's trace, sent in `_meta` (2026-07-28).
const META_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const META_PARENT: &str = "b7ad6b7169203331";

/// Every body posted to `/v1/traces`.
type Bodies = Arc<Mutex<Vec<Vec<u8>>>>;

async fn receiver() -> (SocketAddr, Bodies) {
    let bodies: Bodies = Arc::default();
    let kept = bodies.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                if let Ok(mut b) = kept.lock() {
                    b.push(body.to_vec());
                }
                // An empty `ExportTraceServiceResponse`: everything accepted.
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind the receiver: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("receiver address: {e}"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, bodies)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| match &v.value {
            Some(any_value::Value::StringValue(s)) => Some(s.as_str()),
            _ => None,
        })
}

async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Value {
    let mut all = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    let r = raw_http::request(addr, "POST", "/mcp", &all, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("POST: {e}"));
    assert_eq!(r.status, 200, "{r:?}");
    r.message()
}

/// The spans of one trace, by name; each name once.
fn trace<'a>(spans: &'a [Span], trace_id: &str) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|s| hex(&s.trace_id) == trace_id)
        .collect()
}

fn named<'a>(spans: &[&'a Span], name: &str) -> &'a Span {
    let found: Vec<&&Span> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one {name} span: {spans:#?}");
    found[0]
}

fn child_of(span: &Span, parent: &Span) -> bool {
    span.parent_span_id == parent.span_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_continue_the_clients_trace_through_the_stages_without_the_token() {
    let (receiver, bodies) = receiver().await;
    let endpoint = format!("http://{receiver}");
    let mut server = Instance::spawn(
        env!("CARGO_BIN_EXE_billing-server"),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--auth-resource",
            RESOURCE,
            "--auth-issuer",
            ISSUER,
            "--auth-optional",
            "--otlp-endpoint",
            &endpoint,
        ],
        &[
            ("FUSION_AUTH_HS256_SECRET", SECRET),
            ("OTEL_SERVICE_NAME", "billing-traced"),
        ],
    );
    let key = EncodingKey::from_secret(SECRET.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let token = mint(
        Algorithm::HS256,
        &key,
        &json!({"sub": "alice", "aud": RESOURCE, "iss": ISSUER, "exp": now() + 600}),
    );
    let bearer = format!("Bearer {token}");

    // A 2025 call continuing the trace in its `traceparent` header.
    let traceparent = format!("00-{HEADER_TRACE}-{HEADER_PARENT}-01");
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "billing_get_invoice", "arguments": {"id": "inv_2026_0001"}},
    });
    let m = post(
        server.addr,
        &[
            ("mcp-protocol-version", "2025-11-25"),
            ("authorization", &bearer),
            ("traceparent", &traceparent),
            ("tracestate", "congo=t61rcWkgMzE"),
        ],
        &call,
    )
    .await;
    assert_eq!(m["result"]["isError"], false, "{m}");

    // A 2026-07-28 call carrying its trace in `_meta`, with arguments that fail validation.
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {
            "name": "billing_get_invoice", "arguments": {"id": "nope"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                "traceparent": format!("00-{META_TRACE}-{META_PARENT}-01"),
            },
        },
    });
    let m = post(
        server.addr,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "billing_get_invoice"),
            ("authorization", &bearer),
        ],
        &call,
    )
    .await;
    assert_eq!(m["result"]["isError"], true, "{m}");

    // SIGTERM: the drain, then the batched spans are flushed before the process exits.
    let pid = server.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(killed.success());
    let started = Instant::now();
    loop {
        match server.child.try_wait() {
            Ok(Some(status)) => {
                assert!(status.success(), "exit {status}");
                break;
            }
            Ok(None) if started.elapsed() < Duration::from_secs(20) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => panic!("the server did not exit after SIGTERM: {other:?}"),
        }
    }

    let bodies = bodies.lock().map(|b| b.clone()).unwrap_or_default();
    assert!(!bodies.is_empty(), "no OTLP export arrived");
    let signature = token.rsplit('.').next().unwrap_or_default();
    let mut spans = Vec::new();
    for body in &bodies {
        for needle in [token.as_bytes(), signature.as_bytes()] {
            assert!(
                !body.windows(needle.len()).any(|w| w == needle),
                "the token is in an export"
            );
        }
        let request = ExportTraceServiceRequest::decode(body.as_slice())
            .unwrap_or_else(|e| panic!("not an OTLP trace export: {e}"));
        for resource in request.resource_spans {
            let service = resource
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| kv.value.as_ref())
                .and_then(|v| match &v.value {
                    Some(any_value::Value::StringValue(s)) => Some(s.clone()),
                    _ => None,
                });
            assert_eq!(service.as_deref(), Some("billing-traced"));
            for scope in resource.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }

    // The header's trace: request → route, validate, middleware → handler.
    let header = trace(&spans, HEADER_TRACE);
    let request = named(&header, "mcp.request");
    assert_eq!(hex(&request.parent_span_id), HEADER_PARENT);
    assert_eq!(request.trace_state, "congo=t61rcWkgMzE");
    assert_eq!(attribute(request, "mcp.method.name"), Some("tools/call"));
    assert_eq!(
        attribute(request, "gen_ai.tool.name"),
        Some("billing_get_invoice")
    );
    assert_eq!(attribute(request, "fusion.outcome"), Some("ok"));
    assert_eq!(attribute(request, "fusion.client_key"), Some("sub:alice"));
    for stage in ["fusion.route", "fusion.validate", "fusion.middleware"] {
        assert!(
            child_of(named(&header, stage), request),
            "{stage}: {header:#?}"
        );
    }
    let middleware = named(&header, "fusion.middleware");
    let handler = named(&header, "fusion.handler");
    assert!(child_of(handler, middleware), "{header:#?}");
    assert!(child_of(named(&header, "fusion.respond"), middleware));

    // The `_meta` trace: request → route, validate, respond; the handler never ran.
    let meta = trace(&spans, META_TRACE);
    let request = named(&meta, "mcp.request");
    assert_eq!(hex(&request.parent_span_id), META_PARENT);
    assert_eq!(attribute(request, "fusion.outcome"), Some("validation"));
    assert_eq!(attribute(request, "fusion.client_key"), Some("sub:alice"));
    for stage in ["fusion.route", "fusion.validate", "fusion.respond"] {
        assert!(child_of(named(&meta, stage), request), "{stage}: {meta:#?}");
    }
    assert!(meta.iter().all(|s| s.name != "fusion.handler"), "{meta:#?}");
}
