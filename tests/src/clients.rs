//! The official Rust SDK's client (rmcp) connected to a server under test: the billing example
//! as a child process over stdio, or any [`Server`] over streamable HTTP on a loopback port.

use std::process::Stdio;
use std::time::Duration;

use fusion_runtime::Server;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc;

/// An rmcp client with no handler of its own.
pub type Client = RunningService<RoleClient, ()>;

/// How long a handshake may take (CI is a loaded 2-core machine; it takes milliseconds).
pub const HANDSHAKE: Duration = Duration::from_secs(20);

/// `f`, or a panic naming `what` when it takes more than `limit`.
pub async fn bounded<T>(what: &str, limit: Duration, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} took more than {limit:?}"),
    }
}

/// `billing-server serve` (the billing example's binary, built for this crate's tests as
/// `CARGO_BIN_EXE_billing-server`) with no operator token, no ledger directory and no logs.
pub fn billing_command(binary: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(binary);
    command
        .arg("serve")
        .env("RUST_LOG", "off")
        .env_remove("BILLING_OPERATOR_TOKEN")
        .env_remove("BILLING_LEDGER_DIR");
    command
}

/// A client of `command`'s stdio (stderr dropped), past the handshake.
pub async fn over_stdio(command: tokio::process::Command) -> Client {
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    bounded("stdio handshake", HANDSHAKE, ().serve(transport))
        .await
        .unwrap_or_else(|e| panic!("stdio handshake: {e}"))
}

/// `server` on a free loopback port with `options`, and a client of it past the handshake.
pub async fn over_http(server: Server, options: HttpOptions) -> (Client, HttpServer) {
    over_http_with(server, options, ()).await
}

/// [`over_http`] with a client that handles what the server sends with `handler`.
pub async fn over_http_with<H: ClientHandler>(
    server: Server,
    options: HttpOptions,
    handler: H,
) -> (RunningService<RoleClient, H>, HttpServer) {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let running = spawn_http(server, addr, options)
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let transport = StreamableHttpClientTransport::from_uri(running.url.clone());
    let client = bounded("http handshake", HANDSHAKE, handler.serve(transport))
        .await
        .unwrap_or_else(|e| panic!("http handshake: {e}"));
    (client, running)
}

/// A client handler that reports each `notifications/tools/list_changed` on a channel.
pub struct ListWatcher(mpsc::UnboundedSender<()>);

impl ClientHandler for ListWatcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

/// A [`ListWatcher`] and the channel its notifications arrive on.
pub fn list_watcher() -> (ListWatcher, mpsc::UnboundedReceiver<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (ListWatcher(tx), rx)
}
