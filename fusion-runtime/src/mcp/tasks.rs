//! MCP tasks (`io.modelcontextprotocol/tasks`, SEP-2663) for 2026-07-28 clients: a
//! `tools/call` of a task action (`#[tool_action(task)]`) from a client that declared the
//! extension is answered at once with the task (`resultType: "task"`), and the same pipeline
//! call runs in the background; `tasks/get` and `tasks/cancel` read and end it in the
//! server's [`TaskStore`](crate::store::TaskStore).
//!
//! The stored result is the `CallToolResult` the synchronous call returns (a tool error
//! stays an `isError` result in a `completed` task). A call the server could not answer —
//! a handler that panicked or ran past its action's timeout (`INTERNAL_ERROR`, `TIMEOUT`
//! envelopes), or a task that outlived its TTL — is a `failed` task whose error carries the
//! readable message and, in `data.code`, the envelope's code. Tasks belong to the client
//! that started them ([`ClientKey`]): another client's `tasks/get` is "not found".

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, DetailedTask,
    GetTaskParams, GetTaskResult, Task, TaskPayload, TaskStatus as WireStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tokio_util::sync::CancellationToken;

use super::era::Era;
use crate::context::{ClientKey, RequestScope};
use crate::envelope::ToolResponse;
use crate::server::Server;
use crate::store::{TaskOutcome, TaskRecord, TaskStatus};

/// JSON-RPC `-32603`, the code of a `failed` task's error.
const INTERNAL: i32 = -32603;

/// The tasks running in this process, by id: `tasks/cancel` cancels the call's token.
static RUNNING: LazyLock<Mutex<HashMap<String, CancellationToken>>> =
    LazyLock::new(Mutex::default);

/// Whether the request declared the tasks extension (in its `_meta` capabilities, or at
/// `initialize` for a session).
pub(crate) fn declared(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

/// Starts `request` as a task of the scope's client: stored `working`, answered at once, run
/// in the background through the same pipeline as a synchronous call.
pub(crate) async fn start(
    server: &Server,
    era: &Era,
    request: CallToolRequestParams,
    mut scope: RequestScope,
) -> Result<CallToolResponse, ErrorData> {
    let owner = ClientKey::of(&scope);
    let store = server.task_store().clone();
    let ttl = store.limits().default_ttl;
    let record = match store.create(&owner.0, ttl).await {
        Ok(record) => record,
        Err(why) => {
            let refusal =
                crate::envelope::error(crate::envelope::ErrorCode::ServerBusy, why.to_string())
                    .suggest("Wait for one of your tasks to end, or call again later.")
                    .retry_after(crate::guard::STORE_RETRY_AFTER);
            let mut result = super::to_call_tool_result(ToolResponse::from(refusal));
            era.stamp(&mut result.meta, server);
            return Ok(result.into());
        }
    };
    // The request's stream ends with this answer: nothing reaches the client through it, and
    // the call is the task's, cancelled by `tasks/cancel` or its TTL, not by the request.
    scope.client = Some(owner);
    scope.sink = None;
    let token = CancellationToken::new();
    let scope = scope.with_cancellation(token.clone());
    RUNNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(record.id.clone(), token.clone());
    let id = record.id.clone();
    let ttl = Duration::from_millis(record.ttl_ms);
    let (server2, era2) = (server.clone(), era.clone());
    tokio::spawn(async move {
        let call = server2.call(&request.name, request.arguments, scope);
        let outcome = tokio::select! {
            biased;
            () = token.cancelled() => TaskOutcome::Cancelled,
            () = tokio::time::sleep(ttl) => TaskOutcome::failed(
                INTERNAL,
                "TIMEOUT",
                format!(
                    "the task ran past its time to live ({} ms) and was stopped; call again, or ask for less work",
                    ttl.as_millis()
                ),
            ),
            response = call => outcome_of(&server2, &era2, response),
        };
        let store = server2.task_store();
        if let Err(e) = store.finish(&id, outcome).await {
            tracing::error!(task = %id, store = store.name(), error = %e.0, "could not store a task's end");
        }
        RUNNING
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    });
    Ok(CallToolResponse::Task(CreateTaskResult::new(wire_task(
        &record,
    ))))
}

/// What a finished call makes of its task: `failed` for the server's own failures
/// (`INTERNAL_ERROR`, `TIMEOUT`), `completed` with the call's result otherwise.
fn outcome_of(server: &Server, era: &Era, response: ToolResponse) -> TaskOutcome {
    if response.is_error
        && let Some(crate::envelope::Content::Text(text)) = response.content.first()
    {
        for code in ["INTERNAL_ERROR", "TIMEOUT"] {
            if text.starts_with(&format!("<tool_error code=\"{code}\"")) {
                let message = text
                    .split_once("<message>")
                    .and_then(|(_, rest)| rest.split_once("</message>"))
                    .map_or(text.as_str(), |(m, _)| m);
                return TaskOutcome::failed(INTERNAL, code, message.to_owned());
            }
        }
    }
    let mut result = super::to_call_tool_result(response);
    era.stamp(&mut result.meta, server);
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(object)) => TaskOutcome::Completed(object),
        _ => TaskOutcome::failed(INTERNAL, "INTERNAL_ERROR", "the result could not be written"),
    }
}

