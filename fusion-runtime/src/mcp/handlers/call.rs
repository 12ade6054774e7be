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

/// One `tools/call`, however it was read — by rmcp ([`answer_call`](McpHandler::answer_call))
/// or by the HTTP side ([`answer_room_call`](McpHandler::answer_room_call)) — made by either,
/// run by [`run`](McpHandler::run): its tool and arguments, the scope its handler sees, what
/// cancels it, and a 2026-07-28 call's way to end with `input_required`.
pub(crate) struct CallEnv<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<crate::input::JsonObject>,
    pub(crate) scope: crate::context::RequestScope,
    pub(crate) watch: Watch<'a>,
    /// A 2026-07-28 call's; `None` for a 2025 one.
    pub(crate) modern: Option<ModernCall<'a>>,
}

/// What cancels a call and where it is listed for cancellation: its HTTP request (none over
/// stdio), its JSON-RPC id, its token. Read over HTTP only: over stdio rmcp's own
/// cancellation ends the call.
#[cfg_attr(not(feature = "server-http"), allow(dead_code))]
pub(crate) struct Watch<'a> {
    #[cfg(feature = "server-http")]
    pub(crate) parts: Option<&'a axum::http::request::Parts>,
    pub(crate) id: &'a rmcp::model::RequestId,
    pub(crate) ct: &'a tokio_util::sync::CancellationToken,
}

impl<'a> Watch<'a> {
    /// What rmcp's context says of the request.
    pub(crate) fn of(context: &'a RequestContext<RoleServer>) -> Self {
        Watch {
            #[cfg(feature = "server-http")]
            parts: context.extensions.get::<axum::http::request::Parts>(),
            id: &context.id,
            ct: &context.ct,
        }
    }
}

/// A 2026-07-28 call's era, the elicitor in its scope, and what binds its `input_required`.
pub(crate) struct ModernCall<'a> {
    pub(crate) era: Era,
    pub(crate) elicitor: std::sync::Arc<elicit::ModernElicitor>,
    pub(crate) bind: Box<dyn FnOnce() -> request_state::Binding + Send + 'a>,
}

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
            let response = self
                .run(CallEnv {
                    name: &request.name,
                    arguments: request.arguments,
                    scope,
                    watch: Watch::of(&context),
                    modern: None,
                })
                .await;
            if handing_off && self.handoff.generation() != generation {
                // Handed off or back: this session's tools changed.
                let _ = context.peer.notify_tool_list_changed().await;
            }
            return response;
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
        let bind = move || binding.unwrap_or_else(|| bind(kept.as_ref()));
        self.run(CallEnv {
            name: &request.name,
            arguments: request.arguments,
            scope,
            watch: Watch::of(&context),
            modern: Some(ModernCall {
                era,
                elicitor,
                bind: Box::new(bind),
            }),
        })
        .await
    }

    /// A `tools/call`, however it was read (by rmcp, or by the HTTP side), run: the
    /// pipeline in its scope, listed for cancellation once it has to wait (over HTTP), and a
    /// 2026-07-28 call's end (`input_required` when the handler asks).
    pub(crate) async fn run(&self, env: CallEnv<'_>) -> Result<CallToolResponse, ErrorData> {
        let CallEnv {
            name,
            arguments,
            scope,
            watch,
            modern,
        } = env;
        let call = std::pin::pin!(self.server.call(name, arguments, scope));
        #[cfg(feature = "server-http")]
        let call = crate::mcp::facts::watched_request(
            watch.parts,
            watch.id,
            watch.ct,
            self.principal.as_deref(),
            call,
        );
        #[cfg(not(feature = "server-http"))]
        let _ = watch;
        match modern {
            None => Ok(to_call_tool_result(call.await).into()),
            Some(ModernCall {
                era,
                elicitor,
                bind,
            }) => self.modern_outcome(&era, call, &elicitor, bind).await,
        }
    }

    /// How a 2026-07-28 call ends, whoever read it (rmcp, or the HTTP side): `call` (the
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

/// A `tools/call` the HTTP side read itself and answers without rmcp (`http::room`): what
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
        let span = super::trace::call_span(modern.as_ref().map(|(meta, _)| &meta.0.0), |key| {
            parts.headers.get(key).and_then(|v| v.to_str().ok())
        });
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
            let owner = crate::context::ClientKey::of(&scope);
            let bind = move || {
                let sent = sent_arguments.and_then(|a| serde_json::from_slice(a).ok());
                request_state::Binding::of(name, sent.as_ref(), &owner.0)
                    .signed_with(self.server.request_state_key())
            };
            ModernCall {
                era: Era::Modern { threshold },
                elicitor,
                bind: Box::new(bind),
            }
        });
        let is_modern = modern.is_some();
        let env = CallEnv {
            name,
            arguments,
            scope,
            watch: Watch {
                parts: Some(parts),
                id,
                ct: &cancellation,
            },
            modern,
        };
        let response = tracing::Instrument::instrument(self.run(env), span).await?;
        let mut result = rmcp::model::ServerResult::from(response);
        match is_modern {
            // As rmcp's handler answers a 2026-07-28 peer.
            true => result.fill_missing_cache_hints(),
            // As rmcp's handler answers a 2025 peer: no `resultType`, object output only.
            false => {
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
            }
        }
        Ok(result)
    }
}
