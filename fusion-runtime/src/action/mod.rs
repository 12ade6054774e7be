//! Actions: what `#[tool_action]` registers — a name, a description, hints, an input type and
//! a handler.
//!
//! `#[tool_action]` on `async fn get_invoice(..)` leaves the function as written and emits a
//! unit struct `GetInvoiceAction` (the function name in PascalCase, then `Action`) that
//! implements [`ToolAction`]. Register that struct with
//! [`ServerBuilder::action`](crate::server::ServerBuilder::action); a typed client names it to
//! call the action.

#[doc(hidden)]
pub mod expand;
mod exposure;
mod icon;
mod internal;
mod no_input;

pub use exposure::{Exposure, Placement};
pub use icon::{IconTheme, StaticIcon};
pub use no_input::NoInput;

use std::borrow::Cow;
use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::context::{CallContext, StateRequirement};
use crate::envelope::{ToolError, ToolResponse};
use crate::guard::{ConcurrencyLimit, RateLimit};
use crate::input::{JsonObject, ToolInput};
use crate::validation::DeprecatedField;

/// Behaviour hints shown to clients as MCP tool annotations (`readOnlyHint`, …), as the author
/// wrote them: `None` leaves a hint unset, and the client applies MCP's default — not
/// read-only, destructive, not idempotent, open world. The one hints type of the crate: an
/// action declares it, the contract records it ([`ToolContract::annotations`](crate::contract::ToolContract::annotations)
/// is this type), `tools/list` shows it and a grouped tool merges its members' with
/// [`Hints::merge`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hints {
    /// `readOnlyHint`: the action does not modify its environment (MCP default `false`).
    pub read_only: Option<bool>,
    /// `destructiveHint`: the action may perform destructive updates (MCP default `true`).
    pub destructive: Option<bool>,
    /// `idempotentHint`: calling again with the same arguments has no further effect (MCP
    /// default `false`).
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the action interacts with external entities (MCP default `true`).
    pub open_world: Option<bool>,
}

/// The name [`Hints`] had before it was shared with the contract.
#[deprecated(since = "0.1.0", note = "use `Hints`; removed in 0.2.0")]
pub type ActionHints = Hints;

impl Hints {
    /// Whether any hint is set.
    pub fn is_empty(&self) -> bool {
        *self == Hints::default()
    }

    /// `readOnlyHint`, with MCP's default (`false`) when absent.
    pub fn effective_read_only(&self) -> bool {
        self.read_only.unwrap_or(false)
    }

    /// `destructiveHint`, with MCP's default (`true`) when absent.
    pub fn effective_destructive(&self) -> bool {
        self.destructive.unwrap_or(true)
    }

    /// `idempotentHint`, with MCP's default (`false`) when absent.
    pub fn effective_idempotent(&self) -> bool {
        self.idempotent.unwrap_or(false)
    }

    /// `openWorldHint`, with MCP's default (`true`) when absent.
    pub fn effective_open_world(&self) -> bool {
        self.open_world.unwrap_or(true)
    }

    /// The hints of one tool standing for all of `members` (a grouped tool), every hint set:
    /// read-only and idempotent only when every member is, destructive and open-world when
    /// any member is — each member's hints read with MCP's defaults, so a member that sets
    /// nothing makes the group destructive and open-world. MCP reads `destructiveHint` only
    /// when `readOnlyHint` is false, so a read-only member counts as not destructive. No
    /// members: all four at their defaults.
    pub fn merge(members: impl IntoIterator<Item = Hints>) -> Hints {
        let mut all = (true, false, true, false);
        let mut any_member = false;
        for h in members {
            any_member = true;
            all.0 &= h.effective_read_only();
            all.1 |= !h.effective_read_only() && h.effective_destructive();
            all.2 &= h.effective_idempotent();
            all.3 |= h.effective_open_world();
        }
        if !any_member {
            let d = Hints::default();
            all = (
                d.effective_read_only(),
                d.effective_destructive(),
                d.effective_idempotent(),
                d.effective_open_world(),
            );
        }
        Hints {
            read_only: Some(all.0),
            destructive: Some(all.1),
            idempotent: Some(all.2),
            open_world: Some(all.3),
        }
    }

