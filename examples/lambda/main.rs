//! A Fusion server as an AWS Lambda function: the conformance example's tools, prompts and
//! resources (everything the official MCP conformance suite calls), the billing example's
//! rate-limited `billing_charge`, confirmed `billing_refund` and `billing_get_invoice`, and a
//! task, `nap_task`.
//!
//! ```text
//! pip install cargo-lambda                        # the local Lambda emulator
//! cargo lambda watch -p examples --bin lambda -P 9000
//! curl -s http://127.0.0.1:9000/lambda-url/lambda/mcp \
//!   -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
//!   -H 'mcp-protocol-version: 2025-06-18' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
//! ```
//!
//! Configured from the environment, as a function is: `FUSION_LAMBDA_INVOKE_MODE`
//! (`buffered` or `response_stream`, as the function URL's invoke mode), `FUSION_ALLOWED_HOSTS`
//! (the `Host` names accepted, comma-separated; any when unset), `FUSION_REDIS_URL` (rate
//! limits, answered confirmations and tasks shared by every instance; in this instance's
//! memory when unset), `FUSION_REQUEST_STATE_KEY` (the key that seals confirmations, the same
//! on every instance). `scripts/ci-lambda` runs it under `cargo lambda watch` and drives it
//! with the official Python SDK and the conformance suite.

#[path = "../conformance/main.rs"]
#[allow(dead_code)]
mod conformance;

use std::time::Duration;

use examples::billing::{ChargeAction, GetInvoiceAction, RefundAction, Store};
use fusion_runtime::guard::OnStoreFailure;
use fusion_runtime::lambda::{LambdaOptions, run_with};
use fusion_runtime::store::{RedisOnce, RedisStore, RedisTasks};
use fusion_runtime::{ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::{Value, json};

/// How long to sleep.
#[derive(Deserialize, ToolInput)]
struct Nap {
    /// Milliseconds.
    #[fusion(range(min = 0, max = 10000))]
    ms: u64,
}

/// Sleeps `ms` milliseconds as a task: the client polls `tasks/get` for its end.
#[tool_action(name = "nap_task", task)]
async fn nap_task(input: Nap) -> Result<Value, ToolError> {
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    Ok(json!({ "slept_ms": input.ms }))
}

#[tokio::main]
async fn main() -> Result<(), fusion_runtime::lambda::Error> {
    let mut builder = conformance::builder()
        .state(Store::seeded())
        .action::<GetInvoiceAction>()
        .action::<ChargeAction>()
        .action::<RefundAction>()
        .action::<NapTaskAction>();
    if let Ok(url) = std::env::var("FUSION_REDIS_URL") {
        let prefix = std::env::var("FUSION_REDIS_PREFIX").unwrap_or_else(|_| "fusion:rl".into());
        builder = builder
            .rate_limit_store(
                RedisStore::new(&url)?.prefix(prefix.clone()),
                OnStoreFailure::Closed,
            )
            .once_store(RedisOnce::new(&url)?.prefix(prefix.clone()))
            .task_store(RedisTasks::new(&url)?.prefix(prefix));
    }
    run_with(builder.build()?, LambdaOptions::from_env()?).await
}
