//! The command line every Fusion server gets for free.
//!
//! ```text
//! my-server                      serve over stdio (the default)
//! my-server serve                the same
//! my-server serve --http ADDR    serve over streamable HTTP at http://ADDR/mcp
//!           [--stateless]        no sessions: for several instances behind a load balancer
//!           [--allow-host H]     accept this Host header too (beyond loopback names)
//!           [--allow-origin O]   accept this Origin too (beyond loopback origins)
//!           [--trust-proxy IP]   a reverse proxy whose X-Forwarded-For names the client
//!           [--forwarded-header x-forwarded-for|forwarded]
//!           [--max-connections N] [--max-connections-per-ip N]
//!           [--header-timeout T] [--body-timeout T]
//!           [--max-body-bytes N] [--max-sessions N] [--max-sessions-per-client N]
//!           [--session-idle-timeout T]   bounds; T is `500ms`, `10s`, `5min`, `1h`
//!                                        (see `mcp::HttpOptions` for the defaults)
//!           [--drain-grace T]    on SIGTERM or Ctrl-C: not ready, no new connections,
//!                                requests in flight finish within T (10s), exit 0
//!           [--metrics ADDR]     Prometheus metrics at http://ADDR/metrics (feature
//!                                `metrics`; with or without `--http`)
//!           [--log-format text|json]   log lines on stderr, one JSON object each with `json`
//!           [--auth-resource URL --auth-jwks FILE | --auth-rs256-pem FILE |
//!            --auth-es256-pem FILE | --auth-hs256-secret S] [--auth-issuer URL]
//!           [--auth-server URL] [--auth-optional]   bearer tokens (see `auth`; feature
//!                                        `auth-jwt`)
//!           [--redis-url URL] [--redis-on-failure closed|open] [--redis-timeout T]
//!           [--redis-prefix P]           rate limits shared by every instance (feature
//!                                        `redis`)
//!           [--otlp-endpoint URL]        export spans as OTLP/HTTP (feature `otel`;
//!                                        or `OTEL_EXPORTER_OTLP_ENDPOINT`)
//! my-server serve --lambda       serve as an AWS Lambda function (feature `lambda`; what a
//!                                bare `my-server` does inside Lambda), configured by
//!                                `FUSION_*` variables (see `lambda`)
//! my-server tools                print tools/list as JSON (the schemas agents see)
//! my-server call TOOL 'JSON'     run one call through the full pipeline and print what
//!           [--json]             the model reads (`--json`: the whole MCP result);
//!                                exit status 1 when it is an error
//! my-server openapi gen DOC      Rust for an OpenAPI document's operations (feature
//!           [--tag T] [--operation O] [--path P] [--prefix P] [--out FILE]   `openapi`):
//!                                a ToolInput struct and a #[tool_action] handler each
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
//! Logs go to stderr (`RUST_LOG` filters them; by default startup, warnings and errors, nothing
//! per request: see [`SERVING_LOG_FILTER`]); stdout carries only protocol messages or the
//! command's output.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

pub use clap::Parser;
use clap::Subcommand;
use serde_json::Value;

#[cfg(feature = "otel")]
mod otel;
#[cfg(any(feature = "auth-jwt", feature = "redis"))]
mod serve_auth;

#[cfg(feature = "auth-jwt")]
#[cfg_attr(docsrs, doc(cfg(all(feature = "cli", feature = "auth-jwt"))))]
pub use serve_auth::AuthArgs;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(all(feature = "cli", feature = "redis"))))]
pub use serve_auth::StoreArgs;

