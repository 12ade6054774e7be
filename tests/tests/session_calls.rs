//! A 2025 session's messages over streamable HTTP, on 127.0.0.1. The JSON-RPC check leaves
//! their bodies to rmcp's parse, their only parse, and the framework still answers what it
//! answers for any other request:
//! - a body rmcp refuses gets the check's own `400` and JSON-RPC error;
//! - a `tools/call` rmcp reads as a custom request (its params unusable) gets the check's
//!   answer in the session's stream: the same message a request without a session gets;
//! - a session's 2025-11-25 task request is checked before the framework answers it;
//! - a body naming no live session gets rmcp's `404`, with the request's id.

use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_tests::raw_http::{self, RawResponse};
use serde_json::{Value, json};

/// A JSON POST of `body` to `/mcp`, with `more` headers.
async fn post(server: &HttpServer, more: &[(&str, &str)], body: &str) -> RawResponse {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    headers.extend_from_slice(more);
    raw_http::request(server.local_addr, "POST", "/mcp", &headers, body)
        .await
        .expect("answered")
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

/// An open session: the headers a request in it carries.
struct Session {
    id: String,
    version: &'static str,
}

impl Session {
    /// Opens a session at `version` (initialize, then initialized).
    async fn open(server: &HttpServer, version: &'static str) -> Session {
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        });
        let answer = post(server, &[], &init.to_string()).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let id = answer.header("mcp-session-id").expect("a session id");
        let session = Session {
            id: id.to_owned(),
            version,
        };
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(session.post(server, initialized).await.status, 202);
        session
    }

    async fn post(&self, server: &HttpServer, body: &str) -> RawResponse {
        let headers = [
            ("mcp-session-id", self.id.as_str()),
            ("mcp-protocol-version", self.version),
        ];
        post(server, &headers, body).await
    }
}

fn call(params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{params}}}"#)
}

#[tokio::test]
async fn a_sessions_unusable_calls_get_the_checks_answer_in_its_stream() {
    let (stateful, stateless) = (billing(false).await, billing(true).await);
    let session = Session::open(&stateful, "2025-06-18").await;
    // A usable call is answered as ever.
    let valid = call(r#"{"name":"billing_list_invoices","arguments":{"limit":1}}"#);
    let answer = session.post(&stateful, &valid).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.message()["result"]["isError"], json!(false));
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
        let without = post(&stateless, &[], &body).await;
        assert_eq!(without.header("content-type"), Some("application/json"));
        let within = session.post(&stateful, &body).await;
        assert_eq!(within.status, 200, "{params}: {}", within.body);
        assert_eq!(
            within.header("content-type"),
            Some("text/event-stream"),
            "{params}"
        );
        // The same message: an envelope (`isError`) or a JSON-RPC error, id and all.
        let message = within.message();
        assert_eq!(message, without.message(), "{params}");
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
    let session = Session::open(&stateful, "2025-06-18").await;
    let malformed: [(&str, &str, i64, Value); 7] = [
        ("invalid JSON", "{not json", -32700, Value::Null),
        (
            "lone surrogate",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#,
            -32700,
            Value::Null,
        ),
        (
            "batch",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            -32600,
            Value::Null,
        ),
        (
            "no jsonrpc",
            r#"{"id":3,"method":"ping"}"#,
            -32600,
            json!(3),
        ),
        (
            "params an array",
            r#"{"jsonrpc":"2.0","id":"p","method":"tools/list","params":[]}"#,
            -32600,
            json!("p"),
        ),
        (
            "a request with a result",
            r#"{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}"#,
            -32600,
            json!(4),
        ),
        ("empty body", "", -32700, Value::Null),
    ];
    for (what, body, code, id) in malformed {
        let within = session.post(&stateful, body).await;
        assert_eq!(within.status, 400, "{what}: {}", within.body);
        assert_eq!(within.header("content-type"), Some("application/json"));
        let message = within.json();
        assert_eq!(message["error"]["code"], code, "{what}: {message}");
        assert_eq!(message["id"], id, "{what}");
        // The answer a request without a session gets.
        let without = post(&stateless, &[], body).await;
        assert_eq!(message, without.json(), "{what}");
    }
    // The session still serves.
    let answer = session
        .post(
            &stateful,
            r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#,
        )
        .await;
    assert_eq!(answer.message()["id"], json!("after"), "{}", answer.body);
    stateful.shutdown().await.expect("stops");
    stateless.shutdown().await.expect("stops");
}

#[tokio::test]
async fn a_sessions_malformed_task_request_gets_the_checks_400() {
    // The billing server has task actions: a 2025-11-25 session's task requests are the
    // framework's to answer, once the check has passed them.
    let (stateful, stateless) = (billing(false).await, billing(true).await);
    let session = Session::open(&stateful, "2025-11-25").await;
    let malformed = [
        r#"{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"tasks/get","params":{"taskId":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":"t"},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":7,"task":{}}}"#,
    ];
    let version = [("mcp-protocol-version", "2025-11-25")];
    for body in malformed {
        let within = session.post(&stateful, body).await;
        let without = post(&stateless, &version, body).await;
        assert_eq!(within.status, without.status, "{body}: {}", within.body);
        assert_eq!(
            within.header("content-type"),
            Some("application/json"),
            "{body}"
        );
        assert_eq!(within.json(), without.json(), "{body}");
    }
    // A well-formed one is still the framework's: an unknown task.
    let get = r#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"nope"}}"#;
    let answer = session.post(&stateful, get).await;
    assert_eq!(answer.message()["id"], json!(3), "{}", answer.body);
    stateful.shutdown().await.expect("stops");
    stateless.shutdown().await.expect("stops");
}

#[tokio::test]
async fn a_call_naming_no_live_session_gets_404_with_its_id() {
    let stateful = billing(false).await;
    let session = Session {
        id: "no-such-session".to_owned(),
        version: "2025-06-18",
    };
    let body = call(r#"{"name":"billing_list_invoices","arguments":{}}"#);
    let answer = session.post(&stateful, &body).await;
    assert_eq!(answer.status, 404, "{}", answer.body);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let message = answer.json();
    assert_eq!(message["id"], json!("c"), "{message}");
    assert_eq!(message["error"]["code"], -32000, "{message}");
    stateful.shutdown().await.expect("stops");
}
