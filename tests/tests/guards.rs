//! Runtime guards through the whole pipeline (`Server::call` in-process), on tokio's paused
//! clock: concurrency (`SERVER_BUSY`, FIFO, cancellation, panics), rate limits
//! (`RATE_LIMITED`, keyed buckets), timeouts (`TIMEOUT`, the handler's future dropped), and the
//! builder's overrides.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion_runtime::client::parse_tool_error;
use fusion_runtime::context::CancellationToken;
use fusion_runtime::context::ClientKey;
use fusion_runtime::guard::{ConcurrencyLimit, GuardState, RateLimit};
use fusion_runtime::server::{BuildError, RequestScope};
use fusion_runtime::{
    ActionLimits, Content, Context, Server, ServerBuilder, ToolError, ToolInput, ToolResponse,
    tool_action,
};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, ToolInput)]
struct Job {
    /// Who is calling: recorded when the handler starts.
    id: u64,
    /// How long the handler runs, in milliseconds.
    #[fusion(range(max = 3_600_000))]
    ms: u64,
}

/// What handlers did: the ids that started, the ids that finished, and how many handler
/// futures were dropped before finishing.
#[derive(Default)]
struct Probe {
    started: Mutex<Vec<u64>>,
    finished: AtomicUsize,
    dropped: AtomicUsize,
}