    /// The hints as a JSON object with MCP's key names (`readOnlyHint`, …); absent hints are
    /// left out.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (key, hint) in self.entries() {
            if let Some(b) = hint {
                m.insert(key.to_owned(), serde_json::Value::Bool(b));
            }
        }
        serde_json::Value::Object(m)
    }

    /// Each hint with its MCP key, in key order.
    pub fn entries(&self) -> [(&'static str, Option<bool>); 4] {
        [
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
            ("readOnlyHint", self.read_only),
        ]
    }
}

/// The runtime guards of an action: how many calls run and wait at once (`SERVER_BUSY`
/// beyond), how often it may be called (`RATE_LIMITED` beyond), how long a call may take
/// (`TIMEOUT` beyond) and how large its result may be (cut beyond, with a `RESULT_TRUNCATED`
/// warning). `None` sets no limit.
///
/// Declared with `#[tool_action(max_active = .., max_queue = .., rate_limit = "..",
/// timeout = "..", max_result_bytes = ..)]`; the builder's `concurrency`, `rate_limit` and
/// `timeout` override them, and its `max_result_bytes` fills the result bound of every
/// action that declares none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActionLimits {
    /// Calls running at once and waiting in line.
    pub concurrency: Option<ConcurrencyLimit>,
    /// Calls allowed per period, shared or per client.
    pub rate_limit: Option<RateLimit>,
    /// How long a call may run (middleware and handler) before it is stopped.
    pub timeout: Option<Duration>,
    /// How many bytes of text a successful result may carry before it is cut (see
    /// [`ServerBuilder::max_result_bytes`](crate::ServerBuilder::max_result_bytes)).
    pub max_result_bytes: Option<usize>,
}

impl ActionLimits {
    /// No limit.
    pub const fn none() -> Self {
        ActionLimits {
            concurrency: None,
            rate_limit: None,
            timeout: None,
            max_result_bytes: None,
        }
    }

    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        *self == ActionLimits::none()
    }
}

/// Everything known about an action before it is called: the plain data `tools/list`, the
/// `tools` command and contract files are built from.
#[derive(Clone, Debug)]
pub struct ActionInfo {
    /// The action's name, dotted (`billing.get_invoice`).
    pub name: &'static str,
    /// A human-readable title, if given.
    pub title: Option<Cow<'static, str>>,
    /// What the action does, for the model (from the doc comment unless given).
    pub description: Cow<'static, str>,
    /// Behaviour hints.
    pub hints: Hints,
    /// Why the action is deprecated and what to use instead; `None` when it is current.
    pub deprecated: Option<Cow<'static, str>>,
    /// The input's JSON Schema.
    pub input_schema: Arc<JsonObject>,
    /// The input's deprecated fields (`#[fusion(deprecated = "..")]`), found once: a call that
    /// sends one gets a `DEPRECATED` warning naming it. Empty for most actions, and then no
    /// call pays for the check.
    pub deprecated_fields: Arc<[DeprecatedField]>,
    /// The output's JSON Schema, when the output type has one and it describes an object.
    pub output_schema: Option<Arc<JsonObject>>,
    /// The shared state the handler needs, checked when the server is built.
    pub state: Option<StateRequirement>,
    /// Its runtime guards. In a built server's [`actions`](crate::Server::actions), the
    /// limits in force: the declared ones with the builder's overrides applied.
    pub limits: ActionLimits,
    /// The OAuth scopes a caller needs, sorted (`#[tool_action(scopes = [..])]` or
    /// [`ServerBuilder::scopes`](crate::ServerBuilder::scopes)); empty: anyone may call it.
    /// See [`auth`](crate::auth).
    pub scopes: Vec<Cow<'static, str>>,
    /// Whether a client that declared the tasks extension gets the call as a task
    /// (`#[tool_action(task)]`); see [`TaskSupport`].
    pub task: TaskSupport,
    /// The icons its attribute declares (`icon = ".."`), listed for its tool in flat
    /// exposure unless [`ServerBuilder::icons`](crate::ServerBuilder::icons) sets others;
    /// empty for most actions.
    pub icons: &'static [StaticIcon],
}

