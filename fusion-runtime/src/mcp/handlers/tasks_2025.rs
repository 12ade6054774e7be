//! The experimental tasks of MCP 2025-11-25, for the clients of that version (the
//! TypeScript SDK's `client.experimental.tasks`), answered the same on every transport: a
//! `tools/call` with a `task` parameter (`{"ttl": ms}`) of a task action is answered with
//! `{"task": {…}}`; `tasks/get` reads it, `tasks/result` waits for its end and answers what
//! the call would have (the `CallToolResult`, or the JSON-RPC error of a `failed` task),
//! `tasks/cancel` cancels it, `tasks/list` pages through the caller's own tasks (offered to
//! an authenticated client only: without a principal, clients cannot be told apart, and the
//! spec asks not to). The same tasks, store, owner rules and bounds as the 2026-07-28
//! extension ([`tasks`](super::tasks)).
//!
//! A `tasks/result` for a task still running is answered by a stream of messages
//! ([`Answered::Stream`]): each status change as `notifications/tasks/status` (the full
//! task), each question the handler asks (`cx.elicit`, kept in the store as 2026-07-28
//! questions are) as an `elicitation/create` request carrying the related-task `_meta`, and
//! last the response. The client's answer, a JSON-RPC response whose id
//! (`tasks:<task>:<key>`) names the question, goes to the store; the handler, wherever it
//! runs, takes it from there. A task asks only what its client declared at `initialize`.
//!
//! rmcp 3.11 knows only the 2026-07-28 shapes (it drops the `task` parameter and refuses
//! `tasks/*` from a client without the extension), so the transports hand these messages
//! here before rmcp, parsed as `serde_json::Value`, with who sends them ([`Caller`]): the
//! HTTP JSON-RPC step for a 2025-11-25 session's request (`mcp/http/tasks_2025.rs` frames a
//! stream as SSE), `mcp/stdio.rs` for a 2025-11-25 stdio session's line (one line per
//! message). For the same reason the session's `initialize` and `tools/list` answers are
//! edited on their way out ([`Advertise`]): `capabilities.tasks` and each task tool's
//! `execution.taskSupport`.
//!
//! Reads: the message, the server's tools and task store. Writes: the task store; the
//! answer (one response, or the stream's messages).

use std::time::{Duration, Instant};

use rmcp::ErrorData;
use serde_json::{Value, json};

use super::era::Era;
use super::tasks::{self, Can};
use crate::auth::{Principal, Seal};
use crate::context::{ClientKey, RequestScope};
use crate::server::Server;
use crate::store::tasks::StreamRefused;
use crate::store::{TaskOutcome, TaskPosition, TaskRecord, TaskStatus};

/// Whether a 2025-11-25 message (its bytes, not yet parsed) may be a task message, for both
/// transports: it names a task (`task`, `tasks/…`, a question's id `tasks:…`), or it may call
/// a tool that runs only as a task. Only such a message is parsed again for [`answer`].
pub(crate) fn may_name_a_task(message: &[u8], server: &Server) -> bool {
    let mentions = |needle: &[u8]| memchr::memmem::find(message, needle).is_some();
    mentions(b"\"task") || (server.has_required_tasks() && mentions(b"\"tools/call\""))
}

/// How often `tasks/result` looks at a running task.
const RESULT_POLL: Duration = Duration::from_millis(200);

/// Tasks in one `tasks/list` page when the server sets no page size; a larger page size is
/// cut to [`MAX_TASKS_PAGE`](crate::store::MAX_TASKS_PAGE).
const TASKS_PAGE: usize = 50;

/// A `tasks/list` cursor: `tk1.`, the position in base64url, `.`, its HMAC-SHA256.
const CURSOR: Seal = Seal::new("tk1.", super::MAX_CURSOR_BYTES);

/// The prefix of the id of a question sent on a `tasks/result` stream:
/// `tasks:<task id>:<question key>`.
const QUESTION_ID: &str = "tasks:";

