//! A container `#[serde(rename = "..")]` names a derived input's schema (`schema_name()`): its
//! `$defs` key, its `$ref`s and a root schema's `title`. `rename_all` renames fields only.

use fusion_runtime::__private::{Derived, typed_accepts};
use fusion_runtime::ToolInput;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A postal address.
#[derive(Deserialize, ToolInput, Debug, PartialEq)]
#[serde(rename = "address", rename_all = "camelCase")]
struct Address {
    street_name: String,
}

/// Only the deserialize side of a split rename names the schema: it describes what is read.
#[derive(Deserialize, ToolInput, Debug, PartialEq)]
#[serde(rename(serialize = "out_coords", deserialize = "coords"))]
struct Coords {
    lat: f64,
}

/// `rename_all` leaves the type's name alone.
#[derive(Deserialize, ToolInput, Debug, PartialEq)]
#[serde(rename_all = "UPPERCASE")]
struct Shouting {
    word: String,
}

/// A second type renamed to the same name elsewhere must not replace the first one's schema.
mod other {
    #[derive(serde::Deserialize, fusion_runtime::ToolInput, Debug, PartialEq)]
    #[serde(rename = "address")]
    pub struct Address {
        pub zip: String,
    }
}

#[derive(Deserialize, ToolInput, Debug, PartialEq)]
struct Order {
    ship_to: Address,
    bill_to: Option<other::Address>,
    at: Option<Coords>,
    note: Option<Shouting>,
}

#[test]
fn container_rename_names_the_schema() {
    assert_eq!(<Address as JsonSchema>::schema_name(), "address");
    assert_eq!(<Coords as JsonSchema>::schema_name(), "coords");
    assert_eq!(<Shouting as JsonSchema>::schema_name(), "Shouting");
    assert_eq!(Address::input_schema()["title"], "address");
    assert_eq!(
        Address::input_schema()["properties"]["streetName"]["type"],
        "string"
    );
}

#[test]
fn nested_renamed_inputs_are_defined_and_referenced_by_their_rename() {
    let schema = Value::Object(Order::input_schema().as_ref().clone());
    let defs = schema["$defs"].as_object().expect("$defs");
    let mut names: Vec<&str> = defs.keys().map(String::as_str).collect();
    names.sort_unstable();
    // Two types renamed `address`: schemars keeps both, the second under a suffixed name.
    assert_eq!(names, ["Shouting", "address", "address2", "coords"]);
    assert_eq!(
        schema["properties"]["ship_to"],
        json!({"$ref": "#/$defs/address"})
    );
    assert_eq!(
        defs["address"]["properties"],
        json!({"streetName": {"type": "string"}})
    );
    assert_eq!(
        schema["properties"]["bill_to"]["anyOf"][0],
        json!({"$ref": "#/$defs/address2"})
    );
    assert_eq!(
        defs["address2"]["properties"],
        json!({"zip": {"type": "string"}})
    );
    assert_eq!(defs["address"]["description"], "A postal address.");
}

#[test]
fn renamed_inputs_validate_and_deserialize_as_the_schema_says() {
    let good = json!({"ship_to": {"streetName": "Main St 1"}, "bill_to": {"zip": "1000"}, "at": {"lat": 1.5}});
    let compiled = Order::compiled();
    assert!(compiled.schema_accepts(&good));
    assert_eq!(typed_accepts::<Order>(&good), Some(true));
    let order = Order::from_arguments(&good).expect("valid");
    assert_eq!(order.ship_to.street_name, "Main St 1");
    assert_eq!(order.bill_to.map(|a| a.zip).as_deref(), Some("1000"));

    // The nested schema behind the renamed `$ref` is the one checked, at the nested path.
    let bad = json!({"ship_to": {"street_name": "Main St 1"}, "bill_to": {"zip": 1000}});
    assert!(!compiled.schema_accepts(&bad));
    assert_ne!(typed_accepts::<Order>(&bad), Some(true));
    let rendered = Order::from_arguments(&bad)
        .expect_err("invalid")
        .render("t");
    assert!(
        rendered.contains(
            "<field name=\"ship_to\">Unrecognized key 'street_name' (did you mean 'streetName'?)"
        ),
        "{rendered}"
    );
    assert!(
        rendered.contains("<field name=\"ship_to.streetName\">Required field is missing."),
        "{rendered}"
    );
    assert!(
        rendered.contains(
            "<field name=\"bill_to.zip\">Invalid type. You sent: 1000. Expected a string.</field>"
        ),
        "{rendered}"
    );
}

#[derive(Deserialize, ToolInput, Debug)]
struct AnnotationLike {
    #[serde(rename = "x-fusion-a")]
    #[fusion(expected = "e")]
    a: String,
}

/// The `x-fusion-*` annotations leave the schema agents see; a field named like one stays.
#[test]
fn a_field_named_like_an_annotation_is_kept() {
    let schema = AnnotationLike::input_schema();
    assert_eq!(
        schema["properties"],
        json!({"x-fusion-a": {"type": "string"}})
    );
    assert_eq!(schema["required"], json!(["x-fusion-a"]));
    assert!(!schema.contains_key("x-fusion-keys"));
}
