//! `pattern` is one dialect: ECMA-262, as `jsonschema` reads it at run time. What the macro
//! lets compile (look-ahead, back-references) validates as that engine decides.

use fusion_runtime::ToolInput;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, ToolInput, Debug)]
struct Secret {
    /// Must hold a digit.
    #[fusion(pattern = "^(?=.*[0-9]).+$")]
    password: String,
}

#[derive(Deserialize, ToolInput, Debug)]
struct Pair {
    #[fusion(pattern = "^(\\w)\\1$")]
    twice: String,
}

#[test]
fn look_ahead_accepts_and_rejects_as_the_validator_does() {
    let ok = Secret::from_arguments(&json!({"password": "a1"})).expect("a1 holds a digit");
    assert_eq!(ok.password, "a1");
    let report = Secret::from_arguments(&json!({"password": "ab"})).expect_err("no digit");
    let rendered = report.render("vault.open");
    assert!(
        rendered.contains(
            "<field name=\"password\">Invalid format. You sent: 'ab'. Expected a string matching ^(?=.*[0-9]).+$.</field>"
        ),
        "{rendered}"
    );
    assert_eq!(report.issues().len(), 1, "{rendered}");
}

#[test]
fn back_references_validate() {
    assert!(Pair::from_arguments(&json!({"twice": "aa"})).is_ok());
    let report = Pair::from_arguments(&json!({"twice": "ab"})).expect_err("two different");
    assert!(
        report
            .render("t.a")
            .contains("Expected a string matching ^(\\w)\\1$."),
        "{}",
        report.render("t.a")
    );
}

#[test]
fn the_schema_shows_the_pattern_as_written() {
    let schema = Secret::input_schema();
    assert_eq!(
        schema["properties"]["password"]["pattern"],
        json!("^(?=.*[0-9]).+$")
    );
}
