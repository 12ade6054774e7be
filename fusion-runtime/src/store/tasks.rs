//! MCP tasks (`io.modelcontextprotocol/tasks`): what a task-augmented `tools/call` leaves
//! behind for `tasks/get` and `tasks/cancel` to read, behind [`TaskStore`], with the
//! in-process [`MemoryTasks`](super::MemoryTasks) as the default.
//!
//! A task belongs to the client that started it (its [`ClientKey`](crate::context::ClientKey)):
//! every read names the owner, and another owner's task is answered as if it did not exist.
//! Everything is bounded: tasks per client and overall ([`TaskLimits`]; a client's share
//! shrinks as the store fills, so a crowd of clients cannot hold every place), the size of
//! a stored result, and how long a task may live (a floor of seconds and a ceiling of
//! minutes, whatever the client asks).
//!
//! A task holds a place in both bounds while it runs and, once it ended, until its result is
//! read or [`TaskLimits::hold`] passed: an ended task no one reads frees its place within
//! seconds, so no one can fill the store with tasks kept for their TTL. Its record stays
//! readable by its owner until its TTL lapses, among at most [`TaskLimits::overall`] such
//! records (the oldest dropped first past that).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::StoreError;

/// A JSON object.
pub(super) type JsonObject = serde_json::Map<String, serde_json::Value>;

/// Where a task stands (the spec's `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client's answer to a question (`tasks/update`).
    InputRequired,
    /// Answered: the result is the call's `CallToolResult`.
    Completed,
    /// The server could not answer: the error says why.
    Failed,
    /// Cancelled by the client.
    Cancelled,
}

impl TaskStatus {
    /// The spec's word: `working`, `input_required`, `completed`, `failed`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the task has ended (`completed`, `failed`, `cancelled`); it changes no more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// The bounds a [`TaskStore`] keeps.
///
/// The places of [`overall`](TaskLimits::overall) are shared fairly: a client may hold
/// [`per_owner`](TaskLimits::per_owner) tasks while the store is less than about two fifths
/// full, fewer and fewer as it fills ([`share`](TaskLimits::share)), and the last quarter of
/// the places goes only to clients that hold none. A client holding nothing is served while
/// the store has a free place, and filling the store takes hundreds of clients (about 350
/// with the defaults), however they time their requests. Clients without a principal count
/// by network ([`share_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskLimits {
    /// Tasks one client may hold at once (running, or ended and neither read nor past
    /// [`hold`](TaskLimits::hold)) while the store is less than about two fifths full;
    /// past that, its [`share`](TaskLimits::share) is smaller.
    pub per_owner: usize,
    /// Tasks the whole store holds at once, counted as for `per_owner`; also the most ended
    /// records kept readable after they stopped counting.
    pub overall: usize,
    /// Bytes of a result's JSON; a bigger result makes the task `failed`, saying so.
    pub max_result_bytes: usize,
    /// The longest lifetime a task may have, whatever the action asks for.
    pub max_ttl: Duration,
    /// The lifetime of a task when nothing asks for another.
    pub default_ttl: Duration,
    /// How often a client is told to poll.
    pub poll_interval: Duration,
    /// How long an ended task still counts toward the bounds when its result is not read
    /// (`tasks/result`, or a `tasks/get` that shows it): past it, the task is still readable
    /// by its owner until its TTL lapses, but holds no place.
    pub hold: Duration,
}

