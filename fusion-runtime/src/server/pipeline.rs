//! The call pipeline, stage by stage:
//!
//! 1. **route** — tool name (and discriminator) → action, or `UNKNOWN_ACTION` /
//!    `MISSING_DISCRIMINATOR`; then the action's **scopes**: `AUTH_REQUIRED` without a
//!    principal, `FORBIDDEN` without a scope;
//! 2. **admit** — the rate limit (`RATE_LIMITED`), then a slot from the action's and its
//!    group's concurrency guards (`SERVER_BUSY` when running and queue are full). A refused
//!    call is neither validated nor run;
//! 3. **validate** — arguments → typed input, or `<validation_error>`;
//! 4. **middleware → handler**, with panics caught, under the action's timeout (`TIMEOUT`).
//!    An empty middleware chain is a direct call: the typed input goes straight to the
//!    handler. Validation and panic handling are written once, for both;
//! 5. **respond** — the outcome written for the model.
//!
//! Stages 2–5 race the request's cancellation token, when it has one (MCP
//! `notifications/cancelled`, or the connection closing): a cancelled call is dropped
//! wherever it is — waiting in a queue or running — and its slot or queue place is freed.
//! The slot is held until the response is written. A call nobody can cancel (an in-process
//! call without a token) pays nothing for the race.
//!
//! Each stage runs in a `tracing` span of target [`SPANS`] (`fusion.route`, `fusion.admit`,
//! `fusion.validate`, `fusion.middleware`, `fusion.handler`, `fusion.respond`), children of
//! the transport's `mcp.request` span; the tool, the client key and the outcome code are
//! recorded on that one. Nothing listens to the target unless OpenTelemetry export is on
//! (feature `otel`): a disabled span costs a load of its callsite's interest.

use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};
use tracing::Instrument;

use super::failure::InternalErrors;
use super::limits::{self, ActionGuards, Admission};
use super::middleware::{CallRequest, Next};
use super::registry::{ActionDescriptor, Inner, Started};
use super::respond::{SPANS, deprecated_fields_sent, handler_panicked, invalid, respond};
use super::routing::{self, Route};
use super::source;
use crate::action::ActionInfo;
use crate::context::{CallContext, ClientKey, HandoffSlot, RequestScope};
use crate::envelope::{ToolError, ToolResponse};
use crate::guard;
use crate::input::JsonObject;

/// The whole pipeline for one call; when the spans are listened to, the tool, the client key
/// and the outcome code are recorded on the request span.
// Boxed here, by a plain function: an optimized build copies an `async fn`'s body into every
// codegen unit that awaits it (and so everything it awaits), and every transport awaits the
// pipeline. Behind this one box its state machine is compiled once, for one allocation per
// call (BENCHMARKS.md, "Build cost").
#[inline(never)]
pub(crate) fn call<'a>(
    inner: &'a Inner,
    tool: &'a str,
    arguments: Option<JsonObject>,
    scope: RequestScope,
) -> BoxFuture<'a, ToolResponse> {
    Box::pin(traced(inner, tool, arguments, scope))
}

/// [`call`], unboxed.
async fn traced(
    inner: &Inner,
    tool: &str,
    arguments: Option<JsonObject>,
    scope: RequestScope,
) -> ToolResponse {
    if !tracing::enabled!(target: SPANS, tracing::Level::INFO) {
        return stages(inner, tool, arguments, scope).await;
    }
    // The key, never a token: `sub:<subject>`, `ip:<address>`, or the embedding code's.
    let client = ClientKey::of(&scope);
    let response = stages(inner, tool, arguments, scope).await;
    let request = tracing::Span::current();
    request.record("gen_ai.tool.name", routing::loggable(tool));
    request.record("fusion.client_key", client.0.as_str());
    let outcome = crate::metrics::outcome_of(response.is_error, response.texts().next());
    request.record("fusion.outcome", outcome.as_str());
    response
}

/// A call of a disabled tool: `UNKNOWN_ACTION`, counted as a call no tool answers.
fn refused_as_unknown(
    inner: &Inner,
    tool: &str,
    client: Option<&ClientKey>,
    started: Option<Instant>,
) -> ToolResponse {
    let response = ToolResponse::error(routing::unknown_tool(tool, &inner.known_tool_names()));
    if crate::metrics::enabled() {
        count(None, &response, client, started);
    }
    response
}

