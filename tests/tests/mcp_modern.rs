//! The per-request rules of MCP 2026-07-28, spoken in raw JSON-RPC lines over an in-memory
//! stdio connection (no `initialize`): logs only with `io.modelcontextprotocol/logLevel` in
//! the request's `_meta` and at or above it, `-32602` for an unknown level, no
//! `logging/setLevel`, `serverInfo` in every result's `_meta`, the builder's cache hints on
//! the lists, and the same tools in the same order on every request. A 2025 session on the
//! same server keeps its session level.

use std::time::Duration;

use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::server::CacheScope;
use fusion_runtime::{Context, LogLevel, Server, ToolError, ToolInput, tool_action};
use fusion_tests::raw_stdio::RawStdio;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What to log.
#[derive(Deserialize, ToolInput)]
struct Note {
    /// The text of each log message.
    #[fusion(length(max = 40))]
    text: String,
}

/// Logs `text` once at each of debug, info, warning and error.
#[tool_action(name = "chatty.run")]
async fn run(input: Note, cx: Context) -> Result<Value, ToolError> {
    let mut sent = Vec::new();
    for level in [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ] {
        if cx.log(level, json!(input.text)).await {
            sent.push(level.as_str());
        }
    }
    Ok(json!({ "logged": sent }))
}

/// Says nothing.
#[tool_action(name = "quiet.run")]
async fn quiet(_input: Note) -> Result<Value, ToolError> {
    Ok(json!({}))
}

fn server() -> Server {
    Server::builder()
        .name("modern")
        .version("9.8.7")
        .list_cache(Duration::from_secs(5), CacheScope::Private)
        .action::<RunAction>()
        .action::<QuietAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn meta(level: Option<&str>) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    if let Some(level) = level {
        meta["io.modelcontextprotocol/logLevel"] = json!(level);
    }
    meta
}

fn log_levels(before: &[Value]) -> Vec<String> {
    before
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn call(level: Option<&str>) -> Value {
    json!({ "_meta": meta(level), "name": "chatty_run", "arguments": { "text": "hi" } })
}

fn logged(response: &Value) -> Value {
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{response}"));
    let out: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    out["logged"].clone()
}

#[tokio::test]
async fn a_modern_request_without_a_log_level_gets_no_log_messages() {
    let mut raw = RawStdio::serve(server());
    let (before, response) = raw.request(1, "tools/call", call(None)).await;
    assert!(log_levels(&before).is_empty(), "{before:?}");
    assert_eq!(logged(&response), json!([]), "{response}");
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
}

#[tokio::test]
async fn a_modern_log_level_lets_through_that_level_and_above_for_that_request_only() {
    let mut raw = RawStdio::serve(server());
    let (before, response) = raw.request(1, "tools/call", call(Some("warning"))).await;
    assert_eq!(log_levels(&before), ["warning", "error"]);
    assert_eq!(logged(&response), json!(["warning", "error"]));
    let (before, _) = raw.request(2, "tools/call", call(Some("debug"))).await;
    assert_eq!(log_levels(&before), ["debug", "info", "warning", "error"]);
    // The level is the request's: the next one without it hears nothing.
    let (before, _) = raw.request(3, "tools/call", call(None)).await;
    assert!(log_levels(&before).is_empty(), "{before:?}");
}

#[tokio::test]
async fn an_unknown_log_level_is_invalid_params() {
    let mut raw = RawStdio::serve(server());
    for bad in [json!("loud"), json!(3), json!("INFO"), json!("info ")] {
        let mut params = call(None);
        params["_meta"]["io.modelcontextprotocol/logLevel"] = bad.clone();
        let (before, response) = raw.request(1, "tools/call", params).await;
        assert!(before.is_empty(), "{before:?}");
        assert_eq!(response["error"]["code"], -32602, "{bad}: {response}");
        assert!(
            response["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("io.modelcontextprotocol/logLevel must be one of")),
            "{response}"
        );
    }
}

#[tokio::test]
async fn set_level_is_refused_for_a_modern_request() {
    let mut raw = RawStdio::serve(server());
    let mut params = json!({ "level": "debug" });
    params["_meta"] = meta(None);
    let (_, response) = raw.request(1, "logging/setLevel", params).await;
    assert_eq!(response["error"]["code"], -32601, "{response}");
    // And it did not change anything: still no logs without a level.
    let (before, _) = raw.request(2, "tools/call", call(None)).await;
    assert!(log_levels(&before).is_empty(), "{before:?}");
}

#[tokio::test]
async fn modern_results_name_the_server_and_lists_carry_the_builders_cache_hints() {
    let mut raw = RawStdio::serve(server());
    let info = json!({ "name": "modern", "version": "9.8.7" });
    let (_, tools) = raw
        .request(1, "tools/list", json!({ "_meta": meta(None) }))
        .await;
    let result = &tools["result"];
    assert_eq!(result["ttlMs"], 5000, "{tools}");
    assert_eq!(result["cacheScope"], "private", "{tools}");
    assert_eq!(result["resultType"], "complete", "{tools}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"], info);
    let (_, called) = raw.request(2, "tools/call", call(None)).await;
    assert_eq!(
        called["result"]["_meta"]["io.modelcontextprotocol/serverInfo"], info,
        "{called}"
    );
    let (_, discovered) = raw
        .request(3, "server/discover", json!({ "_meta": meta(None) }))
        .await;
    assert_eq!(discovered["result"]["ttlMs"], 5000, "{discovered}");
    assert_eq!(
        discovered["result"]["cacheScope"], "private",
        "{discovered}"
    );
    assert_eq!(
        discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "modern"
    );
}

#[tokio::test]
async fn tools_come_in_the_same_order_on_every_request_and_every_build() {
    let mut a = RawStdio::serve(server());
    let mut b = RawStdio::serve(server());
    let (_, first) = a
        .request(1, "tools/list", json!({ "_meta": meta(None) }))
        .await;
    let (_, again) = a
        .request(1, "tools/list", json!({ "_meta": meta(None) }))
        .await;
    let (_, other) = b
        .request(1, "tools/list", json!({ "_meta": meta(None) }))
        .await;
    let names: Vec<&Value> = first["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{first}"))
        .iter()
        .map(|t| &t["name"])
        .collect();
    assert_eq!(names, [&json!("chatty_run"), &json!("quiet_run")]);
    assert_eq!(first.to_string(), again.to_string());
    assert_eq!(first.to_string(), other.to_string());
}

