//! The stdio transport: newline-delimited JSON-RPC read with a bounded line length, checked
//! before rmcp sees it (see [`jsonrpc`]), and one ordered writer for
//! everything that goes out.
//!
//! Lifecycle: the server ends, successfully, when the client closes its input, at any
//! point. Before `initialize` (or the first request of a 2026-07-28 client, which sends
//! none), responses and notifications are ignored: rmcp would end the session on them.
//!
//! A session that initialized with 2025-11-25, on a server with task actions, has its task
//! messages (which rmcp does not parse) answered before rmcp by
//! [`handlers::tasks_2025`](super::handlers::tasks_2025), as over HTTP: each answer one line,
//! a `tasks/result` of a task still running its messages line by line as they come (the
//! stream is ended, unanswered, when the input ends). Its `initialize` and `tools/list`
//! answers are edited on their way out to advertise the tasks (`Advertise`).

use std::borrow::Cow;
use std::io;

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion, ServerResult,
};
use rmcp::service::{ServerInitializeError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Mutex, mpsc};
use tokio_util::bytes::{Bytes, BytesMut};
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::handlers::McpHandler;
use super::handlers::tasks::Can;
use super::handlers::tasks_2025::{self, Advertise, Answered, Caller};
use super::jsonrpc::{self, Refusal, Reply};
use crate::server::Server;

/// The longest line (one JSON-RPC message) read by default: 4 MiB, as rmcp's HTTP body cap.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Messages read ahead of rmcp.
const QUEUE: usize = 64;

/// Options of the stdio transport.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct StdioOptions {
    /// The longest line accepted, newline excluded. A longer line is answered with
    /// `-32600` as soon as it passes the bound, and skipped to its newline unbuffered.
    pub max_line_bytes: usize,
    /// Who every call is made by; `None` (the default): anonymous, so actions with scopes
    /// answer `AUTH_REQUIRED`. No token travels over stdio: the embedding code decides.
    pub principal: Option<crate::auth::Principal>,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            principal: None,
        }
    }
}

impl StdioOptions {
    /// Every call is made by `principal` (see [`auth`](crate::auth)).
    pub fn principal(mut self, principal: crate::auth::Principal) -> Self {
        self.principal = Some(principal);
        self
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
    // Tokio's blocking-pool handles: measured faster here than rmcp's non-blocking
    // `stdio_pipes` (about 1.5x per call, sequential and pipelined).
    serve_io(server, tokio::io::stdin(), tokio::io::stdout(), options).await
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
    let handler = McpHandler::new(server.clone()).with_principal(options.principal.clone());
    let out = Arc::new(Mutex::new(BufWriter::with_capacity(64 * 1024, write)));
    let (in_tx, in_rx) = mpsc::channel::<ClientJsonRpcMessage>(QUEUE);
    let tasks_2025 = Arc::new(std::sync::OnceLock::new());
    let streams = CancellationToken::new();
    let reader = tokio::spawn(read_lines(Reading {
        lines: LineReader::new(read, options.max_line_bytes),
        server: server.clone(),
        lifecycle: Lifecycle {
            started: false,
            supported: handler.supported_protocol_versions(),
            tasks_2025: Arc::clone(&tasks_2025),
            has_tasks: server.has_tasks(),
        },
        principal: options.principal.clone(),
        inbox: in_tx,
        out: out.clone(),
        streams: streams.clone(),
        _streams_end: streams.drop_guard(),
    }));
    let transport = LineTransport {
        out,
        inbox: in_rx,
        advertise: server.has_tasks().then(|| Advertising {
            server,
            listable: options.principal.is_some(),
            tasks_2025,
        }),
    };
    let served = match handler.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(drop)
            .map_err(anyhow::Error::from),
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(e.into()),
    };
    // rmcp is done (input closed, or output failed): stop reading.
    reader.abort();
    let _ = reader.await;
    served
}

/// One ordered writer: whole lines under the lock, flushed each.
type Out<W> = Arc<Mutex<BufWriter<W>>>;

async fn write_line<W: AsyncWrite + Unpin>(out: &Out<W>, line: &[u8]) -> io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.flush().await
}

/// rmcp's side: messages the reader passed on, answers written straight to the output.
struct LineTransport<W> {
    out: Out<W>,
    inbox: mpsc::Receiver<ClientJsonRpcMessage>,
    /// On a server with task actions: how a 2025-11-25 session's answers advertise them.
    advertise: Option<Advertising>,
}

