//! The server itself: [`ServerBuilder`] (everything a server is built from, checked once in
//! [`ServerBuilder::build`]) and [`Server`] (cheap to clone, shared by every connection: calls,
//! lists, what each caller sees).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;

use super::catalog::{Catalog, CatalogBuildError, CatalogBuilder};
use super::failure::InternalErrors;
use super::listing::{Answer, Icon, MethodAnswer, MethodMiddleware, MethodNext, MethodRequest};
use super::names::Names;
use super::registry::{ActionDescriptor, Erased, Inner, Registered};
use super::routing::Route;
use super::{
    CacheScope, CallContext, Exposure, Item, ListCache, ListenLimits, MAX_PAGE_SIZE, Middleware,
    ReadCache, ToolSource, ToolSpec, Visibility, group, limits, listing, pipeline, routing, source,
};
use crate::action::{ActionInfo, ToolAction};
use crate::auth::Principal;
use crate::auth::{Auth, AuthConfigError};
use crate::context::{Notifier, RequestScope, States};
use crate::contract::{ContractAwareness, ToolContract};
use crate::envelope::{ToolError, ToolResponse, codes};
use crate::guard::{
    ConcurrencyLimit, GuardState, OnStoreFailure, RateLimit, RateLimitStore, SharedLimits,
};
use crate::input::JsonObject;
use crate::store::{ChangeBus, OnceStore, TaskStore};