/// Messages a `tasks/result` stream holds ahead of its reader.
const STREAM_AHEAD: usize = 8;

/// Who sends a 2025-11-25 task message, as its transport knows it.
pub(crate) struct Caller {
    /// Who is calling, when authenticated.
    pub(crate) principal: Option<Principal>,
    /// Whose tasks it reads and starts ([`ClientKey::owner`]: the principal's, else the
    /// client's).
    pub(crate) owner: ClientKey,
    /// What its client declared at `initialize` it can answer: what a task it starts may
    /// ask it.
    pub(crate) can: Can,
}

/// The answer to a 2025-11-25 task message, for the transport to send.
pub(crate) enum Answered {
    /// One JSON-RPC response.
    Reply(Value),
    /// The messages of a `tasks/result` for a task still running (status notifications,
    /// questions), the last the response. The stream holds a place among the process's
    /// open `tasks/result` streams and looks at the task until the task ends or the
    /// receiver is dropped: dropping it is how the transport says the client went.
    Stream(futures::channel::mpsc::Receiver<Value>),
    /// The client's answer to a task's question, taken: nothing to send back.
    Taken,
}

/// The answer to `message` from `caller` (a session whose client speaks 2025-11-25, on a
/// server with task actions): `None` for anything but a 2025-11-25 task message, which the
/// transport hands to rmcp.
pub(crate) async fn answer(server: &Server, caller: Caller, message: &Value) -> Option<Answered> {
    let Caller {
        principal,
        owner,
        can,
    } = caller;
    let Some(method) = message.get("method") else {
        return answered_question(server, &owner, message).await;
    };
    let method = method.as_str()?;
    let id = message.get("id")?.clone();
    let params = message.get("params").cloned().unwrap_or_else(|| json!({}));
    let task_id = || params.get("taskId").and_then(Value::as_str).unwrap_or("");
    let answered = match method {
        "tools/call" => match params.get("task").filter(|t| t.is_object()) {
            Some(task) => call(server, &params, task, principal, owner, can).await,
            None => {
                let name = params.get("name").and_then(Value::as_str)?;
                if server.task_support(name) != crate::TaskSupport::Required {
                    return None;
                }
                // The spec's answer to a tool that runs only as a task, called without one.
                Err(json!({
                    "code": -32601,
                    "message": format!("`{}` runs only as a task: call it with `task`", name.chars().take(64).collect::<String>()),
                }))
            }
        },
        "tasks/get" => get(server, &owner, task_id()).await,
        "tasks/result" => match read(server, &owner, task_id()).await {
            Ok(record) if !record.status.is_terminal() => {
                return Some(stream_result(server, owner, record, id));
            }
            Ok(record) => ended(server, &owner, record).await,
            Err(e) => Err(e),
        },
        "tasks/cancel" => cancel(server, &owner, task_id()).await,
        "tasks/list" => list(server, &owner, principal.is_some(), &params).await,
        _ => return None,
    };
    Some(Answered::Reply(rpc(id, answered)))
}

/// A JSON-RPC answer to request `id`.
fn rpc(id: Value, answered: Result<Value, Value>) -> Value {
    match answered {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    }
}