/// What a 2025-11-25 session's `initialize` and `tools/list` answers gain ([`Advertise`]).
struct Advertising {
    server: Server,
    /// Whether the client is authenticated ([`StdioOptions::principal`]): only then is
    /// `tasks/list` offered.
    listable: bool,
    /// Set when the client initialized with 2025-11-25.
    tasks_2025: Arc<std::sync::OnceLock<Can>>,
}

impl Advertising {
    /// The edit `item` calls for: a 2025-11-25 `initialize` answer, a 2025-11-25 session's
    /// `tools/list` answer. Any other answer is written as rmcp wrote it.
    fn of(&self, item: &TxJsonRpcMessage<RoleServer>) -> Option<Advertise> {
        let JsonRpcMessage::Response(response) = item else {
            return None;
        };
        let tools_list = match &response.result {
            ServerResult::InitializeResult(init)
                if init.protocol_version == ProtocolVersion::V_2025_11_25 =>
            {
                false
            }
            ServerResult::ListToolsResult(_) if self.tasks_2025.get().is_some() => true,
            _ => return None,
        };
        Some(Advertise {
            server: self.server.clone(),
            tools_list,
            listable: self.listable,
        })
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<W> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let out = self.out.clone();
        let advertise = self.advertise.as_ref().and_then(|a| a.of(&item));
        let line = match advertise {
            None => serde_json::to_vec(&item),
            Some(advertise) => serde_json::to_value(&item).and_then(|mut message| {
                advertise.edit(&mut message);
                serde_json::to_vec(&message)
            }),
        }
        .map(|mut line| {
            line.push(b'\n');
            line
        });
        async move { write_line(&out, &line.map_err(io::Error::other)?).await }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.inbox.recv()
    }

