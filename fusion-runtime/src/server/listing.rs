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

use futures::FutureExt as _;
use futures::future::BoxFuture;

use super::failure::InternalErrors;
use super::{Server, ServerBuilder};
use crate::action::{HandlerFailure, failure_from};
use crate::auth::Principal;
use crate::context::RequestScope;
use crate::envelope::{ToolError, codes};

/// The largest page size [`ServerBuilder::page_size`] accepts.
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
    method: Method,
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
pub struct MethodAnswer(Answer);

enum Answer {
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
///             .suggest("Read the public resources listed by resources/list instead"));
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
    chain: Arc<[Arc<dyn MethodMiddleware>]>,
    index: usize,
    internal: InternalErrors,
    endpoint: MethodEndpoint,
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

/// The theme an [`Icon`] is drawn for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IconTheme {
    /// For a light background.
    Light,
    /// For a dark background.
    Dark,
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

/// An icon declared where its tool, prompt or resource is (`icon = ".."` or `icon(..)` in
/// `#[tool_action]`, `#[prompt]`, `#[resource]`): an [`Icon`] known, and checked, at compile
/// time — an `https:` URL or a base64 `data:` URI, sizes `WxH` or `any`, a `light` or `dark`
/// theme. The lists show it unless [`ServerBuilder::icons`] sets icons for the same name, and
/// not on a grouped tool (see [`ServerBuilder::icons`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StaticIcon {
    /// Where the icon is: an `https:` URL or a `data:` URI.
    pub src: &'static str,
    /// Its MIME type (`image/png`), when declared.
    pub mime_type: Option<&'static str>,
    /// The sizes it fits, each `WxH` (`48x48`) or `any`; empty: any size.
    pub sizes: &'static [&'static str],
    /// The theme it is drawn for; `None` for any.
    pub theme: Option<IconTheme>,
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

/// The icons the attributes declare, by the name each list shows: a tool exposed on its own
/// (flat exposure, or an ungrouped action), every prompt, resource and template. A grouped
/// tool takes none of its members' icons: they describe one action each, and which of them
/// would speak for the group would depend on registration order.
pub(super) fn declared_icons(
    entries: &[super::ActionDescriptor],
    catalog: &super::catalog::Catalog,
) -> Vec<(super::Item, String, Vec<Icon>)> {
    let owned = |icons: &[StaticIcon]| icons.iter().map(Icon::from).collect::<Vec<_>>();
    let tools = entries
        .iter()
        .filter(|d| d.discriminator.is_none() && !d.info.icons.is_empty())
        .map(|d| (super::Item::Tool, d.tool.clone(), owned(d.info.icons)));
    let prompts = (catalog.prompts().iter())
        .filter(|p| !p.info.icons.is_empty())
        .map(|p| (super::Item::Prompt, p.name.clone(), owned(p.info.icons)));
    let resources = (catalog.resources().iter())
        .filter(|r| !r.info.icons.is_empty())
        .map(|r| {
            (
                super::Item::Resource,
                r.info.uri.to_owned(),
                owned(r.info.icons),
            )
        });
    tools.chain(prompts).chain(resources).collect()
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
    icon_index: [HashMap<String, usize>; 3],
    pub(super) hide_forbidden: bool,
}

/// The kind's place in [`Listing`]'s `icon_index`.
fn icon_slot(item: super::Item) -> usize {
    match item {
        super::Item::Tool => 0,
        super::Item::Prompt => 1,
        super::Item::Resource => 2,
    }
}

impl Listing {
    /// Freezes the chain, and adds the `declared` icons (see [`declared_icons`]) of every
    /// name the builder set none for: the builder's replace the attribute's.
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

impl ServerBuilder {
    /// Appends a [`MethodMiddleware`]: it wraps every method but `tools/call` (see the
    /// [`listing`](crate::server::listing) docs); the first added runs first (outermost).
    pub fn method_middleware(mut self, middleware: impl MethodMiddleware) -> Self {
        self.listing.methods.push(Arc::new(middleware));
        self
    }

    /// Splits `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list`
    /// into pages of at most `size` items, each with a `nextCursor` for the next one (off by
    /// default: one page holds everything). The cursors are opaque, signed with the
    /// server's [`request_state_key`](Self::request_state_key) (else its process key), and
    /// bound to the list and to the visibility changes made so far: a cursor that was
    /// tampered with, made for another list, or issued before a tool, prompt or resource was
    /// enabled or disabled is refused with `-32602` (list again from the start: clients are
    /// told of each change). A cursor holds a position, not a snapshot: a mounted upstream
    /// whose tools change between two pages shifts the ones after (the change is announced
    /// with `list_changed`, as any other). [`build`](Self::build) fails for `0` or more than
    /// [`MAX_PAGE_SIZE`].
    pub fn page_size(mut self, size: usize) -> Self {
        self.listing.page_size = Some(size);
        self
    }

    /// Lists to each caller only the tools it may call (off by default): a tool whose action
    /// requires scopes the caller's principal lacks — or any scope, from a caller with no
    /// principal — is left out of its `tools/list`; a grouped tool is listed while the caller
    /// may call one of its actions; a mounted tool needs its mount's scopes and its own. A
    /// call is decided as before: a hidden tool called by name still answers
    /// `FORBIDDEN` or `AUTH_REQUIRED`, which say what is missing.
    ///
    /// Off by default because the list is also the contract: the lockfile (`lock`), the
    /// contract diff, `<contract_awareness>` and the `tools` command always describe the
    /// full list, whoever asks, and so does [`Server::contracts`](crate::Server::contracts).
    /// With it on, a client's `tools/list` is that contract filtered by its scopes.
    pub fn hide_forbidden(mut self, hide: bool) -> Self {
        self.listing.hide_forbidden = hide;
        self
    }

