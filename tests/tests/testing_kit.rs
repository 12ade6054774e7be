//! `fusion_runtime::testing`, the test kit users write their tools' tests with: one test per
//! capability (calls by name with JSON and typed, the envelope read back, warnings, the
//! caller's principal and scopes, shared state, the paused clock, listing, the stable
//! renderings), and the README's example server tested with it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fusion_runtime::codes::NOT_FOUND;
use fusion_runtime::testing::{TestServer, advance};
use fusion_runtime::{
    Context, Principal, Server, ToolError, ToolInput, WithWarnings, error, tool_action,
};
use serde_json::json;

// ---- The README's example server, as written there.

/// Get one invoice.
#[derive(serde::Deserialize, serde::Serialize, ToolInput)]
struct GetInvoice {
    /// The invoice ID, e.g. `inv_2026_0001`.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    id: String,
}

/// Get one invoice by its ID.
#[tool_action(name = "billing.get_invoice", read_only, idempotent)]
async fn get_invoice(input: GetInvoice, store: Context<Store>) -> Result<Invoice, ToolError> {
    store.state().get(&input.id).ok_or_else(|| {
        error(NOT_FOUND, "No invoice with that ID")
            .recovery("List invoices first, then retry with a real ID")
            .available_actions(["billing.list_invoices"])
            .detail("requestedId", &input.id)
    })
}

/// An invoice, as the tool returns it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
struct Invoice {
    id: String,
    customer: String,
}

/// The state handlers share.
struct Store(Vec<Invoice>);

impl Store {
    fn seeded() -> Self {
        Store(vec![Invoice {
            id: "inv_2026_0001".into(),
            customer: "Acme".into(),
        }])
    }
    fn get(&self, id: &str) -> Option<Invoice> {
        self.0.iter().find(|i| i.id == id).cloned()
    }
}

