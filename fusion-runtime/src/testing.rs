//! A test kit for your own tools (feature `testing`): call an action in process, by name, and
//! assert on what the model would read.
//!
//! [`TestServer`] wraps a [`Server`]; [`TestServer::call_tool`] runs one call through the whole
//! pipeline (validation, guards, middleware, the handler, the envelope) with no transport, and
//! returns a [`TestCall`]: the typed output, or the envelope read back by the client's own
//! parser ([`client::parse_envelope`](crate::client::parse_envelope)), and a stable text
//! rendering ([`TestCall::render`], [`TestServer::render_tools`]) to snapshot with `insta`.
//!
//! ```
//! use fusion_runtime::{tool_action, error, codes::NOT_FOUND, Server, ToolError, ToolInput};
//! use fusion_runtime::testing::TestServer;
//!
//! /// Look up one invoice.
//! #[derive(serde::Deserialize, serde::Serialize, ToolInput)]
//! struct Get {
//!     /// The invoice ID.
//!     id: String,
//! }
//!
//! /// Get one invoice.
//! #[tool_action(name = "billing.get")]
//! async fn get(input: Get) -> Result<String, ToolError> {
//!     if input.id == "inv_1" { Ok("Acme".into()) } else {
//!         Err(error(NOT_FOUND, "No invoice with that ID").available_actions(["billing.list"]))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let kit = TestServer::build(Server::builder().action::<GetAction>())
//!     .unwrap_or_else(|e| panic!("{e}"));
//! let customer: String = kit.call_tool("billing.get", serde_json::json!({"id": "inv_1"})).await.output();
//! assert_eq!(customer, "Acme");
//!
//! let failed = kit.call::<GetAction>(&Get { id: "inv_9".into() }).await;
//! assert_eq!(failed.expect_error("NOT_FOUND").message, "No invoice with that ID");
//! # }
//! ```
//!
//! # Principal, scopes and state
//!
//! A call runs as nobody (no [`Principal`]), as a server with no authentication would see it.
//! [`TestServer::as_principal`] and [`TestServer::with_scopes`] return a kit whose calls carry
//! that caller, so scope checks and per-client limits see what a verified token would give.
//! Shared state is the builder's: [`ServerBuilder::state`] (or
//! [`ServerBuilder::state_arc`], keeping an `Arc` to assert on after the call).
//!
//! # The clock
//!
//! Rate limits, queues and timeouts measure time on tokio's clock (`tokio::time::Instant`,
//! and a [`governor`] clock on it, [`TokioClock`](crate::guard::TokioClock)), so a test
//! moves time instead of sleeping: run it with `#[tokio::test(start_paused = true)]` and call
//! [`advance`]. The feature turns on tokio's `test-util`. Fusion uses tokio's paused time
//! rather than an injectable clock because the guards already read it, and a second clock
//! would be a second thing to keep in step. What is stamped with wall-clock time (delegation
//! tokens, gateway handles, JWT expiry) is not moved by it.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::action::ToolAction;
use crate::auth::Principal;
use crate::client::{
    Envelope, ToolCallError, ValidationEnvelope, looks_like_envelope, parse_envelope,
};
use crate::context::RequestScope;
use crate::envelope::{Content, ToolResponse};
use crate::input::JsonObject;
use crate::server::{BuildError, Server, ServerBuilder, ToolSpec};

/// A server under test: calls in process, as a given caller.
///
/// ```
/// use fusion_runtime::{Server, testing::TestServer};
///
/// let kit = TestServer::new(Server::builder().build().unwrap_or_else(|e| panic!("{e}")));
/// assert_eq!(kit.server().name(), kit.server().name());
/// ```
#[derive(Clone, Debug)]
pub struct TestServer {
    server: Server,
    principal: Option<Principal>,
}

