//! Metrics (`serve --metrics`) on a real `billing-server` process, driven over real HTTP: the
//! exposition scraped directly, then the same figures read back from a real Prometheus
//! scraping it; and `--log-format json`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fusion_tests::raw_http;
use fusion_tests::services::{Instance, Prometheus, announced};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

/// The metrics address a server announced on stderr (10 s at most).
fn metrics_addr(server: &Instance) -> SocketAddr {
    let start = Instant::now();
    loop {
        let found = server.log.lock().ok().and_then(|lines| {
            lines.iter().find_map(|l| {
                announced(l, "serving metrics")
                    .as_deref()
                    .and_then(|url| url.strip_prefix("http://"))
                    .and_then(|rest| rest.strip_suffix("/metrics"))
                    .and_then(|a| a.parse().ok())
            })
        });
        if let Some(addr) = found {
            return addr;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no metrics line: {:?}",
            server.log
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn call(addr: SocketAddr, id: u64, tool: &str, args: Value) -> Value {
    let r = raw_http::call_tool(addr, "/mcp", None, id, tool, args)
        .await
        .unwrap_or_else(|e| panic!("call {id} ({tool}): {e}"));
    assert_eq!(r.status, 200, "call {id} ({tool}): {r:?}");
    r.message()["result"].clone()
}

fn first_text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

async fn scrape(addr: SocketAddr) -> (String, Option<String>) {
    let r = raw_http::request(addr, "GET", "/metrics", &[], "")
        .await
        .unwrap_or_else(|e| panic!("GET /metrics: {e}"));
    assert_eq!(r.status, 200, "{r:?}");
    let content_type = r.header("content-type").map(str::to_owned);
    (r.body.clone(), content_type)
}

/// The value of the one sample named `series` (exactly, labels included) in an exposition.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.split(' ').next()?.parse().ok())
}

fn encode(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A PromQL query's single value, through Prometheus's HTTP API (`None`: no series).
async fn query(prometheus: SocketAddr, promql: &str) -> Option<f64> {
    let path = format!("/api/v1/query?query={}", encode(promql));
    let r = raw_http::request(prometheus, "GET", &path, &[], "")
        .await
        .unwrap_or_else(|e| panic!("query {promql}: {e}"));
    assert_eq!(r.status, 200, "query {promql}: {r:?}");
    let body: Value = serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    assert_eq!(body["status"], "success", "{body}");
    body["data"]["result"][0]["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_reads_calls_validation_healing_and_refusals() {
    let server = Instance::spawn(
        BIN,
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--max-body-bytes",
            "4096",
            "--metrics",
            "127.0.0.1:0",
        ],
        &[],
    );
    let metrics = metrics_addr(&server);
    assert_ne!(metrics.port(), server.addr.port());
    // Not on the MCP port.
    let on_mcp = raw_http::request(server.addr, "GET", "/metrics", &[], "")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(on_mcp.status, 404, "{on_mcp:?}");

    let invoice = json!({"id": "inv_2026_0001"});
    for id in 1..=2 {
        let r = call(server.addr, id, "billing_get_invoice", invoice.clone()).await;
        assert_eq!(r["isError"], json!(false), "{r}");
    }
    // A model gets the ID wrong, reads the <validation_error>, and heals.
    let r = call(server.addr, 3, "billing_get_invoice", json!({"id": "42"})).await;
    assert!(first_text(&r).starts_with("<validation_error"), "{r}");
    let r = call(server.addr, 4, "billing_get_invoice", invoice.clone()).await;
    assert_eq!(r["isError"], json!(false), "{r}");
    // A second success heals nothing more.
    call(server.addr, 5, "billing_get_invoice", invoice.clone()).await;
    // Three charges a minute per client: the fourth is refused.
    let charge = json!({"invoice_id": "inv_2026_0001", "amount_cents": 1});
    for id in 6..=8 {
        let r = call(server.addr, id, "billing_charge", charge.clone()).await;
        assert_eq!(r["isError"], json!(false), "{r}");
    }
    let r = call(server.addr, 9, "billing_charge", charge).await;
    assert!(first_text(&r).contains("RATE_LIMITED"), "{r}");
    // A name no tool has.
    let r = call(server.addr, 10, "billing_get_invoise", invoice).await;
    assert!(first_text(&r).contains("UNKNOWN_ACTION"), "{r}");
    // A body over the bound.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8000)
    );
    let r = raw_http::request(
        server.addr,
        "POST",
        "/mcp",
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ],
        &big,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.status, 413, "{r:?}");

    // The exposition, scraped directly.
    let (text, content_type) = scrape(metrics).await;
    assert_eq!(
        content_type.as_deref(),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    let expect = [
        (
            r#"fusion_calls_total{tool="billing_get_invoice",action="billing.get_invoice",outcome="ok"}"#,
            4.0,
        ),
        (
            r#"fusion_calls_total{tool="billing_get_invoice",action="billing.get_invoice",outcome="validation"}"#,
            1.0,
        ),
        (
            r#"fusion_calls_healed_total{tool="billing_get_invoice",action="billing.get_invoice"}"#,
            1.0,
        ),
        (
            r#"fusion_calls_total{tool="billing_charge",action="billing.charge",outcome="ok"}"#,
            3.0,
        ),
        (
            r#"fusion_calls_total{tool="billing_charge",action="billing.charge",outcome="RATE_LIMITED"}"#,
            1.0,
        ),
        (
            r#"fusion_calls_total{tool="<unknown>",action="",outcome="UNKNOWN_ACTION"}"#,
            1.0,
        ),
        (
            r#"fusion_validation_issues_total{tool="billing_get_invoice",action="billing.get_invoice",field="id",kind="invalid_format"}"#,
            1.0,
        ),
        (
            r#"fusion_call_duration_seconds_count{tool="billing_get_invoice",action="billing.get_invoice"}"#,
            5.0,
        ),
        (r#"fusion_http_refusals_total{bound="413"}"#, 1.0),
    ];
    for (series, value) in expect {
        assert_eq!(sample(&text, series), Some(value), "{series} in\n{text}");
    }
    // Every call's series carries the tool the client called (as tools/list shows it), the
    // action's own name only in `action`.
    assert!(!text.contains("tool=\"billing."), "{text}");
    for family in [
        "fusion_open_connections",
        "fusion_open_sessions",
        "fusion_open_listens",
    ] {
        assert!(text.contains(&format!("# TYPE {family} gauge")), "{text}");
    }
    assert!(text.ends_with("# EOF\n"), "{text}");

    // The same figures, through a real Prometheus scraping the listener.
    let prometheus = Prometheus::start(&[metrics]);
    let start = Instant::now();
    let ok = r#"fusion_calls_total{tool="billing_get_invoice",action="billing.get_invoice",outcome="ok"}"#;
    while query(prometheus.addr, ok).await != Some(4.0) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "Prometheus did not scrape {metrics} within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for (series, value) in expect {
        assert_eq!(
            query(prometheus.addr, series).await,
            Some(value),
            "{series}"
        );
    }
    // The heal share a dashboard shows: healed / calls answered with a <validation_error>.
    let share = r#"sum(fusion_calls_healed_total) / sum(fusion_calls_total{outcome="validation"})"#;
    assert_eq!(query(prometheus.addr, share).await, Some(1.0));
    assert_eq!(
        query(prometheus.addr, r#"up{job="fusion"}"#).await,
        Some(1.0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_log_lines_are_objects_with_level_target_and_fields() {
    let server = Instance::spawn(
        BIN,
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--log-format",
            "json",
        ],
        &[("RUST_LOG", "info")],
    );
    let r = call(server.addr, 1, "billing_nope", json!({})).await;
    assert!(first_text(&r).contains("UNKNOWN_ACTION"), "{r}");
    let start = Instant::now();
    let line = loop {
        let found = server.log.lock().ok().and_then(|lines| {
            lines
                .iter()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|v| v["fields"]["message"] == "call not routed")
        });
        if let Some(line) = found {
            break line;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no JSON line for the call: {:?}",
            server.log
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(line["level"], "INFO", "{line}");
    assert_eq!(line["fields"]["tool"], "billing_nope", "{line}");
    assert_eq!(line["fields"]["code"], "UNKNOWN_ACTION", "{line}");
    assert!(
        line["target"]
            .as_str()
            .is_some_and(|t| t.starts_with("fusion_runtime")),
        "{line}"
    );
    assert!(line["timestamp"].is_string(), "{line}");
    // Every line on stderr is JSON, the listener's announcement included (it names the URL
    // and the mode, as the text line does).
    let lines = server.log.lock().map(|l| l.clone()).unwrap_or_default();
    for l in &lines {
        assert!(serde_json::from_str::<Value>(l).is_ok(), "not JSON: {l}");
    }
    let announcement = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["fields"]["message"] == "serving MCP over streamable HTTP")
        .unwrap_or_else(|| panic!("no JSON announcement: {lines:?}"));
    assert_eq!(
        announcement["fields"]["url"],
        format!("http://{}/mcp", server.addr)
    );
    assert_eq!(announcement["fields"]["stateless"], true, "{announcement}");
    assert_eq!(announcement["level"], "INFO", "{announcement}");
    assert!(announcement["timestamp"].is_string(), "{announcement}");
}
