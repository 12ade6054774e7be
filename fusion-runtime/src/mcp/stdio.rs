//! The stdio transport: newline-delimited JSON-RPC read with a bounded line length, checked
//! before rmcp sees it (see [`jsonrpc`](super::jsonrpc)), and one ordered writer for
//! everything that goes out.
//!
//! Lifecycle: the server ends, successfully, when the client closes its input, at any
//! point. Before `initialize` (or the first request of a 2026-07-28 client, which sends
//! none), responses and notifications are ignored: rmcp would end the session on them.

use std::borrow::Cow;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::{Sink, Stream};
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, ProtocolVersion};
use rmcp::service::{ServerInitializeError, TxJsonRpcMessage};
use rmcp::{ServerHandler, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

use super::McpHandler;
use super::jsonrpc::{self, INVALID_REQUEST, Refusal, Reply};
use crate::server::Server;

/// The longest line (one JSON-RPC message) read by default: 4 MiB, as rmcp's HTTP body cap.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Messages read ahead of rmcp, and answers queued ahead of the writer.
const QUEUE: usize = 64;

/// Options of the stdio transport.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct StdioOptions {
    /// The longest line accepted, newline excluded. A longer line is answered with
    /// `-32600` as soon as it passes the bound, and skipped to its newline unbuffered.
    pub max_line_bytes: usize,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

impl StdioOptions {
    /// Sets the longest line accepted.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }
}

/// Serves `server` over this process's stdin and stdout until the client closes stdin.
pub async fn serve_stdio_with(server: Server, options: StdioOptions) -> anyhow::Result<()> {
    let (read, write) = rmcp::transport::stdio_pipes();
    serve_io(server, read, write, options).await
}

/// Serves `server` over any byte streams (newline-delimited JSON-RPC, as over stdio) until
/// `read` ends. Returns once everything answered is written.
pub async fn serve_io<R, W>(
    server: Server,
    read: R,
    write: W,
    options: StdioOptions,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let handler = McpHandler::new(server.clone());
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(QUEUE);
    let (in_tx, in_rx) = mpsc::channel::<ClientJsonRpcMessage>(QUEUE);
    let writer = tokio::spawn(write_lines(write, out_rx));
    let reader = tokio::spawn(read_lines(Reading {
        lines: LineReader::new(read, options.max_line_bytes),
        server,
        lifecycle: Lifecycle {
            started: false,
            supported: handler.supported_protocol_versions(),
        },
        inbox: in_tx,
        outbox: out_tx.clone(),
    }));
    let sink = LineSink(PollSender::new(out_tx));
    let served = match handler.serve((sink, Inbox(in_rx))).await {
        Ok(running) => running
            .waiting()
            .await
            .map(drop)
            .map_err(anyhow::Error::from),
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(e.into()),
    };
    // rmcp is done (input closed, or output failed): stop reading, flush what is queued.
    reader.abort();
    let _ = reader.await;
    let _ = writer.await;
    served
}

/// Writes each queued line, flushing when the queue is empty.
async fn write_lines<W: AsyncWrite + Unpin>(write: W, mut queue: mpsc::Receiver<Vec<u8>>) {
    let mut out = BufWriter::with_capacity(64 * 1024, write);
    while let Some(line) = queue.recv().await {
        if out.write_all(&line).await.is_err() {
            return;
        }
        while let Ok(line) = queue.try_recv() {
            if out.write_all(&line).await.is_err() {
                return;
            }
        }
        if out.flush().await.is_err() {
            return;
        }
    }
}

/// rmcp's outgoing messages, serialized into the writer's queue.
struct LineSink(PollSender<Vec<u8>>);

fn closed<T>(_: T) -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed")
}

impl Sink<TxJsonRpcMessage<RoleServer>> for LineSink {
    type Error = io::Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().0.poll_reserve(cx).map_err(closed)
    }

    fn start_send(self: Pin<&mut Self>, item: TxJsonRpcMessage<RoleServer>) -> io::Result<()> {
        let mut line = serde_json::to_vec(&item).map_err(io::Error::other)?;
        line.push(b'\n');
        self.get_mut().0.send_item(line).map_err(closed)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().0.close();
        Poll::Ready(Ok(()))
    }
}

/// The messages the reader passed on, for rmcp.
struct Inbox(mpsc::Receiver<ClientJsonRpcMessage>);

impl Stream for Inbox {
    type Item = ClientJsonRpcMessage;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().0.poll_recv(cx)
    }
}

struct Reading<R> {
    lines: LineReader<R>,
    server: Server,
    lifecycle: Lifecycle,
    inbox: mpsc::Sender<ClientJsonRpcMessage>,
    outbox: mpsc::Sender<Vec<u8>>,
}

