//! The healing benchmark held in CI (issue 31; the `healing` bin prints the full table and
//! BENCHMARKS.md has it): every tool of the billing example (flat and grouped), the
//! conformance example and the benches' `accounts_register`, wrong calls of each issue kind
//! over streamable HTTP, repaired from the answer's text alone. Each kind's share healed in
//! one round is held to a floor a little under what it reaches today, so an envelope wording
//! that loses what the reader needs fails here.

#[path = "../benches/common/mod.rs"]
mod common;

#[path = "../../examples/conformance/main.rs"]
#[allow(dead_code)]
mod conformance;

use std::sync::Arc;

use fusion_tests::healing::reader::{Call, repair};
use fusion_tests::healing::{self, Endpoint, Kind, Outcome};
use serde_json::json;

fn conformance() -> fusion_runtime::Server {
    conformance::server().unwrap_or_else(|e| panic!("conformance builds: {e}"))
}

async fn run(make: fn() -> fusion_runtime::Server) -> healing::Run {
    healing::run(Endpoint::Fresh(Arc::new(make)), 8)
        .await
        .unwrap_or_else(|e| panic!("healing run: {e:#}"))
}

/// Per kind: the least share (percent) of cases healed in one round. What the run reached
/// when this was written is in the comment; the gaps are explained in BENCHMARKS.md.
const FLOORS: &[(Kind, f64)] = &[
    // Every kind reached 100.0 % (308 cases; 261 before wrong types on constrained fields) once a missing field's line says its bounds, a
    // grouped member's "Expected only" names the discriminator, and the discriminator guess
    // prefers a member whose required keys were all sent. 95 % is the issue's bar.
    (Kind::WrongType, 95.0), // 100.0 (79 cases, 36 of them on a constrained field)
    (Kind::MissingRequired, 95.0), // 100.0 (30)
    (Kind::UnknownKey, 95.0), // 100.0 (41)
    (Kind::EnumValue, 95.0), // 100.0 (5)
    (Kind::OutOfRange, 95.0), // 100.0 (18)
    (Kind::TooShort, 95.0),  // 100.0 (2)
    (Kind::TooLong, 95.0),   // 100.0 (4)
    (Kind::Pattern, 95.0),   // 100.0 (13)
    (Kind::Format, 95.0),    // 100.0 (3)
    (Kind::WrongTool, 95.0), // 100.0 (35)
    (Kind::WrongAction, 95.0), // 100.0 (10)
    (Kind::Several, 95.0),   // 100.0 (23)
    (Kind::ExtraKey, 95.0),  // 100.0 (35)
    (Kind::MissingAction, 95.0), // 100.0 (10)
    // Issue 59: the object kinds, sent on the nested tools (the benches' `orders.place`, the
    // `nested` server's `shipments.create` and `docs.layout`). Without the object lines (an
    // object's line said only `Expected an object.`) they healed far less; see BENCHMARKS.md.
    (Kind::ObjectWrongType, 100.0),
    (Kind::ObjectNull, 100.0),
    (Kind::ObjectsTooFew, 100.0),
    (Kind::ItemWrongType, 100.0),
    (Kind::SeveralNested, 100.0),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_issue_kind_heals_in_one_round_above_its_floor() {
    let (flat, grouped, conf, bench, nested) = tokio::join!(
        run(healing::billing),
        run(healing::billing_grouped),
        run(conformance),
        run(common::fusion_server),
        run(healing::nested::server)
    );
    let runs = [&flat, &grouped, &conf, &bench, &nested];
    for r in runs {
        assert!(
            r.no_baseline.is_empty(),
            "tools left without a valid baseline: {:?}",
            r.no_baseline
        );
    }
    let outcomes: Vec<&Outcome> = runs.iter().flat_map(|r| r.outcomes.iter()).collect();
    let not_refused: Vec<_> = outcomes.iter().filter(|o| !o.first.refused).collect();
    assert!(
        not_refused.is_empty(),
        "wrong calls the server accepted: {:?}",
        not_refused
            .iter()
            .map(|o| (&o.case.call, &o.case.what))
            .collect::<Vec<_>>()
    );
    let rows = healing::rows(outcomes.iter().copied());
    eprintln!("{}", healing::table(&rows));
    let mut low = Vec::new();
    for (kind, floor) in FLOORS {
        let row = rows
            .get(&Some(*kind))
            .unwrap_or_else(|| panic!("no case of kind {}", kind.name()));
        if row.pct1() < *floor {
            low.push(format!(
                "{}: {:.1} % healed in one round, floor {floor} %",
                kind.name(),
                row.pct1()
            ));
        }
    }
    let not_healed: Vec<String> = outcomes
        .iter()
        .filter(|o| o.healed_in != Some(1))
        .map(|o| {
            format!(
                "[{}] {} {}: {}",
                o.case.kind.name(),
                o.case.call.tool,
                o.case.what,
                healing::first_line(&o.first.text)
            )
        })
        .collect();
    assert!(
        low.is_empty(),
        "{}\nnot healed in one round:\n{}",
        low.join("\n"),
        not_healed.join("\n")
    );
}

fn call(args: serde_json::Value) -> Call {
    Call {
        tool: "billing_send_reminder".into(),
        args,
    }
}

fn envelope(lines: &[(&str, &str)]) -> String {
    let mut text = String::from("<validation_error action=\"billing.send_reminder\">\n");
    for (name, line) in lines {
        text.push_str(&format!(
            "  <field name=\"{name}\">{}</field>\n",
            line.replace('&', "&amp;").replace('<', "&lt;")
        ));
    }
    text.push_str("  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>");
    text
}

/// SPEC §4's example lines, read back into values that meet them ("fax" is nearest "sms").
#[test]
fn the_reader_turns_the_spec_examples_into_values() {
    let sent = call(json!({
        "emial": "ada@example.com", "invoice_id": 42, "name": "ab", "seats": 0,
        "channel": "fax", "version": "v1", "site": "x", "id": "y", "when": "z", "n": 12,
        "items": [], "ref": "inv-1", "extra": true
    }));
    let text = envelope(&[
        (
            "(root)",
            "Unrecognized key 'emial' (did you mean 'email'?). Unrecognized key 'extra'. Expected only: 'invoice_id', 'email', 'name', 'seats', 'channel', 'version', 'site', 'id', 'when', 'n', 'items', 'ref', 'days'.",
        ),
        (
            "invoice_id",
            "Invalid type. You sent: 42. Expected a string.",
        ),
        (
            "name",
            "Too short. You sent: 'ab' (2 characters). Expected at least 3 characters.",
        ),
        ("seats", "Too small. You sent: 0. Expected a number >= 1."),
        (
            "channel",
            "Invalid option. You sent: 'fax'. Expected one of: 'email', 'sms', 'push'.",
        ),
        (
            "version",
            "Invalid value. You sent: 'v1'. Expected exactly 'v2'.",
        ),
        (
            "site",
            "Invalid url format. You sent: 'x'. Expected a valid URL (e.g. https://example.com).",
        ),
        (
            "id",
            "Invalid uuid format. You sent: 'y'. Expected a UUID (e.g. 123e4567-e89b-12d3-a456-426614174000).",
        ),
        (
            "when",
            "Invalid date-time format. You sent: 'z'. Expected an ISO 8601 date-time (e.g. 2026-01-15T10:30:00Z).",
        ),
        (
            "n",
            "Not a multiple of 5. You sent: 12. Expected a multiple of 5.",
        ),
        (
            "items",
            "Too few items. You sent: array(0). Expected at least 1 item.",
        ),
        (
            "ref",
            "Invalid format. You sent: 'inv-1'. Expected a string matching ^inv_[0-9]{4}_[0-9]{4}$.",
        ),
        (
            "days",
            "Required field is missing. Expected a number <= 30.",
        ),
    ]);
    let fixed = repair(&sent, &text).unwrap_or_else(|| panic!("no repair of {text}"));
    assert_eq!(
        fixed.args,
        json!({
            "email": "ada@example.com", "invoice_id": "42", "name": "abx", "seats": 1,
            "channel": "sms", "version": "v2", "site": "https://example.com",
            "id": "123e4567-e89b-12d3-a456-426614174000", "when": "2026-01-15T10:30:00Z",
            "n": 10, "items": ["x"], "ref": "inv_0000_0000", "days": 30
        })
    );
}

/// A routing envelope: the unknown name is replaced by the one it names closest.
#[test]
fn the_reader_takes_the_closest_listed_action() {
    let sent = Call {
        tool: "billing".into(),
        args: json!({"action": "get_invoce", "id": "inv_2026_0001"}),
    };
    let text = "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">\n  <message>The billing tool has no action 'get_invoce'</message>\n  <available_actions>\n    <action>list_invoices</action>\n    <action>get_invoice</action>\n  </available_actions>\n  <details>\n    <detail key=\"requested\">get_invoce</detail>\n  </details>\n</tool_error>";
    let fixed = repair(&sent, text).unwrap_or_else(|| panic!("no repair"));
    assert_eq!(fixed.tool, "billing");
    assert_eq!(
        fixed.args,
        json!({"action": "get_invoice", "id": "inv_2026_0001"})
    );
    // Text that says nothing to act on gives no repair (not the same call again).
    assert_eq!(repair(&sent, "something went wrong"), None);
}

/// Issue 59's lines, read back: an object from its keys (the optional one left out, what was
/// sent kept where it was an object), items added up to the count, an optional object's
/// shapes, and a bare server's dotted path.
#[test]
fn the_reader_builds_objects_from_their_keys() {
    let sent = Call {
        tool: "orders_place".into(),
        args: json!({
            "customer": 7,
            "items": [{"sku": "ABC-0001", "quantity": 2, "unit_price_cents": 100}],
            "shipping": "{\"street\": \"Main St 1\"}",
            "gift": "a card",
            "lines": ["XYZ-0042"]
        }),
    };
    let item = "an object with: sku (a string matching ^[A-Z]{3}-[0-9]{4}$), quantity (an integer >= 1 and <= 99), unit_price_cents (an integer >= 1)";
    let text = envelope(&[
        (
            "customer",
            "Invalid type. You sent: 7. Expected an object with: id (a string matching ^cus_[0-9]{4}$), email (a valid email address), note (optional, a string of at most 80 characters or null), tags (an array of 1 to 3 items), kind (one of: 'person', 'company').",
        ),
        (
            "items",
            &format!("Too few items. You sent: array(1). Expected at least 2 items, each {item}."),
        ),
        (
            "shipping",
            "Invalid type. You sent: '{\"street\": \"Main St 1\"}'. Expected an object with: street (a string), city (a string of at least 2 characters).",
        ),
        (
            "gift",
            "No allowed shape matched. You sent: 'a card'. Expected one of: an object with: message (a string of 1 to 200 characters), wrap (optional, a boolean (true or false) or null); null.",
        ),
        (
            "lines.0",
            &format!("Invalid type. You sent: 'XYZ-0042'. Expected {item}."),
        ),
    ]);
    let fixed = repair(&sent, &text).unwrap_or_else(|| panic!("no repair of {text}"));
    assert_eq!(
        fixed.args,
        json!({
            "customer": {"id": "cus_0000", "email": "user@example.com", "tags": ["x"], "kind": "person"},
            "items": [
                {"sku": "ABC-0001", "quantity": 2, "unit_price_cents": 100},
                {"sku": "AAA-0000", "quantity": 1, "unit_price_cents": 1}
            ],
            "shipping": {"street": "Main St 1", "city": "xx"},
            "gift": {"message": "x"},
            "lines": [{"sku": "AAA-0000", "quantity": 1, "unit_price_cents": 1}]
        })
    );
    // A bare server's own check, by its dotted path.
    let bare = Call {
        tool: "orders_place".into(),
        args: json!({"items": [{"sku": "abc-1", "quantity": 1}]}),
    };
    let fixed = repair(&bare, "items[0].sku: does not match ^[A-Z]{3}-[0-9]{4}$")
        .unwrap_or_else(|| panic!("no repair"));
    assert_eq!(
        fixed.args,
        json!({"items": [{"sku": "AAA-0000", "quantity": 1}]})
    );
}
