//! One snapshot per issue kind: the exact `<field>` line a derived input produces.

use examples::billing::ListInvoices;
use fusion_runtime::{IssueKind, ToolInput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "snake_case")]
enum Channel {
    Email,
    Sms,
    Push,
}

#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "snake_case")]
enum Version {
    V2,
}

#[derive(Deserialize, JsonSchema, Debug)]
#[serde(untagged)]
enum IdOrName {
    Id(u32),
    Name(String),
}

fn not_reserved(name: &String) -> Result<(), String> {
    if name == "admin" {
        Err("This name is reserved".into())
    } else {
        Ok(())
    }
}

#[derive(Deserialize, ToolInput, Debug)]
struct Everything {
    name: Option<String>,
    #[fusion(length(min = 3, max = 8))]
    code: Option<String>,
    #[fusion(range(min = 1, max = 10))]
    count: Option<i64>,
    #[fusion(range(exclusive_min = 0, exclusive_max = 1.5))]
    ratio: Option<f64>,
    #[fusion(items(min = 1, max = 2))]
    tags: Option<Vec<String>>,
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
    ip4: Option<String>,
    #[fusion(ipv6)]
    ip6: Option<String>,
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    invoice_id: Option<String>,
    #[fusion(
        pattern = "^[A-Z]{3}$",
        expected = "a three-letter currency code like EUR"
    )]
    currency: Option<String>,
    #[fusion(multiple_of = 5)]
    step: Option<u32>,
    channel: Option<Channel>,
    version: Option<Version>,
    target: Option<IdOrName>,
    #[fusion(validate = not_reserved)]
    login: Option<String>,
    small: Option<u8>,
}

#[derive(Deserialize, ToolInput, Debug)]
struct NeedsEmail {
    #[fusion(email)]
    email: String,
}

/// The single `<field>` line `args` produce.
fn field_line<T: ToolInput + std::fmt::Debug>(args: Value) -> String {
    let report = T::from_arguments(&args).expect_err("arguments are invalid");
    assert_eq!(report.issues().len(), 1, "{report}");
    let rendered = report.render("test.kinds");
    rendered
        .lines()
        .find(|l| l.trim_start().starts_with("<field"))
        .map(|l| l.trim().to_owned())
        .expect("a field line")
}

fn line(args: Value) -> String {
    field_line::<Everything>(args)
}

fn kind(args: Value) -> &'static str {
    Everything::from_arguments(&args)
        .expect_err("invalid")
        .issues()[0]
        .kind
        .code()
}

#[test]
fn invalid_type() {
    insta::assert_snapshot!(line(json!({"name": 42})));
    assert_eq!(kind(json!({"name": 42})), "invalid_type");
}

#[test]
fn missing_required() {
    insta::assert_snapshot!(field_line::<NeedsEmail>(json!({})));
}

#[test]
fn too_small_string() {
    insta::assert_snapshot!(line(json!({"code": "ab"})));
}

#[test]
fn too_small_number() {
    insta::assert_snapshot!(line(json!({"count": 0})));
}

#[test]
fn too_small_exclusive() {
    insta::assert_snapshot!(line(json!({"ratio": 0})));
}

#[test]
fn too_small_items() {
    insta::assert_snapshot!(line(json!({"tags": []})));
}

#[test]
fn too_big_string() {
    insta::assert_snapshot!(line(json!({"code": "abcdefghi"})));
}

#[test]
fn too_big_number() {
    insta::assert_snapshot!(line(json!({"count": 11})));
}

#[test]
fn too_big_exclusive() {
    insta::assert_snapshot!(line(json!({"ratio": 1.5})));
}

#[test]
fn too_big_items() {
    insta::assert_snapshot!(line(json!({"tags": ["a", "b", "c"]})));
}

#[test]
fn too_big_integer_type_range() {
    insta::assert_snapshot!(line(json!({"small": 300})));
    assert_eq!(kind(json!({"small": 300})), "too_big");
}

#[test]
fn invalid_format_email() {
    insta::assert_snapshot!(line(json!({"email": "not-an-email"})));
}

#[test]
fn invalid_format_url() {
    insta::assert_snapshot!(line(json!({"url": "example dot com"})));
}

#[test]
fn invalid_format_uuid() {
    insta::assert_snapshot!(line(json!({"uuid": "123"})));
}

#[test]
fn invalid_format_date_time() {
    insta::assert_snapshot!(line(json!({"at": "yesterday"})));
}

#[test]
fn invalid_format_date() {
    insta::assert_snapshot!(line(json!({"day": "2026-13-45"})));
}

#[test]
fn invalid_format_ipv4() {
    insta::assert_snapshot!(line(json!({"ip4": "300.1.1.1"})));
}

