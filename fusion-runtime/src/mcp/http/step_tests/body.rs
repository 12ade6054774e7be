//! The request body (`body.rs`): read once and bounded in size ([`read_bounded`]), bounded
//! in time ([`DeadlineBody`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};

use super::{stalling_body, streamed_body};
use crate::http::body::{DeadlineBody, read_bounded};

#[tokio::test]
async fn read_bounded_reads_a_body_up_to_its_limit() -> anyhow::Result<()> {
    let whole = |r: Result<Bytes, Option<()>>| r.map_err(|e| anyhow::anyhow!("refused: {e:?}"));
    assert_eq!(whole(read_bounded(Body::from("hello"), 5).await)?, "hello");
    assert_eq!(whole(read_bounded(Body::from("hello"), 6).await)?, "hello");
    assert_eq!(whole(read_bounded(Body::empty(), 0).await)?, "");
    let chunks = streamed_body(&["he", "llo"]);
    assert_eq!(
        whole(read_bounded(chunks, 5).await)?,
        "hello",
        "chunks joined"
    );
    // Three chunks and more, exactly at the limit: each byte counted once (the first chunk
    // was once counted twice when the rest joined it, refusing "hello" under 5).
    for parts in [
        &["he", "ll", "o"][..],
        &["h", "e", "l", "l", "o"],
        &["", "hel", "", "lo"],
    ] {
        assert_eq!(
            whole(read_bounded(streamed_body(parts), 5).await)?,
            "hello",
            "{parts:?} at the limit"
        );
        assert_eq!(
            read_bounded(streamed_body(parts), 4).await,
            Err(Some(())),
            "{parts:?} one byte past it"
        );
    }
    Ok(())
}

#[tokio::test]
async fn read_bounded_refuses_a_body_past_its_limit() {
    assert_eq!(read_bounded(Body::from("hello"), 4).await, Err(Some(())));
    // Streamed: refused at the chunk that crosses the limit, not read further (the rest
    // of the body never comes).
    let endless = stalling_body(&["he", "ll", "o"]);
    assert_eq!(read_bounded(endless, 4).await, Err(Some(())));
}

#[tokio::test]
async fn read_bounded_says_when_the_body_failed() {
    let failing = Body::from_stream(futures::stream::iter([
        Ok(Bytes::from_static(b"he")),
        Err(std::io::Error::other("reset")),
    ]));
    assert_eq!(read_bounded(failing, 100).await, Err(None));
}

fn deadline_body(inner: Body, timeout: Duration) -> (DeadlineBody, Arc<AtomicBool>) {
    let timed_out = Arc::new(AtomicBool::new(false));
    let body = DeadlineBody {
        inner,
        deadline: tokio::time::Instant::now() + timeout,
        sleep: None,
        timed_out: Arc::clone(&timed_out),
    };
    (body, timed_out)
}

#[tokio::test(start_paused = true)]
async fn a_deadline_body_in_time_is_the_inner_body() -> anyhow::Result<()> {
    let (body, timed_out) = deadline_body(Body::from("hello"), Duration::from_secs(1));
    assert_eq!(body.size_hint().exact(), Some(5));
    assert!(!body.is_end_stream());
    let bytes = axum::body::to_bytes(Body::new(body), usize::MAX).await?;
    assert_eq!(bytes, "hello");
    assert!(!timed_out.load(Ordering::Relaxed));

    let (body, _) = deadline_body(Body::empty(), Duration::from_secs(1));
    assert!(body.is_end_stream());
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_deadline_body_that_stalls_past_its_deadline_fails() -> anyhow::Result<()> {
    let (body, timed_out) = deadline_body(stalling_body(&["hel"]), Duration::from_secs(3));
    let started = tokio::time::Instant::now();
    let read = axum::body::to_bytes(Body::new(body), usize::MAX).await;
    assert!(read.is_err(), "the read fails");
    assert_eq!(started.elapsed(), Duration::from_secs(3), "at the deadline");
    assert!(timed_out.load(Ordering::Relaxed));
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_deadline_body_yields_what_already_arrived_even_past_its_deadline() -> anyhow::Result<()>
{
    // The inner body is polled first: bytes that are there are not lost to the clock.
    let (body, timed_out) = deadline_body(Body::from("late"), Duration::ZERO);
    tokio::time::advance(Duration::from_secs(1)).await;
    let bytes = axum::body::to_bytes(Body::new(body), usize::MAX).await?;
    assert_eq!(bytes, "late");
    assert!(!timed_out.load(Ordering::Relaxed));
    Ok(())
}