/// The client's answer to a task's question (a JSON-RPC response whose id is
/// `tasks:<task>:<key>`), handed to the store for the task's handler: [`Answered::Taken`]
/// (over HTTP `202`, as the transport answers every response; over stdio nothing). Only
/// the task's owner answers it; anyone else's answer is dropped, as an unknown task's. `None` for any other response (rmcp's).
async fn answered_question(
    server: &Server,
    owner: &ClientKey,
    message: &Value,
) -> Option<Answered> {
    let (task, key) = message
        .get("id")?
        .as_str()?
        .strip_prefix(QUESTION_ID)?
        .split_once(':')?;
    // Only ids this server sends: a task id, a question key `e<k>`.
    if task.len() > 64 || key.len() > 8 || !key.starts_with('e') {
        return Some(Answered::Taken);
    }
    let answer = match (message.get("result"), message.get("error")) {
        (Some(result), _) => result.clone(),
        // An error is no answer the handler can read: its question fails.
        (None, Some(error)) => json!({ "error": error }),
        (None, None) => return Some(Answered::Taken),
    };
    let mut responses = serde_json::Map::new();
    responses.insert(key.to_owned(), answer);
    match server.task_store().answer(&owner.0, task, responses).await {
        Ok(true) => {}
        Ok(false) => tracing::debug!(task, "an answer to a question of no task of this client"),
        Err(e) => {
            crate::metrics::store_error("tasks");
            tracing::warn!(task, error = %e.0, "could not store a client's answer to a task's question");
        }
    }
    Some(Answered::Taken)
}

/// A task-augmented `tools/call`: `{"task": {…}}`, or `-32601` for a tool that does not run
/// as a task (the spec's word for it). A name no call reaches (unknown, or a disabled tool)
/// is answered as its call: the `UNKNOWN_ACTION` result, so a task request shows no more
/// than a call does.
async fn call(
    server: &Server,
    params: &Value,
    task: &Value,
    principal: Option<crate::auth::Principal>,
    owner: ClientKey,
    can: Can,
) -> Result<Value, Value> {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    if !server.leads_somewhere(name) {
        return Ok(unreached(server, name, params, principal, owner).await);
    }
    if !server.task_support(name).allows_task() {
        return Err(json!({
            "code": -32601,
            "message": format!("`{}` does not run as a task: call it without `task`", name.chars().take(64).collect::<String>()),
        }));
    }
    // What the client asked, floored (a `ttl` of 0 would be gone before its first poll)
    // and cut to the ceiling; the default when it asked nothing readable.
    let asked = task
        .get("ttl")
        .and_then(Value::as_u64)
        .map(Duration::from_millis);
    let ttl = server.task_store().limits().ttl(asked);
    let arguments = params.get("arguments").and_then(Value::as_object).cloned();
    let mut scope = RequestScope::detached();
    scope.principal = principal.map(std::sync::Arc::new);
    scope.client = Some(owner);
    match tasks::launch(server, &Era::Legacy, name, arguments, scope, can, ttl).await {
        Ok(record) => Ok(json!({ "task": task_json(&record) })),
        // A refused task is answered as the call would be refused: an `isError` result.
        Err(refusal) => Ok(json!({
            "content": [{"type": "text", "text": refusal.render()}],
            "isError": true,
        })),
    }
}

/// The answer to a call of `name`, a tool no call reaches: the pipeline's own refusal
/// (`UNKNOWN_ACTION`, its closest enabled name suggested), written as a 2025-11-25
/// `tools/call` result.
async fn unreached(
    server: &Server,
    name: &str,
    params: &Value,
    principal: Option<crate::auth::Principal>,
    owner: ClientKey,
) -> Value {
    let arguments = params.get("arguments").and_then(Value::as_object).cloned();
    let mut scope = RequestScope::detached();
    scope.principal = principal.map(std::sync::Arc::new);
    scope.client = Some(owner);
    let response = server.call(name, arguments, scope).await;
    let result = super::mcp_handler::to_call_tool_result(response);
    match serde_json::to_value(result) {
        Ok(Value::Object(mut object)) => {
            // rmcp writes `resultType` for 2026-07-28 peers only.
            object.remove("resultType");
            Value::Object(object)
        }
        _ => json!({"content": [], "isError": true}),
    }
}

async fn read(server: &Server, owner: &ClientKey, id: &str) -> Result<TaskRecord, Value> {
    match server.task_store().get(&owner.0, id).await {
        Ok(Some(record)) => Ok(record),
        Ok(None) => Err(error(&tasks::not_found(id))),
        Err(e) => Err(error(&tasks::store_error(&e))),
    }
}

