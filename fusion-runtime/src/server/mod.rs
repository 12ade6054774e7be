//! The server: registered actions and states, routing, middleware and the call pipeline.
//!
//! ```text
//! let server = Server::builder()
//!     .name("billing")
//!     .state(Store::seeded())
//!     .action::<GetInvoiceAction>()
//!     .middleware(auth)
//!     .build()?;
//! fusion_runtime::cli::run(server).await
//! ```
//!
//! A call goes through [`Server::call`]: route → (guard slot) → validate → middleware →
//! handler → response. Every failure on the way is a [`ToolResponse`] carrying an envelope;
//! nothing panics out of it.

mod context;
mod failure;
mod guards;
mod middleware;
mod notify;
mod pipeline;
mod routing;

pub use context::{CallContext, Context, FromCallContext, RequestScope, StateRequirement};
pub use failure::{INTERNAL_RECOVERY, failure_from};
pub use guards::ClientKey;
pub use middleware::{CallRequest, FnMiddleware, Middleware, Next, middleware_fn};
pub use notify::{DEFAULT_LOG_LEVEL, LogLevel, LogThreshold};
pub use routing::{Exposure, MAX_TOOL_NAME_CHARS, Placement, SHOWN_NAME_CHARS, valid_tool_name};

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{Tool, ToolAnnotations};

use crate::action::{ActionInfo, ToolAction};
use crate::auth::Auth;
use crate::contract::{Annotations, ContractAwareness, ToolContract};
use crate::envelope::ToolResponse;
use crate::guard::{
    ConcurrencyLimit, GuardState, OnStoreFailure, RateLimit, RateLimitStore, SharedLimits,
};
use crate::input::JsonObject;
use context::States;
use failure::InternalErrors;
use pipeline::{Erased, Registered};
use routing::{Group, Route};

/// One action as the server exposes it: its metadata, the MCP tool it is reached through and,
/// in a grouped tool, its discriminator value. The plain data behind `tools/list`, the
/// `tools` command and contract files.
#[derive(Clone, Debug)]
pub struct ActionDescriptor {
    /// The action's metadata.
    pub info: ActionInfo,
    /// The MCP tool name it is exposed as.
    pub tool: String,
    /// Its discriminator value, when exposed through a grouped tool.
    pub discriminator: Option<String>,
}

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
    guards: guards::GuardConfig,
    auth: AuthConfig,
}

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
            exposure: Exposure::default(),
            internal: InternalErrors::default(),
            lockfile: None,
            self_healing_cap: None,
            guards: guards::GuardConfig::default(),
            auth: AuthConfig::default(),
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

    /// Limits how many calls of a group's actions (`billing` for `billing.*`, the tool of
    /// grouped exposure) run at once and wait, all actions together. Applies on top of each
    /// action's own limit, in flat and grouped exposure alike.
    pub fn group_concurrency(mut self, group: impl Into<String>, limit: ConcurrencyLimit) -> Self {
        self.guards.groups.push((group.into(), limit));
        self
    }

    /// Authenticates HTTP requests with `auth` (bearer tokens, `401`, Protected Resource
    /// Metadata): see [`auth`](crate::auth). [`HttpOptions::auth`](crate::mcp::HttpOptions::auth)
    /// overrides it per endpoint.
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth.auth = Some(Arc::new(auth));
        self
    }

    /// Requires the OAuth `scopes` for calls of `action`, replacing the ones it declares
    /// (`#[tool_action(scopes = [..])]`). Without a principal: `AUTH_REQUIRED`; missing one:
    /// `FORBIDDEN`.
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

    /// Checks the registrations and builds the server.
    pub fn build(self) -> Result<Server, BuildError> {
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
        crate::auth::apply_overrides(&mut infos, &self.auth.scopes).map_err(BuildError::Guard)?;
        let shared = guards::SharedStore::default();
        if let Some(store) = self.auth.store {
            let _ = shared.set(store);
        }
        let guards = self
            .guards
            .build(&mut infos, &shared)
            .map_err(BuildError::Guard)?;
        let layout = routing::layout(&infos, &self.exposure).map_err(BuildError::Exposure)?;
        let descriptors: Vec<ActionDescriptor> = infos
            .iter()
            .zip(&layout.placements)
            .map(|(info, p)| ActionDescriptor {
                info: info.clone(),
                tool: p.tool.clone(),
                discriminator: p.discriminator.clone(),
            })
            .collect();
        let discriminator = match &self.exposure {
            Exposure::Grouped { discriminator } => discriminator.clone(),
            Exposure::Flat { .. } => String::from("action"),
        };
        let tools = layout
            .tool_order
            .iter()
            .filter_map(|name| match layout.routes.get(name)? {
                Route::Action(i) => Some(action_tool(name, &infos[*i])),
                Route::Group(g) => {
                    let group = &layout.groups[*g];
                    let (description, schema, hints) =
                        routing::group_tool(group, &discriminator, &infos);
                    Some(Tool::new(name.clone(), description, schema).annotate(annotations(&hints)))
                }
            })
            .collect();
        let action_tools = descriptors
            .iter()
            .map(|d| Arc::from(d.tool.as_str()))
            .collect();
        let contracts = contracts_of(&descriptors);
        let awareness = match (&self.lockfile, self.self_healing_cap) {
            (Some(path), Some(cap)) => load_awareness(path, &contracts, cap),
            _ => None,
        };
        Ok(Server {
            inner: Arc::new(Inner {
                contracts,
                awareness,
                lockfile: self.lockfile,
                name: self.name,
                version: self.version,
                instructions: self.instructions,
                actions: self.actions,
                infos,
                descriptors,
                action_tools,
                tools,
                tool_names: layout.tool_order,
                routes: layout.routes,
                groups: layout.groups,
                discriminator,
                states: Arc::new(self.states),
                middleware: self.middleware.into(),
                internal: self.internal,
                guards,
                auth: self.auth.auth,
                shared,
            }),
        })
    }
}

