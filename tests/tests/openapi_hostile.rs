//! Hostile documents and answers, each bounded: a 10 MB document, a 10,000-deep `$ref`
//! chain, a `$ref` cycle, a small document whose every operation reaches one wide web of
//! schemas, a server URL that points elsewhere than the mount says, a 1 GB
//! answer, a slow answer, a redirect to another origin. The upstream is a real HTTP server
//! on loopback (axum), started by each test.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use fusion_runtime::Server;
use fusion_runtime::openapi::{OpenApi, OpenApiError, OpenApiLimits};
use fusion_runtime::server::BuildError;
use fusion_runtime::testing::{TestCall, TestServer};
use serde_json::{Value, json};

/// What the upstream saw.
#[derive(Default)]
struct Seen {
    /// Bytes of `/huge` handed to the connection.
    huge_bytes: AtomicU64,
    /// Connections accepted by the decoy listener.
    decoy: AtomicUsize,
}

async fn upstream(seen: Arc<Seen>) -> (String, String) {
    let decoy = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let decoy_url = format!(
        "http://{}",
        decoy.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    let counter = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((s, _)) = decoy.accept().await {
            counter.decoy.fetch_add(1, Ordering::SeqCst);
            drop(s);
        }
    });
    let huge = Arc::clone(&seen);
    let to = decoy_url.clone();
    let app = Router::new()
        .route(
            "/ok",
            get(|| async {
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Body::from(json!({"fine": true}).to_string()))
                    .unwrap_or_default()
            }),
        )
        .route(
            "/huge",
            get(move || {
                let seen = Arc::clone(&huge);
                async move {
                    // 1 GiB in 64 KiB chunks, made as they are asked for.
                    let chunk = bytes_of(64 << 10);
                    let stream = futures::stream::iter(0..16_384u32).map(move |_| {
                        seen.huge_bytes
                            .fetch_add(chunk.len() as u64, Ordering::SeqCst);
                        Ok::<_, std::io::Error>(chunk.clone())
                    });
                    Body::from_stream(stream).into_response()
                }
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "late"
            }),
        )
        .route(
            "/away",
            get(move || {
                let to = to.clone();
                async move {
                    Response::builder()
                        .status(302)
                        .header("location", format!("{to}/stolen"))
                        .body(Body::empty())
                        .unwrap_or_default()
                }
            }),
        )
        .route(
            "/limited",
            get(|| async {
                Response::builder()
                    .status(429)
                    .header("retry-after", "7")
                    .body(Body::from("slow down"))
                    .unwrap_or_default()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let url = format!(
        "http://{}",
        listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, decoy_url)
}

use futures::StreamExt as _;

fn bytes_of(n: usize) -> axum::body::Bytes {
    axum::body::Bytes::from(vec![b'x'; n])
}

fn document(server: &str) -> Value {
    let op = |id: &str| json!({"operationId": id, "responses": {"200": {"description": "ok"}}});
    json!({
        "openapi": "3.0.3",
        "info": {"title": "hostile", "version": "1"},
        "servers": [{"url": server}],
        "paths": {
            "/ok": {"get": op("ok")},
            "/huge": {"get": op("huge")},
            "/slow": {"get": op("slow")},
            "/away": {"get": op("away")},
            "/limited": {"get": op("limited")}
        }
    })
}

fn limits() -> OpenApiLimits {
    OpenApiLimits {
        timeout: Duration::from_secs(1),
        max_response_bytes: 1 << 20,
        ..OpenApiLimits::default()
    }
}

fn openapi_error(e: BuildError) -> OpenApiError {
    match e {
        BuildError::OpenApi(inner) => match inner.downcast::<OpenApiError>() {
            Ok(e) => *e,
            Err(other) => panic!("not an OpenApiError: {other}"),
        },
        other => panic!("not an OpenAPI build error: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_url_elsewhere_than_the_mount_is_never_called() {
    let seen = Arc::new(Seen::default());
    let (url, decoy) = upstream(Arc::clone(&seen)).await;
    // The document points at the decoy, at the document's level and the operation's; the
    // mount's base URL wins everywhere.
    let mut doc = document(&decoy);
    doc["paths"]["/ok"]["get"]["servers"] = json!([{"url": decoy}]);
    let api = OpenApi::json(doc).base_url(&url).limits(limits());
    let kit = TestServer::build(Server::builder().openapi(api)).unwrap_or_else(|e| panic!("{e}"));
    let call = kit.call_tool("ok", json!({})).await;
    assert_eq!(call.json(), Some(json!({"fine": true})), "{}", raw(&call));
    // A redirect to the decoy's origin is not followed.
    let call = kit.call_tool("away", json!({})).await;
    let e = call.expect_error("INTERNAL_ERROR");
    assert!(e.message.contains("answered 302"), "{}", raw(&call));
    assert_eq!(
        seen.decoy.load(Ordering::SeqCst),
        0,
        "the decoy was reached"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_answer_and_a_slow_one_are_bounded() {
    let seen = Arc::new(Seen::default());
    let (url, _) = upstream(Arc::clone(&seen)).await;
    let kit = TestServer::build(
        Server::builder().openapi(OpenApi::json(document(&url)).limits(limits())),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let call = kit.call_tool("huge", json!({})).await;
    let e = call.expect_error("RESULT_TOO_LARGE");
    assert!(
        e.message.contains("larger than 1048576 bytes"),
        "{}",
        raw(&call)
    );
    // The stream was dropped early: the server made far less than the gigabyte.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let made = seen.huge_bytes.load(Ordering::SeqCst);
    assert!(made < 64 << 20, "the upstream produced {made} bytes");
    assert!(started.elapsed() < Duration::from_secs(10));

    let started = Instant::now();
    let call = kit.call_tool("slow", json!({})).await;
    call.expect_error("TIMEOUT");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    let call = kit.call_tool("limited", json!({})).await;
    let e = call.expect_error("RATE_LIMITED");
    assert!(
        raw(&call).contains("<retry_after>7 seconds</retry_after>"),
        "{}",
        raw(&call)
    );
    let _ = e;
}

#[test]
fn a_ten_megabyte_document_is_bounded() {
    // 30,000 operations, about 10 MB of JSON.
    let mut paths = serde_json::Map::new();
    for i in 0..30_000 {
        paths.insert(
            format!("/things/{i}/with/a/rather/long/path/to/fill/the/document"),
            json!({"get": {"operationId": format!("thing{i}"), "summary": "x".repeat(200),
                "responses": {"200": {"description": "ok"}}}}),
        );
    }
    let doc = json!({"openapi": "3.1.0", "info": {"title": "big", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}], "paths": paths});
    let text = doc.to_string();
    assert!(text.len() > 10_000_000, "{}", text.len());
    let started = Instant::now();
    let e = openapi_error(
        Server::builder()
            .openapi(OpenApi::text(text.clone()))
            .build()
            .err()
            .unwrap_or_else(|| panic!("built")),
    );
    assert!(e.message.contains("more than 5000 operations"), "{e}");
    let small = OpenApiLimits {
        max_document_bytes: 1 << 20,
        ..OpenApiLimits::default()
    };
    let e = openapi_error(
        Server::builder()
            .openapi(OpenApi::text(text).limits(small))
            .build()
            .err()
            .unwrap_or_else(|| panic!("built")),
    );
    assert!(e.message.contains("larger than 1048576 bytes"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn deep_and_circular_references_fail_the_build_with_the_operation_and_pointer() {
    let mut schemas = serde_json::Map::new();
    for i in 0..10_000 {
        schemas.insert(
            format!("S{i}"),
            json!({"$ref": format!("#/components/schemas/S{}", i + 1)}),
        );
    }
    schemas.insert("S10000".into(), json!({"type": "string"}));
    schemas.insert("A".into(), json!({"$ref": "#/components/schemas/B"}));
    schemas.insert("B".into(), json!({"$ref": "#/components/schemas/A"}));
    let doc = |schema: &str| {
        json!({"openapi": "3.0.3", "info": {"title": "deep", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:9"}],
            "components": {"schemas": schemas.clone()},
            "paths": {"/x/{id}": {"get": {"operationId": "getX",
                "parameters": [{"name": "id", "in": "path", "required": true,
                    "schema": {"$ref": format!("#/components/schemas/{schema}")}}],
                "responses": {"200": {"description": "ok"}}}}}})
    };
    let e = openapi_error(
        Server::builder()
            .openapi(OpenApi::json(doc("S0")))
            .build()
            .err()
            .unwrap_or_else(|| panic!("built")),
    );
    assert_eq!(e.operation.as_deref(), Some("GET /x/{id} (getX)"));
    assert_eq!(e.pointer, "#/components/schemas/S0");
    assert!(e.message.contains("a chain of more than 64 $refs"), "{e}");
    let e = openapi_error(
        Server::builder()
            .openapi(OpenApi::json(doc("A")))
            .build()
            .err()
            .unwrap_or_else(|| panic!("built")),
    );
    assert_eq!(e.operation.as_deref(), Some("GET /x/{id} (getX)"));
    assert!(e.message.contains("a $ref cycle"), "{e}");
    // A recursive schema (structure between the references) is no cycle: it is kept.
    assert!(
        Server::builder()
            .openapi(OpenApi::json(doc("S9990")))
            .build()
            .is_ok()
    );
}

/// `operations` operations whose bodies all reach one web of 100 schemas (10 properties each,
/// with long descriptions: about 100 KB of JSON once converted), in a document of about
/// 200 bytes per operation.
fn web_of_schemas(operations: usize) -> Value {
    let mut schemas = serde_json::Map::new();
    let mut root = serde_json::Map::new();
    for i in 0..100 {
        let fields: serde_json::Map<String, Value> = (0..10)
            .map(|j| {
                let field = json!({"type": "string", "description": "d".repeat(80)});
                (format!("f{j}"), field)
            })
            .collect();
        schemas.insert(
            format!("S{i}"),
            json!({"type": "object", "properties": fields}),
        );
        root.insert(
            format!("s{i}"),
            json!({"$ref": format!("#/components/schemas/S{i}")}),
        );
    }
    schemas.insert("Root".into(), json!({"type": "object", "properties": root}));
    let mut paths = serde_json::Map::new();
    for i in 0..operations {
        paths.insert(
            format!("/r{i}"),
            json!({"post": {"operationId": format!("r{i}"),
                "requestBody": {"content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Root"}}}},
                "responses": {"200": {"description": "ok"}}}}),
        );
    }
    json!({"openapi": "3.0.3", "info": {"title": "web", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "components": {"schemas": schemas}, "paths": paths})
}

#[test]
fn a_web_of_schemas_every_operation_reaches_is_bounded() {
    // 3,000 operations: a 0.8 MB document whose operations' own copies of the web would come
    // to about 300 MB of schemas.
    let doc = web_of_schemas(3_000);
    assert!(doc.to_string().len() < 1 << 20);
    let started = Instant::now();
    let e = openapi_error(
        Server::builder()
            .openapi(OpenApi::json(doc))
            .build()
            .err()
            .unwrap_or_else(|| panic!("built")),
    );
    assert!(
        e.message
            .contains("more than 67108864 bytes (OpenApiLimits::max_schema_bytes)"),
        "{e}"
    );
    assert!(e.operation.is_some(), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    // Within the bound, the same web mounts.
    let server = Server::builder()
        .openapi(OpenApi::json(web_of_schemas(20)))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(server.actions().len(), 20);
}

/// Every text block of the answer, envelopes included, as the model reads them.
fn raw(call: &TestCall) -> String {
    call.response().texts().collect::<Vec<_>>().join("\n")
}
