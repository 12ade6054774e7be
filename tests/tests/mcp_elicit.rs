//! `cx.elicit::<T>()` on both protocol generations, in raw JSON-RPC over an in-memory stdio
//! connection: a 2025 session gets a server-to-client `elicitation/create`; a 2026-07-28
//! request gets `input_required` with a signed `requestState`, the handler runs again on the
//! retry and gets the answer at once. Answers are validated; decline and cancel are variants;
//! a client without the capability gets `ELICITATION_UNSUPPORTED`; a tampered or foreign
//! `requestState` is `-32602`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fusion_runtime::context::Elicited;
use fusion_runtime::{
    Context, Elicitable, PromptReply, ResourceContent, Server, ToolError, ToolInput, prompt,
    resource, tool_action,
};
use fusion_tests::raw_stdio::RawStdio;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Why the money goes back.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Reason {
    /// Charged twice.
    Duplicate,
    /// Not the customer's doing.
    Fraud,
}

/// The confirmation form.
#[derive(Deserialize, ToolInput, Elicitable)]
struct Confirm {
    /// Why the refund is made.
    reason: Reason,
    /// A note for the ledger.
    #[fusion(length(max = 20))]
    note: Option<String>,
}

/// Which invoice to refund.
#[derive(Deserialize, ToolInput)]
struct Refund {
    /// The invoice.
    #[fusion(length(min = 1, max = 40))]
    invoice: String,
}

/// Counts the refunds that moved money.
#[derive(Default)]
struct Ledger(AtomicUsize);

/// Refunds an invoice after the user confirms.
#[tool_action(name = "billing.refund")]
async fn refund(input: Refund, cx: Context<Ledger>) -> Result<Value, ToolError> {
    let answer = cx
        .elicit::<Confirm>(format!("Refund {}?", input.invoice))
        .await?;
    match answer {
        Elicited::Accept(c) => {
            let n = cx.state().0.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(json!({ "refunded": input.invoice, "reason": c.reason, "note": c.note, "moved": n }))
        }
        Elicited::Decline => Ok(json!({ "declined": true })),
        Elicited::Cancel => Ok(json!({ "cancelled": true })),
    }
}

