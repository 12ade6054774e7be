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

/// Every name an envelope may show, as the server's clients call it: an action's name (or
/// its callable spelling) → its callable spelling — the tool name in flat exposure
/// (`billing_list_invoices`), `tool.action` in a grouped one (`billing.list_invoices`, which
/// routing also takes as a tool name) — and a mounted tool's name → itself.
#[derive(Default)]
pub(crate) struct Names {
    callable: std::collections::HashMap<String, Arc<str>>,
    sources: Vec<Arc<dyn super::source::ToolSource>>,
}

impl Names {
    /// The names of `actions`, each an action's registered name and its callable spelling.
    pub(crate) fn new<'a>(
        actions: impl IntoIterator<Item = (&'a str, &'a Arc<str>)>,
        sources: &[Arc<dyn super::source::ToolSource>],
    ) -> Self {
        let mut callable = std::collections::HashMap::new();
        for (name, spelled) in actions {
            callable.insert(name.to_owned(), Arc::clone(spelled));
            callable.insert(spelled.to_string(), Arc::clone(spelled));
        }
        Names {
            callable,
            sources: sources.to_vec(),
        }
    }

    /// How clients call the action `name` (registered), or `name` itself when it names no
    /// action (a mounted tool's name): the spelling every framework-written sentence uses
    /// (`SERVER_BUSY`, `TIMEOUT`, `RATE_LIMITED`, `DEPRECATED`, `INTERNAL_ERROR`, …).
    pub(crate) fn spelled<'a>(&'a self, name: &'a str) -> &'a str {
        self.callable.get(name).map_or(name, |c| c)
    }

    /// `text` with every action name in it written as clients call it: a word (letters,
    /// digits, `_`, `-`, `.`; a sentence's closing dots are not part of it) that is an
    /// action's registered name or callable spelling. Other words, a mounted tool's name
    /// included, are left as they are. For what names actions inside a sentence of the
    /// framework's or a declaration's (a deprecation's note, a contract delta), never for
    /// a handler's free text.
    pub(crate) fn spell_in<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
        let mut out = String::new();
        let mut done = 0;
        let mut rest = text.char_indices().peekable();
        while let Some((start, c)) = rest.next() {
            if !word(c) {
                continue;
            }
            let mut end = start + c.len_utf8();
            while let Some(&(i, c)) = rest.peek().filter(|(_, c)| word(*c)) {
                end = i + c.len_utf8();
                rest.next();
            }
            let token = text[start..end].trim_end_matches('.');
            // Only a dotted name is ever spelled otherwise (`place` keeps an undotted one):
            // the other words are not looked up.
            if let Some(spelled) = token
                .contains('.')
                .then(|| self.callable.get(token))
                .flatten()
                && **spelled != *token
            {
                out.push_str(&text[done..start]);
                out.push_str(spelled);
                done = start + token.len();
            }
        }
        if done == 0 {
            return std::borrow::Cow::Borrowed(text);
        }
        out.push_str(&text[done..]);
        std::borrow::Cow::Owned(out)
    }

    /// How clients call `name`, or `None` when no action or mounted tool goes by it.
    pub(crate) fn callable(&self, name: &str) -> Option<String> {
        if let Some(c) = self.callable.get(name) {
            return Some(c.to_string());
        }
        if self.sources.iter().any(|s| s.owns(name)) {
            return Some(name.to_owned());
        }
        tracing::warn!(
            name = super::routing::loggable(name),
            "an envelope named an action this server does not have: left out"
        );
        None
    }

    /// The action `name` calls when it is an action's name or callable spelling that is not
    /// itself a tool (`billing.list_invoices` in flat exposure).
    pub(crate) fn action_of(&self, name: &str) -> Option<&Arc<str>> {
        self.callable.get(name)
    }
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
    pub(super) read_cache: super::ReadCache,
    pub(super) sources: Vec<Arc<dyn super::source::ToolSource>>,
    /// What is disabled now.
    pub(super) visibility: super::visibility::Visibility,
    /// Method middleware, page size, icons.
    pub(super) listing: super::listing::Listing,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pairs: &[(&str, &str)]) -> Names {
        let spelled: Vec<(&str, Arc<str>)> =
            pairs.iter().map(|(n, c)| (*n, Arc::from(*c))).collect();
        Names::new(spelled.iter().map(|(n, c)| (*n, c)), &[])
    }

    #[test]
    fn spell_in_rewrites_whole_action_names_only() {
        let n = names(&[
            ("billing.get_invoice", "billing_get_invoice"),
            ("ping", "ping"),
        ]);
        let spelled = |t: &str| n.spell_in(t).into_owned();
        assert_eq!(
            spelled("use billing.get_invoice instead."),
            "use billing_get_invoice instead."
        );
        assert_eq!(spelled("billing.get_invoice."), "billing_get_invoice.");
        assert_eq!(
            spelled("'billing.get_invoice' (billing.get_invoice)"),
            "'billing_get_invoice' (billing_get_invoice)"
        );
        // A longer word, another action's, a callable spelling and free words stay.
        for kept in [
            "billing.get_invoices",
            "xbilling.get_invoice",
            "billing.get_invoice_v2",
            "billing_get_invoice",
            "ping me",
            "No invoice inv_2026_0001",
            "",
        ] {
            assert!(
                matches!(n.spell_in(kept), std::borrow::Cow::Borrowed(_)),
                "{kept}"
            );
        }
        assert_eq!(n.spelled("billing.get_invoice"), "billing_get_invoice");
        assert_eq!(n.spelled("finance_get_invoice"), "finance_get_invoice");
    }
}