/// The stages of one call.
async fn stages(
    inner: &Inner,
    tool: &str,
    arguments: Option<JsonObject>,
    scope: RequestScope,
) -> ToolResponse {
    // The clock is read only when the per-call `debug` line below is written or metrics count.
    let counted = crate::metrics::enabled();
    let started = (counted || tracing::enabled!(tracing::Level::DEBUG)).then(Instant::now);
    // Who calls, for the metrics' healed calls: made only when they count.
    let client = counted.then(|| ClientKey::of(&scope));
    // Tool search: `call_tool` goes on as a call of the tool it names, through every stage
    // below, the handoff gate first (a handoff domain's tool is not reached around it); a
    // search or a description is answered once the gate lets the call in.
    let named: String;
    let mut answered = None;
    let (tool, arguments) = if inner.tool_search {
        use super::tool_search::{self, Meta};
        match tool_search::answer(inner, tool, arguments.as_ref(), scope.principal()).await {
            Some(Meta::Answer(r)) => {
                answered = Some(r);
                (tool, arguments)
            }
            Some(Meta::Call(name, _))
                if [
                    tool_search::SEARCH_TOOL,
                    tool_search::DESCRIBE_TOOL,
                    tool_search::CALL_TOOL,
                ]
                .contains(&name.as_str()) =>
            {
                return ToolResponse::error(tool_search::no_nesting(&name));
            }
            Some(Meta::Call(name, args)) => {
                named = name;
                (named.as_str(), args)
            }
            None => (tool, arguments),
        }
    } else {
        (tool, arguments)
    };
    if let Some(slot) = &scope.handoff
        && let Some(answer) = gate(inner, tool, slot).await
    {
        return answer;
    }
    if let Some(answer) = answered {
        return answer;
    }
    if hidden(inner, tool) {
        return refused_as_unknown(inner, tool, client.as_ref(), started);
    }
    if !inner.sources.is_empty()
        && !inner.routes.contains_key(tool)
        && let Some(index) = inner.sources.iter().position(|s| s.owns(tool))
    {
        let response = sourced(inner, index, tool, arguments, scope).await;
        if counted {
            count(Some((tool, "")), &response, client.as_ref(), started);
        }
        return response;
    }
    let arguments = arguments.unwrap_or_default();
    let routed = {
        let _stage = tracing::info_span!(target: SPANS, "fusion.route").entered();
        route(inner, tool, arguments)
    };
    let (index, arguments) = match routed {
        Ok(routed) => routed,
        Err(e) => {
            // A name no tool has is the client's: only its start is logged.
            let tool = routing::loggable(tool);
            tracing::info!(tool, code = %e.code(), "call not routed");
            let response = ToolResponse::error(e);
            if counted {
                count(None, &response, client.as_ref(), started);
            }
            return response;
        }
    };
    let entry = &inner.entries[index];
    if hidden(inner, &entry.routed_tool) {
        // Another spelling of a disabled tool (`billing.get_invoice` in flat exposure).
        return refused_as_unknown(inner, tool, client.as_ref(), started);
    }
    let info = &entry.info;
    let response = match run_action(inner, entry, arguments, scope).await {
        Some(response) => response,
        None => {
            tracing::info!(tool, action = info.name, "call cancelled by the client");
            ToolResponse::error(cancelled(inner, &entry.callable))
        }
    };
    if counted {
        let called = (&*entry.routed_tool, info.name);
        count(Some(called), &response, client.as_ref(), started);
    }
    // Per call: `debug`, so a server logging at `info` writes nothing on the hot path.
    tracing::debug!(
        tool,
        action = info.name,
        is_error = response.is_error,
        elapsed_us = started.map_or(0, |s| s.elapsed().as_micros() as u64),
        "call"
    );
    response
}

/// Counts a call's end in [`metrics`](crate::metrics): `called` is the tool called and the
/// action it routed to (`""` for a mounted tool's), `None` for a name no tool has.
fn count(
    called: Option<(&str, &str)>,
    response: &ToolResponse,
    client: Option<&ClientKey>,
    started: Option<Instant>,
) {
    let outcome = crate::metrics::outcome_of(response.is_error, response.texts().next());
    let client = client.map_or("", |c| c.0.as_str());
    let elapsed = started.map_or(Duration::ZERO, |s| s.elapsed());
    crate::metrics::call(called, &outcome, client, elapsed);
}

