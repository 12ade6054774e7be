//! The request body: read once, bounded in size ([`read_bounded`]) and in time
//! ([`DeadlineBody`]), and looked into without a parse ([`mentions`]).
//!
//! Reads: the body's frames. Writes: its bytes, or why there are none.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use http_body::{Frame, SizeHint};
use http_body_util::{BodyExt, LengthLimitError, Limited};

/// A request body that fails once its deadline passes.
pub(crate) struct DeadlineBody {
    pub(crate) inner: Body,
    pub(crate) deadline: tokio::time::Instant,
    pub(crate) sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Set when the deadline passed before the body's end.
    pub(crate) timed_out: Arc<AtomicBool>,
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let deadline = this.deadline;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.as_mut().poll(cx).is_ready() {
            this.timed_out.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(axum::Error::new("request body timeout"))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The body, or `Err(Some(()))` past `max` bytes, `Err(None)` when reading failed.
pub(crate) async fn read_bounded(body: Body, max: usize) -> Result<Bytes, Option<()>> {
    match Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(Some(())),
        Err(_) => Err(None),
    }
}

/// Whether `bytes` hold `needle` (a cheap test before a second parse of a body), in time
/// linear in the body whatever its bytes.
pub(crate) fn mentions(bytes: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(bytes, needle).is_some()
}
