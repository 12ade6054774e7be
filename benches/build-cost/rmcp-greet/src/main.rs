//! `greet` on rmcp: stdio by default, `serve --http ADDR` for streamable HTTP at `/mcp`.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

/// Who to greet.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    /// The name to greet, e.g. `Ada`.
    #[schemars(length(min = 1, max = 64))]
    name: String,
}

#[derive(Clone)]
struct Hello {
    // Read by `#[tool_handler]`'s expansion, which the dead-code lint does not see.
    #[allow(dead_code)]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Hello {
    /// Greets someone by name.
    #[tool(annotations(read_only_hint = true))]
    async fn greet(&self, Parameters(input): Parameters<Greet>) -> String {
        format!("Hello, {}!", input.name)
    }
}

#[tool_handler]
impl ServerHandler for Hello {}

fn hello() -> Hello {
    Hello {
        tool_router: Hello::tool_router(),
    }
}

#[tokio::main]
async fn main() -> anyhow_free::Result {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--http") {
        Some(i) => {
            let addr: SocketAddr = args.get(i + 1).ok_or("--http ADDR")?.parse()?;
            let stateless = args.iter().any(|a| a == "--stateless");
            let config = StreamableHttpServerConfig::default()
                .with_legacy_session_mode(!stateless)
                .with_json_response(stateless);
            let service = StreamableHttpService::new(
                || Ok(hello()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            let app = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("serving MCP over streamable HTTP at http://{}/mcp", listener.local_addr()?);
            axum::serve(listener, app).await?;
        }
        None => {
            hello().serve(rmcp::transport::stdio()).await?.waiting().await?;
        }
    }
    Ok(())
}

/// `main`'s error: any error, as text.
mod anyhow_free {
    pub type Result = std::result::Result<(), Box<dyn std::error::Error + Send + Sync>>;
}
