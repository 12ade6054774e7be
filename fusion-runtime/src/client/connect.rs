use std::time::Duration;

use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::IntoTransport;
use serde_json::Value;

use super::outcome::{CallOutcome, ToolCallError};
use super::transport::{self, Lifecycle};
use crate::action::Exposure;
use crate::action::ToolAction;

/// What can go wrong on the client side.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FusionClientError {
    /// The tool answered with an error (only when errors are raised: `throw_on_error` or a
    /// checked call).
    #[error(transparent)]
    Tool(Box<ToolCallError>),
    /// Connecting failed (spawning the server, the HTTP handshake, initialization).
    #[error("could not connect: {0}")]
    Connect(String),
    /// The MCP exchange failed (transport closed, JSON-RPC error, timeout).
    #[error("MCP request failed: {0}")]
    Service(#[from] rmcp::ServiceError),
    /// Arguments were not a JSON object, or a typed result did not decode.
    #[error("{0}")]
    Json(String),
    /// A task ended without a result (cancelled), needs input, or outlived the wait.
    #[error(transparent)]
    Task(#[from] super::outcome::TaskError),
}

impl FusionClientError {
    /// The tool error, when this is one.
    pub fn as_tool_error(&self) -> Option<&ToolCallError> {
        match self {
            FusionClientError::Tool(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ToolCallError> for FusionClientError {
    fn from(e: ToolCallError) -> Self {
        FusionClientError::Tool(Box::new(e))
    }
}

/// How the retry helper retries (opt-in, bounded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Calls made at most, the first one included.
    pub max_attempts: u32,
    /// The longest single wait; a longer `retry_after` gives up instead of waiting.
    pub max_wait: Duration,
    /// The wait when the envelope gives no `retry_after`.
    pub default_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            max_wait: Duration::from_secs(30),
            default_wait: Duration::from_secs(1),
        }
    }
}

/// A client of a Fusion (or any MCP) server that reads envelopes back.
///
/// Over stdio ([`FusionClient::spawn`]) or streamable HTTP ([`FusionClient::connect_http`]).
/// [`FusionClient::call_tool`] returns every result, errors included, as a [`CallOutcome`];
/// with [`FusionClient::throw_on_error`] an error result becomes
/// `Err(FusionClientError::Tool(..))` carrying code, recovery, actions, severity, details
/// and the parsed envelope.
pub struct FusionClient {
    service: RunningService<RoleClient, ()>,
    throw_on_error: bool,
    exposure: Exposure,
}

/// A typed call's result: the decoded value and the warning envelopes that came with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Typed<T> {
    /// The handler's value, decoded.
    pub value: T,
    /// Warning envelopes sent alongside it (`isError: false`), in order, read as an error is
    /// read.
    pub warnings: Vec<ToolCallError>,
}

impl std::fmt::Debug for FusionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FusionClient")
            .field("throw_on_error", &self.throw_on_error)
            .finish_non_exhaustive()
    }
}

