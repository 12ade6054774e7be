//! The shipped logging defaults cost nothing per request: the billing example (the spawned
//! `billing-server` binary, `cli::run`), served without `RUST_LOG` over stdio and over
//! stateless streamable HTTP, answers the demo's calls (successes, validation errors, an
//! unknown tool, a guard's refusal, a panicking handler) and writes its startup line and the
//! panic's error to stderr, and nothing per request.
//! The same run with `RUST_LOG=info` writes lines per request, so the check can fail.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

const LIMIT: Duration = Duration::from_secs(30);

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} took more than {LIMIT:?}"),
    }
}

fn command(rust_log: Option<&str>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_billing-server"));
    command
        .env_remove("RUST_LOG")
        .env_remove("BILLING_OPERATOR_TOKEN")
        .env_remove("BILLING_LEDGER_DIR")
        .kill_on_drop(true);
    if let Some(level) = rust_log {
        command.env("RUST_LOG", level);
    }
    command
}

/// The demo's calls and an unknown tool; returns how many were answered with a result.
async fn drive(client: &RunningService<RoleClient, ()>) -> usize {
    let mut calls = examples::billing::demo::script();
    calls.push(("billing_no_such_tool", json!({}), "an unknown tool"));
    let mut answered = 0;
    for (tool, args, _) in calls {
        let arguments = args.as_object().cloned().unwrap_or_default();
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        if bounded(tool, client.call_tool(params)).await.is_ok() {
            answered += 1;
        }
    }
    answered
}

async fn read_all(mut stderr: impl AsyncRead + Unpin) -> String {
    let mut text = String::new();
    let _ = bounded("stderr", stderr.read_to_string(&mut text)).await;
    text
}

/// Serves the demo over stdio; returns the server's stderr.
async fn over_stdio(rust_log: Option<&str>) -> String {
    let mut command = command(rust_log);
    command.arg("serve");
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn billing-server: {e}"));
    let Some(stderr) = stderr else {
        panic!("stderr is piped")
    };
    let stderr = tokio::spawn(read_all(stderr));
    let client = bounded("stdio handshake", ().serve(transport))
        .await
        .unwrap_or_else(|e| panic!("stdio handshake: {e}"));
    assert!(drive(&client).await >= 10, "the calls are answered");
    // Closing stdin ends the server, and with it stderr.
    let _ = client.cancel().await;
    bounded("stderr", stderr)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Serves the demo over stateless streamable HTTP; returns the server's stderr.
async fn over_http(rust_log: Option<&str>) -> String {
    let mut command = command(rust_log);
    command
        .args(["serve", "--http", "127.0.0.1:0", "--stateless"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("spawn billing-server: {e}"));
    let Some(stderr) = child.stderr.take() else {
        panic!("stderr is piped")
    };
    let mut stderr = BufReader::new(stderr);
    let mut startup = String::new();
    bounded("startup line", stderr.read_line(&mut startup))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let Some(url) = startup
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
    else {
        panic!("no URL in the startup line: {startup:?}")
    };
    let client = bounded(
        "http handshake",
        ().serve(StreamableHttpClientTransport::from_uri(url.to_owned())),
    )
    .await
    .unwrap_or_else(|e| panic!("http handshake: {e}"));
    assert!(drive(&client).await >= 10, "the calls are answered");
    let _ = client.cancel().await;
    let _ = child.start_kill();
    let _ = bounded("exit", child.wait()).await;
    startup + &read_all(stderr).await
}

/// The `tracing` lines of `stderr` at `level` (the panic hook's own lines are not `tracing`'s).
fn at<'a>(stderr: &'a str, level: &str) -> Vec<&'a str> {
    let tag = format!("Z {level:>5} ");
    stderr.lines().filter(|l| l.contains(&tag)).collect()
}

/// What every default run shows: the one error (the demo's panicking handler) and no
/// warning, debug or trace line.
fn errors_only(stderr: &str) {
    let errors = at(stderr, "ERROR");
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("handler panicked"), "{stderr}");
    for level in ["WARN", "DEBUG", "TRACE"] {
        assert!(at(stderr, level).is_empty(), "{level}: {stderr}");
    }
}

#[tokio::test]
async fn stdio_by_default_logs_its_startup_and_errors_and_nothing_per_request() {
    let quiet = over_stdio(None).await;
    let info = at(&quiet, "INFO");
    assert_eq!(info.len(), 1, "only the startup line: {quiet}");
    assert!(info[0].contains("serving MCP over stdio"), "{quiet}");
    errors_only(&quiet);

    let asked = over_stdio(Some("info")).await;
    assert!(
        at(&asked, "INFO").len() > 2,
        "RUST_LOG=info brings the per-request lines back: {asked}"
    );
}

#[tokio::test]
async fn http_by_default_logs_its_startup_and_errors_and_nothing_per_request() {
    let quiet = over_http(None).await;
    assert!(
        quiet.starts_with("fusion: serving MCP over streamable HTTP at http://127.0.0.1:"),
        "{quiet}"
    );
    assert!(
        at(&quiet, "INFO").is_empty(),
        "no line per request: {quiet}"
    );
    errors_only(&quiet);

    let asked = over_http(Some("info")).await;
    // rmcp writes lines for each stateless request when asked: 11 calls and the handshake.
    assert!(
        at(&asked, "INFO").len() > 12,
        "RUST_LOG=info brings the per-request lines back: {asked}"
    );
}
