//! The Lambda handler (`fusion_runtime::lambda::LambdaHandler`, feature `lambda`) answering
//! function-URL events as Lambda's runtime hands them over (the event JSON read by
//! `lambda_http`), on a single-threaded tokio runtime: nothing on the handler's path needs a
//! second thread (no `block_in_place`, no work left to another worker), so a
//! `current_thread` runtime — what a one-vCPU function or a wasm host drives — answers.
//!
//! - a 2025 stateless `tools/call` gets the envelope-bearing JSON answer;
//! - a 2026-07-28 call that reports progress gets its SSE events and result;
//! - the event's `requestContext.http.sourceIp` is who the client is: a per-client rate limit
//!   refuses the second call of one address and admits another address;
//! - a `Host` the options do not allow is refused before anything answers.

use fusion_runtime::lambda::{LambdaHandler, LambdaOptions};
use fusion_runtime::mcp::HttpOptions;
use fusion_runtime::{Context, Server, ToolError, ToolInput, tool_action};
use http_body_util::BodyExt as _;
use serde::Deserialize;
use serde_json::{Value, json};
use tower_service::Service as _;

/// Who to greet.
#[derive(Deserialize, ToolInput)]
struct Greet {
    /// The name to greet.
    #[fusion(length(min = 1, max = 64))]
    name: String,
}

/// Greets someone by name, once a minute per client.
#[tool_action(read_only, rate_limit(calls = 1, per = "1min", per_client))]
async fn greet(input: Greet) -> Result<String, ToolError> {
    Ok(format!("Hello, {}!", input.name))
}

/// No arguments.
#[derive(Deserialize, ToolInput)]
struct Steps {}

/// Reports progress three times, then answers.
#[tool_action]
async fn steps(_: Steps, cx: Context) -> Result<String, ToolError> {
    for done in 1..=3 {
        cx.progress(f64::from(done), Some(3.0), None).await;
    }
    Ok("three steps".into())
}

fn handler(options: LambdaOptions) -> LambdaHandler {
    let server = Server::builder()
        .name("lambda-test")
        .action::<GreetAction>()
        .action::<StepsAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    LambdaHandler::new(server, &options).unwrap_or_else(|e| panic!("{e}"))
}

/// A function-URL event (payload format 2.0) POSTing `body` to `/mcp` from `ip`.
fn event(ip: &str, host: &str, version: &str, body: &Value) -> lambda_http::Request {
    let event = json!({
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": {
            "host": host,
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": version,
            "mcp-method": body["method"],
            "mcp-name": body["params"]["name"],
        },
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123",
            "domainName": host,
            "domainPrefix": "abc123",
            "http": {
                "method": "POST",
                "path": "/mcp",
                "protocol": "HTTP/1.1",
                "sourceIp": ip,
                "userAgent": "test"
            },
            "requestId": "req-1",
            "routeKey": "$default",
            "stage": "$default",
            "time": "01/Jan/2026:00:00:00 +0000",
            "timeEpoch": 1767225600000u64
        },
        "body": body.to_string(),
        "isBase64Encoded": false
    });
    lambda_http::request::from_str(&event.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

const HOST: &str = "abc123.lambda-url.eu-west-1.on.aws";

fn call_2025(name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

async fn answer(
    handler: &mut LambdaHandler,
    request: lambda_http::Request,
) -> (u16, String, String) {
    let Ok(response) = handler.call(request).await;
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .to_bytes();
    (status, kind, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "current_thread")]
async fn a_stateless_call_is_answered_on_one_thread() {
    let mut h = handler(LambdaOptions::default());
    let (status, kind, body) = answer(
        &mut h,
        event(
            "203.0.113.7",
            HOST,
            "2025-06-18",
            &call_2025("greet", json!({"name": "Ada"})),
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(kind.starts_with("application/json"), "{kind}");
    let m: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    // A `String` output travels as JSON text.
    assert_eq!(m["result"]["content"][0]["text"], "\"Hello, Ada!\"", "{m}");
    assert_eq!(m["result"]["isError"], false, "{m}");

    // Bad arguments: the validation envelope, not a transport error.
    let (status, _, body) = answer(
        &mut h,
        event(
            "203.0.113.8",
            HOST,
            "2025-06-18",
            &call_2025("greet", json!({"nme": "Ada"})),
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("validation_error"), "{body}");
}

#[tokio::test(flavor = "current_thread")]
async fn progress_travels_as_sse_on_one_thread() {
    let mut h = handler(LambdaOptions::default());
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "steps", "arguments": {},
        "_meta": {
            "progressToken": "p1",
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}
        }
    }});
    let (status, kind, body) =
        answer(&mut h, event("203.0.113.7", HOST, "2026-07-28", &call)).await;
    assert_eq!(status, 200, "{body}");
    assert!(kind.starts_with("text/event-stream"), "{kind}: {body}");
    let events: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_json::from_str(d.trim()).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect();
    let progress: Vec<f64> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .filter_map(|e| e["params"]["progress"].as_f64())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0], "{body}");
    let last = events.last().unwrap_or_else(|| panic!("no events: {body}"));
    assert_eq!(last["id"], 7, "{body}");
    assert_eq!(
        last["result"]["content"][0]["text"], "\"three steps\"",
        "{body}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_events_source_ip_is_the_client() {
    let mut h = handler(LambdaOptions::default());
    let greet = call_2025("greet", json!({"name": "Ada"}));
    let texts = [
        ("198.51.100.1", false),
        ("198.51.100.1", true), // the same address: over its one call a minute
        ("198.51.100.2", false), // another address: its own bucket
    ];
    for (ip, limited) in texts {
        let (status, _, body) = answer(&mut h, event(ip, HOST, "2025-06-18", &greet)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body.contains("RATE_LIMITED"), limited, "{ip}: {body}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_host_the_options_do_not_name_is_refused() {
    let http = HttpOptions::default().allow_hosts([HOST]);
    let mut h = handler(LambdaOptions::default().http(http));
    let greet = call_2025("greet", json!({"name": "Ada"}));
    let (status, _, body) = answer(&mut h, event("203.0.113.9", HOST, "2025-06-18", &greet)).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = answer(
        &mut h,
        event("203.0.113.9", "evil.example", "2025-06-18", &greet),
    )
    .await;
    assert_eq!(status, 403, "{body}");
}