    async fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct Reading<R, W> {
    lines: LineReader<R>,
    server: Server,
    lifecycle: Lifecycle,
    /// Who every call is made by ([`StdioOptions::principal`]).
    principal: Option<crate::auth::Principal>,
    inbox: mpsc::Sender<ClientJsonRpcMessage>,
    out: Out<W>,
    /// Ends the `tasks/result` streams being written ([`forward`]) …
    streams: CancellationToken,
    /// … when the reading ends (the input ended, or the transport stopped it).
    _streams_end: DropGuard,
}

/// Reads lines until the input ends (or rmcp stops taking them).
async fn read_lines<R, W>(mut r: Reading<R, W>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    loop {
        let refusal = match r.lines.next().await {
            Line::Eof => return,
            Line::Failed(e) => {
                tracing::debug!(error = %e, "reading stdin failed");
                return;
            }
            Line::TooLong => Refusal::Reply(Reply::error(
                None,
                rmcp::model::ErrorCode::INVALID_REQUEST,
                format!("Invalid Request: the message exceeds {} bytes", r.lines.max),
            )),
            Line::Ready(line) => {
                let line = line.trim_ascii();
                if line.is_empty() {
                    continue;
                }
                match jsonrpc::read_line(line, &r.server) {
                    Ok(message) => {
                        if let Some(can) = r.lifecycle.tasks_2025.get().copied()
                            && tasks_2025::may_name_a_task(line, &r.server)
                            && let Ok(value) = serde_json::from_slice::<serde_json::Value>(line)
                        {
                            let owner = crate::context::ClientKey::owner(
                                r.principal.as_ref(),
                                &crate::context::ClientKey::new(CONNECTION),
                            );
                            let caller = Caller {
                                principal: r.principal.clone(),
                                owner,
                                can,
                            };
                            if let Some(answered) =
                                Box::pin(tasks_2025::answer(&r.server, caller, &value)).await
                            {
                                if send_answered(&r.out, &r.streams, answered).await.is_err() {
                                    return;
                                }
                                continue;
                            }
                        }
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
                if write_line(&r.out, &line).await.is_err() {
                    return;
                }
            }
            Refusal::Ignore(what) => tracing::debug!("ignored {what}"),
        }
    }
}

/// The client key of the stdio connection's calls (as the 2026-07-28 tasks' owner is
/// worked out over stdio: the principal's key, else this).
const CONNECTION: &str = "connection";

/// Writes a 2025-11-25 task message's answer: a line, or, for a `tasks/result` stream, a
/// writer of its lines that runs until the stream or the reading ends.
async fn send_answered<W>(
    out: &Out<W>,
    streams: &CancellationToken,
    answered: Answered,
) -> io::Result<()>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    match answered {
        Answered::Reply(message) => write_message(out, &message).await,
        Answered::Stream(messages) => {
            tokio::spawn(forward(messages, out.clone(), streams.clone()));
            Ok(())
        }
        Answered::Taken => Ok(()),
    }
}

/// Writes the messages of a `tasks/result` stream, each a line, until it ends, the output
/// fails, or `stop` (the reading ended). Dropping `messages` ends the stream's look at its
/// task and gives its place back.
async fn forward<W: AsyncWrite + Unpin>(
    mut messages: futures::channel::mpsc::Receiver<serde_json::Value>,
    out: Out<W>,
    stop: CancellationToken,
) {
    use futures::StreamExt as _;
    loop {
        let message = tokio::select! {
            () = stop.cancelled() => return,
            message = messages.next() => match message {
                Some(message) => message,
                None => return,
            },
        };
        if write_message(&out, &message).await.is_err() {
            return;
        }
    }
}

async fn write_message<W: AsyncWrite + Unpin>(
    out: &Out<W>,
    message: &serde_json::Value,
) -> io::Result<()> {
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    write_line(out, &line).await
}

/// Whether the session has begun, as rmcp decides it: on `initialize`, or on the first
/// request other than `ping` and `server/discover` with complete 2026-07-28 `_meta`.
struct Lifecycle {
    started: bool,
    supported: Cow<'static, [ProtocolVersion]>,
    /// Whether the server has task actions.
    has_tasks: bool,
    /// Set, on a server with task actions, when the client initializes with 2025-11-25:
    /// what it declared it can answer (a task it starts may ask it that).
    tasks_2025: Arc<std::sync::OnceLock<Can>>,
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
            ClientRequest::InitializeRequest(initialize) => {
                let params = &initialize.params;
                if self.has_tasks && params.protocol_version == ProtocolVersion::V_2025_11_25 {
                    let _ = self.tasks_2025.set(Can {
                        elicit: params.capabilities.elicitation.is_some(),
                        sample: params.capabilities.sampling.is_some(),
                    });
                }
                true
            }
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
    /// A whole line, its newline removed.
    Ready(Bytes),
    /// A line passed the bound; the rest of it is skipped as it arrives.
    TooLong,
    Eof,
    Failed(io::Error),
}

/// Reads newline-delimited lines without ever holding more than `max` bytes of one
/// (`tokio_util`'s delimiter codec, driven here rather than through `FramedRead`: that
/// stream pauses after a decoder error, and a line too long is no reason to stop).
struct LineReader<R> {
    read: R,
    buffer: BytesMut,
    codec: AnyDelimiterCodec,
    max: usize,
    ended: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(read: R, max: usize) -> Self {
        LineReader {
            read,
            buffer: BytesMut::with_capacity(64 * 1024),
            codec: AnyDelimiterCodec::new_with_max_length(b"\n".to_vec(), Vec::new(), max),
            max,
            ended: false,
        }
    }

    async fn next(&mut self) -> Line {
        loop {
            let decoded = match self.ended {
                false => self.codec.decode(&mut self.buffer),
                true => self.codec.decode_eof(&mut self.buffer),
            };
            match decoded {
                Ok(Some(line)) => return Line::Ready(line),
                Ok(None) if self.ended => return Line::Eof,
                Ok(None) => {}
                Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => return Line::TooLong,
                Err(AnyDelimiterCodecError::Io(e)) => return Line::Failed(e),
            }
            if self.buffer.capacity() > 2 * 1024 * 1024 && self.buffer.is_empty() {
                // One large line grew it: give the memory back.
                self.buffer = BytesMut::with_capacity(64 * 1024);
            }
            match self.read.read_buf(&mut self.buffer).await {
                Ok(0) => self.ended = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Line::Failed(e),
            }
        }
    }
}

/// Serves `server` over stdio until the client closes stdin (then returns `Ok`, whether
/// the client initialized or not). Nothing but protocol messages goes to stdout.
pub async fn serve_stdio(server: Server) -> anyhow::Result<()> {
    serve_stdio_with(server, StdioOptions::default()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Result<String, &'static str>> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        for _ in 0..100 {
            match reader.next().await {
                Line::Ready(line) => out.push(Ok(String::from_utf8_lossy(&line).into_owned())),
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
        // Skipping it never holds more than a read's worth of it.
        assert!(reader.buffer.len() <= 64 * 1024, "{}", reader.buffer.len());
        assert!(matches!(reader.next().await, Line::Ready(line) if line == "ok"));
        assert!(reader.buffer.capacity() <= 128 * 1024);
        assert!(matches!(reader.next().await, Line::Eof));
    }
}
