//! Bench (5): `tools/call` round trips over stdio with an `rmcp` client, to the Fusion server
//! (`bench_fusion_server`) and to a hand-written `rmcp` server doing the same work
//! (`bench_rmcp_server`), both child processes. The figure is Fusion's overhead as a ratio.

mod common;

use std::time::{Duration, Instant};

use common::{TOOL, median, valid_args};
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};

type Client = RunningService<RoleClient, ()>;

async fn spawn(exe: &str) -> Client {
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::new(exe))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {exe}: {e}"));
    ().serve(transport)
        .await
        .unwrap_or_else(|e| panic!("handshake with {exe}: {e}"))
}

fn request() -> CallToolRequestParams {
    let args = valid_args().as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new(TOOL.to_owned()).with_arguments(args)
}

async fn call(client: &Client) -> CallToolResult {
    client
        .call_tool(request())
        .await
        .unwrap_or_else(|e| panic!("tools/call: {e}"))
}

fn stdio(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let fusion = rt.block_on(spawn(env!("CARGO_BIN_EXE_bench_fusion_server")));
    let bare = rt.block_on(spawn(env!("CARGO_BIN_EXE_bench_rmcp_server")));
    for client in [&fusion, &bare] {
        let r = rt.block_on(call(client));
        assert_ne!(r.is_error, Some(true), "the call succeeds: {r:?}");
        assert!(r.structured_content.is_some(), "structured content: {r:?}");
    }

    let mut g = c.benchmark_group("stdio");
    g.sample_size(30).measurement_time(Duration::from_secs(5));
    g.bench_function("fusion_server_tools_call", |b| {
        b.iter(|| rt.block_on(call(&fusion)))
    });
    g.bench_function("baseline_bare_rmcp_server_tools_call", |b| {
        b.iter(|| rt.block_on(call(&bare)))
    });
    g.finish();

    // Interleaved single round trips: medians and means of each, same load.
    let (mut tf, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..2_000 {
        for (client, times) in [(&fusion, &mut tf), (&bare, &mut tb)] {
            let start = Instant::now();
            rt.block_on(call(client));
            times.push(start.elapsed().as_nanos() as f64);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mf, mb) = (mean(&tf), mean(&tb));
    let (pf, pb) = (median(&mut tf), median(&mut tb));
    println!(
        "FIGURE (5) stdio tools/call round trip, p50: fusion {:.1} us | baseline bare rmcp: {:.1} us | ratio {:.3}x | budget <= 1.1x",
        pf / 1e3,
        pb / 1e3,
        pf / pb
    );
    println!(
        "FIGURE (5) stdio tools/call round trip, mean: fusion {:.1} us | baseline bare rmcp: {:.1} us | ratio {:.3}x",
        mf / 1e3,
        mb / 1e3,
        mf / mb
    );
    rt.block_on(async {
        let _ = fusion.cancel().await;
        let _ = bare.cancel().await;
    });
}

criterion_group!(benches, stdio);
criterion_main!(benches);
