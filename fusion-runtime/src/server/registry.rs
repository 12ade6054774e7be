//! The registry a built server keeps: one [`ActionDescriptor`] per action (its metadata,
//! handler and guards), the tools it is listed as, and the routes to them. Built by
//! `ServerBuilder::build`, read by the pipeline on every call.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
use serde_json::Value;

use super::failure::InternalErrors;
use super::limits::ActionGuards;
use super::middleware::Middleware;
use super::names::Names;
use super::routing::{Group, Routes};
use super::source::ToolSpec;
use crate::action::{ActionInfo, HandlerOutcome, ToolAction};
use crate::context::{CallContext, States};
use crate::contract::{ContractAwareness, ToolContract};
use crate::guard::ConcurrencyGuard;
use crate::input::ToolInput;
use crate::validation::ValidationReport;

/// One registered action, as the server keeps and exposes it: its metadata, the MCP tool it
/// is reached through and, in a grouped tool, its discriminator value — the plain data behind
/// `tools/list`, the `tools` command and contract files — and, inside, its handler and guards.
/// The server holds one entry per action.
#[derive(Clone)]
pub struct ActionDescriptor {
    /// The action's metadata, with the limits in force.
    pub info: ActionInfo,
    /// The MCP tool name it is exposed as.
    pub tool: String,
    /// Its discriminator value, when exposed through a grouped tool.
    pub discriminator: Option<String>,
    /// The handler, its input type erased.
    pub(crate) handler: Arc<dyn Erased>,
    /// The admit stage's guards.
    pub(crate) guards: Arc<ActionGuards>,
    /// `tool`, shared with every call routed here.
    pub(crate) routed_tool: Arc<str>,
    /// The one spelling envelopes name it by: the tool in flat exposure, `tool.action` in a
    /// grouped one (see [`Names`]).
    pub(crate) callable: Arc<str>,
}

impl fmt::Debug for ActionDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionDescriptor")
            .field("info", &self.info)
            .field("tool", &self.tool)
            .field("discriminator", &self.discriminator)
            .finish_non_exhaustive()
    }
}

/// A validated input waiting for its handler.
pub(crate) type Invocation =
    Box<dyn FnOnce(&CallContext) -> BoxFuture<'static, HandlerOutcome> + Send>;

/// How far [`Erased::start`] got.
pub(crate) enum Started {
    /// Validated, no middleware: the handler's future, started.
    Running(BoxFuture<'static, HandlerOutcome>),
    /// Validated, with middleware: the handler, for the chain's end to start.
    Chained(Invocation),
    /// The arguments failed validation.
    Invalid(ValidationReport),
    /// Validation panicked.
    ValidationPanicked,
    /// The handler panicked before returning its future.
    HandlerPanicked,
}

/// An action with its types erased.
pub(crate) trait Erased: Send + Sync {
    fn info(&self) -> &ActionInfo;
    /// Stage 3 and the start of stage 4, panics caught in both: validates `arguments`, then
    /// starts the handler on the typed input at once, unboxed — or, when `chained`, hands it
    /// over for the middleware chain's end to start.
    fn start(&self, arguments: &Value, cx: &CallContext, chained: bool) -> Started;
}

pub(crate) struct Registered<A> {
    info: OnceLock<ActionInfo>,
    _action: PhantomData<fn() -> A>,
}

impl<A: ToolAction> Registered<A> {
    pub(crate) fn new() -> Self {
        Registered {
            info: OnceLock::new(),
            _action: PhantomData,
        }
    }
}

impl<A: ToolAction> Erased for Registered<A> {
    fn info(&self) -> &ActionInfo {
        self.info.get_or_init(A::info)
    }

    fn start(&self, arguments: &Value, cx: &CallContext, chained: bool) -> Started {
        let validated = catch_unwind(AssertUnwindSafe(|| {
            <A::Input as ToolInput>::from_arguments(arguments)
        }));
        let input = match validated {
            Ok(Ok(input)) => input,
            Ok(Err(report)) => return Started::Invalid(report),
            Err(_) => return Started::ValidationPanicked,
        };
        if chained {
            return Started::Chained(Box::new(move |cx: &CallContext| A::call(input, cx)));
        }
        match catch_unwind(AssertUnwindSafe(|| A::call(input, cx))) {
            Ok(handler) => Started::Running(handler),
            Err(_) => Started::HandlerPanicked,
        }
    }
}

impl Inner {
    /// [`Server::may_call`](super::Server::may_call).
    pub(super) fn may_call(&self, tool: &str, principal: Option<&crate::auth::Principal>) -> bool {
        fn granted<'a>(
            mut required: impl Iterator<Item = &'a str>,
            p: Option<&crate::auth::Principal>,
        ) -> bool {
            match p {
                Some(p) => required.all(|s| p.has_scope(s)),
                None => required.next().is_none(),
            }
        }
        let inner = self;
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

