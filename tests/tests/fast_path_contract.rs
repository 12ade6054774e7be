//! Contract: the typed path (serde, then each rule of `validation/rules` on the typed fields,
//! then the key count; `jsonschema` on a field's sub-schema where a typed value cannot decide)
//! accepts exactly what the `jsonschema` validator accepts on the whole schema, wherever serde
//! reads the arguments: on generated arguments covering every rule (integer and float bounds,
//! integer and fractional `multipleOf`), every format (with its edge cases), patterns, enums
//! (documented or not), nested inputs, `Option`, `Vec`, serde defaults and unknown keys.

use std::collections::HashSet;

use fusion_runtime::__private::{Derived, typed_accepts};
use fusion_runtime::ToolInput;
use fusion_runtime::validation::rules::{
    Check, Typed, enum_const, format, items, length, multiple_of, range,
};
use fusion_runtime::validation::spec::Num;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "lowercase")]
enum Plan {
    Free,
    Pro,
}

/// A documented enum: schemars writes a `oneOf` of constants.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "lowercase")]
enum Status {
    /// Not paid yet.
    Open,
    /// Paid.
    Paid,
}

#[derive(Deserialize, ToolInput, Debug)]
struct Item {
    #[fusion(pattern = "^SKU-\\d{1,3}$")]
    sku: String,
    #[fusion(range(min = 1, max = 50), multiple_of = 2)]
    qty: u8,
    note: Option<String>,
}

#[derive(Deserialize, ToolInput, Debug)]
struct Everything {
    #[fusion(length(min = 2, max = 5))]
    name: String,
    #[fusion(email)]
    email: Option<String>,
    #[fusion(url)]
    url: Option<String>,
    #[fusion(uuid)]
    uuid: Option<String>,
    #[fusion(date_time)]
    at: Option<String>,
    #[fusion(date)]
    day: Option<String>,
    #[fusion(ipv4)]
    v4: Option<String>,
    #[fusion(ipv6)]
    v6: Option<String>,
    #[fusion(range(exclusive_min = 0, exclusive_max = 100))]
    pct: Option<i64>,
    #[fusion(range(min = -1.5, max = 2.5), multiple_of = 0.5)]
    ratio: Option<f64>,
    small: Option<i8>,
    plan: Option<Plan>,
    #[fusion(items(min = 1, max = 3))]
    tags: Option<Vec<String>>,
    item: Option<Item>,
    items: Option<Vec<Item>>,
    flag: Option<bool>,
    #[fusion(range(min = -2, exclusive_max = 99), multiple_of = 3)]
    step: Option<i32>,
    status: Option<Status>,
}

#[derive(Deserialize, ToolInput, Debug)]
#[fusion(allow_unknown_fields)]
struct Loose {
    #[fusion(range(max = 10))]
    n: Option<u32>,
}

/// `HashSet` gets `uniqueItems`, which no typed value decides: `jsonschema` checks the field.
#[derive(Deserialize, ToolInput, Debug)]
struct Unchecked {
    ids: HashSet<String>,
}

/// serde defaults: an absent field is filled without being checked, and a `Some` may not have
/// been sent.
#[derive(Deserialize, ToolInput, Debug)]
struct Defaults {
    #[serde(default = "some_name")]
    #[fusion(length(min = 3))]
    name: Option<String>,
    #[serde(default)]
    #[fusion(range(min = 5))]
    n: u32,
    #[serde(default)]
    #[fusion(items(max = 1))]
    tags: Vec<String>,
    flag: Option<bool>,
}

fn some_name() -> Option<String> {
    Some("x".into())
}