async fn get(server: &Server, owner: &ClientKey, id: &str) -> Result<Value, Value> {
    read(server, owner, id).await.map(|r| task_json(&r))
}

/// `tasks/result` of an ended task: what the call would have answered: its result, with
/// the related-task `_meta`, or the error of a `failed` or `cancelled` task. The task's
/// place in the bounds is freed.
async fn ended(server: &Server, owner: &ClientKey, record: TaskRecord) -> Result<Value, Value> {
    // Not freed now (Redis unreachable): the hold frees it.
    let _ = server.task_store().release(&owner.0, &record.id).await;
    match record.outcome {
        Some(TaskOutcome::Completed(mut result)) => {
            let meta = result.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(
                    "io.modelcontextprotocol/related-task".to_owned(),
                    json!({ "taskId": record.id }),
                );
            }
            Ok(Value::Object(result))
        }
        Some(TaskOutcome::Failed(error)) => Err(Value::Object(error)),
        _ => Err(json!({"code": -32603, "message": "the task was cancelled (tasks/cancel)"})),
    }
}

/// `tasks/result` of a task still running: a stream that sends each status change
/// (`notifications/tasks/status`) and each question of the handler (`elicitation/create`,
/// `sampling/createMessage`, with the related-task `_meta`), then the answer to `request`
/// once the task ended, or an error once its TTL and a second passed. The stream stops
/// looking at the task when its reader goes, and gives its place back.
///
/// A client holds at most [`TaskLimits::per_owner`](crate::store::TaskLimits::per_owner)
/// such streams open in this process (counted as for the task bounds), the process
/// [`TaskLimits::overall`](crate::store::TaskLimits::overall): past them, the request is
/// answered at once with a JSON-RPC error that says what to do.
fn stream_result(server: &Server, owner: ClientKey, first: TaskRecord, request: Value) -> Answered {
    let client = crate::store::share_of(&owner.0).into_owned();
    let limits = *server.task_store().limits();
    let slot = match server.result_streams().open(&client, &limits) {
        Ok(slot) => slot,
        Err(refused) => return Answered::Reply(rpc(request, Err(too_many_streams(refused)))),
    };
    let (tx, rx) = futures::channel::mpsc::channel::<Value>(STREAM_AHEAD);
    let server = server.clone();
    tokio::spawn(async move {
        follow(&server, &owner, first, request, tx).await;
        drop(slot);
    });
    Answered::Stream(rx)
}

/// The JSON-RPC error of a `tasks/result` refused a stream.
fn too_many_streams(refused: StreamRefused) -> Value {
    let message = match refused {
        StreamRefused::Client(n) => format!(
            "this client already has {n} tasks/result streams open, the most it may; close one, or poll tasks/get until the task ends and call tasks/result then (it answers at once)"
        ),
        StreamRefused::Server(n) => format!(
            "the server holds {n} tasks/result streams open, the most it keeps; poll tasks/get until the task ends and call tasks/result then (it answers at once)"
        ),
    };
    json!({"code": -32000, "message": message})
}

