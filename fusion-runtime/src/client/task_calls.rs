//! Calls made as MCP tasks: started with [`FusionClient::call_tool_as_task`] (or, typed,
//! [`FusionClient::call_as_task`]), read with [`FusionClient::task_state`], awaited with
//! [`FusionClient::wait_task`], ended with [`FusionClient::cancel_task`], listed with
//! [`FusionClient::list_tasks`], and fed with [`FusionClient::answer_task`] when the handler
//! asks a question (`input_required`).
//!
//! The revision the connection negotiated picks the wire: 2026-07-28 speaks the tasks
//! extension (`io.modelcontextprotocol/tasks`, SEP-2663: declared per request, `tasks/get`
//! carries the result and the questions, `tasks/update` answers them; no `tasks/list`);
//! 2025-11-25 speaks that revision's tasks (the `task` parameter of `tools/call`,
//! `tasks/get` for the status, `tasks/result` for the result, `tasks/cancel`, `tasks/list`).
//! A 2025-11-25 task asks its questions on the `tasks/result` stream, to a client that
//! handles elicitation: this client has no such handler, so it reports the question
//! ([`TaskError::InputRequired`], with no requests) and cannot answer it.
//!
//! A task ends with the result the synchronous call would have returned: a `completed` task
//! is its `CallToolResult` (an `isError` envelope included), and a `failed` one — the server
//! could not answer: a handler that panicked, a TTL that lapsed — is read back as the
//! `isError` result carrying the envelope the server put in the error's `data`, so both read
//! the same way through [`CallOutcome`].

use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequest, CancelTaskParams, CancelTaskRequest, ClientRequest, ContentBlock,
    CreateTaskResult, ElicitationCapability, GetTaskParams, GetTaskRequest, InputRequests,
    InputResponses, JsonObject, ServerResult, TASKS_EXTENSION_ID, TaskPayload, UpdateTaskParams,
    UpdateTaskRequest,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};

use super::connect::{FusionClient, FusionClientError, Typed, call_params, decode};
use super::outcome::{CallOutcome, TaskError};
use crate::action::ToolAction;

/// The wait between two polls when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The shortest wait between two polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(10);
/// The longest wait between two polls, whatever the server suggests.
const MAX_POLL: Duration = Duration::from_secs(5);
/// How long [`FusionClient::wait_task`] waits for a task whose TTL is unlimited.
const UNLIMITED_WAIT: Duration = Duration::from_secs(3600);

/// A task the server started for a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolTask {
    /// The server's task id.
    pub id: String,
    /// The tool called.
    pub tool: String,
    /// How long the server keeps the task from its creation; `None`: unlimited.
    pub ttl: Option<Duration>,
    /// The wait between two polls the server suggests.
    pub poll_interval: Option<Duration>,
}

/// What [`FusionClient::call_tool_as_task`] got back.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskStart {
    /// The server runs the call as a task.
    Task(ToolTask),
    /// The server answered at once: the tool does not run as a task, or the connection's
    /// protocol version has no tasks (before 2026-07-28).
    Done(CallOutcome),
}

/// A task as one `tasks/get` read it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TaskState {
    /// Running; the message is the handler's last progress message.
    Working {
        /// The task's `statusMessage`.
        message: Option<String>,
    },
    /// The handler asked a question: answer it with [`FusionClient::answer_task`].
    InputRequired {
        /// The task's `statusMessage`.
        message: Option<String>,
        /// The questions, by key.
        requests: InputRequests,
    },
    /// Done with a result, error results included (`is_error`).
    Completed(CallOutcome),
    /// The server could not answer (`INTERNAL_ERROR`, `TIMEOUT`): the error as an `isError`
    /// outcome, with the envelope the server sent.
    Failed(CallOutcome),
    /// Cancelled before it ended.
    Cancelled,
}