fn strings() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        "",
        "a",
        "ab",
        "abcde",
        "abcdef",
        "éé",
        "ééééé",
        "éééééé",
        "漢字漢字漢",
        "free",
        "pro",
        "Pro",
        // email
        "a@b.co",
        "first.last+tag@mail.example.com",
        "a@b",
        "a@localhost",
        "a..b@c.de",
        ".a@c.de",
        "a.@c.de",
        "\"q\"@c.de",
        "\"\"@c.de",
        "a b@c.de",
        "Joe <a@c.de>",
        "a@[127.0.0.1]",
        "a@[IPv6:::1]",
        "a@-c.de",
        "a@c-.de",
        "a@xn--nxasmq6b.com",
        "a@ab--c.de",
        "é@c.de",
        "a@é.de",
        "a@c.de.",
        "a@@c.de",
        "@c.de",
        // url
        "https://example.com/x?y=1#z",
        "http://[::1]:80/",
        "mailto:a@b.co",
        "urn:isbn:0451450523",
        "example.com",
        "/relative",
        "http://exa mple.com",
        // uuid
        "123e4567-e89b-12d3-a456-426614174000",
        "123E4567-E89B-12D3-A456-426614174000",
        "123e4567e89b12d3a456426614174000",
        "123e4567-e89b-12d3-a456-42661417400",
        "g23e4567-e89b-12d3-a456-426614174000",
        // date-time and date
        "2024-02-29T12:00:00Z",
        "2023-02-29T12:00:00Z",
        "2024-01-01T23:59:60Z",
        "2024-01-01t00:00:00.5+05:30",
        "2024-01-01 00:00:00Z",
        "2024-01-01T00:00:00",
        "2024-02-29",
        "2023-02-29",
        "2024-13-01",
        "2024-1-01",
        // ipv4 and ipv6
        "127.0.0.1",
        "255.255.255.255",
        "256.0.0.1",
        "01.2.3.4",
        "1.2.3",
        "::1",
        "::",
        "2001:db8::1",
        "2001:db8::1::2",
        "::ffff:1.2.3.4",
        "fe80::1%eth0",
        // pattern
        "SKU-1",
        "SKU-123",
        "SKU-1234",
        "SKU-١",
        "sku-1",
        // documented enum
        "open",
        "paid",
        "opne",
    ])
    .prop_map(Value::from)
}

fn numbers() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3i64..110).prop_map(Value::from),
        prop::sample::select(vec![
            json!(0),
            json!(1),
            json!(99),
            json!(100),
            json!(127),
            json!(128),
            json!(-128),
            json!(-129),
            json!(2.0),
            json!(2.5),
            json!(-1.5),
            json!(-2.0),
            json!(0.25),
            json!(1e300),
            json!(u64::MAX),
            json!(i64::MIN),
        ]),
        (-3.0f64..3.0).prop_map(Value::from),
        (-6i32..6).prop_map(|h| Value::from(f64::from(h) / 2.0)),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        3 => numbers(),
        6 => strings(),
    ]
}

fn item() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec!["sku", "qty", "note", "extra"]);
    prop_oneof![
        4 => (strings(), numbers(), prop::option::of(scalar())).prop_map(|(s, q, n)| {
            let mut m = Map::new();
            m.insert("sku".into(), s);
            m.insert("qty".into(), q);
            if let Some(n) = n {
                m.insert("note".into(), n);
            }
            Value::Object(m)
        }),
        1 => prop::collection::vec((keys, scalar()), 0..4).prop_map(|pairs| {
            Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
        }),
        1 => scalar(),
    ]
}

fn field() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => scalar(),
        2 => item(),
        2 => prop::collection::vec(item(), 0..4).prop_map(Value::Array),
        2 => prop::collection::vec(scalar(), 0..5).prop_map(Value::Array),
    ]
}

const KEYS: &[&str] = &[
    "name", "email", "url", "uuid", "at", "day", "v4", "v6", "pct", "ratio", "small", "plan",
    "tags", "item", "items", "flag", "nmae", "n", "step", "status",
];

fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        // Any keys, any values.
        1 => prop::collection::vec((prop::sample::select(KEYS.to_vec()), field()), 0..10)
            .prop_map(|pairs| {
                let mut m = Map::new();
                for (k, v) in pairs {
                    m.insert(k.to_owned(), v);
                }
                Value::Object(m)
            }),
        // A valid-shaped base with a few fields replaced: mostly accepted, near misses.
        2 => (prop::collection::vec((prop::sample::select(KEYS.to_vec()), field()), 0..3))
            .prop_map(|pairs| {
                let mut m = match json!({
                    "name": "abc", "email": "a@b.co", "pct": 5, "ratio": 0.5, "plan": "pro",
                    "tags": ["x"], "item": {"sku": "SKU-1", "qty": 2},
                    "items": [{"sku": "SKU-12", "qty": 4, "note": null}],
                }) {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                for (k, v) in pairs {
                    m.insert(k.to_owned(), v);
                }
                Value::Object(m)
            }),
        1 => scalar(),
    ]
}

