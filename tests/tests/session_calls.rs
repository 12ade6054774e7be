//! A 2025 session's messages over streamable HTTP, on 127.0.0.1. The JSON-RPC check leaves
//! their bodies to rmcp's parse, their only parse, and the framework still answers what it
//! answers for any other request:
//! - a body rmcp refuses gets the check's own `400` and JSON-RPC error;
//! - a `tools/call` rmcp reads as a custom request (its params unusable) gets the check's
//!   answer in the session's stream: the same message a request without a session gets;
//! - a body naming no live session gets rmcp's `404`, with the request's id.

use std::time::Duration;

use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Every wait is bounded by this; generous for a loaded CI machine.
const LIMIT: Duration = Duration::from_secs(30);

/// An answer read to its end.
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages: the body's, or each SSE event's that holds one.
    fn messages(&self) -> Vec<Value> {
        if self.header("content-type") == Some("application/json") {
            return vec![serde_json::from_str(&self.body).expect("a JSON body")];
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .filter(|m| m.get("jsonrpc").is_some())
            .collect()
    }
}

/// One POST over a fresh connection; `headers` are more header lines, each ending in `\r\n`.
async fn post(server: &HttpServer, headers: &str, body: &[u8]) -> Raw {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(server.local_addr).await?;
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
            server.local_addr.port(),
            body.len()
        );
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        Ok::<_, std::io::Error>(raw)
    };
    let raw = tokio::time::timeout(LIMIT, exchange)
        .await
        .expect("answered in time")
        .expect("exchanges");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = match chunked {
        true => dechunk(body),
        false => body.to_owned(),
    };
    Raw {
        status,
        headers,
        body,
    }
}

/// A chunked body's data.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

async fn billing(stateless: bool) -> HttpServer {
    spawn_http(
        examples::billing::server().expect("builds"),
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default().stateless(stateless),
    )
    .await
    .expect("binds loopback")
}

/// Opens a 2025-06-18 session; the header lines a request in it carries.
async fn open_session(server: &HttpServer) -> String {
    open_session_at(server, "2025-06-18").await
}

/// Opens a session at `version`; the header lines a request in it carries.
async fn open_session_at(server: &HttpServer, version: &str) -> String {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    );
    let answer = post(server, "", init.as_bytes()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let id = answer.header("mcp-session-id").expect("a session id");
    let headers = format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: {version}\r\n");
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(server, &headers, initialized).await.status, 202);
    headers
}

fn call(params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{params}}}"#)
}