fn server(ledger: Arc<Ledger>) -> Server {
    Server::builder()
        .name("elicit")
        .state_arc(ledger)
        .action::<RefundAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Sends a request and answers every `elicitation/create` with `answer`; returns the forms
/// it was asked and the response.
async fn ask(
    raw: &mut RawStdio,
    id: u64,
    method: &str,
    params: Value,
    answer: &Value,
) -> (Vec<Value>, Value) {
    raw.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
        .await;
    let mut asked = Vec::new();
    loop {
        let message = raw.next().await;
        if message["method"] == "elicitation/create" {
            asked.push(message["params"].clone());
            let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": answer});
            raw.send(reply).await;
            continue;
        }
        if message["id"] == json!(id) && message.get("method").is_none() {
            return (asked, message);
        }
    }
}

/// The 2025-11-25 handshake with `capabilities`.
async fn open(raw: &mut RawStdio, capabilities: Value) {
    let init = raw.initialize("2025-11-25", capabilities).await;
    assert!(init["result"].is_object(), "{init}");
}

fn output(response: &Value) -> Value {
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{response}"));
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn call() -> Value {
    json!({ "name": "billing_refund", "arguments": { "invoice": "inv_1" } })
}

fn modern(capabilities: Value) -> Value {
    let mut params = call();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    params
}

#[tokio::test]
async fn a_2025_client_is_asked_with_elicitation_create_and_its_answer_is_typed() {
    let ledger = Arc::new(Ledger::default());
    let mut raw = RawStdio::serve(server(ledger.clone()));
    open(&mut raw, json!({"elicitation": {}})).await;
    let accept = json!({"action": "accept", "content": {"reason": "fraud", "note": "card stolen"}});
    let (asked, response) = ask(&mut raw, 1, "tools/call", call(), &accept).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["message"], "Refund inv_1?");
    let schema = &asked[0]["requestedSchema"];
    assert_eq!(
        schema["properties"]["reason"]["oneOf"],
        json!([{"const": "duplicate", "title": "Charged twice."},
               {"const": "fraud", "title": "Not the customer's doing."}]),
        "{schema}"
    );
    assert_eq!(schema["required"], json!(["reason"]), "{schema}");
    assert!(
        schema.get("$defs").is_none() && schema.get("$schema").is_none(),
        "{schema}"
    );
    assert_eq!(
        output(&response),
        json!({"refunded": "inv_1", "reason": "fraud", "note": "card stolen", "moved": 1})
    );

    for (id, action, expected) in [
        (2, "decline", json!({"declined": true})),
        (3, "cancel", json!({"cancelled": true})),
    ] {
        let answer = json!({ "action": action });
        let (_, response) = ask(&mut raw, id, "tools/call", call(), &answer).await;
        assert_eq!(output(&response), expected);
    }

    // An answer that breaks the form's rules: a `<validation_error>` of its own, the form's
    // fields as its lines, named as the call was (not an envelope escaped in a message).
    let bad = json!({"action": "accept", "content": {"reason": "boredom", "note": "x".repeat(30)}});
    let (_, response) = ask(&mut raw, 4, "tools/call", call(), &bad).await;
    assert_eq!(response["result"]["isError"], true, "{response}");
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("<validation_error action=\"billing_refund\">\n  <field name=\"reason\">"),
        "{text}"
    );
    assert!(text.contains("<field name=\"note\">Too long."), "{text}");
    assert!(!text.contains("&lt;"), "{text}");
    assert!(
        fusion_runtime::client::parse_envelope(text).is_ok(),
        "{text}"
    );
    assert_eq!(ledger.0.load(Ordering::SeqCst), 1, "money moved once");
}

#[tokio::test]
async fn a_2025_client_without_the_capability_gets_elicitation_unsupported() {
    let mut raw = RawStdio::serve(server(Arc::default()));
    open(&mut raw, json!({})).await;
    let (asked, response) = ask(&mut raw, 1, "tools/call", call(), &Value::Null).await;
    assert!(asked.is_empty());
    assert_eq!(response["result"]["isError"], true, "{response}");
    let text = output(&response).to_string();
    assert!(text.contains("ELICITATION_UNSUPPORTED"), "{text}");
    assert!(text.contains("ask the user in conversation"), "{text}");
}

