//! The registry behind [`metrics`](super), with the `prometheus-client` crate.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::{HEAL_WINDOW, MAX_LABEL_VALUES, MAX_PENDING_HEALS, Open, Outcome, Refusal};

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// Turns counting on for this process (idempotent).
pub fn enable() {
    METRICS.get_or_init(Metrics::new);
}

/// Whether [`enable`] was called.
pub fn enabled() -> bool {
    METRICS.get().is_some()
}

/// Everything counted so far, in the OpenMetrics text format (`None` before [`enable`]).
/// Served as `application/openmetrics-text; version=1.0.0; charset=utf-8`.
pub fn render() -> Option<String> {
    let m = METRICS.get()?;
    let mut out = String::with_capacity(8 * 1024);
    // Writing to a String does not fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &m.registry);
    Some(out)
}

pub(super) fn get() -> Option<&'static Metrics> {
    METRICS.get()
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: String,
    action: String,
    outcome: String,
}

/// The tool as clients call it, and the action it routed to (empty for a mounted tool's).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
    action: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct IssueLabels {
    tool: String,
    action: String,
    field: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BoundLabel {
    bound: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StoreLabel {
    store: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamLabel {
    upstream: String,
}

type Histograms = Family<ToolLabel, Histogram, fn() -> Histogram>;

fn latency() -> Histogram {
    // 0.5 ms to ~16 s.
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// A tool's counters for the hot path, found by name without allocating.
struct ToolHandles {
    /// The tool's label value (its name, or `<other>` past the bound).
    label: String,
    /// The action's label value (its registered name, `<other>` past the bound, or empty).
    action: String,
    ok: Counter,
    duration: Histogram,
    healed: Counter,
    /// Error outcome → its counter, at most [`MAX_LABEL_VALUES`] entries.
    outcomes: RwLock<HashMap<Box<str>, Counter>>,
    /// Issue kind → field path as the issue gave it → its counter, at most
    /// [`MAX_LABEL_VALUES`] paths in all; past that, issues take the labelled way.
    issues: RwLock<HashMap<&'static str, HashMap<Box<str>, Counter>>>,
    issue_paths: AtomicUsize,
}

/// A counter found in a two-level map under a read lock, without allocating.
fn cached<'m>(
    map: &'m HashMap<&'static str, HashMap<Box<str>, Counter>>,
    kind: &str,
    path: &str,
) -> Option<&'m Counter> {
    map.get(kind)?.get(path)
}

/// Distinct values of one label, at most [`MAX_LABEL_VALUES`].
#[derive(Default)]
struct Bounded(Mutex<HashSet<String>>);

impl Bounded {
    fn admit<'a>(&self, value: &'a str) -> Cow<'a, str> {
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.contains(value) {
            return Cow::Borrowed(value);
        }
        if seen.len() >= MAX_LABEL_VALUES {
            return Cow::Borrowed("<other>");
        }
        seen.insert(value.to_owned());
        Cow::Borrowed(value)
    }
}