/// A 2025 session's handoff, before routing: the return tool, and
/// `HANDOFF_NAMESPACE_MISMATCH` for a tool outside the active domain. `None`: route as usual.
async fn gate(inner: &Inner, tool: &str, slot: &HandoffSlot) -> Option<ToolResponse> {
    if slot.is_stateless() {
        // 2026-07-28: the domain's tools check the handle they are called with.
        return None;
    }
    let Some(active) = slot.get() else {
        inner
            .sources
            .iter()
            .find(|s| s.handoff_domain().is_some() && s.owns(tool))?;
        return Some(ToolResponse::error(source::namespace_mismatch(
            tool,
            &inner.name,
            &inner.tool_names,
            false,
        )));
    };
    let domain = inner
        .sources
        .iter()
        .find(|s| s.handoff_domain() == Some(active.domain.as_str()));
    if tool == source::RETURN_TOOL {
        slot.set(None);
        return Some(ToolResponse::text(format!(
            "Returned from {} to {}: {}'s own tools are listed again.",
            active.domain, inner.name, inner.name
        )));
    }
    if domain.is_some_and(|s| s.owns(tool)) {
        return None;
    }
    let mut tools: Vec<String> = match domain {
        Some(s) => s.tools().await.into_iter().map(|t| t.name).collect(),
        None => Vec::new(),
    };
    tools.push(source::RETURN_TOOL.to_owned());
    Some(ToolResponse::error(source::namespace_mismatch(
        tool,
        &active.domain,
        &tools,
        true,
    )))
}

/// A call of a tool a [`ToolSource`](source::ToolSource) owns (a mounted upstream's): the
/// stages of an action call that need no input type — the scopes set for the tool by name,
/// its guards (rate limit, concurrency, timeout), the middleware chain (with a
/// [`CallContext::mount`] context and the arguments as sent) — around the source, which
/// admits, forwards and answers it under its own bounds; then, with self-healing, the
/// tool's `<contract_awareness>`. Raced against the client's cancellation.
async fn sourced(
    inner: &Inner,
    index: usize,
    tool: &str,
    arguments: Option<JsonObject>,
    scope: RequestScope,
) -> ToolResponse {
    let source = &inner.sources[index];
    if scope.is_cancelled() {
        return ToolResponse::error(cancelled(inner, tool));
    }
    if let Some(scopes) = inner.mounted_scopes.get(tool)
        && let Err(e) = crate::auth::check_scopes(tool, scopes, scope.principal())
    {
        tracing::info!(tool, code = %e.code(), "mounted call refused: scopes");
        return ToolResponse::error(e);
    }
    let guards = inner.mounted_guards.get(tool);
    let _admission = match guards.filter(|g| !g.admits_all()) {
        None => None,
        Some(g) => {
            let admitted = match scope.cancellation() {
                Some(token) => unless_cancelled(token, g.admit(&scope)).await,
                None => Some(g.admit(&scope).await),
            };
            match admitted {
                None => return ToolResponse::error(cancelled(inner, tool)),
                Some(Ok(a)) => Some(a),
                Some(Err(e)) => {
                    tracing::info!(tool, code = %e.code(), "call refused by a guard");
                    return ToolResponse::error(e);
                }
            }
        }
    };
    let timeout = guards.and_then(|g| g.timeout);
    let internal = inner.internal;
    let cx = CallContext::forwarded(source.name(), Arc::from(tool), inner.states.clone(), scope);
    let answered = if inner.middleware.is_empty() {
        let run = source.call(tool, arguments, cx.scope().clone());
        finish(tool, timeout, internal, &cx, run, |r| r).await
    } else {
        let sent = arguments.is_some();
        let source = Arc::clone(source);
        let endpoint = Box::new(
            move |req: CallRequest| -> BoxFuture<'static, ToolResponse> {
                let (cx, arguments) = req.into_parts();
                let arguments = Arc::try_unwrap(arguments).unwrap_or_else(|a| (*a).clone());
                let arguments = (sent || !arguments.is_empty()).then_some(arguments);
                source.call(cx.tool(), arguments, cx.scope().clone())
            },
        );
        let next = Next::new(
            inner.middleware.clone(),
            internal,
            Arc::clone(&inner.names),
            endpoint,
        );
        let request = CallRequest::new(cx.clone(), Arc::new(arguments.unwrap_or_default()));
        finish(tool, timeout, internal, &cx, next.run(request), |r| r).await
    };
    let Some(response) = answered else {
        tracing::info!(tool, "call cancelled by the client");
        return ToolResponse::error(cancelled(inner, tool));
    };
    match &inner.source_awareness {
        Some(healing) if response.is_error => {
            let sections = healing.of(index, source.as_ref()).await;
            match sections.section_for(tool) {
                Some(section) => source::with_awareness(response, section),
                None => response,
            }
        }
        _ => response,
    }
}