/// What [`stream_result`] sends, until the task ends or the reader goes.
async fn follow(
    server: &Server,
    owner: &ClientKey,
    first: TaskRecord,
    request: Value,
    mut tx: futures::channel::mpsc::Sender<Value>,
) {
    use futures::SinkExt as _;
    let id = first.id.clone();
    let deadline = Instant::now() + Duration::from_millis(first.ttl_ms) + Duration::from_secs(1);
    let mut status = first.status;
    // The questions sent on this stream: at most the rounds a call may ask.
    let mut asked = std::collections::HashSet::new();
    let mut record = first;
    loop {
        if record.status != status {
            status = record.status;
            let note = json!({
                "jsonrpc": "2.0",
                "method": "notifications/tasks/status",
                "params": task_json(&record),
            });
            if tx.send(note).await.is_err() {
                return;
            }
        }
        if record.status == TaskStatus::InputRequired {
            for (key, question) in &record.input_requests {
                if asked.len() >= super::elicit::MAX_ELICITATION_ROUNDS
                    || !asked.insert(key.clone())
                {
                    continue;
                }
                let Some(method) = question.get("method").and_then(Value::as_str) else {
                    continue;
                };
                let mut params = question.get("params").cloned().unwrap_or_else(|| json!({}));
                if let Some(params) = params.as_object_mut() {
                    let meta = params.entry("_meta").or_insert_with(|| json!({}));
                    if let Some(meta) = meta.as_object_mut() {
                        meta.insert(
                            "io.modelcontextprotocol/related-task".to_owned(),
                            json!({ "taskId": id }),
                        );
                    }
                }
                let ask = json!({
                    "jsonrpc": "2.0",
                    "id": format!("{QUESTION_ID}{id}:{key}"),
                    "method": method,
                    "params": params,
                });
                if tx.send(ask).await.is_err() {
                    return;
                }
            }
        }
        if record.status.is_terminal() {
            let answered = ended(server, owner, record).await;
            let _ = tx.send(rpc(request, answered)).await;
            return;
        }
        if Instant::now() >= deadline {
            let late =
                json!({"code": -32603, "message": "the task did not end within its time to live"});
            let _ = tx.send(rpc(request, Err(late))).await;
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(RESULT_POLL) => {}
            () = closed(&tx) => return,
        }
        record = match read(server, owner, &id).await {
            Ok(record) => record,
            Err(e) => {
                let _ = tx.send(rpc(request, Err(e))).await;
                return;
            }
        };
    }
}

/// Resolves when the stream's reader is gone.
async fn closed(tx: &futures::channel::mpsc::Sender<Value>) {
    while !tx.is_closed() {
        tokio::time::sleep(RESULT_POLL).await;
    }
}

/// Where a `tasks/list` page starts, from `params.cursor`: `-32602` for a cursor that is not
/// a string or not one this server issued.
fn list_start(server: &Server, params: &Value) -> Result<Option<TaskPosition>, Value> {
    let bad = |why: &str| {
        json!({
            "code": -32602,
            "message": format!("Invalid cursor for tasks/list: {why}. Send the nextCursor of the previous page exactly as received, or list again without a cursor."),
            "data": {"method": "tasks/list"},
        })
    };
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(cursor)) => cursor,
        Some(_) => return Err(bad("it is not a string")),
    };
    let key = tasks::cursor_key(server).ok_or_else(|| bad("this server cannot check cursors"))?;
    let payload = CURSOR.open(&key, cursor).map_err(|e| {
        bad(match e {
            crate::auth::SealError::TooLarge => "it is longer than any cursor this server issues",
            _ => "it is not a cursor this server issued",
        })
    })?;
    let (created_ms, id): (u64, String) = serde_json::from_slice(&payload)
        .map_err(|_| bad("it is not a cursor this server issued"))?;
    Ok(Some(TaskPosition { created_ms, id }))
}

/// `tasks/list`: a page of the caller's own tasks (those `tasks/get` finds), oldest first,
/// and the cursor of the next one. Refused (`-32601`) to a caller without a principal (a
/// server without auth, or optional auth), to whom it is not offered.
async fn list(
    server: &Server,
    owner: &ClientKey,
    identified: bool,
    params: &Value,
) -> Result<Value, Value> {
    if !identified {
        return Err(json!({
            "code": -32601,
            "message": "tasks/list is offered only to an authenticated client: without a principal, a list could show one client's tasks to another",
        }));
    }
    let after = list_start(server, params)?;
    let size = server
        .page_size()
        .unwrap_or(TASKS_PAGE)
        .clamp(1, crate::store::MAX_TASKS_PAGE);
    let page = server
        .task_store()
        .list(&owner.0, after, size)
        .await
        .map_err(|e| error(&tasks::store_error(&e)))?;
    let mut result = json!({ "tasks": page.tasks.iter().map(task_json).collect::<Vec<_>>() });
    if let Some(next) = page.next {
        let sealed = tasks::cursor_key(server)
            .and_then(|key| {
                let payload = serde_json::to_vec(&(next.created_ms, &next.id)).ok()?;
                CURSOR.seal(&key, &payload).ok()
            })
            .ok_or_else(
                || json!({"code": -32603, "message": "no key to seal the next page's cursor with"}),
            )?;
        result["nextCursor"] = json!(sealed);
    }
    Ok(result)
}