use crate::contract::Lockfile;
use crate::http::ForwardedHeader;
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
// Parsed once per process: the size of `Serve` does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio (the default), or over streamable HTTP with `--http`.
    Serve {
        /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8080) at `/mcp`.
        #[arg(long, value_name = "ADDR")]
        http: Option<SocketAddr>,
        /// With `--http`: no sessions (answers are plain JSON, or SSE when a call sends
        /// progress or logs); instances can sit behind any load balancer.
        #[arg(long, requires = "http")]
        stateless: bool,
        /// With `--http`: also accept this `Host` header (repeatable).
        #[arg(long, value_name = "HOST", requires = "http")]
        allow_host: Vec<String>,
        /// Serve as an AWS Lambda function (what a bare `cli::run` does inside Lambda): the
        /// stateless endpoint, configured by the environment (`FUSION_LAMBDA_INVOKE_MODE`,
        /// `FUSION_ALLOWED_HOSTS`, `FUSION_ALLOWED_ORIGINS`, and the `FUSION_REDIS_*` and
        /// `FUSION_AUTH_*` variables of the flags below).
        #[cfg(feature = "lambda")]
        #[cfg_attr(docsrs, doc(cfg(feature = "lambda")))]
        #[arg(long, conflicts_with = "http")]
        lambda: bool,
        /// With `--http`: the bounds and identity options.
        #[command(flatten)]
        limits: HttpLimits,
        /// With `--http`: bearer-token authentication.
        #[cfg(feature = "auth-jwt")]
        #[cfg_attr(docsrs, doc(cfg(feature = "auth-jwt")))]
        #[command(flatten)]
        auth: AuthArgs,
        /// Rate limits shared through Redis.
        #[cfg(feature = "redis")]
        #[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
        #[command(flatten)]
        store: StoreArgs,
        /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9464): off by
        /// default, and on an address of its own, never the MCP port.
        #[cfg(feature = "metrics")]
        #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
        #[arg(long, value_name = "ADDR")]
        metrics: Option<SocketAddr>,
        /// Log lines on stderr as `text` (the default) or `json` (one object per line).
        #[arg(long, value_name = "FORMAT", default_value = "text")]
        log_format: LogFormat,
        /// Export the request and stage spans as OTLP/HTTP protobuf to this collector
        /// (e.g. http://127.0.0.1:4318; `/v1/traces` is appended). The service is named
        /// `OTEL_SERVICE_NAME`, else the server's name.
        #[cfg(feature = "otel")]
        #[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
        #[arg(long, value_name = "URL", env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
        otlp_endpoint: Option<String>,
    },
    /// Print tools/list as JSON: every tool with its input schema, a mounted upstream's
    /// marked with its mount (connecting to it, bounded by its first-connection wait), and
    /// under `mounts` whether each upstream was reached.
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
    /// The healing benchmark on this server, in process: broken calls of every kind built
    /// from each tool's schema, each repaired by a reader of the answer's text alone, then
    /// sent again. Prints the table per kind and per tool, and what did not heal; exits with
    /// status 1 unless every broken call heals in one round, or `--min-healed` percent of
    /// them (a CI gate). For a server that is not this one, in any language: `fusion-heal`.
    Heal {
        /// The least share of broken calls, in percent, that must heal in one round.
        #[arg(long, default_value_t = 100.0, value_name = "PERCENT", value_parser = crate::healing::parse_percent)]
        min_healed: f64,
    },
    /// OpenAPI documents (feature `openapi`): `openapi gen` writes the Rust of the operations
    /// you pick, to curate by hand.
    #[cfg(feature = "openapi")]
    #[cfg_attr(docsrs, doc(cfg(feature = "openapi")))]
    Openapi {
        /// What to do.
        #[command(subcommand)]
        command: OpenapiCommand,
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

/// An `openapi` command.
#[cfg(feature = "openapi")]
#[cfg_attr(docsrs, doc(cfg(feature = "openapi")))]
#[derive(Debug, Subcommand)]
pub enum OpenapiCommand {
    /// Write a `#[derive(ToolInput)]` struct and a `#[tool_action]` handler for each selected
    /// operation of an OpenAPI 3.1, 3.0 or Swagger 2.0 document (JSON or YAML).
    Gen {
        /// The document.
        document: PathBuf,
        /// Only the operations with this tag (repeatable).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// Only this operation: its operationId or `METHOD /path` (repeatable).
        #[arg(long = "operation", value_name = "OPERATION")]
        operations: Vec<String>,
        /// Only the operations under this path template (repeatable; ends in `/` or `*` for a prefix).
        #[arg(long = "path", value_name = "PATH")]
        paths: Vec<String>,
        /// The actions' prefix (as `OpenApi::prefix`).
        #[arg(long)]
        prefix: Option<String>,
        /// Write to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

/// How log lines are written on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per event: `timestamp`, `level`, `target`, `fields` (with `message`),
    /// and the spans it happened in.
    Json,
}

/// The `serve --http` options beyond the address: who a client is, and the bounds. Each
/// left out keeps [`HttpOptions`]' default.
#[derive(Debug, Default, clap::Args)]
pub struct HttpLimits {
    /// Also accept this `Origin` (repeatable), as `scheme://host:port` or `scheme://host:*`.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,
    /// A reverse proxy (its IP address) whose forwarding header names the client (repeatable).
    #[arg(long, value_name = "IP", requires = "http")]
    pub trust_proxy: Vec<IpAddr>,
    /// The header trusted proxies write: `x-forwarded-for` (default) or `forwarded`.
    #[arg(long, value_name = "HEADER", requires = "http", value_parser = parse_forwarded_header)]
    pub forwarded_header: Option<ForwardedHeader>,
    /// Open connections at most.
    #[arg(long, value_name = "N", requires = "http")]
    pub max_connections: Option<usize>,
    /// Open connections from one IP address at most; through a trusted proxy, requests in
    /// flight per forwarded address.
    #[arg(long, value_name = "N", requires = "http")]
    pub max_connections_per_ip: Option<usize>,
    /// Time to send a request's headers; also the idle keep-alive timeout.
    #[arg(long, value_name = "DURATION", requires = "http", value_parser = parse_duration)]
    pub header_timeout: Option<Duration>,
    /// Time to send a request's body.
    #[arg(long, value_name = "DURATION", requires = "http", value_parser = parse_duration)]
    pub body_timeout: Option<Duration>,
    /// The largest request body, in bytes.
    #[arg(long, value_name = "N", requires = "http")]
    pub max_body_bytes: Option<usize>,
    /// Live sessions at most.
    #[arg(long, value_name = "N", requires = "http")]
    pub max_sessions: Option<usize>,
    /// Live sessions one client may hold.
    #[arg(long, value_name = "N", requires = "http")]
    pub max_sessions_per_client: Option<usize>,
    /// A session unused for this long is closed.
    #[arg(long, value_name = "DURATION", requires = "http", value_parser = parse_duration)]
    pub session_idle_timeout: Option<Duration>,
    /// After SIGTERM or Ctrl-C, how long requests in flight may take to finish (`/readyz`
    /// answers 503 and new connections are refused meanwhile).
    #[arg(long, value_name = "DURATION", requires = "http", value_parser = parse_duration)]
    pub drain_grace: Option<Duration>,
}

impl HttpLimits {
    /// `options` with these set.
    pub fn apply(self, options: HttpOptions) -> HttpOptions {
        /// `options`, with `set` applied when a value was given.
        fn given<T>(
            options: HttpOptions,
            value: Option<T>,
            set: fn(HttpOptions, T) -> HttpOptions,
        ) -> HttpOptions {
            match value {
                Some(v) => set(options, v),
                None => options,
            }
        }
        let options = self.trust_proxy.into_iter().fold(
            options.allow_origins(self.allow_origin),
            HttpOptions::trust_proxy,
        );
        let options = given(
            options,
            self.forwarded_header,
            HttpOptions::forwarded_header,
        );
        let options = given(options, self.max_connections, HttpOptions::max_connections);
        let options = given(
            options,
            self.max_connections_per_ip,
            HttpOptions::max_connections_per_ip,
        );
        let options = given(options, self.header_timeout, HttpOptions::header_timeout);
        let options = given(options, self.body_timeout, HttpOptions::body_timeout);
        let options = given(options, self.max_body_bytes, HttpOptions::max_body_bytes);
        let options = given(options, self.max_sessions, HttpOptions::max_sessions);
        let options = given(
            options,
            self.max_sessions_per_client,
            HttpOptions::max_sessions_per_client,
        );
        let options = given(
            options,
            self.session_idle_timeout,
            HttpOptions::session_idle_timeout,
        );
        given(options, self.drain_grace, HttpOptions::drain_grace)
    }
}

fn parse_forwarded_header(text: &str) -> Result<ForwardedHeader, String> {
    match text.to_ascii_lowercase().as_str() {
        "x-forwarded-for" => Ok(ForwardedHeader::XForwardedFor),
        "forwarded" => Ok(ForwardedHeader::Forwarded),
        _ => Err(format!("`{text}` is not `x-forwarded-for` or `forwarded`")),
    }
}

/// `500ms`, `10s`, `5min` (or `5m`), `1h`; a bare number is seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like `500ms`, `10s`, `5min`"))?;
    match unit.trim() {
        "ms" => Ok(Duration::from_millis(n)),
        "" | "s" => Ok(Duration::from_secs(n)),
        "m" | "min" => Ok(Duration::from_secs(n.saturating_mul(60))),
        "h" => Ok(Duration::from_secs(n.saturating_mul(3600))),
        other => Err(format!(
            "unknown unit `{other}` in `{text}`: use ms, s, min or h"
        )),
    }
}

/// Parses the process's arguments and runs the command.
pub async fn run(server: Server) -> ExitCode {
    #[cfg_attr(not(feature = "lambda"), allow(unused_mut))]
    let mut cli = Cli::parse();
    // Lambda starts the function with no arguments: inside it, that means `serve --lambda`.
    #[cfg(feature = "lambda")]
    if cli.command.is_none() && std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        cli = Cli::parse_from(["server", "serve", "--lambda"]);
    }
    run_command(server, cli.command).await
}

