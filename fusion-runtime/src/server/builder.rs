//! How a server is made: [`ServerBuilder`], everything a server is built from (its setters;
//! [`ServerBuilder::build`], which checks them once, is in `build.rs`), and [`BuildError`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::catalog::{CatalogBuildError, CatalogBuilder};
use super::failure::InternalErrors;
use super::listing::{Icon, MethodMiddleware};
use super::registry::{Erased, Registered};
use super::{
    CacheScope, Exposure, Item, ListCache, ListenLimits, MAX_PAGE_SIZE, Middleware, ReadCache,
    ToolSource, limits, listing,
};
use crate::action::ToolAction;
use crate::auth::{Auth, AuthConfigError};
use crate::context::States;
use crate::contract::ContractAwareness;
use crate::guard::{ConcurrencyLimit, OnStoreFailure, RateLimit, RateLimitStore, SharedLimits};
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
    /// An OpenAPI document cannot be mounted (`ServerBuilder::openapi`, feature `openapi`): the error is an
    /// `openapi::OpenApiError` (downcast it to read the operation and the JSON pointer).
    #[error("{0}")]
    OpenApi(Box<dyn std::error::Error + Send + Sync>),
}

/// Builds a [`Server`](crate::Server).
pub struct ServerBuilder {
    pub(super) name: String,
    pub(super) version: String,
    pub(super) instructions: Option<String>,
    pub(super) actions: Vec<Arc<dyn Erased>>,
    pub(super) states: States,
    pub(super) middleware: Vec<Arc<dyn Middleware>>,
    pub(super) exposure: Exposure,
    pub(super) internal: InternalErrors,
    pub(super) lockfile: Option<PathBuf>,
    pub(super) self_healing_cap: Option<usize>,
    pub(super) guards: limits::GuardConfig,
    pub(super) catalog: CatalogBuilder,
    pub(super) auth: AuthConfig,
    pub(super) list_cache: ListCache,
    pub(super) sources: Vec<Arc<dyn ToolSource>>,
    pub(super) changes: (usize, ListenLimits),
    pub(super) request_state_key: Option<Arc<[u8]>>,
    pub(super) once: Option<Arc<dyn OnceStore>>,
    pub(super) tasks: Option<Arc<dyn TaskStore>>,
    pub(super) read_cache: ReadCache,
    pub(super) change_bus: Option<Arc<dyn ChangeBus>>,
    pub(super) max_result_bytes: usize,
    /// What starts disabled ([`ServerBuilder::disabled`]).
    pub(super) disabled: Vec<(Item, String)>,
    /// Method middleware, page size, icons ([`listing`]).
    pub(super) listing: listing::Listing,
    /// A fault found while registering (a mounted document that cannot be read), reported by
    /// [`build`](ServerBuilder::build).
    pub(super) failed: Option<BuildError>,
    /// Tool search ([`ServerBuilder::tool_search`]).
    pub(super) tool_search: bool,
}

/// The result bound of an action that declares none: 1 MiB of text. Generous on purpose —
/// far above what a model reads well (a few hundred KiB of JSON already fills most context
/// windows), so no reasonable result is cut, yet it stops one runaway result (a whole table
/// dumped) from costing every client its memory and the model its context.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1 << 20;

/// The builder's authentication settings (see [`auth`](crate::auth)).
#[derive(Default)]
pub(super) struct AuthConfig {
    pub(super) auth: Option<Arc<Auth>>,
    pub(super) scopes: Vec<(String, Vec<String>)>,
    pub(super) store: Option<Arc<SharedLimits>>,
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
            failed: None,
            tool_search: false,
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
    /// gets list-changed notifications instead): the capacity of the [`Notifier`](crate::Notifier)'s channel
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

    /// Registers an action whose type is known only at run time (an OpenAPI operation's).
    #[cfg(feature = "openapi")]
    pub(crate) fn erased_action(mut self, action: Arc<dyn Erased>) -> Self {
        self.actions.push(action);
        self
    }

    /// Makes [`build`](Self::build) fail with `e` (the first such fault is kept).
    #[cfg(feature = "openapi")]
    pub(crate) fn fail(mut self, e: BuildError) -> Self {
        self.failed.get_or_insert(e);
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

    /// Keeps every rate limit's buckets in `store` (e.g. [`RedisStore`](crate::store::RedisStore)),
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

    /// Attaches a backend's stores at once (e.g. [`Redis::stores`](crate::store::Redis::stores),
    /// feature `redis`): each store the bundle has replaces the server's own, as
    /// [`rate_limit_store`](Self::rate_limit_store) (with `on_failure`),
    /// [`once_store`](Self::once_store), [`task_store`](Self::task_store) and
    /// [`change_bus`](Self::change_bus) would; what it leaves out stays as it is.
    pub fn stores(mut self, stores: crate::store::Stores, on_failure: OnStoreFailure) -> Self {
        let crate::store::Stores {
            rate_limits,
            once,
            tasks,
            change_bus,
        } = stores;
        if let Some(store) = rate_limits {
            self.auth.store = Some(Arc::new(SharedLimits::new(store, on_failure)));
        }
        self.once = once.or(self.once);
        self.tasks = tasks.or(self.tasks);
        self.change_bus = change_bus.or(self.change_bus);
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

    /// Tool search, for servers with more tools than a model's context holds (off by
    /// default): `tools/list` shows three tools — `search_tools`, `describe_tool`,
    /// `call_tool` ([`tool_search`](crate::server::tool_search)) — instead of every tool, and
    /// `call_tool` runs a call of the tool it names through the whole pipeline. Works with
    /// flat and grouped exposure alike (the tools found are the exposure's).
    pub fn tool_search(mut self, on: bool) -> Self {
        self.tool_search = on;
        self
    }

    /// Starts the server with `name` disabled: a tool (as `tools/list` shows it), a prompt,
    /// or a resource (its URI or URI template). [`Server::visibility`](crate::Server::visibility) enables it later
    /// (see [`Visibility`](crate::server::Visibility)). A name the server does not have is refused at build, unless a
    /// mounted source owns it.
    pub fn disabled(mut self, item: Item, name: impl Into<String>) -> Self {
        self.disabled.push((item, name.into()));
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
