//! The healing benchmark (issue 31) over a real MCP connection: the runtime's engine
//! ([`fusion_runtime::healing`]: the generator, the reader, the report) with every call sent
//! over stateless streamable HTTP on loopback — to a fresh Fusion server per case, or to a
//! server already listening (the bare rmcp server it is compared with). The `healing` bin
//! prints the table; `tests/healing.rs` holds the rates to a floor.

pub mod nested;

use std::net::SocketAddr;
use std::sync::Arc;

use fusion_runtime::Server;
use fusion_runtime::mcp::{HttpOptions, spawn_http};
use serde_json::{Value, json};

pub use fusion_runtime::healing::{
    Answer, Call, Case, Kind, NoBaseline, Outcome, ROUNDS, Report as Run, Row, Tool, cases,
    first_line, pattern, reader, refuses, repair, rows, table,
};

use crate::raw_http;

/// Where the calls go.
#[derive(Clone)]
pub enum Endpoint {
    /// A fresh Fusion server per case (and per baseline), in this process, so that no case
    /// sees another's side effects (a charge, a rate limit spent).
    Fresh(Arc<dyn Fn() -> Server + Send + Sync>),
    /// A server already listening (a stateless streamable HTTP endpoint at `/mcp`).
    At(SocketAddr),
}

/// A JSON-RPC request to `addr`'s `/mcp`, stateless.
async fn rpc(addr: SocketAddr, method: &str, params: Value) -> anyhow::Result<Value> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let response = raw_http::request(
        addr,
        "POST",
        "/mcp",
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-06-18"),
        ],
        &body,
    )
    .await?;
    Ok(response.message())
}

/// Sends one call.
async fn send(addr: SocketAddr, call: &Call) -> Answer {
    let params = json!({"name": call.tool, "arguments": call.args});
    let message = match rpc(addr, "tools/call", params).await {
        Ok(m) => m,
        Err(e) => {
            return Answer {
                text: format!("(transport: {e})"),
                refused: true,
            };
        }
    };
    if let Some(err) = message.get("error") {
        return Answer {
            text: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(JSON-RPC error)")
                .to_owned(),
            refused: true,
        };
    }
    let result = message.get("result").cloned().unwrap_or(Value::Null);
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    Answer {
        refused: refuses(is_error, &text),
        text,
    }
}

/// A live address for `endpoint`, and the server to shut down after (for `Fresh`).
async fn open(
    endpoint: &Endpoint,
) -> anyhow::Result<(SocketAddr, Option<fusion_runtime::mcp::HttpServer>)> {
    match endpoint {
        Endpoint::At(addr) => Ok((*addr, None)),
        Endpoint::Fresh(make) => {
            let running = spawn_http(
                make(),
                SocketAddr::from(([127, 0, 0, 1], 0)),
                HttpOptions::default().stateless(true),
            )
            .await?;
            Ok((running.local_addr, Some(running)))
        }
    }
}

/// The tools `tools/list` shows.
pub async fn list_tools(endpoint: &Endpoint) -> anyhow::Result<Vec<Tool>> {
    let (addr, running) = open(endpoint).await?;
    let message = rpc(addr, "tools/list", json!({})).await?;
    if let Some(r) = running {
        r.shutdown().await?;
    }
    let tools = message["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Ok(tools
        .into_iter()
        .filter_map(|t| {
            Some(Tool {
                name: t.get("name")?.as_str()?.to_owned(),
                schema: t.get("inputSchema").cloned().unwrap_or(json!({})),
            })
        })
        .collect())
}

/// Runs every case of every tool `endpoint` lists, `parallel` at a time.
pub async fn run(endpoint: Endpoint, parallel: usize) -> anyhow::Result<Run> {
    let tools = list_tools(&endpoint).await?;
    let known: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let known_refs: Vec<&str> = known.iter().map(String::as_str).collect();
    let (variants, no_baseline) = fusion_runtime::healing::variants(&tools);
    let mut run = Run {
        no_baseline,
        ..Run::default()
    };
    let mut all: Vec<Case> = Vec::new();
    for variant in variants {
        let call = Call {
            tool: variant.tool.name.clone(),
            args: variant.valid.clone(),
        };
        let (addr, running) = open(&endpoint).await?;
        let answer = send(addr, &call).await;
        if let Some(r) = running {
            r.shutdown().await?;
        }
        if answer.refused {
            run.no_baseline.push(NoBaseline {
                tool: format!("{} {}", variant.tool.name, variant.valid),
                why: format!(
                    "the valid baseline was refused: {}",
                    first_line(&answer.text)
                ),
            });
            continue;
        }
        all.extend(cases::cases(
            &variant.tool,
            &variant.valid,
            &known_refs,
            variant.key.as_deref(),
        ));
    }
    let listed = Arc::new(known);
    let limit = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, case) in all.into_iter().enumerate() {
        let endpoint = endpoint.clone();
        let limit = Arc::clone(&limit);
        let listed = Arc::clone(&listed);
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            (i, run_case(&endpoint, case, &listed).await)
        });
    }
    let mut done = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (i, outcome) = joined?;
        done.push((i, outcome?));
    }
    done.sort_by_key(|(i, _)| *i);
    run.outcomes = done.into_iter().map(|(_, o)| o).collect();
    Ok(run)
}

/// One case on one endpoint (a fresh server for all its rounds).
async fn run_case(endpoint: &Endpoint, case: Case, listed: &[String]) -> anyhow::Result<Outcome> {
    let (addr, running) = open(endpoint).await?;
    let outcome =
        fusion_runtime::healing::heal(case, listed, |call| async move { send(addr, &call).await })
            .await;
    if let Some(r) = running {
        r.shutdown().await?;
    }
    Ok(outcome)
}

/// The billing example as the benchmark runs it: flat, self-healing against its lockfile.
pub fn billing() -> fusion_runtime::Server {
    examples::billing::server().unwrap_or_else(|e| panic!("billing builds: {e}"))
}

/// The billing example grouped (one `billing` tool), self-healing against its lockfile.
pub fn billing_grouped() -> fusion_runtime::Server {
    examples::billing::builder()
        .grouped()
        .self_healing(examples::billing::LOCKFILE)
        .build()
        .unwrap_or_else(|e| panic!("grouped billing builds: {e}"))
}
