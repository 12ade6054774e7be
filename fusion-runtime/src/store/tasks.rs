//! MCP tasks (`io.modelcontextprotocol/tasks`): what a task-augmented `tools/call` leaves
//! behind for `tasks/get` and `tasks/cancel` to read, behind [`TaskStore`], with the
//! in-process [`MemoryTasks`](super::MemoryTasks) as the default.
//!
//! A task belongs to the client that started it (its [`ClientKey`](crate::context::ClientKey)):
//! every read names the owner, and another owner's task is answered as if it did not exist.
//! Everything is bounded: tasks per owner and overall ([`TaskLimits`]), the size of a stored
//! result, and how long a task may live (a ceiling of minutes, whatever the client asks).
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskLimits {
    /// Tasks one owner may hold at once (running, or ended and neither read nor past
    /// [`hold`](TaskLimits::hold)): well under [`overall`](TaskLimits::overall), so a few
    /// owners cannot take every place.
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

/// [`TaskLimits::per_owner`] by default: 32 owners at their bound leave most of the store to
/// others.
pub const DEFAULT_TASKS_PER_OWNER: usize = 16;
/// [`TaskLimits::overall`] by default.
pub const DEFAULT_TASKS_OVERALL: usize = 1_000;
/// [`TaskLimits::max_result_bytes`] by default: 1 MiB.
pub const DEFAULT_TASK_RESULT_BYTES: usize = 1 << 20;
/// [`TaskLimits::max_ttl`] by default: 15 minutes.
pub const DEFAULT_TASK_MAX_TTL: Duration = Duration::from_secs(15 * 60);
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
    /// `ttl`, or the default, cut to [`max_ttl`](TaskLimits::max_ttl).
    pub fn ttl(&self, ttl: Option<Duration>) -> Duration {
        ttl.unwrap_or(self.default_ttl).min(self.max_ttl)
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
    /// The store holds [`TaskLimits::overall`] live tasks.
    StoreFull(usize),
    /// The store could not be reached.
    Store(StoreError),
}

impl fmt::Display for TaskRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskRefused::OwnerFull(n) => write!(
                f,
                "this client already has {n} tasks, the most it may hold; wait for one to end and read its result"
            ),
            TaskRefused::StoreFull(n) => write!(
                f,
                "the server holds {n} tasks, the most it keeps; try again later"
            ),
            TaskRefused::Store(e) => write!(f, "the task store cannot be reached: {e}"),
        }
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

    /// Creates a `working` task of `owner` living `ttl` (cut to the ceiling).
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
}
