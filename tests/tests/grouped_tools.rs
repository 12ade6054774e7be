//! Grouped exposure: the one tool standing for a group shows the schema its members enforce
//! (fields that agree once, fields that differ per member, tied to the discriminator), and
//! hints merged with MCP's defaults.

use fusion_runtime::{Server, ToolError, ToolInput, tool_action};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Get a record.
#[derive(Deserialize, ToolInput)]
struct GetInput {
    /// The record's key.
    id: String,
    /// Say more.
    verbose: Option<bool>,
}

/// Put a record.
#[derive(Deserialize, ToolInput)]
struct PutInput {
    /// The record's number.
    id: u32,
    /// The record's name.
    name: String,
}

/// Find records.
#[derive(Deserialize, ToolInput)]
struct FindInput {
    /// The record's name.
    name: Option<String>,
    /// How many at most.
    limit: Option<u8>,
    /// Say more.
    verbose: Option<bool>,
}

/// Open anything; other keys are ignored.
#[derive(Deserialize, ToolInput)]
#[fusion(allow_unknown_fields)]
struct OpenInput {
    /// A tag.
    tag: Option<String>,
}

/// Get a record.
#[tool_action(name = "lab.get")]
async fn get(_input: GetInput) -> Result<bool, ToolError> {
    Ok(true)
}

/// Put a record.
#[tool_action(name = "lab.put")]
async fn put(_input: PutInput) -> Result<bool, ToolError> {
    Ok(true)
}

/// Find records.
#[tool_action(name = "lab.find", read_only, idempotent)]
async fn find(_input: FindInput) -> Result<bool, ToolError> {
    Ok(true)
}

/// Open anything.
#[tool_action(name = "lab.open", read_only, open_world = false)]
async fn open(_input: OpenInput) -> Result<bool, ToolError> {
    Ok(true)
}

fn lab() -> Server {
    Server::builder()
        .action::<GetAction>()
        .action::<PutAction>()
        .action::<FindAction>()
        .action::<OpenAction>()
        .grouped()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The members that reject unknown keys.
fn strict_lab() -> Server {
    Server::builder()
        .action::<GetAction>()
        .action::<PutAction>()
        .action::<FindAction>()
        .grouped()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn shown_schema(server: &Server) -> Value {
    Value::Object(server.tools()[0].input_schema.as_ref().clone())
}

fn accepts(validator: &jsonschema::Validator, args: &Value) -> bool {
    validator.is_valid(args)
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("the shown schema compiles: {e}"))
}

/// Defect 1 of issue 17: `id` is a string in `get` and an integer in `put`. The merged schema
/// used to show `id: string` for both, so it accepted `put` with `"id": "x"` (which the call
/// refuses) and refused `put` with `"id": 5` (which the call runs).
#[tokio::test]
async fn a_field_members_define_differently_is_shown_per_member() {
    let server = strict_lab();
    let schema = shown_schema(&server);
    let v = validator(&schema);
    for (args, passes) in [
        (json!({"action": "get", "id": "x"}), true),
        (json!({"action": "get", "id": 5}), false),
        (json!({"action": "put", "id": 5, "name": "n"}), true),
        (json!({"action": "put", "id": "x", "name": "n"}), false),
    ] {
        assert_eq!(accepts(&v, &args), passes, "shown schema on {args}");
        let called = server.call_json("lab", args.clone()).await;
        assert_eq!(!called.is_error, passes, "call with {args}: {called:?}");
    }
    let verbose = &schema["properties"]["verbose"];
    assert_eq!(verbose["description"], "Say more.", "{schema}");
    assert!(
        verbose.get("type").is_some(),
        "a field both members define alike is shown once, in full: {schema}"
    );
    assert!(schema["properties"]["id"].get("type").is_none());
    assert!(
        schema["properties"]["name"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("Differs by action (put, find)")),
        "String in put, Option<String> in find: {schema}"
    );
}

/// Defect 2 of issue 17: a group whose members set no hint advertised `destructiveHint:
/// false, openWorldHint: false`; MCP's defaults (and the contract's `effective_*`) say true.
#[test]
fn grouped_hints_follow_mcp_defaults() {
    let server = Server::builder()
        .action::<GetAction>()
        .action::<PutAction>()
        .grouped()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let a = server.tools()[0]
        .annotations
        .clone()
        .unwrap_or_else(|| panic!("a grouped tool has annotations"));
    assert_eq!(a.destructive_hint, Some(true));
    assert_eq!(a.open_world_hint, Some(true));
    assert_eq!(a.read_only_hint, Some(false));
    assert_eq!(a.idempotent_hint, Some(false));
    for c in server.contracts() {
        assert!(c.annotations.effective_destructive() && c.annotations.effective_open_world());
    }

    let safe = Server::builder()
        .action::<FindAction>()
        .action::<OpenAction>()
        .grouped()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let a = safe.tools()[0]
        .annotations
        .clone()
        .unwrap_or_else(|| panic!("a grouped tool has annotations"));
    assert_eq!(a.read_only_hint, Some(true));
    assert_eq!(a.destructive_hint, Some(false));
    assert_eq!(
        a.idempotent_hint,
        Some(false),
        "open sets no idempotentHint"
    );
    assert_eq!(
        a.open_world_hint,
        Some(true),
        "find sets no openWorldHint: the default (true) wins over open's false"
    );
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            Just(-1i64),
            Just(0),
            Just(5),
            Just(255),
            Just(300),
            Just(1 << 33)
        ]
        .prop_map(Value::from),
        prop_oneof![Just(""), Just("x"), Just("get"), Just("a name")].prop_map(Value::from),
    ]
}

