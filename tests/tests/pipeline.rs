//! The call pipeline, in-process: routing, validation, handlers' outcomes, panics,
//! middleware, exposure. Inputs implement `ToolInput` by hand here, so these tests do not
//! depend on the derive.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fusion_runtime::client::{Envelope, ToolCallError, parse_envelope, parse_tool_error};
use fusion_runtime::codes::{CONFLICT, NOT_FOUND, UNAUTHORIZED};
use fusion_runtime::server::{BuildError, CallRequest, Next, middleware_fn};
use fusion_runtime::{
    Context, Issue, IssueKind, JsonObject, Server, ToolAction, ToolError, ToolInput, ToolResponse,
    ValidationReport, WithWarnings, error, tool_action,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
struct IdInput {
    id: String,
}

impl ToolInput for IdInput {
    fn input_schema() -> Arc<JsonObject> {
        let schema = json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "The ID"}},
            "required": ["id"],
            "additionalProperties": false
        });
        Arc::new(schema.as_object().cloned().unwrap_or_default())
    }

    fn from_arguments(arguments: &Value) -> Result<Self, ValidationReport> {
        match arguments.get("id") {
            Some(Value::String(_)) => {
                Self::deserialize(arguments).map_err(|_| ValidationReport::new(vec![]))
            }
            Some(other) => Err(ValidationReport::new(vec![Issue::new(
                "id",
                IssueKind::InvalidType {
                    expected: "a string".into(),
                },
                Some(other.clone()),
            )])),
            None => Err(ValidationReport::new(vec![Issue::new(
                "id",
                IssueKind::Missing {
                    expected: "a string".into(),
                },
                None,
            )])),
        }
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Item {
    id: String,
    total: u32,
}

struct Store {
    calls: AtomicUsize,
}

/// Get one item by ID.
#[tool_action(name = "shop.get_item", read_only, idempotent)]
async fn get_item(input: IdInput, store: Context<Store>) -> Result<Item, ToolError> {
    store.state().calls.fetch_add(1, Ordering::SeqCst);
    if input.id == "it_1" {
        Ok(Item {
            id: input.id,
            total: 100,
        })
    } else {
        Err(error(NOT_FOUND, "No item with that ID")
            .recovery("List items first")
            .available_actions(["shop.find_item"])
            .detail("requestedId", &input.id))
    }
}

/// Charge an item; an already-paid item is a warning.
#[tool_action(name = "shop.charge", destructive)]
async fn charge(input: IdInput) -> Result<WithWarnings<Item>, ToolError> {
    Ok(WithWarnings::new(Item {
        id: input.id,
        total: 0,
    })
    .warning(error(CONFLICT, "Already paid; nothing was charged")))
}

/// Fails with an io error.
#[tool_action(name = "shop.export")]
async fn export(_input: IdInput) -> Result<Item, std::io::Error> {
    Err(std::io::Error::other("ledger file is locked"))
}

/// Fails with a tool error wrapped in anyhow context.
#[tool_action(name = "shop.wrapped")]
async fn wrapped(_input: IdInput) -> anyhow::Result<Item> {
    Err(anyhow::Error::new(error(UNAUTHORIZED, "Sign in first")).context("while wrapping"))
}

/// Panics.
#[tool_action(name = "shop.explode")]
async fn explode(input: IdInput) -> Result<Item, ToolError> {
    if input.id.is_empty() {
        return Ok(Item {
            id: input.id,
            total: 0,
        });
    }
    panic!("secret panic payload {}", input.id)
}

/// Old way to get an item.
#[tool_action(name = "shop.find_item", deprecated = "use shop.get_item instead")]
async fn find_item(input: IdInput) -> Result<Vec<String>, ToolError> {
    Ok(vec![input.id])
}

/// Returns a ready response.
#[tool_action(name = "shop.raw")]
async fn raw(input: IdInput) -> Result<ToolResponse, ToolError> {
    Ok(ToolResponse::text(format!("raw {}", input.id)))
}

fn builder() -> fusion_runtime::ServerBuilder {
    Server::builder()
        .name("shop")
        .state(Store {
            calls: AtomicUsize::new(0),
        })
        .action::<GetItemAction>()
        .action::<ChargeAction>()
        .action::<ExportAction>()
        .action::<WrappedAction>()
        .action::<ExplodeAction>()
        .action::<FindItemAction>()
        .action::<RawAction>()
}

fn server() -> Server {
    match builder().build() {
        Ok(s) => s,
        Err(e) => panic!("build failed: {e}"),
    }
}

fn text(r: &ToolResponse, i: usize) -> &str {
    r.texts().nth(i).unwrap_or_default()
}

fn tool_error(r: &ToolResponse, i: usize) -> ToolCallError {
    match parse_tool_error(text(r, i)) {
        Ok(e) => ToolCallError::from_error("", &e),
        Err(e) => panic!("not a tool_error ({e}): {}", text(r, i)),
    }
}

#[tokio::test]
async fn success_carries_json_text_and_structured_content() {
    let r = server()
        .call_json("shop_get_item", json!({"id": "it_1"}))
        .await;
    assert!(!r.is_error);
    assert_eq!(
        r.structured_content,
        Some(json!({"id": "it_1", "total": 100}))
    );
    let v: Value = serde_json::from_str(text(&r, 0)).unwrap_or_default();
    assert_eq!(v["total"], 100);
}

#[tokio::test]
async fn a_returned_tool_error_passes_intact() {
    let r = server()
        .call_json("shop_get_item", json!({"id": "it_9"}))
        .await;
    assert!(r.is_error);
    let expected = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n  <message>No item with that ID</message>\n  <recovery>List items first</recovery>\n  <available_actions>\n    <action>shop_find_item</action>\n  </available_actions>\n  <details>\n    <detail key=\"requestedId\">it_9</detail>\n  </details>\n</tool_error>";
    assert_eq!(text(&r, 0), expected);
}

#[tokio::test]
async fn warnings_travel_with_success_without_the_error_flag() {
    let r = server()
        .call_json("shop_charge", json!({"id": "it_1"}))
        .await;
    assert!(!r.is_error);
    assert_eq!(r.content.len(), 2);
    let w = tool_error(&r, 1);
    assert_eq!(&w.code, &CONFLICT);
    assert!(!w.severity.is_error());
}

#[tokio::test]
async fn other_errors_become_internal_error_with_their_message() {
    let r = server().call_json("shop_export", json!({"id": "x"})).await;
    assert!(r.is_error);
    let e = tool_error(&r, 0);
    assert_eq!(e.code.as_str(), "INTERNAL_ERROR");
    assert!(e.message.contains("ledger file is locked"), "{}", e.message);
    assert!(
        e.recovery
            .as_deref()
            .unwrap_or_default()
            .contains("Do not retry")
    );
}

#[tokio::test]
async fn internal_messages_can_be_hidden() {
    let s = builder()
        .hide_internal_errors(true)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let r = s.call_json("shop_export", json!({"id": "x"})).await;
    assert!(!text(&r, 0).contains("ledger"));
    assert_eq!(tool_error(&r, 0).code.as_str(), "INTERNAL_ERROR");
}

#[tokio::test]
async fn a_tool_error_inside_anyhow_context_is_found() {
    let r = server().call_json("shop_wrapped", json!({"id": "x"})).await;
    let e = tool_error(&r, 0);
    assert_eq!(&e.code, &UNAUTHORIZED);
    assert_eq!(e.message, "Sign in first");
}

#[tokio::test]
async fn a_panic_is_an_internal_error_and_the_server_keeps_serving() {
    let s = server();
    let r = s.call_json("shop_explode", json!({"id": "boom"})).await;
    assert!(r.is_error);
    let e = tool_error(&r, 0);
    assert_eq!(e.code.as_str(), "INTERNAL_ERROR");
    assert!(e.message.contains("panicked"));
    assert!(!text(&r, 0).contains("secret"), "payload leaked");
    let again = s.call_json("shop_get_item", json!({"id": "it_1"})).await;
    assert!(!again.is_error);
}

#[tokio::test]
async fn validation_errors_name_the_action() {
    let r = server().call_json("shop_get_item", json!({"id": 42})).await;
    assert!(r.is_error);
    match parse_envelope(text(&r, 0)) {
        Ok(Envelope::Validation(v)) => {
            assert_eq!(v.action, "shop_get_item");
            assert_eq!(v.fields[0].name, "id");
            assert!(v.fields[0].text.contains("You sent: 42"));
        }
        other => panic!("{other:?}"),
    }
    let missing = server().call_json("shop_get_item", json!({})).await;
    assert!(text(&missing, 0).starts_with("<validation_error action=\"shop_get_item\">"));
    let not_object = server().call_json("shop_get_item", json!([1])).await;
    assert!(not_object.is_error);
    assert!(text(&not_object, 0).contains("Invalid type"));
}

#[tokio::test]
async fn deprecated_actions_answer_with_a_deprecated_warning() {
    let r = server()
        .call_json("shop_find_item", json!({"id": "a"}))
        .await;
    assert!(!r.is_error);
    let w = tool_error(&r, 1);
    assert_eq!(w.code.as_str(), "DEPRECATED");
    assert!(w.message.contains("use shop_get_item instead"));
    // An array output has no output schema and no structured content.
    assert_eq!(r.structured_content, None);
}

#[tokio::test]
async fn a_ready_response_goes_out_as_built() {
    let r = server().call_json("shop_raw", json!({"id": "a"})).await;
    assert_eq!(text(&r, 0), "raw a");
}

#[tokio::test]
async fn unknown_tools_get_an_envelope_naming_the_closest() {
    let r = server()
        .call_json("shop_get_itme", json!({"id": "a"}))
        .await;
    assert!(r.is_error);
    let e = tool_error(&r, 0);
    assert_eq!(e.code.as_str(), "UNKNOWN_ACTION");
    assert_eq!(e.detail_value("closest"), Some("shop_get_item"));
    assert!(e.available_actions.iter().any(|a| a == "shop_charge"));
    let far = tool_error(&server().call_json("weather", json!({})).await, 0);
    assert_eq!(far.detail_value("closest"), None);
}

#[tokio::test]
async fn middleware_runs_in_order_and_can_short_circuit() {
    let seen = Arc::new(AtomicUsize::new(0));
    let seen2 = seen.clone();
    let s = builder()
        .middleware(middleware_fn(move |req: CallRequest, next: Next| {
            let seen = seen2.clone();
            async move {
                seen.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ToolError>(next.run(req).await)
            }
        }))
        .middleware(middleware_fn(|req: CallRequest, next: Next| async move {
            if req.action() == "shop.charge" {
                return Err(anyhow::Error::new(
                    error(UNAUTHORIZED, "Charging needs an operator token")
                        .recovery("Ask the user to sign in"),
                ));
            }
            if req.action() == "shop.raw" {
                return Err(anyhow::anyhow!("auth backend down"));
            }
            Ok(next.run(req).await)
        }))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let denied = s.call_json("shop_charge", json!({"id": "a"})).await;
    assert!(denied.is_error);
    assert_eq!(&tool_error(&denied, 0).code, &UNAUTHORIZED);
    let failed = s.call_json("shop_raw", json!({"id": "a"})).await;
    let e = tool_error(&failed, 0);
    assert_eq!(e.code.as_str(), "INTERNAL_ERROR");
    assert!(e.message.contains("auth backend down"));
    let ok = s.call_json("shop_get_item", json!({"id": "it_1"})).await;
    assert!(!ok.is_error);
    assert_eq!(seen.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn grouped_exposure_routes_by_discriminator() {
    let s = builder()
        .grouped()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.tools().len(), 1);
    let tool = &s.tools()[0];
    assert_eq!(tool.name, "shop");
    let schema = Value::Object(tool.input_schema.as_ref().clone());
    assert_eq!(schema["required"], json!(["action"]));
    assert!(
        schema["properties"]["action"]["enum"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("get_item")))
    );

    let ok = s
        .call_json("shop", json!({"action": "get_item", "id": "it_1"}))
        .await;
    assert!(!ok.is_error, "{:?}", ok);

    let missing = tool_error(&s.call_json("shop", json!({"id": "it_1"})).await, 0);
    assert_eq!(missing.code.as_str(), "MISSING_DISCRIMINATOR");
    assert!(missing.available_actions.iter().any(|a| a == "get_item"));
    assert!(missing.detail_value("closest").is_some());

    let unknown = tool_error(
        &s.call_json("shop", json!({"action": "get_itm", "id": "x"}))
            .await,
        0,
    );
    assert_eq!(unknown.code.as_str(), "UNKNOWN_ACTION");
    assert_eq!(unknown.detail_value("closest"), Some("get_item"));

    let invalid = s
        .call_json("shop", json!({"action": "get_item", "id": 1}))
        .await;
    assert!(text(&invalid, 0).starts_with("<validation_error action=\"shop.get_item\">"));
}

#[tokio::test]
async fn descriptors_and_tools_carry_the_metadata() {
    let s = server();
    let d = &s.actions()[0];
    assert_eq!(d.info.name, "shop.get_item");
    assert_eq!(d.tool, "shop_get_item");
    assert_eq!(d.info.description, "Get one item by ID.");
    assert_eq!(d.info.hints.read_only, Some(true));
    assert!(d.info.output_schema.is_some());
    assert_eq!(<GetItemAction as ToolAction>::NAME, "shop.get_item");
    let tool = &s.tools()[0];
    let ann = tool.annotations.clone().unwrap_or_default();
    assert_eq!(ann.read_only_hint, Some(true));
    assert_eq!(ann.idempotent_hint, Some(true));
    assert!(tool.output_schema.is_some());
    let tools = s.tools();
    let find = tools.iter().find(|t| t.name == "shop_find_item");
    assert!(
        find.and_then(|t| t.description.as_deref())
            .is_some_and(|d| d.starts_with("DEPRECATED: use shop_get_item instead"))
    );
    let separated = builder()
        .separator("-")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(separated.tools()[0].name, "shop-get_item");
}

#[test]
fn missing_state_and_duplicates_refuse_to_build() {
    let missing = Server::builder().action::<GetItemAction>().build();
    assert!(matches!(
        missing,
        Err(BuildError::MissingState {
            action: "shop.get_item",
            ..
        })
    ));
    let dup = builder().action::<ChargeAction>().build();
    assert!(matches!(
        dup,
        Err(BuildError::DuplicateAction("shop.charge"))
    ));
}
