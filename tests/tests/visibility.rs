//! Visibility at runtime (issue 33), over raw JSON-RPC on an in-memory stdio connection, for
//! 2025 sessions and 2026-07-28 clients: a disabled tool leaves `tools/list` and answers
//! `UNKNOWN_ACTION` with the closest *enabled* name (under every spelling); prompts and
//! resources likewise leave their lists and answer as unknown; each change is announced
//! (`list_changed` to the session, on the `subscriptions/listen` stream); the builder's rule
//! starts a tool disabled and refuses a name the server does not have.

use std::time::Duration;

use fusion_runtime::client::parse_tool_error;
use fusion_runtime::server::{BuildError, Item};
use fusion_runtime::{
    PromptReply, ResourceContent, Server, ToolError, ToolInput, prompt, resource, tool_action,
};
use fusion_tests::raw_stdio::{RawStdio, WAIT};
use serde::Deserialize;
use serde_json::{Value, json};

/// An invoice's ID.
#[derive(Deserialize, ToolInput)]
struct Id {
    /// The invoice, e.g. `a`.
    #[fusion(pattern = "^[a-z]{1,8}$")]
    id: String,
}

/// Gets one invoice.
#[tool_action(name = "billing.get_invoice")]
async fn get_invoice(input: Id) -> Result<Value, ToolError> {
    Ok(json!({ "invoice": input.id }))
}

/// Gets several invoices.
#[tool_action(name = "billing.get_invoices")]
async fn get_invoices(input: Id) -> Result<Value, ToolError> {
    Ok(json!({ "invoices": [input.id] }))
}

/// Voids an invoice.
#[tool_action(name = "billing.void")]
async fn void(input: Id) -> Result<Value, ToolError> {
    Ok(json!({ "voided": input.id }))
}

/// One document.
#[resource(template = "test://docs/{id}", name = "doc", mime = "text/plain")]
async fn doc(d: Id) -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(format!("document {}", d.id)))
}

/// The index.
#[resource(uri = "test://index", name = "index", mime = "text/plain")]
async fn index() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("a, b"))
}

/// Says hello.
#[prompt]
async fn hello() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("hello"))
}

fn builder() -> fusion_runtime::ServerBuilder {
    Server::builder()
        .name("visibility")
        .action::<GetInvoiceAction>()
        .action::<GetInvoicesAction>()
        .action::<VoidAction>()
        .resource::<DocResource>()
        .resource::<IndexResource>()
        .prompt::<HelloPrompt>()
}

fn server() -> Server {
    builder().build().unwrap_or_else(|e| panic!("{e}"))
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    })
}

