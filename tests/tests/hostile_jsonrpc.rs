//! A hostile client against the real `billing-server` over stdio and against streamable HTTP
//! on 127.0.0.1: every malformed message gets its JSON-RPC answer and the server keeps
//! serving; a `tools/call` with unusable params gets an envelope; closing stdin ends the
//! process with status 0 at any point; nothing sent before `initialize` ends it.

use std::process::Stdio;
use std::time::Duration;

use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Every wait is bounded by this; generous for a loaded CI machine.
const LIMIT: Duration = Duration::from_secs(30);

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

struct Stdio_ {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Stdio_ {
    fn spawn() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_billing-server"))
            .arg("serve")
            .env("RUST_LOG", "off")
            .env_remove("BILLING_OPERATOR_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawns billing-server");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout piped")).lines();
        Stdio_ {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let write = async {
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        tokio::time::timeout(LIMIT, write)
            .await
            .expect("written in time")
            .expect("writes");
    }

    /// The next message the server writes.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(LIMIT, self.stdout.next_line())
            .await
            .expect("an answer in time")
            .expect("reads stdout")
            .expect("stdout still open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The answer with this id (other messages, such as log notifications, are skipped).
    async fn answer(&mut self, id: &Value) -> Value {
        for _ in 0..100 {
            let message = self.recv().await;
            if message.get("id") == Some(id) {
                return message;
            }
        }
        panic!("no answer with id {id}");
    }

    async fn initialize(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}"#).await;
        let answer = self.answer(&json!("init")).await;
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }

    /// Asserts the server still answers a real call.
    async fn still_serving(&mut self, id: i64) {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"billing_list_invoices","arguments":{{"limit":1}}}}}}"#
        ))
        .await;
        let answer = self.answer(&json!(id)).await;
        assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    }

    /// Closes stdin and waits for the exit status.
    async fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        tokio::time::timeout(LIMIT, self.child.wait())
            .await
            .expect("exits in time after stdin closes")
            .expect("waits")
    }
}

fn error_of(answer: &Value) -> (i64, Value) {
    let code = answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"));
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    (code, answer["id"].clone())
}

#[tokio::test]
async fn every_malformed_line_gets_its_answer_and_the_server_keeps_serving() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let deep_object = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"billing_list_invoices","arguments":{{"x":{}{}}}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    let cases: Vec<(&str, String, i64, Value)> =
        vec![
        ("invalid JSON", "{not json".into(), -32700, Value::Null),
        ("truncated", r#"{"jsonrpc":"2.0","id":1,"#.into(), -32700, Value::Null),
        ("too deep", deep, -32700, Value::Null),
        ("too deep inside a call", deep_object, -32700, Value::Null),
        (
            "lone surrogate",
            r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"\ud800"}}"#.into(),
            -32700,
            Value::Null,
        ),
        (
            "batch",
            r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#.into(),
            -32600,
            Value::Null,
        ),
        ("empty batch", "[]".into(), -32600, Value::Null),
        ("a number", "42".into(), -32600, Value::Null),
        (
            "no jsonrpc",
            r#"{"id":5,"method":"ping"}"#.into(),
            -32600,
            json!(5),
        ),
        (
            "wrong jsonrpc",
            r#"{"jsonrpc":"1.0","id":"six","method":"ping"}"#.into(),
            -32600,
            json!("six"),
        ),
        (
            "id an array",
            r#"{"jsonrpc":"2.0","id":[7],"method":"ping"}"#.into(),
            -32600,
            Value::Null,
        ),
        (
            "id a fraction",
            r#"{"jsonrpc":"2.0","id":7.5,"method":"ping"}"#.into(),
            -32600,
            Value::Null,
        ),
        (
            "id an object",
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.into(),
            -32600,
            Value::Null,
        ),
        (
            "method a number",
            r#"{"jsonrpc":"2.0","id":8,"method":8}"#.into(),
            -32600,
            json!(8),
        ),
        (
            "no method",
            r#"{"jsonrpc":"2.0","id":9}"#.into(),
            -32600,
            json!(9),
        ),
        (
            "params an array",
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":[1]}"#.into(),
            -32600,
            json!(10),
        ),
        (
            "params a string",
            r#"{"jsonrpc":"2.0","id":11,"method":"ping","params":"x"}"#.into(),
            -32600,
            json!(11),
        ),
        (
            "params rmcp cannot read",
            r#"{"jsonrpc":"2.0","id":12,"method":"logging/setLevel","params":{"level":"loud"}}"#
                .into(),
            -32602,
            json!(12),
        ),
    ];
    let mut server = Stdio_::spawn();
    server.initialize().await;
    for (what, line, code, id) in &cases {
        server.send(line).await;
        let answer = server.recv().await;
        assert_eq!(error_of(&answer), (*code, id.clone()), "{what}: {answer}");
    }
    server.still_serving(100).await;
    // A method nobody serves is still rmcp's `Method not found`.
    server
        .send(r#"{"jsonrpc":"2.0","id":13,"method":"foo/bar","params":{}}"#)
        .await;
    let answer = server.answer(&json!(13)).await;
    assert_eq!(error_of(&answer).0, -32601, "{answer}");
    assert!(server.close().await.success());
}