    /// The names an `UNKNOWN_ACTION` answer picks the closest from: the server's enabled
    /// tools, then those every client sees of each source (not a handoff domain's), as
    /// listed now.
    pub(super) fn known_tool_names(&self) -> std::borrow::Cow<'_, [String]> {
        let mut names = self.all_tool_names();
        if !self.visibility.all_enabled() {
            let item = super::visibility::Item::Tool;
            names
                .to_mut()
                .retain(|n| self.visibility.is_enabled(item, n));
        }
        names
    }

    /// [`Inner::known_tool_names`], the disabled ones included.
    fn all_tool_names(&self) -> std::borrow::Cow<'_, [String]> {
        let mut shown = self.sources.iter().filter(|s| s.handoff_domain().is_none());
        if self.sources.is_empty() || shown.clone().next().is_none() {
            return std::borrow::Cow::Borrowed(&self.tool_names);
        }
        let mut all = self.tool_names.clone();
        for source in shown.by_ref() {
            all.extend(source.tool_names());
        }
        std::borrow::Cow::Owned(all)
    }
}

/// Everything a built server keeps, shared by its clones.
pub(super) struct Inner {
    pub(super) contracts: Vec<ToolContract>,
    pub(super) awareness: Option<ContractAwareness>,
    /// Self-healing for mounted tools, when it is on and the server has sources.
    pub(super) source_awareness: Option<super::source::SourceAwareness>,
    pub(super) lockfile: Option<PathBuf>,
    pub(super) name: String,
    pub(super) version: String,
    /// `name` and `version` as the MCP side writes them on every 2026-07-28 result
    /// (`serverInfo`), made once by that side.
    #[cfg_attr(
        not(any(feature = "server-stdio", feature = "server-http")),
        allow(dead_code)
    )]
    pub(super) stamp: std::sync::OnceLock<serde_json::Value>,
    pub(super) instructions: Option<String>,
    /// One entry per action, in registration order; routes and groups index into it.
    pub(super) entries: Vec<ActionDescriptor>,
    pub(super) tools: Vec<ToolSpec>,
    pub(super) tool_names: Vec<String>,
    pub(super) routes: Routes,
    pub(super) groups: Vec<Group>,
    pub(super) discriminator: String,
    pub(super) states: Arc<States>,
    pub(super) middleware: Arc<[Arc<dyn Middleware>]>,
    pub(super) internal: InternalErrors,
    pub(super) group_guards: HashMap<String, Arc<ConcurrencyGuard>>,
    /// Guards set by name for mounted tools (`finance_get_invoice`).
    pub(super) mounted_guards: HashMap<String, super::limits::ActionGuards>,
    /// Scopes set by name for mounted tools, on top of their mount's.
    pub(super) mounted_scopes: HashMap<String, Vec<std::borrow::Cow<'static, str>>>,
    pub(super) catalog: crate::server::catalog::Catalog,
    pub(super) auth: Option<Arc<crate::auth::Auth>>,
    pub(super) shared: super::limits::SharedStore,
    pub(super) list_cache: crate::server::ListCache,
    pub(super) request_state_key: Option<Arc<[u8]>>,
    /// The names envelopes show, as clients call them.
    pub(super) names: Arc<Names>,
    /// One-time ids (see [`Server::once_store`](super::Server::once_store)).
    pub(super) once: Arc<std::sync::OnceLock<Arc<dyn crate::store::OnceStore>>>,
    /// The tools whose action runs as a task, and how (see
    /// [`Server::task_support`](super::Server::task_support)); empty for most servers.
    pub(super) tasked: std::collections::HashMap<String, crate::TaskSupport>,
    /// MCP tasks (see [`Server::task_store`](super::Server::task_store)).
    pub(super) tasks: Arc<std::sync::OnceLock<Arc<dyn crate::store::TaskStore>>>,
    /// The tasks whose work runs in this process now.
    #[cfg_attr(
        not(any(feature = "server-stdio", feature = "server-http")),
        allow(dead_code)
    )]
    pub(super) running: Arc<super::running::Running>,
    /// What each 2025 session's client can answer a task's question with.
    #[cfg(feature = "server-http")]
    pub(super) session_asks: crate::store::tasks::SessionAsks,
    /// The 2025 `tasks/result` streams this process holds open, by client.
    #[cfg(any(feature = "server-http", feature = "server-stdio"))]
    pub(super) result_streams: Arc<crate::store::tasks::ResultStreams>,
    pub(super) read_cache: super::ReadCache,
    pub(super) sources: Vec<Arc<dyn super::source::ToolSource>>,
    /// What is disabled now.
    pub(super) visibility: super::visibility::Visibility,
    /// Method middleware, page size, icons.
    pub(super) listing: super::listing::Listing,
    /// With tool search on: the actions' tools, which `tools/list` does not show (it shows
    /// the three of [`tool_search`](super::tool_search)); empty otherwise.
    pub(super) searchable: Vec<ToolSpec>,
    /// Whether tool search is on.
    pub(super) tool_search: bool,
    /// Set when the server stops the calls still running (the end of an HTTP drain's grace):
    /// a call cancelled from then on was stopped by the server, not by its client.
    pub(super) stopping: std::sync::atomic::AtomicBool,
}
