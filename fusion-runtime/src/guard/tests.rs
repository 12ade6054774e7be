use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use super::*;
use crate::envelope::Severity;

fn guard(active: usize, queue: usize) -> Arc<ConcurrencyGuard> {
    Arc::new(ConcurrencyGuard::new(
        "billing.reconcile",
        ConcurrencyLimit::new(active, queue),
    ))
}

#[tokio::test(start_paused = true)]
async fn sheds_beyond_active_and_queue() {
    let g = guard(1, 1);
    let first = g.acquire().await.expect("a free slot");
    let waiting = tokio::spawn({
        let g = Arc::clone(&g);
        async move { g.acquire().await.map(|_| ()) }
    });
    tokio::task::yield_now().await;
    assert_eq!((g.active(), g.queued()), (1, 1));
    let shed = g.acquire().await.expect_err("both full");
    assert_eq!(shed.code(), &ErrorCode::ServerBusy);
    assert_eq!(shed.severity_of(), Severity::Error);
    assert!(
        shed.message().contains("1 call running and 1 waiting"),
        "{}",
        shed.message()
    );
    assert_eq!(shed.detail_value("active"), Some("1"));
    assert_eq!(shed.detail_value("queued"), Some("1"));
    assert!(shed.retry_after_secs().is_some_and(|s| s >= 1));
    assert!(
        shed.recovery_text()
            .is_some_and(|s| s.contains("fewer calls at once"))
    );
    drop(first);
    waiting
        .await
        .expect("no panic")
        .expect("queued call runs once the slot frees");
    assert_eq!((g.active(), g.queued()), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn queued_calls_run_in_arrival_order() {
    let g = guard(1, 8);
    let order = Arc::new(Mutex::new(Vec::new()));
    let first = g.acquire().await.expect("free");
    let mut tasks = Vec::new();
    for i in 0..5 {
        let (g, order) = (Arc::clone(&g), Arc::clone(&order));
        tasks.push(tokio::spawn(async move {
            let _p = g.acquire().await.expect("queued");
            order.lock().map(|mut o| o.push(i)).ok();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }));
        // Let each task reach the queue before the next one arrives.
        tokio::task::yield_now().await;
    }
    assert_eq!(g.queued(), 5);
    drop(first);
    for t in tasks {
        t.await.expect("no panic");
    }
    assert_eq!(*order.lock().expect("not poisoned"), vec![0, 1, 2, 3, 4]);
    assert_eq!((g.active(), g.queued()), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_queued_call_frees_its_place() {
    let g = guard(1, 1);
    let first = g.acquire().await.expect("free");
    let queued = tokio::spawn({
        let g = Arc::clone(&g);
        async move { g.acquire().await.map(|_| ()) }
    });
    tokio::task::yield_now().await;
    assert_eq!(g.queued(), 1);
    queued.abort();
    assert!(queued.await.is_err_and(|e| e.is_cancelled()));
    assert_eq!(g.queued(), 0);
    // The place is free again: another call can queue instead of being shed.
    let again = tokio::spawn({
        let g = Arc::clone(&g);
        async move { g.acquire().await.map(|_| ()) }
    });
    tokio::task::yield_now().await;
    assert_eq!(g.queued(), 1);
    drop(first);
    again.await.expect("no panic").expect("runs");
    assert_eq!((g.active(), g.queued()), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn cancelling_or_panicking_while_running_frees_the_slot() {
    let g = guard(1, 0);
    let running = tokio::spawn({
        let g = Arc::clone(&g);
        async move {
            let _p = g.acquire().await;
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    });
    tokio::task::yield_now().await;
    assert_eq!(g.active(), 1);
    running.abort();
    let _ = running.await;
    assert_eq!(g.active(), 0);

    let panicking = tokio::spawn({
        let g = Arc::clone(&g);
        async move {
            let _p = g.acquire().await;
            panic!("handler bug while holding a permit");
        }
    });
    assert!(panicking.await.is_err_and(|e| e.is_panic()));
    assert_eq!(g.active(), 0);
    assert!(g.acquire().await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn retry_after_follows_observed_call_length() {
    let g = guard(1, 0);
    let p = g.acquire().await.expect("free");
    tokio::time::sleep(Duration::from_secs(4)).await;
    drop(p);
    let _running = g.acquire().await.expect("free again");
    let busy = g.acquire().await.expect_err("full");
    assert_eq!(busy.retry_after_secs(), Some(4));
}

#[tokio::test(start_paused = true)]
async fn rate_limit_answers_with_the_limiters_wait() {
    let rl = RateLimiterGuard::new("billing.charge", RateLimit::per_minute(2));
    assert!(rl.check("").is_ok());
    assert!(rl.check("").is_ok());
    let limited = rl.check("").expect_err("burst spent");
    assert_eq!(limited.code(), &ErrorCode::RateLimited);
    // One token every 30 s: the wait is 30 s, in whole seconds.
    assert_eq!(limited.retry_after_secs(), Some(30));
    assert!(limited.message().contains("at most 2 calls per minute"));
    tokio::time::advance(Duration::from_millis(29_500)).await;
    let still = rl.check("").expect_err("not yet");
    assert_eq!(still.retry_after_secs(), Some(1), "0.5 s rounds up to 1");
    tokio::time::advance(Duration::from_millis(500)).await;
    assert!(rl.check("").is_ok());
}

#[tokio::test(start_paused = true)]
async fn keyed_rate_limits_are_separate_buckets() {
    let rl = RateLimiterGuard::new("billing.charge", RateLimit::per_second(1));
    assert!(rl.check("session-a").is_ok());
    assert!(rl.check("session-a").is_err());
    assert!(rl.check("session-b").is_ok());
}

#[tokio::test(start_paused = true)]
async fn timeout_drops_the_future() {
    struct SetOnDrop(Arc<AtomicBool>);
    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = SetOnDrop(Arc::clone(&dropped));
    let slow = async move {
        let _flag = flag;
        tokio::time::sleep(Duration::from_secs(60)).await;
        "done"
    };
    let e = with_timeout("billing.reconcile", Duration::from_secs(2), slow)
        .await
        .expect_err("too slow");
    assert_eq!(e.code(), &ErrorCode::Timeout);
    assert!(e.message().contains("within 2 seconds"));
    assert!(dropped.load(Ordering::SeqCst));
    let fast = with_timeout("a", Duration::from_secs(2), async { 7 }).await;
    assert_eq!(fast, Ok(7));
}