#[tokio::test]
async fn an_over_long_line_is_answered_and_the_next_line_served() {
    let mut server = Stdio_::spawn();
    server.initialize().await;
    // 5 MiB, past the 4 MiB default: a string argument, so only its length is wrong.
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"billing_find_invoice","arguments":{{"q":"{}"}}}}}}"#,
        "a".repeat(5 * 1024 * 1024)
    );
    server.send(&long).await;
    let answer = server.recv().await;
    assert_eq!(error_of(&answer), (-32600, Value::Null), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("4194304 bytes"), "{message}");
    server.still_serving(2).await;
    // Twice in a row, the second line right behind the first.
    server.send(&long).await;
    server.send(&long).await;
    for _ in 0..2 {
        let answer = server.recv().await;
        assert_eq!(error_of(&answer), (-32600, Value::Null), "{answer}");
    }
    server.still_serving(3).await;
    assert!(server.close().await.success());
}

fn envelope_text(answer: &Value) -> String {
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
        .to_owned()
}

fn assert_arguments_envelope(text: &str, sent: &str) {
    assert!(
        text.starts_with(r#"<validation_error action="billing_get_invoice">"#),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            r#"<field name="arguments">Invalid type. You sent: {sent}. Expected an object.</field>"#
        )),
        "{text}"
    );
}

fn assert_unknown_action(text: &str, requested: &str) {
    assert!(
        text.starts_with(r#"<tool_error code="UNKNOWN_ACTION" severity="error">"#),
        "{text}"
    );
    assert!(
        text.contains(&format!("<message>No tool named '{requested}'</message>")),
        "{text}"
    );
    assert!(
        text.contains("<action>billing_get_invoice</action>"),
        "{text}"
    );
}

/// Asserts what an envelope says.
type Check = Box<dyn Fn(&str)>;

/// `tools/call` bodies with an unusable name or arguments, and what the envelope must say.
fn bad_calls() -> Vec<(String, Check)> {
    let call = |params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{params}}}"#)
    };
    vec![
        (
            call(r#"{"name":"billing_get_invoice","arguments":[1,2]}"#),
            Box::new(|t| assert_arguments_envelope(t, "array(2)")),
        ),
        (
            call(r#"{"name":"billing_get_invoice","arguments":"inv_1"}"#),
            Box::new(|t| assert_arguments_envelope(t, "'inv_1'")),
        ),
        (
            call(r#"{"name":"billing_get_invoice","arguments":7}"#),
            Box::new(|t| assert_arguments_envelope(t, "7")),
        ),
        (
            call(r#"{"arguments":{"id":"inv_1"}}"#),
            Box::new(|t| assert_unknown_action(t, "")),
        ),
        (
            call(r#"{"name":42,"arguments":{}}"#),
            Box::new(|t| assert_unknown_action(t, "42")),
        ),
        (
            call(r#"{"name":"billing_nope","arguments":[1]}"#),
            Box::new(|t| assert_unknown_action(t, "billing_nope")),
        ),
    ]
}

#[tokio::test]
async fn tools_call_with_unusable_params_gets_an_envelope_over_stdio() {
    let mut server = Stdio_::spawn();
    server.initialize().await;
    for (line, check) in bad_calls() {
        server.send(&line).await;
        let answer = server.answer(&json!("c")).await;
        check(&envelope_text(&answer));
    }
    server.still_serving(1).await;
    assert!(server.close().await.success());
}

#[tokio::test]
async fn closing_stdin_exits_zero_before_initialize() {
    let server = Stdio_::spawn();
    assert!(server.close().await.success());
}

#[tokio::test]
async fn closing_stdin_exits_zero_after_only_server_discover() {
    let mut server = Stdio_::spawn();
    server
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#
        ))
        .await;
    let answer = server.answer(&json!(1)).await;
    assert!(
        answer["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{answer}"
    );
    assert!(server.close().await.success());
}

#[tokio::test]
async fn closing_stdin_exits_zero_mid_session_and_with_a_call_running() {
    let mut server = Stdio_::spawn();
    server.initialize().await;
    server.still_serving(1).await;
    assert!(server.close().await.success());

    let mut server = Stdio_::spawn();
    server.initialize().await;
    // A reconciliation of 3 seconds is still running when stdin closes.
    server
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"billing_reconcile","arguments":{"duration_ms":3000}}}"#)
        .await;
    assert!(server.close().await.success());
}

#[tokio::test]
async fn a_2026_client_without_initialize_is_served() {
    let mut server = Stdio_::spawn();
    server
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#
        ))
        .await;
    server.answer(&json!(1)).await;
    server
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"billing_list_invoices","arguments":{{"limit":1}},{META}}}}}"#
        ))
        .await;
    let answer = server.answer(&json!(2)).await;
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    // After the session began, a notification is rmcp's again and ends nothing.
    server
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#)
        .await;
    server
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{{META}}}}}"#
        ))
        .await;
    let answer = server.answer(&json!(3)).await;
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    assert!(server.close().await.success());
}