/// [`TaskLimits::per_owner`] by default: 16 clients at their bound leave most of the store
/// to others.
pub const DEFAULT_TASKS_PER_OWNER: usize = 16;
/// [`TaskLimits::overall`] by default.
pub const DEFAULT_TASKS_OVERALL: usize = 1_000;
/// [`TaskLimits::max_result_bytes`] by default: 1 MiB.
pub const DEFAULT_TASK_RESULT_BYTES: usize = 1 << 20;
/// [`TaskLimits::max_ttl`] by default: 15 minutes.
pub const DEFAULT_TASK_MAX_TTL: Duration = Duration::from_secs(15 * 60);
/// The shortest lifetime a client's asked TTL is granted (a 2025-11-25 `"task": {"ttl": 0}`
/// included): a task that lapsed before its first poll could never be read, so a client
/// asking for less gets this (twenty polls at the default interval). Below the ceiling:
/// a [`TaskLimits::max_ttl`] set shorter wins.
pub const MIN_TASK_TTL: Duration = Duration::from_secs(10);
/// [`TaskLimits::hold`] by default: 30 seconds.
pub const DEFAULT_TASK_HOLD: Duration = Duration::from_secs(30);

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            per_owner: DEFAULT_TASKS_PER_OWNER,
            overall: DEFAULT_TASKS_OVERALL,
            max_result_bytes: DEFAULT_TASK_RESULT_BYTES,
            max_ttl: DEFAULT_TASK_MAX_TTL,
            default_ttl: Duration::from_secs(5 * 60),
            poll_interval: Duration::from_millis(500),
            hold: DEFAULT_TASK_HOLD,
        }
    }
}

impl TaskLimits {
    /// The most tasks one client may hold while the store holds `stored` (counted as for
    /// the bounds): twice [`per_owner`](TaskLimits::per_owner) times the free part of the
    /// first three quarters of [`overall`](TaskLimits::overall), rounded up and at most
    /// `per_owner` (so `per_owner` until the store is about two fifths full, 398 of 1000 by
    /// default); one from three quarters on (a client holding none may take one); none when
    /// the store is full. In integers: with `o` overall and `p` per owner, a client holding
    /// `h` tasks may start another when `stored < o`, `h < p`, and either `h = 0` or
    /// `4·stored < 3·o` and `h·3·o < 2·p·(3·o − 4·stored)`. The Redis store's script keeps
    /// the same rule.
    pub fn share(&self, stored: usize) -> usize {
        let (o, p, f) = (self.overall as u128, self.per_owner as u128, stored as u128);
        if f >= o {
            return 0;
        }
        if 4 * f >= 3 * o {
            return 1.min(self.per_owner);
        }
        // The least `h` with `h·3o >= 2p(3o − 4f)`: the first count refused.
        let share = (2 * p * (3 * o - 4 * f))
            .div_ceil(3 * o)
            .min(p)
            .max(1.min(p));
        usize::try_from(share).unwrap_or(self.per_owner)
    }

    /// Whether a client holding `held` tasks may start another while the store holds
    /// `stored`: the bound it would pass, checked in this order (the store's, the
    /// client's, its share).
    pub(crate) fn admit(&self, stored: usize, held: usize) -> Result<(), TaskRefused> {
        if stored >= self.overall {
            return Err(TaskRefused::StoreFull(self.overall));
        }
        if held >= self.per_owner {
            return Err(TaskRefused::OwnerFull(self.per_owner));
        }
        let share = self.share(stored);
        if held >= share {
            return Err(TaskRefused::ShareFull {
                held,
                share,
                stored,
                overall: self.overall,
            });
        }
        Ok(())
    }

    /// The lifetime a task is granted: what its client asked, raised to [`MIN_TASK_TTL`],
    /// or [`default_ttl`](TaskLimits::default_ttl) when it asked nothing; then cut to
    /// [`max_ttl`](TaskLimits::max_ttl). The floor is for what a client asks: the server's
    /// own `default_ttl` and `max_ttl` are taken as set.
    pub fn ttl(&self, asked: Option<Duration>) -> Duration {
        asked
            .map_or(self.default_ttl, |ttl| ttl.max(MIN_TASK_TTL))
            .min(self.max_ttl)
    }
}

/// How a task ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskOutcome {
    /// The call answered: its `CallToolResult` as JSON (an `isError` result included).
    Completed(JsonObject),
    /// The server could not answer: a JSON-RPC error object (`code`, `message`, `data`).
    Failed(JsonObject),
    /// The client cancelled it.
    Cancelled,
}

