//! An object's line names what the object needs (issue 59): a wrong type where an object
//! belongs, a missing required object and too few items of objects say which keys the object
//! takes and each key's rule — in the words the key's own lines use — required keys first,
//! then the optional ones marked; bounded in keys, depth and bytes, past which the line says
//! how many keys are left and where the tool's `inputSchema` lists them.

use fusion_runtime::ToolInput;
use fusion_runtime::validation::{MAX_OBJECT_BYTES, MAX_OBJECT_DEPTH, MAX_OBJECT_KEYS};
use serde::Deserialize;
use serde_json::{Value, json};

/// A customer.
#[derive(Debug, Deserialize, ToolInput)]
struct Customer {
    /// The customer's ID, e.g. `cus_0001`.
    #[fusion(pattern = "^cus_[0-9]{4}$")]
    id: String,
    /// Where the receipt goes.
    #[fusion(email)]
    email: String,
    /// A note for the courier.
    #[fusion(length(max = 80))]
    note: Option<String>,
}

/// One line of an order.
#[derive(Debug, Deserialize, ToolInput)]
struct LineItem {
    /// The product, e.g. `ABC-0001`.
    #[fusion(pattern = "^[A-Z]{3}-[0-9]{4}$")]
    sku: String,
    /// How many.
    #[fusion(range(min = 1, max = 99))]
    quantity: u32,
    /// The price of one, in cents.
    #[fusion(range(min = 1))]
    unit_price_cents: u64,
}

/// A gift note.
#[derive(Debug, Deserialize, ToolInput)]
struct Gift {
    /// The message on the card.
    #[fusion(length(min = 1, max = 200))]
    message: String,
    /// Whether to wrap it.
    wrap: Option<bool>,
}

/// An order.
#[derive(Debug, Deserialize, ToolInput)]
struct PlaceOrder {
    /// Who orders.
    customer: Customer,
    /// What.
    #[fusion(items(min = 2, max = 20))]
    items: Vec<LineItem>,
    /// A gift note, if any.
    gift: Option<Gift>,
}

fn valid() -> Value {
    json!({
        "customer": {"id": "cus_0001", "email": "ada@example.com"},
        "items": [
            {"sku": "ABC-0001", "quantity": 1, "unit_price_cents": 100},
            {"sku": "ABC-0002", "quantity": 2, "unit_price_cents": 250}
        ]
    })
}

/// `valid()` with `key` set to `value` (`None`: removed).
fn with(key: &str, value: Option<Value>) -> Value {
    let mut args = valid();
    match value {
        Some(v) => args[key] = v,
        None => {
            args.as_object_mut().map(|o| o.remove(key));
        }
    }
    args
}

/// The `<field>` lines `args` produce, unescaped.
fn lines<T: ToolInput>(args: &Value) -> Vec<String> {
    let report = T::from_arguments(args)
        .err()
        .unwrap_or_else(|| panic!("{args} was accepted"));
    report
        .issues()
        .iter()
        .map(|i| format!("{}: {}", i.field_name(), i.line()))
        .collect()
}

fn one_line<T: ToolInput>(args: &Value) -> String {
    let all = lines::<T>(args);
    assert_eq!(all.len(), 1, "{all:#?}");
    all[0].clone()
}

const CUSTOMER: &str = "an object with: id (a string matching ^cus_[0-9]{4}$), email (a valid email address), note (optional, a string of at most 80 characters or null)";
const LINE_ITEM: &str = "an object with: sku (a string matching ^[A-Z]{3}-[0-9]{4}$), quantity (an integer >= 1 and <= 99), unit_price_cents (an integer >= 1)";

#[test]
fn an_object_sent_as_another_type() {
    insta::assert_snapshot!(one_line::<PlaceOrder>(&with("customer", Some(json!(7)))));
    // Every wrong type, `null` included, says the same: the object and its keys.
    for wrong in [
        json!("cus_0001"),
        json!(7),
        json!(true),
        json!([]),
        json!(null),
    ] {
        let line = one_line::<PlaceOrder>(&with("customer", Some(wrong.clone())));
        assert!(
            line.starts_with("customer: Invalid type. You sent: ")
                && line.ends_with(&format!("Expected {CUSTOMER}.")),
            "{wrong}: {line}"
        );
    }
}

#[test]
fn a_missing_object() {
    insta::assert_snapshot!(one_line::<PlaceOrder>(&with("customer", None)));
}

#[test]
fn too_few_items_of_objects() {
    insta::assert_snapshot!(one_line::<PlaceOrder>(&with("items", Some(json!([])))));
    let one = json!([{"sku": "ABC-0001", "quantity": 1, "unit_price_cents": 100}]);
    assert_eq!(
        one_line::<PlaceOrder>(&with("items", Some(one))),
        format!(
            "items: Too few items. You sent: array(1). Expected at least 2 items, each {LINE_ITEM}."
        )
    );
}

#[test]
fn an_item_of_another_type() {
    let items = json!(["XYZ-0042", {"sku": "ABC-0001", "quantity": 1, "unit_price_cents": 100}]);
    insta::assert_snapshot!(one_line::<PlaceOrder>(&with("items", Some(items))));
    let items = json!([null, 3]);
    assert_eq!(
        lines::<PlaceOrder>(&with("items", Some(items))),
        [
            format!("items.0: Invalid type. You sent: null. Expected {LINE_ITEM}."),
            format!("items.1: Invalid type. You sent: 3. Expected {LINE_ITEM}."),
        ]
    );
}

#[test]
fn an_optional_object_of_another_type() {
    insta::assert_snapshot!(one_line::<PlaceOrder>(&with("gift", Some(json!("a card")))));
}

