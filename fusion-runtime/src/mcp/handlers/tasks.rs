//! MCP tasks (`io.modelcontextprotocol/tasks`, SEP-2663) for 2026-07-28 clients: a
//! `tools/call` of a task action (`#[tool_action(task)]`) from a client that declared the
//! extension on that request is answered at once with the task (`resultType: "task"`), and
//! the same pipeline call runs in the background; `tasks/get` and `tasks/cancel` read and end
//! it in the server's [`TaskStore`], from any instance that shares it.
//!
//! The stored result is the `CallToolResult` the synchronous call returns: the same JSON, its
//! text blocks byte for byte; only its keys come sorted (it is kept as a JSON object). A
//! `<tool_error>` or `<validation_error>` stays an `isError` result in a `completed` task.
//! A call the server itself could not answer — a handler that panicked or failed
//! unexpectedly (`INTERNAL_ERROR`), or a task that outlived its TTL (`TIMEOUT`) — is a
//! `failed` task: its JSON-RPC error (`-32603`) carries the envelope's message, and in
//! `data` its code and the whole envelope. Inside a task the action's own `timeout` gives way
//! to the task's TTL; a progress message becomes the task's `statusMessage` (the extension
//! sends no progress or log notifications for a task).
//!
//! Tasks belong to the client that started them ([`ClientKey`]: the principal's subject, or
//! the client address without auth): another client's `tasks/get`, `tasks/cancel` is
//! answered exactly as an unknown task.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, DetailedTask,
    GetTaskParams, GetTaskResult, Task, TaskPayload, TaskStatus as WireStatus, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::era::Era;
pub(crate) use super::task_run::Can;
use super::task_run::{TaskElicitor, TaskSink};
use crate::context::{ClientKey, RequestScope};
use crate::envelope::{ErrorCode, ToolError, ToolResponse};
use crate::server::Server;
use crate::store::{TaskOutcome, TaskRecord, TaskStatus, TaskStore};

/// JSON-RPC `-32603` (internal error), the code of a `failed` task's error.
const INTERNAL: i32 = -32603;

/// Whether the request declared the tasks extension (in its `_meta` capabilities, or at
/// `initialize` for a session).
pub(crate) fn declared(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

/// `-32021`: the action runs only as a task (`task = "required"`) and the request did not
/// declare the tasks extension.
pub(crate) fn required_error() -> ErrorData {
    ErrorData::missing_required_client_capability(
        rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .build(),
    )
}

/// Starts `request` as a task of the scope's client: stored `working` (so a `tasks/get` on
/// any instance finds it before the answer leaves), answered at once, and run in the
/// background through the same pipeline as a synchronous call.
pub(crate) async fn start(
    server: &Server,
    era: &Era,
    request: CallToolRequestParams,
    scope: RequestScope,
    can: Can,
) -> Result<CallToolResponse, ErrorData> {
    // SEP-2663 lets the server alone set a task's TTL: the client asks none.
    let ttl = server.task_store().limits().ttl(None);
    match launch(
        server,
        era,
        &request.name,
        request.arguments,
        scope,
        can,
        ttl,
    )
    .await
    {
        Ok(record) => Ok(CallToolResponse::Task(CreateTaskResult::new(wire_task(
            &record,
        )))),
        Err(refusal) => {
            let mut result = super::mcp_handler::to_call_tool_result(ToolResponse::from(refusal));
            era.stamp(&mut result.meta, server);
            Ok(result.into())
        }
    }
}

/// Creates a task of the scope's client living `ttl` (as [`TaskLimits::ttl`](crate::store::TaskLimits::ttl) granted it:
/// floored and cut to the store's ceiling) and runs
/// the call of `tool` in the background: the stored task, or the `SERVER_BUSY` envelope
/// that refuses it (a bound reached, the store unreachable).
pub(crate) async fn launch(
    server: &Server,
    era: &Era,
    tool: &str,
    arguments: Option<crate::input::JsonObject>,
    mut scope: RequestScope,
    can: Can,
    ttl: Duration,
) -> Result<TaskRecord, ToolError> {
    let owner = ClientKey::of(&scope);
    let store = Arc::clone(server.task_store());
    let record = store.create(&owner.0, ttl).await.map_err(|why| {
        crate::envelope::error(ErrorCode::ServerBusy, why.to_string())
            .recovery(why.recovery())
            .retry_after(crate::guard::STORE_RETRY_AFTER)
    })?;
    let watch = store.watch(&record.id);
    // The request ends with this answer: the call is the task's, stopped by `tasks/cancel`
    // or its TTL, not by the request; progress goes to the task's status message.
    scope.client = Some(owner);
    scope.sink = Some(Arc::new(TaskSink {
        store: Arc::clone(&store),
        id: record.id.clone(),
    }));
    scope.as_task = true;
    scope.elicitor = Some(Arc::new(TaskElicitor {
        store: Arc::clone(&store),
        id: record.id.clone(),
        can,
        asked: AtomicUsize::new(0),
    }));
    let scope = scope.with_cancellation(watch.token().clone());
    let id = record.id.clone();
    let ttl = Duration::from_millis(record.ttl_ms);
    let (server, era, tool) = (server.clone(), era.clone(), tool.to_owned());
    // Counted while it runs: a function runtime keeps its invocation open until it ends.
    let running = server.running_tasks().enter();
    tokio::spawn(async move {
        let _running = running;
        let call = server.call(&tool, arguments, scope);
        let outcome = tokio::select! {
            biased;
            // Stored `cancelled` by whoever cancelled it.
            () = watch.token().cancelled() => None,
            () = tokio::time::sleep(ttl) => Some(lapsed(ttl)),
            response = call => Some(outcome_of(&server, &era, response)),
            () = renewing(store.as_ref(), &id) => None,
        };
        drop(watch);
        if let Some(outcome) = outcome
            && let Err(e) = store.finish(&id, outcome).await
        {
            crate::metrics::store_error("tasks");
            tracing::error!(task = %id, store = store.name(), error = %e.0, "could not store a task's end; it fails when its lease lapses");
        }
    });
    Ok(record)
}

/// Renews the task's lease while it runs, every third of it; ends when the store says the
/// task ended meanwhile (cancelled through an instance whose message was missed). Never
/// ends for a store without leases.
async fn renewing(store: &dyn TaskStore, id: &str) {
    let Some(lease) = store.lease() else {
        return std::future::pending().await;
    };
    loop {
        tokio::time::sleep(lease / 3).await;
        match store.renew(id).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(task = %id, error = %e.0, "could not renew a task's lease");
            }
        }
    }
}

