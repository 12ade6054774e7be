//! Bench (6): end-to-end streamable HTTP, as users run it. `bench_fusion_server` (the bench
//! action behind `cli::run`: default logging, default `HttpOptions`) against
//! `bench_rmcp_server` (a hand-written rmcp handler doing the same work in rmcp's own HTTP
//! service), each stateless and stateful, loaded at 1 and 16 connections with valid and
//! invalid `tools/call`s by a hyper client in this process (one thread): MCP 2025-06-18 calls,
//! and MCP 2026-07-28 calls too (`_meta` with the version, client capabilities and info; the
//! `Mcp-Method` and `Mcp-Name` headers), the revision clients are moving to: it has no
//! sessions, so on the stateful servers its calls open none.
//!
//! Stateful connections each `initialize` their own session first (and `DELETE` it after).
//! Every answer is checked byte for byte against the server's first answer to the same call
//! (SSE `id:` values, which count events, are left out); any mismatch fails the run. The two
//! servers alternate run by run, so both see the same load; the figures are medians over the
//! rounds.
//!
//! ```text
//! cargo bench -p fusion-tests --bench http -- [--rounds N] [--seconds S]
//! ```
//! `BENCH_HTTP_RUST_LOG=warn` sets `RUST_LOG` for both servers (the default is no `RUST_LOG`).
//!
//! `-- --metrics-overhead` measures the cost of metrics instead: the same Fusion server with
//! `serve --metrics` (counting every call; nothing scrapes during the load) against itself
//! without, in the same alternating rounds.

mod common;

use std::net::{SocketAddr, TcpListener as StdListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::body::{Body, Bytes};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

const PROTOCOL: &str = "2025-06-18";
const MODERN: &str = "2026-07-28";
const SESSION: &str = "mcp-session-id";

/// A server process, killed when dropped.
struct Served {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_addr() -> anyhow::Result<SocketAddr> {
    Ok(StdListener::bind("127.0.0.1:0")?.local_addr()?)
}

fn start(exe: &str, args: &[&str]) -> anyhow::Result<Served> {
    let addr = free_addr()?;
    let addr_arg = addr.to_string();
    let mut command = Command::new(exe);
    command
        .args(
            args.iter()
                .map(|a| if *a == "ADDR" { &addr_arg } else { *a }),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove("RUST_LOG");
    if let Ok(level) = std::env::var("BENCH_HTTP_RUST_LOG") {
        command.env("RUST_LOG", level);
    }
    let mut served = Served {
        child: command.spawn().with_context(|| format!("spawn {exe}"))?,
        addr,
    };
    let give_up = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(addr).is_err() {
        if let Some(status) = served.child.try_wait()? {
            bail!("{exe} exited: {status}");
        }
        if Instant::now() > give_up {
            bail!("{exe} does not listen on {addr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(served)
}

/// One client connection (and, stateful, its session).
struct Conn {
    sender: SendRequest<Body>,
    host: String,
    session: Option<String>,
    /// Sends 2026-07-28 requests (its version and standard headers).
    modern: bool,
}

struct Answer {
    status: StatusCode,
    session: Option<String>,
    body: Bytes,
}

impl Conn {
    async fn open(addr: SocketAddr, stateful: bool, modern: bool) -> anyhow::Result<Conn> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .context("handshake")?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut conn = Conn {
            sender,
            host: addr.to_string(),
            session: None,
            modern,
        };
        // A 2026-07-28 client opens no session, on either endpoint.
        if stateful && !modern {
            let init = json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "bench-http", "version": "0.1.0"}
                }
            });
            let answer = conn
                .send(Method::POST, Bytes::from(init.to_string()))
                .await?;
            if answer.status != StatusCode::OK || answer.session.is_none() {
                bail!(
                    "initialize: {} {}",
                    answer.status,
                    String::from_utf8_lossy(&answer.body)
                );
            }
            conn.session = answer.session;
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let answer = conn
                .send(Method::POST, Bytes::from(note.to_string()))
                .await?;
            if !answer.status.is_success() {
                bail!("notifications/initialized: {}", answer.status);
            }
        }
        Ok(conn)
    }

    async fn send(&mut self, method: Method, body: Bytes) -> anyhow::Result<Answer> {
        self.sender.ready().await?;
        let mut request = Request::builder()
            .method(method)
            .uri("/mcp")
            .header(HOST, &self.host)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        request = match self.modern {
            true => request
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "tools/call")
                .header("mcp-name", common::TOOL),
            false => request.header("mcp-protocol-version", PROTOCOL),
        };
        if let Some(session) = &self.session {
            request = request.header(SESSION, session);
        }
        let response = self
            .sender
            .send_request(request.body(Body::from(body))?)
            .await?;
        let (parts, body) = response.into_parts();
        let body = axum::body::to_bytes(Body::new(body), usize::MAX).await?;
        Ok(Answer {
            status: parts.status,
            session: parts
                .headers
                .get(SESSION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            body,
        })
    }

    async fn close(mut self) -> anyhow::Result<()> {
        if self.session.is_some() {
            let answer = self.send(Method::DELETE, Bytes::new()).await?;
            if !answer.status.is_success() {
                bail!("DELETE session: {}", answer.status);
            }
        }
        Ok(())
    }
}

/// The answer without the values of SSE `id:` lines (event counters); everything else as sent.
fn canonical(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    for (i, line) in body.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        if line.starts_with(b"id:") {
            out.extend_from_slice(b"id:");
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

/// The JSON-RPC message in an answer (plain JSON, or the `data:` line of an SSE event).
fn message(body: &[u8]) -> anyhow::Result<Value> {
    let text = std::str::from_utf8(body)?;
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|d| d.starts_with('{'))
        .unwrap_or(text);
    Ok(serde_json::from_str(json)?)
}

#[derive(Clone, Copy)]
struct Config {
    stateful: bool,
    conns: usize,
    valid: bool,
    /// MCP 2026-07-28 (no session, on either endpoint).
    modern: bool,
}

impl Config {
    fn name(self) -> String {
        format!(
            "{} {:>2} conn {}",
            match (self.stateful, self.modern) {
                (true, false) => "stateful 2025  ",
                (false, false) => "stateless 2025 ",
                (false, true) => "stateless 2026 ",
                (true, true) => "stateful 2026  ",
            },
            self.conns,
            if self.valid { "valid  " } else { "invalid" }
        )
    }

    fn body(self) -> Bytes {
        let arguments = if self.valid {
            common::valid_args()
        } else {
            common::invalid_args()
        };
        let mut call = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": common::TOOL, "arguments": arguments}
        });
        if self.modern {
            call["params"]["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "bench-http", "version": "0.1.0"},
            });
        }
        Bytes::from(call.to_string())
    }
}