/// `tasks/cancel`: the task, now `cancelled`; `-32602` for a task that already ended.
async fn cancel(server: &Server, owner: &ClientKey, id: &str) -> Result<Value, Value> {
    let record = read(server, owner, id).await?;
    if record.status.is_terminal() {
        return Err(json!({
            "code": -32602,
            "message": format!("the task already ended ({}): there is nothing to cancel", record.status.as_str()),
        }));
    }
    match server.task_store().cancel(&owner.0, id).await {
        Ok(true) => read(server, owner, id).await.map(|r| task_json(&r)),
        Ok(false) => Err(error(&tasks::not_found(id))),
        Err(e) => Err(error(&tasks::store_error(&e))),
    }
}

/// A 2025-11-25 `Task`: `ttl` and `pollInterval` (not 2026-07-28's `ttlMs`,
/// `pollIntervalMs`).
fn task_json(record: &TaskRecord) -> Value {
    let mut task = json!({
        "taskId": record.id,
        "status": record.status.as_str(),
        "createdAt": tasks::iso8601(record.created_ms),
        "lastUpdatedAt": tasks::iso8601(record.updated_ms),
        "ttl": record.ttl_ms,
        "pollInterval": record.poll_interval_ms,
    });
    if let Some(message) = &record.status_message {
        task["statusMessage"] = json!(message);
    }
    task
}

fn error(e: &ErrorData) -> Value {
    serde_json::to_value(e).unwrap_or_else(|_| json!({"code": -32603, "message": e.message}))
}

/// What a 2025-11-25 session's `initialize` and `tools/list` answers gain on a server with
/// task actions: `capabilities.tasks` (`tools/call` as a task, `tasks/cancel`, and
/// `tasks/list` for an authenticated client), and each
/// task tool's `execution.taskSupport`. rmcp's types have neither field, so the transport
/// edits the answer on its way out ([`Advertise::edit`], one JSON-RPC message at a time).
pub(crate) struct Advertise {
    pub(crate) server: Server,
    /// The answer is `tools/list`'s (else `initialize`'s).
    pub(crate) tools_list: bool,
    /// Whether the client is authenticated (a principal): only then is `tasks/list` offered.
    pub(crate) listable: bool,
}

impl Advertise {
    /// Edits one JSON-RPC answer.
    pub(crate) fn edit(&self, message: &mut Value) {
        let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
            return;
        };
        if !self.tools_list {
            if result.get("protocolVersion").and_then(Value::as_str) != Some("2025-11-25") {
                return;
            }
            if let Some(caps) = result
                .get_mut("capabilities")
                .and_then(Value::as_object_mut)
            {
                // `list` only where a client's tasks can be told from another's (auth).
                let advertised = match self.listable {
                    true => json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
                    false => json!({"cancel": {}, "requests": {"tools": {"call": {}}}}),
                };
                caps.insert("tasks".to_owned(), advertised);
            }
            return;
        }
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        for tool in tools {
            let support = tool
                .get("name")
                .and_then(Value::as_str)
                .map(|name| self.server.task_support(name))
                .filter(|s| s.allows_task());
            if let (Some(support), Some(tool)) = (support, tool.as_object_mut()) {
                tool.insert(
                    "execution".to_owned(),
                    json!({ "taskSupport": support.as_str() }),
                );
            }
        }
    }
}
