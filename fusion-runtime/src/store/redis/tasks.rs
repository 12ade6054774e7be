//! The Redis [`TaskStore`]: a task is one hash (`<prefix>:task:<id>`), readable by every
//! instance pointed at the Redis; `tasks/cancel` reaches the instance running it by
//! `PUBLISH` on `<prefix>:tasks:cancel`; the running instance renews a lease in the hash,
//! and a task whose lease lapsed (its instance died or lost Redis) reads as `failed`.
//!
//! Every change is one Lua script, run alone by Redis on Redis's own clock (`TIME`), so
//! instances' clocks never disagree about a lease or an expiry: creating (with the bounds:
//! tasks per client and overall, counted in sorted sets scored by when each task frees its
//! place, and the client's fair share of a filling store, [`TaskLimits::share`], decided in
//! the script as the in-process store decides it), ending (only a task that has not ended; a cancelled task stays cancelled; it
//! then holds its place [`TaskLimits::hold`] at most), releasing (a result read frees the
//! place at once), renewing, setting the status message. Ended records stay readable until
//! their TTL lapses, at most [`TaskLimits::overall`] of them (a third sorted set, the ones
//! expiring first dropped past it). Each call is bounded by [`RedisTasks::timeout`].

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use futures::StreamExt as _;
use futures::future::BoxFuture;
use redis::aio::ConnectionManager;
use tokio_util::sync::CancellationToken;

use super::connection::DEFAULT_REDIS_TIMEOUT;
use super::task_scripts::{ANSWER, ASK, CREATE, END, LIST, MESSAGE, PRELUDE, RELEASE, RENEW, TAKE};
use crate::store::StoreError;
use crate::store::tasks::{
    MAX_TASKS_PAGE, Running, TaskLimits, TaskOutcome, TaskPage, TaskPosition, TaskRecord,
    TaskRefused, TaskStatus, TaskStore, TaskWatch, bounded, new_task_id, share_of,
};

/// How long a running task's lease lasts by default: it is renewed every third of it.
pub const DEFAULT_TASK_LEASE: Duration = Duration::from_secs(10);

/// The first wait before subscribing again; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two attempts to subscribe.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Tasks in Redis, shared by every instance pointed at it.
///
/// Reads and changes are single Lua scripts on one multiplexed connection that reconnects
/// by itself, each bounded by [`RedisTasks::timeout`]; past it, or while Redis is down, a
/// task cannot be created (the call is refused `SERVER_BUSY`, retry in 5 s) and a poll is
/// answered with a JSON-RPC error — nothing is run or reported unrecorded. The instance
/// running a task renews its lease every third of [`RedisTasks::lease`]; when it dies, the
/// next `tasks/get` after the lease lapsed, on any instance, ends the task `failed`.
/// A `tasks/cancel` ends the task in Redis and is published on
/// `<prefix>:tasks:cancel`: the instance running it stops its call at once, or, if it missed
/// the message (cut off from Redis), at its next renewal.
///
/// Scripts name keys they compute (the owner's set), so the store needs one Redis, not a
/// Redis Cluster.
pub struct RedisTasks {
    client: redis::Client,
    connection: ConnectionManager,
    prefix: String,
    timeout: Duration,
    lease: Duration,
    limits: TaskLimits,
    running: Running,
    subscribed: std::sync::OnceLock<()>,
    closed: CancellationToken,
}

