//! [`MemoryTasks`]: the tasks in this process's memory, the default [`TaskStore`].

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;

use crate::store::StoreError;
use crate::store::tasks::*;

/// A record as [`MemoryTasks`] keeps it.
#[derive(Debug)]
struct Kept {
    record: TaskRecord,
    /// Who it counts against ([`share_of`] its owner).
    share: String,
    /// Its result was read ([`TaskStore::release`]): it holds no place any more.
    read: bool,
}

impl Kept {
    /// Whether it holds a place in the bounds at `now`: running, or ended less than `hold`
    /// ago and not read.
    fn counts(&self, now: u64, hold: u64) -> bool {
        !self.record.status.is_terminal()
            || (!self.read && self.record.updated_ms.saturating_add(hold) > now)
    }
}

/// The in-process [`TaskStore`]: tasks in this process's memory, for one instance. Expired
/// records are dropped as new tasks are created, and so are the oldest ended ones past
/// [`TaskLimits::overall`] that no longer count.
pub struct MemoryTasks {
    limits: TaskLimits,
    tasks: Mutex<HashMap<String, Kept>>,
    /// Answers not yet taken, by task id and key.
    answers: Mutex<HashMap<(String, String), serde_json::Value>>,
    running: Running,
}

impl fmt::Debug for MemoryTasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTasks")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryTasks {
    fn default() -> Self {
        MemoryTasks::new(TaskLimits::default())
    }
}

impl MemoryTasks {
    /// An empty store keeping `limits`.
    pub fn new(limits: TaskLimits) -> Self {
        MemoryTasks {
            limits,
            tasks: Mutex::new(HashMap::new()),
            answers: Mutex::new(HashMap::new()),
            running: Running::default(),
        }
    }