impl TaskOutcome {
    /// The status of a task that ended so.
    pub fn status(&self) -> TaskStatus {
        match self {
            TaskOutcome::Completed(_) => TaskStatus::Completed,
            TaskOutcome::Failed(_) => TaskStatus::Failed,
            TaskOutcome::Cancelled => TaskStatus::Cancelled,
        }
    }

    /// The status message of a task that ended so: a failure's message, or who cancelled.
    pub fn status_message(&self) -> Option<String> {
        match self {
            TaskOutcome::Failed(e) => e.get("message").and_then(|m| m.as_str()).map(str::to_owned),
            TaskOutcome::Cancelled => Some("cancelled by the client (tasks/cancel)".to_owned()),
            TaskOutcome::Completed(_) => None,
        }
    }

    /// A `failed` outcome with JSON-RPC `code`, a readable `message` and the envelope code
    /// (`INTERNAL_ERROR`, `TIMEOUT`) in `data.code`.
    pub fn failed(code: i32, envelope_code: &str, message: impl Into<String>) -> Self {
        let mut error = JsonObject::new();
        error.insert("code".into(), code.into());
        error.insert("message".into(), message.into().into());
        error.insert("data".into(), serde_json::json!({ "code": envelope_code }));
        TaskOutcome::Failed(error)
    }
}

/// One task as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRecord {
    /// The id the client polls with: random, unguessable.
    pub id: String,
    /// Who started it ([`ClientKey`](crate::context::ClientKey)'s string).
    pub owner: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// A message for the user or model, if any.
    pub status_message: Option<String>,
    /// The result or error of a finished task.
    pub outcome: Option<TaskOutcome>,
    /// The questions waiting for the client's answer (`tasks/update`), by key, each an MCP
    /// `InputRequest` (`{"method": "elicitation/create", "params": …}`): what `tasks/get`
    /// shows as `inputRequests` while the task is `input_required`.
    pub input_requests: JsonObject,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it last changed, in milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// How long it lives from creation, in milliseconds (what the client asked, cut to
    /// [`TaskLimits::max_ttl`]): the work is stopped (`failed`, `TIMEOUT`) when it lapses,
    /// and the record is dropped one TTL after it ends.
    pub ttl_ms: u64,
    /// How often the client should poll, in milliseconds.
    pub poll_interval_ms: u64,
}

impl TaskRecord {
    /// Ends the task with `outcome` at `now` (ms), unless it already ended: `true` when this
    /// ended it. The status message becomes the error's message for `failed`, says who
    /// cancelled for `cancelled`, and is cleared for `completed`.
    pub fn end(&mut self, outcome: TaskOutcome, now: u64) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status = outcome.status();
        self.status_message = outcome.status_message();
        self.input_requests.clear();
        self.outcome = Some(outcome);
        self.updated_ms = now;
        true
    }

    /// When the record may be dropped: one TTL after it ended, or, while it runs, never
    /// (the runner ends it when its TTL lapses).
    pub(super) fn expires_ms(&self) -> Option<u64> {
        self.status
            .is_terminal()
            .then(|| self.updated_ms.saturating_add(self.ttl_ms))
    }
}

/// Where a page of [`TaskStore::list`] starts: after the task created at `created_ms`
/// with id `id` (tasks are listed oldest first, by creation and then id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskPosition {
    /// When the last task of the previous page was created, in ms since the Unix epoch.
    pub created_ms: u64,
    /// Its id.
    pub id: String,
}

/// One page of an owner's tasks ([`TaskStore::list`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskPage {
    /// The tasks, oldest first.
    pub tasks: Vec<TaskRecord>,
    /// Where the next page starts, when there may be one.
    pub next: Option<TaskPosition>,
}

/// The most tasks [`TaskStore::list`] returns in one page, whatever is asked.
pub const MAX_TASKS_PAGE: usize = 100;

