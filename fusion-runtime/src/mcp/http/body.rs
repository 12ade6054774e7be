//! The request body: read once, bounded in size ([`read_bounded`]) and in time
//! ([`DeadlineBody`]).
//!
//! Reads: the body's frames. Writes: its bytes, or why there are none.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use futures::StreamExt;
use http_body::{Frame, SizeHint};

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
    let mut stream = body.into_data_stream();
    let mut first: Option<Bytes> = None;
    let mut rest: Vec<u8> = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| None)?;
        // Once `rest` holds anything it holds `first` too.
        let so_far = if rest.is_empty() {
            first.as_ref().map_or(0, Bytes::len)
        } else {
            rest.len()
        };
        if so_far + chunk.len() > max {
            return Err(Some(()));
        }
        match &first {
            None => first = Some(chunk),
            Some(f) => {
                if rest.is_empty() {
                    rest.extend_from_slice(f);
                }
                rest.extend_from_slice(&chunk);
            }
        }
    }
    Ok(if rest.is_empty() {
        first.unwrap_or_default()
    } else {
        Bytes::from(rest)
    })
}
