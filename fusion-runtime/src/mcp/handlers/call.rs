//! `tools/call`, for either generation of the protocol.
//!
//! Reads: the request's parameters and its [`RequestContext`] (era, `_meta`, and over HTTP the
//! request's facts through [`scope`]); the session's principal and handoff.
//! Writes: the call's [`CallToolResponse`]; a 2026-07-28 call that asks the user ends with
//! `input_required`, one a task may run starts the task ([`tasks`]).

use rmcp::model::{CallToolRequestParams, CallToolResponse, InputRequiredResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::era::Era;
use super::mcp_handler::{McpHandler, stamp_input, to_call_tool_result};
use super::{elicit, request_state, scope, tasks};
use crate::envelope::ToolResponse;

impl McpHandler {
    /// A `tools/call`, for either generation of the protocol.
    pub(crate) async fn answer_call(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let era = Era::of(&context)?;
        let threshold = era.threshold(&self.log_threshold);
        if !era.is_modern() {
            // The elicitor is made when the handler first asks (`RequestSink::elicitor`).
            let mut scope = scope::legacy_call_scope(&context, threshold);
            if scope.principal.is_none() {
                scope.principal = self.principal.clone();
            }
            scope.meta = scope::take_meta(&mut context);
            let handing_off = !self.server.tool_sources().is_empty();
            let generation = self.handoff.generation();
            if handing_off {
                // Stateless HTTP keeps no session to hand off: the handle form, as 2026-07-28.
                scope.handoff = Some(match self.sessionless {
                    true => std::sync::Arc::new(crate::context::HandoffSlot::stateless()),
                    false => self.handoff.clone(),
                });
            }
            let call = std::pin::pin!(self.server.call(&request.name, request.arguments, scope));
            #[cfg(feature = "server-http")]
            let call = crate::mcp::facts::watched(&context, self.principal.as_deref(), call);
            let response = call.await;
            if handing_off && self.handoff.generation() != generation {
                // Handed off or back: this session's tools changed.
                let _ = context.peer.notify_tool_list_changed().await;
            }
            return Ok(to_call_tool_result(response).into());
        }
        // 2026-07-28: the handler may end the call with `input_required` (MRTR).
        let mut scope = scope::request_scope_in_session(&context, threshold);
        if scope.principal.is_none() {
            scope.principal = self.principal.clone();
        }
        let support = self.server.task_support(&request.name);
        if support.allows_task() && request.request_state.is_none() {
            if tasks::declared(&context) {
                let can = tasks::Can::of(&context);
                scope.meta = scope::take_meta(&mut context);
                return tasks::start(&self.server, &era, request, scope, can).await;
            }
            if support == crate::TaskSupport::Required {
                return Err(tasks::required_error());
            }
        }
        let owner = crate::context::ClientKey::of(&scope);
        let bind = |arguments: Option<&crate::input::JsonObject>| {
            request_state::Binding::of(&request.name, arguments, &owner.0)
                .signed_with(self.server.request_state_key())
        };
        // A retry's state is checked against its binding now. A first round needs one only if
        // the handler asks (rare): its arguments are kept for that, not hashed on every call.
        let binding = request
            .request_state
            .is_some()
            .then(|| bind(request.arguments.as_ref()));
        let kept = match binding {
            Some(_) => None,
            None => request.arguments.clone(),
        };
        let answers = match &binding {
            None => Ok(Default::default()),
            Some(binding) => {
                request_state::answers(
                    request.request_state.as_deref(),
                    request.input_responses.as_ref(),
                    binding,
                    self.server.once_store().as_ref(),
                )
                .await
            }
        };
        let answers = match answers {
            Ok(answers) => answers,
            Err(request_state::Refused::Invalid(e)) => return Err(e),
            Err(request_state::Refused::Unchecked(why)) => {
                let refusal = crate::envelope::error(crate::envelope::ErrorCode::ServerBusy, why)
                    .recovery("Wait for the time below, then send the same request again.")
                    .detail("oneTimeStore", "unreachable")
                    .retry_after(crate::guard::STORE_RETRY_AFTER);
                let mut result = to_call_tool_result(ToolResponse::from(refusal));
                era.stamp(&mut result.meta, &self.server);
                return Ok(result.into());
            }
        };
        let elicitor = std::sync::Arc::new(elicit::ModernElicitor::new(
            answers,
            context.client_capabilities().as_ref(),
        ));
        if !self.server.tool_sources().is_empty() {
            scope.handoff = Some(std::sync::Arc::new(crate::context::HandoffSlot::stateless()));
        }
        scope.elicitor = Some(std::sync::Arc::new(elicitor.clone()));
        scope.meta = scope::take_meta(&mut context);
        let call = std::pin::pin!(self.server.call(&request.name, request.arguments, scope));
        #[cfg(feature = "server-http")]
        let call = crate::mcp::facts::watched(&context, self.principal.as_deref(), call);
        let binding = || binding.unwrap_or_else(|| bind(kept.as_ref()));
        self.modern_outcome(&era, call, &elicitor, binding).await
    }

    /// How a 2026-07-28 call ends, whoever read it (rmcp, or the HTTP room): `call` (the
    /// pipeline, with `elicitor` in its scope) answers, or the handler asks a question the
    /// request carries no answer to and the call ends with `input_required`, bound by `bind`.
    pub(crate) async fn modern_outcome(
        &self,
        era: &Era,
        call: impl Future<Output = ToolResponse>,
        elicitor: &elicit::ModernElicitor,
        bind: impl FnOnce() -> request_state::Binding,
    ) -> Result<CallToolResponse, ErrorData> {
        let response = tokio::select! {
            response = call => response,
            () = elicitor.input_needed() => {
                let binding = bind();
                let (requests, state) = elicitor
                    .input_required(&binding)
                    .map_err(|e| ErrorData::internal_error(e, None))?;
                let result = InputRequiredResult::new(Some(requests), Some(state));
                return Ok(stamp_input(era, result, &self.server).into());
            }
        };
        let mut result = to_call_tool_result(response);
        era.stamp(&mut result.meta, &self.server);
        Ok(result.into())
    }
}

/// A `tools/call` the HTTP room read itself and answers without rmcp (`http::room`): what
/// rmcp's context would have told [`answer_call`](McpHandler::answer_call).
#[cfg(feature = "server-http")]
pub(crate) struct RoomCall<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<crate::input::JsonObject>,
    /// The arguments as sent, read again only when a 2026-07-28 handler asks a question (its
    /// `input_required` is bound to them).
    pub(crate) sent_arguments: Option<&'a [u8]>,
    pub(crate) parts: &'a axum::http::request::Parts,
    pub(crate) id: &'a rmcp::model::RequestId,
    pub(crate) cancellation: tokio_util::sync::CancellationToken,
    /// Where the call's log messages go (the room answers in SSE once one comes).
    pub(crate) notes: tokio::sync::mpsc::Sender<rmcp::model::ServerJsonRpcMessage>,
    pub(crate) kind: RoomCallKind,
}