impl Probe {
    fn started(&self) -> Vec<u64> {
        self.started.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// Counts a handler future dropped before it finished.
struct DropFlag<'a> {
    probe: &'a Probe,
    done: bool,
}

impl Drop for DropFlag<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.probe.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

async fn work(job: Job, probe: &Probe) -> u64 {
    probe.started.lock().map(|mut s| s.push(job.id)).ok();
    let mut flag = DropFlag { probe, done: false };
    tokio::time::sleep(Duration::from_millis(job.ms)).await;
    flag.done = true;
    probe.finished.fetch_add(1, Ordering::SeqCst);
    job.id
}

/// One call at a time, two waiting.
#[tool_action(name = "lab.slow", max_active = 1, max_queue = 2)]
async fn slow(job: Job, probe: Context<Probe>) -> Result<u64, ToolError> {
    Ok(work(job, probe.state()).await)
}

/// No declared limit (the builder adds them).
#[tool_action(name = "lab.plain")]
async fn plain(job: Job, probe: Context<Probe>) -> Result<u64, ToolError> {
    Ok(work(job, probe.state()).await)
}

/// Panics while holding its only slot.
#[tool_action(name = "lab.panicky", max_active = 1, max_queue = 0)]
async fn panicky(job: Job, probe: Context<Probe>) -> Result<u64, ToolError> {
    probe
        .state()
        .started
        .lock()
        .map(|mut s| s.push(job.id))
        .ok();
    tokio::time::sleep(Duration::from_millis(job.ms)).await;
    panic!("a bug while holding a permit");
}

/// Fails while holding its only slot.
#[tool_action(name = "lab.failing", max_active = 1, max_queue = 0)]
async fn failing(job: Job) -> Result<u64, std::io::Error> {
    tokio::time::sleep(Duration::from_millis(job.ms)).await;
    Err(std::io::Error::other("disk full"))
}

/// Two calls a minute, for everyone together.
#[tool_action(name = "lab.limited", rate_limit = "2/min")]
async fn limited(job: Job, probe: Context<Probe>) -> Result<u64, ToolError> {
    Ok(work(job, probe.state()).await)
}

/// One call a second, per client.
#[tool_action(name = "lab.keyed", rate_limit(calls = 1, per = "1s", per_client))]
async fn keyed(job: Job, probe: Context<Probe>) -> Result<u64, ToolError> {
    Ok(work(job, probe.state()).await)
}

/// Stopped after two seconds.
#[tool_action(name = "lab.timed", timeout = "2s", max_active = 2)]
async fn timed(job: Job, probe: Context<Probe>) -> Result<u64, ToolError> {
    Ok(work(job, probe.state()).await)
}

fn builder(probe: &Arc<Probe>) -> ServerBuilder {
    Server::builder()
        .state_arc(Arc::clone(probe))
        .action::<SlowAction>()
        .action::<PlainAction>()
        .action::<PanickyAction>()
        .action::<FailingAction>()
        .action::<LimitedAction>()
        .action::<KeyedAction>()
        .action::<TimedAction>()
}

fn server(probe: &Arc<Probe>) -> Server {
    builder(probe).build().unwrap_or_else(|e| panic!("{e}"))
}

fn args(v: Value) -> Option<fusion_runtime::JsonObject> {
    v.as_object().cloned()
}

/// Starts a call in the background.
fn spawn_call(
    s: &Server,
    tool: &str,
    id: u64,
    ms: u64,
    scope: RequestScope,
) -> tokio::task::JoinHandle<ToolResponse> {
    let (s, tool) = (s.clone(), tool.to_owned());
    tokio::spawn(async move {
        s.call(&tool, args(json!({"id": id, "ms": ms})), scope)
            .await
    })
}

async fn call(s: &Server, tool: &str, id: u64, ms: u64) -> ToolResponse {
    s.call(
        tool,
        args(json!({"id": id, "ms": ms})),
        RequestScope::detached(),
    )
    .await
}

/// Lets spawned calls run until `action`'s guard shows `active` running and `queued` waiting.
async fn settle(s: &Server, action: &str, active: usize, queued: usize) {
    for _ in 0..100 {
        match s.guard_state(action) {
            Some(g) if (g.active, g.queued) == (active, queued) => return,
            _ => tokio::task::yield_now().await,
        }
    }
    panic!(
        "{action}: expected {active} active / {queued} queued, got {:?}",
        s.guard_state(action)
    );
}

fn text(r: &ToolResponse) -> &str {
    match r.content.first() {
        Some(Content::Text(t)) => t,
        other => panic!("expected text content, got {other:?}"),
    }
}

fn envelope(r: &ToolResponse) -> ToolError {
    assert!(r.is_error, "expected an error, got {}", text(r));
    parse_tool_error(text(r)).unwrap_or_else(|e| panic!("{e}: {}", text(r)))
}

fn code(r: &ToolResponse) -> String {
    envelope(r).code().as_str().to_owned()
}

async fn join(h: tokio::task::JoinHandle<ToolResponse>) -> ToolResponse {
    h.await.unwrap_or_else(|e| panic!("call task: {e}"))
}

fn free(limit: (usize, usize)) -> Option<GuardState> {
    Some(GuardState {
        active: 0,
        queued: 0,
        max_active: limit.0,
        max_queue: limit.1,
    })
}

#[tokio::test(start_paused = true)]
async fn beyond_active_and_queue_calls_are_shed_unrun_and_unvalidated() {
    let probe = Arc::new(Probe::default());
    let s = server(&probe);
    let running = spawn_call(&s, "lab_slow", 1, 1000, RequestScope::detached());
    settle(&s, "lab.slow", 1, 0).await;
    let queued: Vec<_> = (2..=3)
        .map(|id| spawn_call(&s, "lab_slow", id, 1000, RequestScope::detached()))
        .collect();
    settle(&s, "lab.slow", 1, 2).await;

    let shed = call(&s, "lab_slow", 4, 1000).await;
    let e = envelope(&shed);
    assert_eq!(e.code().as_str(), "SERVER_BUSY");
    assert!(
        e.message()
            .contains("lab_slow is busy: 1 call running and 2 waiting"),
        "{}",
        e.message()
    );
    assert_eq!(e.detail_value("active"), Some("1"));
    assert_eq!(e.detail_value("queued"), Some("2"));
    assert!(e.retry_after_secs().is_some_and(|s| s >= 1));
    // Arguments that would fail validation are not even looked at.
    let bad = s
        .call(
            "lab_slow",
            args(json!({"id": "x"})),
            RequestScope::detached(),
        )
        .await;
    assert_eq!(code(&bad), "SERVER_BUSY");
    assert_eq!(probe.started(), vec![1], "shed calls ran no handler");

    for h in std::iter::once(running).chain(queued) {
        let r = join(h).await;
        assert!(!r.is_error, "{}", text(&r));
    }
    assert_eq!(probe.started(), vec![1, 2, 3]);
    assert_eq!(probe.finished.load(Ordering::SeqCst), 3);
    assert_eq!(s.guard_state("lab.slow"), free((1, 2)));
    // Free again: the next call runs at once.
    assert!(!call(&s, "lab_slow", 5, 1).await.is_error);
}

#[tokio::test(start_paused = true)]
async fn queued_calls_run_in_arrival_order() {
    let probe = Arc::new(Probe::default());
    let s = builder(&probe)
        .concurrency("lab.plain", ConcurrencyLimit::new(1, 8))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut calls = vec![spawn_call(&s, "lab_plain", 0, 50, RequestScope::detached())];
    settle(&s, "lab.plain", 1, 0).await;
    for id in 1..=6 {
        calls.push(spawn_call(
            &s,
            "lab_plain",
            id,
            50,
            RequestScope::detached(),
        ));
        settle(&s, "lab.plain", 1, id as usize).await;
    }
    for h in calls {
        assert!(!join(h).await.is_error);
    }
    assert_eq!(probe.started(), vec![0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(s.guard_state("lab.plain"), free((1, 8)));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_queued_call_frees_its_place_and_never_runs() {
    let probe = Arc::new(Probe::default());
    let s = builder(&probe)
        .concurrency("lab.plain", ConcurrencyLimit::new(1, 1))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let running = spawn_call(&s, "lab_plain", 1, 1000, RequestScope::detached());
    settle(&s, "lab.plain", 1, 0).await;
    let token = CancellationToken::new();
    let scope = RequestScope::detached().with_cancellation(token.clone());
    let queued = spawn_call(&s, "lab_plain", 2, 1000, scope);
    settle(&s, "lab.plain", 1, 1).await;
    // Full: a third call is shed.
    assert_eq!(code(&call(&s, "lab_plain", 3, 1).await), "SERVER_BUSY");

    token.cancel();
    let cancelled = join(queued).await;
    assert_eq!(code(&cancelled), "CANCELLED");
    assert_eq!(s.guard_state("lab.plain").map(|g| g.queued), Some(0));
    // Its place is free: the next call queues instead of being shed.
    let next = spawn_call(&s, "lab_plain", 4, 1, RequestScope::detached());
    settle(&s, "lab.plain", 1, 1).await;
    assert!(!join(running).await.is_error);
    assert!(!join(next).await.is_error);
    assert_eq!(probe.started(), vec![1, 4], "the cancelled call never ran");
    assert_eq!(s.guard_state("lab.plain"), free((1, 1)));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_running_call_drops_its_handler_and_frees_its_slot() {
    let probe = Arc::new(Probe::default());
    let s = server(&probe);
    let token = CancellationToken::new();
    let scope = RequestScope::detached().with_cancellation(token.clone());
    let running = spawn_call(&s, "lab_slow", 1, 3_600_000, scope);
    settle(&s, "lab.slow", 1, 0).await;
    token.cancel();
    assert_eq!(code(&join(running).await), "CANCELLED");
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 1);
    assert_eq!(probe.finished.load(Ordering::SeqCst), 0);
    assert_eq!(s.guard_state("lab.slow"), free((1, 2)));
}

#[tokio::test(start_paused = true)]
async fn a_panic_or_an_error_while_holding_a_permit_frees_it() {
    let probe = Arc::new(Probe::default());
    let s = server(&probe);
    for id in 1..=3 {
        let r = call(&s, "lab_panicky", id, 10).await;
        // INTERNAL_ERROR every time, never SERVER_BUSY: the slot came back after each panic.
        assert_eq!(code(&r), "INTERNAL_ERROR");
        assert_eq!(s.guard_state("lab.panicky"), free((1, 0)));
    }
    assert_eq!(probe.started(), vec![1, 2, 3]);
    for id in 1..=3 {
        assert_eq!(
            code(&call(&s, "lab_failing", id, 10).await),
            "INTERNAL_ERROR"
        );
        assert_eq!(s.guard_state("lab.failing"), free((1, 0)));
    }
}

#[tokio::test(start_paused = true)]
async fn rate_limit_answers_with_the_limiters_wait_and_runs_nothing() {
    let probe = Arc::new(Probe::default());
    let s = server(&probe);
    assert!(!call(&s, "lab_limited", 1, 0).await.is_error);
    assert!(!call(&s, "lab_limited", 2, 0).await.is_error);
    let e = envelope(&call(&s, "lab_limited", 3, 0).await);
    assert_eq!(e.code().as_str(), "RATE_LIMITED");
    // Two a minute: one token every 30 s.
    assert_eq!(e.retry_after_secs(), Some(30));
    assert!(e.message().contains("at most 2 calls per minute"));
    // Invalid arguments are refused by the limit before validation.
    let bad = s
        .call("lab_limited", args(json!({})), RequestScope::detached())
        .await;
    assert_eq!(code(&bad), "RATE_LIMITED");
    tokio::time::advance(Duration::from_millis(29_500)).await;
    let e = envelope(&call(&s, "lab_limited", 4, 0).await);
    assert_eq!(e.retry_after_secs(), Some(1), "0.5 s rounds up");
    tokio::time::advance(Duration::from_millis(500)).await;
    assert!(!call(&s, "lab_limited", 5, 0).await.is_error);
    assert_eq!(probe.started(), vec![1, 2, 5]);
}

fn scope_of(client: &str) -> RequestScope {
    let mut scope = RequestScope::detached();
    scope.client = Some(ClientKey::new(client));
    scope
}

#[tokio::test(start_paused = true)]
async fn per_client_rate_limits_keep_one_bucket_per_client() {
    let probe = Arc::new(Probe::default());
    let s = server(&probe);
    let keyed = |id: u64, client: &str| {
        s.call(
            "lab_keyed",
            args(json!({"id": id, "ms": 0})),
            scope_of(client),
        )
    };
    assert!(!keyed(1, "alice").await.is_error);
    let e = envelope(&keyed(2, "alice").await);
    assert_eq!(e.code().as_str(), "RATE_LIMITED");
    assert_eq!(e.retry_after_secs(), Some(1));
    assert!(e.message().contains("per client"), "{}", e.message());
    assert!(!keyed(3, "bob").await.is_error, "bob has his own bucket");
    // In-process calls without a key share the `local` bucket.
    assert_eq!(
        ClientKey::of(&RequestScope::detached()),
        ClientKey::new("local")
    );
    assert!(!call(&s, "lab_keyed", 4, 0).await.is_error);
    assert!(call(&s, "lab_keyed", 5, 0).await.is_error);
    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(!keyed(6, "alice").await.is_error);
    assert_eq!(probe.started(), vec![1, 3, 4, 6]);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_drops_the_handler_future_and_frees_the_slot() {
    let probe = Arc::new(Probe::default());
    let s = server(&probe);
    let started = tokio::time::Instant::now();
    let e = envelope(&call(&s, "lab_timed", 1, 60_000).await);
    assert_eq!(e.code().as_str(), "TIMEOUT");
    assert!(e.message().contains("within 2 seconds"), "{}", e.message());
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert_eq!(probe.dropped.load(Ordering::SeqCst), 1);
    assert_eq!(probe.finished.load(Ordering::SeqCst), 0);
    assert_eq!(s.guard_state("lab.timed"), free((2, 0)));
    let fast = call(&s, "lab_timed", 2, 1_999).await;
    assert!(!fast.is_error, "{}", text(&fast));
    assert_eq!(probe.finished.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn builder_overrides_replace_declared_limits_and_show_in_action_info() {
    let probe = Arc::new(Probe::default());
    let s = builder(&probe)
        .concurrency("lab.slow", ConcurrencyLimit::new(3, 0))
        .rate_limit("lab.plain", RateLimit::per_second(1).burst(2))
        .timeout("lab.plain", Duration::from_millis(100))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let info = |name: &str| {
        s.actions()
            .iter()
            .find(|a| a.info.name == name)
            .map(|a| a.info.limits)
            .unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(
        info("lab.slow").concurrency,
        Some(ConcurrencyLimit::new(3, 0))
    );
    assert_eq!(
        info("lab.plain"),
        ActionLimits {
            concurrency: None,
            rate_limit: Some(RateLimit::per_second(1).burst(2)),
            timeout: Some(Duration::from_millis(100)),
            max_result_bytes: Some(fusion_runtime::server::DEFAULT_MAX_RESULT_BYTES),
        }
    );
    // Declared by the attribute, untouched by the builder.
    assert_eq!(
        info("lab.keyed").rate_limit,
        Some(RateLimit::new(1, Duration::from_secs(1)).per_client())
    );
    assert_eq!(info("lab.timed").timeout, Some(Duration::from_secs(2)));
    assert_eq!(
        info("lab.timed").concurrency,
        Some(ConcurrencyLimit::new(2, 0))
    );
    assert!(info("lab.failing").rate_limit.is_none());

    // The overrides are in force.
    assert_eq!(s.guard_state("lab.slow").map(|g| g.max_active), Some(3));
    assert_eq!(code(&call(&s, "lab_plain", 1, 1_000).await), "TIMEOUT");
    assert!(!call(&s, "lab_plain", 2, 0).await.is_error, "a burst of 2");
    assert_eq!(code(&call(&s, "lab_plain", 3, 0).await), "RATE_LIMITED");
    assert_eq!(s.guard_state("lab.plain"), None, "no concurrency limit");
}

#[tokio::test(start_paused = true)]
async fn a_group_limit_holds_across_its_actions() {
    let probe = Arc::new(Probe::default());
    let s = builder(&probe)
        .grouped()
        .group_concurrency("lab", ConcurrencyLimit::new(1, 0))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let running = tokio::spawn({
        let s = s.clone();
        async move {
            s.call(
                "lab",
                args(json!({"action": "plain", "id": 1, "ms": 1000})),
                RequestScope::detached(),
            )
            .await
        }
    });
    for _ in 0..100 {
        if s.group_guard_state("lab").is_some_and(|g| g.active == 1) {
            break;
        }
        tokio::task::yield_now().await;
    }
    let other = s
        .call(
            "lab",
            args(json!({"action": "timed", "id": 2, "ms": 0})),
            RequestScope::detached(),
        )
        .await;
    let e = envelope(&other);
    assert_eq!(e.code().as_str(), "SERVER_BUSY");
    assert!(
        e.message()
            .starts_with("the lab group is busy: 1 call running"),
        "{}",
        e.message()
    );
    assert!(!join(running).await.is_error);
    assert_eq!(
        s.group_guard_state("lab").map(|g| (g.active, g.queued)),
        Some((0, 0))
    );
    assert_eq!(s.guard_state("lab.timed").map(|g| g.active), Some(0));
    assert_eq!(probe.started(), vec![1]);
}

#[test]
fn overrides_must_name_registered_actions_and_groups() {
    let probe = Arc::new(Probe::default());
    for b in [
        builder(&probe).concurrency("lab.nope", ConcurrencyLimit::new(1, 0)),
        builder(&probe).rate_limit("lab.nope", RateLimit::per_second(1)),
        builder(&probe).timeout("lab.nope", Duration::from_secs(1)),
        builder(&probe).group_concurrency("nope", ConcurrencyLimit::new(1, 0)),
    ] {
        match b.build() {
            Err(BuildError::Guard(msg)) => assert!(msg.contains("nope"), "{msg}"),
            other => panic!("expected a guard build error, got {other:?}"),
        }
    }
}