impl TestServer {
    /// Wraps a built server; calls run with no principal.
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// let server = Server::builder().name("billing").build().unwrap_or_else(|e| panic!("{e}"));
    /// assert_eq!(TestServer::new(server).server().name(), "billing");
    /// ```
    pub fn new(server: Server) -> Self {
        TestServer {
            server,
            principal: None,
        }
    }

    /// Builds the server from `builder` and wraps it.
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// let kit = TestServer::build(Server::builder().name("billing"));
    /// assert!(kit.is_ok());
    /// ```
    pub fn build(builder: ServerBuilder) -> Result<Self, BuildError> {
        builder.build().map(TestServer::new)
    }

    /// The server, for what the kit does not wrap (guard state, contracts, the notifier).
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"));
    /// assert!(kit.server().actions().is_empty());
    /// ```
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// A kit whose calls carry `principal`, as if its token had been verified.
    ///
    /// ```
    /// use fusion_runtime::{Principal, Server, testing::TestServer};
    ///
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"))
    ///     .as_principal(Principal::new("alice").with_scopes(["billing:read"]));
    /// assert_eq!(kit.principal().map(|p| p.subject()), Some("alice"));
    /// ```
    pub fn as_principal(&self, principal: Principal) -> Self {
        TestServer {
            server: self.server.clone(),
            principal: Some(principal),
        }
    }

    /// A kit whose calls carry the principal `test` holding exactly `scopes` (the client id
    /// stays the subject's, so per-client limits count this caller).
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"))
    ///     .with_scopes(["billing:write"]);
    /// assert!(kit.principal().is_some_and(|p| p.has_scope("billing:write")));
    /// ```
    pub fn with_scopes(&self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.as_principal(Principal::new("test").with_scopes(scopes))
    }

    /// A kit whose calls carry no principal.
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"));
    /// assert!(kit.with_scopes(["a"]).anonymous().principal().is_none());
    /// ```
    pub fn anonymous(&self) -> Self {
        TestServer::new(self.server.clone())
    }

    /// The principal calls carry, if any.
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"));
    /// assert!(kit.principal().is_none());
    /// ```
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// Calls `tool` with JSON `arguments` through the whole pipeline. `tool` is any name
    /// routing accepts: the tool name (`billing_get`) or the action's dotted name. `null`
    /// sends no arguments; a value that is not an object is answered as a client sending it
    /// would be (a `<validation_error>` naming `arguments`).
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"));
    /// let call = kit.call_tool("nope", serde_json::json!({})).await;
    /// assert_eq!(call.expect_error("UNKNOWN_ACTION").code.as_str(), "UNKNOWN_ACTION");
    /// # }
    /// ```
    pub async fn call_tool(&self, tool: &str, arguments: serde_json::Value) -> TestCall {
        let response = match (&self.principal, arguments) {
            (None, arguments) => self.server.call_json(tool, arguments).await,
            (Some(p), serde_json::Value::Object(map)) => {
                self.server.call(tool, Some(map), self.scope(p)).await
            }
            (Some(p), serde_json::Value::Null) => self.server.call(tool, None, self.scope(p)).await,
            (Some(_), other) => self.server.call_json(tool, other).await,
        };
        TestCall::new(tool, response)
    }

    /// Calls `tool` with a typed input, serialized to JSON first (your input struct, with
    /// `serde::Serialize` derived next to `ToolInput`, or any value of the same shape).
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"));
    /// let call = kit.call_tool_with("nope", &std::collections::BTreeMap::from([("id", 1)])).await;
    /// assert!(call.is_error());
    /// # }
    /// ```
    pub async fn call_tool_with(&self, tool: &str, input: &impl Serialize) -> TestCall {
        match serde_json::to_value(input) {
            Ok(value) => self.call_tool(tool, value).await,
            Err(e) => panic!("the input for {tool} does not serialize to JSON: {e}"),
        }
    }

    /// The old name of [`TestServer::call_tool_with`].
    #[deprecated(since = "0.1.0", note = "use `call_tool_with`; removed in 0.2.0")]
    pub async fn call_with(&self, tool: &str, input: &impl Serialize) -> TestCall {
        self.call_tool_with(tool, input).await
    }

