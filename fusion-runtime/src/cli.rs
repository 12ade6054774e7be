//! The command line every Fusion server gets for free.
//!
//! ```text
//! my-server                      serve over stdio (the default)
//! my-server serve                the same
//! my-server serve --http ADDR    serve over streamable HTTP at http://ADDR/mcp
//!           [--stateless]        no sessions: for several instances behind a load balancer
//!           [--allow-host H]     accept this Host header too (beyond loopback names)
//! my-server tools                print tools/list as JSON (the schemas agents see)
//! my-server call TOOL 'JSON'     run one call through the full pipeline and print what
//!           [--json]             the model reads (`--json`: the whole MCP result);
//!                                exit status 1 when it is an error
//! my-server lock                 write the contract lockfile (fusion.lock)
//!           [--check]            compare instead: exit status 1 and the deltas when stale
//!           [--path PATH]        another lockfile than the server's (default ./fusion.lock)
//! ```
//!
//! ```no_run
//! # async fn build() -> fusion_runtime::Server { unimplemented!() }
//! #[tokio::main]
//! async fn main() -> std::process::ExitCode {
//!     fusion_runtime::cli::run(build().await).await
//! }
//! ```
//!
//! Logs go to stderr (`RUST_LOG` filters them); stdout carries only protocol messages or
//! the command's output.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

pub use clap::Parser;
use clap::Subcommand;
use serde_json::Value;

use crate::contract::Lockfile;
use crate::mcp::{self, HttpOptions};
use crate::server::Server;

/// The command line.
#[derive(Debug, Parser)]
#[command(about = "An MCP server built with Fusion", version)]
pub struct Cli {
    /// What to do; `serve` (stdio) when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// A command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio (the default), or over streamable HTTP with `--http`.
    Serve {
        /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8080) at `/mcp`.
        #[arg(long, value_name = "ADDR")]
        http: Option<SocketAddr>,
        /// With `--http`: no sessions, plain JSON answers; instances can sit behind any
        /// load balancer.
        #[arg(long, requires = "http")]
        stateless: bool,
        /// With `--http`: also accept this `Host` header (repeatable).
        #[arg(long, value_name = "HOST", requires = "http")]
        allow_host: Vec<String>,
    },
    /// Print tools/list as JSON: every tool with its input schema.
    Tools,
    /// Run one call through the full pipeline and print what the model would read (each text
    /// block; `--json` for the whole MCP result); exits with status 1 when it is an error.
    Call {
        /// The tool name, as tools/list shows it (e.g. `billing_get_invoice`).
        tool: String,
        /// The arguments, a JSON object (default `{}`).
        #[arg(default_value = "{}")]
        arguments: String,
        /// Print the whole `CallToolResult` as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Write the contract lockfile: every action's exposed name, description, hints,
    /// deprecation and input schema, with a SHA-256 digest each. Deterministic; commit it.
    Lock {
        /// Compare instead of writing: exit status 1 and print the deltas when the lockfile is
        /// missing or stale (a CI gate).
        #[arg(long)]
        check: bool,
        /// The lockfile (default: the server's configured lockfile, else `./fusion.lock`).
        #[arg(long, value_name = "PATH")]
        path: Option<PathBuf>,
    },
}

/// Parses the process's arguments and runs the command.
pub async fn run(server: Server) -> ExitCode {
    let cli = Cli::parse();
    run_command(server, cli.command).await
}

/// Runs a command (`None` means `serve` over stdio).
pub async fn run_command(server: Server, command: Option<Command>) -> ExitCode {
    init_tracing(matches!(command, None | Some(Command::Serve { .. })));
    match execute(server, command).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Installs a `tracing` subscriber writing to stderr (once; later calls do nothing).
/// `RUST_LOG` overrides the level (`info` when serving, `warn` otherwise).
pub fn init_tracing(serving: bool) {
    let default = if serving { "info" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

async fn execute(server: Server, command: Option<Command>) -> anyhow::Result<ExitCode> {
    match command {
        None | Some(Command::Serve { http: None, .. }) => {
            tracing::info!(server = server.name(), "serving MCP over stdio");
            mcp::serve_stdio(server).await?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Serve {
            http: Some(addr),
            stateless,
            allow_host,
        }) => {
            let options = HttpOptions::default()
                .stateless(stateless)
                .allow_hosts(allow_host);
            let shutdown = options.shutdown.clone();
            let running = mcp::spawn_http(server, addr, options).await?;
            // A plain line on stderr, so scripts and tests can find the port.
            eprintln!(
                "fusion: serving MCP over streamable HTTP at {}{}",
                running.url,
                if stateless { " (stateless)" } else { "" }
            );
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                shutdown.cancel();
            });
            running.wait().await?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Lock { check, path }) => {
            let path = path
                .or_else(|| server.lockfile_path().map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("fusion.lock"));
            let lock = Lockfile::from_contracts(server.contracts())?;
            if !check {
                lock.write(&path)?;
                println!(
                    "wrote {} ({} actions)",
                    path.display(),
                    lock.contracts().len()
                );
                return Ok(ExitCode::SUCCESS);
            }
            Ok(check_lockfile(&lock, &path))
        }
        Some(Command::Tools) => {
            println!("{}", serde_json::to_string_pretty(&server.tools_json())?);
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Call {
            tool,
            arguments,
            json,
        }) => {
            let arguments: Value = match serde_json::from_str(&arguments) {
                Ok(v) => v,
                Err(e) => anyhow::bail!("the arguments are not JSON ({e}): {arguments}"),
            };
            let response = server.call_json(&tool, arguments).await;
            let is_error = response.is_error;
            if json {
                let result = mcp::to_call_tool_result(response);
                println!("{}", serde_json::to_string_pretty(&result)?);
            } else {
                let texts: Vec<&str> = response.texts().collect();
                println!("{}", texts.join("\n\n"));
                eprintln!("isError: {is_error}");
            }
            Ok(if is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// `lock --check`: up to date means the same contracts AND the same bytes (a hand-edited but
/// equivalent file is stale too, so the committed file is always what `lock` writes).
fn check_lockfile(current: &Lockfile, path: &std::path::Path) -> ExitCode {
    let committed = match Lockfile::read(path) {
        Ok(l) => l,
        Err(e) => {
            println!("{e}");
            println!("run the `lock` command to write {}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let deltas = committed.check(current.contracts());
    let same_bytes = std::fs::read_to_string(path).is_ok_and(|text| text == current.to_string());
    if deltas.is_empty() && same_bytes {
        println!(
            "{} is up to date ({} actions)",
            path.display(),
            current.contracts().len()
        );
        return ExitCode::SUCCESS;
    }
    println!("{} is stale:", path.display());
    for d in &deltas {
        println!("  {d}");
    }
    if deltas.is_empty() {
        println!("  (same contracts, different formatting)");
    }
    println!("run the `lock` command to update it, and review the deltas above");
    ExitCode::FAILURE
}
