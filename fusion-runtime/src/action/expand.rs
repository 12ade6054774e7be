//! What `#[tool_action]` expands to calls.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

pub use futures::future::BoxFuture;

pub use super::{
    ActionInfo, ActionLimits, HandlerOutcome, HandlerReturn, Hints, IntoActionOutput, NoInput,
    TaskSupport, handler_outcome,
};
pub use super::{IconTheme, StaticIcon};
pub use crate::context::{CallContext, FromCallContext, StateRequirement};

use super::HandlerFailure;
use crate::envelope::ToolError;
use crate::guard::{ConcurrencyLimit, RateLimit};
use crate::input::JsonObject;
use crate::validation::DeprecatedField;

/// Builds an action's metadata (`#[tool_action]`'s `info()`).
#[allow(clippy::too_many_arguments)]
pub fn action_info(
    name: &'static str,
    title: Option<&'static str>,
    description: &'static str,
    hints: Hints,
    deprecated: Option<&'static str>,
    input_schema: Arc<JsonObject>,
    deprecated_fields: Arc<[DeprecatedField]>,
    output_schema: Option<Arc<JsonObject>>,
    state: Option<StateRequirement>,
) -> ActionInfo {
    ActionInfo {
        name,
        title: title.map(Cow::Borrowed),
        description: description_text(description),
        hints,
        deprecated: deprecated.map(Cow::Borrowed),
        input_schema,
        deprecated_fields,
        output_schema,
        state,
        limits: ActionLimits::none(),
        scopes: Vec::new(),
        task: TaskSupport::Forbidden,
        icons: &[],
    }
}

/// Sets the icons an action declares (`icon = ".."`, `icon(..)`).
pub fn with_icons(mut info: ActionInfo, icons: &'static [StaticIcon]) -> ActionInfo {
    info.icons = icons;
    info
}

/// Sets whether the action runs as a task (`task`, `task = "optional" | "required"`).
pub fn with_task(mut info: ActionInfo, task: TaskSupport) -> ActionInfo {
    info.task = task;
    info
}

/// Sets the scopes an action requires (`scopes = [..]`), sorted and without repeats.
pub fn with_scopes(mut info: ActionInfo, scopes: &[&'static str]) -> ActionInfo {
    let mut scopes: Vec<Cow<'static, str>> = scopes.iter().map(|s| Cow::Borrowed(*s)).collect();
    scopes.sort();
    scopes.dedup();
    info.scopes = scopes;
    info
}

/// Sets the guards an action declares (`max_active`, `rate_limit`, `timeout`, …).
pub fn with_limits(mut info: ActionInfo, limits: ActionLimits) -> ActionInfo {
    info.limits = limits;
    info
}

/// `max_active` running, `max_queue` waiting.
pub fn concurrency_limit(max_active: usize, max_queue: usize) -> ConcurrencyLimit {
    ConcurrencyLimit::new(max_active, max_queue)
}

/// `calls` per `per_millis` milliseconds, bursts of `burst` (`calls` when `None`).
pub fn rate_limit(calls: u32, per_millis: u64, burst: Option<u32>, per_client: bool) -> RateLimit {
    let limit = RateLimit::new(calls, Duration::from_millis(per_millis));
    let limit = match burst {
        Some(b) => limit.burst(b),
        None => limit,
    };
    if per_client {
        limit.per_client()
    } else {
        limit
    }
}

/// A duration in milliseconds.
pub fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// Doc-comment text as a description: each line's single leading space removed, the whole
/// trimmed.
pub fn description_text(doc: &'static str) -> Cow<'static, str> {
    if !doc.contains('\n') && !doc.starts_with(' ') && doc.trim() == doc {
        return Cow::Borrowed(doc);
    }
    let lines: Vec<&str> = doc
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect();
    Cow::Owned(lines.join("\n").trim().to_owned())
}

/// A handler that fails before it starts (its context could not be built).
pub fn fail_now(e: ToolError) -> BoxFuture<'static, HandlerOutcome> {
    Box::pin(std::future::ready(Err(HandlerFailure::Tool(e))))
}

/// Finds an output type's JSON Schema when it has one (autoref specialization: the
/// expansion calls `(&OutputProbe::<T>::new()).output_schema()` with both traits in scope).
pub struct OutputProbe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> OutputProbe<T> {
    /// A probe.
    pub fn new() -> Self {
        OutputProbe(PhantomData)
    }
}

impl<T: ?Sized> Default for OutputProbe<T> {
    fn default() -> Self {
        OutputProbe::new()
    }
}

/// Chosen when the output implements `JsonSchema`.
pub trait ViaJsonSchema {
    /// The schema, when it describes an object (MCP's `outputSchema` must).
    fn output_schema(&self) -> Option<Arc<JsonObject>>;
}

impl<T: schemars::JsonSchema + ?Sized> ViaJsonSchema for OutputProbe<T> {
    fn output_schema(&self) -> Option<Arc<JsonObject>> {
        super::output_schema_for::<T>()
    }
}

/// Chosen otherwise.
pub trait ViaNothing {
    /// No schema.
    fn output_schema(&self) -> Option<Arc<JsonObject>>;
}

impl<T: ?Sized> ViaNothing for &OutputProbe<T> {
    fn output_schema(&self) -> Option<Arc<JsonObject>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_comments_become_descriptions() {
        assert_eq!(description_text("Plain."), "Plain.");
        assert_eq!(
            description_text(" Get one invoice.\n\n Second paragraph."),
            "Get one invoice.\n\nSecond paragraph."
        );
        assert_eq!(description_text("  indented code\n"), "indented code");
    }
}