/// Why a server could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two actions have the same name.
    #[error("action `{0}` is registered twice")]
    DuplicateAction(&'static str),
    /// An action needs a state that was not registered.
    #[error("action `{action}` needs state `{state}`: register it with `.state(..)`")]
    MissingState {
        /// The action.
        action: &'static str,
        /// The state's type name.
        state: &'static str,
    },
    /// The exposure does not work for these actions.
    #[error("{0}")]
    Exposure(String),
    /// A guard override names no registered action or group.
    #[error("{0}")]
    Guard(String),
    /// The prompts or resources cannot be served.
    #[error(transparent)]
    Catalog(#[from] CatalogBuildError),
    /// Cache hints name no registered resource.
    #[error("resource_cache for `{0}`, but no resource has that URI or URI template")]
    ResourceCache(String),
    /// The `requestState` signing key is too short.
    #[error("the requestState signing key has {0} bytes; it needs at least 32")]
    RequestStateKey(usize),
    /// A [`ServerBuilder::disabled`] rule names nothing the server has.
    #[error("disabled {0:?} `{1}`, but the server has none by that name")]
    Disabled(Item, String),
    /// [`ServerBuilder::icons`] names nothing the server has.
    #[error("icons for {0:?} `{1}`, but the server has none by that name")]
    Icons(Item, String),
    /// [`ServerBuilder::page_size`] is 0 or above [`MAX_PAGE_SIZE`].
    #[error("page size {0}: it must be between 1 and {MAX_PAGE_SIZE}")]
    PageSize(usize),
    /// The authentication cannot be served (see [`Auth::check`]).
    #[error(transparent)]
    Auth(#[from] AuthConfigError),
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    name: String,
    version: String,
    instructions: Option<String>,
    actions: Vec<Arc<dyn Erased>>,
    states: States,
    middleware: Vec<Arc<dyn Middleware>>,
    exposure: Exposure,
    internal: InternalErrors,
    lockfile: Option<PathBuf>,
    self_healing_cap: Option<usize>,
    guards: limits::GuardConfig,
    catalog: CatalogBuilder,
    auth: AuthConfig,
    list_cache: ListCache,
    sources: Vec<Arc<dyn ToolSource>>,
    changes: (usize, ListenLimits),
    request_state_key: Option<Arc<[u8]>>,
    once: Option<Arc<dyn OnceStore>>,
    tasks: Option<Arc<dyn TaskStore>>,
    read_cache: ReadCache,
    change_bus: Option<Arc<dyn ChangeBus>>,
    max_result_bytes: usize,
    /// What starts disabled ([`ServerBuilder::disabled`]).
    disabled: Vec<(Item, String)>,
    /// Method middleware, page size, icons ([`listing`]).
    listing: listing::Listing,
}

/// The result bound of an action that declares none: 1 MiB of text. Generous on purpose —
/// far above what a model reads well (a few hundred KiB of JSON already fills most context
/// windows), so no reasonable result is cut, yet it stops one runaway result (a whole table
/// dumped) from costing every client its memory and the model its context.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1 << 20;

/// The builder's authentication settings (see [`auth`](crate::auth)).
#[derive(Default)]
struct AuthConfig {
    auth: Option<Arc<Auth>>,
    scopes: Vec<(String, Vec<String>)>,
    store: Option<Arc<SharedLimits>>,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder {
            name: "fusion".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: None,
            actions: Vec::new(),
            states: States::default(),
            middleware: Vec::new(),
            listing: listing::Listing::default(),
            exposure: Exposure::default(),
            internal: InternalErrors::default(),
            lockfile: None,
            self_healing_cap: None,
            guards: limits::GuardConfig::default(),
            catalog: CatalogBuilder::default(),
            auth: AuthConfig::default(),
            list_cache: ListCache::default(),
            changes: (
                crate::context::DEFAULT_CHANGE_CAPACITY,
                ListenLimits::default(),
            ),
            request_state_key: None,
            once: None,
            tasks: None,
            read_cache: ReadCache::default(),
            change_bus: None,
            sources: Vec::new(),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            disabled: Vec::new(),
        }
    }
}

impl ServerBuilder {
    /// The server's name, sent to clients on `initialize`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The server's version, sent to clients on `initialize`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// How long 2026-07-28 clients may cache `server/discover` and the lists, and who may
    /// (see [`ListCache`]; default [`DEFAULT_LIST_CACHE`]). Use [`CacheScope::Private`]
    /// when what a caller sees depends on who it is.
    ///
    /// [`DEFAULT_LIST_CACHE`]: super::DEFAULT_LIST_CACHE
    pub fn list_cache(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.list_cache = ListCache { ttl, scope };
        self
    }

    /// How many changes a client's listener may fall behind before it loses the oldest (and
    /// gets list-changed notifications instead): the capacity of the [`Notifier`]'s channel
    /// (default [`DEFAULT_CHANGE_CAPACITY`](crate::context::DEFAULT_CHANGE_CAPACITY)).
    pub fn change_capacity(mut self, capacity: usize) -> Self {
        self.changes.0 = capacity;
        self
    }

    /// Bounds the `subscriptions/listen` streams 2026-07-28 clients keep open: `per_client`
    /// per [`ClientKey`](super::ClientKey), `total` for the server (defaults
    /// [`DEFAULT_MAX_LISTENS_PER_CLIENT`](crate::context::DEFAULT_MAX_LISTENS_PER_CLIENT),
    /// [`DEFAULT_MAX_LISTENS`](crate::context::DEFAULT_MAX_LISTENS)). One past either is
    /// answered with an error naming the limit.
    pub fn listen_limits(mut self, per_client: usize, total: usize) -> Self {
        self.changes.1 = ListenLimits { per_client, total };
        self
    }

    /// Shares change notifications with the other instances through `bus` (e.g.
    /// [`RedisChangeBus`](crate::store::RedisChangeBus)): a change sent here reaches their
    /// listeners too, and theirs reach this instance's. Without it (the default) changes stay
    /// in this process. See [`store::ChangeBus`](crate::store::ChangeBus) for what is lost
    /// while the bus is down.
    pub fn change_bus(mut self, bus: impl ChangeBus) -> Self {
        self.change_bus = Some(Arc::new(bus));
        self
    }

    /// The key a 2026-07-28 call's `requestState` (the answers of its elicitation rounds,
    /// carried by the client between rounds) is signed with: at least 32 bytes, the same on
    /// every instance of a stateless deployment so any of them can take the retry. Without
    /// it the key comes from the environment variable
    /// [`REQUEST_STATE_KEY_ENV`](crate::mcp::elicit::REQUEST_STATE_KEY_ENV), else each
    /// process draws its own. [`build`](Self::build) fails with
    /// [`BuildError::RequestStateKey`] for a shorter key.
    pub fn request_state_key(mut self, key: impl AsRef<[u8]>) -> Self {
        self.request_state_key = Some(Arc::from(key.as_ref()));
        self
    }

    /// How long 2026-07-28 clients may cache what `resources/read` returns for `resource`
    /// (its URI, or the URI template of a `#[resource(template = ..)]`), and who may: the
    /// read's `ttlMs` and `cacheScope`. [`build`](Self::build) fails when no resource has that
    /// URI or template.
    pub fn resource_cache(
        mut self,
        resource: impl Into<String>,
        ttl: Duration,
        scope: CacheScope,
    ) -> Self {
        self.read_cache
            .per_resource
            .push((resource.into(), ListCache { ttl, scope }));
        self
    }

    /// The cache hints of every resource read without its own
    /// ([`resource_cache`](Self::resource_cache)); default [`DEFAULT_READ_CACHE`], not
    /// cached.
    ///
    /// [`DEFAULT_READ_CACHE`]: super::DEFAULT_READ_CACHE
    pub fn read_cache(mut self, ttl: Duration, scope: CacheScope) -> Self {
        self.read_cache.default = Some(ListCache { ttl, scope });
        self
    }

    /// Instructions for the model, sent on `initialize`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Registers an action: the companion struct `#[tool_action]` generated.
    pub fn action<A: ToolAction>(mut self) -> Self {
        self.actions.push(Arc::new(Registered::<A>::new()));
        self
    }

    /// Registers a prompt: the companion struct `#[prompt]` generated.
    pub fn prompt<P: crate::prompt::PromptAction>(mut self) -> Self {
        self.catalog.prompt::<P>();
        self
    }

    /// Registers a resource or resource template: the companion struct `#[resource]`
    /// generated.
    pub fn resource<R: crate::resource::ResourceAction>(mut self) -> Self {
        self.catalog.resource::<R>();
        self
    }

    /// Registers shared state, one value per type; handlers take it as `Context<S>`.
    pub fn state<S: Send + Sync + 'static>(mut self, state: S) -> Self {
        self.states.insert(Arc::new(state));
        self
    }

    /// Registers shared state already in an `Arc`.
    pub fn state_arc<S: Send + Sync + 'static>(mut self, state: Arc<S>) -> Self {
        self.states.insert(state);
        self
    }

    /// Appends a middleware; the first added runs first (outermost).
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Sets the exposure.
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// Flat exposure with this separator in place of `.` (`_` by default).
    pub fn separator(self, separator: impl Into<String>) -> Self {
        self.exposure(Exposure::Flat {
            separator: separator.into(),
        })
    }

    /// Grouped exposure: one tool per group, the action named by an `action` argument.
    ///
    /// The grouped tool's schema is the one its calls are held to: fields every member
    /// defines alike are shown once; fields members define differently are shown per member,
    /// in one `allOf` entry per action (`if` the discriminator is its `const`, `then` its own
    /// schema of those fields, its required keys and its unknown-key rule). [`build`](Self::build)
    /// fails with [`BuildError::Exposure`] when a member has a field named like the
    /// discriminator or two members define one `$defs` name differently. Hints are merged with
    /// MCP's defaults ([`Hints::merge`](crate::action::Hints::merge)).
    pub fn grouped(self) -> Self {
        self.grouped_by("action")
    }

    /// Grouped exposure with another discriminator name.
    pub fn grouped_by(self, discriminator: impl Into<String>) -> Self {
        self.exposure(Exposure::Grouped {
            discriminator: discriminator.into(),
        })
    }

    /// Hides the messages of errors that are not tool errors: the model reads only that the
    /// action failed internally.
    pub fn hide_internal_errors(mut self, hide: bool) -> Self {
        self.internal.hide_messages = hide;
        self
    }

    /// Where this server's contract lockfile lives: what the `lock` command writes and
    /// `lock --check` compares (default `./fusion.lock`). Does not turn on self-healing.
    pub fn lockfile(mut self, path: impl Into<PathBuf>) -> Self {
        self.lockfile = Some(path.into());
        self
    }

    /// Self-healing (SPEC §5): reads the lockfile at `path` once, diffs it against the
    /// current contracts, and embeds the BREAKING and RISKY deltas of the failed action (at
    /// most five, BREAKING first) as `<contract_awareness>` in its validation errors. A
    /// missing or unreadable lockfile is reported once on stderr and the server runs
    /// without the section. Also sets [`ServerBuilder::lockfile`].
    ///
    /// A mounted upstream's tools recorded in the lockfile (`lock` records them) are
    /// compared with what the upstream lists, again whenever its list changes: the failures
    /// of a changed mounted tool that may come from its arguments carry the same section.
    pub fn self_healing(mut self, path: impl Into<PathBuf>) -> Self {
        self.lockfile = Some(path.into());
        self.self_healing_cap = Some(ContractAwareness::DEFAULT_CAP);
        self
    }

    /// With self-healing on: at most `cap` deltas per `<contract_awareness>` section.
    pub fn self_healing_cap(mut self, cap: usize) -> Self {
        if self.self_healing_cap.is_some() {
            self.self_healing_cap = Some(cap);
        }
        self
    }

    /// Limits how many calls of `action` run at once and wait in line, overriding its
    /// `max_active` / `max_queue`. Beyond both, calls are answered `SERVER_BUSY` at once.
    /// `action` may also be a mounted upstream's tool, by its prefixed name
    /// (`finance_get_invoice`); so for [`rate_limit`](Self::rate_limit),
    /// [`timeout`](Self::timeout) and [`scopes`](Self::scopes).
    pub fn concurrency(mut self, action: impl Into<String>, limit: ConcurrencyLimit) -> Self {
        self.guards.concurrency.push((action.into(), limit));
        self
    }

    /// Limits how often `action` may be called — shared by all callers, or per client with
    /// [`RateLimit::per_client`] — overriding its `rate_limit`. Beyond it, calls are answered
    /// `RATE_LIMITED` with the limiter's wait as `retry_after`.
    pub fn rate_limit(mut self, action: impl Into<String>, limit: RateLimit) -> Self {
        self.guards.rate_limits.push((action.into(), limit));
        self
    }

    /// Stops calls of `action` (middleware and handler) after `limit`, overriding its
    /// `timeout`; the call is answered `TIMEOUT` and its future dropped.
    pub fn timeout(mut self, action: impl Into<String>, limit: Duration) -> Self {
        self.guards.timeouts.push((action.into(), limit));
        self
    }

    /// Bounds the text of every successful result, in bytes, for the actions that declare no
    /// `#[tool_action(max_result_bytes = ..)]` ([`DEFAULT_MAX_RESULT_BYTES`] unless set). A
    /// longer result is cut on a character boundary and carries a `RESULT_TRUNCATED` warning
    /// saying how much was sent and how to ask for the rest; a result with structured content
    /// (the action has an output schema) cannot be cut into valid JSON, so it is refused with
    /// `RESULT_TOO_LARGE` instead. `0` is refused by [`build`](Self::build).
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// Limits how many calls of a group's actions (`billing` for `billing.*`, the tool of
    /// grouped exposure) run at once and wait, all actions together. Applies on top of each
    /// action's own limit, in flat and grouped exposure alike.
    pub fn group_concurrency(mut self, group: impl Into<String>, limit: ConcurrencyLimit) -> Self {
        self.guards.groups.push((group.into(), limit));
        self
    }

    /// Authenticates HTTP requests with `auth` (bearer tokens, `401`, Protected Resource
    /// Metadata): see [`auth`](crate::auth). [`HttpOptions::auth`](crate::mcp::HttpOptions::auth)
    /// overrides it per endpoint. [`build`](Self::build) fails with [`BuildError::Auth`] when
    /// it requires tokens but names no issuer ([`Auth::check`]).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth.auth = Some(Arc::new(auth));
        self
    }

    /// Requires the OAuth `scopes` for calls of `action`, replacing the ones it declares
    /// (`#[tool_action(scopes = [..])]`). Without a principal: `AUTH_REQUIRED`; missing one:
    /// `FORBIDDEN`. For a mounted tool (by its prefixed name), required on top of
    /// [`MountOptions::scopes`](crate::gateway::MountOptions::scopes).
    pub fn scopes(
        mut self,
        action: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.auth
            .scopes
            .push((action.into(), scopes.into_iter().map(Into::into).collect()));
        self
    }

    /// Keeps every rate limit's buckets in `store` (e.g. [`RedisStore`](crate::guard::RedisStore)),
    /// shared by every instance using it, instead of this process's memory; when the store
    /// cannot answer, calls are refused or admitted as `on_failure` says. Concurrency limits
    /// stay per instance.
    pub fn rate_limit_store(
        mut self,
        store: impl RateLimitStore,
        on_failure: OnStoreFailure,
    ) -> Self {
        self.auth.store = Some(Arc::new(SharedLimits::new(Arc::new(store), on_failure)));
        self
    }

    /// Keeps the one-time ids — answered 2026-07-28 confirmations (`requestState`) — in
    /// `store` (e.g. [`RedisOnce`](crate::store::RedisOnce)), shared by every instance using
    /// it, instead of this process's memory ([`MemoryOnce`](crate::store::MemoryOnce)). When
    /// the store cannot answer, a confirmation is refused (fail closed) and may be retried.
    pub fn once_store(mut self, store: impl OnceStore) -> Self {
        self.once = Some(Arc::new(store));
        self
    }

    /// Keeps MCP tasks (the actions marked `#[tool_action(task)]`, run for clients that
    /// declared tasks) in `store` instead of this process's memory
    /// ([`MemoryTasks`](crate::store::MemoryTasks) with its default bounds).
    pub fn task_store(mut self, store: impl TaskStore) -> Self {
        self.tasks = Some(Arc::new(store));
        self
    }

    /// Adds tools served by `source` (what [`ServerBuilder::mount`] adds for an upstream
    /// MCP server): calls of a name no action has go to the source that owns it, and
    /// `tools/list` shows its tools after the actions'.
    pub fn tool_source(mut self, source: impl ToolSource) -> Self {
        self.sources.push(Arc::new(source));
        self
    }

    /// Starts the server with `name` disabled: a tool (as `tools/list` shows it), a prompt,
    /// or a resource (its URI or URI template). [`Server::visibility`] enables it later
    /// (see [`Visibility`]). A name the server does not have is refused at build, unless a
    /// mounted source owns it.
    pub fn disabled(mut self, item: Item, name: impl Into<String>) -> Self {
        self.disabled.push((item, name.into()));
        self
    }

    /// Checks the registrations and builds the server.
    pub fn build(mut self) -> Result<Server, BuildError> {
        self.states.changes = Notifier::new(self.changes.0, self.changes.1);
        if let Some(key) = &self.request_state_key
            && key.len() < 32
        {
            return Err(BuildError::RequestStateKey(key.len()));
        }
        if let Some(auth) = &self.auth.auth {
            auth.check()?;
        }
        let mut infos: Vec<ActionInfo> = self.actions.iter().map(|a| a.info().clone()).collect();
        let mut seen = HashMap::new();
        for info in &infos {
            if seen.insert(info.name, ()).is_some() {
                return Err(BuildError::DuplicateAction(info.name));
            }
            if let Some(req) = info.state
                && !self.states.contains(req.type_id)
            {
                return Err(BuildError::MissingState {
                    action: info.name,
                    state: req.type_name,
                });
            }
        }
        let source_separator = match &self.exposure {
            Exposure::Flat { separator } => separator.as_str(),
            Exposure::Grouped { .. } => "_",
        };
        for source in &self.sources {
            source.bind(source_separator, &self.states.changes);
        }
        let sources = &self.sources;
        let mounted_tool = |name: &str| sources.iter().any(|s| s.owns(name));
        let g = &self.guards;
        let named = (g.concurrency.iter().map(|(n, _)| n))
            .chain(g.rate_limits.iter().map(|(n, _)| n))
            .chain(g.timeouts.iter().map(|(n, _)| n))
            .chain(g.groups.iter().map(|(n, _)| n))
            .chain(self.auth.scopes.iter().map(|(n, _)| n));
        if let Some(mount) = named
            .filter(|n| !infos.iter().any(|i| i.name == n.as_str()))
            .find(|n| sources.iter().any(|s| s.name() == n.as_str()))
        {
            return Err(BuildError::Guard(format!(
                "`{mount}` is a mount: name one of its tools (`{mount}_…`), or set what holds for all its tools in its MountOptions (scopes, rate_limit, pending, call_timeout)"
            )));
        }
        let mounted_scopes = apply_scope_overrides(&mut infos, &self.auth.scopes, &mounted_tool)
            .map_err(BuildError::Guard)?;
        let shared = limits::SharedStore::default();
        if let Some(store) = self.auth.store {
            let _ = shared.set(store);
        }
        if self.max_result_bytes == 0 {
            return Err(BuildError::Guard(
                "`max_result_bytes` must be at least 1: it is how many bytes of text a result may carry".into(),
            ));
        }
        for info in &mut infos {
            info.limits
                .max_result_bytes
                .get_or_insert(self.max_result_bytes);
        }
        let layout = routing::layout(&infos, &self.exposure).map_err(BuildError::Exposure)?;
        if let Some(name) = layout
            .tool_order
            .iter()
            .find(|n| self.sources.iter().any(|s| s.owns(n)))
        {
            return Err(BuildError::Exposure(format!(
                "tool `{name}` is under the prefix of a mounted upstream"
            )));
        }
        let discriminator = match &self.exposure {
            Exposure::Grouped { discriminator } => discriminator.clone(),
            Exposure::Flat { .. } => String::from("action"),
        };
        // Each action's one spelling (see `Names`), for every sentence that names it.
        let callables: Vec<Arc<str>> = (layout.placements.iter())
            .map(|p| match &p.discriminator {
                Some(d) => Arc::from(format!("{}.{d}", p.tool)),
                None => Arc::from(p.tool.as_str()),
            })
            .collect();
        let names = Arc::new(Names::new(
            infos.iter().map(|i| i.name).zip(&callables),
            &self.sources,
        ));
        let guards = self
            .guards
            .build(&mut infos, &callables, &shared, &mounted_tool)
            .map_err(BuildError::Guard)?;
        let mut tools = Vec::with_capacity(layout.tool_order.len());
        for name in &layout.tool_order {
            match layout.routes.get(name) {
                Some(Route::Action(i)) => tools.push(action_tool(name, &infos[*i], &names)),
                Some(Route::Group(g)) => {
                    let group = &layout.groups[*g];
                    let (description, input_schema, hints) =
                        group::group_tool(group, &discriminator, &infos)
                            .map_err(BuildError::Exposure)?;
                    tools.push(ToolSpec {
                        name: name.clone(),
                        title: None,
                        description,
                        input_schema,
                        output_schema: None,
                        hints: Some(hints),
                    });
                }
                None => {}
            }
        }
        let entries: Vec<ActionDescriptor> = infos
            .into_iter()
            .zip(layout.placements)
            .zip(self.actions)
            .zip(guards.actions)
            .zip(callables)
            .map(
                |((((info, p), handler), guards), callable)| ActionDescriptor {
                    routed_tool: Arc::from(p.tool.as_str()),
                    callable,
                    info,
                    tool: p.tool,
                    discriminator: p.discriminator,
                    handler,
                    guards: Arc::new(guards),
                },
            )
            .collect();
        let separator = match &self.exposure {
            Exposure::Flat { separator } => separator.as_str(),
            Exposure::Grouped { .. } => "_",
        };
        let catalog = self
            .catalog
            .build(separator, self.internal.hide_messages, |id| {
                self.states.contains(id)
            })?;
        if let Some((unknown, _)) = self
            .read_cache
            .per_resource
            .iter()
            .find(|(r, _)| !catalog.resources().iter().any(|e| e.info.uri == r))
        {
            return Err(BuildError::ResourceCache(unknown.clone()));
        }
        let contracts = contracts_of(&entries);
        let (awareness, source_awareness) = match (&self.lockfile, self.self_healing_cap) {
            (Some(path), Some(cap)) => load_awareness(path, &contracts, cap, &self.sources, &names),
            _ => (None, None),
        };
        let visibility = Visibility::new(self.states.changes.clone());
        let known = |item: &Item, name: &str| match item {
            Item::Tool => {
                layout.tool_order.iter().any(|t| t == name)
                    || self.sources.iter().any(|s| s.owns(name))
            }
            Item::Prompt => catalog.prompts().iter().any(|p| p.name == *name),
            Item::Resource => catalog.resources().iter().any(|r| r.info.uri == name),
        };
        if let Some((item, name, _)) = (self.listing.icons.iter()).find(|(i, n, _)| !known(i, n)) {
            return Err(BuildError::Icons(*item, name.clone()));
        }
        if let Some(size) = self.listing.page_size
            && !(1..=MAX_PAGE_SIZE).contains(&size)
        {
            return Err(BuildError::PageSize(size));
        }
        for (item, name) in &self.disabled {
            if !known(item, name) {
                return Err(BuildError::Disabled(*item, name.clone()));
            }
            visibility.set_quietly(*item, name, false);
        }
        if let Some(bus) = self.change_bus.take() {
            // A fresh notifier has no bus: this cannot be refused.
            let _ = self.states.changes.attach_bus(bus);
        }
        let tasked: std::collections::HashMap<String, crate::TaskSupport> = entries
            .iter()
            .filter(|a| a.info.task.allows_task())
            .map(|a| (a.tool.clone(), a.info.task))
            .collect();
        let declared_icons = declared_icons(&entries, &catalog);
        Ok(Server {
            inner: Arc::new(Inner {
                tasked,
                contracts,
                awareness,
                source_awareness,
                lockfile: self.lockfile,
                name: self.name,
                version: self.version,
                stamp: std::sync::OnceLock::new(),
                instructions: self.instructions,
                entries,
                tools,
                tool_names: layout.tool_order,
                routes: layout.routes,
                groups: layout.groups,
                discriminator,
                states: Arc::new(self.states),
                middleware: self.middleware.into(),
                internal: self.internal,
                group_guards: guards.groups,
                mounted_guards: guards.mounted,
                mounted_scopes,
                catalog,
                auth: self.auth.auth,
                shared,
                list_cache: self.list_cache,
                request_state_key: self.request_state_key,
                names,
                once: Arc::new(match self.once {
                    Some(store) => std::sync::OnceLock::from(store),
                    None => std::sync::OnceLock::new(),
                }),
                tasks: Arc::new(match self.tasks {
                    Some(store) => std::sync::OnceLock::from(store),
                    None => std::sync::OnceLock::new(),
                }),
                read_cache: self.read_cache,
                sources: self.sources,
                visibility,
                listing: self.listing.built(declared_icons),
            }),
        })
    }
}