impl fmt::Debug for RedisTasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTasks")
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("lease", &self.lease)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Drop for RedisTasks {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

impl RedisTasks {
    /// A store at `url` (`redis://127.0.0.1:6379/0`) with the default bounds. Does not
    /// connect yet: a server starts while Redis is down.
    pub fn new(url: &str) -> Result<Self, StoreError> {
        Ok(RedisTasks {
            client: redis::Client::open(url).map_err(|e| StoreError(e.to_string()))?,
            connection: super::connection::managed_connection(url)?,
            prefix: "fusion".into(),
            timeout: DEFAULT_REDIS_TIMEOUT,
            lease: DEFAULT_TASK_LEASE,
            limits: TaskLimits::default(),
            running: Running::default(),
            subscribed: std::sync::OnceLock::new(),
            closed: CancellationToken::new(),
        })
    }

    /// The prefix of every key (`fusion`: keys are `fusion:task:<id>`); one per server
    /// when servers share a Redis.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The bound on one Redis call, connecting included (500 ms by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a running task's lease lasts ([`DEFAULT_TASK_LEASE`] by default, at least
    /// 300 ms): how soon a task whose instance died reads as `failed`.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(300));
        self
    }

    /// The bounds it keeps ([`TaskLimits::default`] by default).
    pub fn limits(mut self, limits: TaskLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The channel cancels are published on.
    pub fn cancel_channel(&self) -> String {
        format!("{}:tasks:cancel", self.prefix)
    }

    fn key(&self, id: &str) -> String {
        format!("{}:task:{id}", self.prefix)
    }

    /// Runs `script` with `key` and `args`, within the timeout, tried a second time when the
    /// first fails on the connection (a Redis that restarted leaves a broken one).
    async fn run<T: redis::FromRedisValue>(
        &self,
        script: &str,
        key: &str,
        args: &[String],
    ) -> Result<T, StoreError> {
        let script = redis::Script::new(&format!("{PRELUDE}{script}"));
        let attempts = async {
            let mut invocation = script.key(key);
            for a in args {
                invocation.arg(a);
            }
            let mut connection = self.connection.clone();
            match invocation.invoke_async::<T>(&mut connection).await {
                Err(e) if e.is_io_error() || e.is_connection_dropped() => {
                    let mut connection = self.connection.clone();
                    invocation.invoke_async::<T>(&mut connection).await
                }
                other => other,
            }
        };
        let answered = match tokio::time::timeout(self.timeout, attempts).await {
            Err(_) => Err(StoreError(format!(
                "no answer from Redis within {} ms",
                self.timeout.as_millis()
            ))),
            Ok(Err(e)) => Err(StoreError(e.to_string())),
            Ok(Ok(v)) => Ok(v),
        };
        if answered.is_err() {
            crate::metrics::store_error("tasks");
        }
        answered
    }

    async fn read(&self, id: &str) -> Result<Option<HashMap<String, String>>, StoreError> {
        let key = self.key(id);
        let read = async {
            let mut connection = self.connection.clone();
            redis::cmd("HGETALL")
                .arg(&key)
                .query_async::<HashMap<String, String>>(&mut connection)
                .await
        };
        match tokio::time::timeout(self.timeout, read).await {
            Err(_) => {
                crate::metrics::store_error("tasks");
                Err(StoreError(format!(
                    "no answer from Redis within {} ms",
                    self.timeout.as_millis()
                )))
            }
            Ok(Err(e)) => {
                crate::metrics::store_error("tasks");
                Err(StoreError(e.to_string()))
            }
            Ok(Ok(fields)) => Ok((!fields.is_empty()).then_some(fields)),
        }
    }

    /// Ends task `id` with `outcome`: the `END` script's answer.
    async fn end(
        &self,
        id: &str,
        outcome: &TaskOutcome,
        owner: &str,
        only_if_lapsed: bool,
    ) -> Result<i64, StoreError> {
        let json = match outcome {
            TaskOutcome::Completed(o) | TaskOutcome::Failed(o) => {
                serde_json::to_string(o).map_err(|e| StoreError(e.to_string()))?
            }
            TaskOutcome::Cancelled => String::new(),
        };
        let args = [
            self.prefix.clone(),
            id.to_owned(),
            outcome.status().as_str().to_owned(),
            outcome.status_message().unwrap_or_default(),
            json,
            owner.to_owned(),
            if only_if_lapsed { "1" } else { "0" }.to_owned(),
            ms(self.limits.hold),
            self.limits.overall.to_string(),
            ms(2 * self.limits.max_ttl + self.lease),
        ];
        self.run(END, &self.key(id), &args).await
    }

    /// Starts the subscription to cancels (once per store).
    fn subscribe(&self) {
        if self.subscribed.set(()).is_err() {
            return;
        }
        let subscriber = Subscriber {
            client: self.client.clone(),
            channel: self.cancel_channel(),
            running: self.running.clone(),
            timeout: self.timeout,
            closed: self.closed.clone(),
        };
        tokio::spawn(subscriber.run());
    }
}

/// Whether `id` is one this store could have made (32 hex digits): anything else is not
/// looked up.
fn plausible(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

fn number(fields: &HashMap<String, String>, name: &str) -> u64 {
    fields.get(name).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn status_of(word: &str) -> Option<TaskStatus> {
    Some(match word {
        "working" => TaskStatus::Working,
        "input_required" => TaskStatus::InputRequired,
        "completed" => TaskStatus::Completed,
        "failed" => TaskStatus::Failed,
        "cancelled" => TaskStatus::Cancelled,
        _ => return None,
    })
}

/// The record a hash holds.
fn record_of(id: &str, fields: &HashMap<String, String>) -> Result<TaskRecord, StoreError> {
    let bad = |what: &str| StoreError(format!("task {id} in Redis has a bad {what}"));
    let status = fields
        .get("status")
        .and_then(|s| status_of(s))
        .ok_or_else(|| bad("status"))?;
    let object = || -> Result<serde_json::Map<String, serde_json::Value>, StoreError> {
        let text = fields.get("outcome").ok_or_else(|| bad("outcome"))?;
        serde_json::from_str(text).map_err(|_| bad("outcome"))
    };
    let outcome = match status {
        TaskStatus::Completed => Some(TaskOutcome::Completed(object()?)),
        TaskStatus::Failed => Some(TaskOutcome::Failed(object()?)),
        TaskStatus::Cancelled => Some(TaskOutcome::Cancelled),
        TaskStatus::Working | TaskStatus::InputRequired => None,
    };
    let mut input_requests = serde_json::Map::new();
    if status == TaskStatus::InputRequired {
        for (field, value) in fields {
            if let Some(key) = field.strip_prefix("ask:") {
                let request = serde_json::from_str(value).map_err(|_| bad("question"))?;
                input_requests.insert(key.to_owned(), request);
            }
        }
    }
    Ok(TaskRecord {
        id: id.to_owned(),
        owner: fields.get("owner").cloned().unwrap_or_default(),
        status,
        status_message: fields.get("message").cloned(),
        outcome,
        input_requests,
        created_ms: number(fields, "created"),
        updated_ms: number(fields, "updated"),
        ttl_ms: number(fields, "ttl"),
        poll_interval_ms: number(fields, "poll"),
    })
}

/// The `failed` outcome of a task whose instance stopped renewing its lease.
fn lease_lapsed(lease: Duration) -> TaskOutcome {
    TaskOutcome::failed(
        -32603,
        "INTERNAL_ERROR",
        format!(
            "the server instance running this task stopped (it renewed nothing for {} ms); whether the work was done is unknown: check before calling again if the action changes anything",
            lease.as_millis()
        ),
    )
}

fn ms(d: Duration) -> String {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).to_string()
}

impl TaskStore for RedisTasks {
    fn limits(&self) -> &TaskLimits {
        &self.limits
    }

    fn create<'a>(
        &'a self,
        owner: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskRefused>> {
        Box::pin(async move {
            let id = new_task_id().map_err(TaskRefused::Store)?;
            let ttl = ttl.min(self.limits.max_ttl);
            let args = [
                self.prefix.clone(),
                id.clone(),
                owner.to_owned(),
                self.limits.per_owner.to_string(),
                self.limits.overall.to_string(),
                ms(ttl),
                ms(self.limits.poll_interval),
                ms(self.lease),
                ms(self.limits.max_ttl),
                share_of(owner).into_owned(),
            ];
            // `{1, now, 0}`, or a refusal (`{-3, stored, held}` for a share).
            let (code, now, held): (i64, u64, u64) = self
                .run(CREATE, &self.key(&id), &args)
                .await
                .map_err(TaskRefused::Store)?;
            let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            match code {
                -1 => Err(TaskRefused::OwnerFull(self.limits.per_owner)),
                -2 => Err(TaskRefused::StoreFull(self.limits.overall)),
                -3 => Err(TaskRefused::ShareFull {
                    held: count(held),
                    share: self.limits.share(count(now)),
                    stored: count(now),
                    overall: self.limits.overall,
                }),
                _ => Ok(TaskRecord {
                    id,
                    owner: owner.to_owned(),
                    status: TaskStatus::Working,
                    status_message: None,
                    outcome: None,
                    input_requests: serde_json::Map::new(),
                    created_ms: now,
                    updated_ms: now,
                    ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
                    poll_interval_ms: u64::try_from(self.limits.poll_interval.as_millis())
                        .unwrap_or(u64::MAX),
                }),
            }
        })
    }

    fn get<'a>(
        &'a self,
        owner: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move {
            if !plausible(id) {
                return Ok(None);
            }
            let Some(fields) = self.read(id).await? else {
                return Ok(None);
            };
            if fields.get("owner").map(String::as_str) != Some(owner) {
                return Ok(None);
            }
            let record = record_of(id, &fields)?;
            if record.status.is_terminal()
                || number(&fields, "lease") > crate::store::tasks::now_ms()
            {
                return Ok(Some(record));
            }
            // The lease looks lapsed by this instance's clock: the script decides on Redis's.
            if self.end(id, &lease_lapsed(self.lease), owner, true).await? == 2 {
                tracing::warn!(task = %id, "a task's instance stopped renewing its lease: the task failed");
            }
            match self.read(id).await? {
                Some(fields) => record_of(id, &fields).map(Some),
                None => Ok(None),
            }
        })
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: TaskOutcome,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let outcome = bounded(outcome, self.limits.max_result_bytes);
            Ok(self.end(id, &outcome, "", false).await? == 2)
        })
    }

    fn release<'a>(&'a self, owner: &'a str, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            if !plausible(id) {
                return Ok(());
            }
            let args = [self.prefix.clone(), id.to_owned(), owner.to_owned()];
            let _: i64 = self.run(RELEASE, &self.key(id), &args).await?;
            Ok(())
        })
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            if !plausible(id) {
                return Ok(false);
            }
            if self.end(id, &TaskOutcome::Cancelled, owner, false).await? == 0 {
                return Ok(false);
            }
            if !self.running.cancel(id) {
                // Running elsewhere, or nowhere: its instance stops it on this message, or at
                // its next renewal if it missed it.
                let publish = async {
                    let mut connection = self.connection.clone();
                    redis::cmd("PUBLISH")
                        .arg(self.cancel_channel())
                        .arg(id)
                        .query_async::<i64>(&mut connection)
                        .await
                };
                if !matches!(tokio::time::timeout(self.timeout, publish).await, Ok(Ok(_))) {
                    crate::metrics::store_error("tasks");
                    tracing::warn!(task = %id, "could not publish a task's cancel; its instance stops it at its next renewal");
                }
            }
            Ok(true)
        })
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<TaskPosition>,
        limit: usize,
    ) -> BoxFuture<'a, Result<TaskPage, StoreError>> {
        Box::pin(async move {
            let limit = limit.clamp(1, MAX_TASKS_PAGE);
            let (score, after_id) = match &after {
                Some(a) => (a.created_ms.to_string(), a.id.clone()),
                None => (String::new(), String::new()),
            };
            let args = [
                self.prefix.clone(),
                owner.to_owned(),
                score,
                after_id,
                limit.to_string(),
                // Room for the entries of records gone since (dropped as they are met).
                (2 * limit + 16).to_string(),
            ];
            let unused = format!("{}:tasks:all", self.prefix);
            let (more, last_score, last_id, ids, hashes): (
                i64,
                String,
                String,
                Vec<String>,
                Vec<Vec<String>>,
            ) = self.run(LIST, &unused, &args).await?;
            let mut tasks = Vec::with_capacity(ids.len());
            for (id, flat) in ids.iter().zip(hashes) {
                let mut fields = HashMap::with_capacity(flat.len() / 2);
                let mut pairs = flat.into_iter();
                while let (Some(k), Some(v)) = (pairs.next(), pairs.next()) {
                    fields.insert(k, v);
                }
                let record = record_of(id, &fields)?;
                if record.status.is_terminal()
                    || number(&fields, "lease") > crate::store::tasks::now_ms()
                {
                    tasks.push(record);
                } else if let Some(settled) = self.get(owner, id).await? {
                    // A lapsed lease is settled as `get` settles it.
                    tasks.push(settled);
                }
            }
            let next = (more == 1)
                .then(|| last_score.parse::<f64>().ok())
                .flatten()
                .map(|score| TaskPosition {
                    // Redis keeps scores as doubles; milliseconds fit exactly.
                    created_ms: score as u64,
                    id: last_id,
                });
            Ok(TaskPage { tasks, next })
        })
    }

    fn set_message<'a>(
        &'a self,
        id: &'a str,
        message: String,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let _: i64 = self.run(MESSAGE, &self.key(id), &[message]).await?;
            Ok(())
        })
    }

    fn ask<'a>(
        &'a self,
        id: &'a str,
        key: &'a str,
        request: serde_json::Value,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let args = [key.to_owned(), request.to_string()];
            let _: i64 = self.run(ASK, &self.key(id), &args).await?;
            Ok(())
        })
    }

    fn answer<'a>(
        &'a self,
        owner: &'a str,
        id: &'a str,
        responses: serde_json::Map<String, serde_json::Value>,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            if !plausible(id) {
                return Ok(false);
            }
            let mut args = vec![owner.to_owned()];
            for (key, response) in responses {
                args.push(key);
                args.push(response.to_string());
            }
            let found: i64 = self.run(ANSWER, &self.key(id), &args).await?;
            Ok(found == 1)
        })
    }

    fn take_answer<'a>(
        &'a self,
        id: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<serde_json::Value>, StoreError>> {
        Box::pin(async move {
            let taken: Option<String> = self.run(TAKE, &self.key(id), &[key.to_owned()]).await?;
            Ok(taken.and_then(|t| serde_json::from_str(&t).ok()))
        })
    }

    fn watch(&self, id: &str) -> TaskWatch {
        self.subscribe();
        self.running.watch(id)
    }

    fn lease(&self) -> Option<Duration> {
        Some(self.lease)
    }

    fn renew<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let running: i64 = self.run(RENEW, &self.key(id), &[ms(self.lease)]).await?;
            Ok(running == 1)
        })
    }

    fn name(&self) -> &'static str {
        "redis"
    }
}

