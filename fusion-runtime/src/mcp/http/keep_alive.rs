//! The SSE keep-alive of the streams the framework writes itself (the room's answers, a
//! 2025-11-25 `tasks/result`): an SSE comment whenever a stream was silent for the interval,
//! as rmcp keeps its own streams alive, so a proxy's idle timeout does not cut a stream.
//!
//! Reads: the interval rmcp's endpoint configuration keeps ([`interval`]). Writes: nothing;
//! [`Tick`] is the timer `sse_stream` runs the comments on.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// The endpoint's SSE keep-alive interval: rmcp's default, which the endpoint keeps
/// (`endpoint.rs` sets no other), so the framework's streams are kept alive as rmcp's own
/// are (`tests/tests/tasks_streams.rs` holds the two equal).
pub(super) fn interval() -> Option<Duration> {
    rmcp::transport::StreamableHttpServerConfig::default().sse_keep_alive
}

/// The keep-alive's timer, on tokio.
pub(super) struct Tick(Pin<Box<tokio::time::Sleep>>);

impl Future for Tick {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

impl sse_stream::Timer for Tick {
    fn from_duration(duration: Duration) -> Self {
        Tick(Box::pin(tokio::time::sleep(duration)))
    }

    fn reset(mut self: Pin<&mut Self>, when: std::time::Instant) {
        self.0.as_mut().reset(tokio::time::Instant::from_std(when));
    }
}