/// Why a task was not created.
#[derive(Debug)]
pub enum TaskRefused {
    /// The owner holds [`TaskLimits::per_owner`] live tasks.
    OwnerFull(usize),
    /// The owner holds its [`share`](TaskLimits::share) of a store that is filling: `held`
    /// tasks, `share` the most a client may hold while the store holds `stored` of its
    /// `overall`.
    ShareFull {
        /// The tasks the owner holds.
        held: usize,
        /// The most a client may hold now.
        share: usize,
        /// The tasks the store holds.
        stored: usize,
        /// [`TaskLimits::overall`].
        overall: usize,
    },
    /// The store holds [`TaskLimits::overall`] live tasks.
    StoreFull(usize),
    /// The store could not be reached.
    Store(StoreError),
}

impl TaskRefused {
    /// What the refused client can do, for the envelope's recovery.
    pub fn recovery(&self) -> &'static str {
        match self {
            TaskRefused::OwnerFull(_) | TaskRefused::ShareFull { .. } => {
                "Read the result of one of your tasks that ended (tasks/get; tasks/result on 2025-11-25) to free its place at once, or wait for one to end; then call again."
            }
            TaskRefused::StoreFull(_) => {
                "The server is busy with other clients' tasks: call again in a few seconds."
            }
            TaskRefused::Store(_) => "Call again in a few seconds.",
        }
    }
}

impl fmt::Display for TaskRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskRefused::OwnerFull(n) => write!(
                f,
                "this client already has {n} tasks, the most it may hold; wait for one to end and read its result"
            ),
            TaskRefused::ShareFull {
                held,
                share,
                stored,
                overall,
            } => write!(
                f,
                "this client already has {held} tasks, and while the server holds {stored} of the {overall} it keeps a client may hold {share} (the fuller the server, the fewer each client may hold, so that a client holding none always gets one); wait for one of yours to end and read its result"
            ),
            TaskRefused::StoreFull(n) => write!(
                f,
                "the server holds {n} tasks, the most it keeps; try again later"
            ),
            TaskRefused::Store(e) => write!(f, "the task store cannot be reached: {e}"),
        }
    }
}

/// Who `owner` (a [`ClientKey`](crate::context::ClientKey)'s string) counts as for the
/// bounds ([`TaskLimits::per_owner`] and its share): a principal (`sub:…`) and an IPv4
/// address as themselves; an IPv6 client by its /48, what one site is assigned and what a
/// free tunnel broker hands anyone (its /64 would make one person 65,536 clients); any
/// loopback address as the one machine it is (`ip:127.0.0.0/8`). An address costs an
/// attacker a real IPv4 address, or a /48 of IPv6.
pub fn share_of(owner: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    use std::net::{Ipv4Addr, Ipv6Addr};
    let Some(address) = owner.strip_prefix("ip:") else {
        return Cow::Borrowed(owner);
    };
    if let Some(v6) = address.strip_suffix("/64")
        && let Ok(v6) = v6.parse::<Ipv6Addr>()
    {
        let network = u128::from(v6) & !((1u128 << 80) - 1);
        return Cow::Owned(format!("ip:{}/48", Ipv6Addr::from(network)));
    }
    match address.parse::<Ipv4Addr>() {
        Ok(v4) if v4.is_loopback() => Cow::Borrowed("ip:127.0.0.0/8"),
        _ => Cow::Borrowed(owner),
    }
}

