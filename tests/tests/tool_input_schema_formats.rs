//! Input schemas carry only JSON Schema formats: the `format`s `schemars` writes for Rust number
//! types (`uint32`, `int64`, `double`, …) are stripped — strict validators (ajv in the
//! TypeScript SDK, some LLM providers) reject unknown formats — while the range of each integer
//! type stays, in `minimum` / `maximum`, wherever the integer sits.

use std::collections::BTreeMap;

use fusion_runtime::__private::{Derived, typed_accepts};
use fusion_runtime::ToolInput;
use fusion_runtime::validation::spec::{annotated_root_schema, clean_doc};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The formats of JSON Schema draft 2020-12 (§7.3 of the validation vocabulary).
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Every `format` value at a schema position (not inside `enum`, `const`, `default` or
/// `examples` instances), with the JSON pointer of its schema.
fn formats(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(obj) => {
            if let Some(Value::String(f)) = obj.get("format") {
                out.push((at.to_owned(), f.clone()));
            }
            for (k, v) in obj {
                match k.as_str() {
                    "enum" | "const" | "default" | "examples" => {}
                    "properties" | "$defs" | "patternProperties" => {
                        if let Value::Object(children) = v {
                            for (name, c) in children {
                                formats(c, &format!("{at}/{k}/{name}"), out);
                            }
                        }
                    }
                    _ => formats(v, &format!("{at}/{k}"), out),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                formats(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn non_standard(schema: &Value) -> Vec<(String, String)> {
    let mut all = Vec::new();
    formats(schema, "", &mut all);
    all.retain(|(_, f)| !STANDARD_FORMATS.contains(&f.as_str()));
    all
}

#[test]
fn billing_input_schemas_carry_only_standard_formats() {
    let server = examples::billing::server().expect("the billing example builds");
    let tools = server.tools();
    assert!(!tools.is_empty());
    let mut seen = Vec::new();
    for tool in &tools {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(
            non_standard(&schema),
            Vec::<(String, String)>::new(),
            "tool `{}` shows non-standard formats",
            tool.name
        );
        formats(&schema, "", &mut seen);
    }
    // The walk reaches formats: the real one of `send_reminder.email` is kept.
    assert!(
        seen.iter()
            .any(|(at, f)| at == "/properties/email" && f == "email"),
        "{seen:?}"
    );
    // The integer types' ranges stay, in standard keywords.
    let reminder = tools
        .iter()
        .find(|t| t.name.ends_with("send_reminder"))
        .expect("send_reminder is listed");
    assert_eq!(
        reminder.input_schema["properties"]["days_overdue"],
        json!({"description": "Days since the due date.", "type": "integer", "minimum": 1, "maximum": u32::MAX})
    );
}

/// A plain `JsonSchema` type: its schema comes from `schemars` alone, into `$defs`.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Window {
    start: u64,
    weight: f32,
}

#[derive(Deserialize, ToolInput)]
#[allow(dead_code)]
struct Numbers {
    small: i16,
    ratio: Option<f64>,
    codes: Vec<u8>,
    counts: BTreeMap<String, u16>,
    window: Option<Window>,
}

#[test]
fn rust_number_formats_are_stripped_at_every_depth_and_ranges_kept() {
    let schema = Value::Object(Numbers::input_schema().as_ref().clone());
    assert_eq!(non_standard(&schema), Vec::<(String, String)>::new());
    let mut all = Vec::new();
    formats(&schema, "", &mut all);
    assert_eq!(all, Vec::<(String, String)>::new(), "{schema:#}");

    let props = &schema["properties"];
    assert_eq!(
        (&props["small"]["minimum"], &props["small"]["maximum"]),
        (&json!(i16::MIN), &json!(i16::MAX))
    );
    assert_eq!(
        props["codes"]["items"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(
        props["counts"]["additionalProperties"],
        json!({"type": "integer", "minimum": 0, "maximum": u16::MAX})
    );
    assert_eq!(
        schema["$defs"]["Window"]["properties"]["start"],
        json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
    );
}

#[test]
fn validator_and_typed_path_read_the_stripped_schema_alike() {
    let compiled = Numbers::compiled();
    // The validator compiles the same keywords agents see (without the `x-fusion-*` annotations).
    assert_eq!(
        non_standard(&Value::Object(compiled.schema().as_ref().clone())),
        Vec::<(String, String)>::new()
    );
    let ok = json!({"small": -3, "codes": [0, 255], "counts": {"a": 65535}, "window": {"start": 1, "weight": 0.5}});
    let too_big_item = json!({"small": 1, "codes": [256], "counts": {}});
    let too_big_value = json!({"small": 1, "codes": [], "counts": {"a": 65536}});
    let too_small = json!({"small": -40000, "codes": [], "counts": {}});
    let unknown_key = json!({"small": 1, "codes": [], "counts": {}, "extra": 1});
    // The typed path answers `Some(true)` when serde reads the arguments and every rule holds,
    // `Some(false)` when serde reads them and a rule fails (a key no field has); a number out
    // of its Rust type's range is one serde cannot read (`None`), which leaves the decision to
    // the validator, so the range must be in the schema it compiles.
    for (args, accepted, typed) in [
        (&ok, true, Some(true)),
        (&too_big_item, false, None),
        (&too_big_value, false, None),
        (&too_small, false, None),
        (&unknown_key, false, Some(false)),
    ] {
        assert_eq!(compiled.schema_accepts(args), accepted, "{args}");
        assert_eq!(
            typed_accepts::<Numbers>(args),
            typed,
            "typed path on {args}"
        );
    }
    // A byte out of range is a schema issue at its path, not a serde message.
    let report = Numbers::from_arguments(&too_big_item)
        .err()
        .expect("256 is not a u8");
    let rendered = report.render("t");
    assert!(
        rendered.contains(
            "<field name=\"codes.0\">Too large. You sent: 256. Expected a number &lt;= 255.</field>"
        ),
        "{rendered}"
    );
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Bounded {
    optional: Option<u32>,
    #[schemars(range(min = -5, max = 10))]
    looser_min: u8,
    #[schemars(range(min = 2.5))]
    fractional_min: i32,
}

#[test]
fn each_integer_gets_its_type_range_unless_the_bound_is_tighter() {
    let schema = annotated_root_schema::<Bounded>();
    let bounds = |field: &str| {
        let s = &schema["properties"][field];
        (s["minimum"].clone(), s["maximum"].clone())
    };
    assert_eq!(bounds("optional"), (json!(0), json!(u32::MAX)));
    assert_eq!(bounds("looser_min"), (json!(0), json!(10)));
    assert_eq!(bounds("fractional_min"), (json!(2.5), json!(i32::MAX)));
}

#[test]
fn a_doc_comment_loses_one_leading_space_and_its_blank_edges() {
    assert_eq!(
        clean_doc("\n The id.\n  indented\n\n").as_deref(),
        Some("The id.\n indented")
    );
    assert_eq!(clean_doc("  \n"), None);
}
