//! Calls made as MCP tasks (`io.modelcontextprotocol/tasks`, SEP-2663): started with
//! [`FusionClient::call_tool_as_task`], read with [`FusionClient::task_state`], awaited with
//! [`FusionClient::wait_task`], ended with [`FusionClient::cancel_task`], and fed with
//! [`FusionClient::answer_task`] when the handler asks a question (`input_required`).
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
use serde_json::Value;

use super::connect::{FusionClient, FusionClientError, call_params};
use super::outcome::{CallOutcome, TaskError};

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
    /// Calls `tool` declaring the tasks extension (and form elicitation, answered with
    /// [`FusionClient::answer_task`]) on this request: a tool the server runs as a task
    /// (`#[tool_action(task)]`) answers with the task at once, anything else with its
    /// result. Over a connection before 2026-07-28 the call is an ordinary one.
    pub async fn call_tool_as_task(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<TaskStart, FusionClientError> {
        let params = call_params(tool, arguments)?;
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

    /// Reads `task` once (`tasks/get`).
    pub async fn task_state(&self, task: &ToolTask) -> Result<TaskState, FusionClientError> {
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
