//! The gateway's connections to upstream MCP servers, in rmcp: [`Upstream::stdio`] and
//! [`Upstream::http`] connectors, and a client handler relaying what an upstream sends
//! during a call (progress, log messages) to the downstream call, and its
//! `notifications/tools/list_changed` to the mount.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
#[allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what servers speak.
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    ContentBlock, ProgressNotificationParam, ProgressToken, RequestId, ResourceContents,
    ServerResult, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::{ClientHandler, Peer, ServiceError};

use crate::action::Hints;
use crate::client::transport::{self, Lifecycle};
use crate::context::RequestScope;
use crate::envelope::Content;
use crate::gateway::{
    Connection, Connector, Upstream, UpstreamEvents, UpstreamFailure, UpstreamReply, UpstreamTool,
};
use crate::input::JsonObject;

impl Upstream {
    /// An upstream spawned as a child process and spoken to over its stdio: `command`'s
    /// program, arguments, environment and working directory, spawned again on every
    /// reconnection. Its stderr is discarded.
    pub fn stdio(command: tokio::process::Command) -> Upstream {
        let std = command.as_std();
        Upstream::custom(StdioConnector {
            program: std.get_program().to_owned(),
            args: std.get_args().map(ToOwned::to_owned).collect(),
            envs: std
                .get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
                .collect(),
            cwd: std.get_current_dir().map(ToOwned::to_owned),
        })
    }

    /// An upstream reached over streamable HTTP (`http://127.0.0.1:8081/mcp`).
    pub fn http(url: impl Into<String>) -> Upstream {
        Upstream::custom(HttpConnector { url: url.into() })
    }
}

struct StdioConnector {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
}

impl StdioConnector {
    fn command(&self) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(&self.program);
        c.args(&self.args);
        for (k, v) in &self.envs {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        if let Some(dir) = &self.cwd {
            c.current_dir(dir);
        }
        c
    }
}

impl Connector for StdioConnector {
    fn describe(&self) -> String {
        let name = std::path::Path::new(&self.program)
            .file_name()
            .unwrap_or(self.program.as_os_str())
            .to_string_lossy()
            .into_owned();
        format!("stdio: {name}")
    }

    fn connect(
        &self,
        events: Arc<dyn UpstreamEvents>,
    ) -> BoxFuture<'static, Result<Arc<dyn Connection>, String>> {
        let command = self.command();
        Box::pin(async move {
            let (relay, calls) = Relay::new(events);
            let service =
                transport::open_child(relay, command, Stdio::null(), Lifecycle::Initialize).await?;
            Ok(connection(service, calls))
        })
    }
}

struct HttpConnector {
    url: String,
}

impl Connector for HttpConnector {
    fn describe(&self) -> String {
        self.url.clone()
    }

    fn connect(
        &self,
        events: Arc<dyn UpstreamEvents>,
    ) -> BoxFuture<'static, Result<Arc<dyn Connection>, String>> {
        let url = self.url.clone();
        Box::pin(async move {
            let (relay, calls) = Relay::new(events);
            let service = transport::open_http(relay, &url, None, Lifecycle::Initialize).await?;
            Ok(connection(service, calls))
        })
    }
}

/// The gateway's connection over an opened `service`. Upstreams are spoken to with
/// `initialize` (a session): their `tools/list_changed` reaches the mount without a listen.
fn connection(service: RunningService<RoleClient, Relay>, calls: Calls) -> Arc<dyn Connection> {
    Arc::new(RmcpConnection { service, calls })
}

/// The downstream scopes of the calls in flight, by the progress token of their upstream
/// request.
#[derive(Clone, Default)]
struct Calls(Arc<Mutex<HashMap<ProgressToken, RequestScope>>>);

