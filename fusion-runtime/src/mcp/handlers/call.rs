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
        let elicitor = std::sync::Arc::new(elicit::ModernElicitor::new(answers, &context));
        if !self.server.tool_sources().is_empty() {
            scope.handoff = Some(std::sync::Arc::new(crate::context::HandoffSlot::stateless()));
        }
        scope.elicitor = Some(std::sync::Arc::new(elicitor.clone()));
        scope.meta = scope::take_meta(&mut context);
        let call = std::pin::pin!(self.server.call(&request.name, request.arguments, scope));
        #[cfg(feature = "server-http")]
        let call = crate::mcp::facts::watched(&context, self.principal.as_deref(), call);
        let response = tokio::select! {
            response = call => response,
            () = elicitor.input_needed() => {
                let binding = binding.unwrap_or_else(|| bind(kept.as_ref()));
                let (requests, state) = elicitor
                    .input_required(&binding)
                    .map_err(|e| ErrorData::internal_error(e, None))?;
                let result = InputRequiredResult::new(Some(requests), Some(state));
                return Ok(stamp_input(&era, result, &self.server).into());
            }
        };
        let mut result = to_call_tool_result(response);
        era.stamp(&mut result.meta, &self.server);
        Ok(result.into())
    }
}

#[cfg(feature = "server-http")]
impl McpHandler {
    /// A 2025 `tools/call` over HTTP that the HTTP side read itself and answers without rmcp
    /// (`http::stateless_call`): [`answer_call`](McpHandler::answer_call)'s legacy branch for
    /// a call without `_meta` on a server that hands nothing off, with the request's `parts`,
    /// JSON-RPC `id` and `cancellation` in place of rmcp's context, and its log messages sent
    /// to `notes`. A stateless request's, or a live session's (`session`: the session's log
    /// level; see [`live`](super::live)).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn answer_stateless_call(
        &self,
        name: &str,
        arguments: Option<crate::input::JsonObject>,
        parts: &axum::http::request::Parts,
        id: &rmcp::model::RequestId,
        cancellation: tokio_util::sync::CancellationToken,
        notes: tokio::sync::mpsc::Sender<rmcp::model::ServerJsonRpcMessage>,
        session: Option<crate::context::LogThreshold>,
    ) -> rmcp::model::CallToolResult {
        let in_session = session.is_some();
        let threshold = session.unwrap_or_else(|| self.log_threshold.clone());
        let mut scope =
            scope::stateless_call_scope(parts, cancellation.clone(), threshold, notes, in_session);
        if scope.principal.is_none() {
            scope.principal = self.principal.clone();
        }
        let call = std::pin::pin!(self.server.call(name, arguments, scope));
        let call = crate::mcp::facts::watched_request(
            Some(parts),
            id,
            &cancellation,
            self.principal.as_deref(),
            call,
        );
        let span = super::trace::stateless_call_span(parts);
        to_call_tool_result(tracing::Instrument::instrument(call, span).await)
    }
}