    /// Calls the action `A` with its own input type as a client does, and as
    /// [`FusionClient::call::<A>`](crate::client::FusionClient::call) does: by the tool the
    /// exposure lists it as (a grouped action's group, its discriminator added to the
    /// arguments), so an error names the tool the client called. An action the server does
    /// not have is called by its registered name (and answered `UNKNOWN_ACTION`). Read the
    /// result with [`TestCall::output::<A::Output>`](TestCall::output).
    ///
    /// ```
    /// use fusion_runtime::{tool_action, Server, ToolError, ToolInput};
    /// use fusion_runtime::testing::TestServer;
    ///
    /// /// Two numbers.
    /// #[derive(serde::Deserialize, serde::Serialize, ToolInput)]
    /// struct Pair { a: i64, b: i64 }
    ///
    /// /// Adds them.
    /// #[tool_action(name = "math.add")]
    /// async fn add(input: Pair) -> Result<i64, ToolError> { Ok(input.a + input.b) }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let kit = TestServer::build(Server::builder().action::<AddAction>().grouped())
    ///     .unwrap_or_else(|e| panic!("{e}"));
    /// let sum: i64 = kit.call::<AddAction>(&Pair { a: 2, b: 3 }).await.output();
    /// assert_eq!(sum, 5);
    /// # }
    /// ```
    pub async fn call<A>(&self, input: &A::Input) -> TestCall
    where
        A: ToolAction,
        A::Input: Serialize,
    {
        let Some(action) = self
            .server
            .actions()
            .iter()
            .find(|a| a.info.name == A::NAME)
        else {
            return self.call_tool_with(A::NAME, input).await;
        };
        let mut arguments = match serde_json::to_value(input) {
            Ok(value) => value,
            Err(e) => panic!("the input for {} does not serialize to JSON: {e}", A::NAME),
        };
        if let (Some(value), serde_json::Value::Object(map)) =
            (&action.discriminator, &mut arguments)
        {
            map.insert(
                self.server.discriminator_key().to_owned(),
                serde_json::Value::String(value.clone()),
            );
        }
        self.call_tool(&action.tool, arguments).await
    }

    /// The old name of [`TestServer::call`].
    #[deprecated(since = "0.1.0", note = "use `call::<A>`; removed in 0.2.0")]
    pub async fn call_action<A>(&self, input: &A::Input) -> TestCall
    where
        A: ToolAction,
        A::Input: Serialize,
    {
        self.call::<A>(input).await
    }

    fn scope(&self, principal: &Principal) -> RequestScope {
        RequestScope::detached().with_principal(principal.clone())
    }

    /// The healing benchmark on this kit's server ([`healing::run`](crate::healing::run)):
    /// broken calls of every issue kind, generated from each tool's schema, repaired by a
    /// reader that sees only the answer's text. Hold it in your CI with
    /// [`Report::assert_heals_in_one_round`](crate::healing::Report::assert_heals_in_one_round).
    ///
    /// ```
    /// use fusion_runtime::{tool_action, Server, ToolError, ToolInput};
    /// use fusion_runtime::testing::TestServer;
    ///
    /// /// Seats to buy.
    /// #[derive(serde::Deserialize, ToolInput)]
    /// struct Seats {
    ///     /// How many, 1 to 100.
    ///     #[fusion(range(min = 1, max = 100))]
    ///     count: u32,
    /// }
    ///
    /// /// Buys seats.
    /// #[tool_action(name = "seats.buy")]
    /// async fn buy(input: Seats) -> Result<u32, ToolError> { Ok(input.count) }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let kit = TestServer::build(Server::builder().action::<BuyAction>())
    ///     .unwrap_or_else(|e| panic!("{e}"));
    /// let report = kit.healing().await;
    /// report.assert_heals_in_one_round();
    /// assert!(report.outcomes.len() >= 5);
    /// # }
    /// ```
    pub async fn healing(&self) -> crate::healing::Report {
        crate::healing::run(&self.server).await
    }