    /// Icons for the tool, prompt or resource `name` (a tool as `tools/list` shows it, a
    /// resource or template by its URI or URI template), listed to 2025-11-25 and later
    /// clients. [`build`](Self::build) fails when nothing goes by that name.
    ///
    /// They replace the icons the item's attribute declares (`icon = ".."`, a
    /// [`StaticIcon`]), which are not merged with them: the builder is where a deployment
    /// changes what the code says (another host, another theme), and an empty list hides the
    /// declared ones. A grouped tool has only the icons set here: its members' declared icons
    /// are not listed, on the group or anywhere else.
    pub fn icons(
        mut self,
        item: super::Item,
        name: impl Into<String>,
        icons: impl IntoIterator<Item = Icon>,
    ) -> Self {
        self.listing
            .icons
            .push((item, name.into(), icons.into_iter().collect()));
        self
    }
}

impl Server {
    /// The page size of the lists ([`ServerBuilder::page_size`]), if they are paginated.
    pub fn page_size(&self) -> Option<usize> {
        self.inner.listing.page_size
    }

    /// The icons listed for `name`: the ones [`ServerBuilder::icons`] set, else the ones its
    /// attribute declares ([`StaticIcon`]); empty when there are none.
    pub fn icons_of(&self, item: super::Item, name: &str) -> &[Icon] {
        let listing = &self.inner.listing;
        listing.icon_index[icon_slot(item)]
            .get(name)
            .and_then(|at| listing.icons.get(*at))
            .map(|(_, _, icons)| icons.as_slice())
            .unwrap_or_default()
    }

    /// Whether `tools/list` leaves out what the caller may not call
    /// ([`ServerBuilder::hide_forbidden`]).
    pub fn hides_forbidden(&self) -> bool {
        self.inner.listing.hide_forbidden
    }

    /// Whether `principal` holds every scope a call of the MCP tool `tool` requires (for a
    /// grouped tool: of one of its actions); `true` for a tool the server does not know.
    pub fn may_call(&self, tool: &str, principal: Option<&Principal>) -> bool {
        fn granted<'a>(mut required: impl Iterator<Item = &'a str>, p: Option<&Principal>) -> bool {
            match p {
                Some(p) => required.all(|s| p.has_scope(s)),
                None => required.next().is_none(),
            }
        }
        let inner = &self.inner;
        let action = |i: usize| {
            inner
                .entries
                .get(i)
                .is_none_or(|d| granted(d.info.scopes.iter().map(|s| s.as_ref()), principal))
        };
        match inner.routes.get(tool) {
            Some(super::routing::Route::Action(i)) => action(*i),
            Some(super::routing::Route::Group(g)) => inner
                .groups
                .get(*g)
                .is_none_or(|g| g.members.iter().any(|(_, i)| action(*i))),
            None => match inner.sources.iter().find(|s| s.owns(tool)) {
                Some(source) => {
                    let own = inner.mounted_scopes.get(tool).into_iter().flatten();
                    let mount = source.scopes();
                    let required = own.map(|s| s.as_ref());
                    granted(required.chain(mount.iter().map(String::as_str)), principal)
                }
                None => true,
            },
        }
    }

    /// Whether any icon is set or declared (the lists skip looking them up when none is).
    #[cfg_attr(
        not(any(feature = "server-stdio", feature = "server-http")),
        allow(dead_code, reason = "called by mcp/ only")
    )]
    pub(crate) fn has_icons(&self) -> bool {
        !self.inner.listing.icons.is_empty()
    }

    /// Runs `req` through the method middleware, then `endpoint`; its value, or the error a
    /// middleware refused the request with (a middleware that panics: `INTERNAL_ERROR`).
    /// Without method middleware, `endpoint` runs directly.
    #[cfg_attr(
        not(any(feature = "server-stdio", feature = "server-http")),
        allow(dead_code, reason = "called by mcp/ only")
    )]
    pub(crate) async fn through_method_middleware<T, F>(
        &self,
        req: MethodRequest,
        endpoint: impl FnOnce(MethodRequest) -> F + Send + 'static,
    ) -> Result<T, ToolError>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        let chain = match &self.inner.listing.chain {
            Some(chain) if !chain.is_empty() => chain.clone(),
            _ => return Ok(endpoint(req).await),
        };
        let method = req.method;
        let next = MethodNext {
            chain,
            index: 0,
            internal: self.inner.internal,
            endpoint: Box::new(move |req| {
                let fut = endpoint(req);
                Box::pin(async move { MethodAnswer(Answer::Done(Box::new(fut.await))) })
            }),
        };
        let answer = std::panic::AssertUnwindSafe(next.run(req))
            .catch_unwind()
            .await;
        let Ok(answer) = answer else {
            return Err(self.inner.internal.panic_envelope(method.as_str()));
        };
        match answer.0 {
            Answer::Refused(e) => Err(e),
            Answer::Done(value) => value.downcast::<T>().map(|v| *v).map_err(|_| {
                ToolError::new(
                    codes::INTERNAL_ERROR,
                    format!(
                        "{method} failed: a method middleware answered with another request's answer"
                    ),
                )
                .suggest(super::INTERNAL_RECOVERY)
                .critical()
            }),
        }
    }
}