    fn create_now(&self, owner: &str, ttl: Duration) -> Result<TaskRecord, TaskRefused> {
        let now = now_ms();
        let hold = u64::try_from(self.limits.hold.as_millis()).unwrap_or(u64::MAX);
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        tasks.retain(|_, t| t.record.expires_ms().is_none_or(|at| at > now));
        // Ended records that hold no place: at most `overall` of them, the oldest dropped.
        let mut idle: Vec<(u64, String)> = tasks
            .iter()
            .filter(|(_, t)| !t.counts(now, hold))
            .map(|(id, t)| (t.record.updated_ms, id.clone()))
            .collect();
        if idle.len() > self.limits.overall {
            idle.sort_unstable();
            for (_, id) in &idle[..idle.len() - self.limits.overall] {
                tasks.remove(id);
            }
        }
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(id, _), _| {
                tasks
                    .get(id)
                    .is_some_and(|t| !t.record.status.is_terminal())
            });
        let share = share_of(owner);
        let (mut stored, mut held) = (0, 0);
        for task in tasks.values().filter(|t| t.counts(now, hold)) {
            stored += 1;
            held += usize::from(task.share == share);
        }
        self.limits.admit(stored, held)?;
        let record = TaskRecord {
            id: new_task_id().map_err(TaskRefused::Store)?,
            owner: owner.to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            outcome: None,
            input_requests: JsonObject::new(),
            created_ms: now,
            updated_ms: now,
            ttl_ms: u64::try_from(ttl.min(self.limits.max_ttl).as_millis()).unwrap_or(u64::MAX),
            poll_interval_ms: u64::try_from(self.limits.poll_interval.as_millis())
                .unwrap_or(u64::MAX),
        };
        let kept = Kept {
            record: record.clone(),
            share: share.into_owned(),
            read: false,
        };
        tasks.insert(record.id.clone(), kept);
        Ok(record)
    }

    fn get_now(&self, owner: &str, id: &str) -> Option<TaskRecord> {
        let now = now_ms();
        let tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        tasks
            .get(id)
            .map(|t| &t.record)
            .filter(|t| t.owner == owner && t.expires_ms().is_none_or(|at| at > now))
            .cloned()
    }

    fn list_now(&self, owner: &str, after: Option<TaskPosition>, limit: usize) -> TaskPage {
        let now = now_ms();
        let limit = limit.clamp(1, MAX_TASKS_PAGE);
        let tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        let mut mine: Vec<&TaskRecord> = tasks
            .values()
            .map(|t| &t.record)
            .filter(|t| t.owner == owner && t.expires_ms().is_none_or(|at| at > now))
            .filter(|t| {
                after
                    .as_ref()
                    .is_none_or(|a| (t.created_ms, t.id.as_str()) > (a.created_ms, a.id.as_str()))
            })
            .collect();
        mine.sort_unstable_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        let more = mine.len() > limit;
        mine.truncate(limit);
        let next = mine.last().filter(|_| more).map(|t| TaskPosition {
            created_ms: t.created_ms,
            id: t.id.clone(),
        });
        TaskPage {
            tasks: mine.into_iter().cloned().collect(),
            next,
        }
    }

    fn release_now(&self, owner: &str, id: &str) {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = tasks
            .get_mut(id)
            .filter(|t| t.record.owner == owner && t.record.status.is_terminal())
        {
            task.read = true;
        }
    }

    fn finish_now(&self, id: &str, outcome: TaskOutcome) -> bool {
        let outcome = bounded(outcome, self.limits.max_result_bytes);
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        tasks
            .get_mut(id)
            .is_some_and(|task| task.record.end(outcome, now_ms()))
    }

    fn cancel_now(&self, owner: &str, id: &str) -> bool {
        let found = {
            let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
            match tasks.get_mut(id).filter(|t| t.record.owner == owner) {
                Some(task) => {
                    task.record.end(TaskOutcome::Cancelled, now_ms());
                    true
                }
                None => false,
            }
        };
        if found {
            self.running.cancel(id);
        }
        found
    }

    fn ask_now(&self, id: &str, key: &str, request: serde_json::Value) {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = tasks
            .get_mut(id)
            .map(|t| &mut t.record)
            .filter(|t| !t.status.is_terminal())
        {
            task.input_requests.insert(key.to_owned(), request);
            task.status = TaskStatus::InputRequired;
            task.updated_ms = now_ms();
        }
    }

    fn answer_now(&self, owner: &str, id: &str, responses: JsonObject) -> bool {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(task) = tasks
            .get_mut(id)
            .map(|t| &mut t.record)
            .filter(|t| t.owner == owner)
        else {
            return false;
        };
        if task.status.is_terminal() {
            return true;
        }
        let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        for (key, response) in responses {
            if task.input_requests.remove(&key).is_some() {
                answers.insert((id.to_owned(), key), response);
            }
        }
        if task.input_requests.is_empty() && task.status == TaskStatus::InputRequired {
            task.status = TaskStatus::Working;
            task.updated_ms = now_ms();
        }
        true
    }

    fn take_answer_now(&self, id: &str, key: &str) -> Option<serde_json::Value> {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(id.to_owned(), key.to_owned()))
    }

    fn set_message_now(&self, id: &str, message: String) {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = tasks
            .get_mut(id)
            .map(|t| &mut t.record)
            .filter(|t| !t.status.is_terminal())
        {
            task.status_message = Some(message);
            task.updated_ms = now_ms();
        }
    }
}

impl TaskStore for MemoryTasks {
    fn limits(&self) -> &TaskLimits {
        &self.limits
    }

    fn create<'a>(
        &'a self,
        owner: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskRefused>> {
        Box::pin(std::future::ready(self.create_now(owner, ttl)))
    }

