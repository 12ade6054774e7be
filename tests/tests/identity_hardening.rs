//! Who a client is, hardened (issue 29, part 4), over real HTTP with tokens minted here
//! (HS256): a blank `sub` is an invalid token; required authentication that names no issuer
//! does not start (`ServerBuilder::build`, `spawn_http`, `serve`'s flags); forwarding
//! headers from a peer that is not a trusted proxy are warned about once (the
//! `billing-server` binary's log); a trusted proxy's clients (a real nginx in front) are held
//! to the per-address cap by forwarded address; another scheme than `Bearer` is no
//! credentials (RFC 6750 §3.1).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fusion_runtime::auth::{Auth, AuthConfigError, AuthMode, JwtVerifier};
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::server::BuildError;
use fusion_runtime::{Context, Server, ToolError, ToolInput, tool_action};
use fusion_tests::raw_http::{self, RawResponse};
use fusion_tests::services::{Nginx, free_port, mint, now};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde::Deserialize;
use serde_json::{Value, json};

const RESOURCE: &str = "https://billing.example.com/mcp";
const ISSUER: &str = "https://auth.example.com";
const SECRET: &str = "identity-hardening-secret-of-32-bytes-at-least";

/// Any wait in these tests ends within this.
const LIMIT: Duration = Duration::from_secs(20);

/// Nothing to send.
#[derive(Deserialize, ToolInput)]
struct Note {
    /// Anything.
    note: Option<String>,
}

/// Who am I.
#[tool_action(name = "id.whoami", read_only)]
async fn whoami(_input: Note, cx: Context) -> Result<Value, ToolError> {
    Ok(json!({ "subject": cx.principal().map(|p| p.subject().to_owned()) }))
}

/// Calls of `id.hold` that started, and the permits that let them finish.
struct Gate {
    entered: AtomicUsize,
    release: tokio::sync::Semaphore,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            entered: AtomicUsize::new(0),
            release: tokio::sync::Semaphore::new(0),
        }
    }
}

/// Sends progress (so the answer is an SSE stream), then waits for the gate.
#[tool_action(name = "id.hold", read_only)]
async fn hold(_input: Note, gate: Context<Gate>) -> Result<Value, ToolError> {
    gate.state().entered.fetch_add(1, Ordering::SeqCst);
    gate.progress(0.0, Some(1.0), Some("held")).await;
    if let Ok(permit) = gate.state().release.acquire().await {
        permit.forget();
    }
    Ok(json!({ "released": true }))
}

fn server(gate: Arc<Gate>) -> Server {
    Server::builder()
        .name("id")
        .action::<WhoamiAction>()
        .action::<HoldAction>()
        .state_arc(gate)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn verifier() -> JwtVerifier {
    JwtVerifier::new(RESOURCE)
        .hs256_secret(SECRET.as_bytes())
        .unwrap_or_else(|e| panic!("verifier: {e}"))
}

async fn serve(options: HttpOptions) -> HttpServer {
    spawn_http(
        server(Arc::default()),
        SocketAddr::from(([127, 0, 0, 1], 0)),
        options.stateless(true),
    )
    .await
    .unwrap_or_else(|e| panic!("spawn: {e}"))
}

async fn serve_auth(mode: AuthMode) -> HttpServer {
    let auth = Auth::new(verifier().issuer(ISSUER), RESOURCE)
        .authorization_server(ISSUER)
        .mode(mode);
    serve(HttpOptions::default().auth(auth)).await
}

fn token(sub: &str) -> String {
    let key = EncodingKey::from_secret(SECRET.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let claims = json!({"sub": sub, "aud": RESOURCE, "iss": ISSUER, "exp": now() + 600});
    mint(Algorithm::HS256, &key, &claims)
}

/// A `tools/call` of `tool` to `addr` with `headers` on top of the streamable HTTP ones;
/// `meta` is the request's `_meta`.
async fn call(addr: SocketAddr, tool: &str, meta: Value, headers: &[(&str, &str)]) -> RawResponse {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": meta},
    })
    .to_string();
    let mut all = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    all.extend_from_slice(headers);
    raw_http::request(addr, "POST", "/mcp", &all, &body)
        .await
        .unwrap_or_else(|e| panic!("call {tool}: {e}"))
}

async fn whoami_with(addr: SocketAddr, headers: &[(&str, &str)]) -> RawResponse {
    call(addr, "id_whoami", json!({}), headers).await
}