fn readme_server() -> TestServer {
    TestServer::build(
        Server::builder()
            .name("billing")
            .state(Store::seeded())
            .action::<GetInvoiceAction>(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn the_readme_server_finds_an_invoice_and_explains_a_missing_one() {
    let kit = readme_server();
    let found: Invoice = kit
        .call_tool("billing_get_invoice", json!({"id": "inv_2026_0001"}))
        .await
        .output();
    assert_eq!(found.customer, "Acme");

    let missing = kit
        .call::<GetInvoiceAction>(&GetInvoice {
            id: "inv_2026_9999".into(),
        })
        .await;
    let e = missing.expect_error("NOT_FOUND");
    assert_eq!(e.message, "No invoice with that ID");
    assert_eq!(
        e.recovery.as_deref(),
        Some("List invoices first, then retry with a real ID")
    );
    assert_eq!(e.detail_value("requestedId"), Some("inv_2026_9999"));

    let bad = kit
        .call_tool("billing_get_invoice", json!({"id": "INV-1"}))
        .await;
    let v = bad.expect_validation();
    assert_eq!(v.fields.len(), 1);
    assert_eq!(v.fields[0].name, "id");
}

/// The README's test ("Testing it"), as written there: [`the_readme_test_is_this_one`] holds
/// the two to the same text.
#[tokio::test]
async fn get_invoice_finds_one_and_explains_a_missing_one() {
    let kit = TestServer::build(
        Server::builder()
            .name("billing")
            .state(Store::seeded())
            .action::<GetInvoiceAction>(),
    )
    .expect("builds");

    let found: Invoice = kit
        .call_tool("billing_get_invoice", json!({"id": "inv_2026_0001"}))
        .await
        .output();
    assert_eq!(found.customer, "Acme");

    let missing = kit
        .call::<GetInvoiceAction>(&GetInvoice {
            id: "inv_2026_9999".into(),
        })
        .await;
    let e = missing.expect_error("NOT_FOUND");
    assert_eq!(e.detail_value("requestedId"), Some("inv_2026_9999"));

    let bad = kit
        .call_tool("billing_get_invoice", json!({"id": "INV-1"}))
        .await;
    assert_eq!(bad.expect_validation().fields[0].name, "id");
}

/// The README's test block, from `#[tokio::test]` to its end, is the function above, character
/// for character: the README cannot show a test that does not compile or does not pass.
#[test]
fn the_readme_test_is_this_one() {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("### Testing it")
        .unwrap_or_else(|| panic!("README has no \"### Testing it\" section"));
    let block = &readme[start..];
    let open = "```rust,ignore\n";
    let body = &block[block
        .find(open)
        .unwrap_or_else(|| panic!("no Rust block under it"))
        + open.len()..];
    let body = &body[..body
        .find("```\n")
        .unwrap_or_else(|| panic!("the block is not closed"))];
    let test = &body[body
        .find("#[tokio::test]")
        .unwrap_or_else(|| panic!("the README's block holds no #[tokio::test]"))..];
    let here = include_str!("testing_kit.rs");
    assert!(
        here.contains(test),
        "the README's test differs from the one in tests/tests/testing_kit.rs; README's:\n{test}"
    );
}

// ---- One test per capability.

/// A number to echo.
#[derive(serde::Deserialize, serde::Serialize, ToolInput)]
struct Echo {
    /// Any integer from 0 to 10.
    #[fusion(range(min = 0, max = 10))]
    n: i64,
}

/// Echoes `n`, warning when it is 0.
#[tool_action(name = "lab.echo", read_only)]
async fn echo(input: Echo) -> Result<WithWarnings<i64>, ToolError> {
    let out = WithWarnings::new(input.n);
    Ok(if input.n == 0 {
        out.warning(error("ZERO", "Zero echoes nothing").recovery("Send 1 to 10"))
    } else {
        out
    })
}

/// Needs the `lab:write` scope.
#[tool_action(name = "lab.write", scopes = ["lab:write"])]
async fn write(
    _input: Echo,
    cx: fusion_runtime::context::CallContext,
) -> Result<String, ToolError> {
    Ok(cx
        .principal()
        .map(|p| p.subject().to_owned())
        .unwrap_or_default())
}

/// Counts its calls in the shared state.
#[tool_action(name = "lab.count")]
async fn count(_input: Echo, hits: Context<AtomicUsize>) -> Result<usize, ToolError> {
    Ok(hits.state().fetch_add(1, Ordering::SeqCst) + 1)
}

/// Once per minute.
#[tool_action(name = "lab.rare", rate_limit(calls = 1, per = "1min"))]
async fn rare(input: Echo) -> Result<i64, ToolError> {
    Ok(input.n)
}

fn lab(hits: Arc<AtomicUsize>) -> TestServer {
    TestServer::build(
        Server::builder()
            .name("lab")
            .state_arc(hits)
            .action::<EchoAction>()
            .action::<WriteAction>()
            .action::<CountAction>()
            .action::<RareAction>(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn calls_by_name_with_json_and_with_the_typed_input_agree() {
    let kit = lab(Arc::default());
    let by_json = kit.call_tool("lab_echo", json!({"n": 7})).await;
    let by_type = kit.call_tool_with("lab_echo", &Echo { n: 7 }).await;
    let by_action = kit.call::<EchoAction>(&Echo { n: 7 }).await;
    assert_eq!(by_json.output::<i64>(), 7);
    assert_eq!(by_type.response(), by_json.response());
    assert_eq!(by_action.response(), by_json.response());
    assert!(
        kit.call_tool("lab_echo", json!({"n": 7}))
            .await
            .try_output::<String>()
            .is_err()
    );
}

#[tokio::test]
async fn a_refused_argument_reads_back_as_field_lines() {
    let kit = lab(Arc::default());
    let call = kit.call_tool("lab_echo", json!({"n": 11, "m": 1})).await;
    assert!(call.is_error());
    assert!(call.try_output::<i64>().is_err());
    let v = call.expect_validation();
    assert_eq!(v.action, "lab_echo");
    let names: Vec<&str> = v.fields.iter().map(|f| f.name.as_str()).collect();
    assert!(
        names.contains(&"n") && names.contains(&"(root)"),
        "{names:?}"
    );
    assert!(call.error().is_none());
}

#[tokio::test]
async fn an_unknown_name_is_an_envelope_naming_the_closest_tool() {
    let kit = lab(Arc::default());
    let call = kit.call_tool("lab_ecko", json!({"n": 1})).await;
    let e = call.expect_error("UNKNOWN_ACTION");
    assert_eq!(e.message, "No tool named 'lab_ecko'");
    assert_eq!(e.detail_value("closest"), Some("lab_echo"));
    assert_eq!(
        e.available_actions.first().map(String::as_str),
        Some("lab_echo")
    );
}

#[tokio::test]
async fn warnings_ride_on_a_successful_output() {
    let kit = lab(Arc::default());
    let call = kit.call_tool("lab_echo", json!({"n": 0})).await;
    assert!(!call.is_error());
    assert_eq!(call.output::<i64>(), 0);
    let warnings = call.warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code.as_str(), "ZERO");
    assert_eq!(warnings[0].recovery.as_deref(), Some("Send 1 to 10"));
    assert!(
        kit.call_tool("lab_echo", json!({"n": 1}))
            .await
            .warnings()
            .is_empty()
    );
}

#[tokio::test]
async fn the_principal_and_its_scopes_reach_the_scope_check_and_the_handler() {
    let kit = lab(Arc::default());
    kit.call_tool("lab_write", json!({"n": 1}))
        .await
        .expect_error("AUTH_REQUIRED");
    kit.with_scopes(["lab:read"])
        .call_tool("lab_write", json!({"n": 1}))
        .await
        .expect_error("FORBIDDEN");
    let alice = kit.as_principal(Principal::new("alice").with_scopes(["lab:write"]));
    let who: String = alice.call_tool("lab_write", json!({"n": 1})).await.output();
    assert_eq!(who, "alice");
    alice
        .anonymous()
        .call_tool("lab_write", json!({"n": 1}))
        .await
        .expect_error("AUTH_REQUIRED");
}

#[tokio::test]
async fn shared_state_is_the_builders_and_can_be_read_after_the_call() {
    let hits = Arc::new(AtomicUsize::new(40));
    let kit = lab(hits.clone());
    assert_eq!(
        kit.call_tool("lab_count", json!({"n": 1}))
            .await
            .output::<usize>(),
        41
    );
    assert_eq!(
        kit.call_tool("lab_count", json!({"n": 1}))
            .await
            .output::<usize>(),
        42
    );
    assert_eq!(hits.load(Ordering::SeqCst), 42);
}

#[tokio::test(start_paused = true)]
async fn the_paused_clock_moves_a_rate_limit_window_without_waiting() {
    let kit = lab(Arc::default());
    let wall = std::time::Instant::now();
    assert_eq!(
        kit.call_tool("lab_rare", json!({"n": 1}))
            .await
            .output::<i64>(),
        1
    );
    let limited = kit.call_tool("lab_rare", json!({"n": 2})).await;
    let e = limited.expect_error("RATE_LIMITED");
    assert!(e.retry_after.is_some(), "{}", limited.render());
    advance(Duration::from_secs(30)).await;
    kit.call_tool("lab_rare", json!({"n": 3}))
        .await
        .expect_error("RATE_LIMITED");
    advance(Duration::from_secs(31)).await;
    assert_eq!(
        kit.call_tool("lab_rare", json!({"n": 4}))
            .await
            .output::<i64>(),
        4
    );
    assert!(
        wall.elapsed() < Duration::from_secs(10),
        "did not wait a minute"
    );
}

#[tokio::test]
async fn tools_are_listed_as_an_agent_sees_them() {
    let kit = lab(Arc::default());
    assert_eq!(
        kit.tool_names().await,
        ["lab_echo", "lab_write", "lab_count", "lab_rare"]
    );
    let rendered = kit.render_tools().await;
    assert!(rendered.starts_with("tool lab_echo\n  hints: read_only=true\n  description: Echoes `n`, warning when it is 0.\n  input: {\n"), "{rendered}");
    assert_eq!(rendered, kit.render_tools().await);
    let grouped = TestServer::build(
        Server::builder()
            .action::<EchoAction>()
            .action::<RareAction>()
            .grouped(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(grouped.tool_names().await, ["lab"]);
    assert_eq!(
        grouped
            .call::<RareAction>(&Echo { n: 5 })
            .await
            .output::<i64>(),
        5
    );
}

#[tokio::test]
async fn renderings_are_stable_text_for_snapshots() {
    let kit = readme_server();
    let found = kit
        .call_tool("billing_get_invoice", json!({"id": "inv_2026_0001"}))
        .await;
    assert_eq!(
        found.render(),
        "ok\n{\n  \"customer\": \"Acme\",\n  \"id\": \"inv_2026_0001\"\n}\n"
    );
    let missing = kit
        .call_tool("billing_get_invoice", json!({"id": "inv_2026_9999"}))
        .await;
    insta::assert_snapshot!("testing_kit_not_found", missing.render());
    let echoed = lab(Arc::default())
        .call_tool("lab_echo", json!({"n": 0}))
        .await;
    insta::assert_snapshot!("testing_kit_warning", echoed.render());
}