#[tokio::test]
async fn a_2026_client_gets_input_required_and_the_retry_runs_the_handler_with_the_answer() {
    let ledger = Arc::new(Ledger::default());
    let mut raw = RawStdio::serve(server(ledger.clone()));
    let first = modern(json!({"elicitation": {}}));
    let (asked, response) = ask(&mut raw, 1, "tools/call", first.clone(), &Value::Null).await;
    assert!(
        asked.is_empty(),
        "no server-to-client request on 2026-07-28"
    );
    let result = &response["result"];
    assert_eq!(result["resultType"], "input_required", "{response}");
    let form = &result["inputRequests"]["e0"];
    assert_eq!(form["method"], "elicitation/create", "{response}");
    assert_eq!(form["params"]["mode"], "form");
    assert_eq!(form["params"]["message"], "Refund inv_1?");
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["reason"]["oneOf"][1]["const"], "fraud",
        "{response}"
    );
    assert!(result.get("ttlMs").is_none(), "{response}");
    let state = result["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("{response}"));
    assert_eq!(
        ledger.0.load(Ordering::SeqCst),
        0,
        "nothing moved before the answer"
    );

    let mut retry = first.clone();
    retry["inputResponses"] =
        json!({"e0": {"action": "accept", "content": {"reason": "duplicate"}}});
    retry["requestState"] = json!(state);
    let (_, response) = ask(&mut raw, 2, "tools/call", retry.clone(), &Value::Null).await;
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    assert_eq!(
        output(&response),
        json!({"refunded": "inv_1", "reason": "duplicate", "note": null, "moved": 1})
    );

    // The same retry again: its state was answered, so nothing is taken and the form comes
    // back with a new state (a replay never runs the handler twice).
    let (_, again) = ask(&mut raw, 3, "tools/call", retry.clone(), &Value::Null).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    assert_eq!(ledger.0.load(Ordering::SeqCst), 1, "{again}");

    // Decline, on the new state.
    let mut decline = first.clone();
    decline["inputResponses"] = json!({"e0": {"action": "decline"}});
    decline["requestState"] = again["result"]["requestState"].clone();
    let (_, response) = ask(&mut raw, 4, "tools/call", decline, &Value::Null).await;
    assert_eq!(output(&response), json!({"declined": true}));

    // A fresh server instance (another process sharing nothing but the key) takes a retry
    // too: the state carries everything. Same process here, so the same key.
    let (_, round) = ask(&mut raw, 5, "tools/call", first.clone(), &Value::Null).await;
    let mut elsewhere = retry.clone();
    elsewhere["requestState"] = round["result"]["requestState"].clone();
    let mut other = RawStdio::serve(server(ledger.clone()));
    let (_, response) = ask(&mut other, 6, "tools/call", elsewhere, &Value::Null).await;
    assert_eq!(output(&response)["moved"], 2, "{response}");

    // Tampered, or replayed on other arguments: -32602.
    let mut tampered = retry.clone();
    tampered["requestState"] = json!(format!("{state}x"));
    let (_, response) = ask(&mut raw, 7, "tools/call", tampered, &Value::Null).await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let mut foreign = retry.clone();
    foreign["arguments"]["invoice"] = json!("inv_2");
    let (_, response) = ask(&mut raw, 8, "tools/call", foreign, &Value::Null).await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("requestState failed verification")),
        "{response}"
    );
    assert_eq!(ledger.0.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_2026_client_without_the_capability_gets_elicitation_unsupported() {
    let mut raw = RawStdio::serve(server(Arc::default()));
    let (_, response) = ask(&mut raw, 1, "tools/call", modern(json!({})), &Value::Null).await;
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(
        output(&response)
            .to_string()
            .contains("ELICITATION_UNSUPPORTED")
    );
}

fn billing() -> Server {
    examples::billing::server().unwrap_or_else(|e| panic!("{e}"))
}

fn refund_call() -> Value {
    json!({ "name": "billing_refund", "arguments": { "invoice_id": "inv_2026_0002", "amount_cents": 500 } })
}

#[tokio::test]
async fn billing_refund_moves_money_only_after_confirmation_on_2025() {
    let mut raw = RawStdio::serve(billing());
    open(&mut raw, json!({"elicitation": {}})).await;
    let (asked, response) = ask(
        &mut raw,
        1,
        "tools/call",
        refund_call(),
        &json!({"action": "decline"}),
    )
    .await;
    assert_eq!(asked.len(), 1);
    assert!(
        output(&response)
            .to_string()
            .contains("REFUND_NOT_CONFIRMED"),
        "{response}"
    );
    let accept = json!({"action": "accept", "content": {"invoice_id": "inv_2026_0002", "reason": "duplicate"}});
    let (asked, response) = ask(&mut raw, 2, "tools/call", refund_call(), &accept).await;
    assert_eq!(
        asked[0]["requestedSchema"]["required"],
        json!(["invoice_id", "reason"])
    );
    let out = &response["result"]["structuredContent"];
    assert_eq!(out["amount_cents"], 500, "{response}");
    assert_eq!(out["reason"], "duplicate", "{response}");
    assert_eq!(out["balance_cents"], 500, "{response}");
}

#[tokio::test]
async fn billing_refund_moves_money_only_after_confirmation_on_2026() {
    let mut raw = RawStdio::serve(billing());
    let mut first = refund_call();
    first["_meta"] = modern(json!({"elicitation": {}}))["_meta"].clone();
    let (_, response) = ask(&mut raw, 1, "tools/call", first.clone(), &Value::Null).await;
    assert_eq!(
        response["result"]["resultType"], "input_required",
        "{response}"
    );
    let state = response["result"]["requestState"].clone();
    // Same invoice read again: nothing moved yet.
    let mut get = json!({"name": "billing_get_invoice", "arguments": {"id": "inv_2026_0002"}});
    get["_meta"] = first["_meta"].clone();
    let (_, invoice) = ask(&mut raw, 2, "tools/call", get.clone(), &Value::Null).await;
    let paid_before = invoice["result"]["structuredContent"]["paid_cents"].clone();
    let mut retry = first.clone();
    retry["requestState"] = state;
    retry["inputResponses"] = json!({"e0": {"action": "accept", "content": {"invoice_id": "inv_2026_0001", "reason": "fraud"}}});
    let (_, response) = ask(&mut raw, 3, "tools/call", retry.clone(), &Value::Null).await;
    assert!(
        output(&response).to_string().contains("CONFLICT"),
        "another ID: {response}"
    );
    // The state was answered (with the wrong ID): the same state again is asked afresh, and
    // the new state takes the right answer.
    retry["inputResponses"]["e0"]["content"]["invoice_id"] = json!("inv_2026_0002");
    let (_, again) = ask(&mut raw, 6, "tools/call", retry.clone(), &Value::Null).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    retry["requestState"] = again["result"]["requestState"].clone();
    let (_, response) = ask(&mut raw, 4, "tools/call", retry, &Value::Null).await;
    assert_eq!(
        response["result"]["structuredContent"]["reason"], "fraud",
        "{response}"
    );
    let (_, invoice) = ask(&mut raw, 5, "tools/call", get, &Value::Null).await;
    let paid_after = invoice["result"]["structuredContent"]["paid_cents"].clone();
    assert_eq!(
        paid_before.as_u64().map(|p| p - 500),
        paid_after.as_u64(),
        "{invoice}"
    );
}

fn billing_keyed(key: &[u8]) -> Server {
    examples::billing::builder()
        .request_state_key(key)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Two instances sharing the builder's key take each other's retries; one with another key
/// refuses them; a short key does not build.
#[tokio::test]
async fn the_builders_request_state_key_signs_the_state_across_instances() {
    let mut first = refund_call();
    first["_meta"] = modern(json!({"elicitation": {}}))["_meta"].clone();
    let mut a = RawStdio::serve(billing_keyed(&[1; 32]));
    let (_, response) = ask(&mut a, 1, "tools/call", first.clone(), &Value::Null).await;
    assert_eq!(
        response["result"]["resultType"], "input_required",
        "{response}"
    );
    let mut retry = first;
    retry["requestState"] = response["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"e0": {"action": "decline"}});

    let mut other = RawStdio::serve(billing_keyed(&[2; 32]));
    let (_, refused) = ask(&mut other, 2, "tools/call", retry.clone(), &Value::Null).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    let mut twin = RawStdio::serve(billing_keyed(&[1; 32]));
    let (_, taken) = ask(&mut twin, 3, "tools/call", retry, &Value::Null).await;
    assert!(
        output(&taken).to_string().contains("REFUND_NOT_CONFIRMED"),
        "{taken}"
    );

    let short = examples::billing::builder()
        .request_state_key(b"short")
        .build();
    assert!(matches!(
        short,
        Err(fusion_runtime::server::BuildError::RequestStateKey(5))
    ));
}

/// Drafts a refund note after asking the reason (a prompt that elicits).
#[prompt(name = "billing.asking_note")]
async fn asking_note(
    _: fusion_runtime::prompt::NoArguments,
    cx: Context,
) -> Result<PromptReply, ToolError> {
    match cx.elicit::<Confirm>("Why the refund?").await? {
        Elicited::Accept(c) => Ok(PromptReply::new().user(format!("Refund note: {:?}", c.reason))),
        _ => Ok(PromptReply::new().user("No note")),
    }
}

/// The refund ledger, shown only to a user who confirms (a resource that elicits).
#[resource(uri = "billing://ledger", name = "ledger", mime = "text/plain")]
async fn ledger(cx: Context) -> Result<ResourceContent, ToolError> {
    match cx.elicit::<Confirm>("Show the ledger?").await? {
        Elicited::Accept(c) => Ok(ResourceContent::text(format!("ledger ({:?})", c.reason))),
        _ => Ok(ResourceContent::text("hidden")),
    }
}

fn asking_server() -> Server {
    Server::builder()
        .name("asking")
        .prompt::<AskingNotePrompt>()
        .resource::<LedgerResource>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    })
}

/// prompts/get and resources/read ask like a tool: `input_required` then the retry on
/// 2026-07-28, `elicitation/create` on 2025.
#[tokio::test]
async fn prompts_and_resources_elicit_on_both_generations() {
    let mut raw = RawStdio::serve(asking_server());
    for (id, method, mut params, path) in [
        (
            1,
            "prompts/get",
            json!({"name": "billing_asking_note"}),
            "/messages/0/content/text",
        ),
        (
            3,
            "resources/read",
            json!({"uri": "billing://ledger"}),
            "/contents/0/text",
        ),
    ] {
        params["_meta"] = modern_meta(json!({"elicitation": {}}));
        let (_, first) = ask(&mut raw, id, method, params.clone(), &Value::Null).await;
        assert_eq!(first["result"]["resultType"], "input_required", "{first}");
        let (key, asked) = first["result"]["inputRequests"]
            .as_object()
            .and_then(|m| m.iter().next())
            .map(|(k, v)| (k.clone(), v.clone()))
            .unwrap_or_else(|| panic!("{first}"));
        assert_eq!(asked["method"], "elicitation/create", "{first}");
        let mut retry = params;
        retry["requestState"] = first["result"]["requestState"].clone();
        retry["inputResponses"] =
            json!({ key: {"action": "accept", "content": {"reason": "fraud"}} });
        let (_, done) = ask(&mut raw, id + 1, method, retry, &Value::Null).await;
        assert_eq!(done["result"]["resultType"], "complete", "{done}");
        let text = done["result"]
            .pointer(path)
            .and_then(Value::as_str)
            .unwrap_or("");
        assert!(text.contains("Fraud"), "{method}: {done}");
    }
    // A state sealed for the prompt does not open the resource.
    let mut params =
        json!({"name": "billing_asking_note", "_meta": modern_meta(json!({"elicitation": {}}))});
    let (_, first) = ask(&mut raw, 5, "prompts/get", params.clone(), &Value::Null).await;
    params = json!({"uri": "billing://ledger", "_meta": params["_meta"].clone()});
    params["requestState"] = first["result"]["requestState"].clone();
    let (_, refused) = ask(&mut raw, 6, "resources/read", params, &Value::Null).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    let mut legacy = RawStdio::serve(asking_server());
    open(&mut legacy, json!({"elicitation": {}})).await;
    let answer = json!({"action": "accept", "content": {"reason": "duplicate"}});
    let (asked, got) = ask(
        &mut legacy,
        1,
        "prompts/get",
        json!({"name": "billing_asking_note"}),
        &answer,
    )
    .await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["message"], "Why the refund?");
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        "Refund note: Duplicate"
    );
    let (asked, got) = ask(
        &mut legacy,
        2,
        "resources/read",
        json!({"uri": "billing://ledger"}),
        &answer,
    )
    .await;
    assert_eq!(asked.len(), 1);
    assert_eq!(got["result"]["contents"][0]["text"], "ledger (Duplicate)");
}
