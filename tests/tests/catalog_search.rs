//! Tool search: `tools/list` shows `search_tools`, `describe_tool` and `call_tool`; the
//! catalog behind them keeps visibility, scopes, validation and the healing envelopes.

use fusion_runtime::auth::Principal;
use fusion_runtime::server::Item;
use fusion_runtime::server::tool_search::{CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL};
use fusion_runtime::testing::{TestCall, TestServer};
use fusion_runtime::{Server, ToolError, ToolInput, tool_action};
use serde_json::{Value, json};

/// One invoice.
#[derive(serde::Deserialize, ToolInput)]
struct Get {
    /// The invoice ID, e.g. `inv_2026_0001`.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    id: String,
}

/// Gets one invoice by its ID.
#[tool_action(name = "billing.get_invoice", read_only)]
async fn get_invoice(input: Get) -> Result<String, ToolError> {
    Ok(format!("invoice {}", input.id))
}

/// Voids one invoice: only for accountants.
#[tool_action(name = "billing.void_invoice", scopes = ["billing:write"])]
async fn void_invoice(input: Get) -> Result<String, ToolError> {
    Ok(format!("voided {}", input.id))
}

/// Closes the month's books.
#[tool_action(name = "billing.close_month")]
async fn close_month() -> Result<String, ToolError> {
    Ok("closed".into())
}

