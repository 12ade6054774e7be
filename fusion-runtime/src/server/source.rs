//! Tools served by something other than the server's own actions — the upstream MCP servers
//! the gateway mounts ([`ServerBuilder::mount`](crate::ServerBuilder::mount)). A source owns
//! every tool name under its prefix; the pipeline routes a name no action has to the source
//! that owns it, and `tools/list` shows the server's tools, then each source's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::sync::watch;

use crate::action::Hints;
use crate::context::RequestScope;
use crate::contract::{ContractAwareness, ToolContract, diff};
use crate::envelope::{Content, ToolError, ToolResponse, codes};
use crate::input::JsonObject;

/// One MCP tool as `tools/list` shows it, before the MCP bridge writes it in the protocol's
/// types: a flat action's tool, or a grouped tool standing for its members.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// Its human-readable title, if any.
    pub title: Option<String>,
    /// Its description (a deprecated action's starts with `DEPRECATED: `).
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Arc<JsonObject>,
    /// The JSON Schema of its structured result, if any.
    pub output_schema: Option<Arc<JsonObject>>,
    /// Its annotations; `None` shows none.
    pub hints: Option<Hints>,
}

/// Tools a server serves besides its actions: their list changes at run time, and each call
/// is answered by the source, never by the pipeline's validation stage.
pub trait ToolSource: Send + Sync + 'static {
    /// The source's name (a mount's prefix, `finance`): what
    /// [`CallContext::action`](crate::context::CallContext::action) and
    /// [`CallContext::mount`](crate::context::CallContext::mount) say for a call of one of its tools.
    fn name(&self) -> &'static str;

    /// Called once by [`ServerBuilder::build`](super::ServerBuilder::build) with the
    /// separator flat exposure puts in place of `.` (`_` for grouped exposure), and the
    /// server's change notifier: the source calls
    /// [`Notifier::tools_list_changed`](crate::Notifier::tools_list_changed) when its tools
    /// change, which reaches 2025 sessions and 2026-07-28 listens alike.
    fn bind(&self, separator: &str, changes: &crate::Notifier);

    /// Whether `tool` is under this source's prefix: the source answers every call of it,
    /// known tool or not.
    fn owns(&self, tool: &str) -> bool;

    /// The tools to list now, named as clients call them. May wait (bounded) for a first
    /// connection.
    fn tools(&self) -> BoxFuture<'_, Vec<ToolSpec>>;

    /// Runs one call. Never fails and never panics: every failure is a response carrying an
    /// envelope. The pipeline races it against the request's cancellation.
    fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        scope: RequestScope,
    ) -> BoxFuture<'static, ToolResponse>;

    /// A counter bumped whenever the listed tools change (MCP `notifications/tools/list_changed`).
    fn changes(&self) -> watch::Receiver<u64>;

    /// The names of the tools it lists now, without waiting for anything (none before its
    /// first connection): where an `UNKNOWN_ACTION` answer looks for the closest name.
    fn tool_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// What it is, for people (`stdio: billing serve`, `http://…/mcp`).
    fn describe(&self) -> String {
        self.name().to_owned()
    }

    /// `Err(why)` when its tools cannot be reached now (its upstream is down or never
    /// answered); `Ok` by default.
    fn reachable(&self) -> Result<(), String> {
        Ok(())
    }

    /// The OAuth scopes every call of its tools requires (a mount's
    /// [`MountOptions::scopes`](crate::gateway::MountOptions::scopes)): listed in the
    /// server's [`declared_scopes`](crate::Server::declared_scopes). None by default.
    fn scopes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The domain a session enters only by handoff, when this source is one: its tools are
    /// listed only to sessions handed off to it. `None` (the default): listed to everyone.
    fn handoff_domain(&self) -> Option<&str> {
        None
    }

    /// The tools to list to requests with no session (MCP 2026-07-28), where a handoff
    /// domain's tools take the handle as an argument. The same as [`ToolSource::tools`] by
    /// default.
    fn stateless_tools(&self) -> BoxFuture<'_, Vec<ToolSpec>> {
        self.tools()
    }
}

/// The tool a session handed off to a domain calls to come back.
pub const RETURN_TOOL: &str = "gateway_return_to_triage";

/// The return tool, as listed to a handed-off session.
pub(crate) fn return_tool(server: &str) -> ToolSpec {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), JsonObject::new().into());
    schema.insert("additionalProperties".into(), false.into());
    ToolSpec {
        name: RETURN_TOOL.to_owned(),
        title: None,
        description: format!(
            "Leave the current domain and return to {server}: its own tools are listed again."
        ),
        input_schema: std::sync::Arc::new(schema),
        output_schema: None,
        hints: None,
    }
}

/// `HANDOFF_NAMESPACE_MISMATCH`: `tool` is not one of the active domain's `tools`
/// (`handed_off`: the session is in a domain, else in the server itself).
pub(crate) fn namespace_mismatch(
    tool: &str,
    active: &str,
    tools: &[String],
    handed_off: bool,
) -> ToolError {
    let recovery = if handed_off {
        format!(
            "Use one of {active}'s tools below, or call {RETURN_TOOL} first when a tool of another domain is needed"
        )
    } else {
        format!(
            "Use one of {active}'s tools below; another domain's tools are reached by a handoff from one of them"
        )
    };
    ToolError::new(
        codes::HANDOFF_NAMESPACE_MISMATCH,
        format!("{tool} is not a tool of the active domain, {active}"),
    )
    .recovery(recovery)
    .available_actions(tools.iter().take(super::routing::MAX_LISTED_TOOLS).cloned())
    .detail("active_domain", active)
    .detail("requested", tool)
}