#[tokio::test]
async fn nothing_sent_before_initialize_ends_the_process() {
    let mut server = Stdio_::spawn();
    for stray in [
        r#"{"jsonrpc":"2.0","id":41,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":42,"error":{"code":-32000,"message":"no"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    ] {
        server.send(stray).await;
    }
    // A request other than initialize: an error, not an exit.
    server
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let answer = server.recv().await;
    assert_eq!(error_of(&answer).1, json!(1), "{answer}");
    // Malformed input before initialize is answered too.
    server.send("{oops").await;
    assert_eq!(error_of(&server.recv().await), (-32700, Value::Null));
    server
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(server.answer(&json!(2)).await["result"], json!({}));
    server.initialize().await;
    server.still_serving(3).await;
    assert!(server.close().await.success());
}

// ---- HTTP ----

struct HttpAnswer {
    status: u16,
    content_type: String,
    body: Value,
}

/// One POST over a fresh connection to 127.0.0.1, read to its end.
async fn post(server: &HttpServer, content_type: &str, body: &[u8]) -> HttpAnswer {
    post_with(server, content_type, "", body).await
}

/// [`post`] with more header lines (each ending in `\r\n`).
async fn post_with(
    server: &HttpServer,
    content_type: &str,
    headers: &str,
    body: &[u8],
) -> HttpAnswer {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(server.local_addr).await?;
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: {content_type}\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
            server.local_addr.port(),
            body.len()
        );
        stream.write_all(head.as_bytes()).await?;
        // A server may answer (and close) before reading a body it refuses.
        let _ = stream.write_all(body).await;
        // Read to the end; a reset after the answer (a refused body left unread) ends it too.
        let mut raw = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(&chunk[..n]),
                Err(e) if raw.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        Ok::<_, std::io::Error>(raw)
    };
    let raw = tokio::time::timeout(LIMIT, exchange)
        .await
        .expect("answered in time")
        .expect("exchanges");
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let content_type = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("body not JSON ({e}): {body}"));
    HttpAnswer {
        status,
        content_type,
        body,
    }
}

async fn http(stateless: bool) -> HttpServer {
    let server = examples::billing::server().expect("builds");
    spawn_http(
        server,
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default().stateless(stateless),
    )
    .await
    .expect("binds loopback")
}

#[tokio::test]
async fn http_malformed_bodies_get_400_and_a_json_rpc_error() {
    for stateless in [false, true] {
        let server = http(stateless).await;
        let cases: [(&str, &[u8], u16, i64, Value); 6] = [
            ("invalid JSON", b"{not json", 400, -32700, Value::Null),
            (
                "lone surrogate",
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#,
                400,
                -32700,
                Value::Null,
            ),
            (
                "batch",
                br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                400,
                -32600,
                Value::Null,
            ),
            (
                "no jsonrpc",
                br#"{"id":3,"method":"ping"}"#,
                400,
                -32600,
                json!(3),
            ),
            (
                "params an array",
                br#"{"jsonrpc":"2.0","id":"p","method":"tools/list","params":[]}"#,
                400,
                -32600,
                json!("p"),
            ),
            ("empty body", b"", 400, -32700, Value::Null),
        ];
        for (what, body, status, code, id) in cases {
            let answer = post(&server, "application/json", body).await;
            assert_eq!(answer.status, status, "{what} (stateless {stateless})");
            assert_eq!(answer.content_type, "application/json", "{what}");
            assert_eq!(
                error_of(&answer.body),
                (code, id),
                "{what}: {}",
                answer.body
            );
        }
        // Refusals rmcp makes itself keep their status and get a JSON-RPC body.
        let answer = post(
            &server,
            "text/plain",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )
        .await;
        assert_eq!(answer.status, 415);
        assert_eq!(answer.content_type, "application/json");
        assert_eq!(error_of(&answer.body).0, -32000, "{}", answer.body);
        // Past the body cap: 413, read no further than the cap.
        let big = vec![b' '; 5 * 1024 * 1024];
        let answer = post(&server, "application/json", &big).await;
        assert_eq!(answer.status, 413);
        assert_eq!(error_of(&answer.body).0, -32600, "{}", answer.body);
        server.shutdown().await.expect("stops");
    }
}

#[tokio::test]
async fn http_tools_call_with_unusable_params_gets_an_envelope() {
    for stateless in [false, true] {
        let server = http(stateless).await;
        for (body, check) in bad_calls() {
            let answer = post(&server, "application/json", body.as_bytes()).await;
            assert_eq!(answer.status, 200, "{}", answer.body);
            assert_eq!(answer.content_type, "application/json");
            assert_eq!(answer.body["id"], json!("c"));
            check(&envelope_text(&answer.body));
        }
        server.shutdown().await.expect("stops");
    }
}

#[tokio::test]
async fn http_valid_messages_still_reach_rmcp() {
    let server = http(true).await;
    let answer = post_with(
        &server,
        "application/json",
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: billing_list_invoices\r\n",
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"billing_list_invoices","arguments":{{"limit":1}},{META}}}}}"#
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.body["result"]["isError"],
        json!(false),
        "{}",
        answer.body
    );
    server.shutdown().await.expect("stops");
}
