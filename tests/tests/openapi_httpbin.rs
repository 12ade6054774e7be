//! A real API: httpbin (PyPI), started on loopback, serving its own Swagger 2.0 document.
//! The document (extended with a bearer scheme, query arrays, a JSON body and a form) is
//! mounted; the official Python SDK calls the tools over stdio and httpbin's echoes prove
//! that status codes, the credential, query, header and body encodings arrive as the
//! document says; in process, a bad call is a `<validation_error>` with the document's own
//! bounds, and the healing benchmark heals every broken call in one round.

use fusion_runtime::Server;
use fusion_runtime::openapi::{Credential, OpenApi, OpenApiLimits};
use fusion_runtime::testing::{TestCall, TestServer};
use fusion_tests::openapi::{Httpbin, extended_httpbin_spec, python, root};
use fusion_tests::services::TempDir;
use serde_json::json;

fn mounted(bin: &Httpbin, spec: serde_json::Value) -> OpenApi {
    let declared = spec.get("securityDefinitions").is_some();
    let limits = OpenApiLimits {
        timeout: std::time::Duration::from_secs(5),
        ..OpenApiLimits::default()
    };
    let api = OpenApi::json(spec)
        .prefix("httpbin")
        .base_url(&bin.url)
        .limits(limits);
    if declared {
        api.credential("bearer", Credential::bearer("s3cret"))
    } else {
        api
    }
}

#[test]
fn the_python_sdk_calls_the_generated_tools() {
    let bin = Httpbin::start();
    let dir = TempDir::new("openapi-httpbin");
    let spec = dir.join("httpbin.json");
    std::fs::write(&spec, extended_httpbin_spec(bin.spec()).to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let out = std::process::Command::new(python())
        .arg(root().join("tests/python/openapi_client.py"))
        .env("OPENAPI_BIN", env!("CARGO_BIN_EXE_openapi-server"))
        .env("OPENAPI_SPEC", &spec)
        .env("OPENAPI_BASE_URL", &bin.url)
        .env("OPENAPI_BEARER", "s3cret")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the Python client: {e}"));
    let shown = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("python sdk: all checks passed"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_calls_are_validation_errors_with_the_documents_bounds() {
    let bin = Httpbin::start();
    let api = mounted(&bin, extended_httpbin_spec(bin.spec()));
    let kit = TestServer::build(Server::builder().openapi(api)).unwrap_or_else(|e| panic!("{e}"));
    let call = kit
        .call_tool(
            "httpbin_anything_get_anything",
            json!({"ids": [0], "q": "x".repeat(30), "X-Trace": "nope", "tgas": ["a"]}),
        )
        .await;
    let text = raw(&call);
    assert_eq!(
        text,
        "<validation_error action=\"httpbin_anything_get_anything\">\n  <field name=\"(root)\">Unrecognized key 'tgas' (did you mean 'tags'?). Expected only: 'X-Trace', 'ids', 'q', 'tags'.</field>\n  <field name=\"X-Trace\">Invalid format. You sent: 'nope'. Expected a string matching ^t-[0-9]+$.</field>\n  <field name=\"q\">Too long. You sent: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' (30 characters). Expected at most 20 characters.</field>\n  <field name=\"ids.0\">Too small. You sent: 0. Expected a number >= 1.</field>\n  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>"
    );
    // Swagger 2.0's `x-nullable` and a required body.
    let ok = kit
        .call_tool(
            "httpbin_anything_post_anything",
            json!({"body": {"name": "Ada", "n": null}}),
        )
        .await;
    assert!(!ok.is_error(), "{}", raw(&ok));
    assert_eq!(
        ok.json().and_then(|v| v.get("json").cloned()),
        Some(json!({"name": "Ada", "n": null}))
    );
    let missing = kit
        .call_tool("httpbin_anything_post_anything", json!({}))
        .await;
    assert!(
        raw(&missing).contains("<field name=\"body\">Required field is missing."),
        "{}",
        raw(&missing)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_argument_cannot_leave_its_template() {
    let bin = Httpbin::start();
    let kit = TestServer::build(
        Server::builder().openapi(mounted(&bin, extended_httpbin_spec(bin.spec()))),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for sent in ["..", "."] {
        let call = kit
            .call_tool(
                "httpbin_dynamic_data_get_base64_value",
                json!({"value": sent}),
            )
            .await;
        let e = call.expect_error("VALIDATION_ERROR");
        assert!(
            e.message
                .contains("cannot be empty, `.` or `..` in the path"),
            "{}",
            raw(&call)
        );
    }
    // A slash is data, not a segment: httpbin receives it encoded and decodes it as one value.
    let call = kit
        .call_tool(
            "httpbin_anything_get_anything_anything",
            json!({"anything": "a/../../status/418"}),
        )
        .await;
    // httpbin answered from /anything (a request that reached /status/418 would be a 418).
    let echo = call.json().unwrap_or_else(|| panic!("{}", raw(&call)));
    assert!(!call.is_error(), "{}", raw(&call));
    assert_eq!(
        echo["url"],
        json!(format!("{}/anything/a/../../status/418", bin.url))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_healing_benchmark_heals_httpbins_tools_in_one_round() {
    let bin = Httpbin::start();
    // httpbin's document as it serves it. Left out: the streaming answers (slow by design).
    let api = mounted(&bin, bin.spec())
        .exclude([
            "GET /drip",
            "GET /stream-bytes/{n}",
            "GET /range/{numbytes}",
        ])
        // Tools whose valid call the API refuses (its document does not say `codes` is a
        // status code, nor which `Accept` /image wants): no baseline to break.
        .exclude(["GET /image"])
        .exclude(
            ["GET", "PUT", "POST", "DELETE", "PATCH", "TRACE"]
                .map(|m| format!("{m} /status/{{codes}}")),
        );
    let kit = TestServer::build(Server::builder().openapi(api)).unwrap_or_else(|e| panic!("{e}"));
    let report = kit.healing().await;
    println!("{}", report.table());
    report.assert_heals_in_one_round();
}

/// Every text block of the answer, envelopes included, as the model reads them.
fn raw(call: &TestCall) -> String {
    call.response().texts().collect::<Vec<_>>().join("\n")
}