/// The `failed` outcome of a task that ran past its TTL.
fn lapsed(ttl: Duration) -> TaskOutcome {
    let envelope = crate::envelope::error(
        ErrorCode::Timeout,
        format!(
            "the task ran past its time to live ({} ms) and was stopped before it answered",
            ttl.as_millis()
        ),
    )
    .recovery("Call again with less work (a narrower range, fewer items), or ask the server's operator for a longer task TTL.");
    failed(&envelope)
}

/// A `failed` outcome for `envelope`: JSON-RPC `-32603`, its message, and in `data` its
/// code and the whole envelope, for a model to read.
fn failed(envelope: &ToolError) -> TaskOutcome {
    failed_with(
        envelope.code().as_str(),
        envelope.message(),
        envelope.render(),
    )
}

fn failed_with(code: &str, message: &str, envelope: &str) -> TaskOutcome {
    let mut error = serde_json::Map::new();
    error.insert("code".into(), INTERNAL.into());
    error.insert("message".into(), message.into());
    error.insert(
        "data".into(),
        serde_json::json!({ "code": code, "envelope": envelope }),
    );
    TaskOutcome::Failed(error)
}

/// What a finished call makes of its task: `failed` for the server's own failures
/// (`INTERNAL_ERROR`, `TIMEOUT`), `completed` with the call's result otherwise — the
/// `CallToolResult` the synchronous call would have answered.
fn outcome_of(server: &Server, era: &Era, response: ToolResponse) -> TaskOutcome {
    if response.is_error
        && let Some(text) = response.texts().next()
        && let crate::metrics::Outcome::Code(code) = crate::metrics::outcome_of(true, Some(text))
        && (code == "INTERNAL_ERROR" || code == "TIMEOUT")
    {
        let message = text
            .split_once("<message>")
            .and_then(|(_, rest)| rest.split_once("</message>"))
            .map_or(text, |(m, _)| m);
        return failed_with(&code, &unescape(message), text);
    }
    let mut result = super::mcp_handler::to_call_tool_result(response);
    era.stamp(&mut result.meta, server);
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(mut object)) => {
            // A 2025 result has no `resultType` (rmcp writes it for 2026-07-28 peers only).
            if !era.is_modern() {
                object.remove("resultType");
            }
            TaskOutcome::Completed(object)
        }
        _ => failed(&crate::envelope::error(
            ErrorCode::InternalError,
            "the task's result could not be written as JSON",
        )),
    }
}