#[tokio::test]
async fn a_2025_session_keeps_its_session_level_and_gets_no_modern_fields() {
    let mut raw = RawStdio::serve(server());
    let (_, init) = raw
        .request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": { "name": "raw", "version": "0" }
            }),
        )
        .await;
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    raw.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    let params = json!({ "name": "chatty_run", "arguments": { "text": "hi" } });
    let (before, response) = raw.request(2, "tools/call", params.clone()).await;
    assert_eq!(log_levels(&before), ["info", "warning", "error"]);
    assert!(response["result"].get("_meta").is_none(), "{response}");
    let (_, set) = raw
        .request(3, "logging/setLevel", json!({ "level": "error" }))
        .await;
    assert!(set["result"].is_object(), "{set}");
    let (before, _) = raw.request(4, "tools/call", params).await;
    assert_eq!(log_levels(&before), ["error"]);
    let (_, list) = raw.request(5, "tools/list", json!({})).await;
    assert!(list["result"].get("ttlMs").is_none(), "{list}");
    assert!(list["result"].get("resultType").is_none(), "{list}");
}

async fn http(stateless: bool) -> HttpServer {
    spawn_http(
        server(),
        "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        HttpOptions::default().stateless(stateless),
    )
    .await
    .unwrap_or_else(|e| panic!("bind: {e}"))
}

/// One HTTP request on a new connection: the status and every JSON-RPC message in the
/// body (plain JSON, or the `data:` lines of an SSE stream).
async fn exchange(
    addr: std::net::SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, Vec<Value>) {
    let (status, _, messages) = exchange_with_head(addr, method, headers, body).await;
    (status, messages)
}

/// [`exchange`], with the response's head (status line and headers) too.
async fn exchange_with_head(
    addr: std::net::SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, String, Vec<Value>) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let run = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
             content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
             content-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        stream.write_all(request.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&raw).into_owned())
    };
    let text = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .unwrap_or_else(|_| panic!("no answer to {method}"))
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let messages = text
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect();
    let head = text.split("\r\n\r\n").next().unwrap_or_default().to_owned();
    (status, head, messages)
}

