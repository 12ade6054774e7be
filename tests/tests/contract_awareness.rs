//! `<contract_awareness>`: scoping, ordering, cap, escaping, and its place in `<validation_error>`.

use std::collections::BTreeMap;

use fusion_runtime::client::parse_validation_error;
use fusion_runtime::contract::{
    ContractAwareness, Delta, DeltaSeverity, Lockfile, ToolContract, diff,
};
use fusion_runtime::{Issue, IssueKind, ValidationReport};
use quick_xml::events::Event;
use quick_xml::reader::Reader;
use serde_json::{Value, json};

fn contract(action: &str, schema: Value) -> ToolContract {
    ToolContract::new(action, action.replace('.', "_"), "Does things", schema)
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "additionalProperties": false, "properties": props, "required": required})
}

fn delta(action: Option<&str>, severity: DeltaSeverity, path: &str, description: &str) -> Delta {
    Delta {
        path: path.to_owned(),
        severity,
        action: action.map(str::to_owned),
        description: description.to_owned(),
        before: None,
        after: None,
    }
}

/// One `<delta>` (or `<omitted>`) read back: its attributes and its text, unescaped.
#[derive(Debug)]
struct Line {
    name: String,
    attrs: BTreeMap<String, String>,
    text: String,
}

/// Reads a section as XML (failing on anything malformed) and returns its child elements.
fn read_section(xml: &str) -> Vec<Line> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut out: Vec<Line> = Vec::new();
    let mut depth = 0;
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                depth += 1;
                if depth == 1 {
                    assert_eq!(e.name().as_ref(), b"contract_awareness");
                    continue;
                }
                assert_eq!(depth, 2, "only one level of children");
                let attrs = e
                    .attributes()
                    .map(|a| {
                        let a = a.expect("attribute");
                        (
                            String::from_utf8_lossy(a.key.as_ref()).into_owned(),
                            a.unescape_value().expect("attribute value").into_owned(),
                        )
                    })
                    .collect();
                out.push(Line {
                    name: String::from_utf8_lossy(e.name().as_ref()).into_owned(),
                    attrs,
                    text: String::new(),
                });
            }
            Event::End(_) => depth -= 1,
            Event::Text(t) => {
                let s = t.decode().expect("text").into_owned();
                assert!(!s.contains("]]>"), "`]]>` in content: {s}");
                if depth == 2 {
                    out.last_mut().expect("inside an element").text.push_str(&s);
                } else {
                    assert!(s.trim().is_empty(), "stray text {s:?}");
                }
            }
            Event::GeneralRef(r) => {
                let s = if let Some(c) = r.resolve_char_ref().expect("char ref") {
                    c.to_string()
                } else {
                    match r.decode().expect("ref").as_ref() {
                        "amp" => "&".into(),
                        "lt" => "<".into(),
                        "gt" => ">".into(),
                        "quot" => "\"".into(),
                        "apos" => "'".into(),
                        other => panic!("unknown entity &{other};"),
                    }
                };
                out.last_mut().expect("inside an element").text.push_str(&s);
            }
            Event::Eof => break,
            Event::Empty(_) => panic!("no empty elements expected"),
            _ => {}
        }
    }
    assert_eq!(depth, 0);
    out
}

fn deltas_of(xml: &str) -> Vec<Line> {
    read_section(xml)
        .into_iter()
        .filter(|l| l.name == "delta")
        .collect()
}

#[test]
fn no_deltas_no_section() {
    let a = ContractAwareness::new(Vec::new(), ContractAwareness::DEFAULT_CAP);
    assert!(a.is_empty());
    assert_eq!(a.section_for("billing.get_invoice"), None);
    assert_eq!(ContractAwareness::default().section_for("x"), None);

    // Identical contracts: no delta, no section.
    let c = [contract(
        "a.one",
        object(json!({"x": {"type": "string"}}), &["x"]),
    )];
    let a = ContractAwareness::new(diff(&c, &c), 5);
    assert!(a.is_empty());
}