/// The owner a `tasks/*` request is asked for: the same key its `tools/call` was stored under.
fn owner(handler: &super::McpHandler, context: &RequestContext<RoleServer>) -> ClientKey {
    let mut scope = super::scope::request_scope_in_session(context, Default::default());
    if scope.principal.is_none() {
        scope.principal = handler.principal.clone();
    }
    ClientKey::of(&scope)
}

fn not_found(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("no task `{id}`: it is unknown, expired, or not yours"),
        None,
    )
}

fn store_error(e: &crate::store::StoreError) -> ErrorData {
    ErrorData::internal_error(format!("the task store cannot be reached: {}", e.0), None)
}

/// `tasks/get`: the task as stored, if it is the caller's.
pub(crate) async fn get(
    handler: &super::McpHandler,
    request: GetTaskParams,
    context: RequestContext<RoleServer>,
) -> Result<GetTaskResult, ErrorData> {
    let owner = owner(handler, &context);
    let store = handler.server.task_store();
    match store.get(&owner.0, &request.task_id).await {
        Ok(Some(record)) => Ok(GetTaskResult::new(detailed(&record))),
        Ok(None) => Err(not_found(&request.task_id)),
        Err(e) => Err(store_error(&e)),
    }
}

/// `tasks/cancel`: the caller's task is marked `cancelled` and its call stopped (cooperative:
/// a task that already ended keeps its end).
pub(crate) async fn cancel(
    handler: &super::McpHandler,
    request: CancelTaskParams,
    context: RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    let owner = owner(handler, &context);
    let store = handler.server.task_store();
    match store.get(&owner.0, &request.task_id).await {
        Ok(Some(_)) => {}
        Ok(None) => return Err(not_found(&request.task_id)),
        Err(e) => return Err(store_error(&e)),
    }
    store
        .finish(&request.task_id, TaskOutcome::Cancelled)
        .await
        .map_err(|e| store_error(&e))?;
    let token = RUNNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&request.task_id);
    if let Some(token) = token {
        token.cancel();
    }
    Ok(())
}

fn wire_status(status: TaskStatus) -> WireStatus {
    match status {
        TaskStatus::Working => WireStatus::Working,
        TaskStatus::InputRequired => WireStatus::InputRequired,
        TaskStatus::Completed => WireStatus::Completed,
        TaskStatus::Failed => WireStatus::Failed,
        TaskStatus::Cancelled => WireStatus::Cancelled,
    }
}

fn wire_task(record: &TaskRecord) -> Task {
    let mut task = Task::new(
        record.id.clone(),
        wire_status(record.status),
        crate::store::iso8601(record.created_ms),
        crate::store::iso8601(record.updated_ms),
    )
    .with_ttl_ms(record.ttl_ms)
    .with_poll_interval_ms(record.poll_interval_ms);
    task.status_message = record.status_message.clone();
    task
}

fn detailed(record: &TaskRecord) -> DetailedTask {
    let payload = match &record.outcome {
        Some(TaskOutcome::Completed(result)) => TaskPayload::Completed {
            result: result.clone(),
        },
        Some(TaskOutcome::Failed(error)) => TaskPayload::Failed {
            error: error.clone(),
        },
        Some(TaskOutcome::Cancelled) => TaskPayload::Cancelled,
        None => TaskPayload::Working,
    };
    DetailedTask::new(wire_task(record), payload)
}

/// Adds the tasks extension to `capabilities` when the server has a task action.
pub(crate) fn advertise(server: &Server, capabilities: &mut rmcp::model::ServerCapabilities) {
    if server.has_tasks() {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                serde_json::Map::new(),
            );
    }
}
