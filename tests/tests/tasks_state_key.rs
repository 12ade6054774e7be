//! Start-up says when shared tasks have no shared key (issue 56): `billing-server serve
//! --http --redis-url …` (its tasks in a real Redis, shared with any other instance) without
//! `FUSION_REQUEST_STATE_KEY` warns that `tasks/list` cursors are sealed per instance (a
//! cursor from one is refused by another) and says what to set; with the key, or without
//! Redis, it says nothing of it.

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

use fusion_tests::services::Redis;

/// The warning's words.
const WARNING: &str =
    "tasks are shared with other instances, but FUSION_REQUEST_STATE_KEY is not set";

/// Runs `billing-server serve --http` with `args` (and `key` as `FUSION_REQUEST_STATE_KEY`
/// when given) until it says where it serves: what it wrote on stderr by then.
fn start_up(args: &[&str], key: Option<&str>) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_billing-server"));
    command
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .env("RUST_LOG", "warn")
        .env_remove("FUSION_REQUEST_STATE_KEY")
        .env_remove("BILLING_OPERATOR_TOKEN")
        .env_remove("BILLING_LEDGER_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(key) = key {
        command.env("FUSION_REQUEST_STATE_KEY", key);
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("spawn billing-server: {e}"));
    let stderr = child.stderr.take();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Some(stderr) = stderr else { return };
        let mut seen = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("serving MCP over streamable HTTP") {
                let _ = tx.send(seen);
                return;
            }
        }
        let _ = tx.send(seen);
    });
    let seen = rx.recv_timeout(Duration::from_secs(30));
    let _ = child.kill();
    let _ = child.wait();
    seen.unwrap_or_else(|e| panic!("billing-server did not start: {e}"))
}

#[test]
fn shared_tasks_without_a_shared_key_warn_at_start() {
    let redis = Redis::start();
    let shared = ["--redis-url", redis.url.as_str()];
    let log = start_up(&shared, None);
    assert!(log.contains("serving MCP"), "{log}");
    assert!(log.contains(WARNING), "no warning: {log}");
    assert!(
        log.contains("give every instance the same FUSION_REQUEST_STATE_KEY"),
        "{log}"
    );
    // A key too short to be used is no shared key either.
    let log = start_up(&shared, Some("short"));
    assert!(log.contains(WARNING), "no warning with a short key: {log}");
    // With a shared key, or with tasks in this process only, nothing to say.
    let key = "a-shared-state-key-of-at-least-32-bytes";
    let log = start_up(&shared, Some(key));
    assert!(
        log.contains("serving MCP") && !log.contains(WARNING),
        "{log}"
    );
    let log = start_up(&[], None);
    assert!(
        log.contains("serving MCP") && !log.contains(WARNING),
        "{log}"
    );
}
