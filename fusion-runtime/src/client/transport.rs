//! The one way this crate opens an rmcp client connection: a child process's stdio or a
//! streamable HTTP endpoint, then the MCP lifecycle. The typed client ([`FusionClient`]) and
//! the gateway's upstream connections (`mcp/upstream.rs`) both open theirs here.
//!
//! [`FusionClient`]: super::FusionClient

use rmcp::ClientHandler;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::IntoTransport;
#[cfg(feature = "client-http")]
use rmcp::transport::StreamableHttpClientTransport;
#[cfg(feature = "client-stdio")]
use rmcp::transport::TokioChildProcess;

/// How a connection begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// `server/discover` at the current revision (2026-07-28), falling back to `initialize`
    /// for a server that does not know it.
    Current,
    /// `initialize` only (2025-11-25 and before): a session, with the notifications a
    /// session carries (`tools/list_changed` without a listen). The gateway's upstreams.
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    Initialize,
}

/// `handler` served over the stdio of `command`, spawned, its stderr sent where `stderr`
/// says.
#[cfg(feature = "client-stdio")]
pub(crate) async fn open_child<H: ClientHandler>(
    handler: H,
    command: tokio::process::Command,
    stderr: impl Into<std::process::Stdio>,
    lifecycle: Lifecycle,
) -> Result<RunningService<RoleClient, H>, String> {
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot spawn it: {e}"))?;
    open(handler, transport, lifecycle).await
}

/// `handler` served over the streamable HTTP endpoint `url`, sending
/// `Authorization: Bearer <token>` with every request when given.
#[cfg(feature = "client-http")]
pub(crate) async fn open_http<H: ClientHandler>(
    handler: H,
    url: &str,
    token: Option<&str>,
    lifecycle: Lifecycle,
) -> Result<RunningService<RoleClient, H>, String> {
    let mut config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_owned(),
        );
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    open(handler, transport, lifecycle).await
}

/// `handler` served over `transport`, the connection begun as `lifecycle` says.
pub(crate) async fn open<H, T, E, A>(
    handler: H,
    transport: T,
    lifecycle: Lifecycle,
) -> Result<RunningService<RoleClient, H>, String>
where
    H: ClientHandler,
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let lifecycle = match lifecycle {
        Lifecycle::Current => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
        Lifecycle::Initialize => ClientLifecycleMode::Initialize,
    };
    handler
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .map_err(|e| e.to_string())
}