fn searchable(hide_forbidden: bool) -> TestServer {
    TestServer::build(
        Server::builder()
            .action::<GetInvoiceAction>()
            .action::<VoidInvoiceAction>()
            .action::<CloseMonthAction>()
            .disabled(Item::Tool, "billing_close_month")
            .hide_forbidden(hide_forbidden)
            .tool_search(true),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn found(text: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    v["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn tools_list_shows_three_tools_and_they_reach_the_rest() {
    let kit = searchable(false);
    assert_eq!(
        kit.tool_names().await,
        [SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL]
    );
    let search = kit
        .call_tool(SEARCH_TOOL, json!({"query": "invoice"}))
        .await;
    assert_eq!(
        found(&raw(&search)),
        ["billing_get_invoice", "billing_void_invoice"]
    );
    let described = kit
        .call_tool(DESCRIBE_TOOL, json!({"name": "billing_get_invoice"}))
        .await;
    let d: Value = serde_json::from_str(&raw(&described)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        d["inputSchema"]["properties"]["id"]["pattern"],
        json!("^inv_[0-9]{4}_[0-9]{4}$")
    );
    let ok = kit
        .call_tool(
            CALL_TOOL,
            json!({"name": "billing_get_invoice", "arguments": {"id": "inv_2026_0001"}}),
        )
        .await;
    assert_eq!(raw(&ok), "\"invoice inv_2026_0001\"");
    // The tools stay callable by their own names.
    let direct = kit
        .call_tool("billing_get_invoice", json!({"id": "inv_2026_0001"}))
        .await;
    assert_eq!(raw(&direct), "\"invoice inv_2026_0001\"");
}

#[tokio::test]
async fn the_healing_envelopes_hold_behind_call_tool() {
    let kit = searchable(false);
    let bad = kit
        .call_tool(
            CALL_TOOL,
            json!({"name": "billing_get_invoice", "arguments": {"id": "42"}}),
        )
        .await;
    assert!(
        raw(&bad).starts_with(
            "<validation_error action=\"billing_get_invoice\">\n  <field name=\"id\">"
        ),
        "{}",
        raw(&bad)
    );
    let misspelt = kit
        .call_tool(CALL_TOOL, json!({"name": "billing_get_invoce"}))
        .await;
    let e = misspelt.expect_error("UNKNOWN_ACTION");
    assert_eq!(
        e.recovery.as_deref(),
        Some(
            "Call billing_get_invoice instead (the closest name), or pick one of the available tools"
        )
    );
    let described = kit
        .call_tool(DESCRIBE_TOOL, json!({"name": "billing_void_invoic"}))
        .await;
    described.expect_error("UNKNOWN_ACTION");
    assert!(
        raw(&described).contains("Call billing_void_invoice instead"),
        "{}",
        raw(&described)
    );
    let nameless = kit.call_tool(CALL_TOOL, json!({"arguments": {}})).await;
    assert_eq!(
        raw(&nameless),
        "<validation_error action=\"call_tool\">\n  <field name=\"name\">Required field is missing. Expected a string of 1 to 128 characters.</field>\n  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>"
    );
    let nested = kit.call_tool(CALL_TOOL, json!({"name": CALL_TOOL})).await;
    nested.expect_error("UNKNOWN_ACTION");
}

#[tokio::test]
async fn visibility_and_scopes_hold() {
    let kit = searchable(false);
    // A disabled tool is not found, described nor called.
    let search = kit.call_tool(SEARCH_TOOL, json!({"query": "month"})).await;
    assert!(found(&raw(&search)).is_empty(), "{}", raw(&search));
    kit.call_tool(CALL_TOOL, json!({"name": "billing_close_month"}))
        .await
        .expect_error("UNKNOWN_ACTION");
    kit.call_tool(DESCRIBE_TOOL, json!({"name": "billing_close_month"}))
        .await
        .expect_error("UNKNOWN_ACTION");
    // Scopes are checked on the tool called.
    let anonymous = kit.anonymous();
    anonymous
        .call_tool(
            CALL_TOOL,
            json!({"name": "billing_void_invoice", "arguments": {"id": "inv_2026_0001"}}),
        )
        .await
        .expect_error("AUTH_REQUIRED");
    let reader = kit.as_principal(Principal::new("ada"));
    reader
        .call_tool(
            CALL_TOOL,
            json!({"name": "billing_void_invoice", "arguments": {"id": "inv_2026_0001"}}),
        )
        .await
        .expect_error("FORBIDDEN");
    // With hide_forbidden, a search shows only what the caller may call.
    let hiding = searchable(true);
    let search = hiding
        .as_principal(Principal::new("ada"))
        .call_tool(SEARCH_TOOL, json!({"query": "invoice"}))
        .await;
    assert_eq!(found(&raw(&search)), ["billing_get_invoice"]);
    let writer = hiding.with_scopes(["billing:write"]);
    let search = writer
        .call_tool(SEARCH_TOOL, json!({"query": "invoice"}))
        .await;
    assert_eq!(
        found(&raw(&search)),
        ["billing_get_invoice", "billing_void_invoice"]
    );
}

/// A handoff domain's tool is reached only through its handoff: `call_tool` naming it in a
/// 2025 session that was not handed off gets the same `HANDOFF_NAMESPACE_MISMATCH` as a
/// direct call (the gate reads the tool `call_tool` names, not `call_tool`), and so does a
/// search while the session is in the domain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handoff_domain_is_not_reached_around_its_gate() {
    use fusion_runtime::auth::DelegationKey;
    use fusion_runtime::gateway::{MountDelegation, MountOptions, Upstream};
    use fusion_runtime::mcp::HttpOptions;
    use fusion_runtime::rmcp::model::CallToolRequestParams;

    const SECRET: &str = "catalog-search-key-0123456789-abcdefghijklmn";
    let mut upstream = tokio::process::Command::new(env!("CARGO_BIN_EXE_delegated-server"));
    upstream
        .arg("serve")
        .env("RUST_LOG", "off")
        .env("FUSION_DELEGATION_KEY", SECRET);
    let key = DelegationKey::new(SECRET).unwrap_or_else(|e| panic!("{e}"));
    let server = Server::builder()
        .name("triage")
        .action::<fusion_tests::triage::EscalateAction>()
        .mount_with(
            "finance",
            Upstream::stdio(upstream),
            MountOptions {
                handoff_only: true,
                delegation: Some(MountDelegation::new(key, "triage", "billing")),
                ..MountOptions::default()
            },
        )
        .tool_search(true)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (client, http) = fusion_tests::clients::over_http(server, HttpOptions::default()).await;
    let call = |tool: &str, args: Value| {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let client = &client;
        async move {
            let r = client
                .call_tool(params)
                .await
                .unwrap_or_else(|e| panic!("tools/call: {e}"));
            let text: Vec<String> = r
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect();
            (text.join("\n"), r.is_error.unwrap_or(false))
        }
    };
    let (direct, is_error) = call("finance_billing_lookup", json!({"invoice": "x"})).await;
    assert!(
        is_error && direct.contains("code=\"HANDOFF_NAMESPACE_MISMATCH\""),
        "{direct}"
    );
    let (through, is_error) = call(
        CALL_TOOL,
        json!({"name": "finance_billing_lookup", "arguments": {"invoice": "x"}}),
    )
    .await;
    assert!(is_error, "{through}");
    assert_eq!(through, direct);
    // Handed off: the session's calls are the domain's; the catalog's tools are not.
    let (handed, is_error) = call("triage_escalate", json!({"invoice": "inv_2026_0001"})).await;
    assert!(
        !is_error && handed.starts_with("Handed off to finance"),
        "{handed}"
    );
    let (search, is_error) = call(SEARCH_TOOL, json!({"query": "escalate"})).await;
    assert!(
        is_error && search.contains("code=\"HANDOFF_NAMESPACE_MISMATCH\""),
        "{search}"
    );
    let _ = client.cancel().await;
    let _ = http.shutdown().await;
}

/// Every text block of the answer, envelopes included, as the model reads them.
fn raw(call: &TestCall) -> String {
    call.response().texts().collect::<Vec<_>>().join("\n")
}
