//! `greet` on rmcp as a Lambda function: stateless streamable HTTP, JSON answers.

use std::sync::Arc;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

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

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        || {
            Ok(Hello {
                tool_router: Hello::tool_router(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    lambda_http::run(service).await
}