fn modern_headers<'a>(method: &'a str, name: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
        ("mcp-name", name),
    ]
}

#[tokio::test]
async fn what_rmcp_cannot_read_gets_the_frameworks_answer_on_either_endpoint() {
    // The framework does not read a 2026-07-28 body before rmcp. A body rmcp's parse refuses
    // gets the framework's 400, as a 2025 body does; a call rmcp reads only as a custom
    // request (a retry's unusable state) gets the framework's -32602 from the handler, after
    // rmcp has checked the request's headers.
    let retry = |field: &str, value: Value| {
        let mut params = call(None);
        params[field] = value;
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params})
    };
    let cases = [
        (
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            (400, -32600),
            "Invalid Request: batches are not supported (MCP 2025-06-18 removed them)",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call(None), "result": {}}),
            (400, -32600),
            "Invalid Request: a request carries no result or error",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 3.5, "method": "tools/call", "params": call(None)}),
            (400, -32600),
            "Invalid Request: id must be a string or an integer",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": [call(None)]}),
            (400, -32600),
            "Invalid Request: params must be an object",
        ),
        (
            retry("requestState", json!(5)),
            (200, -32602),
            "Invalid params: requestState must be a string",
        ),
        (
            retry("inputResponses", json!([])),
            (200, -32602),
            "Invalid params: inputResponses must be an object",
        ),
    ];
    for stateless in [true, false] {
        let running = http(stateless).await;
        for (body, (status, code), message) in &cases {
            let post = |name: &'static str| {
                let headers = modern_headers("tools/call", name);
                async move { exchange(running.local_addr, "POST", &headers, Some(body)).await }
            };
            let (got, messages) = post("chatty_run").await;
            let why = format!("{message}, stateless {stateless}: {messages:?}");
            assert_eq!(got, *status, "{why}");
            assert_eq!(messages.len(), 1, "{why}");
            assert_eq!(messages[0]["error"]["code"], *code, "{why}");
            assert_eq!(messages[0]["error"]["message"], *message, "{why}");
            if *code == -32602 {
                // A mismatched header is refused first, as for any call.
                let (got, messages) = post("quiet_run").await;
                assert_eq!(
                    (got, &messages[0]["error"]["code"]),
                    (400, &json!(-32020)),
                    "{why}"
                );
            }
        }
        let _ = running.shutdown().await;
    }
}

#[tokio::test]
async fn an_unknown_protocol_version_header_gets_32022_with_the_supported_versions() {
    let running = http(true).await;
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}});
    let (status, messages) = exchange(
        running.local_addr,
        "POST",
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
        Some(&body),
    )
    .await;
    assert_eq!(status, 400, "{messages:?}");
    let error = &messages[0]["error"];
    assert_eq!(error["code"], -32022, "{messages:?}");
    assert_eq!(messages[0]["id"], 7, "{messages:?}");
    assert_eq!(error["data"]["requested"], "2099-01-01");
    let supported = error["data"]["supported"]
        .as_array()
        .unwrap_or_else(|| panic!("{messages:?}"));
    assert!(supported.contains(&json!("2026-07-28")), "{supported:?}");
    assert!(supported.contains(&json!("2025-06-18")), "{supported:?}");
    // A GET (no body) is refused the same way.
    let (status, messages) = exchange(
        running.local_addr,
        "GET",
        &[("mcp-protocol-version", "1999-12-31")],
        None,
    )
    .await;
    assert_eq!(status, 400, "{messages:?}");
    assert_eq!(messages[0]["error"]["code"], -32022, "{messages:?}");
    let _ = running.shutdown().await;
}