struct Sample {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
}

/// The first answer to the config's call, checked for what it must say; the reference the
/// load's answers are compared with.
async fn reference(addr: SocketAddr, config: Config) -> anyhow::Result<Vec<u8>> {
    let mut conn = Conn::open(addr, config.stateful, config.modern).await?;
    let answer = conn.send(Method::POST, config.body()).await?;
    conn.close().await?;
    if answer.status != StatusCode::OK {
        bail!("{}: status {}", config.name(), answer.status);
    }
    let message = message(&answer.body)?;
    let is_error = message["result"]["isError"].as_bool().unwrap_or(false);
    if is_error == config.valid || message["result"]["content"][0]["text"].as_str().is_none() {
        bail!("{}: unexpected answer {message}", config.name());
    }
    Ok(canonical(&answer.body))
}

/// Loads one server with one config for `secs`; returns the figures and the mismatches.
async fn load(
    addr: SocketAddr,
    config: Config,
    expected: &[u8],
    secs: f64,
) -> anyhow::Result<(Sample, u64)> {
    let mut conns = Vec::with_capacity(config.conns);
    for _ in 0..config.conns {
        conns.push(Conn::open(addr, config.stateful, config.modern).await?);
    }
    let body = config.body();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let body = body.clone();
            let expected = expected.to_vec();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(1 << 16);
                let mut mismatches = 0u64;
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    let answer = conn.send(Method::POST, body.clone()).await?;
                    latencies.push(sent.elapsed().as_nanos() as u64);
                    if answer.status != StatusCode::OK || canonical(&answer.body) != expected {
                        if mismatches == 0 {
                            eprintln!(
                                "mismatch: {} {}",
                                answer.status,
                                String::from_utf8_lossy(&answer.body)
                            );
                        }
                        mismatches += 1;
                    }
                }
                anyhow::Ok((conn, latencies, mismatches))
            })
        })
        .collect();
    let (mut all, mut mismatches) = (Vec::new(), 0);
    let mut open = Vec::new();
    for task in tasks {
        let (conn, latencies, m) = task.await??;
        all.extend(latencies);
        mismatches += m;
        open.push(conn);
    }
    let elapsed = start.elapsed().as_secs_f64();
    for conn in open {
        conn.close().await?;
    }
    all.sort_unstable();
    let at = |q: f64| {
        let i = ((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1));
        all.get(i).copied().unwrap_or(0) as f64 / 1e3
    };
    Ok((
        Sample {
            rps: all.len() as f64 / elapsed,
            p50_us: at(0.50),
            p99_us: at(0.99),
        },
        mismatches,
    ))
}

fn median(mut v: Vec<f64>) -> f64 {
    common::median(&mut v)
}

fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