/// Keeps tasks. Every method is bounded in time; a read names the owner and never returns
/// another owner's task.
///
/// The instance that runs a task [`watch`](TaskStore::watch)es it (a token cancelled when a
/// `tasks/cancel` for it arrives at any instance) and, when the store has a
/// [`lease`](TaskStore::lease), [`renew`](TaskStore::renew)s it while it runs: a task whose
/// lease lapsed (its instance died) reads as `failed`, never `working` forever.
pub trait TaskStore: Send + Sync + 'static {
    /// The bounds it keeps.
    fn limits(&self) -> &TaskLimits;

    /// Creates a `working` task of `owner` living `ttl` (as granted by
    /// [`TaskLimits::ttl`]; cut to the ceiling here too).
    fn create<'a>(
        &'a self,
        owner: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskRefused>>;

    /// The task `id` of `owner`; `None` when it is unknown, expired or someone else's.
    fn get<'a>(
        &'a self,
        owner: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Ends task `id` with `outcome`, unless it already ended (a cancelled task stays
    /// cancelled): `Ok(true)` when this ended it. A completed result bigger than
    /// [`TaskLimits::max_result_bytes`] ends it `failed` instead, saying so.
    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: TaskOutcome,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Frees the place ended task `id` of `owner` holds in the bounds: its result was read.
    /// The record stays readable until its TTL lapses. Nothing for a running task, or
    /// another owner's. A store without bounds of its own keeps the default, which frees
    /// nothing.
    fn release<'a>(&'a self, owner: &'a str, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (owner, id);
        Box::pin(std::future::ready(Ok(())))
    }

    /// A page of `owner`'s tasks that `get` would find (not expired), oldest first, from
    /// `after` (the start without one): at most `limit` (cut to [`MAX_TASKS_PAGE`]), and
    /// where the next page starts when there may be more. Bounded work per page; another
    /// owner's tasks never show.
    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<TaskPosition>,
        limit: usize,
    ) -> BoxFuture<'a, Result<TaskPage, StoreError>>;

    /// Cancels task `id` of `owner`: marks it `cancelled` unless it already ended, and
    /// stops its call wherever it runs. `Ok(false)` when `owner` has no such task.
    fn cancel<'a>(&'a self, owner: &'a str, id: &'a str)
    -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Sets the status message of a running task (the handler's last progress message).
    fn set_message<'a>(
        &'a self,
        id: &'a str,
        message: String,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Asks the client of running task `id` `request` (an MCP `InputRequest` as JSON) under
    /// `key`, unique in the task: the task is `input_required` until it is answered.
    fn ask<'a>(
        &'a self,
        id: &'a str,
        key: &'a str,
        request: serde_json::Value,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Takes `owner`'s answers to task `id`'s questions (`tasks/update`): only keys asked and
    /// not yet answered count, the others are ignored (SEP-2663); the task is `working` again
    /// when nothing is left unanswered. `Ok(false)` when `owner` has no such task.
    fn answer<'a>(
        &'a self,
        owner: &'a str,
        id: &'a str,
        responses: JsonObject,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// The answer to question `key` of task `id`, taken once, when it has come.
    fn take_answer<'a>(
        &'a self,
        id: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<serde_json::Value>, StoreError>>;

    /// A token cancelled when task `id` is cancelled, from this instance or (for a shared
    /// store) any other; held by the instance that runs it, until the [`TaskWatch`] drops.
    fn watch(&self, id: &str) -> TaskWatch;

    /// How long a running task's lease lasts: `None` when the store lives and dies with
    /// the process that runs the tasks (in-process), so no lease is needed.
    fn lease(&self) -> Option<Duration> {
        None
    }

    /// Renews the lease of running task `id` (see [`lease`](TaskStore::lease)): `Ok(false)`
    /// when the task has ended meanwhile (cancelled from an instance whose message this one
    /// missed): the runner then stops its call.
    fn renew<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let _ = id;
        Box::pin(std::future::ready(Ok(true)))
    }

    /// A name for logs and errors (`in-process`, `redis`).
    fn name(&self) -> &'static str;
}

/// The tasks this process runs, by id: what [`TaskStore::cancel`] (or a cancel that came
/// from another instance) stops.
#[derive(Clone, Debug, Default)]
pub struct Running(Arc<Mutex<HashMap<String, CancellationToken>>>);

impl Running {
    /// Registers task `id` as running here.
    pub fn watch(&self, id: &str) -> TaskWatch {
        let token = CancellationToken::new();
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), token.clone());
        TaskWatch {
            id: id.to_owned(),
            token,
            running: self.clone(),
        }
    }

    /// Cancels task `id` if it runs here: `true` when it did.
    pub fn cancel(&self, id: &str) -> bool {
        let token = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        token.map(|t| t.cancel()).is_some()
    }

    /// How many tasks run here.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no task runs here.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A task running in this process (see [`TaskStore::watch`]): its token is cancelled when
