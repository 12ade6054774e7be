//! The echo tools of the plain-call tests (`stateless_plain_call.rs`, `live_session_calls.rs`):
//! `echo.say` (logs first when loud), `echo.ask` (asks the user), `echo.wait` (ten seconds,
//! counted while it runs and when it is dropped unfinished), and what those tests read back.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fusion_runtime::{Context, LogLevel, ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::raw_http::RawResponse;

/// What to say.
#[derive(Deserialize, ToolInput)]
pub struct Say {
    /// The words, 1 to 20 characters.
    #[fusion(length(min = 1, max = 20))]
    pub text: String,
    /// Log a warning before answering.
    pub loud: Option<bool>,
}

/// Says the words back; a loud call logs them first.
#[tool_action(name = "echo.say")]
pub async fn say(input: Say, cx: Context) -> Result<Value, ToolError> {
    #[allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.
    let logged = input.loud == Some(true)
        && cx
            .log(LogLevel::Warning, json!({ "said": input.text }))
            .await;
    Ok(json!({ "said": input.text, "logged": logged }))
}

/// A question for the user.
#[derive(Deserialize, ToolInput)]
pub struct Ask {
    /// What to ask.
    #[fusion(length(min = 1, max = 50))]
    pub question: String,
}

/// Asks the user (a client that cannot be asked gets the error that says why).
#[tool_action(name = "echo.ask")]
pub async fn ask(input: Ask, cx: Context) -> Result<Value, ToolError> {
    let schema = json!({ "type": "object", "properties": { "ok": { "type": "boolean" } } });
    let schema = schema.as_object().cloned().unwrap_or_default();
    let answer = cx.elicit_with_schema(input.question, schema).await?;
    Ok(json!({ "answer": format!("{answer:?}") }))
}

/// Which call to wait in.
#[derive(Deserialize, ToolInput)]
pub struct Wait {
    /// A tag the test finds the call by.
    #[fusion(range(min = 0, max = 1000))]
    pub tag: u32,
}

/// Calls of `echo.wait` running now, and ended without finishing (dropped: cancelled). One
/// test of a binary reads them at a time.
pub static WAITING: AtomicUsize = AtomicUsize::new(0);
pub static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// Counts the call as dropped unless it finished.
struct Running(bool);

impl Drop for Running {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, Ordering::SeqCst);
        if !self.0 {
            DROPPED.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Waits ten seconds, unless cancelled.
#[tool_action(name = "echo.wait")]
pub async fn wait(input: Wait) -> Result<Value, ToolError> {
    WAITING.fetch_add(1, Ordering::SeqCst);
    let mut running = Running(false);
    tokio::time::sleep(Duration::from_secs(10)).await;
    running.0 = true;
    Ok(json!({ "tag": input.tag }))
}

/// The `data:` of each SSE event that has data, as JSON, in order.
pub fn events(r: &RawResponse) -> Vec<Value> {
    r.body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect()
}

/// Polls `done` every 2 ms for up to 5 s; how long it took.
pub async fn within(what: &str, done: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{what}: not within 5 s"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    start.elapsed()
}

/// A 2025-06-18 plain `echo.wait` call (in `session`, if given) on a raw connection, left
/// open.
pub async fn open_call(addr: SocketAddr, session: Option<&str>, id: u32) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": { "name": "echo_wait", "arguments": { "tag": id } } })
    .to_string();
    let session = session
        .map(|s| format!("mcp-session-id: {s}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n\
         {session}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    stream
        .write_all(head.as_bytes())
        .await
        .unwrap_or_else(|e| panic!("write: {e}"));
    stream
}

/// Waits (up to 5 s) until `dropped` calls of `echo.wait` have been cancelled in all, then
/// checks that none runs.
pub async fn cancelled_in_all(dropped: usize) {
    within("the call is cancelled", || {
        DROPPED.load(Ordering::SeqCst) == dropped
    })
    .await;
    assert_eq!(WAITING.load(Ordering::SeqCst), 0, "a call still runs");
}