#[test]
fn invalid_format_ipv6() {
    insta::assert_snapshot!(line(json!({"ip6": "::g"})));
}

#[test]
fn invalid_format_pattern() {
    insta::assert_snapshot!(line(json!({"invoice_id": "inv_26_1"})));
}

#[test]
fn invalid_format_pattern_with_author_expected() {
    insta::assert_snapshot!(line(json!({"currency": "euro"})));
}

#[test]
fn not_multiple_of() {
    insta::assert_snapshot!(line(json!({"step": 12})));
}

#[test]
fn unrecognized_keys() {
    insta::assert_snapshot!(line(json!({"emial": "a@b.co"})));
}

#[test]
fn invalid_value_enum() {
    insta::assert_snapshot!(line(json!({"channel": "fax"})));
}

/// Issue 17, defect 5: a documented Rust enum (schemars writes a `oneOf` of constants) reads
/// as the enum it is — SPEC §4's `invalid_value` line — with the closest option, as unknown
/// keys get (it answered `No allowed shape matched. … Expected one of: exactly 'open'; …`).
#[test]
fn invalid_value_documented_enum() {
    let report = ListInvoices::from_arguments(&json!({"status": "opne"})).expect_err("invalid");
    assert_eq!(report.issues().len(), 1, "{report}");
    assert_eq!(report.issues()[0].kind.code(), "invalid_value");
    assert_eq!(
        report.issues()[0].line(),
        "Invalid option (did you mean 'open'?). You sent: 'opne'. Expected one of: 'open', 'paid', 'void'."
    );
    insta::assert_snapshot!(report.render("billing.list_invoices"));
    // Nothing close: no suggestion.
    let far = ListInvoices::from_arguments(&json!({"status": "refunded"})).expect_err("invalid");
    assert_eq!(
        far.issues()[0].line(),
        "Invalid option. You sent: 'refunded'. Expected one of: 'open', 'paid', 'void'."
    );
}

#[test]
fn invalid_value_literal() {
    insta::assert_snapshot!(line(json!({"version": "v1"})));
}

#[test]
fn invalid_union() {
    insta::assert_snapshot!(line(json!({"target": true})));
    assert_eq!(kind(json!({"target": true})), "invalid_union");
}

#[test]
fn custom() {
    insta::assert_snapshot!(line(json!({"login": "admin"})));
    assert!(matches!(
        Everything::from_arguments(&json!({"login": "admin"}))
            .expect_err("invalid")
            .issues()[0]
            .kind,
        IssueKind::Custom { .. }
    ));
}

#[test]
fn every_kind_has_its_code() {
    let cases = [
        (json!({"name": 1}), "invalid_type"),
        (json!({"code": "a"}), "too_small"),
        (json!({"count": 99}), "too_big"),
        (json!({"email": "x"}), "invalid_format"),
        (json!({"step": 1}), "not_multiple_of"),
        (json!({"nope": 1}), "unrecognized_keys"),
        (json!({"channel": "fax"}), "invalid_value"),
        (json!({"target": []}), "invalid_union"),
        (json!({"login": "admin"}), "custom"),
    ];
    for (args, code) in cases {
        assert_eq!(kind(args.clone()), code, "{args}");
    }
    let missing = NeedsEmail::from_arguments(&json!({})).expect_err("missing");
    assert_eq!(missing.issues()[0].kind.code(), "missing");
}

#[test]
fn valid_arguments_pass() {
    let ok = Everything::from_arguments(&json!({
        "name": "n", "code": "abc", "count": 10, "ratio": 1.2, "tags": ["a"],
        "email": "a@example.com", "url": "https://example.com", "uuid": "123e4567-e89b-12d3-a456-426614174000",
        "at": "2026-01-15T10:30:00Z", "day": "2026-01-15", "ip4": "192.168.0.1", "ip6": "2001:db8::1",
        "invoice_id": "inv_2026_0001", "currency": "EUR", "step": 15, "channel": "sms", "version": "v2",
        "target": 7, "login": "bob", "small": 255
    }))
    .expect("valid");
    assert_eq!(ok.count, Some(10));
    assert!(matches!(ok.channel, Some(Channel::Sms)));
    assert!(matches!(ok.target, Some(IdOrName::Id(7))));
    assert!(matches!(ok.version, Some(Version::V2)));
    let named = Everything::from_arguments(&json!({"target": "acme"})).expect("valid");
    assert!(matches!(named.target, Some(IdOrName::Name(n)) if n == "acme"));
    assert_eq!(ok.small, Some(255));
    assert_eq!(ok.name.as_deref(), Some("n"));
}