/// the task is; dropping it forgets the task.
#[derive(Debug)]
pub struct TaskWatch {
    id: String,
    token: CancellationToken,
    running: Running,
}

impl TaskWatch {
    /// The token cancelled when the task is.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for TaskWatch {
    fn drop(&mut self) {
        self.running
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// A completed outcome bigger than `limit` bytes of JSON, made a readable `failed` one.
pub(crate) fn bounded(outcome: TaskOutcome, limit: usize) -> TaskOutcome {
    let TaskOutcome::Completed(result) = &outcome else {
        return outcome;
    };
    let size = serde_json::to_vec(result).map_or(usize::MAX, |v| v.len());
    if size <= limit {
        return outcome;
    }
    TaskOutcome::failed(
        -32603,
        "INTERNAL_ERROR",
        format!(
            "the task's result is {size} bytes, more than the {limit} a task may keep; ask for less (a narrower query, fewer items)"
        ),
    )
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A new task id: 128 random bits, hex.
pub(crate) fn new_task_id() -> Result<String, StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StoreError(format!("no task id: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The most 2025 sessions [`SessionAsks`] remembers; past it, one is forgotten for each new one.
#[cfg(feature = "server-http")]
const MAX_ASKING_SESSIONS: usize = 10_000;

/// What the client of each 2025 session of this process said, at `initialize`, it can answer
/// (`elicitation`, `sampling`): what a task it starts may ask it, on its `tasks/result` stream.
/// Only the sessions that can answer something are kept, at most [`MAX_ASKING_SESSIONS`].
#[cfg(feature = "server-http")]
#[derive(Debug, Default)]
pub(crate) struct SessionAsks(Mutex<HashMap<Arc<str>, SessionCan>>);

/// What one session's client can answer.
#[cfg(feature = "server-http")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SessionCan {
    /// It declared `elicitation`.
    pub(crate) elicit: bool,
    /// It declared `sampling`.
    pub(crate) sample: bool,
}

#[cfg(feature = "server-http")]
impl SessionAsks {
    /// Records what session `id`'s client can answer.
    pub(crate) fn note(&self, id: &Arc<str>, can: SessionCan) {
        if !can.elicit && !can.sample {
            return;
        }
        let mut sessions = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions.len() >= MAX_ASKING_SESSIONS
            && let Some(old) = sessions.keys().next().cloned()
        {
            sessions.remove(&old);
        }
        sessions.insert(Arc::clone(id), can);
    }

    /// What session `id`'s client can answer (nothing, for a session not kept).
    pub(crate) fn of(&self, id: &str) -> SessionCan {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .copied()
            .unwrap_or_default()
    }
}

/// The 2025-11-25 `tasks/result` streams this process holds open, by client (who it
/// counts as for the task bounds, [`share_of`]): each holds a connection and polls the
/// store until its task ends, so a client may hold at most [`TaskLimits::per_owner`] of
/// them (one per task it may hold) and the process [`TaskLimits::overall`]. A stream's
/// [`StreamSlot`] gives its place back when the stream ends, however it ends; a client with
/// none left open is forgotten.
#[cfg(any(feature = "server-http", feature = "server-stdio"))]
#[derive(Debug, Default)]
pub(crate) struct ResultStreams(Mutex<OpenStreams>);

#[cfg(any(feature = "server-http", feature = "server-stdio"))]
#[derive(Debug, Default)]
struct OpenStreams {
    total: usize,
    by_client: HashMap<String, usize>,
}

/// Why a `tasks/result` stream was not opened.
#[cfg(any(feature = "server-http", feature = "server-stdio"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamRefused {
    /// The client holds this many open, the most it may.
    Client(usize),
    /// The process holds this many open, the most it may.
    Server(usize),
}

#[cfg(any(feature = "server-http", feature = "server-stdio"))]
impl ResultStreams {
    /// A place for one more stream of `client` (a [`share_of`] key), within `limits`.
    pub(crate) fn open(
        self: &Arc<Self>,
        client: &str,
        limits: &TaskLimits,
    ) -> Result<StreamSlot, StreamRefused> {
        let mut open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= limits.overall {
            return Err(StreamRefused::Server(limits.overall));
        }
        let mine = open.by_client.get(client).copied().unwrap_or(0);
        if mine >= limits.per_owner {
            return Err(StreamRefused::Client(limits.per_owner));
        }
        open.by_client.insert(client.to_owned(), mine + 1);
        open.total += 1;
        Ok(StreamSlot {
            streams: Arc::clone(self),
            client: client.to_owned(),
        })
    }

    /// Streams open now, and clients holding one.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        let open = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        (open.total, open.by_client.len())
    }
}

/// One open `tasks/result` stream's place in [`ResultStreams`], given back when dropped.
#[cfg(any(feature = "server-http", feature = "server-stdio"))]
#[derive(Debug)]
pub(crate) struct StreamSlot {
    streams: Arc<ResultStreams>,
    client: String,
}

#[cfg(any(feature = "server-http", feature = "server-stdio"))]
impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self
            .streams
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(mine) = open.by_client.get_mut(&self.client) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                open.by_client.remove(&self.client);
            }
        }
    }
}