/// The params of a request: with the 2026-07-28 `_meta` when `modern`.
fn params(modern: bool, mut p: Value) -> Value {
    if modern {
        p["_meta"] = meta();
    }
    p
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        if tokio::time::Instant::now() >= deadline {
            panic!("{what} did not happen in {WAIT:?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn names(answer: &Value, list: &str, key: &str) -> Vec<String> {
    answer["result"][list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {answer}"))
        .iter()
        .map(|t| t[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The `UNKNOWN_ACTION` of a call to `name`: its closest name.
async fn refused(raw: &mut RawStdio, id: u64, modern: bool, name: &str) -> Option<String> {
    let (_, answer) = raw
        .request(
            id,
            "tools/call",
            params(modern, json!({"name": name, "arguments": {"id": "a"}})),
        )
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let e = parse_tool_error(text).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(e.code().as_str(), "UNKNOWN_ACTION", "{answer}");
    e.detail_value("closest").map(str::to_owned)
}

/// Everything one client sees of a disable and an enable, after `ready` announced the changes
/// it will be sent to it. `told` reads the next notification.
async fn walk(raw: &mut RawStdio, server: &Server, modern: bool, told: impl Fn(&Value) -> String) {
    let v = server.visibility().clone();
    let list = |raw: &mut RawStdio, id| {
        let p = params(modern, json!({}));
        async move { raw.request(id, "tools/list", p).await.1 }
    };
    let all = ["billing_get_invoice", "billing_get_invoices", "billing_void"];
    assert_eq!(names(&list(raw, 10).await, "tools", "name"), all);

    assert!(v.disable_tool("billing_get_invoice"));
    assert_eq!(told(&raw.next().await), "notifications/tools/list_changed");
    assert_eq!(
        names(&list(raw, 11).await, "tools", "name"),
        ["billing_get_invoices", "billing_void"]
    );
    // Disabled under both spellings; the closest *enabled* name is suggested.
    for (id, name) in [(12, "billing_get_invoice"), (13, "billing.get_invoice")] {
        assert_eq!(
            refused(raw, id, modern, name).await.as_deref(),
            Some("billing_get_invoices"),
            "{name}"
        );
    }
    // A typo of the disabled name does not lead to it either.
    assert_eq!(
        refused(raw, 14, modern, "billing_get_invoce").await.as_deref(),
        Some("billing_get_invoices")
    );
    // Disabling it again changes nothing and says nothing.
    assert!(!v.disable_tool("billing_get_invoice"));

    assert!(v.enable_tool("billing_get_invoice"));
    assert_eq!(told(&raw.next().await), "notifications/tools/list_changed");
    assert_eq!(names(&list(raw, 15).await, "tools", "name"), all);
    let (_, answer) = raw
        .request(
            16,
            "tools/call",
            params(
                modern,
                json!({"name": "billing_get_invoice", "arguments": {"id": "a"}}),
            ),
        )
        .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");

    // Prompts.
    assert!(v.disable_prompt("hello"));
    assert_eq!(told(&raw.next().await), "notifications/prompts/list_changed");
    let (_, answer) = raw
        .request(17, "prompts/list", params(modern, json!({})))
        .await;
    assert_eq!(names(&answer, "prompts", "name"), Vec::<String>::new());
    let (_, answer) = raw
        .request(18, "prompts/get", params(modern, json!({"name": "hello"})))
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Unknown prompt")),
        "{answer}"
    );
    assert!(v.enable_prompt("hello"));
    assert_eq!(told(&raw.next().await), "notifications/prompts/list_changed");
    let (_, answer) = raw
        .request(19, "prompts/get", params(modern, json!({"name": "hello"})))
        .await;
    assert!(answer["result"]["messages"].is_array(), "{answer}");

    // Resources: a template, by its URI template.
    assert!(v.disable_resource("test://docs/{id}"));
    assert_eq!(
        told(&raw.next().await),
        "notifications/resources/list_changed"
    );
    let (_, answer) = raw
        .request(20, "resources/templates/list", params(modern, json!({})))
        .await;
    assert_eq!(
        names(&answer, "resourceTemplates", "name"),
        Vec::<String>::new()
    );
    let (_, answer) = raw
        .request(21, "resources/list", params(modern, json!({})))
        .await;
    assert_eq!(names(&answer, "resources", "name"), ["index"]);
    let (_, answer) = raw
        .request(
            22,
            "resources/read",
            params(modern, json!({"uri": "test://docs/a"})),
        )
        .await;
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    assert!(v.enable_resource("test://docs/{id}"));
    assert_eq!(
        told(&raw.next().await),
        "notifications/resources/list_changed"
    );
    let (_, answer) = raw
        .request(
            23,
            "resources/read",
            params(modern, json!({"uri": "test://docs/a"})),
        )
        .await;
    assert_eq!(
        answer["result"]["contents"][0]["text"], "document a",
        "{answer}"
    );
}

fn method(m: &Value) -> String {
    m["method"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_2025_session_sees_a_disabled_tool_prompt_and_resource_go_and_come_back() {
    for version in ["2025-06-18", "2025-11-25"] {
        let server = server();
        let notifier = server.notifier().clone();
        let mut raw = RawStdio::serve(server.clone());
        raw.initialize(version, json!({})).await;
        eventually("the session forwards changes", || notifier.listeners() == 1).await;
        walk(&mut raw, &server, false, method).await;
        assert_eq!(raw.maybe_next(Duration::from_millis(200)).await, None);
    }
}

#[tokio::test]
async fn a_2026_listen_is_told_of_each_change_and_the_lists_follow() {
    let server = server();
    let notifier = server.notifier().clone();
    let mut raw = RawStdio::serve(server.clone());
    raw.send(json!({
        "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {
            "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
        }},
    }))
    .await;
    let ack = raw.next().await;
    assert_eq!(
        method(&ack),
        "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    eventually("the listen holds its place", || notifier.listeners() >= 1).await;
    walk(&mut raw, &server, true, |m| {
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7,
            "{m}"
        );
        method(m)
    })
    .await;
}

#[tokio::test]
async fn the_builders_rule_starts_a_tool_disabled_and_refuses_an_unknown_name() {
    let server = builder()
        .disabled(Item::Tool, "billing_void")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!server.visibility().is_enabled(Item::Tool, "billing_void"));
    let mut raw = RawStdio::serve(server.clone());
    raw.initialize("2025-11-25", json!({})).await;
    let (_, answer) = raw.request(1, "tools/list", json!({})).await;
    assert_eq!(
        names(&answer, "tools", "name"),
        ["billing_get_invoice", "billing_get_invoices"]
    );
    assert_eq!(refused(&mut raw, 2, false, "billing_void").await, None);
    // The contract is the full one.
    assert_eq!(server.contracts().len(), 3);

    for (item, name) in [
        (Item::Tool, "billing_vod"),
        (Item::Prompt, "helo"),
        (Item::Resource, "test://docs/{name}"),
    ] {
        match builder().disabled(item, name).build() {
            Err(BuildError::Disabled(i, n)) => assert_eq!((i, n.as_str()), (item, name)),
            other => panic!("{name}: {other:?}"),
        }
    }
}