/// Applies the builder's scope overrides to the actions, and returns the ones for mounted
/// tools (a name no action has, under a mount's prefix), by name. Fails when one names
/// neither.
fn apply_scope_overrides(
    infos: &mut [ActionInfo],
    overrides: &[(String, Vec<String>)],
    mounted_tool: &dyn Fn(&str) -> bool,
) -> Result<HashMap<String, Vec<Cow<'static, str>>>, String> {
    let mut mounted = HashMap::new();
    for (name, scopes) in overrides {
        let mut scopes: Vec<Cow<'static, str>> =
            scopes.iter().map(|s| Cow::Owned(s.clone())).collect();
        scopes.sort();
        scopes.dedup();
        match infos.iter_mut().find(|i| i.name == name) {
            Some(info) => info.scopes = scopes,
            None if mounted_tool(name) => {
                mounted.insert(name.clone(), scopes);
            }
            None => {
                return Err(format!(
                    "scopes for `{name}`, but no action of that name is registered and no mount's prefix covers it"
                ));
            }
        }
    }
    Ok(mounted)
}

fn contracts_of(entries: &[ActionDescriptor]) -> Vec<ToolContract> {
    entries
        .iter()
        .map(|d| {
            let mut c = ToolContract::new(
                d.info.name,
                d.tool.clone(),
                d.info.description.to_string(),
                serde_json::Value::Object(d.info.input_schema.as_ref().clone()),
            )
            .with_annotations(d.info.hints);
            if let Some(why) = &d.info.deprecated {
                c = c.with_deprecated(why.to_string());
            }
            if !d.info.scopes.is_empty() {
                c = c.with_scopes(d.info.scopes.iter().map(|s| s.to_string()));
            }
            c
        })
        .collect()
}