/// Where serde reads the arguments, the typed path of `T` accepts exactly what the schema
/// accepts (elsewhere it leaves the decision to the full path).
fn assert_typed_sound<T: Derived>(args: &Value) -> Result<(), TestCaseError> {
    let typed = typed_accepts::<T>(args);
    let serde_reads = args.is_object() && T::deserialize(args).is_ok();
    prop_assert_eq!(
        typed.is_some(),
        serde_reads,
        "the typed path decides {}",
        args
    );
    if let Some(typed) = typed {
        prop_assert_eq!(
            typed,
            T::compiled().schema_accepts(args),
            "typed path and schema disagree on {}",
            args
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(2048))]

    #[test]
    fn typed_rules_accept_exactly_what_the_schema_accepts(args in arguments()) {
        let compiled = Everything::compiled();
        assert_typed_sound::<Everything>(&args)?;
        assert_typed_sound::<Defaults>(&args)?;
        assert_typed_sound::<Loose>(&args)?;
        // And `from_arguments` as a whole still follows the schema.
        let accepted = compiled.schema_accepts(&args);
        if Everything::from_arguments(&args).is_ok() {
            prop_assert!(accepted, "passed but the schema rejects {}", args);
        }
    }

    #[test]
    fn every_format_agrees_on_every_string(s in strings()) {
        for key in ["name", "email", "url", "uuid", "at", "day", "v4", "v6", "plan", "status"] {
            let args = json!({"name": "abc", key: s.clone()});
            assert_typed_sound::<Everything>(&args)?;
        }
        assert_typed_sound::<Defaults>(&json!({"name": s.clone()}))?;
        assert_typed_sound::<Item>(&json!({"sku": s, "qty": 2}))?;
    }

    /// The email rule passes a plain address without asking the engine: the engine must
    /// accept every one of them.
    #[test]
    fn plain_emails_are_emails_for_the_engine(
        s in "[a-zA-Z0-9_+.-]{0,12}@[a-zA-Z0-9.-]{0,14}(\\.[a-z]{2,3})?"
    ) {
        if fusion_runtime::validation::rules::format::is_plain_email(&s) {
            prop_assert!(
                Everything::compiled().schema_accepts(&json!({"name": "abc", "email": s})),
                "plain but not an email for the engine: {}",
                s
            );
        }
    }

    #[test]
    fn every_number_agrees_at_every_numeric_field(n in numbers()) {
        for key in ["pct", "ratio", "small", "step"] {
            assert_typed_sound::<Everything>(&json!({"name": "abc", key: n.clone()}))?;
        }
        assert_typed_sound::<Defaults>(&json!({"n": n.clone()}))?;
        assert_typed_sound::<Item>(&json!({"sku": "SKU-1", "qty": n.clone()}))?;
        assert_typed_sound::<Loose>(&json!({"n": n, "other": 1}))?;
    }
}

#[test]
fn known_inputs_take_the_expected_path() {
    let valid = json!({"name": "abc", "email": "a@b.co", "items": [{"sku": "SKU-1", "qty": 2}]});
    assert_eq!(typed_accepts::<Everything>(&valid), Some(true));
    assert!(Everything::from_arguments(&valid).is_ok());
    let unknown = json!({"name": "abc", "nmae": 1});
    assert_eq!(typed_accepts::<Everything>(&unknown), Some(false));
    let report = Everything::from_arguments(&unknown).expect_err("unknown key");
    assert!(report.to_string().contains("nmae"), "{report}");
    // A quoted local part is valid for the schema: the format rule asks the engine.
    let quoted = json!({"name": "abc", "email": "\"q\"@c.de"});
    assert_eq!(typed_accepts::<Everything>(&quoted), Some(true));
    assert_eq!(typed_accepts::<Loose>(&json!({"n": 3, "x": 1})), Some(true));
}

