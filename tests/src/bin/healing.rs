//! The healing benchmark (issue 31): for every tool of the billing example (flat and grouped),
//! the conformance example, the benches' `accounts_register` and `orders_place` (Fusion, and
//! the bare rmcp server of the benches) and the nested test tools (issue 59), wrong calls of
//! each issue kind are sent over streamable HTTP, repaired by a reader of the answer's text
//! alone, and sent again (see `fusion_tests::healing`). Prints a table per server and every
//! case not healed in one round.
//!
//! ```text
//! cargo build -p fusion-tests --bin bench_rmcp_server --bin healing
//! $CARGO_TARGET_DIR/debug/healing [--all-cases]
//! ```

#[path = "../../benches/common/mod.rs"]
mod common;

#[path = "../../../examples/conformance/main.rs"]
#[allow(dead_code)]
mod conformance;

use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use fusion_tests::healing::{self, Endpoint, Run};

/// The bare rmcp server, killed when dropped.
struct Bare(Child);

impl Drop for Bare {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_bare() -> anyhow::Result<(Bare, std::net::SocketAddr)> {
    let exe = std::env::current_exe()?.with_file_name("bench_rmcp_server");
    let addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let child = Command::new(&exe)
        .args(["--http", &addr.to_string(), "--stateless"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove("RUST_LOG")
        .spawn()
        .with_context(|| {
            format!(
                "spawn {} (cargo build -p fusion-tests --bin bench_rmcp_server)",
                exe.display()
            )
        })?;
    let bare = Bare(child);
    let give_up = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(addr).is_err() {
        if Instant::now() > give_up {
            bail!("{} does not listen on {addr}", exe.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((bare, addr))
}

fn fresh(make: fn() -> fusion_runtime::Server) -> Endpoint {
    Endpoint::Fresh(Arc::new(make))
}

fn conformance() -> fusion_runtime::Server {
    conformance::server().unwrap_or_else(|e| panic!("conformance builds: {e}"))
}

fn report(label: &str, run: &Run, all_cases: bool) {
    println!("\n## {label}\n");
    print!("{}", healing::table(&healing::rows(&run.outcomes)));
    let unlisted = run.outcomes.iter().filter(|o| o.unlisted_name).count();
    println!("\nrepairs that called a name tools/list does not show: {unlisted}");
    for nb in &run.no_baseline {
        println!("NO BASELINE {}: {}", nb.tool, nb.why);
    }
    for o in &run.outcomes {
        if o.healed_in == Some(1) && !all_cases {
            continue;
        }
        println!(
            "- [{}] {} {} ({}): healed in {:?}\n    sent {}\n    answer {}\n    repaired {}\n    last {}",
            o.case.kind.name(),
            o.case.call.tool,
            o.case.what,
            if o.first.refused {
                "refused"
            } else {
                "NOT REFUSED"
            },
            o.healed_in,
            o.case.call.args,
            healing::first_line(&o.first.text),
            o.repairs
                .iter()
                .map(|c| format!("{} {}", c.tool, c.args))
                .collect::<Vec<_>>()
                .join(" | "),
            healing::first_line(&o.last.text),
        );
    }
}

async fn bench() -> anyhow::Result<()> {
    let all_cases = std::env::args().any(|a| a == "--all-cases");
    let mut fusion = Vec::new();
    for (label, endpoint) in [
        ("Fusion: billing (flat)", fresh(healing::billing)),
        ("Fusion: billing (grouped)", fresh(healing::billing_grouped)),
        ("Fusion: conformance", fresh(conformance)),
        (
            "Fusion: accounts_register and orders_place (benches)",
            fresh(common::fusion_server),
        ),
        (
            "Fusion: nested (shipments_create, docs_layout)",
            fresh(healing::nested::server),
        ),
    ] {
        let run = healing::run(endpoint, 8).await?;
        report(label, &run, all_cases);
        fusion.push(run);
    }
    let all: Vec<_> = fusion.iter().flat_map(|r| r.outcomes.iter()).collect();
    println!("\n## Fusion: all of the above\n");
    print!("{}", healing::table(&healing::rows(all)));
    let (_bare, addr) = start_bare()?;
    let run = healing::run(Endpoint::At(addr), 8).await?;
    report(
        "bare rmcp: accounts_register and orders_place (benches)",
        &run,
        all_cases,
    );
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match bench().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