#[test]
fn only_breaking_and_risky_by_default_and_configurable() {
    let safe_and_cosmetic = vec![
        delta(
            Some("a.one"),
            DeltaSeverity::Safe,
            "actions.a.one.input.y",
            "New optional field 'y'.",
        ),
        delta(
            Some("a.one"),
            DeltaSeverity::Cosmetic,
            "actions.a.one.description",
            "Reworded.",
        ),
    ];
    let a = ContractAwareness::new(safe_and_cosmetic.clone(), 5);
    assert!(a.is_empty());
    assert_eq!(a.section_for("a.one"), None);

    let all = ContractAwareness::with_severities(
        safe_and_cosmetic,
        5,
        &[DeltaSeverity::Safe, DeltaSeverity::Cosmetic],
    );
    let section = all.section_for("a.one").expect("section");
    let lines = deltas_of(section);
    let severities: Vec<&str> = lines.iter().map(|l| l.attrs["severity"].as_str()).collect();
    assert_eq!(severities, ["SAFE", "COSMETIC"]);
}

#[test]
fn scoped_to_the_action_plus_tool_wide_deltas() {
    let old = [
        contract("a.one", object(json!({"x": {"type": "string"}}), &["x"])),
        contract("a.two", object(json!({"y": {"type": "string"}}), &[])),
        contract("a.three", object(json!({}), &[])),
    ];
    let new = [
        contract("a.one", object(json!({"x": {"type": "integer"}}), &["x"])),
        contract("a.two", object(json!({"y": {"type": "string"}}), &["y"])),
        contract("a.three", object(json!({}), &[])),
    ];
    let a = ContractAwareness::new(diff(&old, &new), 5);
    let one = a.section_for("a.one").expect("a.one changed");
    let two = a.section_for("a.two").expect("a.two changed");
    assert_eq!(a.section_for("a.three"), None);
    let one_paths: Vec<String> = deltas_of(one)
        .into_iter()
        .map(|l| l.attrs["path"].clone())
        .collect();
    let two_paths: Vec<String> = deltas_of(two)
        .into_iter()
        .map(|l| l.attrs["path"].clone())
        .collect();
    assert_eq!(one_paths, ["actions.a.one.input.x"]);
    assert_eq!(two_paths, ["actions.a.two.input.y"]);

    // A tool-wide delta joins every action's section, including an action without own deltas.
    let mut deltas = diff(&old, &new);
    deltas.push(delta(
        None,
        DeltaSeverity::Risky,
        "server",
        "Every action now needs a session.",
    ));
    let a = ContractAwareness::new(deltas, 5);
    for action in ["a.one", "a.two", "a.three", "a.unknown"] {
        let section = a.section_for(action).expect("tool-wide delta shown");
        let texts: Vec<String> = deltas_of(section).into_iter().map(|l| l.text).collect();
        assert!(
            texts.iter().any(|t| t.contains("needs a session")),
            "{action}: {texts:?}"
        );
    }
    assert_eq!(deltas_of(a.section_for("a.one").expect("section")).len(), 2);
    assert_eq!(
        deltas_of(a.section_for("a.three").expect("section")).len(),
        1
    );
}

#[test]
fn breaking_first_then_by_path() {
    let deltas = vec![
        delta(
            Some("a"),
            DeltaSeverity::Risky,
            "actions.a.annotations.destructiveHint",
            "Now destructive.",
        ),
        delta(
            Some("a"),
            DeltaSeverity::Breaking,
            "actions.a.input.z",
            "Z removed.",
        ),
        delta(
            None,
            DeltaSeverity::Breaking,
            "actions.a",
            "Tool-wide break.",
        ),
        delta(
            Some("a"),
            DeltaSeverity::Breaking,
            "actions.a.input.b",
            "B removed.",
        ),
        delta(
            Some("a"),
            DeltaSeverity::Risky,
            "actions.a.deprecated",
            "Deprecated.",
        ),
    ];
    let a = ContractAwareness::new(deltas, 5);
    let lines = deltas_of(a.section_for("a").expect("section"));
    let order: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l.attrs["severity"].as_str(), l.attrs["path"].as_str()))
        .collect();
    assert_eq!(
        order,
        [
            ("BREAKING", "actions.a"),
            ("BREAKING", "actions.a.input.b"),
            ("BREAKING", "actions.a.input.z"),
            ("RISKY", "actions.a.annotations.destructiveHint"),
            ("RISKY", "actions.a.deprecated"),
        ]
    );
}