    /// The tools as an agent's `tools/list` shows them (mounted and dynamic ones included).
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"));
    /// assert!(kit.tools().await.is_empty());
    /// # }
    /// ```
    pub async fn tools(&self) -> Vec<ToolSpec> {
        self.server.listed_tool_specs().await
    }

    /// The names of [`TestServer::tools`], in list order.
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"));
    /// assert_eq!(kit.tool_names().await, Vec::<String>::new());
    /// # }
    /// ```
    pub async fn tool_names(&self) -> Vec<String> {
        self.tools().await.into_iter().map(|t| t.name).collect()
    }

    /// The tool list as stable text, for a snapshot: per tool its name, title, hints,
    /// description, and input (and output) schema as indented JSON.
    ///
    /// ```
    /// use fusion_runtime::{Server, testing::TestServer};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let kit = TestServer::build(Server::builder()).unwrap_or_else(|e| panic!("{e}"));
    /// assert_eq!(kit.render_tools().await, "");
    /// # }
    /// ```
    pub async fn render_tools(&self) -> String {
        let mut out = String::new();
        for tool in self.tools().await {
            render_tool(&mut out, &tool);
        }
        out
    }
}

fn render_tool(out: &mut String, tool: &ToolSpec) {
    let _ = writeln!(out, "tool {}", tool.name);
    if let Some(title) = &tool.title {
        let _ = writeln!(out, "  title: {title}");
    }
    if let Some(h) = tool.hints.filter(|h| !h.is_empty()) {
        let flag = |name: &str, v: Option<bool>| v.map(|v| format!("{name}={v}"));
        let set: Vec<String> = [
            flag("read_only", h.read_only),
            flag("destructive", h.destructive),
            flag("idempotent", h.idempotent),
            flag("open_world", h.open_world),
        ]
        .into_iter()
        .flatten()
        .collect();
        let _ = writeln!(out, "  hints: {}", set.join(" "));
    }
    let _ = writeln!(out, "  description: {}", tool.description);
    let _ = writeln!(out, "  input: {}", pretty(&tool.input_schema));
    if let Some(output) = &tool.output_schema {
        let _ = writeln!(out, "  output: {}", pretty(output));
    }
}

fn pretty(schema: &JsonObject) -> String {
    serde_json::to_string_pretty(schema)
        .unwrap_or_default()
        .replace('\n', "\n  ")
}

/// What one in-process call answered, with its envelopes read back.
///
/// ```
/// use fusion_runtime::{ToolResponse, error, codes::CONFLICT, testing::TestCall};
///
/// let call = TestCall::new("billing_charge", ToolResponse::text("charged")
///     .with_warning(error(CONFLICT, "Already paid")));
/// assert!(!call.is_error());
/// assert_eq!(call.warnings()[0].message, "Already paid");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TestCall {
    tool: String,
    response: ToolResponse,
    envelopes: Vec<Envelope>,
    /// The `<tool_error>` failure read as a client reads it.
    error: Option<ToolCallError>,
    /// The warning envelopes, read as a client reads them.
    warnings: Vec<ToolCallError>,
}

impl TestCall {
    /// Reads a response: every text block that parses as an envelope is kept, in order.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// assert_eq!(TestCall::new("t", ToolResponse::text("{}")).text(), "{}");
    /// ```
    pub fn new(tool: impl Into<String>, response: ToolResponse) -> Self {
        let envelopes = response
            .texts()
            .filter(|t| looks_like_envelope(t))
            .filter_map(|t| parse_envelope(t).ok())
            .collect::<Vec<_>>();
        let tool = tool.into();
        let error = envelopes.iter().find_map(|e| match e {
            Envelope::Tool(t) if t.is_error() => {
                let text = response.texts().collect::<Vec<_>>().join("\n");
                Some(ToolCallError::of_tool(tool.clone(), t.clone(), text))
            }
            _ => None,
        });
        let warnings = envelopes
            .iter()
            .filter_map(|e| match e {
                Envelope::Tool(t) if !t.is_error() => Some(ToolCallError::of_tool(
                    tool.clone(),
                    t.clone(),
                    t.render().to_owned(),
                )),
                _ => None,
            })
            .collect();
        TestCall {
            tool,
            response,
            envelopes,
            error,
            warnings,
        }
    }