/// The subscription to cancels: holds one `SUBSCRIBE` after another (bounded backoff) until
/// the store is dropped, cancelling the tasks named that run here.
struct Subscriber {
    client: redis::Client,
    channel: String,
    running: Running,
    timeout: Duration,
    closed: CancellationToken,
}

impl Subscriber {
    async fn run(self) {
        let mut backoff = MIN_BACKOFF;
        loop {
            let connected = tokio::select! {
                () = self.closed.cancelled() => return,
                connected = tokio::time::timeout(self.timeout, self.connect()) => connected,
            };
            if let Ok(Ok(pubsub)) = connected {
                backoff = MIN_BACKOFF;
                let mut messages = pubsub.into_on_message();
                loop {
                    tokio::select! {
                        () = self.closed.cancelled() => return,
                        message = messages.next() => {
                            let Some(message) = message else { break };
                            let id = message.get_payload_bytes();
                            // Only ids this store makes; anything else anyone published is dropped.
                            if let Ok(id) = std::str::from_utf8(id)
                                && plausible(id)
                            {
                                self.running.cancel(id);
                            }
                        }
                    }
                }
                tracing::warn!(channel = %self.channel, "tasks: lost the Redis subscription to cancels; tasks running here are stopped at their next renewal meanwhile");
            }
            tokio::select! {
                () = self.closed.cancelled() => return,
                () = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn connect(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let mut pubsub = self.client.get_async_pubsub().await?;
        pubsub.subscribe(&self.channel).await?;
        Ok(pubsub)
    }
}