/// Whether an action runs as an MCP task (`io.modelcontextprotocol/tasks`, SEP-2663), in the
/// words of the 2025-11-25 tool field `execution.taskSupport`. In 2026-07-28 the server alone
/// decides, per request, whether a call becomes a task, and never for a request that did not
/// declare the extension (SEP-2663: "MUST NOT return `CreateTaskResult` to a client that did
/// not include the extension capability on its request"); this says what it decides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Never a task (the default): the call answers when the handler is done.
    #[default]
    Forbidden,
    /// `#[tool_action(task)]` or `task = "optional"`: a task for every request that declared
    /// the extension; the synchronous call, under the action's `timeout`, for the others.
    Optional,
    /// `task = "required"`: a task for a request that declared the extension; any other is
    /// refused with `-32021` (missing required client capability), as SEP-2663 says of a
    /// request the server cannot serve without a task.
    Required,
}

impl TaskSupport {
    /// The spec's word: `forbidden`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Whether a client that declared tasks may get this call as a task.
    pub fn allows_task(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

/// The result of running a handler: a success (a value or a ready response) or a tool error
/// (a branded `ToolError` passed intact, or anything else already wrapped as `INTERNAL_ERROR`).
pub type HandlerOutcome = Result<ActionOutput, HandlerFailure>;

/// What a handler produced on success.
#[derive(Clone, Debug)]
pub enum ActionOutput {
    /// A serializable value, with warnings to send alongside it.
    Value {
        /// The value, as JSON.
        value: serde_json::Value,
        /// Warning envelopes (`isError` stays false).
        warnings: Vec<ToolError>,
    },
    /// A response the handler built itself.
    Response(ToolResponse),
}

/// Why a handler failed, before it is written for the model.
#[derive(Debug)]
pub enum HandlerFailure {
    /// A branded tool error: its envelope goes out intact.
    Tool(ToolError),
    /// Any other error: becomes `INTERNAL_ERROR`. Holds the error's `Display` message.
    Internal(String),
}

/// An action `#[tool_action]` generated: its name, input, output and handler.
///
/// Implemented by the companion struct of each `#[tool_action]` function
/// (`GetInvoiceAction` for `fn get_invoice`). Implementing it by hand works too.
pub trait ToolAction: Send + Sync + 'static {
    /// The action's name, dotted (`billing.get_invoice`).
    const NAME: &'static str;
    /// The input type: arguments are validated and deserialized into it.
    type Input: ToolInput;
    /// The value the handler returns on success (`T` of its `Result<T, E>`).
    type Output;

    /// The action's metadata.
    fn info() -> ActionInfo;

    /// Runs the handler on a validated input. Never called with an input that failed
    /// validation. A panic inside is caught by the pipeline.
    fn call(input: Self::Input, cx: &CallContext) -> BoxFuture<'static, HandlerOutcome>;
}

/// A successful value with warning envelopes sent alongside it (`isError` stays false).
///
/// ```
/// use fusion_runtime::{WithWarnings, error, codes::CONFLICT};
///
/// let out = WithWarnings::new(42).warning(error(CONFLICT, "Already paid; nothing was charged"));
/// assert_eq!(out.warnings().len(), 1);
/// ```
///
/// It is also how a handler says "fallback applied" (SPEC §2): the value it could give, and
/// a warning saying what it fell back to and what to do about it. A custom code names it.
///
/// ```
/// use fusion_runtime::{WithWarnings, error};
///
/// fn rate(live: Option<f64>, cached: f64) -> WithWarnings<f64> {
///     match live {
///         Some(rate) => WithWarnings::new(rate),
///         None => WithWarnings::new(cached).warning(
///             error("FALLBACK_APPLIED", "The rate service did not answer; this is yesterday's rate")
///                 .recovery("Use it as an estimate; call again later for the live rate"),
///         ),
///     }
/// }
/// assert!(rate(Some(1.1), 1.0).warnings().is_empty());
/// assert_eq!(rate(None, 1.0).warnings()[0].code().as_str(), "FALLBACK_APPLIED");
/// ```
#[derive(Clone, Debug)]
pub struct WithWarnings<T> {
    value: T,
    warnings: Vec<ToolError>,
}

impl<T> WithWarnings<T> {
    /// The value, with no warning yet.
    pub fn new(value: T) -> Self {
        WithWarnings {
            value,
            warnings: Vec::new(),
        }
    }

    /// Adds a warning. Any severity is lowered to `warning`: it travels on the success path.
    pub fn warning(mut self, warning: ToolError) -> Self {
        self.warnings.push(warning.warning());
        self
    }