/// Whether the tool `tool` is disabled now (see [`Visibility`](super::Visibility)).
fn hidden(inner: &Inner, tool: &str) -> bool {
    let v = &inner.visibility;
    !v.all_enabled() && !v.is_enabled(super::Item::Tool, tool)
}

/// How `tool` runs as a task, read on the action it leads to as a call would route it (the
/// flat `billing_reconcile` or the dotted `billing.reconcile`): `Forbidden` for a disabled
/// tool, a name that leads nowhere, or an action that runs no task. A grouped tool is read
/// by its tool name (its member is picked from the arguments).
pub(super) fn task_support(inner: &Inner, tool: &str) -> crate::TaskSupport {
    use crate::TaskSupport::Forbidden;
    if inner.tasked.is_empty() || hidden(inner, tool) {
        return Forbidden;
    }
    let index = match inner.routes.get(tool) {
        Some(Route::Action(i)) => Some(*i),
        Some(Route::Group(_)) => return inner.tasked.get(tool).copied().unwrap_or(Forbidden),
        None => action_named(inner, tool),
    };
    match index.map(|i| &inner.entries[i]) {
        Some(entry) if !hidden(inner, &entry.routed_tool) => entry.info.task,
        _ => Forbidden,
    }
}

/// Whether a call of `tool` reaches something: an enabled tool, an action's other spelling
/// of one, or a mounted tool; `false` for what a call answers `UNKNOWN_ACTION`.
#[cfg_attr(
    not(any(feature = "server-http", feature = "server-stdio")),
    allow(dead_code, reason = "the 2025-11-25 task path's")
)]
pub(super) fn leads_somewhere(inner: &Inner, tool: &str) -> bool {
    if hidden(inner, tool) {
        return false;
    }
    if inner.routes.contains_key(tool) {
        return true;
    }
    if let Some(i) = action_named(inner, tool) {
        return !hidden(inner, &inner.entries[i].routed_tool);
    }
    inner.sources.iter().any(|s| s.owns(tool))
}

/// The action `tool` names by its own name or its callable spelling (not a tool name).
fn action_named(inner: &Inner, tool: &str) -> Option<usize> {
    inner.names.action_of(tool).and_then(|c| {
        inner
            .entries
            .iter()
            .position(|e| e.info.name == tool || *e.callable == **c)
    })
}

/// Stage 1: the action a tool name (and a grouped tool's discriminator) leads to.
fn route(
    inner: &Inner,
    tool: &str,
    mut arguments: JsonObject,
) -> Result<(usize, JsonObject), ToolError> {
    match inner.routes.get(tool) {
        Some(Route::Action(i)) => Ok((*i, arguments)),
        Some(Route::Group(g)) => {
            let group = &inner.groups[*g];
            let i = routing::pick_member(group, &inner.discriminator, &mut arguments, |i| {
                &inner.entries[i].info
            })?;
            Ok((i, arguments))
        }
        None => match action_named(inner, tool) {
            // An action's own name (`billing.list_invoices` in flat exposure), or a grouped
            // action's `tool.action` spelling: the action it names, without a discriminator.
            Some(i) => {
                if let Some(d) = &inner.entries[i].discriminator
                    && arguments.get(&inner.discriminator).and_then(Value::as_str) == Some(d)
                {
                    arguments.remove(&inner.discriminator);
                }
                Ok((i, arguments))
            }
            None => Err(routing::unknown_tool(tool, &inner.known_tool_names())),
        },
    }
}