/// The text of an envelope's XML element (the five entities it escapes).
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The owner a `tasks/*` request is asked for: the same key its `tools/call` was stored under.
fn owner(
    handler: &super::mcp_handler::McpHandler,
    context: &RequestContext<RoleServer>,
) -> ClientKey {
    let mut scope = super::scope::request_scope_in_session(context, Default::default());
    if scope.principal.is_none() {
        scope.principal = handler.principal.clone();
    }
    ClientKey::of(&scope)
}

/// The key list cursors are sealed with (see `listing`): a `tasks/list` cursor too.
#[cfg(any(feature = "server-http", feature = "server-stdio"))]
pub(crate) fn cursor_key(server: &Server) -> Option<Arc<[u8]>> {
    super::listing::key(server)
}

/// The answer for a task that is unknown, expired, or another client's: the same for all
/// three, so an id is no oracle.
pub(crate) fn not_found(id: &str) -> ErrorData {
    let shown: String = id.chars().take(64).collect();
    ErrorData::invalid_params(
        format!("no task `{shown}`: it is unknown, has expired, or was started by another client"),
        None,
    )
}

pub(crate) fn store_error(e: &crate::store::StoreError) -> ErrorData {
    crate::metrics::store_error("tasks");
    ErrorData::internal_error(
        format!(
            "the task store cannot be reached, try again shortly: {}",
            e.0
        ),
        None,
    )
}

/// `tasks/get`: the task as stored, if it is the caller's. An ended task's answer carries
/// its result, so reading it frees the task's place in the bounds.
pub(crate) async fn get(
    handler: &super::mcp_handler::McpHandler,
    request: GetTaskParams,
    context: RequestContext<RoleServer>,
) -> Result<GetTaskResult, ErrorData> {
    let owner = owner(handler, &context);
    let store = handler.server.task_store();
    match store.get(&owner.0, &request.task_id).await {
        Ok(Some(record)) => {
            if record.status.is_terminal() {
                // Not freed now (Redis unreachable): the hold frees it.
                let _ = store.release(&owner.0, &record.id).await;
            }
            Ok(GetTaskResult::new(detailed(&record)))
        }
        Ok(None) => Err(not_found(&request.task_id)),
        Err(e) => Err(store_error(&e)),
    }
}

/// `tasks/update`: the caller's answers to its task's open questions (others are ignored).
pub(crate) async fn update(
    handler: &super::mcp_handler::McpHandler,
    request: UpdateTaskParams,
    context: RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    let owner = owner(handler, &context);
    let store = handler.server.task_store();
    let responses: serde_json::Map<String, serde_json::Value> =
        request.input_responses.into_iter().collect();
    match store.answer(&owner.0, &request.task_id, responses).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(not_found(&request.task_id)),
        Err(e) => Err(store_error(&e)),
    }
}

/// `tasks/cancel`: the caller's task is marked `cancelled` and its call stopped wherever it
/// runs (a task that already ended keeps its end).
pub(crate) async fn cancel(
    handler: &super::mcp_handler::McpHandler,
    request: CancelTaskParams,
    context: RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    let owner = owner(handler, &context);
    let store = handler.server.task_store();
    match store.cancel(&owner.0, &request.task_id).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(not_found(&request.task_id)),
        Err(e) => Err(store_error(&e)),
    }
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
        iso8601(record.created_ms),
        iso8601(record.updated_ms),
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
        None if record.status == TaskStatus::InputRequired => {
            let asked = serde_json::Value::Object(record.input_requests.clone());
            match serde_json::from_value(asked) {
                Ok(input_requests) => TaskPayload::InputRequired { input_requests },
                Err(_) => TaskPayload::Working,
            }
        }
        None => TaskPayload::Working,
    };
    DetailedTask::new(wire_task(record), payload)
}

/// `ms` since the epoch as ISO 8601 UTC (`2026-07-28T10:30:00.123Z`).
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso8601() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_785_234_600_123), "2026-07-28T10:30:00.123Z");
    }
}