/// The frozen self-healing sections of the actions, or `None` (said once on stderr) when the
/// lockfile cannot be read; no deltas means no per-call cost at all. With sources, the
/// lockfile's contracts of their tools, compared at run time. A delta's sentence and its
/// "After" value name today's actions as clients call them (`names`); a name the lockfile
/// had before is left as it was.
fn load_awareness(
    path: &Path,
    contracts: &[ToolContract],
    cap: usize,
    sources: &[Arc<dyn ToolSource>],
    names: &Names,
) -> (Option<ContractAwareness>, Option<source::SourceAwareness>) {
    let lock = match crate::contract::Lockfile::read(path) {
        Ok(lock) => lock,
        Err(e) => {
            let msg = format!(
                "fusion: self-healing is off: cannot use the contract lockfile {}: {e}",
                path.display()
            );
            // The server is often built before logging is set up: make sure it is seen.
            if tracing::dispatcher::has_been_set() {
                tracing::warn!("{msg}");
            } else {
                eprintln!("{msg}");
            }
            return (None, None);
        }
    };
    let (mounted, own): (Vec<ToolContract>, Vec<ToolContract>) = lock
        .contracts()
        .iter()
        .cloned()
        .partition(|c| sources.iter().any(|s| s.owns(&c.action)));
    let deltas = (crate::contract::diff(&own, contracts).into_iter())
        .map(|mut d| {
            d.description = names.spell_in(&d.description).into_owned();
            d.after = d.after.map(|a| names.spell_in(&a).into_owned());
            d
        })
        .collect();
    let actions = ContractAwareness::new(deltas, cap);
    let mounted = (!sources.is_empty()).then(|| source::SourceAwareness::new(mounted, cap));
    ((!actions.is_empty()).then_some(actions), mounted)
}