/// Stage 2, the guard slot: admits the call — the returned [`Admission`] holds its slots until
/// dropped — or answers for it (`RATE_LIMITED`, `SERVER_BUSY`).
async fn admit(
    guards: &ActionGuards,
    info: &ActionInfo,
    scope: &RequestScope,
) -> Result<Admission, ToolError> {
    guards.admit(scope).await.inspect_err(|e| {
        tracing::info!(action = info.name, code = %e.code(), "call refused by a guard");
    })
}

/// `fut`'s output, or `None` once `token` is cancelled (`fut` is then dropped where it
/// waits). Cancellation wins a tie, as in a biased `select!`; the caller checks the token
/// before the first poll. The token's waiter is registered only when `fut` has to wait, so
/// a call that completes in one poll never touches it.
async fn unless_cancelled<F: Future>(token: &CancellationToken, fut: F) -> Option<F::Output> {
    let mut fut = pin!(fut);
    let mut waiter = pin!(None::<WaitForCancellationFuture<'_>>);
    poll_fn(move |cx| {
        if let Some(w) = waiter.as_mut().as_pin_mut()
            && w.poll(cx).is_ready()
        {
            return Poll::Ready(None);
        }
        if let Poll::Ready(out) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if waiter.is_none() {
            waiter.set(Some(token.cancelled()));
            if let Some(w) = waiter.as_mut().as_pin_mut()
                && w.poll(cx).is_ready()
            {
                return Poll::Ready(None);
            }
        }
        Poll::Pending
    })
    .await
}

/// Stages 2–5 for a routed call; `None` when the client cancelled it.
async fn run_action(
    inner: &Inner,
    entry: &ActionDescriptor,
    arguments: JsonObject,
    scope: RequestScope,
) -> Option<ToolResponse> {
    let info = &entry.info;
    let callable = &*entry.callable;
    let guards = &*entry.guards;
    if scope.is_cancelled() {
        return None;
    }
    let scopes = &info.scopes;
    if !scopes.is_empty()
        && let Err(e) = crate::auth::check_scopes(callable, scopes, scope.principal())
    {
        tracing::info!(action = info.name, code = %e.code(), "call refused: scopes");
        return Some(ToolResponse::error(e));
    }
    let _admission = if guards.admits_all() {
        None
    } else {
        let stage = tracing::info_span!(target: SPANS, "fusion.admit");
        let admitted = match scope.cancellation() {
            Some(token) => {
                unless_cancelled(token, admit(guards, info, &scope).instrument(stage)).await?
            }
            None => admit(guards, info, &scope).instrument(stage).await,
        };
        match admitted {
            Ok(a) => Some(a),
            Err(e) => return Some(ToolResponse::error(e)),
        }
    };
    let internal = inner.internal;
    let cx = CallContext::new(
        info.name,
        entry.routed_tool.clone(),
        inner.states.clone(),
        scope,
    );
    // Validated from a reference, then moved on to middleware: the arguments are never copied.
    let arguments = Value::Object(arguments);
    let chained = !inner.middleware.is_empty();
    let started = {
        let _stage = tracing::info_span!(target: SPANS, "fusion.validate").entered();
        entry.handler.start(&arguments, &cx, chained)
    };
    match started {
        Started::Running(handler) => {
            let handler = handler.instrument(tracing::info_span!(target: SPANS, "fusion.handler"));
            let fields = deprecated_fields_sent(info, &entry.callable, &inner.names, &arguments);
            drop(arguments);
            let names = &*inner.names;
            let limit = info.limits.max_result_bytes;
            let done = move |outcome| {
                respond(
                    info,
                    &entry.callable,
                    names,
                    outcome,
                    internal,
                    fields,
                    limit,
                )
            };
            let timeout = guards.timeout.filter(|_| !cx.scope().as_task);
            finish(callable, timeout, internal, &cx, handler, done).await
        }
        Started::Chained(invocation) => {
            let fields = deprecated_fields_sent(info, &entry.callable, &inner.names, &arguments);
            let handler = Arc::clone(&entry.handler);
            let (names, callable) = (Arc::clone(&inner.names), Arc::clone(&entry.callable));
            let limit = info.limits.max_result_bytes;
            let endpoint = Box::new(
                move |req: CallRequest| -> BoxFuture<'static, ToolResponse> {
                    let fut = invocation(req.context())
                        .instrument(tracing::info_span!(target: SPANS, "fusion.handler"));
                    let (names, callable) = (Arc::clone(&names), Arc::clone(&callable));
                    Box::pin(async move {
                        let info = handler.info();
                        let out = fut.await;
                        respond(info, &callable, &names, out, internal, fields, limit)
                    })
                },
            );
            let next = Next::new(
                inner.middleware.clone(),
                internal,
                Arc::clone(&inner.names),
                endpoint,
            );
            let arguments = match arguments {
                Value::Object(map) => map,
                _ => JsonObject::new(),
            };
            let request = CallRequest::new(cx.clone(), Arc::new(arguments));
            let run = next
                .run(request)
                .instrument(tracing::info_span!(target: SPANS, "fusion.middleware"));
            let timeout = guards.timeout.filter(|_| !cx.scope().as_task);
            finish(&entry.callable, timeout, internal, &cx, run, |r| r).await
        }
        Started::Invalid(report) => {
            let report = match &entry.discriminator {
                Some(_) => report.accepting_at_root(&inner.discriminator),
                None => report,
            };
            let _stage = tracing::info_span!(target: SPANS, "fusion.respond").entered();
            Some(invalid(inner, entry, &report))
        }
        Started::ValidationPanicked => {
            tracing::error!(action = info.name, "input validation panicked");
            Some(ToolResponse::error(internal.panic_envelope(callable)))
        }
        Started::HandlerPanicked => Some(handler_panicked(callable, internal)),
    }
}