#[test]
fn types_a_typed_value_cannot_decide_ask_the_engine() {
    // `HashSet` dedups what serde reads: the field's sub-schema (`uniqueItems`) decides.
    assert_eq!(
        typed_accepts::<Unchecked>(&json!({"ids": ["a"]})),
        Some(true)
    );
    assert_eq!(
        typed_accepts::<Unchecked>(&json!({"ids": ["a", "a"]})),
        Some(false)
    );
    assert!(Unchecked::from_arguments(&json!({"ids": ["a", "b"]})).is_ok());
    assert!(Unchecked::from_arguments(&json!({"ids": ["a", "a"]})).is_err());
}

#[test]
fn integral_floats_behave_as_before() {
    // JSON Schema calls `1.0` an integer; serde does not take it for an `i64`. Both paths
    // accept it at the schema level and report serde's one issue.
    let compiled = Everything::compiled();
    let args = json!({"name": "abc", "pct": 5.0});
    assert_eq!(typed_accepts::<Everything>(&args), None);
    assert!(compiled.schema_accepts(&args));
    let report = Everything::from_arguments(&args).expect_err("serde rejects 5.0 for i64");
    assert_eq!(report.issues().len(), 1, "{report}");
}

#[test]
fn valid_inputs_take_the_typed_path() {
    let valid = json!({"name": "abc", "email": "a@b.co", "pct": 5, "small": -3, "flag": true,
        "tags": ["x", "y"], "plan": "pro", "items": [{"sku": "SKU-1", "qty": 2}]});
    assert_eq!(typed_accepts::<Everything>(&valid), Some(true));
    assert!(Everything::from_arguments(&valid).is_ok());
    // A quoted local part: the typed check asks the validator about the value sent.
    let quoted = json!({"name": "abc", "email": "\"q\"@c.de"});
    assert_eq!(typed_accepts::<Everything>(&quoted), Some(true));
    // Each of these is rejected by the typed path and by the schema.
    for bad in [
        json!({"name": "abc", "nmae": 1}),
        json!({"name": "abcdef"}),
        json!({"name": "abc", "email": "a.b"}),
        json!({"name": "abc", "pct": 100}),
        json!({"name": "abc", "tags": []}),
        json!({"name": "abc", "plan": "team"}),
        json!({"name": "abc", "items": [{"sku": "SKU-1", "qty": 3}]}),
        json!(["abc"]),
    ] {
        assert_ne!(typed_accepts::<Everything>(&bad), Some(true), "{bad}");
        assert!(Everything::from_arguments(&bad).is_err(), "{bad}");
    }
    // Unknown keys are allowed where the input says so.
    assert_eq!(typed_accepts::<Loose>(&json!({"n": 3, "x": 1})), Some(true));
    assert_eq!(typed_accepts::<Loose>(&json!({"n": 11})), Some(false));
}

#[test]
fn serde_defaults_are_not_taken_for_values_sent() {
    // Absent: filled by the defaults (`Some("x")`, `0`), which the schema never sees.
    assert_eq!(typed_accepts::<Defaults>(&json!({})), Some(true));
    assert!(Defaults::from_arguments(&json!({})).is_ok());
    // Sent: checked.
    for bad in [
        json!({"name": "ab"}),
        json!({"n": 1}),
        json!({"tags": ["a", "b"]}),
        json!({"extra": 1}),
        json!({"flag": null, "extra": 1}),
    ] {
        assert_ne!(typed_accepts::<Defaults>(&bad), Some(true), "{bad}");
        assert!(!Defaults::compiled().schema_accepts(&bad), "{bad}");
    }
    let ok = json!({"name": "abc", "n": 5, "tags": ["a"], "flag": null});
    assert_eq!(typed_accepts::<Defaults>(&ok), Some(true));
}

/// serde reads more than the schema shows: an alias, a catch-all variant, the `{"gold": null}`
/// form. The typed path looks the string sent up among the schema's options, so it still
/// decides as the schema does.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "lowercase")]
enum Tier {
    #[serde(alias = "premium")]
    Gold,
    Silver,
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize, ToolInput, Debug)]
struct Tiered {
    tier: Tier,
    plan: Option<Plan>,
    status: Option<Status>,
}