/// The tool an action is listed as in flat exposure; a deprecation's note names actions as
/// clients call them.
fn action_tool(name: &str, info: &ActionInfo, names: &Names) -> ToolSpec {
    let description = match &info.deprecated {
        Some(why) => format!("DEPRECATED: {}. {}", names.spell_in(why), info.description),
        None => info.description.to_string(),
    };
    ToolSpec {
        name: name.to_owned(),
        title: info.title.as_ref().map(|t| t.to_string()),
        description,
        input_schema: crate::schema::for_tools_list(&info.input_schema, Some(&info.description)),
        output_schema: info
            .output_schema
            .as_ref()
            .map(|s| crate::schema::for_tools_list(s, None)),
        hints: (!info.hints.is_empty()).then_some(info.hints),
    }
}

/// A Fusion server: cheap to clone, shared by every connection.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl Server {
    /// Starts a builder.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The server's version.
    pub fn version(&self) -> &str {
        &self.inner.version
    }

    /// The server's name and version as JSON, made once by `make` (the MCP side's
    /// `serverInfo`, written on every 2026-07-28 result).
    #[cfg_attr(
        not(any(feature = "server-stdio", feature = "server-http")),
        allow(dead_code)
    )]
    pub(crate) fn stamp(&self, make: impl FnOnce() -> serde_json::Value) -> &serde_json::Value {
        self.inner.stamp.get_or_init(make)
    }

    /// The cache hints 2026-07-28 clients get on discover and the lists.
    pub fn list_cache(&self) -> ListCache {
        self.inner.list_cache
    }

    /// The change notifier: tell connected clients that a resource or a list changed (see
    /// [`Notifier`]). Handlers reach the same one as `cx.notifier()`.
    pub fn notifier(&self) -> &Notifier {
        &self.inner.states.changes
    }

    /// The cache hints 2026-07-28 clients get on a read of `resource` (its URI or template).
    pub fn read_cache(&self, resource: &str) -> ListCache {
        self.inner.read_cache.of(resource)
    }

    /// The key set with [`ServerBuilder::request_state_key`], if any (read by the MCP
    /// transports, which exist only with a server feature).
    #[cfg_attr(
        not(any(feature = "server-stdio", feature = "server-http")),
        expect(dead_code)
    )]
    pub(crate) fn request_state_key(&self) -> Option<Arc<[u8]>> {
        self.inner.request_state_key.clone()
    }

    /// The instructions for the model, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// Every action, in registration order, with where it is exposed.
    pub fn actions(&self) -> &[ActionDescriptor] {
        &self.inner.entries
    }

    /// Every action's contract, as the lockfile records it.
    pub fn contracts(&self) -> &[ToolContract] {
        &self.inner.contracts
    }

    /// Every contract, the mounted upstreams' tools included as they list them now (what
    /// `lock` records, so a changed upstream schema shows in `lock --check`): a mounted
    /// tool's contract is named by its tool name.
    pub async fn all_contracts(&self) -> Vec<ToolContract> {
        let mut all = self.inner.contracts.clone();
        for source in &self.inner.sources {
            all.extend(
                source
                    .stateless_tools()
                    .await
                    .into_iter()
                    .map(source::contract_of),
            );
        }
        all
    }

    /// The lockfile path set with [`ServerBuilder::lockfile`] or
    /// [`ServerBuilder::self_healing`].
    pub fn lockfile_path(&self) -> Option<&Path> {
        self.inner.lockfile.as_deref()
    }

    /// The self-healing sections, when self-healing is on and the lockfile shows deltas.
    pub fn contract_awareness(&self) -> Option<&ContractAwareness> {
        self.inner.awareness.as_ref()
    }

    /// What is enabled now, and the handle to change it (see [`Visibility`]).
    pub fn visibility(&self) -> &Visibility {
        &self.inner.visibility
    }

    /// The prompts and resources.
    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    /// The context a prompt, resource or completion handler runs with.
    pub(crate) fn call_context(
        &self,
        name: &'static str,
        exposed: Arc<str>,
        scope: RequestScope,
    ) -> CallContext {
        CallContext::new(name, exposed, self.inner.states.clone(), scope)
    }

    /// The tools `tools/list` answers, as plain data (the MCP bridge writes them as
    /// [`Server::tools`]).
    pub fn tool_specs(&self) -> &[ToolSpec] {
        &self.inner.tools
    }

    /// The sources of tools besides the actions (mounted upstreams), in the order added.
    pub fn tool_sources(&self) -> &[Arc<dyn ToolSource>] {
        &self.inner.sources
    }

    /// Every tool `tools/list` answers now: the actions' ([`Server::tool_specs`]), then
    /// each source's.
    pub async fn listed_tool_specs(&self) -> Vec<ToolSpec> {
        self.listed_tool_specs_in(None).await
    }

    /// The tools a request with no session (MCP 2026-07-28) sees, the same for everyone: the
    /// actions', then every source's (a handoff domain's taking its handle as an argument).
    pub async fn listed_tool_specs_stateless(&self) -> Vec<ToolSpec> {
        let mut all = self.inner.tools.clone();
        for source in &self.inner.sources {
            all.extend(source.stateless_tools().await);
        }
        all
    }

    /// The tools a session handed off to `domain` sees: that domain's, and [`RETURN_TOOL`];
    /// with `None` (or an unknown domain), the actions' and every source's that is not a
    /// handoff domain.
    ///
    /// [`RETURN_TOOL`]: super::RETURN_TOOL
    pub async fn listed_tool_specs_in(&self, domain: Option<&str>) -> Vec<ToolSpec> {
        let entered = domain.and_then(|d| {
            self.inner
                .sources
                .iter()
                .find(|s| s.handoff_domain() == Some(d))
        });
        if let Some(source) = entered {
            let mut all = source.tools().await;
            all.push(source::return_tool(&self.inner.name));
            return all;
        }
        let mut all = self.inner.tools.clone();
        for source in &self.inner.sources {
            if source.handoff_domain().is_none() {
                all.extend(source.tools().await);
            }
        }
        all
    }

    /// The mounted tools the builder's guards and scopes name (`finance_get_invoice`),
    /// sorted: the `tools` command reports those their upstream does not list.
    #[cfg_attr(
        not(feature = "cli"),
        allow(dead_code, reason = "read by mcp/ for the cli")
    )]
    pub(crate) fn mounted_settings(&self) -> Vec<&str> {
        let inner = &self.inner;
        let mut names: Vec<&str> = (inner.mounted_guards.keys())
            .chain(inner.mounted_scopes.keys())
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The concurrency guard of `action` now — calls running and waiting, and its limits —
    /// or `None` when the action is unknown or has no concurrency limit.
    pub fn guard_state(&self, action: &str) -> Option<GuardState> {
        let entry = self.inner.entries.iter().find(|e| e.info.name == action)?;
        entry.guards.state()
    }

    /// The concurrency guard of `group` (see [`ServerBuilder::group_concurrency`]) now, or
    /// `None` when the group has no limit.
    pub fn group_guard_state(&self, group: &str) -> Option<GuardState> {
        self.inner.group_guards.get(group).map(|g| g.state())
    }

    /// The authentication set with [`ServerBuilder::auth`], if any.
    pub fn auth(&self) -> Option<&Arc<Auth>> {
        self.inner.auth.as_ref()
    }

    /// Every scope an action or a mounted tool requires (a mount's
    /// [`MountOptions::scopes`](crate::gateway::MountOptions::scopes), and the scopes set for
    /// its tools by name), sorted, once each: the Protected Resource Metadata's
    /// `scopes_supported`.
    pub fn declared_scopes(&self) -> Vec<String> {
        let inner = &self.inner;
        let mut all: Vec<String> = inner
            .entries
            .iter()
            .flat_map(|e| e.info.scopes.iter().map(|s| s.to_string()))
            .chain(inner.sources.iter().flat_map(|s| s.scopes()))
            .chain(
                inner
                    .mounted_scopes
                    .values()
                    .flatten()
                    .map(|s| s.to_string()),
            )
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// Shares every rate limit through `store` from now on (the `serve --redis-url` flag):
    /// for a server built without [`ServerBuilder::rate_limit_store`], before it serves.
    /// `Err` (with the store given back) when one is already set.
    pub fn set_rate_limit_store(&self, store: Arc<SharedLimits>) -> Result<(), Arc<SharedLimits>> {
        self.inner.shared.set(store)
    }

    /// Keeps one-time ids in `store` from now on (the `serve --redis-url` flag): for a server
    /// built without [`ServerBuilder::once_store`], before it serves (or takes a first
    /// confirmation). `Err` (with the store given back) when one is already set.
    pub fn set_once_store(&self, store: Arc<dyn OnceStore>) -> Result<(), Arc<dyn OnceStore>> {
        self.inner.once.set(store)
    }

    /// Where one-time ids are kept: the store set on the builder or with
    /// [`Server::set_once_store`], else this process's memory.
    pub fn once_store(&self) -> &Arc<dyn OnceStore> {
        self.inner
            .once
            .get_or_init(|| Arc::new(crate::store::MemoryOnce::default()))
    }

    /// Keeps MCP tasks in `store` from now on: for a server built without
    /// [`ServerBuilder::task_store`], before it serves. `Err` (with the store given back)
    /// when one is already set.
    pub fn set_task_store(&self, store: Arc<dyn TaskStore>) -> Result<(), Arc<dyn TaskStore>> {
        self.inner.tasks.set(store)
    }

    /// Where MCP tasks are kept: the store set on the builder or with
    /// [`Server::set_task_store`], else this process's memory.
    pub fn task_store(&self) -> &Arc<dyn TaskStore> {
        self.inner
            .tasks
            .get_or_init(|| Arc::new(crate::store::MemoryTasks::default()))
    }

    /// How `tool` runs for a client that declared the tasks extension: as the action it
    /// resolves to says (`#[tool_action(task)]`), whichever spelling names it (the tool
    /// name, or `tool.action`), as a call resolves it;
    /// [`TaskSupport::Forbidden`](crate::TaskSupport) for a disabled tool, a name that leads
    /// nowhere, or an action with no task key.
    pub fn task_support(&self, tool: &str) -> crate::TaskSupport {
        pipeline::task_support(&self.inner, tool)
    }

    /// Whether a call of `tool` reaches an enabled tool (by any spelling) or a mounted one:
    /// `false` for what a call answers `UNKNOWN_ACTION`.
    #[cfg(feature = "server-http")]
    pub(crate) fn leads_somewhere(&self, tool: &str) -> bool {
        pipeline::leads_somewhere(&self.inner, tool)
    }

    /// Whether any action runs as a task (the server then advertises the tasks extension).
    pub fn has_tasks(&self) -> bool {
        !self.inner.tasked.is_empty()
    }

    /// Whether any action runs only as a task (`task = "required"`).
    #[cfg(feature = "server-http")]
    pub(crate) fn has_required_tasks(&self) -> bool {
        self.inner
            .tasked
            .values()
            .any(|t| *t == crate::TaskSupport::Required)
    }

    /// Shares change notifications through `bus` from now on (the `serve --redis-url` flag):
    /// for a server built without [`ServerBuilder::change_bus`], before it serves. `Err`
    /// (with the bus given back) when one is already set.
    pub fn set_change_bus(&self, bus: Arc<dyn ChangeBus>) -> Result<(), Arc<dyn ChangeBus>> {
        self.notifier().attach_bus(bus)
    }

    /// Runs one call through the whole pipeline. Never fails and never panics: every failure
    /// is a response carrying an envelope.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        scope: RequestScope,
    ) -> ToolResponse {
        pipeline::call(&self.inner, tool, arguments, scope).await
    }

    /// [`Server::call`] from in-process code, with no MCP peer; `arguments` should be a JSON
    /// object (anything else is reported to the caller as a validation error).
    pub async fn call_json(&self, tool: &str, arguments: serde_json::Value) -> ToolResponse {
        match arguments {
            serde_json::Value::Object(map) => {
                self.call(tool, Some(map), RequestScope::detached()).await
            }
            serde_json::Value::Null => self.call(tool, None, RequestScope::detached()).await,
            other => pipeline::not_an_object(tool, &other),
        }
    }

    /// The answer for a `tools/call` whose `name` is missing or not a string (`name` is
    /// then `None`; `sent_name` is what was sent, as text) or whose `arguments` are not an
    /// object: `UNKNOWN_ACTION` when the name leads nowhere, else a `<validation_error>`
    /// naming `arguments`.
    #[cfg_attr(
        not(any(feature = "server-stdio", feature = "server-http")),
        allow(dead_code, reason = "called by mcp/ only")
    )]
    pub(crate) fn malformed_call(
        &self,
        name: Option<&str>,
        sent_name: &str,
        arguments: &serde_json::Value,
    ) -> ToolResponse {
        match name {
            Some(n) if self.inner.routes.contains_key(n) => {
                pipeline::arguments_not_an_object(n, arguments)
            }
            _ => ToolResponse::error(routing::unknown_tool(
                sent_name,
                &self.inner.known_tool_names(),
            )),
        }
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.name)
            .field("tools", &self.inner.tool_names)
            .finish()
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
    /// [`StaticIcon`](crate::action::StaticIcon)), which are not merged with them: the builder
    /// is where a deployment changes what the code says (another host, another theme), and an
    /// empty list hides the declared ones. A grouped tool has only the icons set here: its
    /// members' declared icons are not listed, on the group or anywhere else.
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
    /// attribute declares ([`StaticIcon`](crate::action::StaticIcon)); empty when there are
    /// none.
    pub fn icons_of(&self, item: super::Item, name: &str) -> &[Icon] {
        let listing = &self.inner.listing;
        listing.icon_index[listing::icon_slot(item)]
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

/// The icons the attributes declare, by the name each list shows: a tool exposed on its own
/// (flat exposure, or an ungrouped action), every prompt, resource and template. A grouped
/// tool takes none of its members' icons: they describe one action each, and which of them
/// would speak for the group would depend on registration order.
fn declared_icons(
    entries: &[ActionDescriptor],
    catalog: &Catalog,
) -> Vec<(super::Item, String, Vec<Icon>)> {
    let owned = |icons: &[crate::action::StaticIcon]| icons.iter().map(Icon::from).collect();
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