#[tokio::test]
async fn a_blank_subject_is_an_invalid_token() {
    let running = serve_auth(AuthMode::Required).await;
    let addr = running.local_addr;
    for sub in ["", "   "] {
        let bearer = format!("Bearer {}", token(sub));
        let r = whoami_with(addr, &[("authorization", &bearer)]).await;
        assert_eq!(r.status, 401, "sub {sub:?}: {r:?}");
        let challenge = r.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "sub {sub:?}: {challenge}"
        );
        assert!(
            challenge.contains("subject (`sub`) is empty"),
            "sub {sub:?}: {challenge}"
        );
        assert_eq!(r.json()["error"], "invalid_token", "{r:?}");
    }
    let bearer = format!("Bearer {}", token("alice"));
    let r = whoami_with(addr, &[("authorization", &bearer)]).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.message()["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("alice")),
        "{r:?}"
    );
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn required_auth_without_an_issuer_does_not_build_or_start() {
    let built = Server::builder()
        .name("id")
        .action::<WhoamiAction>()
        .auth(Auth::new(verifier(), RESOURCE))
        .build();
    assert!(
        matches!(built, Err(BuildError::Auth(AuthConfigError::NoIssuer))),
        "{:?}",
        built.err()
    );

    let addr = SocketAddr::from(([127, 0, 0, 1], 0));
    let bare = HttpOptions::default().auth(Auth::new(verifier(), RESOURCE));
    match spawn_http(server(Arc::default()), addr, bare).await {
        Ok(running) => panic!("served at {} with no issuer", running.url),
        Err(e) => assert!(e.to_string().contains("names no issuer"), "{e}"),
    }

    // Either one is enough; what the metadata publishes follows.
    let pinned = Auth::new(verifier().issuer(ISSUER), RESOURCE);
    let published = Auth::new(verifier(), RESOURCE).authorization_server(ISSUER);
    for (auth, servers) in [(pinned, json!([])), (published, json!([ISSUER]))] {
        let running = serve(HttpOptions::default().auth(auth)).await;
        let m = raw_http::request(
            running.local_addr,
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            &[],
            "",
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.json()["authorization_servers"], servers, "{m:?}");
        running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A `billing-server` process and its stderr, line by line.
struct Process {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Process {
    /// `billing-server ARGS`, with the HS256 secret when `ARGS` turn authentication on.
    fn start(args: &[&str]) -> Process {
        let mut command = Command::new(env!("CARGO_BIN_EXE_billing-server"));
        if args.contains(&"--auth-resource") {
            command.env("FUSION_AUTH_HS256_SECRET", SECRET);
        }
        let mut child = command
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn billing-server: {e}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take();
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            let Some(stderr) = stderr else { return };
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().map(|mut l| l.push(line)).ok();
            }
        });
        Process { child, lines }
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Where it serves, once it says so.
    fn addr(&self) -> SocketAddr {
        let start = Instant::now();
        loop {
            let found = self.lines().iter().find_map(|l| {
                let rest = l.strip_prefix("fusion: serving MCP over streamable HTTP at http://")?;
                rest.split('/').next()?.parse().ok()
            });
            if let Some(addr) = found {
                return addr;
            }
            assert!(
                start.elapsed() < LIMIT,
                "billing-server did not say where it listens: {:?}",
                self.lines()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Its exit status, if it exits within [`LIMIT`].
    fn exit(&mut self) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < LIMIT {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        None
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_with_required_auth_and_no_issuer_names_the_flags() {
    let mut p = Process::start(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--auth-resource",
        RESOURCE,
    ]);
    let status = p.exit();
    assert!(
        status.is_some_and(|s| !s.success()),
        "{status:?}: {:?}",
        p.lines()
    );
    // The reader thread may still be reading the last line.
    std::thread::sleep(Duration::from_millis(100));
    let text = p.lines().join("\n");
    assert!(
        text.contains("--auth-issuer") && text.contains("--auth-server"),
        "{text}"
    );
}

#[tokio::test]
async fn optional_auth_with_no_issuer_starts_and_warns_once() {
    let p = Process::start(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--auth-resource",
        RESOURCE,
        "--auth-optional",
    ]);
    let addr = p.addr();
    let r = call(addr, "billing_list_invoices", json!({}), &[]).await;
    assert_eq!(r.status, 200, "served anonymously: {r:?}");
    let warned: Vec<String> = p
        .lines()
        .into_iter()
        .filter(|l| l.contains("WARN") && l.contains("names no issuer"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", p.lines());
}

#[tokio::test]
async fn forwarding_headers_from_an_untrusted_peer_are_warned_about_once() {
    let p = Process::start(&["serve", "--http", "127.0.0.1:0", "--stateless"]);
    let addr = p.addr();
    let warned = |p: &Process| {
        p.lines()
            .into_iter()
            .filter(|l| l.contains("WARN") && l.contains("--trust-proxy"))
            .collect::<Vec<_>>()
    };
    let r = call(addr, "billing_list_invoices", json!({}), &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    // nginx writes X-Forwarded-For; the server was not told to trust it.
    let nginx = Nginx::start(&[addr], free_port());
    for _ in 0..2 {
        let r = call(nginx.addr, "billing_list_invoices", json!({}), &[]).await;
        assert_eq!(r.status, 200, "{r:?}");
    }
    let start = Instant::now();
    while warned(&p).is_empty() && start.elapsed() < LIMIT {
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // Time for a second line, were there one.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let lines = warned(&p);
    assert_eq!(lines.len(), 1, "{:?}", p.lines());
    assert!(
        lines[0].contains("127.0.0.1") && lines[0].contains("HttpOptions::trust_proxy"),
        "{}",
        lines[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_proxys_clients_are_capped_per_forwarded_address() {
    let gate = Arc::new(Gate::default());
    let running = spawn_http(
        server(Arc::clone(&gate)),
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default()
            .stateless(true)
            .trust_proxy([127, 0, 0, 1].into())
            .max_connections_per_ip(2),
    )
    .await
    .unwrap_or_else(|e| panic!("spawn: {e}"));
    let nginx = Nginx::start(&[running.local_addr], free_port());
    let proxy = nginx.addr;
    // nginx appends its peer (127.0.0.1, trusted) to what the client sent.
    let a = [("x-forwarded-for", "203.0.113.7")];
    let b = [("x-forwarded-for", "203.0.113.8")];

    let held: Vec<_> = (0..2)
        .map(|i| {
            tokio::spawn(
                async move { call(proxy, "id_hold", json!({"progressToken": i}), &a).await },
            )
        })
        .collect();
    let start = Instant::now();
    while gate.entered.load(Ordering::SeqCst) < 2 {
        assert!(start.elapsed() < LIMIT, "the held calls did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let refused = whoami_with(proxy, &a).await;
    assert_eq!(refused.status, 503, "a third in flight from A: {refused:?}");
    assert_eq!(refused.header("retry-after"), Some("5"), "{refused:?}");
    let other = whoami_with(proxy, &b).await;
    assert_eq!(other.status, 200, "another forwarded address: {other:?}");

    // One held stream ends: its place is free.
    gate.release.add_permits(1);
    let (first, _, rest) = futures::future::select_all(held).await;
    let first = first.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.status, 200, "{first:?}");
    assert!(
        first.body.contains("notifications/progress"),
        "an SSE stream: {first:?}"
    );
    let admitted = whoami_with(proxy, &a).await;
    assert_eq!(admitted.status, 200, "after one closed: {admitted:?}");

    gate.release.add_permits(1);
    for task in rest {
        let r = task.await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.status, 200, "{r:?}");
    }
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn another_scheme_is_no_credentials_and_a_malformed_bearer_is_invalid_request() {
    let required = serve_auth(AuthMode::Required).await;
    let basic = [("authorization", "Basic dXNlcjpwYXNz")];
    let r = whoami_with(required.local_addr, &basic).await;
    assert_eq!(r.status, 401, "{r:?}");
    let url = "https://billing.example.com/.well-known/oauth-protected-resource/mcp";
    assert_eq!(
        r.header("www-authenticate"),
        Some(format!("Bearer resource_metadata=\"{url}\"").as_str()),
        "a challenge without an error code: {r:?}"
    );
    for malformed in ["Bearer", "Bearer a b"] {
        let r = whoami_with(required.local_addr, &[("authorization", malformed)]).await;
        assert_eq!(r.status, 401, "{malformed}: {r:?}");
        let challenge = r.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.contains("error=\"invalid_request\""),
            "{malformed}: {challenge}"
        );
    }
    required.shutdown().await.unwrap_or_else(|e| panic!("{e}"));

    let optional = serve_auth(AuthMode::Optional).await;
    let r = whoami_with(optional.local_addr, &basic).await;
    assert_eq!(r.status, 200, "served anonymously: {r:?}");
    let text = r.message()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let said: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(said["subject"], Value::Null, "{text}");
    optional.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