#[cfg(all(test, feature = "server-http"))]
mod tests {
    use super::*;

    #[test]
    fn sessions_that_can_answer_are_kept_within_the_bound() {
        let asks = SessionAsks::default();
        let can = SessionCan {
            elicit: true,
            sample: false,
        };
        asks.note(&Arc::from("nothing"), SessionCan::default());
        assert!(
            !asks.of("nothing").elicit,
            "a session that can answer nothing is not kept"
        );
        for k in 0..=MAX_ASKING_SESSIONS {
            asks.note(&Arc::from(format!("s{k}")), can);
        }
        let kept = asks.0.lock().unwrap_or_else(PoisonError::into_inner).len();
        assert_eq!(kept, MAX_ASKING_SESSIONS);
        let last = format!("s{MAX_ASKING_SESSIONS}");
        assert!(asks.of(&last).elicit, "the newest is kept");
        assert!(!asks.of("unknown").elicit);
    }

    #[test]
    fn result_streams_are_capped_and_given_back() {
        let streams = Arc::new(ResultStreams::default());
        let limits = TaskLimits {
            per_owner: 2,
            overall: 3,
            ..TaskLimits::default()
        };
        let a1 = streams.open("a", &limits);
        let a2 = streams.open("a", &limits);
        assert!(a1.is_ok() && a2.is_ok());
        assert_eq!(
            streams.open("a", &limits).err(),
            Some(StreamRefused::Client(2))
        );
        let b1 = streams.open("b", &limits);
        assert!(b1.is_ok());
        assert_eq!(
            streams.open("c", &limits).err(),
            Some(StreamRefused::Server(3))
        );
        assert_eq!(streams.counts(), (3, 2));
        drop(a1);
        assert!(streams.open("c", &limits).is_ok(), "a place given back");
        drop((a2, b1));
        assert_eq!(streams.counts(), (0, 0), "every client forgotten");
    }
}

#[cfg(test)]
mod share_tests {
    use super::*;

    /// Clients arriving one after another, each starting tasks until refused: how many the
    /// store holds after `clients` (the order that fills it fastest: the first comers take
    /// the most).
    fn filled_by(limits: &TaskLimits, clients: usize) -> usize {
        let mut stored = 0;
        for _ in 0..clients {
            let mut held = 0;
            while limits.admit(stored, held).is_ok() {
                held += 1;
                stored += 1;
            }
        }
        stored
    }

