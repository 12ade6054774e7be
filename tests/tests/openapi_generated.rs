//! The code `openapi gen` writes, compiled and used. `generated/httpbin_api.rs` is the
//! generator's output for six of httpbin's operations (httpbin's own document, extended as in
//! `openapi_httpbin.rs` with query arrays, a header pattern, a JSON body, a form and a bearer
//! scheme); `generated/odd_api.rs` its output for a document written to trip it (keywords and
//! digits as names, two keys one Rust name apart, enum values that are one variant apart or
//! `self`, contradictory and fractional bounds, a pattern the engine refuses, a recursive
//! schema, code in a description). Both are committed and compiled here as modules. The
//! tests regenerate each and assert the bytes are the same, so a committed file neither rots
//! nor stops compiling unnoticed; then the generated handlers are served as written: against
//! httpbin, their typed inputs hold the document's rules and their requests arrive as the
//! document says.
//!
//! When the generator's output changes on purpose, a test writes the new text beside the
//! committed file (`generated/*.rs.new`): review it, then move it over. (If the committed file
//! no longer compiles, comment its `mod` line out to regenerate it.)

// The generator's bytes, as it writes them: `cargo fmt` leaves them alone.
#[rustfmt::skip]
#[path = "generated/httpbin_api.rs"]
mod httpbin_api;

#[rustfmt::skip]
#[path = "generated/odd_api.rs"]
mod odd_api;

use fusion_runtime::Server;
use fusion_runtime::openapi::{Credential, GenerateOptions, OpenApi, OpenApiClient, generate};
use fusion_runtime::testing::{TestCall, TestServer};
use fusion_tests::openapi::{Httpbin, extended_httpbin_spec};
use fusion_tests::services::TempDir;
use serde_json::json;

/// The operations the committed file was generated for.
const OPERATIONS: [&str; 6] = [
    "GET /anything",
    "POST /anything",
    "PUT /anything",
    "GET /bearer",
    "GET /delay/{delay}",
    "GET /status/{codes}",
];

/// The generator's output for `operations` is the committed file `generated/{file}`.
fn committed(file: &str, operations: &[fusion_runtime::openapi::Operation], document: &str) {
    let written = generate(
        operations,
        &GenerateOptions {
            document: Some(document.to_owned()),
        },
    );
    let path = format!("{}/tests/generated/{file}", env!("CARGO_MANIFEST_DIR"));
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if written != committed {
        let new = format!("{path}.new");
        std::fs::write(&new, &written).unwrap_or_else(|e| panic!("{new}: {e}"));
        panic!(
            "the generator's output is not {path}: the new text is in {new}; review it and move it over"
        );
    }
}

#[test]
fn the_committed_code_is_what_the_generator_writes() {
    let bin = Httpbin::start();
    let operations = OpenApi::json(extended_httpbin_spec(bin.spec()))
        .prefix("httpbin")
        .operations(OPERATIONS)
        .load()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(operations.len(), OPERATIONS.len());
    committed("httpbin_api.rs", &operations, "httpbin.json");
    let odd = OpenApi::json(odd_document())
        .load()
        .unwrap_or_else(|e| panic!("{e}"));
    committed("odd_api.rs", &odd, "odd.json");
}

/// A document written to trip a generator: every name, value and bound below once made it
/// write Rust that does not compile, or prose that rustdoc would run.
fn odd_document() -> serde_json::Value {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "odd", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "components": {"schemas": {
            "Node": {"type": "object", "description": "A node of a tree.", "properties": {
                "name": {"type": "string", "minLength": 1},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}},
            "Kind": {"type": "string", "enum": ["self", "1st", "a b", "A-B", "a\nb", ""]}
        }},
        "paths": {"/type/{self}": {"post": {
            "operationId": "3d-type",
            "tags": ["2fa"],
            "description": "Makes one.\n\n    indented, not code\n\n```\nlet x = ;\n```\nEnd.",
            "parameters": [
                {"name": "self", "in": "path", "required": true,
                    "schema": {"type": "string", "minLength": 5, "maxLength": 2}},
                {"name": "type", "in": "query", "schema": {"$ref": "#/components/schemas/Kind"}},
                {"name": "Id", "in": "query",
                    "schema": {"type": "integer", "minimum": 1.5, "maximum": 9.5, "multipleOf": 0.5}},
                {"name": "id", "in": "header",
                    "schema": {"type": "number", "minimum": -1, "exclusiveMinimum": 0}},
                {"name": "pat", "in": "query",
                    "schema": {"type": "string", "pattern": "[", "format": "email"}},
                {"name": "when", "in": "query",
                    "schema": {"type": ["string", "null"], "format": "date-time"}}
            ],
            "requestBody": {"required": true, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Node"}}}},
            "responses": {"200": {"description": "ok"}}
        }}}
    })
}

