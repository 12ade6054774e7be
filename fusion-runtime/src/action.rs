//! Actions: what `#[tool_action]` registers — a name, a description, hints, an input type and
//! a handler.
//!
//! `#[tool_action]` on `async fn get_invoice(..)` leaves the function as written and emits a
//! unit struct `GetInvoiceAction` (the function name in PascalCase, then `Action`) that
//! implements [`ToolAction`]. Register that struct with
//! [`ServerBuilder::action`](crate::server::ServerBuilder::action); a typed client names it to
//! call the action.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::envelope::{ToolError, ToolResponse};
use crate::guard::{ConcurrencyLimit, RateLimit};
use crate::input::{JsonObject, ToolInput};
use crate::server::{CallContext, StateRequirement};

/// Behaviour hints shown to clients as MCP tool annotations. `None` leaves a hint unset, so
/// the client applies the protocol's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActionHints {
    /// The action does not modify its environment (`readOnlyHint`).
    pub read_only: Option<bool>,
    /// The action may destroy data (`destructiveHint`).
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect (`idempotentHint`).
    pub idempotent: Option<bool>,
    /// The action reaches outside the server's closed world (`openWorldHint`).
    pub open_world: Option<bool>,
}

impl ActionHints {
    /// Whether any hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ActionHints::default()
    }
}

/// The runtime guards of an action: how many calls run and wait at once (`SERVER_BUSY`
/// beyond), how often it may be called (`RATE_LIMITED` beyond) and how long a call may take
/// (`TIMEOUT` beyond). `None` sets no limit.
///
/// Declared with `#[tool_action(max_active = .., max_queue = .., rate_limit = "..",
/// timeout = "..")]`; the builder's `concurrency`, `rate_limit` and `timeout` override them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActionLimits {
    /// Calls running at once and waiting in line.
    pub concurrency: Option<ConcurrencyLimit>,
    /// Calls allowed per period, shared or per client.
    pub rate_limit: Option<RateLimit>,
    /// How long a call may run (middleware and handler) before it is stopped.
    pub timeout: Option<Duration>,
}

impl ActionLimits {
    /// No limit.
    pub const fn none() -> Self {
        ActionLimits {
            concurrency: None,
            rate_limit: None,
            timeout: None,
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
    pub hints: ActionHints,
    /// Why the action is deprecated and what to use instead; `None` when it is current.
    pub deprecated: Option<Cow<'static, str>>,
    /// The input's JSON Schema.
    pub input_schema: Arc<JsonObject>,
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
        Err(e) => Err(crate::server::failure_from(e)),
    }
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