    fn get<'a>(
        &'a self,
        owner: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(std::future::ready(Ok(self.get_now(owner, id))))
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: TaskOutcome,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.finish_now(id, outcome))))
    }

    fn release<'a>(&'a self, owner: &'a str, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.release_now(owner, id);
        Box::pin(std::future::ready(Ok(())))
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.cancel_now(owner, id))))
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<TaskPosition>,
        limit: usize,
    ) -> BoxFuture<'a, Result<TaskPage, StoreError>> {
        Box::pin(std::future::ready(Ok(self.list_now(owner, after, limit))))
    }

    fn set_message<'a>(
        &'a self,
        id: &'a str,
        message: String,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.set_message_now(id, message);
        Box::pin(std::future::ready(Ok(())))
    }

    fn ask<'a>(
        &'a self,
        id: &'a str,
        key: &'a str,
        request: serde_json::Value,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.ask_now(id, key, request);
        Box::pin(std::future::ready(Ok(())))
    }

    fn answer<'a>(
        &'a self,
        owner: &'a str,
        id: &'a str,
        responses: JsonObject,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(
            Ok(self.answer_now(owner, id, responses)),
        ))
    }

    fn take_answer<'a>(
        &'a self,
        id: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<serde_json::Value>, StoreError>> {
        Box::pin(std::future::ready(Ok(self.take_answer_now(id, key))))
    }

    fn watch(&self, id: &str) -> TaskWatch {
        self.running.watch(id)
    }

    fn name(&self) -> &'static str {
        "in-process"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> TaskLimits {
        TaskLimits {
            per_owner: 2,
            overall: 3,
            max_result_bytes: 64,
            max_ttl: Duration::from_secs(10),
            default_ttl: Duration::from_secs(5),
            poll_interval: Duration::from_millis(100),
            hold: Duration::from_secs(30),
        }
    }

    fn result(text: &str) -> JsonObject {
        serde_json::from_value(serde_json::json!({
            "content": [{"type": "text", "text": text}], "isError": false
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn an_owner_past_its_bound_is_refused_others_are_not() {
        let store = MemoryTasks::new(small());
        let ttl = Duration::from_secs(1);
        for _ in 0..2 {
            store.create_now("a", ttl).unwrap_or_else(|e| panic!("{e}"));
        }
        let refused = store.create_now("a", ttl);
        assert!(
            matches!(refused, Err(TaskRefused::OwnerFull(2))),
            "{refused:?}"
        );
        store.create_now("b", ttl).unwrap_or_else(|e| panic!("{e}"));
        let full = store.create_now("c", ttl);
        assert!(matches!(full, Err(TaskRefused::StoreFull(3))), "{full:?}");
    }

    #[test]
    fn the_ttl_is_cut_to_the_ceiling() {
        let store = MemoryTasks::new(small());
        let task = store
            .create_now("a", Duration::from_secs(3600))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(task.ttl_ms, 10_000);
        assert_eq!(task.poll_interval_ms, 100);
    }

    #[test]
    fn another_owner_reads_nothing() {
        let store = MemoryTasks::new(small());
        let task = store
            .create_now("a", Duration::from_secs(1))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(store.get_now("a", &task.id).is_some());
        assert_eq!(store.get_now("b", &task.id), None);
        assert_eq!(store.get_now("a", "no-such-task"), None);
    }

    #[test]
    fn a_result_past_the_bound_fails_the_task_readably() {
        let store = MemoryTasks::new(small());
        let task = store
            .create_now("a", Duration::from_secs(1))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(store.finish_now(&task.id, TaskOutcome::Completed(result(&"x".repeat(100)))));
        let read = store
            .get_now("a", &task.id)
            .unwrap_or_else(|| panic!("gone"));
        assert_eq!(read.status, TaskStatus::Failed);
        let message = read.status_message.unwrap_or_default();
        assert!(message.contains("more than the 64"), "{message}");
        let small_one = store
            .create_now("a", Duration::from_secs(1))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(store.finish_now(&small_one.id, TaskOutcome::Completed(result("ok"))));
        let read = store
            .get_now("a", &small_one.id)
            .unwrap_or_else(|| panic!("gone"));
        assert_eq!(read.status, TaskStatus::Completed);
    }

    #[test]
    fn a_cancelled_task_stays_cancelled() {
        let store = MemoryTasks::new(small());
        let task = store
            .create_now("a", Duration::from_secs(1))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(store.finish_now(&task.id, TaskOutcome::Cancelled));
        assert!(!store.finish_now(&task.id, TaskOutcome::Completed(result("late"))));
        let read = store
            .get_now("a", &task.id)
            .unwrap_or_else(|| panic!("gone"));
        assert_eq!(read.status, TaskStatus::Cancelled);
    }

    #[test]
    fn an_ended_task_frees_its_place_once_read_or_past_the_hold() {
        let store = MemoryTasks::new(TaskLimits {
            hold: Duration::from_millis(20),
            ..small()
        });
        let ttl = Duration::from_secs(10);
        let a = store.create_now("a", ttl).unwrap_or_else(|e| panic!("{e}"));
        let b = store.create_now("a", ttl).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            store.create_now("a", ttl),
            Err(TaskRefused::OwnerFull(2))
        ));
        // Read: its place is free at once, and it is still readable.
        assert!(store.finish_now(&a.id, TaskOutcome::Completed(result("ok"))));
        store.release_now("b", &a.id);
        assert!(
            matches!(store.create_now("a", ttl), Err(TaskRefused::OwnerFull(2))),
            "another owner's read frees nothing"
        );
        store.release_now("a", &a.id);
        let c = store.create_now("a", ttl).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            store.get_now("a", &a.id).is_some(),
            "readable until its ttl"
        );
        // Not read: its place is free once the hold passed.
        assert!(store.finish_now(&b.id, TaskOutcome::Completed(result("ok"))));
        assert!(store.create_now("a", ttl).is_err());
        std::thread::sleep(Duration::from_millis(30));
        store.create_now("a", ttl).unwrap_or_else(|e| panic!("{e}"));
        assert!(store.get_now("a", &b.id).is_some());
        // A running task's place is never freed by a read.
        store.release_now("a", &c.id);
        assert!(store.create_now("a", ttl).is_err());
    }

    #[test]
    fn at_most_overall_ended_records_are_kept_past_their_place() {
        let store = MemoryTasks::new(TaskLimits {
            per_owner: 1,
            overall: 2,
            ..small()
        });
        let ttl = Duration::from_secs(10);
        let mut ids = Vec::new();
        for _ in 0..5 {
            let t = store.create_now("a", ttl).unwrap_or_else(|e| panic!("{e}"));
            assert!(store.finish_now(&t.id, TaskOutcome::Completed(result("ok"))));
            store.release_now("a", &t.id);
            ids.push(t.id);
            std::thread::sleep(Duration::from_millis(2));
        }
        let kept = store
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        assert!(kept <= 3, "{kept} records kept");
        assert!(store.get_now("a", &ids[4]).is_some(), "the newest is kept");
        assert_eq!(store.get_now("a", &ids[0]), None, "the oldest is dropped");
    }

    #[test]
    fn a_list_shows_only_the_owners_live_tasks_page_by_page() {
        let store = MemoryTasks::new(TaskLimits {
            per_owner: 8,
            overall: 16,
            ..small()
        });
        let ttl = Duration::from_secs(10);
        let mut mine = Vec::new();
        for _ in 0..5 {
            mine.push(
                store
                    .create_now("a", ttl)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .id,
            );
        }
        store.create_now("b", ttl).unwrap_or_else(|e| panic!("{e}"));
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let page = store.list_now("a", after, 2);
            assert!(page.tasks.len() <= 2, "{page:?}");
            assert!(page.tasks.iter().all(|t| t.owner == "a"), "{page:?}");
            seen.extend(page.tasks.into_iter().map(|t| t.id));
            match page.next {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        let mut expected = mine.clone();
        expected.sort();
        seen.sort();
        assert_eq!(seen, expected);
        assert_eq!(store.list_now("c", None, 10), TaskPage::default());
        // An expired task no longer shows.
        let short = MemoryTasks::new(TaskLimits {
            max_ttl: Duration::from_millis(1),
            ..small()
        });
        let gone = short.create_now("a", ttl).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(short.list_now("a", None, 10).tasks.len(), 1);
        assert!(short.finish_now(&gone.id, TaskOutcome::Completed(result("ok"))));
        std::thread::sleep(Duration::from_millis(5));
        assert!(short.list_now("a", None, 10).tasks.is_empty());
    }

    #[test]
    fn a_finished_task_expires_one_ttl_after_it_ended() {
        let store = MemoryTasks::new(TaskLimits {
            max_ttl: Duration::from_millis(1),
            ..small()
        });
        let task = store
            .create_now("a", Duration::from_secs(1))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(store.finish_now(&task.id, TaskOutcome::Completed(result("ok"))));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(store.get_now("a", &task.id), None);
    }
}