/// A task as `tasks/list` shows it (MCP 2025-11-25).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListedTask {
    /// The server's task id.
    pub id: String,
    /// Its status: `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Its `statusMessage`.
    pub message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// How long the server keeps it from its creation; `None`: unlimited.
    pub ttl: Option<Duration>,
}

/// One page of [`FusionClient::list_tasks`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskList {
    /// This client's tasks on the page.
    pub tasks: Vec<ListedTask>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// A typed call started as a task ([`FusionClient::call_as_task`]): [`TypedTask::wait`] gives
/// the action's output as [`FusionClient::call`] does.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedTask<O> {
    start: TaskStart,
    output: std::marker::PhantomData<fn() -> O>,
}

impl<O: serde::de::DeserializeOwned> TypedTask<O> {
    /// The task the server started; `None` when it answered at once.
    pub fn task(&self) -> Option<&ToolTask> {
        match &self.start {
            TaskStart::Task(task) => Some(task),
            TaskStart::Done(_) => None,
        }
    }

    /// Waits for the task's end ([`FusionClient::wait_task`]) and decodes its output: the
    /// same value, warnings and errors as [`FusionClient::call`] (an error result is always
    /// [`FusionClientError::Tool`]), or the task's own errors ([`FusionClientError::Task`]).
    pub async fn wait(&self, client: &FusionClient) -> Result<Typed<O>, FusionClientError> {
        let outcome = match &self.start {
            TaskStart::Done(outcome) => outcome.clone(),
            TaskStart::Task(task) => client.wait_task(task).await?,
        };
        match outcome.error() {
            Some(e) => Err(e.into()),
            None => decode::<O>(&outcome),
        }
    }
}

/// Which tasks the connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Revision {
    /// 2025-11-25's tasks.
    Legacy,
    /// The 2026-07-28 extension (and anything that is not 2025-11-25: a server without tasks
    /// answers the call at once).
    Extension,
}

impl TaskState {
    /// Whether the task has ended (completed, failed or cancelled).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskState::Completed(_) | TaskState::Failed(_) | TaskState::Cancelled
        )
    }
}