pub(super) struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    durations: Histograms,
    issues: Family<IssueLabels, Counter>,
    healed: Family<ToolLabel, Counter>,
    refusals: Family<BoundLabel, Counter>,
    store_errors: Family<StoreLabel, Counter>,
    upstream_up: Family<UpstreamLabel, Gauge>,
    connections: Gauge,
    sessions: Gauge,
    listens: Gauge,
    tools: RwLock<HashMap<Box<str>, Arc<ToolHandles>>>,
    tool_names: Bounded,
    actions: Bounded,
    outcomes: Bounded,
    fields: Bounded,
    upstreams: Bounded,
    /// Client × tool → when its last `<validation_error>` was answered.
    pending: Mutex<HashMap<u64, Instant>>,
    /// `pending`'s length, read without the lock on the success path.
    pending_len: AtomicUsize,
    hasher: foldhash::fast::FixedState,
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::default();
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "fusion_calls",
            "tools/call answered, by tool and outcome (ok, validation, or the envelope's code)",
            calls.clone(),
        );
        let durations = Histograms::new_with_constructor(latency as fn() -> Histogram);
        registry.register_with_unit(
            "fusion_call_duration",
            "Time from routing to the response written, by tool",
            prometheus_client::registry::Unit::Seconds,
            durations.clone(),
        );
        let issues = Family::<IssueLabels, Counter>::default();
        registry.register(
            "fusion_validation_issues",
            "Validation issues, by tool, field (array indices as *) and kind",
            issues.clone(),
        );
        let healed = Family::<ToolLabel, Counter>::default();
        registry.register(
            "fusion_calls_healed",
            "Calls that succeeded after a <validation_error> for the same tool from the same client within 5 minutes",
            healed.clone(),
        );
        let refusals = Family::<BoundLabel, Counter>::default();
        registry.register(
            "fusion_http_refusals",
            "HTTP requests or connections refused by a bound (413, 429, 503, connection)",
            refusals.clone(),
        );
        let store_errors = Family::<StoreLabel, Counter>::default();
        registry.register(
            "fusion_store_errors",
            "Shared store (Redis) operations that failed, by store (rate_limit, once, bus, tasks)",
            store_errors.clone(),
        );
        let upstream_up = Family::<UpstreamLabel, Gauge>::default();
        registry.register(
            "fusion_upstream_up",
            "1 when a mounted upstream's last connection attempt succeeded, else 0",
            upstream_up.clone(),
        );
        let connections = Gauge::default();
        registry.register(
            "fusion_open_connections",
            "HTTP connections open",
            connections.clone(),
        );
        let sessions = Gauge::default();
        registry.register(
            "fusion_open_sessions",
            "MCP sessions live",
            sessions.clone(),
        );
        let listens = Gauge::default();
        registry.register(
            "fusion_open_listens",
            "2026-07-28 subscriptions/listen streams open",
            listens.clone(),
        );
        Metrics {
            registry,
            calls,
            durations,
            issues,
            healed,
            refusals,
            store_errors,
            upstream_up,
            connections,
            sessions,
            listens,
            tools: RwLock::default(),
            tool_names: Bounded::default(),
            actions: Bounded::default(),
            outcomes: Bounded::default(),
            fields: Bounded::default(),
            upstreams: Bounded::default(),
            pending: Mutex::default(),
            pending_len: AtomicUsize::new(0),
            hasher: foldhash::fast::FixedState::with_seed(0x6675_7369_6f6e),
        }
    }

    /// The counters of calls of `tool` routed to `action` (`""`: a mounted tool), found by
    /// the action's name (a mounted tool's by its own, marked so it never meets an action's).
    fn tool(&self, (tool, action): (&str, &str)) -> Arc<ToolHandles> {
        let key = match action {
            "" => Cow::Owned(format!("\0{tool}")),
            action => Cow::Borrowed(action),
        };
        if let Some(h) = self
            .tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&*key)
        {
            return Arc::clone(h);
        }
        let label = self.tool_names.admit(tool).into_owned();
        let action = match action {
            "" => String::new(),
            action => self.actions.admit(action).into_owned(),
        };
        let handles = Arc::new(ToolHandles {
            label: label.clone(),
            action: action.clone(),
            outcomes: RwLock::default(),
            issues: RwLock::default(),
            issue_paths: AtomicUsize::new(0),
            ok: self
                .calls
                .get_or_create(&CallLabels {
                    tool: label.clone(),
                    action: action.clone(),
                    outcome: "ok".into(),
                })
                .clone(),
            duration: self
                .durations
                .get_or_create(&ToolLabel {
                    tool: label.clone(),
                    action: action.clone(),
                })
                .clone(),
            healed: self
                .healed
                .get_or_create(&ToolLabel {
                    tool: label,
                    action,
                })
                .clone(),
        });
        let mut tools = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        if tools.len() < MAX_LABEL_VALUES {
            tools.insert(key.into(), Arc::clone(&handles));
        }
        handles
    }

    fn heal_key(&self, client: &str, tool: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        client.hash(&mut h);
        tool.hash(&mut h);
        h.finish()
    }

    pub(super) fn call(
        &self,
        called: Option<(&str, &str)>,
        outcome: &Outcome<'_>,
        client: &str,
        elapsed: Duration,
    ) {
        let Some(called) = called else {
            let outcome = self.outcomes.admit(outcome.as_str());
            self.calls
                .get_or_create(&CallLabels {
                    tool: "<unknown>".into(),
                    action: String::new(),
                    outcome: outcome.into_owned(),
                })
                .inc();
            return;
        };
        // Healing is per action: the same tool of a grouped exposure is several.
        let name = match called {
            (tool, "") => tool,
            (_, action) => action,
        };
        let handles = self.tool(called);
        handles.duration.observe(elapsed.as_secs_f64());
        match outcome {
            Outcome::Ok => {
                handles.ok.inc();
                if self.pending_len.load(Ordering::Relaxed) > 0 {
                    let key = self.heal_key(client, name);
                    let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Some(at) = pending.remove(&key) {
                        self.pending_len.store(pending.len(), Ordering::Relaxed);
                        if at.elapsed() <= HEAL_WINDOW {
                            handles.healed.inc();
                        }
                    }
                }
            }
            other => {
                self.count_error(&handles, other.as_str());
                if *other == Outcome::Validation {
                    self.remember_failure(client, name);
                }
            }
        }
    }

    fn remember_failure(&self, client: &str, tool: &str) {
        let key = self.heal_key(client, tool);
        let now = Instant::now();
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if pending.len() >= MAX_PENDING_HEALS && !pending.contains_key(&key) {
            pending.retain(|_, at| now.duration_since(*at) <= HEAL_WINDOW);
            if pending.len() >= MAX_PENDING_HEALS {
                return;
            }
        }
        pending.insert(key, now);
        self.pending_len.store(pending.len(), Ordering::Relaxed);
    }

    /// An error outcome's counter: from the tool's cache, else made from its labels and
    /// kept while the cache has room.
    fn count_error(&self, handles: &ToolHandles, outcome: &str) {
        if let Some(c) = handles
            .outcomes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(outcome)
        {
            c.inc();
            return;
        }
        let label = self.outcomes.admit(outcome).into_owned();
        let counter = self
            .calls
            .get_or_create(&CallLabels {
                tool: handles.label.clone(),
                action: handles.action.clone(),
                outcome: label,
            })
            .clone();
        counter.inc();
        let mut cache = handles
            .outcomes
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if cache.len() < MAX_LABEL_VALUES {
            cache.insert(outcome.into(), counter);
        }
    }

    pub(super) fn validation_issue(&self, called: (&str, &str), field: &str, kind: &'static str) {
        let handles = self.tool(called);
        if let Some(c) = cached(
            &handles
                .issues
                .read()
                .unwrap_or_else(PoisonError::into_inner),
            kind,
            field,
        ) {
            c.inc();
            return;
        }
        let label = super::field_label(field);
        let label = self.fields.admit(&label).into_owned();
        let counter = self
            .issues
            .get_or_create(&IssueLabels {
                tool: handles.label.clone(),
                action: handles.action.clone(),
                field: label,
                kind: kind.to_owned(),
            })
            .clone();
        counter.inc();
        // Raw paths carry array indices, so they are bounded on their own.
        if handles.issue_paths.load(Ordering::Relaxed) < MAX_LABEL_VALUES {
            let mut cache = handles
                .issues
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            if cache
                .entry(kind)
                .or_default()
                .insert(field.into(), counter)
                .is_none()
            {
                handles.issue_paths.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub(super) fn refused(&self, refusal: Refusal) {
        self.refusals
            .get_or_create(&BoundLabel {
                bound: refusal.label().to_owned(),
            })
            .inc();
    }

    fn gauge(&self, what: Open) -> &Gauge {
        match what {
            Open::Connections => &self.connections,
            Open::Sessions => &self.sessions,
            Open::Listens => &self.listens,
        }
    }

    pub(super) fn open(&self, what: Open, now: usize) {
        self.gauge(what).set(i64::try_from(now).unwrap_or(i64::MAX));
    }

    pub(super) fn open_delta(&self, what: Open, delta: i64) {
        self.gauge(what).inc_by(delta);
    }

    pub(super) fn store_error(&self, store: &'static str) {
        self.store_errors
            .get_or_create(&StoreLabel {
                store: store.to_owned(),
            })
            .inc();
    }

    pub(super) fn upstream(&self, name: &str, up: bool) {
        let upstream = self.upstreams.admit(name).into_owned();
        self.upstream_up
            .get_or_create(&UpstreamLabel { upstream })
            .set(i64::from(up));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrape(m: &Metrics) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &m.registry).unwrap_or_default();
        out
    }

    #[test]
    fn a_success_after_a_validation_error_heals_once() {
        let m = Metrics::new();
        let ms = Duration::from_millis(1);
        m.call(Some(("t", "a")), &Outcome::Validation, "alice", ms);
        m.call(Some(("t", "a")), &Outcome::Ok, "bob", ms);
        m.call(Some(("t", "a")), &Outcome::Ok, "alice", ms);
        m.call(Some(("t", "a")), &Outcome::Ok, "alice", ms);
        let text = scrape(&m);
        assert!(
            text.contains("fusion_calls_healed_total{tool=\"t\",action=\"a\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("fusion_calls_total{tool=\"t\",action=\"a\",outcome=\"ok\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("fusion_calls_total{tool=\"t\",action=\"a\",outcome=\"validation\"} 1\n"),
            "{text}"
        );
    }

    #[test]
    fn labels_are_bounded() {
        let m = Metrics::new();
        for i in 0..(MAX_LABEL_VALUES + 50) {
            m.validation_issue(("t", "a"), &format!("f{i}"), "missing");
        }
        let text = scrape(&m);
        assert!(
            text.contains("field=\"<other>\",kind=\"missing\"} 50\n"),
            "{text}"
        );
        let series = text
            .lines()
            .filter(|l| l.starts_with("fusion_validation_issues_total"))
            .count();
        assert_eq!(series, MAX_LABEL_VALUES + 1);
    }

    #[test]
    fn repeated_issues_and_errors_count_on_one_series() {
        let m = Metrics::new();
        for i in 0..3 {
            // The first goes the labelled way, the rest through the tool's cache; an index
            // is a `*` either way.
            m.validation_issue(("t", "a"), &format!("items.{i}.sku"), "pattern");
            m.validation_issue(("t", "a"), "items.0.sku", "pattern");
            m.validation_issue(("t", "a"), "qty", "range");
            m.call(
                Some(("t", "a")),
                &Outcome::Code(Cow::Borrowed("NOT_FOUND")),
                "alice",
                Duration::ZERO,
            );
        }
        let text = scrape(&m);
        for line in [
            "fusion_validation_issues_total{tool=\"t\",action=\"a\",field=\"items.*.sku\",kind=\"pattern\"} 6\n",
            "fusion_validation_issues_total{tool=\"t\",action=\"a\",field=\"qty\",kind=\"range\"} 3\n",
            "fusion_calls_total{tool=\"t\",action=\"a\",outcome=\"NOT_FOUND\"} 3\n",
        ] {
            assert!(text.contains(line), "{line} not in {text}");
        }
    }

    #[test]
    fn pending_heals_are_bounded() {
        let m = Metrics::new();
        for i in 0..(MAX_PENDING_HEALS + 10) {
            m.call(
                Some(("t", "a")),
                &Outcome::Validation,
                &format!("c{i}"),
                Duration::ZERO,
            );
        }
        assert_eq!(
            m.pending.lock().map(|p| p.len()).unwrap_or(0),
            MAX_PENDING_HEALS
        );
        // The last ones were not remembered: their success does not heal.
        m.call(
            Some(("t", "a")),
            &Outcome::Ok,
            &format!("c{}", MAX_PENDING_HEALS + 5),
            Duration::ZERO,
        );
        m.call(Some(("t", "a")), &Outcome::Ok, "c0", Duration::ZERO);
        assert!(scrape(&m).contains("fusion_calls_healed_total{tool=\"t\",action=\"a\"} 1\n"));
    }

    #[test]
    fn a_grouped_tools_actions_and_a_mounted_tool_keep_their_own_series() {
        let m = Metrics::new();
        let ms = Duration::from_millis(1);
        m.call(
            Some(("billing", "billing.get_invoice")),
            &Outcome::Validation,
            "c",
            ms,
        );
        m.call(Some(("billing", "billing.charge")), &Outcome::Ok, "c", ms);
        m.call(
            Some(("billing", "billing.get_invoice")),
            &Outcome::Ok,
            "c",
            ms,
        );
        m.call(Some(("billing.get_invoice", "")), &Outcome::Ok, "c", ms);
        let text = scrape(&m);
        for line in [
            "fusion_calls_total{tool=\"billing\",action=\"billing.charge\",outcome=\"ok\"} 1\n",
            "fusion_calls_total{tool=\"billing\",action=\"billing.get_invoice\",outcome=\"ok\"} 1\n",
            "fusion_calls_healed_total{tool=\"billing\",action=\"billing.get_invoice\"} 1\n",
            "fusion_calls_healed_total{tool=\"billing\",action=\"billing.charge\"} 0\n",
            // A mounted tool named like an action is a series of its own.
            "fusion_calls_total{tool=\"billing.get_invoice\",action=\"\",outcome=\"ok\"} 1\n",
        ] {
            assert!(text.contains(line), "{line} not in {text}");
        }
    }
}