#[test]
fn capped_with_a_count_of_what_was_cut() {
    let deltas: Vec<Delta> = (0..7)
        .map(|i| {
            delta(
                Some("a"),
                if i % 2 == 0 {
                    DeltaSeverity::Risky
                } else {
                    DeltaSeverity::Breaking
                },
                &format!("actions.a.input.f{i}"),
                &format!("Change {i}."),
            )
        })
        .collect();

    let a = ContractAwareness::new(deltas.clone(), ContractAwareness::DEFAULT_CAP);
    let lines = read_section(a.section_for("a").expect("section"));
    let shown: Vec<&Line> = lines.iter().filter(|l| l.name == "delta").collect();
    assert_eq!(shown.len(), 5);
    // The three BREAKING deltas all survive the cut; two of the four RISKY ones do not.
    assert_eq!(
        shown
            .iter()
            .filter(|l| l.attrs["severity"] == "BREAKING")
            .count(),
        3
    );
    let omitted = lines
        .iter()
        .find(|l| l.name == "omitted")
        .expect("omitted line");
    assert_eq!(omitted.attrs["count"], "2");
    assert_eq!(omitted.text, "2 more changes not shown.");

    let a = ContractAwareness::new(deltas.clone(), 6);
    let omitted = read_section(a.section_for("a").expect("section"))
        .into_iter()
        .find(|l| l.name == "omitted")
        .expect("omitted line");
    assert_eq!(omitted.text, "1 more change not shown.");

    let a = ContractAwareness::new(deltas.clone(), 7);
    let lines = read_section(a.section_for("a").expect("section"));
    assert_eq!(lines.iter().filter(|l| l.name == "delta").count(), 7);
    assert!(lines.iter().all(|l| l.name != "omitted"));

    let off = ContractAwareness::new(deltas, 0);
    assert!(off.is_empty());
    assert_eq!(off.section_for("a"), None);
}

#[test]
fn the_section_as_rendered() {
    let old = [contract(
        "billing.get_invoice",
        object(json!({"id": {"type": "string"}}), &["id"]),
    )];
    let new = [contract(
        "billing.get_invoice",
        object(json!({"invoice_id": {"type": "string"}}), &["invoice_id"]),
    )];
    let a = ContractAwareness::new(diff(&old, &new), 5);
    assert_eq!(
        a.section_for("billing.get_invoice").expect("section"),
        "<contract_awareness>\n  <notice>The contract of this tool changed since the version you may know. The changes are listed below; build your next call from the current contract, not from memory.</notice>\n  <delta severity=\"BREAKING\" path=\"actions.billing.get_invoice.input.id\">Field 'id' was renamed to 'invoice_id'. Before: 'id'. After: 'invoice_id'.</delta>\n</contract_awareness>"
    );
}

#[test]
fn names_and_values_are_escaped_and_kept_on_one_line() {
    let nasty_old = "x<y";
    let nasty_new = "a&\"b\"]]>c'";
    let action = "a.<b>&\"c\"";
    let old = [contract(
        action,
        object(
            json!({nasty_old: {"type": "string"}, "memo": {"type": "string", "description": "line one\nline two\r\n\tend ]]> <tag> &amp;"}}),
            &[],
        ),
    )];
    let new = [contract(
        action,
        object(
            json!({nasty_new: {"type": "string"}, "memo": {"type": "string", "description": "new </delta> text"}}),
            &[],
        ),
    )];
    let deltas = diff(&old, &new);
    assert_eq!(deltas.len(), 2, "{deltas:#?}");
    let a = ContractAwareness::new(deltas, 5);
    let section = a.section_for(action).expect("section");

    // One element per line, so the indentation `render_with_sections` adds cannot alter text.
    for line in section.lines() {
        let t = line.trim_start();
        assert!(t.starts_with('<') && t.ends_with('>'), "line {line:?}");
    }
    assert!(!section.contains("]]>"));
    assert!(!section.contains("</delta> text"));

    let lines = deltas_of(section);
    assert_eq!(lines.len(), 2);
    let rename = lines
        .iter()
        .find(|l| l.text.contains("renamed"))
        .expect("rename line");
    assert_eq!(
        rename.attrs["path"],
        format!("actions.{action}.input.{nasty_old}")
    );
    assert!(
        rename.text.contains(&format!("Before: '{nasty_old}'")),
        "{}",
        rename.text
    );
    assert!(
        rename.text.contains(&format!("After: '{nasty_new}'")),
        "{}",
        rename.text
    );
    let memo = lines
        .iter()
        .find(|l| l.attrs["path"].ends_with(".memo"))
        .expect("memo line");
    assert_eq!(memo.attrs["severity"], "RISKY");
    assert!(
        memo.text
            .contains("line one line two   end ]]> <tag> &amp;"),
        "{}",
        memo.text
    );
    assert!(
        memo.text.contains("After: 'new </delta> text'"),
        "{}",
        memo.text
    );
}