fn contracts_of(descriptors: &[ActionDescriptor]) -> Vec<ToolContract> {
    descriptors
        .iter()
        .map(|d| {
            let h = &d.info.hints;
            let mut c = ToolContract::new(
                d.info.name,
                d.tool.clone(),
                d.info.description.to_string(),
                serde_json::Value::Object(d.info.input_schema.as_ref().clone()),
            )
            .with_annotations(Annotations {
                read_only: h.read_only,
                destructive: h.destructive,
                idempotent: h.idempotent,
                open_world: h.open_world,
            });
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

/// The frozen self-healing sections, or `None` (said once on stderr) when the lockfile
/// cannot be read. No deltas means no per-call cost at all.
fn load_awareness(
    path: &Path,
    contracts: &[ToolContract],
    cap: usize,
) -> Option<ContractAwareness> {
    match ContractAwareness::from_lockfile(path, contracts, cap) {
        Ok(a) if a.is_empty() => None,
        Ok(a) => Some(a),
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
            None
        }
    }
}

fn annotations(h: &crate::action::ActionHints) -> ToolAnnotations {
    ToolAnnotations::from_raw(None, h.read_only, h.destructive, h.idempotent, h.open_world)
}

fn action_tool(name: &str, info: &ActionInfo) -> Tool {
    let description = match &info.deprecated {
        Some(why) => format!("DEPRECATED: {why}. {}", info.description),
        None => info.description.to_string(),
    };
    let mut tool = Tool::new(name.to_owned(), description, info.input_schema.clone());
    if !info.hints.is_empty() {
        tool = tool.annotate(annotations(&info.hints));
    }
    if let Some(title) = &info.title {
        tool = tool.with_title(title.to_string());
    }
    if let Some(schema) = &info.output_schema {
        tool = tool.with_raw_output_schema(schema.clone());
    }
    tool
}

struct Inner {
    contracts: Vec<ToolContract>,
    awareness: Option<ContractAwareness>,
    lockfile: Option<PathBuf>,
    name: String,
    version: String,
    instructions: Option<String>,
    actions: Vec<Arc<dyn Erased>>,
    infos: Vec<ActionInfo>,
    descriptors: Vec<ActionDescriptor>,
    /// Each action's MCP tool name, in registration order: the name a call routed to it
    /// came by (a grouped tool's members share theirs).
    action_tools: Vec<Arc<str>>,
    tools: Vec<Tool>,
    tool_names: Vec<String>,
    routes: routing::Routes,
    groups: Vec<Group>,
    discriminator: String,
    states: Arc<States>,
    middleware: Arc<[Arc<dyn Middleware>]>,
    internal: InternalErrors,
    guards: guards::Guards,
    auth: Option<Arc<Auth>>,
    shared: guards::SharedStore,
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

    /// The instructions for the model, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// Every action, in registration order, with where it is exposed.
    pub fn actions(&self) -> &[ActionDescriptor] {
        &self.inner.descriptors
    }

    /// Every action's contract, as the lockfile records it.
    pub fn contracts(&self) -> &[ToolContract] {
        &self.inner.contracts
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

    /// The MCP tools, as `tools/list` answers them.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The concurrency guard of `action` now — calls running and waiting, and its limits —
    /// or `None` when the action is unknown or has no concurrency limit.
    pub fn guard_state(&self, action: &str) -> Option<GuardState> {
        let i = self.inner.infos.iter().position(|i| i.name == action)?;
        self.inner.guards.actions.get(i)?.state()
    }

    /// The concurrency guard of `group` (see [`ServerBuilder::group_concurrency`]) now, or
    /// `None` when the group has no limit.
    pub fn group_guard_state(&self, group: &str) -> Option<GuardState> {
        self.inner.guards.groups.get(group).map(|g| g.state())
    }

    /// The authentication set with [`ServerBuilder::auth`], if any.
    pub fn auth(&self) -> Option<&Arc<Auth>> {
        self.inner.auth.as_ref()
    }

    /// Every scope an action requires, sorted, once each.
    pub fn declared_scopes(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .inner
            .infos
            .iter()
            .flat_map(|i| i.scopes.iter().map(|s| s.to_string()))
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

    /// `tools/list` as JSON: `{"tools": [..]}`.
    pub fn tools_json(&self) -> serde_json::Value {
        serde_json::json!({ "tools": self.inner.tools })
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
            _ => ToolResponse::error(routing::unknown_tool(sent_name, &self.inner.tool_names)),
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