/// Stage 4's end: `run` (the handler, or the middleware chain) polled with its panics
/// caught, under the action's timeout, raced against the client's cancellation (`None`);
/// `done` makes its output the response (its panics are caught too). One poll function
/// rather than nested futures (timeout, `catch_unwind`, cancellation): the call's future,
/// moved into the task rmcp spawns, stays small. Cancellation wins a tie, then the output,
/// then the timeout; the token's waiter is registered only when `run` has to wait.
async fn finish<F, T>(
    name: &str,
    timeout: Option<Duration>,
    internal: InternalErrors,
    cx: &CallContext,
    run: F,
    done: impl FnOnce(T) -> ToolResponse,
) -> Option<ToolResponse>
where
    F: Future<Output = T>,
{
    let mut run = pin!(run);
    let mut done = Some(done);
    let mut deadline = pin!(timeout.map(tokio::time::sleep));
    let mut waiter = pin!(None::<WaitForCancellationFuture<'_>>);
    poll_fn(move |task| {
        if let Some(w) = waiter.as_mut().as_pin_mut()
            && w.poll(task).is_ready()
        {
            return Poll::Ready(None);
        }
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            run.as_mut()
                .poll(task)
                .map(|out| done.take().map(|done| done(out)))
        }));
        match polled {
            Ok(Poll::Ready(Some(response))) => return Poll::Ready(Some(response)),
            // (`None` would mean `run` was polled after its end, which this never does.)
            Ok(Poll::Ready(None)) | Err(_) => {
                return Poll::Ready(Some(handler_panicked(name, internal)));
            }
            Ok(Poll::Pending) => {}
        }
        if let (Some(sleep), Some(limit)) = (deadline.as_mut().as_pin_mut(), timeout)
            && sleep.poll(task).is_ready()
        {
            tracing::warn!(action = name, ?limit, "call timed out");
            return Poll::Ready(Some(ToolResponse::error(guard::timeout_error(name, limit))));
        }
        // A call nobody can cancel has no token, unless its handler asked for one (and may
        // cancel it itself): looked for again each time it waits.
        if waiter.is_none()
            && let Some(token) = cx.watched_token()
        {
            waiter.set(Some(token.cancelled()));
            if let Some(w) = waiter.as_mut().as_pin_mut()
                && w.poll(task).is_ready()
            {
                return Poll::Ready(None);
            }
        }
        Poll::Pending
    })
    .await
}

/// The answer for a cancelled call: the client's, or (once the server stops its calls) the
/// server's (see [`limits::cancelled`]).
fn cancelled(inner: &Inner, tool: &str) -> ToolError {
    limits::cancelled(
        tool,
        inner.stopping.load(std::sync::atomic::Ordering::Relaxed),
    )
}