#[tokio::test]
async fn the_odd_documents_code_holds_its_rules() {
    let dir = TempDir::new("openapi-odd");
    let document = dir.join(odd_api::DOCUMENT);
    std::fs::write(&document, odd_document().to_string()).unwrap_or_else(|e| panic!("{e}"));
    let client = OpenApiClient::new(&odd_api::api(&document)).unwrap_or_else(|e| panic!("{e}"));
    let kit = TestServer::build(odd_api::register(Server::builder()).state(client))
        .unwrap_or_else(|e| panic!("{e}"));
    let bad = kit
        .call_tool(
            "2fa_3d_type",
            json!({"self": "x", "type": "fax", "Id": 1, "id": 0, "pat": "no",
                "body": {"name": "", "children": [{}]}}),
        )
        .await;
    let text = raw(&bad);
    // Each rule the document states and the macro accepts, enforced by the typed input.
    for line in [
        "<field name=\"Id\">Too small. You sent: 1. Expected a number >= 2.</field>",
        "<field name=\"id\">Too small. You sent: 0. Expected a number > 0.</field>",
        "<field name=\"pat\">Invalid email format.",
        "<field name=\"type\">Invalid option. You sent: 'fax'.",
        "<field name=\"body.name\">Too short.",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_handlers_call_httpbin() {
    let bin = Httpbin::start();
    let dir = TempDir::new("openapi-generated");
    let document = dir.join(httpbin_api::DOCUMENT);
    std::fs::write(&document, extended_httpbin_spec(bin.spec()).to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let client = OpenApiClient::new(
        &httpbin_api::api(&document)
            .base_url(&bin.url)
            .credential("bearer", Credential::bearer("s3cret")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let kit = TestServer::build(httpbin_api::register(Server::builder()).state(client))
        .unwrap_or_else(|e| panic!("{e}"));

    // Query arrays in their styles and a header, as the document says.
    let call = kit
        .call_tool(
            "httpbin_anything_get_anything",
            json!({"tags": ["a", "b c"], "ids": [1, 2], "q": "x&y", "X-Trace": "t-1"}),
        )
        .await;
    let echo = call.json().unwrap_or_else(|| panic!("{}", raw(&call)));
    assert_eq!(
        echo["args"],
        json!({"tags": ["a", "b c"], "ids": "1|2", "q": "x&y"})
    );
    assert_eq!(echo["headers"]["X-Trace"], "t-1");

    // The typed input holds the document's rules: its pattern and its bound.
    let bad = kit
        .call_tool(
            "httpbin_anything_get_anything",
            json!({"q": "x".repeat(30), "X-Trace": "nope"}),
        )
        .await;
    let text = raw(&bad);
    assert!(
        text.starts_with("<validation_error action=\"httpbin_anything_get_anything\">"),
        "{text}"
    );
    assert!(
        text.contains("<field name=\"X-Trace\">Invalid format. You sent: 'nope'. Expected a string matching ^t-[0-9]+$.</field>"),
        "{text}"
    );
    assert!(text.contains("<field name=\"q\">Too long."), "{text}");

    // A JSON body and a URL-encoded form.
    let call = kit
        .call_tool(
            "httpbin_anything_post_anything",
            json!({"body": {"name": "Ada", "n": 3}}),
        )
        .await;
    let echo = call.json().unwrap_or_else(|| panic!("{}", raw(&call)));
    assert_eq!(echo["json"], json!({"name": "Ada", "n": 3}));
    let call = kit
        .call_tool(
            "httpbin_anything_put_anything",
            json!({"body": {"user": "a b", "tag": ["x", "y"]}}),
        )
        .await;
    let echo = call.json().unwrap_or_else(|| panic!("{}", raw(&call)));
    assert_eq!(echo["form"], json!({"user": "a b", "tag": ["x", "y"]}));

    // The configured credential, never an argument.
    let call = kit.call_tool("httpbin_auth_get_bearer", json!({})).await;
    assert_eq!(
        call.json(),
        Some(json!({"authenticated": true, "token": "s3cret"})),
        "{}",
        raw(&call)
    );

    // The API's status as an envelope; a path argument the typed input refuses.
    let call = kit
        .call_tool(
            "httpbin_status_codes_get_status_codes",
            json!({"codes": "404"}),
        )
        .await;
    call.expect_error("NOT_FOUND");
    let call = kit
        .call_tool(
            "httpbin_dynamic_data_get_delay_delay",
            json!({"delay": "two"}),
        )
        .await;
    assert!(
        raw(&call).contains("<field name=\"delay\">Invalid type. You sent: 'two'."),
        "{}",
        raw(&call)
    );
}

/// Every text block of the answer, envelopes included, as the model reads them.
fn raw(call: &TestCall) -> String {
    call.response().texts().collect::<Vec<_>>().join("\n")
}