impl FusionClient {
    /// Calls `tool` as a task: a tool the server runs as a task (`#[tool_action(task)]`)
    /// answers with the task at once, anything else with its result. On 2026-07-28 the
    /// request declares the tasks extension (and form elicitation, answered with
    /// [`FusionClient::answer_task`]); on 2025-11-25 it carries the `task` parameter;
    /// before 2025-11-25 the call is an ordinary one.
    pub async fn call_tool_as_task(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<TaskStart, FusionClientError> {
        let params = call_params(tool, arguments)?;
        if self.revision() == Revision::Legacy {
            return self.legacy_call(tool, params).await;
        }
        let answer = self
            .task_request(ClientRequest::CallToolRequest(CallToolRequest::new(params)))
            .await?;
        match answer {
            ServerResult::CreateTaskResult(created) => Ok(TaskStart::Task(task_of(tool, created))),
            ServerResult::CallToolResult(result) => {
                Ok(TaskStart::Done(CallOutcome::from_result(tool, result)))
            }
            other => Err(FusionClientError::Task(TaskError::Unexpected(format!(
                "{other:?}"
            )))),
        }
    }

    /// Calls the action `A` as a task with a typed input: [`FusionClient::call`]'s twin. The
    /// handle's [`TypedTask::wait`] gives the typed output (or what `call` would have raised).
    pub async fn call_as_task<A>(
        &self,
        input: &A::Input,
    ) -> Result<TypedTask<A::Output>, FusionClientError>
    where
        A: ToolAction,
        A::Input: serde::Serialize,
        A::Output: serde::de::DeserializeOwned,
    {
        let (tool, arguments) = self.typed_arguments::<A>(input)?;
        let start = self.call_tool_as_task(&tool, arguments).await?;
        Ok(TypedTask {
            start,
            output: std::marker::PhantomData,
        })
    }

    /// A page of this client's tasks (`tasks/list`, MCP 2025-11-25), from `cursor` (a previous
    /// page's [`TaskList::next_cursor`]) or the first. The 2026-07-28 extension has no
    /// `tasks/list`: on such a connection this is [`TaskError::Unexpected`].
    pub async fn list_tasks(&self, cursor: Option<&str>) -> Result<TaskList, FusionClientError> {
        if self.revision() != Revision::Legacy {
            return Err(TaskError::Unexpected(
                "tasks/list is part of MCP 2025-11-25 tasks; the 2026-07-28 tasks extension has none".to_owned(),
            )
            .into());
        }
        let params = match cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let page = self.legacy_request("tasks/list", params).await?;
        let tasks = page
            .get("tasks")
            .and_then(Value::as_array)
            .map(|tasks| tasks.iter().filter_map(listed).collect())
            .unwrap_or_default();
        Ok(TaskList {
            tasks,
            next_cursor: page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    /// Reads `task` once (`tasks/get`; on 2025-11-25, `tasks/result` too once it ended).
    pub async fn task_state(&self, task: &ToolTask) -> Result<TaskState, FusionClientError> {
        if self.revision() == Revision::Legacy {
            return self.legacy_state(task).await;
        }
        let answer = self
            .task_request(ClientRequest::GetTaskRequest(GetTaskRequest::new(
                GetTaskParams::new(task.id.clone()),
            )))
            .await?;
        let ServerResult::GetTaskResult(got) = answer else {
            return Err(TaskError::Unexpected(format!("{answer:?}")).into());
        };
        let message = got.task.task.status_message.clone();
        Ok(match got.task.payload {
            TaskPayload::Working => TaskState::Working { message },
            TaskPayload::InputRequired { input_requests } => TaskState::InputRequired {
                message,
                requests: input_requests,
            },
            TaskPayload::Completed { result } => {
                let result = serde_json::from_value(Value::Object(result)).map_err(|e| {
                    FusionClientError::Task(TaskError::Unexpected(format!(
                        "a completed task's result is not a CallToolResult: {e}"
                    )))
                })?;
                TaskState::Completed(CallOutcome::from_result(&task.tool, result))
            }
            TaskPayload::Failed { error } => TaskState::Failed(failure(&task.tool, &error)),
            TaskPayload::Cancelled => TaskState::Cancelled,
            other => {
                return Err(FusionClientError::Task(TaskError::Unexpected(format!(
                    "{other:?}"
                ))));
            }
        })
    }

    /// Polls `task` at the interval the server suggests (kept between 10 ms and 5 s) until it
    /// ends, at most until its TTL has passed (an hour when unlimited). A completed or failed
    /// task is its result, read as a synchronous call's (`throw_on_error` applies); a
    /// cancelled task, a question, or a task still running past the limit is
    /// [`FusionClientError::Task`].
    pub async fn wait_task(&self, task: &ToolTask) -> Result<CallOutcome, FusionClientError> {
        let limit = task.ttl.unwrap_or(UNLIMITED_WAIT);
        self.wait_task_for(task, limit).await
    }

    /// [`FusionClient::wait_task`], giving up after `limit`.
    pub async fn wait_task_for(
        &self,
        task: &ToolTask,
        limit: Duration,
    ) -> Result<CallOutcome, FusionClientError> {
        let started = Instant::now();
        let pause = task
            .poll_interval
            .unwrap_or(DEFAULT_POLL)
            .clamp(MIN_POLL, MAX_POLL);
        loop {
            match self.task_state(task).await? {
                TaskState::Completed(outcome) | TaskState::Failed(outcome) => {
                    return self.raise(outcome);
                }
                TaskState::Cancelled => {
                    return Err(FusionClientError::Task(TaskError::Cancelled {
                        task_id: task.id.clone(),
                    }));
                }
                TaskState::InputRequired { requests, .. } => {
                    return Err(FusionClientError::Task(TaskError::InputRequired {
                        task_id: task.id.clone(),
                        requests,
                    }));
                }
                TaskState::Working { .. } => {}
            }
            let waited = started.elapsed();
            if waited >= limit {
                return Err(FusionClientError::Task(TaskError::StillRunning {
                    task_id: task.id.clone(),
                    waited,
                }));
            }
            tokio::time::sleep(pause.min(limit - waited)).await;
        }
    }

    /// Asks the server to cancel `task` (`tasks/cancel`). Cancellation is cooperative: read
    /// the task to see it end.
    pub async fn cancel_task(&self, task: &ToolTask) -> Result<(), FusionClientError> {
        if self.revision() == Revision::Legacy {
            return self
                .legacy_request("tasks/cancel", json!({ "taskId": task.id }))
                .await
                .map(drop);
        }
        self.task_request(ClientRequest::CancelTaskRequest(CancelTaskRequest::new(
            CancelTaskParams::new(task.id.clone()),
        )))
        .await
        .map(drop)
    }

    /// Answers the questions of a task in `input_required` (`tasks/update`), by the keys of
    /// its [`TaskState::InputRequired`] requests.
    pub async fn answer_task(
        &self,
        task: &ToolTask,
        responses: InputResponses,
    ) -> Result<(), FusionClientError> {
        if self.revision() == Revision::Legacy {
            return Err(TaskError::Unexpected(
                "a 2025-11-25 task asks on its tasks/result stream, answered by an elicitation handler; there is no tasks/update".to_owned(),
            )
            .into());
        }
        self.task_request(ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
            UpdateTaskParams::new(task.id.clone(), responses),
        )))
        .await
        .map(drop)
    }

    /// Sends `request` declaring, in its `_meta`, the tasks extension (every task request
    /// must) and form elicitation (the caller answers a task's questions itself, with
    /// [`FusionClient::answer_task`]), beside this client's own capabilities.
    async fn task_request(
        &self,
        request: ClientRequest,
    ) -> Result<ServerResult, FusionClientError> {
        let mut capabilities = self.service().service().get_info().capabilities;
        capabilities
            .elicitation
            .get_or_insert_with(|| ElicitationCapability::new().with_form(Default::default()));
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        let mut meta = rmcp::model::RequestMetaObject::default();
        meta.set_client_capabilities(capabilities);
        Ok(self
            .service()
            .send_request_with_option(request, PeerRequestOptions::default().with_meta(meta))
            .await?
            .await_response()
            .await?)
    }
}

impl FusionClient {
    /// Which tasks the connection speaks: 2025-11-25's when it negotiated that revision.
    fn revision(&self) -> Revision {
        let legacy = self
            .service()
            .peer_info()
            .is_some_and(|info| info.protocol_version.as_str() == "2025-11-25");
        match legacy {
            true => Revision::Legacy,
            false => Revision::Extension,
        }
    }

    /// Sends a 2025-11-25 request rmcp has no type for; its result as JSON.
    async fn legacy_request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, FusionClientError> {
        let request = rmcp::model::CustomRequest::new(method, Some(params));
        let answer = self
            .service()
            .send_request(ClientRequest::CustomRequest(request))
            .await?;
        serde_json::to_value(answer).map_err(|e| FusionClientError::Json(e.to_string()))
    }

    /// A 2025-11-25 `tools/call` with `task`: the task, or the result answered at once.
    async fn legacy_call(
        &self,
        tool: &str,
        params: rmcp::model::CallToolRequestParams,
    ) -> Result<TaskStart, FusionClientError> {
        let mut params =
            serde_json::to_value(params).map_err(|e| FusionClientError::Json(e.to_string()))?;
        params["task"] = json!({});
        let answer = self.legacy_request("tools/call", params).await?;
        if let Some(task) = answer.get("task") {
            let id = task.get("taskId").and_then(Value::as_str).ok_or_else(|| {
                FusionClientError::Task(TaskError::Unexpected(format!("{answer}")))
            })?;
            let ms = |key: &str| {
                task.get(key)
                    .and_then(Value::as_u64)
                    .map(Duration::from_millis)
            };
            return Ok(TaskStart::Task(ToolTask {
                id: id.to_owned(),
                tool: tool.to_owned(),
                ttl: ms("ttl"),
                poll_interval: ms("pollInterval"),
            }));
        }
        let result = serde_json::from_value(answer)
            .map_err(|e| FusionClientError::Task(TaskError::Unexpected(e.to_string())))?;
        Ok(TaskStart::Done(CallOutcome::from_result(tool, result)))
    }

    /// A 2025-11-25 task read once: `tasks/get`, then `tasks/result` for one that ended.
    async fn legacy_state(&self, task: &ToolTask) -> Result<TaskState, FusionClientError> {
        let got = self
            .legacy_request("tasks/get", json!({ "taskId": task.id }))
            .await?;
        let message = got
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(match got.get("status").and_then(Value::as_str) {
            Some("working") => TaskState::Working { message },
            Some("input_required") => TaskState::InputRequired {
                message,
                requests: InputRequests::default(),
            },
            Some("cancelled") => TaskState::Cancelled,
            Some("completed" | "failed") => {
                let request = rmcp::model::CustomRequest::new(
                    "tasks/result",
                    Some(json!({ "taskId": task.id })),
                );
                match self
                    .service()
                    .send_request(ClientRequest::CustomRequest(request))
                    .await
                {
                    Ok(ServerResult::CallToolResult(result)) => {
                        TaskState::Completed(CallOutcome::from_result(&task.tool, result))
                    }
                    Ok(other) => {
                        let value = serde_json::to_value(other)
                            .map_err(|e| FusionClientError::Json(e.to_string()))?;
                        let result = serde_json::from_value(value).map_err(|e| {
                            TaskError::Unexpected(format!(
                                "a completed task's result is not a CallToolResult: {e}"
                            ))
                        })?;
                        TaskState::Completed(CallOutcome::from_result(&task.tool, result))
                    }
                    Err(rmcp::ServiceError::McpError(error)) => {
                        let error = serde_json::to_value(&error)
                            .ok()
                            .and_then(|e| e.as_object().cloned())
                            .unwrap_or_default();
                        TaskState::Failed(failure(&task.tool, &error))
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            _ => return Err(TaskError::Unexpected(format!("{got}")).into()),
        })
    }
}

/// A task of a `tasks/list` page.
fn listed(task: &Value) -> Option<ListedTask> {
    let text = |key: &str| task.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(ListedTask {
        id: text("taskId")?,
        status: text("status")?,
        message: text("statusMessage"),
        created_at: text("createdAt").unwrap_or_default(),
        ttl: task
            .get("ttl")
            .and_then(Value::as_u64)
            .map(Duration::from_millis),
    })
}

fn task_of(tool: &str, created: CreateTaskResult) -> ToolTask {
    ToolTask {
        id: created.task.task_id,
        tool: tool.to_owned(),
        ttl: created.task.ttl_ms.map(Duration::from_millis),
        poll_interval: created.task.poll_interval_ms.map(Duration::from_millis),
    }
}

/// A `failed` task's JSON-RPC error read as the `isError` result the synchronous call
/// answers: the envelope in `data.envelope` when the server sent one (a Fusion server does),
/// else the error's message.
fn failure(tool: &str, error: &JsonObject) -> CallOutcome {
    let data = error.get("data");
    let envelope = data.and_then(|d| d.get("envelope")).and_then(Value::as_str);
    let text = match envelope {
        Some(envelope) => envelope.to_owned(),
        None => error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("The task failed without a message")
            .to_owned(),
    };
    CallOutcome::from_result(
        tool,
        rmcp::model::CallToolResult::error(vec![ContentBlock::text(text)]),
    )
}