    #[test]
    fn a_clients_share_shrinks_as_the_store_fills() {
        let limits = TaskLimits::default();
        let shares: Vec<(usize, usize)> = [0, 398, 399, 500, 600, 700, 749, 750, 999, 1000]
            .into_iter()
            .map(|stored| (stored, limits.share(stored)))
            .collect();
        assert_eq!(
            shares,
            [
                (0, 16),
                (398, 16),
                (399, 15),
                (500, 11),
                (600, 7),
                (700, 3),
                (749, 1),
                (750, 1),
                (999, 1),
                (1000, 0)
            ]
        );
        // A client holding none is served while there is a place.
        for stored in 0..1000 {
            assert!(limits.admit(stored, 0).is_ok(), "{stored}");
        }
        assert!(matches!(
            limits.admit(1000, 0),
            Err(TaskRefused::StoreFull(1000))
        ));
        assert!(matches!(
            limits.admit(10, 16),
            Err(TaskRefused::OwnerFull(16))
        ));
        assert!(matches!(
            limits.admit(600, 7),
            Err(TaskRefused::ShareFull {
                held: 7,
                share: 7,
                stored: 600,
                overall: 1000
            })
        ));
        // Degenerate bounds answer, never panic.
        let none = TaskLimits {
            per_owner: 0,
            overall: 0,
            ..limits
        };
        assert_eq!(none.share(0), 0);
        assert!(none.admit(0, 0).is_err());
    }

    #[test]
    fn filling_the_store_takes_hundreds_of_clients() {
        let limits = TaskLimits::default();
        // Sixteen clients at their bound (the store not yet two fifths full) are not
        // squeezed.
        assert_eq!(filled_by(&limits, 16), 16 * 16);
        // 63 principals or 66 addresses filled it before the share; 200 leave room now.
        assert!(filled_by(&limits, 66) < 700);
        assert!(filled_by(&limits, 200) < 900);
        let fewest = (1..2000)
            .find(|&n| filled_by(&limits, n) >= limits.overall)
            .unwrap_or(usize::MAX);
        assert!(fewest >= 350, "{fewest} clients fill the store");
    }

    #[test]
    fn clients_count_by_network() {
        assert_eq!(share_of("sub:alice"), "sub:alice");
        assert_eq!(share_of("ip:203.0.113.7"), "ip:203.0.113.7");
        assert_eq!(share_of("ip:127.0.0.1"), "ip:127.0.0.0/8");
        assert_eq!(share_of("ip:127.3.4.5"), "ip:127.0.0.0/8");
        assert_eq!(share_of("ip:2001:db8:1:2::/64"), "ip:2001:db8:1::/48");
        assert_eq!(share_of("ip:2001:db8:1:ffff::/64"), "ip:2001:db8:1::/48");
        assert_eq!(share_of("ip:::/64"), "ip:::/48");
        assert_eq!(share_of("ip:not-an-address"), "ip:not-an-address");
        assert_eq!(share_of("connection"), "connection");
    }

    #[test]
    fn a_client_asking_a_tiny_ttl_gets_the_floor() {
        let limits = TaskLimits::default();
        assert_eq!(limits.ttl(Some(Duration::ZERO)), MIN_TASK_TTL);
        assert_eq!(limits.ttl(Some(Duration::from_millis(1))), MIN_TASK_TTL);
        assert_eq!(
            limits.ttl(Some(Duration::from_secs(60))),
            Duration::from_secs(60)
        );
        assert_eq!(limits.ttl(Some(Duration::MAX)), DEFAULT_TASK_MAX_TTL);
        assert_eq!(limits.ttl(None), limits.default_ttl);
        // The server's own settings are taken as set.
        let quick = TaskLimits {
            default_ttl: Duration::from_millis(800),
            max_ttl: Duration::from_secs(2),
            ..limits
        };
        assert_eq!(quick.ttl(None), Duration::from_millis(800));
        assert_eq!(quick.ttl(Some(Duration::ZERO)), Duration::from_secs(2));
    }
}
