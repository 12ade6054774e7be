//! The HTTP transport against hostile clients, over raw sockets on 127.0.0.1: the billing
//! example served in-process with `spawn_http`, each test with its own server and bounds.
//!
//! - who a client is: spoofed `mcp-session-id` headers (stateless) and cycled sessions
//!   (stateful) get exactly `billing.charge`'s limit (3); `X-Forwarded-For` counts only from
//!   a trusted proxy;
//! - slow and idle connections are closed (header, body and keep-alive timeouts);
//! - the connection cap refuses with 503 and serves again once others close; one address
//!   cannot take every connection (trusted proxies exempt);
//! - the session caps (overall 503, per client 429) answer a JSON-RPC error; an idle session
//!   expires and then answers 404; `DELETE` answers 200 and frees the place;
//! - a foreign or `null` `Origin` is refused with 403; loopback and no `Origin` are served;
//! - a body over the cap is refused with 413;
//! - the hook for authentication: a layer around `http_router` that inserts a `ClientKey`
//!   decides who the client is.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fusion_runtime::client::parse_tool_error;
use fusion_runtime::context::ClientKey;
use fusion_runtime::mcp::{HttpOptions, HttpServer, http_router, spawn_http};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Any single exchange or wait in these tests ends within this.
const LIMIT: Duration = Duration::from_secs(20);

async fn serve(options: HttpOptions) -> HttpServer {
    let server = examples::billing::server().unwrap_or_else(|e| panic!("{e}"));
    let addr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
    spawn_http(server, addr, options)
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"))
}

/// One HTTP answer.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of the body: plain JSON, or the last `data:` line of an SSE
    /// stream that holds one.
    fn message(&self) -> Value {
        if let Ok(v) = serde_json::from_str(&self.body) {
            return v;
        }
        self.body
            .lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .unwrap_or_else(|| panic!("no JSON-RPC message in {self:?}"))
    }
}

fn parse_reply(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {text:?}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    body
}

/// Sends one request on a new connection (`Connection: close`) and reads the whole answer.
async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let exchange = async {
        let mut stream = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}"));
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
        request.push_str(body);
        stream
            .write_all(request.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("write: {e}"));
        let mut raw = Vec::new();
        stream
            .read_to_end(&mut raw)
            .await
            .unwrap_or_else(|e| panic!("read: {e}"));
        parse_reply(&raw)
    };
    tokio::time::timeout(LIMIT, exchange)
        .await
        .unwrap_or_else(|_| panic!("{method} took more than {LIMIT:?}"))
}

const VERSION: &str = "2025-06-18";

fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": { "name": "hostile", "version": "0" }
        }
    })
    .to_string()
}

fn charge_body(id: u64) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": "billing_charge",
            "arguments": { "invoice_id": "inv_2026_0001", "amount_cents": 1 }
        }
    })
    .to_string()
}

/// Opens a session (initialize, then initialized): its id, or the refusal.
async fn open_session(addr: SocketAddr, extra: &[(&str, &str)]) -> Result<String, Reply> {
    let reply = send(addr, "POST", extra, &initialize_body()).await;
    let Some(id) = reply.header("mcp-session-id").map(str::to_owned) else {
        return Err(reply);
    };
    let mut headers = vec![
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", VERSION),
    ];
    headers.extend_from_slice(extra);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ack = send(addr, "POST", &headers, &initialized.to_string()).await;
    assert_eq!(ack.status, 202, "initialized: {ack:?}");
    Ok(id)
}

/// What a charge came back as.
#[derive(Debug, PartialEq)]
enum Charged {
    Yes,
    RateLimited,
}

