//! A large OpenAPI document mounted in each exposure, and what it costs: the time `build()`
//! takes, the resident memory it adds, and `tools/list` in bytes and in tokens (`o200k_base`,
//! through `tiktoken-rs`) flat, grouped and with tool search. Built only with the `tokens`
//! feature (BENCHMARKS.md carries its output):
//!
//! ```sh
//! scripts/ci-openapi   # the npm package @octokit/openapi, in tests/openapi/node_modules
//! cargo run --release -p fusion-tests --features tokens --bin token-cost-openapi [-- DOCUMENT]
//! ```
//!
//! Without an argument the document is GitHub's REST description
//! (`@octokit/openapi/generated/api.github.com.json`), mounted as `OpenApi::file(..)
//! .prefix("gh").skip_unsupported(true)`, flat (also without output schemas), grouped by tag
//! and with tool search. `tools/list` is the list a client receives (`Server::tools_json`,
//! compact JSON): names, descriptions, input and output schemas, annotations.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use fusion_runtime::Server;
use fusion_runtime::openapi::OpenApi;

/// `VmRSS` and `VmHWM` (peak) of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn mib(kib: u64) -> String {
    format!("{:.0}", kib as f64 / 1024.0)
}

async fn run() -> anyhow::Result<()> {
    let document = std::env::args_os().nth(1).map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/openapi/node_modules/@octokit/openapi/generated/api.github.com.json"
            ))
        },
        PathBuf::from,
    );
    anyhow::ensure!(
        document.is_file(),
        "{} is missing: run scripts/ci-openapi (npm ci in tests/openapi)",
        document.display()
    );
    let api = || OpenApi::file(&document).prefix("gh").skip_unsupported(true);
    let bpe = tiktoken_rs::o200k_base()?;

    let (rss_before, _) = memory_kib();
    let started = Instant::now();
    let flat = Server::builder().name("github").openapi(api()).build()?;
    let load = started.elapsed();
    let (rss_after, peak) = memory_kib();
    println!(
        "document: {} ({} bytes)",
        document.display(),
        std::fs::metadata(&document).map(|m| m.len()).unwrap_or(0)
    );
    println!(
        "flat build: {} actions in {:.2} s; resident memory {} → {} MiB (+{} MiB), peak {} MiB",
        flat.actions().len(),
        load.as_secs_f64(),
        mib(rss_before),
        mib(rss_after),
        mib(rss_after.saturating_sub(rss_before)),
        mib(peak)
    );

    // Grouped: one tool per tag; `operation` is the discriminator (GitHub's operations have
    // parameters named `action`, the default discriminator's name).
    let started = Instant::now();
    let grouped = Server::builder()
        .name("github")
        .openapi(api())
        .grouped_by("operation")
        .build()?;
    let grouped_load = started.elapsed();
    let without_outputs = Server::builder()
        .name("github")
        .openapi(api().output_schemas(false))
        .build()?;
    let started = Instant::now();
    let search = Server::builder()
        .name("github")
        .openapi(api())
        .tool_search(true)
        .build()?;
    let search_load = started.elapsed();
    println!(
        "grouped build: {:.2} s; tool search build: {:.2} s",
        grouped_load.as_secs_f64(),
        search_load.as_secs_f64()
    );

    println!("\n| exposure | tools listed | `tools/list` bytes | tokens (o200k_base) |");
    println!("|---|--:|--:|--:|");
    for (label, server) in [
        ("flat", &flat),
        ("flat, `output_schemas(false)`", &without_outputs),
        ("grouped (`grouped_by(\"operation\")`)", &grouped),
        ("tool search (`tool_search(true)`)", &search),
    ] {
        let list = server.tools_json();
        let n = list
            .get("tools")
            .and_then(serde_json::Value::as_array)
            .map_or(0, Vec::len);
        let text = list.to_string();
        let tokens = bpe.encode_with_special_tokens(&text).len();
        println!("| {label} | {n} | {} | {tokens} |", text.len());
    }

    // What tool search costs the model per step: a search's answer, and a description of each
    // tool (the step before calling it).
    let text_of = |r: &fusion_runtime::ToolResponse| r.texts().collect::<Vec<_>>().join("\n");
    println!("\n| tool search step | bytes | tokens (o200k_base) |");
    println!("|---|--:|--:|");
    for query in [
        "list pull requests",
        "create an issue comment",
        "delete a repository webhook",
    ] {
        let found = search
            .call_json(
                "search_tools",
                serde_json::json!({"query": query, "limit": 10}),
            )
            .await;
        let text = text_of(&found);
        let tokens = bpe.encode_with_special_tokens(&text).len();
        println!(
            "| `search_tools` \"{query}\" (10 results) | {} | {tokens} |",
            text.len()
        );
    }
    let mut described: Vec<usize> = Vec::new();
    for tool in flat.tool_specs() {
        let answer = search
            .call_json("describe_tool", serde_json::json!({"name": tool.name}))
            .await;
        described.push(bpe.encode_with_special_tokens(&text_of(&answer)).len());
    }
    described.sort_unstable();
    if let (Some(min), Some(max)) = (described.first(), described.last()) {
        let median = described[described.len() / 2];
        let mean = described.iter().sum::<usize>() / described.len();
        println!(
            "| `describe_tool`, each of the {} tools: median / mean / min / max | | {median} / {mean} / {min} / {max} |",
            described.len()
        );
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("token-cost-openapi: {e:#}");
            ExitCode::FAILURE
        }
    }
}
