//! What the server shows besides calling tools: middleware on the other methods
//! ([`MethodMiddleware`]), the page size of the lists, and icons.
//!
//! Method middleware wraps `tools/list`, `prompts/list`, `prompts/get`, `resources/list`,
//! `resources/templates/list`, `resources/read` and `completion/complete` — every method
//! whose answer the server computes, except `tools/call`, which the tool
//! [`Middleware`](super::Middleware) chain wraps. It follows the same return-or-throw rule:
//! pass the request on ([`MethodNext::run`]), or refuse it with `Err(ToolError)` (sent
//! intact) or any other error (`INTERNAL_ERROR`). A refusal becomes the method's own error:
//! for `prompts/get` and `resources/read`, whose answers are content for the model, a
//! JSON-RPC error whose message is the `<tool_error>` envelope; for the lists and
//! completions, a JSON-RPC error whose message is plain text (the code, the message, the
//! recovery). Either way `data` carries the code.

use std::any::Any;
use std::collections::HashMap;
use std::error::Error;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::failure::InternalErrors;
use crate::action::{HandlerFailure, IconTheme, StaticIcon, failure_from};
use crate::auth::Principal;
use crate::context::RequestScope;
use crate::envelope::ToolError;

/// The largest page size [`ServerBuilder::page_size`](super::ServerBuilder::page_size) accepts.
pub const MAX_PAGE_SIZE: usize = 1000;

/// A method a [`MethodMiddleware`] wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `tools/list`.
    ListTools,
    /// `prompts/list`.
    ListPrompts,
    /// `prompts/get`.
    GetPrompt,
    /// `resources/list`.
    ListResources,
    /// `resources/templates/list`.
    ListResourceTemplates,
    /// `resources/read`.
    ReadResource,
    /// `completion/complete`.
    Complete,
}

impl Method {
    /// The JSON-RPC method name (`resources/read`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Method::ListTools => "tools/list",
            Method::ListPrompts => "prompts/list",
            Method::GetPrompt => "prompts/get",
            Method::ListResources => "resources/list",
            Method::ListResourceTemplates => "resources/templates/list",
            Method::ReadResource => "resources/read",
            Method::Complete => "completion/complete",
        }
    }

    /// Whether the method's answer is content for the model (`prompts/get`,
    /// `resources/read`): a refusal is then sent as a `<tool_error>` envelope.
    pub fn has_content(&self) -> bool {
        matches!(self, Method::GetPrompt | Method::ReadResource)
    }

    /// Whether the method is one of the lists.
    pub fn is_list(&self) -> bool {
        matches!(
            self,
            Method::ListTools
                | Method::ListPrompts
                | Method::ListResources
                | Method::ListResourceTemplates
        )
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request as method middleware sees it: the method, what it names, who is calling.
#[derive(Clone, Debug)]
pub struct MethodRequest {
    pub(crate) method: Method,
    target: Option<String>,
    scope: RequestScope,
}

impl MethodRequest {
    /// A request of `method` naming `target` (see [`MethodRequest::target`]).
    pub fn new(method: Method, target: Option<String>, scope: RequestScope) -> Self {
        MethodRequest {
            method,
            target,
            scope,
        }
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// What the request names: the prompt for `prompts/get`, the URI for `resources/read`,
    /// the prompt name or URI template a completion is for; `None` for the lists.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// Who is calling, when authenticated.
    pub fn principal(&self) -> Option<&Principal> {
        self.scope.principal()
    }

    /// The request's scope: client, principal, `_meta`, cancellation.
    pub fn scope(&self) -> &RequestScope {
        &self.scope
    }
}

/// What the rest of the chain answered: the method's result, or the refusal of a
/// middleware further in. Opaque: pass it on, or look at [`MethodAnswer::refusal`].
pub struct MethodAnswer(pub(crate) Answer);

pub(crate) enum Answer {
    Done(Box<dyn Any + Send>),
    Refused(ToolError),
}

impl MethodAnswer {
    /// The error a middleware further in refused the request with, if one did.
    pub fn refusal(&self) -> Option<&ToolError> {
        match &self.0 {
            Answer::Done(_) => None,
            Answer::Refused(e) => Some(e),
        }
    }
}

impl std::fmt::Debug for MethodAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Answer::Done(_) => f.write_str("MethodAnswer(done)"),
            Answer::Refused(e) => f.debug_tuple("MethodAnswer").field(e).finish(),
        }
    }
}

/// One link of the method middleware chain (see the [module](self) docs).
pub trait MethodMiddleware: Send + Sync + 'static {
    /// Handles the request: pass it on with `next.run(req).await`, or refuse it.
    fn handle(
        &self,
        req: MethodRequest,
        next: MethodNext,
    ) -> BoxFuture<'static, Result<MethodAnswer, HandlerFailure>>;
}

/// A method middleware written as an async closure: see [`method_middleware_fn`].
pub struct FnMethodMiddleware<F>(F);