/// Which call the room read.
#[cfg(feature = "server-http")]
pub(crate) enum RoomCallKind {
    /// A stateless 2025 call.
    Stateless,
    /// A live 2025 session's call, at the session's log level.
    Session(crate::context::LogThreshold),
    /// A 2026-07-28 call (stateless by nature): its `_meta`, which the room checked as rmcp
    /// does, and the log level it names.
    Modern {
        meta: rmcp::model::RequestMetaObject,
        threshold: crate::context::LogThreshold,
    },
}

#[cfg(feature = "server-http")]
impl McpHandler {
    /// [`answer_call`](McpHandler::answer_call) for a call the room read (`call`): a 2025
    /// call's legacy branch (a call without `_meta` on a server that hands nothing off), or a
    /// 2026-07-28 call's (no retry state, no task), with the request's `parts`, JSON-RPC `id`
    /// and `cancellation` in place of rmcp's context. The result as rmcp's handler shapes it
    /// for the request's version.
    pub(crate) async fn answer_room_call(
        &self,
        call: RoomCall<'_>,
    ) -> Result<rmcp::model::ServerResult, ErrorData> {
        let RoomCall {
            name,
            arguments,
            sent_arguments,
            parts,
            id,
            cancellation,
            notes,
            kind,
        } = call;
        let (threshold, in_session, modern) = match kind {
            RoomCallKind::Stateless => (self.log_threshold.clone(), false, None),
            RoomCallKind::Session(threshold) => (threshold, true, None),
            RoomCallKind::Modern { meta, threshold } => {
                (threshold.clone(), false, Some((meta, threshold)))
            }
        };
        let mut scope =
            scope::stateless_call_scope(parts, cancellation.clone(), threshold, notes, in_session);
        if scope.principal.is_none() {
            scope.principal = self.principal.clone();
        }
        let span = super::trace::room_call_span(parts, modern.as_ref().map(|(meta, _)| meta));
        // A 2026-07-28 call: its elicitor, which ends it with `input_required` when the
        // handler asks, and its `_meta` in the scope.
        let modern = modern.map(|(meta, threshold)| {
            let elicitor = std::sync::Arc::new(elicit::ModernElicitor::new(
                Default::default(),
                meta.client_capabilities().as_ref(),
            ));
            scope.elicitor = Some(std::sync::Arc::new(elicitor.clone()));
            let meta = meta.0.0;
            scope.meta = (!meta.is_empty()).then(|| std::sync::Arc::new(meta));
            (
                Era::Modern { threshold },
                elicitor,
                crate::context::ClientKey::of(&scope),
            )
        });
        let call = std::pin::pin!(self.server.call(name, arguments, scope));
        let call = crate::mcp::facts::watched_request(
            Some(parts),
            id,
            &cancellation,
            self.principal.as_deref(),
            call,
        );
        let Some((era, elicitor, owner)) = modern else {
            let result = tracing::Instrument::instrument(call, span).await;
            // As rmcp's handler answers a 2025 peer: no `resultType`, object output only.
            let mut result = rmcp::model::ServerResult::CallToolResult(to_call_tool_result(result));
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            return Ok(result);
        };
        let bind = || {
            let sent = sent_arguments.and_then(|a| serde_json::from_slice(a).ok());
            request_state::Binding::of(name, sent.as_ref(), &owner.0)
                .signed_with(self.server.request_state_key())
        };
        let outcome = self.modern_outcome(&era, call, &elicitor, bind);
        let response = tracing::Instrument::instrument(outcome, span).await?;
        // As rmcp's handler answers a 2026-07-28 peer.
        let mut result = rmcp::model::ServerResult::from(response);
        result.fill_missing_cache_hints();
        Ok(result)
    }
}