impl Calls {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, RequestScope>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

struct Relay {
    events: Arc<dyn UpstreamEvents>,
    calls: Calls,
}

impl Relay {
    /// A relay to `events`, and the calls it relays to (shared with the connection).
    fn new(events: Arc<dyn UpstreamEvents>) -> (Relay, Calls) {
        let calls = Calls::default();
        let relay = Relay {
            events,
            calls: calls.clone(),
        };
        (relay, calls)
    }
}

impl ClientHandler for Relay {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let notifier = self
            .calls
            .map()
            .get(&params.progress_token)
            .and_then(|s| s.sink.clone());
        if let Some(n) = notifier
            && n.has_progress_token()
        {
            let _ = n
                .progress(params.progress, params.total, params.message)
                .await;
        }
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // A log message names no request: it goes on only when one call is in flight, so
        // it cannot reach another client's call.
        let level = super::handlers::scope::from_rmcp(params.level);
        let scope = {
            let calls = self.calls.map();
            if calls.len() != 1 {
                return;
            }
            calls.values().next().cloned()
        };
        if let Some(scope) = scope
            && scope.log_threshold.allows(level)
            && let Some(n) = &scope.sink
        {
            let _ = n.log(level, "upstream", params.data).await;
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.events.tools_changed();
    }
}

struct RmcpConnection {
    service: RunningService<RoleClient, Relay>,
    calls: Calls,
}

fn failure(e: ServiceError) -> UpstreamFailure {
    match e {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            UpstreamFailure::Closed(e.to_string())
        }
        ServiceError::McpError(data) => UpstreamFailure::Rpc {
            code: i64::from(data.code.0),
            message: data.message.into_owned(),
        },
        other => UpstreamFailure::Other(other.to_string()),
    }
}

fn tool_of(t: Tool) -> UpstreamTool {
    UpstreamTool {
        name: t.name.into_owned(),
        title: t.title,
        description: t.description.map(|d| d.into_owned()).unwrap_or_default(),
        input_schema: t.input_schema.as_ref().clone(),
        output_schema: t.output_schema.map(|s| s.as_ref().clone()),
        hints: t.annotations.map(|a| Hints {
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
            idempotent: a.idempotent_hint,
            open_world: a.open_world_hint,
        }),
    }
}

fn content_of(block: ContentBlock) -> Content {
    match block {
        ContentBlock::Text(t) => Content::Text(t.text),
        ContentBlock::Image(i) => Content::Image {
            data: i.data,
            mime_type: i.mime_type,
        },
        ContentBlock::Audio(a) => Content::Audio {
            data: a.data,
            mime_type: a.mime_type,
        },
        ContentBlock::Resource(r) => match r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => Content::Resource {
                uri,
                mime_type,
                text,
            },
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => Content::ResourceBlob {
                uri,
                mime_type,
                blob,
            },
            other => Content::Text(serde_json::to_string(&other).unwrap_or_default()),
        },
        ContentBlock::ResourceLink(link) => Content::Text(format!("Resource: {}", link.uri)),
        other => Content::Text(serde_json::to_string(&other).unwrap_or_default()),
    }
}

/// Removes a call from [`Calls`] when it ends, and tells the upstream when it ends
/// unanswered (the downstream client cancelled, or the gateway gave up waiting).
struct InFlight {
    calls: Calls,
    token: ProgressToken,
    id: RequestId,
    peer: Peer<RoleClient>,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.calls.map().remove(&self.token);
        if self.answered {
            return;
        }
        let peer = self.peer.clone();
        let param = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the gateway's client cancelled the call".to_owned()),
        );
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

impl Connection for RmcpConnection {
    fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    fn list_tools(&self) -> BoxFuture<'static, Result<Vec<UpstreamTool>, UpstreamFailure>> {
        let peer = self.service.peer().clone();
        Box::pin(async move {
            let tools = peer.list_all_tools().await.map_err(failure)?;
            Ok(tools.into_iter().map(tool_of).collect())
        })
    }

    fn call(
        &self,
        tool: String,
        arguments: Option<JsonObject>,
        meta: Option<JsonObject>,
        scope: RequestScope,
    ) -> BoxFuture<'static, Result<UpstreamReply, UpstreamFailure>> {
        let peer = self.service.peer().clone();
        let calls = self.calls.clone();
        Box::pin(async move {
            let mut params = CallToolRequestParams::new(tool);
            if let Some(arguments) = arguments {
                params = params.with_arguments(arguments);
            }
            if let Some(meta) = meta {
                params.meta = Some(meta.into());
            }
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            let handle = peer
                .send_cancellable_request(request, PeerRequestOptions::no_options())
                .await
                .map_err(failure)?;
            calls.map().insert(handle.progress_token.clone(), scope);
            let mut in_flight = InFlight {
                calls,
                token: handle.progress_token.clone(),
                id: handle.id.clone(),
                peer,
                answered: false,
            };
            let answer = handle.await_response().await;
            in_flight.answered = true;
            match answer.map_err(failure)? {
                ServerResult::CallToolResult(r) => Ok(UpstreamReply {
                    content: r.content.into_iter().map(content_of).collect(),
                    is_error: r.is_error.unwrap_or(false),
                    structured_content: r.structured_content,
                }),
                _ => Err(UpstreamFailure::Other(
                    "the upstream answered tools/call with something else than a tool result"
                        .to_owned(),
                )),
            }
        })
    }
}