/// Runs a command (`None` means `serve` over stdio).
pub async fn run_command(server: Server, command: Option<Command>) -> ExitCode {
    #[cfg(feature = "tracing-subscriber")]
    let serving = matches!(command, None | Some(Command::Serve { .. }));
    #[cfg(feature = "otel")]
    let traces = match &command {
        Some(Command::Serve {
            otlp_endpoint: Some(endpoint),
            ..
        }) => match otel::provider(endpoint, server.name()) {
            Ok(provider) => Some(provider),
            Err(e) => {
                eprintln!("error: the OTLP exporter for {endpoint}: {e:#}");
                return ExitCode::from(2);
            }
        },
        _ => None,
    };
    #[cfg(feature = "tracing-subscriber")]
    let format = match &command {
        Some(Command::Serve { log_format, .. }) => *log_format,
        _ => LogFormat::Text,
    };
    #[cfg(feature = "otel")]
    if let Some(provider) = &traces {
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        let _ = tracing_subscriber::registry()
            .with(otel::layer(provider))
            .with(log_layer(serving, format))
            .try_init();
    }
    // (When the exporter's subscriber is installed above, this one is not: the first wins.)
    #[cfg(feature = "tracing-subscriber")]
    init_tracing_as(serving, format);
    let code = match execute_boxed(server, command).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    };
    // After the drain: the spans of the last requests are sent before the process exits.
    #[cfg(feature = "otel")]
    if let Some(provider) = traces {
        otel::shutdown(provider).await;
    }
    code
}

