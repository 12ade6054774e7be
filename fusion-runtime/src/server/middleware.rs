//! Middleware: an ordered chain around handlers (auth, logging, …).
//!
//! Each middleware gets the call and the rest of the chain. It can pass the call on
//! ([`Next::run`]), answer itself — `Err(ToolError)` goes to the model intact
//! (`UNAUTHORIZED`, `FORBIDDEN`, …) — or fail with any other error, which becomes
//! `INTERNAL_ERROR`: the same rule as handlers.

use std::error::Error;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::failure::InternalErrors;
use super::names::{Names, for_the_wire};
use crate::action::{HandlerFailure, failure_from};
use crate::context::CallContext;
use crate::envelope::ToolResponse;
use crate::input::JsonObject;

/// A call as middleware sees it: the call's context and its arguments, already validated.
#[derive(Clone, Debug)]
pub struct CallRequest {
    cx: CallContext,
    arguments: Arc<JsonObject>,
}

impl CallRequest {
    pub(crate) fn new(cx: CallContext, arguments: Arc<JsonObject>) -> Self {
        CallRequest { cx, arguments }
    }

    /// The context and the arguments, taken apart.
    pub(crate) fn into_parts(self) -> (CallContext, Arc<JsonObject>) {
        (self.cx, self.arguments)
    }

    /// The call's context: action, tool, states, request scope.
    pub fn context(&self) -> &CallContext {
        &self.cx
    }

    /// The action's name (`billing.get_invoice`); for a mounted upstream's tool, the mount's
    /// name (see [`CallContext::mount`]).
    pub fn action(&self) -> &'static str {
        self.cx.action()
    }

    /// The arguments as sent (without a grouped tool's discriminator); they passed validation.
    /// For a call of a mounted upstream's tool ([`CallContext::mount`]) they are as the
    /// client sent them, unvalidated: the upstream validates them.
    pub fn arguments(&self) -> &JsonObject {
        &self.arguments
    }
}

/// One link of the middleware chain.
pub trait Middleware: Send + Sync + 'static {
    /// Handles the call: pass it on with `next.run(req).await`, or answer without doing so.
    fn handle(
        &self,
        req: CallRequest,
        next: Next,
    ) -> BoxFuture<'static, Result<ToolResponse, HandlerFailure>>;
}

/// A middleware written as an async closure: see [`middleware_fn`].
pub struct FnMiddleware<F>(F);

/// Makes a middleware of an async closure
/// `Fn(CallRequest, Next) -> impl Future<Output = Result<ToolResponse, E>>`, where `E` is a
/// `ToolError` (sent intact) or any error (becomes `INTERNAL_ERROR`).
///
/// ```
/// use fusion_runtime::{error, codes::UNAUTHORIZED, ToolError};
/// use fusion_runtime::server::{middleware_fn, CallRequest, Next};
///
/// let auth = middleware_fn(|req: CallRequest, next: Next| async move {
///     if req.action().starts_with("admin.") {
///         return Err(error(UNAUTHORIZED, "Admin actions need an operator token"));
///     }
///     Ok::<_, ToolError>(next.run(req).await)
/// });
/// # let _ = auth;
/// ```
pub fn middleware_fn<F, Fut, E>(f: F) -> FnMiddleware<F>
where
    F: Fn(CallRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolResponse, E>> + Send + 'static,
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    FnMiddleware(f)
}

impl<F, Fut, E> Middleware for FnMiddleware<F>
where
    F: Fn(CallRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolResponse, E>> + Send + 'static,
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    fn handle(
        &self,
        req: CallRequest,
        next: Next,
    ) -> BoxFuture<'static, Result<ToolResponse, HandlerFailure>> {
        let fut = (self.0)(req, next);
        Box::pin(async move { fut.await.map_err(failure_from) })
    }
}

pub(crate) type Endpoint = Box<dyn FnOnce(CallRequest) -> BoxFuture<'static, ToolResponse> + Send>;

/// The rest of the chain: the following middleware, then the handler.
pub struct Next {
    chain: Arc<[Arc<dyn Middleware>]>,
    index: usize,
    internal: InternalErrors,
    /// The server's names: a middleware's envelope names actions as clients call them.
    names: Arc<Names>,
    endpoint: Endpoint,
}

impl Next {
    pub(crate) fn new(
        chain: Arc<[Arc<dyn Middleware>]>,
        internal: InternalErrors,
        names: Arc<Names>,
        endpoint: Endpoint,
    ) -> Self {
        Next {
            chain,
            index: 0,
            internal,
            names,
            endpoint,
        }
    }

    /// Runs the rest of the chain and the handler; the answer is what goes to the model
    /// (success, or an envelope already written). A middleware's own envelope reaches the
    /// wire as a handler's does: its available actions, and the action its failure names,
    /// spelled as clients call them.
    pub async fn run(self, req: CallRequest) -> ToolResponse {
        let Next {
            chain,
            index,
            internal,
            names,
            endpoint,
        } = self;
        match chain.get(index).cloned() {
            Some(m) => {
                let action = req.action();
                // A mounted call's failure names the tool called, not only its mount.
                let tool = req.cx.mount().map(|_| Arc::<str>::from(req.cx.tool()));
                let next = Next {
                    chain,
                    index: index + 1,
                    internal,
                    names: Arc::clone(&names),
                    endpoint,
                };
                match m.handle(req, next).await {
                    Ok(r) => r,
                    Err(f) => {
                        let named = tool.as_deref().unwrap_or_else(|| names.spelled(action));
                        let e = internal.into_envelope(named, f);
                        ToolResponse::error(for_the_wire(&names, e))
                    }
                }
            }
            None => endpoint(req).await,
        }
    }
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("remaining", &(self.chain.len().saturating_sub(self.index)))
            .finish()
    }
}