#[tokio::test]
async fn the_frameworks_own_answer_to_a_modern_malformed_call_is_a_modern_result() {
    let running = http(true).await;
    let mut params = call(None);
    params["arguments"] = json!("not an object");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let (status, messages) = exchange(
        running.local_addr,
        "POST",
        &modern_headers("tools/call", "chatty_run"),
        Some(&body),
    )
    .await;
    assert_eq!(status, 200, "{messages:?}");
    let result = &messages[0]["result"];
    assert_eq!(result["isError"], true, "{messages:?}");
    assert_eq!(result["resultType"], "complete", "{messages:?}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "modern",
        "{messages:?}"
    );

    // The headers still have to match the body: rmcp checks them before the call reaches
    // the framework, and its answer is the one a well-formed call gets.
    let mut well_formed = body.clone();
    well_formed["params"]["arguments"] = json!({});
    for (headers, why) in [
        (modern_headers("tools/call", "quiet_run"), "Mcp-Name"),
        (modern_headers("tools/list", "chatty_run"), "Mcp-Method"),
        (
            vec![
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
            ],
            "missing required Mcp-Name",
        ),
        (
            modern_headers("tools/call", "=?base64?cXVpZXRfcnVu?="),
            "Mcp-Name header `quiet_run`",
        ),
    ] {
        let (status, messages) = exchange(running.local_addr, "POST", &headers, Some(&body)).await;
        assert_eq!(status, 400, "{why}: {messages:?}");
        assert_eq!(messages[0]["error"]["code"], -32020, "{why}: {messages:?}");
        assert_eq!(messages[0]["id"], 1, "{messages:?}");
        let message = messages[0]["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{why}: {message}");
        let (status, answers) =
            exchange(running.local_addr, "POST", &headers, Some(&well_formed)).await;
        assert_eq!(status, 400, "{why}: {answers:?}");
        assert_eq!(answers[0]["error"], messages[0]["error"], "{why}");
    }
    // The base64 form of the right name passes.
    let (status, messages) = exchange(
        running.local_addr,
        "POST",
        &modern_headers("tools/call", "=?base64?Y2hhdHR5X3J1bg==?="),
        Some(&body),
    )
    .await;
    assert_eq!(status, 200, "{messages:?}");
    let _ = running.shutdown().await;
}

#[tokio::test]
async fn a_legacy_malformed_call_has_no_result_type() {
    let mut raw = RawStdio::serve(server());
    let (_, init) = raw
        .request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        )
        .await;
    assert!(init["result"].is_object(), "{init}");
    raw.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    let (_, response) = raw
        .request(
            2,
            "tools/call",
            json!({"name": "chatty_run", "arguments": 5}),
        )
        .await;
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(response["result"].get("resultType").is_none(), "{response}");
    assert!(response["result"].get("_meta").is_none(), "{response}");
}

#[tokio::test]
async fn stateless_http_logs_travel_on_the_requests_own_stream_only_when_asked() {
    let running = http(true).await;
    for (level, expected) in [
        (None, vec![]),
        (Some("info"), vec!["info", "warning", "error"]),
    ] {
        let body =
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call(level)});
        let (status, messages) = exchange(
            running.local_addr,
            "POST",
            &modern_headers("tools/call", "chatty_run"),
            Some(&body),
        )
        .await;
        assert_eq!(status, 200, "{messages:?}");
        let (last, before) = messages
            .split_last()
            .unwrap_or_else(|| panic!("no messages"));
        assert_eq!(last["id"], 3, "{messages:?}");
        assert_eq!(log_levels(before), expected, "{level:?}: {messages:?}");
        assert_eq!(logged(last), json!(expected));
    }
    let _ = running.shutdown().await;
}

#[tokio::test]
async fn a_2025_session_call_over_http_gets_its_logs_on_its_own_response_stream() {
    let running = http(false).await;
    let addr = running.local_addr;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let (status, head, messages) = exchange_with_head(addr, "POST", &[], Some(&init)).await;
    assert_eq!(status, 200, "{messages:?}");
    let session = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"));
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _) = exchange(addr, "POST", &headers, Some(&initialized)).await;
    assert_eq!(status, 202);
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "chatty_run", "arguments": {"text": "hi"}}});
    let (status, messages) = exchange(addr, "POST", &headers, Some(&body)).await;
    assert_eq!(status, 200, "{messages:?}");
    let (last, before) = messages
        .split_last()
        .unwrap_or_else(|| panic!("no messages"));
    assert_eq!(last["id"], 2, "the result ends the stream: {messages:?}");
    // The session's default level (info), on this POST's stream, before the result.
    assert_eq!(
        log_levels(before),
        ["info", "warning", "error"],
        "{messages:?}"
    );
    assert_eq!(before[0]["params"]["logger"], "chatty.run");
    assert_eq!(before[0]["params"]["data"], "hi");
    assert_eq!(logged(last), json!(["info", "warning", "error"]));
    let _ = running.shutdown().await;
}
