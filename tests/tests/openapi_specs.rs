//! Documents nobody here wrote: every document of the npm package `@readme/oas-examples`
//! (OpenAPI 3.0, 3.1 and Swagger 2.0, JSON and YAML: `$ref` cycles, odd parameters, callbacks,
//! polymorphism) loads or fails with a precise error; GitHub's REST description (npm
//! `@octokit/openapi`) loads, and its `tools/list` is measured flat, grouped and with tool
//! search (the figures in BENCHMARKS.md come from this test's output).

use std::time::Instant;

use fusion_runtime::Server;
use fusion_runtime::openapi::{OpenApi, OpenApiError};
use fusion_runtime::server::BuildError;
use fusion_runtime::testing::{TestCall, TestServer};
use fusion_tests::openapi::npm_file;

fn openapi_error(e: BuildError) -> OpenApiError {
    match e {
        BuildError::OpenApi(inner) => match inner.downcast::<OpenApiError>() {
            Ok(e) => *e,
            Err(other) => panic!("not an OpenApiError: {other}"),
        },
        other => panic!("not an OpenAPI build error: {other}"),
    }
}

#[test]
fn every_readme_example_loads_or_fails_precisely() {
    let root = npm_file("@readme/oas-examples");
    let mut loaded = Vec::new();
    let mut refused = Vec::new();
    for version in ["2.0", "3.0", "3.1"] {
        for format in ["json", "yaml"] {
            let dir = root.join(version).join(format);
            let mut files: Vec<_> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            for file in files {
                let name = format!(
                    "{version}/{format}/{}",
                    file.file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default()
                );
                let api = OpenApi::file(&file).base_url("http://127.0.0.1:9");
                match Server::builder().openapi(api).build() {
                    Ok(server) => loaded.push((name, server.actions().len())),
                    Err(e) => {
                        let e = openapi_error(e);
                        assert!(
                            e.pointer.starts_with('#')
                                || e.pointer.contains(".json#")
                                || e.pointer.contains(".yaml#"),
                            "{name}: an error without a pointer: {e}"
                        );
                        refused.push((name, e.to_string()));
                    }
                }
            }
        }
    }
    for (name, n) in &loaded {
        println!("loaded  {name}: {n} actions");
    }
    for (name, e) in &refused {
        println!("refused {name}: {e}");
    }
    println!(
        "{} loaded, {} refused with a pointer",
        loaded.len(),
        refused.len()
    );
    assert!(
        loaded.len() >= 90,
        "{} loaded, {} refused",
        loaded.len(),
        refused.len()
    );
    // The documents with `$ref` cycles through their schemas are recursive, not refused.
    for circular in [
        "3.0/json/circular.json",
        "3.0/json/circular-paths.json",
        "3.0/yaml/circular-request-bodies.yaml",
    ] {
        assert!(
            loaded.iter().any(|(n, _)| n == circular),
            "{circular} did not load"
        );
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn githubs_rest_description_loads_in_every_exposure() {
    let file = npm_file("@octokit/openapi/generated/api.github.com.json");
    let bytes = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    let before = rss_kib();
    let started = Instant::now();
    let server = Server::builder()
        .name("github")
        .openapi(OpenApi::file(&file).prefix("gh").skip_unsupported(true))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let load = started.elapsed();
    let after = rss_kib();
    let actions = server.actions().len();
    assert!(actions > 900, "{actions} actions");
    println!(
        "github: {bytes} bytes, {actions} actions, built in {:.2} s, resident memory +{} MiB",
        load.as_secs_f64(),
        after.saturating_sub(before) / 1024
    );
    let listed = |s: &Server| {
        let tools: Vec<serde_json::Value> = s
            .tool_specs()
            .iter()
            .map(|t| serde_json::json!({"name": t.name, "description": t.description, "inputSchema": *t.input_schema}))
            .collect();
        (
            tools.len(),
            serde_json::to_string(&serde_json::json!({"tools": tools}))
                .map(|s| s.len())
                .unwrap_or(0),
        )
    };
    let (n, flat) = listed(&server);
    println!("github tools/list flat: {n} tools, {flat} bytes");
    let grouped = Server::builder()
        .openapi(OpenApi::file(&file).prefix("gh").skip_unsupported(true))
        .grouped_by("operation")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (g, grouped_bytes) = listed(&grouped);
    println!("github tools/list grouped: {g} tools, {grouped_bytes} bytes");
    let search = Server::builder()
        .openapi(OpenApi::file(&file).prefix("gh").skip_unsupported(true))
        .tool_search(true)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (s, search_bytes) = listed(&search);
    println!("github tools/list tool search: {s} tools, {search_bytes} bytes");
    assert_eq!(s, 3);
    assert!(
        grouped_bytes < flat && search_bytes * 100 < flat,
        "{flat} {grouped_bytes} {search_bytes}"
    );
    // The catalog finds the tools and runs their validation.
    let kit = TestServer::new(search);
    let found = kit
        .call_tool(
            "search_tools",
            serde_json::json!({"query": "list pull requests", "limit": 5}),
        )
        .await;
    assert!(raw(&found).contains("gh_pulls_list"), "{}", raw(&found));
    let bad = kit
        .call_tool("call_tool", serde_json::json!({"name": "gh_pulls_list", "arguments": {"owner": "o", "repo": "r", "per_page": "all"}}))
        .await;
    assert!(
        raw(&bad).starts_with("<validation_error action=\"gh_pulls_list\">"),
        "{}",
        raw(&bad)
    );
}

/// Every text block of the answer, envelopes included, as the model reads them.
fn raw(call: &TestCall) -> String {
    call.response().texts().collect::<Vec<_>>().join("\n")
}