fn charged(reply: &Reply) -> Charged {
    assert_eq!(reply.status, 200, "{reply:?}");
    let message = reply.message();
    let result = &message["result"];
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {message}"));
    if result["isError"] == json!(true) {
        let e = parse_tool_error(text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(e.code().as_str(), "RATE_LIMITED", "{text}");
        Charged::RateLimited
    } else {
        Charged::Yes
    }
}

fn count(answers: &[Charged]) -> (usize, usize) {
    let yes = answers.iter().filter(|c| **c == Charged::Yes).count();
    (yes, answers.len() - yes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spoofed_session_ids_do_not_buy_more_calls_stateless() {
    let running = serve(HttpOptions::default().stateless(true)).await;
    let addr = running.local_addr;
    let mut answers = Vec::new();
    for i in 0..10 {
        let session = format!("made-up-{i}");
        let reply = send(
            addr,
            "POST",
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", VERSION),
            ],
            &charge_body(i),
        )
        .await;
        answers.push(charged(&reply));
    }
    assert_eq!(count(&answers), (3, 7), "{answers:?}");
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_sessions_do_not_buy_more_calls_stateful() {
    let running = serve(HttpOptions::default()).await;
    let addr = running.local_addr;
    let mut answers = Vec::new();
    for s in 0..4 {
        let id = open_session(addr, &[])
            .await
            .unwrap_or_else(|r| panic!("session {s}: {r:?}"));
        for c in 0..3 {
            let headers = [
                ("mcp-session-id", id.as_str()),
                ("mcp-protocol-version", VERSION),
            ];
            let reply = send(addr, "POST", &headers, &charge_body(10 + c)).await;
            answers.push(charged(&reply));
        }
    }
    assert_eq!(count(&answers), (3, 9), "{answers:?}");
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_addresses_count_only_from_a_trusted_proxy() {
    let calls = |addr: SocketAddr, forwarded: &'static str, n: u64| async move {
        let mut answers = Vec::new();
        for i in 0..n {
            let reply = send(
                addr,
                "POST",
                &[
                    ("x-forwarded-for", forwarded),
                    ("mcp-protocol-version", VERSION),
                ],
                &charge_body(i),
            )
            .await;
            answers.push(charged(&reply));
        }
        count(&answers)
    };

    let proxied = serve(
        HttpOptions::default()
            .stateless(true)
            .trust_proxy("127.0.0.1".parse().unwrap_or_else(|e| panic!("{e}"))),
    )
    .await;
    let addr = proxied.local_addr;
    assert_eq!(calls(addr, "203.0.113.1", 4).await, (3, 1), "first client");
    assert_eq!(
        calls(addr, "203.0.113.2", 4).await,
        (3, 1),
        "a second client"
    );
    // A client that writes its own header in front of the proxy's gains nothing.
    assert_eq!(calls(addr, "198.51.100.7, 203.0.113.1", 2).await, (0, 2));
    proxied.shutdown().await.unwrap_or_else(|e| panic!("{e}"));

    let direct = serve(HttpOptions::default().stateless(true)).await;
    let addr = direct.local_addr;
    assert_eq!(calls(addr, "203.0.113.1", 2).await, (2, 0));
    assert_eq!(
        calls(addr, "203.0.113.2", 2).await,
        (1, 1),
        "without a trusted proxy the header is ignored: one client, one limit"
    );
    direct.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// Reads until the server closes the connection; what it sent, and when it closed.
async fn until_closed(stream: &mut TcpStream) -> (Vec<u8>, Instant) {
    let mut received = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    };
    if tokio::time::timeout(LIMIT, read).await.is_err() {
        panic!("the server kept the connection open for more than {LIMIT:?}");
    }
    (received, Instant::now())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_idle_connections_are_closed() {
    let running = serve(
        HttpOptions::default()
            .header_timeout(Duration::from_secs(1))
            .body_timeout(Duration::from_secs(1)),
    )
    .await;
    let addr = running.local_addr;
    let bound = Duration::from_secs(10);

    // Slowloris: one header, then nothing.
    let mut slow = TcpStream::connect(addr)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    slow.write_all(format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\n").as_bytes())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, closed) = until_closed(&mut slow).await;
    let lived = closed - started;
    assert!(lived < bound, "a half-sent request lived {lived:?}");
    assert!(
        lived >= Duration::from_millis(900),
        "closed before the timeout: {lived:?}"
    );

    // A keep-alive connection left idle after its answer.
    let mut idle = TcpStream::connect(addr)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    idle.write_all(format!("GET /elsewhere HTTP/1.1\r\nhost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let answered = Instant::now();
    let (received, closed) = until_closed(&mut idle).await;
    let reply = parse_reply(&received);
    assert_eq!(reply.status, 404, "{reply:?}");
    assert!(
        closed - answered < bound,
        "idle for {:?}",
        closed - answered
    );

    // A body that stops halfway.
    let mut stalled = TcpStream::connect(addr)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n{{\"jsonrpc\""
    );
    let started = Instant::now();
    stalled
        .write_all(head.as_bytes())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (received, closed) = until_closed(&mut stalled).await;
    assert_eq!(parse_reply(&received).status, 408);
    assert!(
        closed - started < bound,
        "a stalled body lived {:?}",
        closed - started
    );
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_new_connections_are_refused_until_others_close() {
    let running = serve(
        HttpOptions::default()
            .stateless(true)
            .max_connections(2)
            .header_timeout(Duration::from_secs(60)),
    )
    .await;
    let addr = running.local_addr;
    let connect = || async {
        TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let held = [connect().await, connect().await];

    // Connections are taken in the order they came: the third is past the cap.
    let mut third = connect().await;
    let (received, _) = until_closed(&mut third).await;
    let refused = parse_reply(&received);
    assert_eq!(refused.status, 503, "{refused:?}");

    drop(held);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let started = Instant::now();
    let served = loop {
        let reply = send(addr, "POST", &[("mcp-protocol-version", VERSION)], &list).await;
        if reply.status == 200 {
            break reply;
        }
        assert_eq!(reply.status, 503, "{reply:?}");
        assert!(
            started.elapsed() < LIMIT,
            "never served again after others closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(served.message()["result"]["tools"].is_array(), "{served:?}");
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_take_every_connection_unless_it_is_a_trusted_proxy() {
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    // A fresh one each time: options carry the server's shutdown token.
    let options = || {
        HttpOptions::default()
            .stateless(true)
            .max_connections(10)
            .max_connections_per_ip(2)
            .header_timeout(Duration::from_secs(60))
    };

    let running = serve(options()).await;
    let addr = running.local_addr;
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(
            TcpStream::connect(addr)
                .await
                .unwrap_or_else(|e| panic!("{e}")),
        );
    }
    let refused = send(addr, "POST", &[("mcp-protocol-version", VERSION)], &list).await;
    assert_eq!(
        refused.status, 503,
        "a third from the same address: {refused:?}"
    );
    drop(held);
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));

    let proxied =
        serve(options().trust_proxy("127.0.0.1".parse().unwrap_or_else(|e| panic!("{e}")))).await;
    let addr = proxied.local_addr;
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(
            TcpStream::connect(addr)
                .await
                .unwrap_or_else(|e| panic!("{e}")),
        );
    }
    let served = send(addr, "POST", &[("mcp-protocol-version", VERSION)], &list).await;
    assert_eq!(served.status, 200, "a trusted proxy is exempt: {served:?}");
    drop(held);
    proxied.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_capped_overall_and_per_client() {
    let running = serve(
        HttpOptions::default()
            .max_sessions(3)
            .max_sessions_per_client(2)
            .trust_proxy("127.0.0.1".parse().unwrap_or_else(|e| panic!("{e}"))),
    )
    .await;
    let addr = running.local_addr;
    let a = [("x-forwarded-for", "203.0.113.1")];
    let b = [("x-forwarded-for", "203.0.113.2")];
    let c = [("x-forwarded-for", "203.0.113.3")];

    let a1 = open_session(addr, &a)
        .await
        .unwrap_or_else(|r| panic!("{r:?}"));
    open_session(addr, &a)
        .await
        .unwrap_or_else(|r| panic!("{r:?}"));
    let refused = open_session(addr, &a)
        .await
        .err()
        .unwrap_or_else(|| panic!("a third for A"));
    assert_eq!(refused.status, 429, "{refused:?}");
    assert!(refused.header("retry-after").is_some());
    let error = &refused.message()["error"];
    assert_eq!(error["code"], json!(-32000));
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("2 live MCP sessions")),
        "{error}"
    );

    open_session(addr, &b)
        .await
        .unwrap_or_else(|r| panic!("{r:?}"));
    let full = open_session(addr, &c)
        .await
        .err()
        .unwrap_or_else(|| panic!("a fourth"));
    assert_eq!(full.status, 503, "{full:?}");
    assert!(
        full.message()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("maximum of 3 live MCP sessions")),
        "{full:?}"
    );

    // Closing a session answers 200 and frees its place.
    let mut headers = vec![
        ("mcp-session-id", a1.as_str()),
        ("mcp-protocol-version", VERSION),
    ];
    headers.extend_from_slice(&a);
    let closed = send(addr, "DELETE", &headers, "").await;
    assert_eq!(closed.status, 200, "{closed:?}");
    open_session(addr, &c)
        .await
        .unwrap_or_else(|r| panic!("after a DELETE: {r:?}"));
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_expires_answers_404_and_frees_its_place() {
    let running = serve(
        HttpOptions::default()
            .max_sessions_per_client(1)
            .session_idle_timeout(Duration::from_secs(1)),
    )
    .await;
    let addr = running.local_addr;
    let id = open_session(addr, &[])
        .await
        .unwrap_or_else(|r| panic!("{r:?}"));
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", VERSION),
    ];
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let live = send(addr, "POST", &headers, &list).await;
    assert_eq!(live.status, 200, "{live:?}");
    let refused = open_session(addr, &[])
        .await
        .err()
        .unwrap_or_else(|| panic!("a second"));
    assert_eq!(refused.status, 429);

    // No signal tells a client its session expired, and a request in the session would keep
    // it alive: poll for the place it frees, bounded.
    let started = Instant::now();
    loop {
        match open_session(addr, &[]).await {
            Ok(_) => break,
            Err(reply) => assert_eq!(reply.status, 429, "{reply:?}"),
        }
        assert!(started.elapsed() < LIMIT, "the idle session never expired");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let gone = started.elapsed();
    assert!(gone < Duration::from_secs(10), "expired after {gone:?}");
    let expired = send(addr, "POST", &headers, &list).await;
    assert_eq!(expired.status, 404, "{expired:?}");
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_are_refused_loopback_and_none_are_served() {
    let running = serve(
        HttpOptions::default()
            .stateless(true)
            .allow_origins(["https://app.example:443"]),
    )
    .await;
    let addr = running.local_addr;
    let status = |origin: Option<&'static str>| async move {
        let mut headers = vec![("mcp-protocol-version", VERSION)];
        if let Some(o) = origin {
            headers.push(("origin", o));
        }
        let reply = send(addr, "POST", &headers, &charge_body(1)).await;
        (reply.status, reply)
    };
    for foreign in [
        "http://evil.example",
        "null",
        "http://localhost.evil.example",
        "https://app.example:8443",
    ] {
        let (code, reply) = status(Some(foreign)).await;
        assert_eq!(code, 403, "{foreign}: {reply:?}");
    }
    for allowed in [
        None,
        Some("http://localhost:6274"),
        Some("http://127.0.0.1"),
        Some("http://[::1]:3000"),
        Some("https://app.example"),
    ] {
        let (code, reply) = status(allowed).await;
        assert_eq!(code, 200, "{allowed:?}: {reply:?}");
    }
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_cap_is_refused() {
    let running = serve(HttpOptions::default().stateless(true).max_body_bytes(1024)).await;
    let addr = running.local_addr;
    let big = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "billing_charge", "arguments": { "invoice_id": "x".repeat(2000) } }
    })
    .to_string();
    let reply = send(addr, "POST", &[("mcp-protocol-version", VERSION)], &big).await;
    assert_eq!(reply.status, 413, "{reply:?}");
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_key_from_an_outer_layer_decides_who_the_client_is() {
    // Stands in for an authentication layer: the user comes from a header it trusts.
    async fn authenticate(
        mut request: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> axum::response::Response {
        let user = request
            .headers()
            .get("x-test-user")
            .and_then(|v| v.to_str().ok())
            .map(|u| format!("user:{u}"));
        if let Some(user) = user {
            request.extensions_mut().insert(ClientKey::new(user));
        }
        next.run(request).await
    }
    let server = examples::billing::server().unwrap_or_else(|e| panic!("{e}"));
    let router = http_router(server, &HttpOptions::default().stateless(true))
        .layer(axum::middleware::from_fn(authenticate));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let served = tokio::spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });

    let mut by_user = Vec::new();
    for user in ["ada", "grace"] {
        let mut answers = Vec::new();
        for i in 0..4 {
            let headers = [("x-test-user", user), ("mcp-protocol-version", VERSION)];
            answers.push(charged(
                &send(addr, "POST", &headers, &charge_body(i)).await,
            ));
        }
        by_user.push(count(&answers));
    }
    assert_eq!(
        by_user,
        [(3, 1), (3, 1)],
        "one limit per user, from one address"
    );
    served.abort();
}