/// Reads lines until the input ends (or rmcp stops taking them).
async fn read_lines<R: AsyncRead + Unpin>(mut r: Reading<R>) {
    loop {
        let refusal = match r.lines.next().await {
            Line::Eof => return,
            Line::Failed(e) => {
                tracing::debug!(error = %e, "reading stdin failed");
                return;
            }
            Line::TooLong => Refusal::Reply(Reply::error(
                serde_json::Value::Null,
                INVALID_REQUEST,
                format!("Invalid Request: the message exceeds {} bytes", r.lines.max),
            )),
            Line::Ready => {
                let line = r.lines.line.trim_ascii();
                if line.is_empty() {
                    continue;
                }
                match jsonrpc::read_line(line, &r.server) {
                    Ok(message) => {
                        if r.lifecycle.admit(&message) && r.inbox.send(message).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    Err(refusal) => refusal,
                }
            }
        };
        match refusal {
            Refusal::Reply(reply) => {
                let mut line = reply.to_json();
                line.push(b'\n');
                if r.outbox.send(line).await.is_err() {
                    return;
                }
            }
            Refusal::Ignore(what) => tracing::debug!("ignored {what}"),
        }
    }
}

/// Whether the session has begun, as rmcp decides it: on `initialize`, or on the first
/// request other than `ping` and `server/discover` with complete 2026-07-28 `_meta`.
struct Lifecycle {
    started: bool,
    supported: Cow<'static, [ProtocolVersion]>,
}

impl Lifecycle {
    /// Whether to pass `message` on: before the session, rmcp ends it on anything but a
    /// request, so responses and notifications are dropped.
    fn admit(&mut self, message: &ClientJsonRpcMessage) -> bool {
        if self.started {
            return true;
        }
        let ClientJsonRpcMessage::Request(request) = message else {
            tracing::debug!("ignored a response or notification sent before initialize");
            return false;
        };
        self.started = match &request.request {
            ClientRequest::InitializeRequest(_) => true,
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
            other => {
                let meta = other.get_meta();
                meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                    .is_empty()
                    && meta
                        .protocol_version()
                        .is_some_and(|v| self.supported.contains(&v))
            }
        };
        true
    }
}

enum Line {
    /// A whole line is in `LineReader::line` (its newline, if any, removed).
    Ready,
    /// A line passed the bound; it is being skipped.
    TooLong,
    Eof,
    Failed(io::Error),
}

/// Reads lines without ever holding more than `max` bytes of one.
struct LineReader<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    /// Skipping the rest of a line already answered as too long.
    discarding: bool,
    ended: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(read: R, max: usize) -> Self {
        LineReader {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            max,
            discarding: false,
            ended: false,
        }
    }

    async fn next(&mut self) -> Line {
        self.line.clear();
        if self.line.capacity() > 1024 * 1024 {
            self.line.shrink_to(64 * 1024);
        }
        if self.ended {
            return Line::Eof;
        }
        loop {
            let available = match self.read.fill_buf().await {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Line::Failed(e),
            };
            if available.is_empty() {
                self.ended = true;
                // An unterminated last line is still a message.
                return if self.discarding || self.line.is_empty() {
                    Line::Eof
                } else {
                    Line::Ready
                };
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let content = newline.unwrap_or(available.len());
            let consumed = newline.map_or(available.len(), |i| i + 1);
            let mut too_long = false;
            if !self.discarding {
                if self.line.len() + content > self.max {
                    self.line.clear();
                    self.discarding = true;
                    too_long = true;
                } else {
                    self.line.extend_from_slice(&available[..content]);
                }
            }
            self.read.consume(consumed);
            if newline.is_some() && self.discarding {
                self.discarding = false;
                if !too_long {
                    continue;
                }
            }
            if too_long {
                return Line::TooLong;
            }
            if newline.is_some() {
                return Line::Ready;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Result<String, &'static str>> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        for _ in 0..100 {
            match reader.next().await {
                Line::Ready => out.push(Ok(String::from_utf8_lossy(&reader.line).into_owned())),
                Line::TooLong => out.push(Err("too long")),
                Line::Eof => return out,
                Line::Failed(_) => out.push(Err("failed")),
            }
        }
        panic!("no end");
    }

    #[tokio::test]
    async fn lines_are_bounded_and_the_next_one_is_read() {
        assert_eq!(
            lines(b"abc\ndefgh\nij\r\n\nklmnopq", 4).await,
            vec![
                Ok("abc".into()),
                Err("too long"),
                Ok("ij\r".into()),
                Ok("".into()),
                Err("too long"),
            ]
        );
        // Exactly the bound is accepted; an unterminated last line is still read.
        assert_eq!(
            lines(b"abcd\nxy", 4).await,
            vec![Ok("abcd".into()), Ok("xy".into())]
        );
        assert_eq!(lines(b"", 4).await, vec![]);
    }

    #[tokio::test]
    async fn a_long_line_is_skipped_without_being_held() {
        // Longer than the read buffer, so it arrives in several chunks.
        let mut input = vec![b'x'; 200 * 1024];
        input.extend_from_slice(b"\nok\n");
        let mut reader = LineReader::new(&input[..], 1024);
        assert!(matches!(reader.next().await, Line::TooLong));
        assert!(reader.line.capacity() <= 1024);
        assert!(matches!(reader.next().await, Line::Ready));
        assert_eq!(reader.line, b"ok");
        assert!(matches!(reader.next().await, Line::Eof));
    }
}