fn discriminator() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => prop_oneof![Just("get"), Just("put"), Just("find"), Just("open")]
            .prop_map(|s| Some(Value::from(s))),
        1 => Just(Some(Value::from("nope"))),
        1 => Just(Some(Value::from(3))),
        1 => Just(None),
    ]
}

fn arguments() -> impl Strategy<Value = Value> {
    let keys = ["id", "name", "verbose", "limit", "tag", "extra"];
    (
        discriminator(),
        proptest::collection::vec(proptest::option::of(value()), keys.len()),
    )
        .prop_map(move |(action, values)| {
            let mut m = Map::new();
            if let Some(a) = action {
                m.insert("action".into(), a);
            }
            for (k, v) in keys.iter().zip(values) {
                if let Some(v) = v {
                    m.insert((*k).to_owned(), v);
                }
            }
            Value::Object(m)
        })
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(512))]

    /// For any arguments, `jsonschema` on the grouped tool's shown schema accepts exactly when
    /// the call passes routing and validation (every handler here succeeds) — with and
    /// without a member that lets unknown keys through.
    #[test]
    fn the_grouped_schema_decides_as_the_call_does(args in arguments()) {
        for server in [lab(), strict_lab()] {
            let v = validator(&shown_schema(&server));
            let shown = accepts(&v, &args);
            let called = futures::executor::block_on(server.call_json("lab", args.clone()));
            prop_assert_eq!(shown, !called.is_error, "{} → {:?}", args, called);
        }
    }
}

/// Grouping exists to save the model tokens: the billing example's `tools/list` is smaller as
/// one grouped tool than as nine flat ones, per-member `allOf` entries included.
#[test]
fn the_grouped_billing_tools_list_is_smaller_than_the_flat_one() {
    let size = |grouped: bool| {
        let builder = examples::billing::builder();
        let builder = if grouped { builder.grouped() } else { builder };
        let server = builder.build().unwrap_or_else(|e| panic!("{e}"));
        serde_json::to_string(&server.tools_json())
            .map(|s| s.len())
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (flat, grouped) = (size(false), size(true));
    eprintln!("billing tools/list: flat {flat} bytes, grouped {grouped} bytes");
    assert!(grouped < flat, "grouped {grouped} bytes, flat {flat} bytes");
}