#[test]
fn an_array_of_objects_sent_as_another_type_says_what_each_item_takes() {
    assert_eq!(
        one_line::<PlaceOrder>(&with("items", Some(json!("ABC-0001")))),
        format!(
            "items: Invalid type. You sent: 'ABC-0001'. Expected an array of 2 to 20 items, each {LINE_ITEM}."
        )
    );
}

#[test]
fn the_arguments_object_itself_stays_an_object() {
    // The tool's whole `inputSchema`, which `tools/list` shows: not repeated in a line.
    assert_eq!(
        one_line::<PlaceOrder>(&json!([1])),
        "(root): Invalid type. You sent: array(1). Expected an object."
    );
}

#[test]
fn the_objects_inner_lines_are_unchanged() {
    let args = with(
        "customer",
        Some(json!({"id": "CUS-1", "email": "ada@example.com"})),
    );
    assert_eq!(
        one_line::<PlaceOrder>(&args),
        "customer.id: Invalid format. You sent: 'CUS-1'. Expected a string matching ^cus_[0-9]{4}$."
    );
}

// Bounds.

/// A point.
#[derive(Debug, Deserialize, ToolInput)]
struct Point {
    /// Across.
    x: i32,
    /// Down.
    y: i32,
}

/// A place.
#[derive(Debug, Deserialize, ToolInput)]
struct Place {
    /// Its name.
    name: String,
    /// Where it is.
    at: Point,
}

/// A region.
#[derive(Debug, Deserialize, ToolInput)]
struct Region {
    /// Its capital.
    capital: Place,
}

/// A country.
#[derive(Debug, Deserialize, ToolInput)]
struct Country {
    /// Its largest region.
    region: Region,
}

/// A map.
#[derive(Debug, Deserialize, ToolInput)]
struct Atlas {
    /// A country.
    country: Country,
}

#[test]
fn objects_past_the_depth_are_named_by_where_the_schema_lists_them() {
    assert_eq!(MAX_OBJECT_DEPTH, 3);
    let line = one_line::<Atlas>(&json!({"country": 1}));
    insta::assert_snapshot!(line);
    // The location is the tool's own: it holds the keys the line does not write out.
    let pointer = line
        .split("listed at #")
        .nth(1)
        .and_then(|rest| rest.split(" in the tool's").next())
        .unwrap_or_else(|| panic!("no location in {line}"));
    let schema = Value::Object(Atlas::input_schema().as_ref().clone());
    let keys = schema
        .pointer(pointer)
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("{pointer} is not in {schema}"));
    assert_eq!(keys.keys().collect::<Vec<_>>(), ["x", "y"]);
}

/// Twenty flags.
#[derive(Debug, Deserialize, ToolInput)]
struct Flags {
    /// Flag.
    f01: bool,
    /// Flag.
    f02: bool,
    /// Flag.
    f03: bool,
    /// Flag.
    f04: bool,
    /// Flag.
    f05: bool,
    /// Flag.
    f06: bool,
    /// Flag.
    f07: bool,
    /// Flag.
    f08: bool,
    /// Flag.
    f09: bool,
    /// Flag.
    f10: bool,
    /// Flag.
    f11: bool,
    /// Flag.
    f12: bool,
    /// Flag.
    f13: bool,
    /// Flag.
    f14: Option<bool>,
    /// Flag.
    f15: Option<bool>,
}

/// Settings.
#[derive(Debug, Deserialize, ToolInput)]
struct Settings {
    /// The flags.
    flags: Flags,
}

#[test]
fn keys_past_the_count_are_counted() {
    assert_eq!(MAX_OBJECT_KEYS, 12);
    let line = one_line::<Settings>(&json!({"flags": "all"}));
    insta::assert_snapshot!(line);
}

/// A pattern so long that a few keys fill the line's bytes.
#[derive(Debug, Deserialize, ToolInput)]
struct Long {
    /// A.
    #[fusion(
        pattern = "^(alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliet|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango)$"
    )]
    a: String,
    /// B.
    #[fusion(
        pattern = "^(alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliet|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango)$"
    )]
    b: String,
    /// C.
    #[fusion(
        pattern = "^(alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliet|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango)$"
    )]
    c: String,
    /// D.
    #[fusion(
        pattern = "^(alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliet|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango)$"
    )]
    d: String,
    /// E.
    #[fusion(
        pattern = "^(alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliet|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango)$"
    )]
    e: String,
}

/// Holds a long one.
#[derive(Debug, Deserialize, ToolInput)]
struct HoldsLong {
    /// It.
    long: Long,
}

#[test]
fn keys_past_the_bytes_are_counted() {
    let line = one_line::<HoldsLong>(&json!({"long": 1}));
    let words = line
        .split_once("Expected ")
        .map(|(_, w)| w)
        .unwrap_or_default();
    assert!(words.len() <= MAX_OBJECT_BYTES + 100, "{}", words.len());
    assert!(
        words.contains(
            "), and 2 more keys, listed at #/$defs/Long/properties in the tool's inputSchema"
        ),
        "{line}"
    );
}

/// A tree: its own type inside.
#[derive(Debug, Deserialize, ToolInput)]
struct Node {
    /// Its label.
    label: String,
    /// Its children.
    children: Vec<Node>,
}

/// Holds a tree.
#[derive(Debug, Deserialize, ToolInput)]
struct HoldsTree {
    /// The root.
    tree: Node,
}

#[test]
fn a_recursive_object_is_written_to_the_depth_and_no_further() {
    let line = one_line::<HoldsTree>(&json!({"tree": []}));
    insta::assert_snapshot!(line);
}
