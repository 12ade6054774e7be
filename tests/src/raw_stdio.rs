//! A client that speaks raw JSON-RPC lines over stdio — to an in-process server
//! ([`RawStdio::serve`]) or over any pair of pipes, such as a child process's
//! ([`RawStdio::over`]) — for tests that must write `_meta` exactly and see every message the
//! server sends.

use std::time::Duration;

use fusion_runtime::Server;
use fusion_runtime::mcp::{StdioOptions, serve_io};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};

/// How long a test waits for a message it expects (CI is a loaded 2-core machine).
pub const WAIT: Duration = Duration::from_secs(10);

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// One side of a stdio conversation, in JSON-RPC lines.
pub struct RawStdio {
    lines: Lines<BufReader<Reader>>,
    writer: Option<Writer>,
}

impl RawStdio {
    /// Serves `server` with the default [`StdioOptions`] over an in-memory pipe, on a task of
    /// its own that ends when this client is dropped.
    pub fn serve(server: Server) -> RawStdio {
        let (server_io, client_io) = tokio::io::duplex(256 * 1024);
        let (read, write) = tokio::io::split(server_io);
        tokio::spawn(async move {
            let _ = serve_io(server, read, write, StdioOptions::default()).await;
        });
        let (reader, writer) = tokio::io::split(client_io);
        RawStdio::over(reader, writer)
    }

    /// Speaks over `reader` (the server's output) and `writer` (its input).
    pub fn over(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> RawStdio {
        RawStdio {
            lines: BufReader::new(Box::new(reader) as Reader).lines(),
            writer: Some(Box::new(writer)),
        }
    }

    /// Writes one message as a line.
    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        let writer = self
            .writer
            .as_mut()
            .unwrap_or_else(|| panic!("the input was closed"));
        tokio::time::timeout(WAIT, async {
            writer.write_all(line.as_bytes()).await?;
            writer.flush().await
        })
        .await
        .unwrap_or_else(|_| panic!("writing took more than {WAIT:?}"))
        .unwrap_or_else(|e| panic!("write: {e}"));
    }

    /// Closes the server's input: it sees the end of its stream.
    pub fn close(&mut self) {
        self.writer = None;
    }

    /// The next message; panics when none comes within [`WAIT`].
    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("nothing arrived in {WAIT:?}"))
            .unwrap_or_else(|e| panic!("read: {e}"))
            .unwrap_or_else(|| panic!("the server closed the stream"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The next message, or `None` when nothing comes within `quiet` (or the stream ended).
    pub async fn maybe_next(&mut self, quiet: Duration) -> Option<Value> {
        let line = tokio::time::timeout(quiet, self.lines.next_line())
            .await
            .ok()?
            .ok()??;
        serde_json::from_str(&line).ok()
    }

    /// Sends a request; returns the messages that came before its response, and the response
    /// (the message with its `id` that is not itself a request of the server's).
    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        let mut before = Vec::new();
        loop {
            let message = self.next().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return (before, message);
            }
            before.push(message);
        }
    }

    /// The 2025 handshake: `initialize` (id 0) with `version` and `capabilities`, then
    /// `notifications/initialized`. Returns the answer to `initialize`.
    pub async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let params = json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": { "name": "raw", "version": "1" },
        });
        let (_, answer) = self.request(0, "initialize", params).await;
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        answer
    }
}
