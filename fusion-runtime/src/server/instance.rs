//! The server itself: [`Server`], cheap to clone, shared by every connection — calls, lists,
//! what each caller sees. [`ServerBuilder`] (`builder.rs`, `build.rs`) makes it.

use std::fmt;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use futures::FutureExt as _;

use super::catalog::Catalog;
use super::listing::{Answer, Icon, MethodAnswer, MethodNext, MethodRequest};
use super::registry::{ActionDescriptor, Inner};
use super::{
    CallContext, ListCache, ToolSource, ToolSpec, Visibility, listing, pipeline, respond, routing,
    source,
};
use crate::auth::Auth;
use crate::auth::Principal;
use crate::context::{Notifier, RequestScope};
use crate::contract::{ContractAwareness, ToolContract};
use crate::envelope::{ToolError, ToolResponse, codes};
use crate::guard::{GuardState, SharedLimits};
use crate::input::JsonObject;
use crate::store::{ChangeBus, OnceStore, TaskStore};

use super::builder::ServerBuilder;

/// A Fusion server: cheap to clone, shared by every connection.
#[derive(Clone)]
pub struct Server {
    pub(super) inner: Arc<Inner>,
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

    /// The argument a grouped tool's call names its action in (`action` unless the exposure
    /// says otherwise): the test kit's typed call adds it, as a client does.
    #[cfg(feature = "testing")]
    pub(crate) fn discriminator_key(&self) -> &str {
        &self.inner.discriminator
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
        if self.inner.tool_search {
            return all;
        }
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
        if self.inner.tool_search {
            return all;
        }
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

    /// Attaches a backend's stores to a built server (what `serve --redis-url` does): each
    /// store the bundle has is set unless the server already has one (from its builder, or an
    /// earlier attach), which stays; tasks only when the server has task actions. Returns
    /// the kinds that were already set and kept (`"rate limits"`, `"one-time ids"`,
    /// `"tasks"`, `"change notifications"`), for the caller to refuse or allow.
    pub fn attach_stores(
        &self,
        stores: crate::store::Stores,
        on_failure: crate::guard::OnStoreFailure,
    ) -> Vec<&'static str> {
        let crate::store::Stores {
            rate_limits,
            once,
            tasks,
            change_bus,
        } = stores;
        let mut kept = Vec::new();
        if let Some(store) = rate_limits {
            let limits = Arc::new(SharedLimits::new(store, on_failure));
            if self.set_rate_limit_store(limits).is_err() {
                kept.push("rate limits");
            }
        }
        if let Some(store) = once
            && self.set_once_store(store).is_err()
        {
            kept.push("one-time ids");
        }
        if let Some(store) = tasks
            && self.has_tasks()
            && self.set_task_store(store).is_err()
        {
            kept.push("tasks");
        }
        if let Some(bus) = change_bus
            && self.set_change_bus(bus).is_err()
        {
            kept.push("change notifications");
        }
        kept
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
    #[cfg(any(feature = "server-http", feature = "server-stdio"))]
    pub(crate) fn leads_somewhere(&self, tool: &str) -> bool {
        pipeline::leads_somewhere(&self.inner, tool)
    }

    /// The tasks whose work runs in this process now (the task runner counts them).
    #[cfg_attr(
        not(any(feature = "server-stdio", feature = "server-http")),
        allow(dead_code)
    )]
    pub(crate) fn running_tasks(&self) -> &Arc<super::running::Running> {
        &self.inner.running
    }

    /// From now on, a call whose request is cancelled was stopped by the server (it is
    /// shutting down and the drain's grace is over), not by its client: its answer says so,
    /// with `SERVER_BUSY` (another instance can take the call), rather than `CANCELLED`.
    #[cfg(feature = "server-http")]
    pub(crate) fn stop_calls(&self) {
        self.inner
            .stopping
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether any action runs as a task (the server then advertises the tasks extension).
    pub fn has_tasks(&self) -> bool {
        !self.inner.tasked.is_empty()
    }

    /// What each 2025 session's client can answer a task's question with.
    #[cfg(feature = "server-http")]
    pub(crate) fn session_asks(&self) -> &crate::store::tasks::SessionAsks {
        &self.inner.session_asks
    }

    /// The 2025 `tasks/result` streams this process holds open, by client.
    #[cfg(any(feature = "server-http", feature = "server-stdio"))]
    pub(crate) fn result_streams(&self) -> &Arc<crate::store::tasks::ResultStreams> {
        &self.inner.result_streams
    }

    /// Whether any action runs only as a task (`task = "required"`).
    #[cfg(any(feature = "server-http", feature = "server-stdio"))]
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
            other => respond::not_an_object(tool, &other),
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
                respond::arguments_not_an_object(n, arguments)
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
        self.inner.may_call(tool, principal)
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
                .recovery(super::INTERNAL_RECOVERY)
                .critical()
            }),
        }
    }
}