#[test]
fn enum_fields_follow_the_schema_not_serde() {
    for args in [
        json!({"tier": "gold"}),
        json!({"tier": "premium"}),
        json!({"tier": "bronze"}),
        json!({"tier": "unknown"}),
        json!({"tier": {"gold": null}}),
        json!({"tier": "silver", "plan": null, "status": null}),
        json!({"tier": "silver", "plan": {"pro": null}}),
        json!({"tier": "silver", "status": "paid"}),
        json!({"tier": "silver", "status": {"paid": null}}),
    ] {
        assert!(Tiered::deserialize(&args).is_ok(), "serde reads {args}");
        assert_eq!(
            typed_accepts::<Tiered>(&args),
            Some(Tiered::compiled().schema_accepts(&args)),
            "{args}"
        );
    }
    for rejected in [
        json!({"tier": "premium"}),
        json!({"tier": "bronze"}),
        json!({"tier": {"gold": null}}),
    ] {
        assert_eq!(
            typed_accepts::<Tiered>(&rejected),
            Some(false),
            "{rejected}"
        );
    }
    assert_eq!(
        typed_accepts::<Tiered>(&json!({"tier": "gold", "status": "open"})),
        Some(true)
    );
}

// Each rule's typed check alone, through its public `check`.

#[test]
fn length_counts_characters_not_bytes() {
    use length::check;
    assert_eq!(check(Typed::Str("héé"), Some(3), Some(3)), Check::Pass);
    assert_eq!(check(Typed::Str("ab"), Some(3), None), Check::Fail);
    assert_eq!(check(Typed::Str("abcd"), None, Some(3)), Check::Fail);
    assert_eq!(check(Typed::Str("😀😀"), None, Some(2)), Check::Pass);
    assert_eq!(check(Typed::Int(5), Some(3), None), Check::Pass);
    assert_eq!(check(Typed::Opaque, Some(3), None), Check::Engine);
}

#[test]
fn items_counts_items_of_arrays_only() {
    use items::check;
    assert_eq!(check(Typed::Strs(0), Some(1), None), Check::Fail);
    assert_eq!(check(Typed::Strs(3), Some(1), Some(3)), Check::Pass);
    assert_eq!(check(Typed::Strs(4), None, Some(3)), Check::Fail);
    assert_eq!(check(Typed::Str("abc"), Some(5), None), Check::Pass);
}

#[test]
fn multiple_of_integer_divisors_decide_and_fractions_ask_the_engine() {
    use multiple_of::check;
    assert_eq!(check(Typed::Int(15), Num::Int(5)), Check::Pass);
    assert_eq!(check(Typed::Int(-12), Num::Int(5)), Check::Fail);
    assert_eq!(check(Typed::Int(3), Num::Float(1.5)), Check::Engine);
    assert_eq!(check(Typed::Str("x"), Num::Int(5)), Check::Pass);
}

#[test]
fn range_integers_against_integer_and_float_bounds() {
    use range::check;
    let r = |x, min, max| check(Typed::Int(x), min, max, None, None);
    assert_eq!(r(1, Some(Num::Int(1)), Some(Num::Int(100))), Check::Pass);
    assert_eq!(r(0, Some(Num::Int(1)), None), Check::Fail);
    assert_eq!(r(1, Some(Num::Float(0.5)), None), Check::Pass);
    assert_eq!(r(0, Some(Num::Float(0.5)), None), Check::Fail);
    assert_eq!(r(2, None, Some(Num::Float(2.5))), Check::Pass);
    assert_eq!(r(3, None, Some(Num::Float(2.5))), Check::Fail);
    let ex = |x, lo, hi| check(Typed::Int(x), None, None, lo, hi);
    assert_eq!(ex(0, Some(Num::Int(0)), None), Check::Fail);
    assert_eq!(ex(1, Some(Num::Float(0.0)), None), Check::Pass);
    assert_eq!(ex(5, None, Some(Num::Float(5.0))), Check::Fail);
    assert_eq!(ex(4, None, Some(Num::Float(4.5))), Check::Pass);
    assert_eq!(
        check(Typed::Str("x"), Some(Num::Int(1)), None, None, None),
        Check::Pass
    );
}

