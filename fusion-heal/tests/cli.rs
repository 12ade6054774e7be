//! The installed command, as CI runs it: the `fusion-heal` binary against a server listening on
//! loopback (a Fusion server over streamable HTTP, started by the test), its table on stdout
//! and its exit status — 0 when the threshold is met, 1 when not, 2 when the check cannot run.
//! `tests/tests/heal_any_server.rs` (package `fusion-tests`) runs it against the benches' bare
//! rmcp server and Fusion's, over HTTP and stdio.

use std::net::SocketAddr;
use std::process::Output;
use std::time::Duration;

use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::{Server, ToolError, ToolInput, tool_action};
use serde::Deserialize;

/// An account to open.
#[derive(Deserialize, ToolInput)]
struct Open {
    /// The account's ID, e.g. `acc_abc123`.
    #[fusion(pattern = "^acc_[a-z0-9]{6,12}$")]
    id: String,
    /// Seats, 1 to 100.
    #[fusion(range(min = 1, max = 100))]
    seats: u32,
}

/// Opens an account.
#[tool_action(name = "accounts.open")]
async fn open(input: Open) -> Result<String, ToolError> {
    Ok(format!("{} opened with {} seats", input.id, input.seats))
}

/// A code.
#[derive(Deserialize, ToolInput)]
struct Code {
    /// A code, e.g. `AB12`.
    #[fusion(pattern = "^[A-Z]{2}[0-9]{2}$", expected = "a valid code")]
    code: String,
}

/// Checks a code; its lines hide the rule (`Expected a valid code`), so a pattern case cannot
/// heal from them.
#[tool_action(name = "codes.check")]
async fn check(input: Code) -> Result<String, ToolError> {
    Ok(input.code)
}

async fn listening() -> HttpServer {
    let server = Server::builder()
        .action::<OpenAction>()
        .action::<CheckAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    spawn_http(
        server,
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

async fn heal(args: &[&str]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_fusion-heal"));
    command.args(args).kill_on_drop(true);
    tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .unwrap_or_else(|_| panic!("fusion-heal {args:?} did not finish in 120 s"))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scores_a_server_and_exits_by_the_threshold() {
    let running = listening().await;
    let url = format!("http://{}/mcp", running.local_addr);

    // The tool whose lines say its rules: every broken call heals.
    let all = heal(&[&url, "--tool", "accounts_open"]).await;
    let out = stdout(&all);
    assert_eq!(all.status.code(), Some(0), "{out}");
    assert!(out.contains("| accounts_open |"), "{out}");
    assert!(!out.contains("| codes_check |"), "{out}");
    assert!(out.contains("| pattern |"), "{out}");
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.ends_with("healed in one round (100.0 %); threshold 100 %: met"),
        "{last}"
    );

    // Both tools: the mute one's pattern case fails a 100 % threshold, not a lower one.
    let strict = heal(&[&url]).await;
    let out = stdout(&strict);
    assert_eq!(strict.status.code(), Some(1), "{out}");
    assert!(out.contains("[pattern] codes_check"), "{out}");
    assert!(out.ends_with("threshold 100 %: not met\n"), "{out}");
    let lenient = heal(&[&url, "--min-healed", "50", "--all-cases"]).await;
    let out = stdout(&lenient);
    assert_eq!(lenient.status.code(), Some(0), "{out}");
    assert!(out.contains("every case:"), "{out}");

    // What cannot run: exit 2, said on stderr.
    let unknown = heal(&[&url, "--tool", "nope"]).await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("tools/list shows no 'nope'"));
    let bad = heal(&[&url, "--min-healed", "140"]).await;
    assert_eq!(bad.status.code(), Some(2));
    running.shutdown().await.unwrap_or_else(|e| panic!("{e}"));

    // Nothing listens there any more.
    let gone = heal(&[&url, "--timeout", "5"]).await;
    assert_eq!(gone.status.code(), Some(2), "{}", stdout(&gone));
    let spawn = heal(&["--", "/nonexistent/server"]).await;
    assert_eq!(spawn.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&spawn.stderr).contains("/nonexistent/server"),
        "{}",
        String::from_utf8_lossy(&spawn.stderr)
    );
}