#[test]
fn long_values_are_cut() {
    let long = "word ".repeat(40);
    let old = [contract(
        "a",
        object(
            json!({"f": {"type": "string", "description": "short"}}),
            &[],
        ),
    )];
    let new = [contract(
        "a",
        object(json!({"f": {"type": "string", "description": long}}), &[]),
    )];
    let a = ContractAwareness::new(diff(&old, &new), 5);
    let lines = deltas_of(a.section_for("a").expect("section"));
    let text = &lines[0].text;
    let after = text.split("After: ").nth(1).expect("after");
    assert_eq!(after, format!("'{}...'.", &long[..47]));
}

#[test]
fn validation_error_with_the_section_parses_and_keeps_it() {
    let old = [contract(
        "billing.get_invoice",
        object(json!({"id": {"type": "string"}}), &["id"]),
    )];
    let new = [contract(
        "billing.get_invoice",
        object(json!({"invoice_id": {"type": "string"}}), &["invoice_id"]),
    )];
    let awareness = ContractAwareness::new(diff(&old, &new), 5);
    let section = awareness
        .section_for("billing.get_invoice")
        .expect("section");

    let report = ValidationReport::new(vec![Issue::new(
        "invoice_id",
        IssueKind::Missing {
            expected: "a string".into(),
        },
        None,
    )]);
    let text = report.render_with_sections("billing.get_invoice", &[section]);
    assert!(
        text.ends_with("  </contract_awareness>\n</validation_error>"),
        "{text}"
    );

    let parsed = parse_validation_error(&text).expect("parses");
    assert_eq!(parsed.action, "billing.get_invoice");
    assert_eq!(parsed.fields.len(), 1);
    assert_eq!(parsed.fields[0].name, "invoice_id");
    assert_eq!(
        parsed.recovery.as_deref(),
        Some("Fix the fields above and call the tool again. Do not explain the error.")
    );
    assert_eq!(parsed.sections.len(), 1);
    assert_eq!(parsed.sections[0].name, "contract_awareness");
    assert_eq!(parsed.sections[0].xml, section.replace('\n', "\n  "));
    let lines = deltas_of(&parsed.sections[0].xml);
    assert_eq!(lines.len(), 1);
    assert!(lines[0].text.contains("renamed to 'invoice_id'"));
}

#[test]
fn from_lockfile_diffs_once_and_reports_a_missing_file() {
    let dir =
        std::env::temp_dir().join(format!("fusion-contract-awareness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("fusion.lock");
    let old = [
        contract(
            "billing.get_invoice",
            object(json!({"id": {"type": "string"}}), &["id"]),
        ),
        contract("billing.list_invoices", object(json!({}), &[])),
    ];
    Lockfile::from_contracts(&old)
        .expect("builds")
        .write(&path)
        .expect("writes");
    let current = [
        contract(
            "billing.get_invoice",
            object(json!({"invoice_id": {"type": "string"}}), &["invoice_id"]),
        ),
        contract("billing.list_invoices", object(json!({}), &[])),
    ];
    let a = ContractAwareness::from_lockfile(&path, &current, 5).expect("loads");
    let section = a.section_for("billing.get_invoice").expect("section");
    assert!(
        section.contains("Field 'id' was renamed to 'invoice_id'"),
        "{section}"
    );
    assert_eq!(a.section_for("billing.list_invoices"), None);

    let up_to_date = ContractAwareness::from_lockfile(&path, &old, 5).expect("loads");
    assert!(up_to_date.is_empty());

    std::fs::write(&path, "{ not json").expect("writes");
    assert!(ContractAwareness::from_lockfile(&path, &current, 5).is_err());
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ContractAwareness::from_lockfile(&path, &current, 5).is_err());
}
