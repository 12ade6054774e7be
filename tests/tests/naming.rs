//! Every action name an envelope shows is one the model can call (issue 31): in flat
//! exposure the tool (`billing_list_invoices`), in a grouped one `tool.action`
//! (`billing.list_invoices`, the seed's spelling, which routing also takes); `action=` of a
//! `<validation_error>` is the same spelling on every path; a name that no action has is left
//! out; an empty message never reaches the wire.

use fusion_runtime::{
    Server, ToolAction, ToolError, ToolInput,
    codes::{NOT_FOUND, RATE_LIMITED},
    error, tool_action,
};
use fusion_tests::{SEED_NOT_FOUND, text_of};
use serde::Deserialize;
use serde_json::json;

/// Which invoice.
#[derive(Deserialize, ToolInput)]
struct Lookup {
    /// The invoice ID.
    #[fusion(length(min = 3))]
    id: String,
}

/// Nothing.
#[derive(Deserialize, ToolInput)]
struct Nothing {}

/// Lists invoices.
#[tool_action(name = "billing.list_invoices")]
async fn list_invoices(_input: Nothing) -> Result<String, ToolError> {
    Ok("[]".into())
}

/// Fails as SPEC §1 does, naming the list by its typed reference.
#[tool_action(name = "billing.get_invoice")]
async fn get_invoice(input: Lookup) -> Result<String, ToolError> {
    Err(error(NOT_FOUND, "No invoice with that ID")
        .recovery("List invoices first, then retry with a real ID")
        .available_actions([ListInvoicesAction::NAME])
        .detail("requestedId", input.id)
        .retry_after(30))
}

/// Names an action that does not exist, and one by its tool name.
#[tool_action(name = "billing.misnamed")]
async fn misnamed(_input: Nothing) -> Result<String, ToolError> {
    Err(error(RATE_LIMITED, "Slow down").available_actions([
        "billing.nope",
        "billing_list_invoices",
        "billing.list_invoices",
    ]))
}

/// Fails without a message.
#[tool_action(name = "billing.silent")]
async fn silent(_input: Nothing) -> Result<String, ToolError> {
    Err(error(NOT_FOUND, ""))
}

fn server(grouped: bool) -> Server {
    let b = Server::builder()
        .name("billing")
        .action::<ListInvoicesAction>()
        .action::<GetInvoiceAction>()
        .action::<MisnamedAction>()
        .action::<SilentAction>();
    let b = if grouped { b.grouped() } else { b };
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn the_seed_envelope_is_byte_equal_grouped_and_names_the_tool_flat() {
    let grouped = server(true);
    let r = grouped
        .call_json(
            "billing",
            json!({"action": "get_invoice", "id": "inv_2026_9999"}),
        )
        .await;
    assert_eq!(text_of(&r), SEED_NOT_FOUND);
    let flat = server(false);
    let r = flat
        .call_json("billing_get_invoice", json!({"id": "inv_2026_9999"}))
        .await;
    assert_eq!(
        text_of(&r),
        SEED_NOT_FOUND.replace("billing.list_invoices", "billing_list_invoices")
    );
}

#[tokio::test]
async fn the_names_an_envelope_shows_are_called_as_shown() {
    // Flat: the tool name, and the action's dotted name routes too.
    let flat = server(false);
    for name in ["billing_list_invoices", "billing.list_invoices"] {
        let r = flat.call_json(name, json!({})).await;
        assert!(!r.is_error, "{name}: {}", text_of(&r));
    }
    // Grouped: `tool.action` routes, with or without the discriminator repeated.
    let grouped = server(true);
    for args in [json!({}), json!({"action": "list_invoices"})] {
        let r = grouped
            .call_json("billing.list_invoices", args.clone())
            .await;
        assert!(!r.is_error, "{args}: {}", text_of(&r));
    }
    // A name no action has is left out; two spellings of one action are one name.
    let r = flat.call_json("billing_misnamed", json!({})).await;
    let text = text_of(&r);
    assert!(!text.contains("billing.nope"), "{text}");
    assert_eq!(
        text.matches("<action>billing_list_invoices</action>")
            .count(),
        1,
        "{text}"
    );
    let r = grouped
        .call_json("billing", json!({"action": "misnamed"}))
        .await;
    let text = text_of(&r);
    assert!(!text.contains("nope"), "{text}");
    assert_eq!(
        text.matches("<action>billing.list_invoices</action>")
            .count(),
        1,
        "{text}"
    );
}

#[tokio::test]
async fn validation_errors_name_the_action_as_it_is_called() {
    let flat = server(false);
    let r = flat
        .call_json("billing_get_invoice", json!({"id": "x"}))
        .await;
    assert!(
        text_of(&r).starts_with("<validation_error action=\"billing_get_invoice\">"),
        "{}",
        text_of(&r)
    );
    let r = flat
        .call_json("billing.get_invoice", json!({"id": "x"}))
        .await;
    assert!(
        text_of(&r).starts_with("<validation_error action=\"billing_get_invoice\">"),
        "{}",
        text_of(&r)
    );
    let grouped = server(true);
    let r = grouped
        .call_json("billing", json!({"action": "get_invoice", "id": "x"}))
        .await;
    assert!(
        text_of(&r).starts_with("<validation_error action=\"billing.get_invoice\">"),
        "{}",
        text_of(&r)
    );
}

#[tokio::test]
async fn an_empty_message_gets_the_codes_default_text_on_the_wire() {
    let r = server(false).call_json("billing_silent", json!({})).await;
    let text = text_of(&r);
    assert!(!text.contains("<message></message>"), "{text}");
    assert!(
        text.contains(
            "<message>The call failed with NOT_FOUND; the server gave no further detail</message>"
        ),
        "{text}"
    );
}