#[tokio::test]
async fn a_sessions_unusable_calls_get_the_checks_answer_in_its_stream() {
    let (stateful, stateless) = (billing(false).await, billing(true).await);
    let session = open_session(&stateful).await;
    // A usable call is answered as ever.
    let valid = call(r#"{"name":"billing_list_invoices","arguments":{"limit":1}}"#);
    let answer = post(&stateful, &session, valid.as_bytes()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.messages()[0]["result"]["isError"], json!(false));
    let unusable = [
        r#"{"name":"billing_get_invoice","arguments":[1,2]}"#,
        r#"{"name":"billing_get_invoice","arguments":"inv_1"}"#,
        r#"{"arguments":{"id":"inv_1"}}"#,
        r#"{"name":42,"arguments":{}}"#,
        r#"{"name":"billing_nope","arguments":[1]}"#,
        r#"null"#,
        // A retry's state that is not a string: `Invalid params`.
        r#"{"name":"billing_get_invoice","requestState":5}"#,
    ];
    for params in unusable {
        let body = call(params);
        let without = post(&stateless, "", body.as_bytes()).await;
        assert_eq!(without.header("content-type"), Some("application/json"));
        let within = post(&stateful, &session, body.as_bytes()).await;
        assert_eq!(within.status, 200, "{params}: {}", within.body);
        assert_eq!(
            within.header("content-type"),
            Some("text/event-stream"),
            "{params}"
        );
        // The same message: an envelope (`isError`) or a JSON-RPC error, id and all.
        assert_eq!(within.messages(), without.messages(), "{params}");
        let message = &within.messages()[0];
        assert_eq!(message["id"], json!("c"));
        assert!(
            message["result"]["isError"] == json!(true) || message["error"]["code"] == -32602,
            "{message}"
        );
    }
    stateful.shutdown().await.expect("stops");
    stateless.shutdown().await.expect("stops");
}

#[tokio::test]
async fn a_sessions_malformed_bodies_get_the_checks_400() {
    let (stateful, stateless) = (billing(false).await, billing(true).await);
    let session = open_session(&stateful).await;
    let malformed: [(&str, &[u8], i64, Value); 7] = [
        ("invalid JSON", b"{not json", -32700, Value::Null),
        (
            "lone surrogate",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#,
            -32700,
            Value::Null,
        ),
        (
            "batch",
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            -32600,
            Value::Null,
        ),
        (
            "no jsonrpc",
            br#"{"id":3,"method":"ping"}"#,
            -32600,
            json!(3),
        ),
        (
            "params an array",
            br#"{"jsonrpc":"2.0","id":"p","method":"tools/list","params":[]}"#,
            -32600,
            json!("p"),
        ),
        (
            "a request with a result",
            br#"{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}"#,
            -32600,
            json!(4),
        ),
        ("empty body", b"", -32700, Value::Null),
    ];
    for (what, body, code, id) in malformed {
        let within = post(&stateful, &session, body).await;
        assert_eq!(within.status, 400, "{what}: {}", within.body);
        assert_eq!(within.header("content-type"), Some("application/json"));
        let message = &within.messages()[0];
        assert_eq!(message["error"]["code"], code, "{what}: {message}");
        assert_eq!(message["id"], id, "{what}");
        // The answer a request without a session gets.
        let without = post(&stateless, "", body).await;
        assert_eq!(within.messages(), without.messages(), "{what}");
    }
    // The session still serves.
    let ping = br#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#;
    let answer = post(&stateful, &session, ping).await;
    assert_eq!(
        answer.messages()[0]["id"],
        json!("after"),
        "{}",
        answer.body
    );
    stateful.shutdown().await.expect("stops");
    stateless.shutdown().await.expect("stops");
}

#[tokio::test]
async fn a_call_naming_no_live_session_gets_404_with_its_id() {
    let stateful = billing(false).await;
    let headers = "Mcp-Session-Id: no-such-session\r\nMCP-Protocol-Version: 2025-06-18\r\n";
    let body = call(r#"{"name":"billing_list_invoices","arguments":{}}"#);
    let answer = post(&stateful, headers, body.as_bytes()).await;
    assert_eq!(answer.status, 404, "{}", answer.body);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let message = &answer.messages()[0];
    assert_eq!(message["id"], json!("c"), "{message}");
    assert_eq!(message["error"]["code"], -32000, "{message}");
    stateful.shutdown().await.expect("stops");
}

#[tokio::test]
async fn a_sessions_malformed_task_request_gets_the_checks_400() {
    // The billing server has task actions: a 2025-11-25 session's task requests are the
    // framework's to answer, once the check has passed them.
    let (stateful, stateless) = (billing(false).await, billing(true).await);
    let session = open_session_at(&stateful, "2025-11-25").await;
    let malformed = [
        r#"{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"tasks/get","params":{"taskId":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":"t"},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":7,"task":{}}}"#,
    ];
    let without = "MCP-Protocol-Version: 2025-11-25\r\n";
    for body in malformed {
        let within = post(&stateful, &session, body.as_bytes()).await;
        let sessionless = post(&stateless, without, body.as_bytes()).await;
        assert_eq!(within.status, sessionless.status, "{body}: {}", within.body);
        assert_eq!(
            within.header("content-type"),
            Some("application/json"),
            "{body}"
        );
        assert_eq!(within.messages(), sessionless.messages(), "{body}");
    }
    // A well-formed one is still the framework's: an unknown task.
    let get = r#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"nope"}}"#;
    let answer = post(&stateful, &session, get.as_bytes()).await;
    assert_eq!(answer.messages()[0]["id"], json!(3), "{}", answer.body);
    stateful.shutdown().await.expect("stops");
    stateless.shutdown().await.expect("stops");
}
