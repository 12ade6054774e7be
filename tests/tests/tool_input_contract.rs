//! Contract: the schema and the validator never disagree. For generated arguments, whatever
//! the schema accepts deserializes and passes; whatever it rejects yields at least one issue.

use fusion_runtime::ToolInput;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Paid,
}

#[derive(Deserialize, ToolInput, Debug)]
struct Line {
    #[fusion(pattern = "^SKU-[0-9]{1,3}$")]
    sku: String,
    #[fusion(range(min = 1, max = 50))]
    qty: u8,
}

#[derive(Deserialize, ToolInput, Debug)]
struct Order {
    #[fusion(length(min = 2, max = 6))]
    name: String,
    #[fusion(email)]
    email: Option<String>,
    #[fusion(range(exclusive_min = 0, max = 100), multiple_of = 5)]
    amount: Option<i32>,
    small: Option<u8>,
    status: Status,
    #[fusion(items(max = 2))]
    lines: Vec<Line>,
    flag: Option<bool>,
    #[fusion(uuid)]
    id: Option<String>,
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-10i64..400).prop_map(Value::from),
        (-2.0f64..2.0).prop_map(Value::from),
        prop::sample::select(vec![
            "",
            "a",
            "ab",
            "abcdef",
            "abcdefg",
            "open",
            "paid",
            "Open",
            "a@example.com",
            "not-an-email",
            "SKU-1",
            "SKU-1234",
            "sku-1",
            "123e4567-e89b-12d3-a456-426614174000",
            "é漢字",
        ])
        .prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["sku", "qty", "skux"]),
                inner,
                0..3
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn line() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (scalar(), scalar()).prop_map(|(s, q)| json!({"sku": s, "qty": q})),
        1 => value(),
    ]
}

fn arguments() -> impl Strategy<Value = Value> {
    let keys = [
        "name", "email", "amount", "small", "status", "lines", "flag", "id", "nmae",
    ];
    let field = prop_oneof![
        4 => scalar(),
        2 => prop::collection::vec(line(), 0..4).prop_map(Value::Array),
        1 => value(),
    ];
    prop::collection::vec((prop::sample::select(keys.to_vec()), field), 0..9).prop_map(|pairs| {
        let mut m = Map::new();
        for (k, v) in pairs {
            m.insert(k.to_owned(), v);
        }
        Value::Object(m)
    })
}

fn schema_accepts(schema: &Value, args: &Value) -> bool {
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .expect("the derived schema compiles");
    validator.is_valid(args)
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(512))]

    #[test]
    fn schema_and_validator_agree(args in arguments()) {
        let schema = Value::Object((*Order::input_schema()).clone());
        let accepted = schema_accepts(&schema, &args);
        match Order::from_arguments(&args) {
            Ok(_) => prop_assert!(accepted, "passed but the schema rejects {args}"),
            Err(report) => {
                prop_assert!(!accepted, "the schema accepts {args} but: {report}");
                prop_assert!(!report.is_empty());
            }
        }
    }

    #[test]
    fn fully_shaped_arguments_agree(
        name in scalar(), status in scalar(), amount in scalar(), email in scalar(),
        lines in prop::collection::vec(line(), 0..4),
    ) {
        let args = json!({"name": name, "status": status, "amount": amount, "email": email, "lines": lines});
        let schema = Value::Object((*Order::input_schema()).clone());
        let accepted = schema_accepts(&schema, &args);
        let result = Order::from_arguments(&args);
        prop_assert_eq!(accepted, result.is_ok(), "{} -> {:?}", args, result.err());
    }
}

#[test]
fn a_known_valid_order_passes_both() {
    let args =
        json!({"name": "ab", "status": "open", "lines": [{"sku": "SKU-1", "qty": 1}], "amount": 5});
    let schema = Value::Object((*Order::input_schema()).clone());
    assert!(schema_accepts(&schema, &args));
    let order = Order::from_arguments(&args).expect("valid");
    assert_eq!(order.lines[0].sku, "SKU-1");
    assert_eq!(order.amount, Some(5));
    assert!(matches!(order.status, Status::Open));
}
