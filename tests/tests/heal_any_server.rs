//! The healing check for any server (issue 59): `fusion-heal` against the benches' bare rmcp
//! server (a hand-written `ServerHandler`, serde and checks by hand) and against Fusion's,
//! both started by the test as processes, over streamable HTTP and over stdio. The same
//! generator and reader as in process, through a real MCP connection: Fusion heals every
//! broken call in one round, the bare server far fewer, and the exit status follows the
//! threshold.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use fusion_heal::{Args, Outcome};
use fusion_runtime::healing::Kind;

const BARE: &str = env!("CARGO_BIN_EXE_bench_rmcp_server");
const FUSION: &str = env!("CARGO_BIN_EXE_bench_fusion_server");

/// A server process, killed when dropped.
struct Running(Child, SocketAddr);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `exe` serving streamable HTTP on a free loopback port, once it accepts connections.
fn start_http(exe: &str, args: &[&str]) -> Running {
    let addr = free_addr();
    let child = Command::new(exe)
        .args(args.iter().map(|a| a.replace("ADDR", &addr.to_string())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env("RUST_LOG", "off")
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {exe}: {e}"));
    let running = Running(child, addr);
    let give_up = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < give_up, "{exe} does not listen on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
    running
}

/// The check `args` (the command line after `fusion-heal`) describe, run.
fn check(args: &[&str]) -> impl Future<Output = Outcome> + use<> {
    let args = Args::try_parse_from(std::iter::once("fusion-heal").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{e}"));
    async move {
        tokio::time::timeout(Duration::from_secs(300), fusion_heal::run(&args))
            .await
            .unwrap_or_else(|_| panic!("fusion-heal {args:?} did not finish in 300 s"))
    }
}

fn pct(o: &Outcome) -> f64 {
    o.report
        .as_ref()
        .unwrap_or_else(|| panic!("no report: {}", o.output))
        .pct_healed_in_one_round()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scores_the_bare_rmcp_server_and_fusion_over_http_and_stdio() {
    let bare = start_http(BARE, &["--http", "ADDR", "--stateless"]);
    let fusion = start_http(FUSION, &["serve", "--http", "ADDR", "--stateless"]);
    let (bare_url, fusion_url) = (
        format!("http://{}/mcp", bare.1),
        format!("http://{}/mcp", fusion.1),
    );
    let (bare_http, fusion_http, bare_stdio, fusion_stdio) = tokio::join!(
        check(&[&bare_url]),
        check(&[&fusion_url]),
        check(&["--", BARE]),
        check(&["--", FUSION]),
    );

    for fusion in [&fusion_http, &fusion_stdio] {
        let report = fusion
            .report
            .as_ref()
            .unwrap_or_else(|| panic!("{}", fusion.output));
        assert_eq!(fusion.code, 0, "{}", fusion.output);
        report.assert_heals_in_one_round();
        // Both tools, the nested one's object kinds among the rows.
        let tools = report.per_tool();
        assert_eq!(
            tools.keys().map(String::as_str).collect::<Vec<_>>(),
            ["accounts_register", "orders_place"]
        );
        let rows = report.rows();
        for kind in [
            Kind::ObjectWrongType,
            Kind::ItemWrongType,
            Kind::SeveralNested,
        ] {
            assert!(
                rows.get(&Some(kind)).is_some_and(|r| r.cases > 0),
                "no {kind:?} row: {}",
                fusion.output
            );
        }
        assert!(
            fusion
                .output
                .contains(" broken calls healed in one round (100.0 %); threshold 100 %: met"),
            "{}",
            fusion.output
        );
    }
    for bare in [&bare_http, &bare_stdio] {
        assert_eq!(bare.code, 1, "{}", bare.output);
        assert!(pct(bare) < 50.0, "bare rmcp healed {:.1} %", pct(bare));
        assert!(
            bare.output.contains("not healed in one round:"),
            "{}",
            bare.output
        );
    }
    // The same cases, whichever transport carries them.
    let count = |o: &Outcome| o.report.as_ref().map_or(0, |r| r.outcomes.len());
    assert_eq!(count(&bare_http), count(&fusion_http));
    assert_eq!(count(&bare_stdio), count(&fusion_stdio));
    assert_eq!(count(&bare_http), count(&bare_stdio));

    // A threshold the bare server's score meets: exit 0.
    let floor = format!("{}", pct(&bare_http).floor());
    let lenient = check(&["--min-healed", &floor, "--", BARE]).await;
    assert_eq!(lenient.code, 0, "{}", lenient.output);
    eprintln!(
        "bare rmcp: {:.1} % (HTTP), {:.1} % (stdio); Fusion: {:.1} % (HTTP), {:.1} % (stdio)",
        pct(&bare_http),
        pct(&bare_stdio),
        pct(&fusion_http),
        pct(&fusion_stdio)
    );
}