/// What serving logs when `RUST_LOG` is not set: startup at `info`, warnings and errors, and
/// nothing per request. rmcp logs three `info` lines per stateless HTTP request (and one per
/// session), and the pipeline an `info` line per unrouted, refused or cancelled call: they are
/// the operator's to ask for (`RUST_LOG=info`, `RUST_LOG=rmcp=info`, `RUST_LOG=debug`), not a
/// cost every request pays.
pub const SERVING_LOG_FILTER: &str = "info,rmcp=warn,fusion_runtime::server=warn";

/// Installs a `tracing` subscriber writing to stderr (once; later calls do nothing).
/// `RUST_LOG` overrides the level ([`SERVING_LOG_FILTER`] when serving, `warn` otherwise).
#[cfg(feature = "tracing-subscriber")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing-subscriber")))]
pub fn init_tracing(serving: bool) {
    init_tracing_as(serving, LogFormat::Text);
}

/// [`init_tracing`], writing lines in `format`.
#[cfg(feature = "tracing-subscriber")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing-subscriber")))]
pub fn init_tracing_as(serving: bool, format: LogFormat) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let _ = tracing_subscriber::registry()
        .with(log_layer(serving, format))
        .try_init();
}

/// The stderr log lines, filtered by `RUST_LOG`, in `format`; never the request and stage
/// spans ([`SPANS`](crate::server::SPANS)): they are for the trace exporter, and a log that
/// listened to them would make every call pay for them.
#[cfg(feature = "tracing-subscriber")]
fn log_layer<S>(
    serving: bool,
    format: LogFormat,
) -> Box<dyn tracing_subscriber::Layer<S> + Send + Sync>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::FilterExt as _;
    let default = if serving { SERVING_LOG_FILTER } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let spans = tracing_subscriber::filter::filter_fn(|m| m.target() != crate::server::SPANS);
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false);
    match format {
        LogFormat::Text => lines.with_filter(filter.and(spans)).boxed(),
        LogFormat::Json => lines.json().with_filter(filter.and(spans)).boxed(),
    }
}