fn arg(name: &str) -> Option<f64> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1)?.parse().ok()
}

async fn bench() -> anyhow::Result<()> {
    let rounds = arg("--rounds").map_or(5, |r| r.max(1.0) as usize);
    let secs = arg("--seconds").unwrap_or(1.0);
    let fusion_exe = env!("CARGO_BIN_EXE_bench_fusion_server");
    let bare_exe = env!("CARGO_BIN_EXE_bench_rmcp_server");
    // [stateless, stateful] for each side; `fusion` is measured against `bare`.
    let metrics = flag("--metrics-overhead");
    let (fusion, bare, names) = if metrics {
        // Port 0: the metrics listener's own address is never scraped here.
        let on = ["--metrics", "127.0.0.1:0"];
        (
            [
                start(
                    fusion_exe,
                    &["serve", "--http", "ADDR", "--stateless", on[0], on[1]],
                )?,
                start(fusion_exe, &["serve", "--http", "ADDR", on[0], on[1]])?,
            ],
            [
                start(fusion_exe, &["serve", "--http", "ADDR", "--stateless"])?,
                start(fusion_exe, &["serve", "--http", "ADDR"])?,
            ],
            ["Fusion + metrics", "Fusion"],
        )
    } else {
        (
            [
                start(fusion_exe, &["serve", "--http", "ADDR", "--stateless"])?,
                start(fusion_exe, &["serve", "--http", "ADDR"])?,
            ],
            [
                start(bare_exe, &["--http", "ADDR", "--stateless"])?,
                start(bare_exe, &["--http", "ADDR"])?,
            ],
            ["Fusion", "bare rmcp"],
        )
    };
    let mut configs = Vec::new();
    // 2026-07-28 has no sessions: on the stateful servers its calls open none.
    for (stateful, modern) in [(false, false), (true, false), (false, true), (true, true)] {
        for conns in [1, 16] {
            for valid in [true, false] {
                configs.push(Config {
                    stateful,
                    conns,
                    valid,
                    modern,
                });
            }
        }
    }
    let mut expected = Vec::new();
    for &config in &configs {
        let i = usize::from(config.stateful);
        let f = reference(fusion[i].addr, config).await?;
        let b = reference(bare[i].addr, config).await?;
        // Warm-up: a short load of each, not counted.
        load(fusion[i].addr, config, &f, 0.2).await?;
        load(bare[i].addr, config, &b, 0.2).await?;
        expected.push((f, b));
    }
    println!(
        "bench http: {rounds} rounds of {secs} s per server and config, alternating; medians over the rounds"
    );
    let mut samples: Vec<(Vec<Sample>, Vec<Sample>)> =
        configs.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let mut mismatches = 0;
    for round in 0..rounds {
        for (c, &config) in configs.iter().enumerate() {
            let i = usize::from(config.stateful);
            let (f_expected, b_expected) = &expected[c];
            let (f, b) = if round % 2 == 0 {
                let f = load(fusion[i].addr, config, f_expected, secs).await?;
                (f, load(bare[i].addr, config, b_expected, secs).await?)
            } else {
                let b = load(bare[i].addr, config, b_expected, secs).await?;
                (load(fusion[i].addr, config, f_expected, secs).await?, b)
            };
            mismatches += f.1 + b.1;
            samples[c].0.push(f.0);
            samples[c].1.push(b.0);
        }
    }
    println!(
        "| config | {} req/s | p50 µs | p99 µs | {} req/s | p50 µs | p99 µs | req/s ratio | p50 ratio | p99 ratio |",
        names[0], names[1]
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (config, (f, b)) in configs.iter().zip(&samples) {
        let m = |s: &[Sample], g: fn(&Sample) -> f64| median(s.iter().map(g).collect());
        let (fr, f50, f99) = (m(f, |s| s.rps), m(f, |s| s.p50_us), m(f, |s| s.p99_us));
        let (br, b50, b99) = (m(b, |s| s.rps), m(b, |s| s.p50_us), m(b, |s| s.p99_us));
        // The per-round ratio, then its median: both sides of a ratio saw the same load.
        let rr = median(f.iter().zip(b).map(|(f, b)| f.rps / b.rps).collect());
        println!(
            "| {} | {fr:.0} | {f50:.0} | {f99:.0} | {br:.0} | {b50:.0} | {b99:.0} | **{rr:.3}×** | {:.3}× | {:.3}× |",
            config.name(),
            f50 / b50,
            f99 / b99
        );
    }
    if mismatches > 0 {
        bail!("{mismatches} answers differed from the reference answer");
    }
    println!("every answer matched its reference byte for byte");
    Ok(())
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    if let Err(e) = rt.block_on(bench()) {
        eprintln!("bench http failed: {e:#}");
        std::process::exit(1);
    }
}