    /// The value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The warnings, in order.
    pub fn warnings(&self) -> &[ToolError] {
        &self.warnings
    }
}

/// A handler's success value: anything `Serialize`, a [`WithWarnings`], or a ready
/// [`ToolResponse`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a `#[tool_action]` handler",
    label = "return a `serde::Serialize` value, `WithWarnings<T>` or `ToolResponse`"
)]
pub trait IntoActionOutput {
    /// The value a typed client reads back (`T` for `WithWarnings<T>`).
    type Value;

    /// Converts the value; a serialization failure is an internal error.
    fn into_action_output(self) -> Result<ActionOutput, HandlerFailure>;
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, HandlerFailure> {
    serde_json::to_value(value)
        .map_err(|e| HandlerFailure::Internal(format!("the result could not be serialized: {e}")))
}

impl<T: serde::Serialize> IntoActionOutput for T {
    type Value = T;
    fn into_action_output(self) -> Result<ActionOutput, HandlerFailure> {
        Ok(ActionOutput::Value {
            value: to_json(&self)?,
            warnings: Vec::new(),
        })
    }
}

impl<T: serde::Serialize> IntoActionOutput for WithWarnings<T> {
    type Value = T;
    fn into_action_output(self) -> Result<ActionOutput, HandlerFailure> {
        Ok(ActionOutput::Value {
            value: to_json(&self.value)?,
            warnings: self.warnings,
        })
    }
}

impl IntoActionOutput for ToolResponse {
    type Value = ToolResponse;
    fn into_action_output(self) -> Result<ActionOutput, HandlerFailure> {
        Ok(ActionOutput::Response(self))
    }
}

/// What a `#[tool_action]` function returns: `Result<T, E>`.
#[diagnostic::on_unimplemented(
    message = "a `#[tool_action]` function must return `Result<T, E>`, not `{Self}`",
    label = "`T`: a `Serialize` value or a `ToolResponse`; `E`: a `ToolError` or any error"
)]
pub trait HandlerReturn {
    /// `T`.
    type Ok;
    /// `E`.
    type Err;
    /// The result.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
}

impl<T, E> HandlerReturn for Result<T, E> {
    type Ok = T;
    type Err = E;
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// Turns a handler's return value into its outcome: the success value converted, a branded
/// `ToolError` found (directly, inside `anyhow::Error`, a boxed error or a `source()` chain) or
/// any other error's `Display` message kept for `INTERNAL_ERROR`.
pub fn handler_outcome<R>(ret: R) -> HandlerOutcome
where
    R: HandlerReturn,
    R::Ok: IntoActionOutput,
    R::Err: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
{
    match ret.into_result() {
        Ok(v) => v.into_action_output(),
        Err(e) => Err(failure_from(e)),
    }
}

/// Classifies any error: a branded [`ToolError`] (the error itself, or one found through
/// `anyhow::Error`, a boxed error and `source()` chains) passes intact; anything else keeps
/// only its `Display` message — as does a `ToolError` that `?` made from such an error
/// (`From<std::io::Error>`, `From<serde_json::Error>`, `From<anyhow::Error>`) and its author
/// left as it was. The error and its sources are logged (target `fusion_runtime::server`, at
/// `info`, with the pipeline's lines for each call: off by default), inside the handler's span.
pub fn failure_from<E>(e: E) -> HandlerFailure
where
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    match internal::classify(e) {
        Ok(t) => match internal::carried(&t) {
            Some(c) => internal_failure(c.message.clone(), &c.chain),
            None => HandlerFailure::Tool(t),
        },
        Err(c) => internal_failure(c.message, &c.chain),
    }
}

fn internal_failure(message: String, chain: &str) -> HandlerFailure {
    tracing::info!(target: "fusion_runtime::server", error = chain, "handler failed: INTERNAL_ERROR");
    HandlerFailure::Internal(message)
}

/// The JSON Schema (draft 2020-12) of an output type, when it describes an object — MCP's
/// `outputSchema` must. Anything else (arrays, strings, …) has no output schema: its result
/// goes out as text only.
pub fn output_schema_for<T: schemars::JsonSchema + ?Sized>() -> Option<Arc<JsonObject>> {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(mut value @ serde_json::Value::Object(_))
            if value.get("type").and_then(serde_json::Value::as_str) == Some("object") =>
        {
            crate::schema::strip_rust_formats(&mut value);
            match value {
                serde_json::Value::Object(map) => Some(Arc::new(map)),
                _ => None,
            }
        }
        _ => None,
    }
}
