//! A wrong type names the whole expectation of its field: the type and every rule the value
//! must also meet, in the words the field's other lines use, so that one round repairs it.

use fusion_runtime::ToolInput;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "snake_case")]
enum Plan {
    Free,
    Pro,
    Team,
}

#[derive(Deserialize, ToolInput, Debug)]
struct Account {
    /// The account's ID.
    #[fusion(pattern = "^acc_[a-z0-9]{6,12}$")]
    id: Option<String>,
    /// Where to write.
    #[fusion(email)]
    email: Option<String>,
    /// How many seats.
    #[fusion(range(min = 1, max = 100))]
    seats: Option<i64>,
    /// The plan.
    plan: Option<Plan>,
    /// A name, bounded.
    #[fusion(length(min = 3, max = 8))]
    handle: Option<String>,
    /// No rule beyond its type.
    note: Option<String>,
    /// Required, bounded.
    #[fusion(range(min = 1, max = 12))]
    months: u8,
    /// Written by the author.
    #[fusion(
        pattern = "^[A-Z]{3}$",
        expected = "a three-letter currency code like EUR"
    )]
    currency: Option<String>,
}

/// The `<field>` lines `args` produce, in order.
fn lines(args: Value) -> Vec<String> {
    let report = Account::from_arguments(&args).expect_err("arguments are invalid");
    report
        .render("accounts.update")
        .lines()
        .filter(|l| l.trim_start().starts_with("<field"))
        .map(|l| l.trim().to_owned())
        .collect()
}

fn line(field: &str, sent: Value) -> String {
    let mut args = json!({"months": 6});
    args[field] = sent;
    let found = lines(args);
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

#[test]
fn a_wrong_type_names_every_rule_of_its_field() {
    let cases = [
        (
            "id",
            json!(7),
            r#"<field name="id">Invalid type. You sent: 7. Expected a string matching ^acc_[a-z0-9]{6,12}$.</field>"#,
        ),
        (
            "email",
            json!(false),
            r#"<field name="email">Invalid type. You sent: false. Expected a valid email address.</field>"#,
        ),
        (
            "seats",
            json!("lots"),
            r#"<field name="seats">Invalid type. You sent: 'lots'. Expected an integer >= 1 and &lt;= 100 or null.</field>"#,
        ),
        (
            "handle",
            json!(["abc"]),
            r#"<field name="handle">Invalid type. You sent: array(1). Expected a string of 3 to 8 characters or null.</field>"#,
        ),
        (
            "note",
            json!(5),
            r#"<field name="note">Invalid type. You sent: 5. Expected a string or null.</field>"#,
        ),
        (
            "months",
            json!("six"),
            r#"<field name="months">Invalid type. You sent: 'six'. Expected an integer >= 1 and &lt;= 12.</field>"#,
        ),
        (
            "currency",
            json!(1),
            r#"<field name="currency">Invalid type. You sent: 1. Expected a three-letter currency code like EUR.</field>"#,
        ),
    ];
    for (field, sent, expected) in cases {
        assert_eq!(line(field, sent.clone()), expected, "{field}: {sent}");
    }
}

#[test]
fn a_wrong_type_to_an_optional_enum_names_its_options() {
    let found = lines(json!({"plan": 3, "months": 6}));
    assert_eq!(
        found.first().map(String::as_str),
        Some(
            r#"<field name="plan">Invalid type. You sent: 3. Expected one of: 'free', 'pro', 'team' or null.</field>"#
        ),
        "{found:?}"
    );
}

#[test]
fn several_wrong_types_each_name_their_rules() {
    let found = lines(json!({"id": 7, "email": false, "seats": "lots", "months": 6}));
    assert_eq!(
        found,
        [
            r#"<field name="id">Invalid type. You sent: 7. Expected a string matching ^acc_[a-z0-9]{6,12}$.</field>"#,
            r#"<field name="email">Invalid type. You sent: false. Expected a valid email address.</field>"#,
            r#"<field name="seats">Invalid type. You sent: 'lots'. Expected an integer >= 1 and &lt;= 100 or null.</field>"#,
        ]
    );
}
