//! The doorway's unit tests: the calls it tracks and the events it queues.

use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

use super::exchange::*;
use super::*;

fn client(name: &str) -> Owner {
    Owner::Client(ClientKey::new(name))
}

fn id(n: i64) -> RequestId {
    RequestId::Number(n)
}

#[test]
fn tracked_calls_are_bounded_per_client_and_overall_and_freed_when_they_end() {
    let calls = Arc::new(Calls::with_limits(2, 3));
    let a1 = calls.track(client("a"), id(1), CancellationToken::new());
    let a2 = calls.track(client("a"), id(2), CancellationToken::new());
    assert!(a1.is_some() && a2.is_some());
    assert!(
        calls
            .track(client("a"), id(3), CancellationToken::new())
            .is_none(),
        "a third call of one client is past the per-client bound"
    );
    let b1 = calls.track(client("b"), id(1), CancellationToken::new());
    assert!(b1.is_some());
    assert!(
        calls
            .track(client("c"), id(1), CancellationToken::new())
            .is_none(),
        "a fourth call is past the overall bound"
    );
    assert_eq!(calls.len(), 3);
    drop(a1);
    assert_eq!(calls.len(), 2);
    assert!(
        calls
            .track(client("c"), id(1), CancellationToken::new())
            .is_some(),
        "an ended call gives its place back"
    );
    drop((a2, b1));
    assert_eq!(calls.len(), 0);
    assert!(
        calls.lock().owners.is_empty(),
        "no empty owner is left behind"
    );
}

#[test]
fn cancel_reaches_only_the_owner_and_the_request_named() {
    let calls = Arc::new(Calls::default());
    let (a1, a2, b1) = (
        CancellationToken::new(),
        CancellationToken::new(),
        CancellationToken::new(),
    );
    let s1 = CancellationToken::new();
    let _t = [
        calls.track(client("a"), id(1), a1.clone()),
        calls.track(client("a"), id(2), a2.clone()),
        calls.track(client("b"), id(1), b1.clone()),
        calls.track(Owner::Session("s".into()), id(1), s1.clone()),
    ];
    assert_eq!(calls.cancel(&client("a"), Some(&id(1))), 1);
    assert!(a1.is_cancelled());
    assert!(!a2.is_cancelled() && !b1.is_cancelled() && !s1.is_cancelled());
    assert_eq!(calls.cancel(&client("c"), Some(&id(2))), 0);
    assert_eq!(calls.cancel(&Owner::Session("s".into()), None), 1);
    assert!(s1.is_cancelled() && !b1.is_cancelled());
}

#[test]
fn a_call_attached_after_its_client_left_is_cancelled_at_once() {
    let exchange = Exchange::new(Arc::new(Calls::default()));
    let before = CancellationToken::new();
    exchange.attach(&before);
    assert!(!before.is_cancelled());
    exchange.client_gone();
    assert!(before.is_cancelled());
    let after = CancellationToken::new();
    exchange.attach(&after);
    assert!(after.is_cancelled());
}

#[test]
fn injected_events_are_bounded_in_count_and_bytes_and_refused_after_the_end() {
    let exchange = Exchange::new(Arc::new(Calls::default()));
    let small = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message"});
    for _ in 0..MAX_INJECTED_EVENTS {
        assert!(exchange.inject(&small).is_ok());
    }
    assert!(exchange.inject(&small).is_err(), "one past the count");
    let first = exchange.pop_event().unwrap_or_default();
    assert!(first.starts_with(b"data: {") && first.ends_with(b"\n\n"));
    assert!(exchange.inject(&small).is_ok(), "room again once read");

    let exchange = Exchange::new(Arc::new(Calls::default()));
    let big = serde_json::Value::String("x".repeat(MAX_INJECTED_BYTES / 4));
    let mut sent = 0;
    while exchange.inject(&big).is_ok() {
        sent += 1;
        assert!(sent <= 4, "the byte bound holds");
    }
    assert_eq!(sent, 3);
    exchange.end();
    assert!(!exchange.has_events());
    assert!(exchange.inject(&small).is_err(), "nothing after the end");
}