/// [`execute`], boxed by a plain function: an `async fn`'s body is copied into every codegen
/// unit (and every crate: the user's `main` awaits [`run`]) that awaits it, with everything it
/// awaits; behind a box made here the commands are compiled once.
#[inline(never)]
fn execute_boxed(server: Server, command: Option<Command>) -> Commands {
    Box::pin(execute(server, command))
}

#[cfg(not(feature = "lambda"))]
type Commands = futures::future::BoxFuture<'static, anyhow::Result<ExitCode>>;
// `lambda_http::run`'s future is not `Send`, so neither is `execute`'s with `lambda` on.
#[cfg(feature = "lambda")]
type Commands = futures::future::LocalBoxFuture<'static, anyhow::Result<ExitCode>>;

async fn execute(server: Server, command: Option<Command>) -> anyhow::Result<ExitCode> {
    match command {
        #[cfg(feature = "lambda")]
        Some(Command::Serve {
            lambda: true,
            #[cfg(feature = "auth-jwt")]
            auth,
            #[cfg(feature = "redis")]
            store,
            ..
        }) => {
            #[cfg(feature = "redis")]
            store.apply(&server)?;
            #[cfg_attr(not(feature = "auth-jwt"), allow(unused_mut))]
            let mut options =
                crate::lambda::LambdaOptions::from_env().map_err(|e| anyhow::anyhow!("{e}"))?;
            #[cfg(feature = "auth-jwt")]
            if let Some(auth) = auth.build()? {
                tracing::info!(resource = auth.resource(), mode = ?auth.auth_mode(), "bearer-token authentication on");
                options.http = options.http.auth(auth);
            }
            tracing::info!(server = server.name(), mode = ?options.invoke_mode, "serving MCP as an AWS Lambda function");
            crate::lambda::run_with(server, options)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            tracing::info!(server = server.name(), "serving MCP over stdio");
            mcp::serve_stdio(server).await?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Serve {
            http: None,
            #[cfg(feature = "auth-jwt")]
            auth,
            #[cfg(feature = "redis")]
            store,
            #[cfg(feature = "metrics")]
            metrics,
            #[cfg(feature = "metrics")]
            log_format,
            ..
        }) => {
            #[cfg(feature = "metrics")]
            let _metrics = serve_metrics(metrics, log_format).await?;
            #[cfg(feature = "redis")]
            store.apply(&server)?;
            #[cfg(feature = "auth-jwt")]
            if auth.build()?.is_some() {
                anyhow::bail!(
                    "authentication is for `serve --http`: over stdio no token travels (see the `auth` module)"
                );
            }
            tracing::info!(server = server.name(), "serving MCP over stdio");
            mcp::serve_stdio(server).await?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Serve {
            http: Some(addr),
            stateless,
            allow_host,
            limits,
            #[cfg(feature = "auth-jwt")]
            auth,
            #[cfg(feature = "redis")]
            store,
            #[cfg(feature = "metrics")]
            metrics,
            log_format,
            ..
        }) => {
            #[cfg(feature = "metrics")]
            let _metrics = serve_metrics(metrics, log_format).await?;
            #[cfg(feature = "redis")]
            store.apply(&server)?;
            #[cfg_attr(not(feature = "auth-jwt"), allow(unused_mut))]
            let mut options = limits.apply(
                HttpOptions::default()
                    .stateless(stateless)
                    .allow_hosts(allow_host),
            );
            #[cfg(feature = "auth-jwt")]
            if let Some(auth) = auth.build()? {
                tracing::info!(resource = auth.resource(), mode = ?auth.auth_mode(), "bearer-token authentication on");
                options = options.auth(auth);
            }
            // `/readyz` requires the Redis the stores use to answer.
            #[cfg(feature = "redis")]
            if let Some(url) = &store.redis_url {
                let timeout = store
                    .redis_timeout
                    .unwrap_or(crate::store::DEFAULT_REDIS_TIMEOUT);
                options = options.ready_check(crate::http::ReadyCheck::redis_ping(url, timeout)?);
            }
            let shutdown = options.shutdown.clone();
            let running = mcp::spawn_http(server, addr, options).await?;
            announce(
                log_format,
                "serving MCP over streamable HTTP",
                &running.url,
                Some(stateless),
            );
            tokio::spawn(async move {
                stop_signal().await;
                tracing::info!(
                    "draining: not ready, no new connections, finishing requests in flight"
                );
                shutdown.cancel();
            });
            running.wait().await?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Lock { check, path }) => {
            let path = path
                .or_else(|| server.lockfile_path().map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("fusion.lock"));
            let lock = Lockfile::from_contracts(&server.all_contracts().await)?;
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
        #[cfg(feature = "openapi")]
        Some(Command::Openapi {
            command:
                OpenapiCommand::Gen {
                    document,
                    tags,
                    operations,
                    paths,
                    prefix,
                    out,
                },
        }) => {
            let mut api = crate::openapi::OpenApi::file(&document)
                .tags(tags)
                .operations(operations)
                .paths(paths);
            if let Some(p) = prefix {
                api = api.prefix(p);
            }
            let options = crate::openapi::GenerateOptions {
                document: Some(document.display().to_string()),
            };
            let code = crate::openapi::generate(&api.load()?, &options);
            match out {
                Some(path) => std::fs::write(&path, code)?,
                None => print!("{code}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Heal { min_healed }) => {
            let report = crate::healing::run(&server).await;
            print!("{}", report.table());
            let all = report.outcomes.len();
            if report.heals_in_one_round() {
                println!("all {all} broken calls healed in one round");
                return Ok(ExitCode::SUCCESS);
            }
            println!("{}", report.verdict(min_healed));
            Ok(if report.meets(min_healed) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Some(Command::Tools) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&server.tools_listing().await)?
            );
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

/// The metrics listener `--metrics` asks for, announced on stderr like the MCP address.
#[cfg(feature = "metrics")]
async fn serve_metrics(
    addr: Option<SocketAddr>,
    format: LogFormat,
) -> anyhow::Result<Option<crate::http::MetricsServer>> {
    let Some(addr) = addr else {
        return Ok(None);
    };
    let running = crate::http::spawn_metrics(addr).await?;
    announce(format, "serving metrics", &running.url, None);
    Ok(Some(running))
}

/// The line that tells scripts, tests and operators where a listener is, written whatever
/// `RUST_LOG` says: `fusion: {what} at {url}` (and ` (stateless)`) as text, or with
/// `--log-format json` an object shaped like the log lines (`timestamp`, `level`,
/// `fields.message`, `fields.url`, `fields.stateless`, `target`), so a JSON log pipeline reads
/// every line of stderr.
fn announce(format: LogFormat, what: &str, url: &str, stateless: Option<bool>) {
    match format {
        LogFormat::Text => {
            let note = if stateless == Some(true) {
                " (stateless)"
            } else {
                ""
            };
            eprintln!("fusion: {what} at {url}{note}");
        }
        LogFormat::Json => {
            let mut fields = serde_json::Map::new();
            fields.insert("message".into(), what.into());
            fields.insert("url".into(), url.into());
            if let Some(stateless) = stateless {
                fields.insert("stateless".into(), stateless.into());
            }
            let mut line = serde_json::Map::new();
            if let Some(now) = now_rfc3339() {
                line.insert("timestamp".into(), now.into());
            }
            line.insert("level".into(), "INFO".into());
            line.insert("fields".into(), fields.into());
            line.insert("target".into(), module_path!().into());
            eprintln!("{}", Value::Object(line));
        }
    }
}

/// Now, formatted as the JSON log lines' `timestamp` is.
#[cfg(feature = "tracing-subscriber")]
fn now_rfc3339() -> Option<String> {
    use tracing_subscriber::fmt::format::Writer;
    use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
    let mut now = String::new();
    SystemTime.format_time(&mut Writer::new(&mut now)).ok()?;
    Some(now)
}

/// Without `tracing-subscriber` there is no JSON log to match: no timestamp.
#[cfg(not(feature = "tracing-subscriber"))]
fn now_rfc3339() -> Option<String> {
    None
}

/// SIGTERM (what orchestrators send) or Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
                return;
            }
            Err(e) => tracing::warn!(error = %e, "cannot listen for SIGTERM; Ctrl-C only"),
        }
    }
    let _ = tokio::signal::ctrl_c().await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_the_units_the_docs_name() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("5min"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5days").is_err());
    }

    #[test]
    fn heal_takes_a_threshold_in_percent() {
        let threshold = |args: &[&str]| match Cli::try_parse_from(args) {
            Ok(Cli {
                command: Some(Command::Heal { min_healed }),
                ..
            }) => Ok(min_healed),
            Ok(_) => Err("another command".to_owned()),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(threshold(&["srv", "heal"]), Ok(100.0));
        assert_eq!(
            threshold(&["srv", "heal", "--min-healed", "97.5"]),
            Ok(97.5)
        );
        assert_eq!(threshold(&["srv", "heal", "--min-healed", "90%"]), Ok(90.0));
        assert!(threshold(&["srv", "heal", "--min-healed", "140"]).is_err());
        assert!(threshold(&["srv", "heal", "--min-healed", "most"]).is_err());
    }

    #[test]
    fn the_http_flags_reach_the_options() {
        let cli = Cli::try_parse_from([
            "srv",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--max-connections",
            "7",
            "--header-timeout",
            "2s",
            "--trust-proxy",
            "10.0.0.1",
            "--forwarded-header",
            "forwarded",
            "--allow-origin",
            "https://app.example:443",
            "--max-sessions-per-client",
            "3",
            "--session-idle-timeout",
            "1min",
            "--max-connections-per-ip",
            "5",
            "--body-timeout",
            "3s",
            "--max-body-bytes",
            "4096",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let Some(Command::Serve { limits, .. }) = cli.command else {
            panic!("not serve");
        };
        let o = limits.apply(HttpOptions::default());
        assert_eq!(o.max_connections, 7);
        assert_eq!(o.header_timeout, Duration::from_secs(2));
        assert_eq!(
            o.trusted_proxies,
            vec![
                "10.0.0.1"
                    .parse::<IpAddr>()
                    .unwrap_or_else(|e| panic!("{e}"))
            ]
        );
        assert_eq!(o.forwarded_header, ForwardedHeader::Forwarded);
        assert!(
            o.allowed_origins
                .iter()
                .any(|x| x == "https://app.example:443")
        );
        assert_eq!(o.max_sessions_per_client, 3);
        assert_eq!(o.session_idle_timeout, Duration::from_secs(60));
        assert_eq!(o.max_connections_per_ip, 5);
        assert_eq!(o.body_timeout, Duration::from_secs(3));
        assert_eq!(o.max_body_bytes, 4096);
        // A flag not given keeps the default.
        assert_eq!(o.max_sessions, HttpOptions::default().max_sessions);
    }
}