/// The contract a mounted tool is locked and compared by: named by its tool name.
pub(crate) fn contract_of(spec: ToolSpec) -> ToolContract {
    let mut c = ToolContract::new(
        spec.name.clone(),
        spec.name,
        spec.description,
        serde_json::Value::Object(spec.input_schema.as_ref().clone()),
    );
    if let Some(hints) = spec.hints {
        c = c.with_annotations(hints);
    }
    c
}

/// Self-healing for mounted tools: the lockfile's contracts of the sources' tools, diffed
/// against what each source lists now whenever its list changed, into the same
/// `<contract_awareness>` sections actions get.
pub(crate) struct SourceAwareness {
    locked: Vec<ToolContract>,
    cap: usize,
    /// Per source (by index): the change count the sections were built at, and the sections.
    built: Mutex<HashMap<usize, (u64, Arc<ContractAwareness>)>>,
}

impl SourceAwareness {
    pub(crate) fn new(locked: Vec<ToolContract>, cap: usize) -> Self {
        SourceAwareness {
            locked,
            cap,
            built: Mutex::default(),
        }
    }

    /// The sections for the tools of `source` (the `index`-th) as it lists them now.
    pub(crate) async fn of(&self, index: usize, source: &dyn ToolSource) -> Arc<ContractAwareness> {
        let seen = *source.changes().borrow();
        if let Some((at, built)) = self.lock().get(&index)
            && *at == seen
        {
            return Arc::clone(built);
        }
        let old: Vec<ToolContract> = self
            .locked
            .iter()
            .filter(|c| source.owns(&c.action))
            .cloned()
            .collect();
        let now: Vec<ToolContract> = source
            .stateless_tools()
            .await
            .into_iter()
            .map(contract_of)
            .collect();
        let built = Arc::new(ContractAwareness::new(diff(&old, &now), self.cap));
        self.lock().insert(index, (seen, Arc::clone(&built)));
        built
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, (u64, Arc<ContractAwareness>)>> {
        self.built.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `response` (a mounted tool's failure) with `section` (`<contract_awareness>`) in each
/// envelope that may come from the arguments: a `<validation_error>`, or a `<tool_error>`
/// coded `VALIDATION_ERROR`, `MISSING_REQUIRED_FIELD` or `INTERNAL_ERROR` (how a plain MCP
/// server's refusal of its arguments reaches the model). Placed last, indented two spaces, as
/// an action's; an envelope that already has a section (its upstream heals itself) is left
/// alone.
pub(crate) fn with_awareness(mut response: ToolResponse, section: &str) -> ToolResponse {
    const CLOSES: [(&str, &str); 4] = [
        ("<validation_error", "\n</validation_error>"),
        ("<tool_error code=\"VALIDATION_ERROR\"", "\n</tool_error>"),
        (
            "<tool_error code=\"MISSING_REQUIRED_FIELD\"",
            "\n</tool_error>",
        ),
        ("<tool_error code=\"INTERNAL_ERROR\"", "\n</tool_error>"),
    ];
    for block in &mut response.content {
        let Content::Text(text) = block else { continue };
        let Some((_, close)) = CLOSES.iter().find(|(open, _)| text.starts_with(open)) else {
            continue;
        };
        if !text.ends_with(close) || text.contains("<contract_awareness>") {
            continue;
        }
        let mut out = String::with_capacity(text.len() + section.len() + 64);
        out.push_str(&text[..text.len() - close.len()]);
        for line in section.lines() {
            out.push_str("\n  ");
            out.push_str(line);
        }
        out.push_str(close);
        *text = out;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::{Issue, IssueKind, ValidationReport};

    #[test]
    fn the_section_goes_where_an_actions_goes() {
        let section = "<contract_awareness>\n  <delta/>\n</contract_awareness>";
        let report = ValidationReport::new(vec![Issue::new(
            "id",
            IssueKind::InvalidType {
                expected: "a string".into(),
            },
            Some(serde_json::json!(1)),
        )]);
        let upstream = ToolResponse {
            content: vec![Content::Text(report.render("billing.get_invoice"))],
            is_error: true,
            structured_content: None,
        };
        let healed = with_awareness(upstream, section);
        assert_eq!(
            healed.content[0].as_text(),
            Some(
                report
                    .render_with_sections("billing.get_invoice", &[section])
                    .as_str()
            )
        );
        let again = with_awareness(healed.clone(), section);
        assert_eq!(again, healed, "one section at most");
        let business = ToolResponse::error(ToolError::new(codes::NOT_FOUND, "No invoice"));
        assert_eq!(with_awareness(business.clone(), section), business);
        let internal = ToolResponse::error(ToolError::new(codes::INTERNAL_ERROR, "It failed"));
        let text = with_awareness(internal, section).content[0]
            .as_text()
            .map(str::to_owned)
            .unwrap_or_default();
        assert!(
            text.ends_with(
                "\n  <contract_awareness>\n    <delta/>\n  </contract_awareness>\n</tool_error>"
            ),
            "{text}"
        );
        assert!(crate::client::parse_envelope(&text).is_ok());
    }
}