impl FusionClient {
    /// Connects over any `rmcp` client transport.
    pub async fn connect<T, E, A>(transport: T) -> Result<Self, FusionClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let service = transport::open((), transport, Lifecycle::Current)
            .await
            .map_err(FusionClientError::Connect)?;
        Ok(Self::over(service))
    }

    /// Spawns a server as a child process and talks to it over its stdio; the child's
    /// stderr (its logs) goes to this process's stderr.
    #[cfg(feature = "client-stdio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-stdio")))]
    pub async fn spawn(command: tokio::process::Command) -> Result<Self, FusionClientError> {
        Self::spawn_with_stderr(command, std::process::Stdio::inherit()).await
    }

    /// [`FusionClient::spawn`], with the child's stderr sent where `stderr` says
    /// (`Stdio::null()` to silence its logs).
    #[cfg(feature = "client-stdio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-stdio")))]
    pub async fn spawn_with_stderr(
        command: tokio::process::Command,
        stderr: impl Into<std::process::Stdio>,
    ) -> Result<Self, FusionClientError> {
        let service = transport::open_child((), command, stderr, Lifecycle::Current)
            .await
            .map_err(FusionClientError::Connect)?;
        Ok(Self::over(service))
    }

    /// Connects to a streamable HTTP endpoint (`http://127.0.0.1:8080/mcp`).
    #[cfg(feature = "client-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-http")))]
    pub async fn connect_http(url: &str) -> Result<Self, FusionClientError> {
        let service = transport::open_http((), url, None, Lifecycle::Current)
            .await
            .map_err(FusionClientError::Connect)?;
        Ok(Self::over(service))
    }

    /// [`FusionClient::connect_http`] sending `Authorization: Bearer <token>` with every
    /// request (an OAuth access token for the server, see [`auth`](crate::auth)). A refused
    /// token fails the connection with the server's `401`.
    #[cfg(feature = "client-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-http")))]
    pub async fn connect_http_with_token(
        url: &str,
        token: &str,
    ) -> Result<Self, FusionClientError> {
        let service = transport::open_http((), url, Some(token), Lifecycle::Current)
            .await
            .map_err(FusionClientError::Connect)?;
        Ok(Self::over(service))
    }

    /// Connects to a streamable HTTP endpoint as an MCP 2025-11-25 client does: `initialize`,
    /// a session, 2025-11-25's tasks (`tasks/list` among them). `token`, when given, is sent
    /// as `Authorization: Bearer <token>` with every request.
    #[cfg(feature = "client-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-http")))]
    pub async fn connect_http_session(
        url: &str,
        token: Option<&str>,
    ) -> Result<Self, FusionClientError> {
        let service = transport::open_http((), url, token, Lifecycle::Initialize)
            .await
            .map_err(FusionClientError::Connect)?;
        Ok(Self::over(service))
    }

    fn over(service: RunningService<RoleClient, ()>) -> Self {
        FusionClient {
            service,
            throw_on_error: false,
            exposure: Exposure::default(),
        }
    }

    /// Whether error results become `Err(FusionClientError::Tool(..))` (default: false).
    pub fn throw_on_error(mut self, raise: bool) -> Self {
        self.throw_on_error = raise;
        self
    }

    /// How the server exposes its actions (flat with `_` by default), so typed calls find the
    /// tool (and, for grouped exposure, the discriminator) of an action.
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// The underlying `rmcp` service, for anything this client does not wrap.
    pub fn service(&self) -> &RunningService<RoleClient, ()> {
        &self.service
    }

    /// Every tool the server lists.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, FusionClientError> {
        Ok(self.service.list_all_tools().await?)
    }

    /// Calls `tool` with JSON `arguments` (an object, or `null` for none). Error results are
    /// `Ok` unless `throw_on_error` is set.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<CallOutcome, FusionClientError> {
        let outcome = self.call_raw(tool, arguments).await?;
        self.raise(outcome)
    }

    /// `outcome`, or its error when errors are raised (`throw_on_error`).
    pub(super) fn raise(&self, outcome: CallOutcome) -> Result<CallOutcome, FusionClientError> {
        if self.throw_on_error
            && let Some(e) = outcome.error()
        {
            return Err(e.into());
        }
        Ok(outcome)
    }

    /// [`FusionClient::call_tool`] with `meta` in the request's `_meta` (beside the protocol's
    /// own keys): a gateway's delegation token under
    /// [`DELEGATION_META_KEY`](crate::auth::DELEGATION_META_KEY), a trace context, …
    pub async fn call_tool_with_meta(
        &self,
        tool: &str,
        arguments: Value,
        meta: serde_json::Map<String, Value>,
    ) -> Result<CallOutcome, FusionClientError> {
        let outcome = self.call_with_meta(tool, arguments, Some(meta)).await?;
        self.raise(outcome)
    }

    /// Like [`FusionClient::call_tool`], always raising error results.
    pub async fn call_tool_checked(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<CallOutcome, FusionClientError> {
        let outcome = self.call_raw(tool, arguments).await?;
        match outcome.error() {
            Some(e) => Err(e.into()),
            None => Ok(outcome),
        }
    }

    /// A checked call that retries `RATE_LIMITED` and `SERVER_BUSY` after their
    /// `retry_after`, at most `policy.max_attempts` calls in all. Never retries `critical`
    /// errors, validation errors or `INTERNAL_ERROR`.
    pub async fn call_tool_with_retry(
        &self,
        tool: &str,
        arguments: Value,
        policy: RetryPolicy,
    ) -> Result<CallOutcome, FusionClientError> {
        let mut attempt = 1;
        loop {
            match self.call_tool_checked(tool, arguments.clone()).await {
                Err(FusionClientError::Tool(e))
                    if e.is_retryable() && attempt < policy.max_attempts =>
                {
                    let wait = e.retry_after.unwrap_or(policy.default_wait);
                    if wait > policy.max_wait {
                        return Err(FusionClientError::Tool(e));
                    }
                    tracing::debug!(tool, attempt, ?wait, code = %e.code, "retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// Calls the action `A` with a typed input and decodes its typed output, with the
    /// server's own types: `client.call::<GetInvoiceAction>(&GetInvoice { id })`. Error
    /// results are always raised (`FusionClientError::Tool`); warnings come back with the
    /// value.
    pub async fn call<A>(&self, input: &A::Input) -> Result<Typed<A::Output>, FusionClientError>
    where
        A: ToolAction,
        A::Input: serde::Serialize,
        A::Output: serde::de::DeserializeOwned,
    {
        let (tool, arguments) = self.typed_arguments::<A>(input)?;
        let outcome = self.call_tool_checked(&tool, arguments).await?;
        decode::<A::Output>(&outcome)
    }

    /// [`FusionClient::call`] with the bounded retry of [`FusionClient::call_tool_with_retry`].
    pub async fn call_with_retry<A>(
        &self,
        input: &A::Input,
        policy: RetryPolicy,
    ) -> Result<Typed<A::Output>, FusionClientError>
    where
        A: ToolAction,
        A::Input: serde::Serialize,
        A::Output: serde::de::DeserializeOwned,
    {
        let (tool, arguments) = self.typed_arguments::<A>(input)?;
        let outcome = self.call_tool_with_retry(&tool, arguments, policy).await?;
        decode::<A::Output>(&outcome)
    }

    pub(super) fn typed_arguments<A>(
        &self,
        input: &A::Input,
    ) -> Result<(String, Value), FusionClientError>
    where
        A: ToolAction,
        A::Input: serde::Serialize,
    {
        let mut arguments = serde_json::to_value(input).map_err(|e| {
            FusionClientError::Json(format!("the input of {} did not serialize: {e}", A::NAME))
        })?;
        let placement = self.exposure.place(A::NAME);
        if let (Some(value), Some(name), Value::Object(map)) = (
            placement.discriminator,
            self.exposure.discriminator(),
            &mut arguments,
        ) {
            map.insert(name.to_owned(), Value::String(value));
        }
        Ok((placement.tool, arguments))
    }

    async fn call_raw(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<CallOutcome, FusionClientError> {
        self.call_with_meta(tool, arguments, None).await
    }

    async fn call_with_meta(
        &self,
        tool: &str,
        arguments: Value,
        meta: Option<serde_json::Map<String, Value>>,
    ) -> Result<CallOutcome, FusionClientError> {
        let mut params = call_params(tool, arguments)?;
        params.meta = meta.map(Into::into);
        let result = self.service.call_tool(params).await?;
        Ok(CallOutcome::from_result(tool, result))
    }

    /// Closes the connection (and, over stdio, lets the child exit).
    pub async fn close(self) -> Result<(), FusionClientError> {
        self.service
            .cancel()
            .await
            .map(|_| ())
            .map_err(|e| FusionClientError::Connect(e.to_string()))
    }
}

pub(super) fn decode<T: serde::de::DeserializeOwned>(
    outcome: &CallOutcome,
) -> Result<Typed<T>, FusionClientError> {
    let json = outcome.json().unwrap_or(Value::Null);
    let value = serde_json::from_value(json).map_err(|e| {
        FusionClientError::Json(format!(
            "the result of {} did not decode as {}: {e}",
            outcome.tool,
            std::any::type_name::<T>()
        ))
    })?;
    Ok(Typed {
        value,
        warnings: outcome.warnings(),
    })
}

/// A `tools/call`'s parameters: `arguments` must be an object, or `null` for none.
pub(super) fn call_params(
    tool: &str,
    arguments: Value,
) -> Result<CallToolRequestParams, FusionClientError> {
    let params = CallToolRequestParams::new(tool.to_owned());
    match arguments {
        Value::Null => Ok(params),
        Value::Object(map) => Ok(params.with_arguments(map)),
        other => Err(FusionClientError::Json(format!(
            "tool arguments must be a JSON object, got {other}"
        ))),
    }
}
