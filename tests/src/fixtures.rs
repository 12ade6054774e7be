//! Actions and servers that several test files start alike: the task actions (`hang`,
//! `quick`, `nap`), and the billing example served over HTTP with bearer tokens. Each test
//! file keeps its own secret (its tokens are good only on its own servers) and, being its own
//! binary, its own count of naps.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use fusion_runtime::auth::AuthMode;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::store::{MemoryTasks, TaskLimits};
use fusion_runtime::{ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::{Value, json};

/// The issuer of every test token.
pub const ISSUER: &str = "https://auth.example.com";
/// The resource (audience) of every test token.
pub const RESOURCE: &str = "http://127.0.0.1/mcp";

/// An HS256 bearer token for `sub`, signed with `secret`, for [`RESOURCE`] from [`ISSUER`].
pub fn token(secret: &str, sub: &str) -> String {
    crate::services::hs256_token(secret, RESOURCE, ISSUER, sub)
}

/// Nothing.
#[derive(Deserialize, ToolInput)]
pub struct Nothing {}

/// Runs for ten minutes (until its task is cancelled or the test ends).
#[tool_action(name = "hang", task)]
pub async fn hang(_input: Nothing) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(600)).await;
    Ok("woke".to_owned())
}

/// Answers at once.
#[tool_action(name = "quick", task)]
pub async fn quick(_input: Nothing) -> Result<String, ToolError> {
    Ok("done".to_owned())
}

/// How long to nap.
#[derive(Deserialize, ToolInput)]
pub struct Nap {
    /// Milliseconds.
    #[fusion(range(min = 0, max = 60000))]
    pub ms: u64,
}

/// Naps started in this test binary, by length: a test that naps its own length counts its
/// own.
static NAPS_STARTED: Mutex<BTreeMap<u64, usize>> = Mutex::new(BTreeMap::new());

/// How many naps of `ms` milliseconds have started in this test binary.
pub fn naps_started(ms: u64) -> usize {
    let started = NAPS_STARTED.lock().unwrap_or_else(PoisonError::into_inner);
    started.get(&ms).copied().unwrap_or(0)
}

/// How many naps of any length have started in this test binary.
pub fn all_naps_started() -> usize {
    let started = NAPS_STARTED.lock().unwrap_or_else(PoisonError::into_inner);
    started.values().sum()
}

/// Counts itself started, then sleeps `ms` milliseconds.
#[tool_action(name = "nap", task)]
pub async fn nap(input: Nap) -> Result<Value, ToolError> {
    *NAPS_STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(input.ms)
        .or_default() += 1;
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    Ok(json!({ "slept_ms": input.ms }))
}

/// The billing example with `nap` (tasks in memory), stateless or with 2025 sessions, bearer
/// tokens signed with `secret` required when `auth`.
pub async fn billing_with_nap(secret: &str, stateless: bool, auth: bool) -> HttpServer {
    let server = examples::billing::builder()
        .action::<NapAction>()
        .task_store(MemoryTasks::new(TaskLimits::default()))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut options = HttpOptions::default().stateless(stateless);
    if auth {
        options = options.auth(crate::services::hs256_auth(
            secret,
            RESOURCE,
            ISSUER,
            AuthMode::Required,
        ));
    }
    spawn_http(server, SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}