/// Makes a method middleware of an async closure
/// `Fn(MethodRequest, MethodNext) -> impl Future<Output = Result<MethodAnswer, E>>`, where `E`
/// is a `ToolError` (sent intact) or any error (becomes `INTERNAL_ERROR`).
///
/// ```
/// use fusion_runtime::{codes::FORBIDDEN, error, ToolError};
/// use fusion_runtime::server::{Method, MethodNext, MethodRequest, method_middleware_fn};
///
/// // Only operators read the `internal://` resources.
/// let guard = method_middleware_fn(|req: MethodRequest, next: MethodNext| async move {
///     let internal = req.method() == Method::ReadResource
///         && req.target().is_some_and(|uri| uri.starts_with("internal://"));
///     if internal && !req.principal().is_some_and(|p| p.has_scope("ops")) {
///         return Err(error(FORBIDDEN, "Internal resources need the `ops` scope")
///             .recovery("Read the public resources listed by resources/list instead"));
///     }
///     Ok::<_, ToolError>(next.run(req).await)
/// });
/// # let _ = guard;
/// ```
pub fn method_middleware_fn<F, Fut, E>(f: F) -> FnMethodMiddleware<F>
where
    F: Fn(MethodRequest, MethodNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<MethodAnswer, E>> + Send + 'static,
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    FnMethodMiddleware(f)
}

impl<F, Fut, E> MethodMiddleware for FnMethodMiddleware<F>
where
    F: Fn(MethodRequest, MethodNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<MethodAnswer, E>> + Send + 'static,
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    fn handle(
        &self,
        req: MethodRequest,
        next: MethodNext,
    ) -> BoxFuture<'static, Result<MethodAnswer, HandlerFailure>> {
        let fut = (self.0)(req, next);
        Box::pin(async move { fut.await.map_err(failure_from) })
    }
}

type MethodEndpoint = Box<dyn FnOnce(MethodRequest) -> BoxFuture<'static, MethodAnswer> + Send>;

/// The rest of the method chain: the following middleware, then the method itself.
pub struct MethodNext {
    pub(crate) chain: Arc<[Arc<dyn MethodMiddleware>]>,
    pub(crate) index: usize,
    pub(crate) internal: InternalErrors,
    pub(crate) endpoint: MethodEndpoint,
}

impl MethodNext {
    /// Runs the rest of the chain and the method.
    pub async fn run(self, req: MethodRequest) -> MethodAnswer {
        let MethodNext {
            chain,
            index,
            internal,
            endpoint,
        } = self;
        match chain.get(index).cloned() {
            Some(m) => {
                let method = req.method;
                let next = MethodNext {
                    chain,
                    index: index + 1,
                    internal,
                    endpoint,
                };
                match m.handle(req, next).await {
                    Ok(answer) => answer,
                    Err(f) => {
                        MethodAnswer(Answer::Refused(internal.into_envelope(method.as_str(), f)))
                    }
                }
            }
            None => endpoint(req).await,
        }
    }
}

impl std::fmt::Debug for MethodNext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodNext")
            .field("remaining", &(self.chain.len().saturating_sub(self.index)))
            .finish()
    }
}

/// An icon of a tool, prompt or resource (MCP 2025-11-25 `icons`): listed only to clients
/// whose protocol version has icons (2025-11-25 and later).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Icon {
    /// Where the icon is: an `https:` URL or a `data:` URI.
    pub src: String,
    /// Its MIME type (`image/png`), when the URL does not say.
    pub mime_type: Option<String>,
    /// The sizes it fits, each `WxH` (`48x48`) or `any` (for SVG).
    pub sizes: Vec<String>,
    /// The theme it is drawn for: `light` or `dark`; `None` for any.
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }

    /// With its MIME type.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }

    /// With the sizes it fits (`48x48`, `any`).
    pub fn sizes<S: Into<String>>(mut self, sizes: impl IntoIterator<Item = S>) -> Self {
        self.sizes = sizes.into_iter().map(Into::into).collect();
        self
    }

    /// For one theme only.
    pub fn theme(mut self, theme: IconTheme) -> Self {
        self.theme = Some(theme);
        self
    }
}

impl From<&StaticIcon> for Icon {
    fn from(icon: &StaticIcon) -> Self {
        Icon {
            src: icon.src.to_owned(),
            mime_type: icon.mime_type.map(str::to_owned),
            sizes: icon.sizes.iter().map(|s| (*s).to_owned()).collect(),
            theme: icon.theme,
        }
    }
}

/// The builder's listing settings, kept by the server.
#[derive(Clone, Default)]
pub(crate) struct Listing {
    pub(super) methods: Vec<Arc<dyn MethodMiddleware>>,
    pub(super) chain: Option<Arc<[Arc<dyn MethodMiddleware>]>>,
    pub(super) page_size: Option<usize>,
    pub(super) icons: Vec<(super::Item, String, Vec<Icon>)>,
    /// Where the icons of each name are in `icons`, per item kind (see [`icon_slot`]): the
    /// lists look up every item they show.
    pub(super) icon_index: [HashMap<String, usize>; 3],
    pub(super) hide_forbidden: bool,
}

/// The kind's place in [`Listing`]'s `icon_index`.
pub(super) fn icon_slot(item: super::Item) -> usize {
    match item {
        super::Item::Tool => 0,
        super::Item::Prompt => 1,
        super::Item::Resource => 2,
    }
}

impl Listing {
    /// Freezes the chain, and adds the `declared` icons (the attributes', by listed name) of
    /// every name the builder set none for: the builder's replace the attribute's.
    pub(super) fn built(mut self, declared: Vec<(super::Item, String, Vec<Icon>)>) -> Self {
        self.chain = Some(std::mem::take(&mut self.methods).into());
        self.icon_index = Default::default();
        for (at, (item, name, _)) in self.icons.iter().enumerate() {
            self.icon_index[icon_slot(*item)]
                .entry(name.clone())
                .or_insert(at);
        }
        for (item, name, icons) in declared {
            if let std::collections::hash_map::Entry::Vacant(slot) =
                self.icon_index[icon_slot(item)].entry(name.clone())
            {
                slot.insert(self.icons.len());
                self.icons.push((item, name, icons));
            }
        }
        self
    }
}