    /// The name the call was sent to.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// assert_eq!(TestCall::new("billing_get", ToolResponse::text("")).tool(), "billing_get");
    /// ```
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The response as the pipeline returned it.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// assert!(!TestCall::new("t", ToolResponse::text("ok")).response().is_error);
    /// ```
    pub fn response(&self) -> &ToolResponse {
        &self.response
    }

    /// The `isError` flag.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, error, codes::NOT_FOUND, testing::TestCall};
    ///
    /// assert!(TestCall::new("t", ToolResponse::error(error(NOT_FOUND, "gone"))).is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.response.is_error
    }

    /// Every envelope the response carried, parsed, in order.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// assert!(TestCall::new("t", ToolResponse::text("ok")).envelopes().is_empty());
    /// ```
    pub fn envelopes(&self) -> &[Envelope] {
        &self.envelopes
    }

    /// The text blocks that are not envelopes, joined by newlines: the result itself.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, error, codes::CONFLICT, testing::TestCall};
    ///
    /// let r = ToolResponse::text("charged").with_warning(error(CONFLICT, "Already paid"));
    /// assert_eq!(TestCall::new("t", r).text(), "charged");
    /// ```
    pub fn text(&self) -> String {
        self.response
            .texts()
            .filter(|t| !(looks_like_envelope(t) && parse_envelope(t).is_ok()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The result as JSON: `structuredContent` when sent, else the text parsed as JSON.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// let call = TestCall::new("t", ToolResponse::json(serde_json::json!({"n": 1})));
    /// assert_eq!(call.json(), Some(serde_json::json!({"n": 1})));
    /// ```
    pub fn json(&self) -> Option<serde_json::Value> {
        self.response
            .structured_content
            .clone()
            .or_else(|| serde_json::from_str(&self.text()).ok())
    }

    /// The typed output: panics, showing what the model would read, when the call failed
    /// or its result is not a `T`.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// let call = TestCall::new("t", ToolResponse::json(serde_json::json!([1, 2])));
    /// assert_eq!(call.output::<Vec<u32>>(), vec![1, 2]);
    /// ```
    pub fn output<T: DeserializeOwned>(&self) -> T {
        match self.try_output() {
            Ok(v) => v,
            Err(why) => panic!("{}: {why}\n{}", self.tool, self.render()),
        }
    }

    /// The typed output, or why there is none (the call failed, or the result is not a `T`).
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, error, codes::NOT_FOUND, testing::TestCall};
    ///
    /// let call = TestCall::new("t", ToolResponse::error(error(NOT_FOUND, "gone")));
    /// assert!(call.try_output::<u32>().is_err());
    /// ```
    pub fn try_output<T: DeserializeOwned>(&self) -> Result<T, String> {
        if self.is_error() {
            return Err("the call failed".into());
        }
        let value = self
            .json()
            .ok_or_else(|| "the result is not JSON".to_string())?;
        serde_json::from_value(value).map_err(|e| format!("the result is not the type asked: {e}"))
    }

    /// The failure's `<tool_error>`, if the call failed with one, read as
    /// [`FusionClient`](crate::client::FusionClient) reads it
    /// ([`CallOutcome::error`](crate::client::CallOutcome::error) gives an equal value for the
    /// same answer). A refused argument is not one: see [`TestCall::validation`].
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, error, codes::NOT_FOUND, testing::TestCall};
    ///
    /// let call = TestCall::new("t", ToolResponse::error(error(NOT_FOUND, "gone")));
    /// assert_eq!(call.error().map(|e| e.message.as_str()), Some("gone"));
    /// ```
    pub fn error(&self) -> Option<&ToolCallError> {
        self.error.as_ref()
    }

    /// The `<validation_error>`, if the arguments were refused.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// assert!(TestCall::new("t", ToolResponse::text("ok")).validation().is_none());
    /// ```
    pub fn validation(&self) -> Option<&ValidationEnvelope> {
        self.envelopes.iter().find_map(|e| match e {
            Envelope::Validation(v) => Some(v),
            Envelope::Tool(_) => None,
        })
    }

    /// The warning envelopes (severity `warning`), in order, read as a client reads them
    /// (the same [`ToolCallError`] an error is read as; its `text` is the warning's own).
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// assert!(TestCall::new("t", ToolResponse::text("ok")).warnings().is_empty());
    /// ```
    pub fn warnings(&self) -> &[ToolCallError] {
        &self.warnings
    }

    /// The `<tool_error>` with `code`: panics, showing the response, when the call did not
    /// fail with that code.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, error, codes::NOT_FOUND, testing::TestCall};
    ///
    /// let call = TestCall::new("t", ToolResponse::error(error(NOT_FOUND, "gone")));
    /// assert_eq!(call.expect_error("NOT_FOUND").message, "gone");
    /// ```
    pub fn expect_error(&self, code: &str) -> &ToolCallError {
        match self.error() {
            Some(e) if e.code.as_str() == code => e,
            _ => panic!("{}: expected {code}, got\n{}", self.tool, self.render()),
        }
    }

    /// The `<validation_error>`: panics, showing the response, when the arguments passed.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, ValidationReport, testing::TestCall};
    ///
    /// let v = ValidationReport::new(vec![]).render("billing.get");
    /// let call = TestCall::new("t", ToolResponse { is_error: true, ..ToolResponse::text(v) });
    /// assert_eq!(call.expect_validation().action, "billing.get");
    /// ```
    pub fn expect_validation(&self) -> &ValidationEnvelope {
        match self.validation() {
            Some(v) => v,
            None => panic!(
                "{}: expected a validation error, got\n{}",
                self.tool,
                self.render()
            ),
        }
    }

    /// The response as stable text, for a snapshot (`insta::assert_snapshot!`): the flag,
    /// then each block — JSON results indented, envelopes as sent, other content by kind.
    ///
    /// ```
    /// use fusion_runtime::{ToolResponse, testing::TestCall};
    ///
    /// let call = TestCall::new("t", ToolResponse::json(serde_json::json!({"n": 1})));
    /// assert_eq!(call.render(), "ok\n{\n  \"n\": 1\n}\n");
    /// ```
    pub fn render(&self) -> String {
        let mut out = String::from(if self.is_error() { "error\n" } else { "ok\n" });
        for block in &self.response.content {
            match block {
                Content::Text(t) => {
                    let json = (!looks_like_envelope(t))
                        .then(|| serde_json::from_str::<serde_json::Value>(t).ok())
                        .flatten();
                    match json.and_then(|v| serde_json::to_string_pretty(&v).ok()) {
                        Some(pretty) => out.push_str(&pretty),
                        None => out.push_str(t),
                    }
                }
                other => {
                    let _ = write!(out, "{other:?}");
                }
            }
            out.push('\n');
        }
        out
    }
}

/// Moves tokio's paused clock forward by `by`, and lets timers that fall due run: what a
/// rate limit's window or a timeout waits for, without waiting. The test must run on a
/// paused clock (`#[tokio::test(start_paused = true)]`); on a running one this panics.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// tokio::time::pause();
/// let before = tokio::time::Instant::now();
/// fusion_runtime::testing::advance(std::time::Duration::from_secs(60)).await;
/// assert!(before.elapsed() >= std::time::Duration::from_secs(60));
/// # }
/// ```
pub async fn advance(by: Duration) {
    tokio::time::advance(by).await;
}