#[test]
fn plain_emails_are_the_common_shape_only() {
    use format::is_plain_email;
    for ok in [
        "ada.lovelace@example.com",
        "a_b+c-d@mail.ex-ample.co",
        "x@a.io",
        // An odd length: the last byte is read alone, after the pairs.
        "xy@a.io",
    ] {
        assert!(is_plain_email(ok), "{ok}");
    }
    for not in [
        "a@b",
        "a..b@c.de",
        ".a@c.de",
        "a.@c.de",
        "a@ab--c.de",
        "a@-c.de",
        "a@c-.de",
        "a@c.d",
        "a@1.23",
        "\"q\"@c.de",
        "a@c..de",
        "a@c.de.",
        "@c.de",
        "a b@c.de",
        "a@b@c.de",
    ] {
        assert!(!is_plain_email(not), "{not}");
    }
    // Past 64 bytes the lengths decide too.
    let (a64, a65, l63) = ("a".repeat(64), "a".repeat(65), "b".repeat(63));
    assert!(is_plain_email(&format!("{a64}@{l63}.{l63}.{l63}.io")));
    assert!(!is_plain_email(&format!("{a65}@example.com")));
    assert!(!is_plain_email(&format!("x@{l63}b.com")));
    assert!(!is_plain_email(&format!("x@{l63}.{l63}.{l63}.{l63}.io")));
}

#[test]
fn the_shapes_schemars_writes_for_an_enum_are_choices() {
    use enum_const::options;
    let root = json!({"$defs": {
        "Plan": {"type": "string", "enum": ["free", "pro"], "description": "A plan."},
        "Status": {"oneOf": [
            {"type": "string", "const": "open", "description": "Open."},
            {"const": "paid"}
        ]},
        "Alias": {"$ref": "#/$defs/Plan"},
    }});
    let plan = options(&root, &json!({"enum": ["free", "pro"]}));
    assert!(plan.is_some());
    assert_eq!(
        options(&root, &json!({"$ref": "#/$defs/Plan", "description": "d"})),
        plan
    );
    assert_eq!(options(&root, &json!({"$ref": "#/$defs/Alias"})), plan);
    assert_eq!(
        options(
            &root,
            &json!({"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Status"}]})
        ),
        options(
            &root,
            &json!({"anyOf": [{"enum": ["open", "paid"]}, {"type": "null"}]})
        )
    );
}

#[test]
fn any_other_enum_shape_is_left_to_the_engine() {
    let root = json!({"$defs": {
        "Plan": {"type": "string", "enum": ["free", "pro"]},
        "Num": {"enum": [1, 2]},
        "Twice": {"oneOf": [{"const": "a"}, {"const": "a"}]},
        "Mixed": {"oneOf": [{"const": "a"}, {"type": "integer"}]},
    }});
    for schema in [
        json!({"$ref": "#/$defs/Plan", "minLength": 4}),
        json!({"$ref": "#/$defs/Num"}),
        json!({"$ref": "#/$defs/Twice"}),
        json!({"$ref": "#/$defs/Mixed"}),
        json!({"$ref": "#/$defs/Nowhere"}),
        json!({"type": "integer", "enum": ["a"]}),
        json!({"type": "string", "enum": ["a"], "pattern": "b"}),
        json!({"anyOf": [{"type": "null"}, {"type": "null"}]}),
        json!({"anyOf": [{"$ref": "#/$defs/Plan"}, {"type": "null"}], "maxLength": 1}),
        json!({"type": "string"}),
    ] {
        assert_eq!(enum_const::options(&root, &schema), None, "{schema}");
    }
}

#[test]
fn the_enum_check_looks_the_value_sent_up() {
    use enum_const::{check, options};
    let root = json!({"type": "string", "enum": ["free", "pro"]});
    let plain = options(&root, &root).expect("a choice");
    assert_eq!(check(&json!("pro"), &plain), Check::Pass);
    for bad in [json!("Pro"), json!(null), json!({"pro": null}), json!(1)] {
        assert_eq!(check(&bad, &plain), Check::Fail, "{bad}");
    }
    let optional = options(&root, &json!({"anyOf": [root.clone(), {"type": "null"}]}))
        .expect("a choice or null");
    assert_eq!(check(&json!(null), &optional), Check::Pass);
}
