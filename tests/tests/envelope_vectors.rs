//! SPEC §1–§3 as data: every case of `vectors/tool_error.json` renders byte for byte.

use std::time::Duration;

use fusion_runtime::{ErrorCode, Severity, ToolResponse, error};
use serde::Deserialize;

#[derive(Deserialize)]
struct Vectors {
    canonical_codes: Vec<String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    input: Input,
    expected: Expected,
}

#[derive(Deserialize)]
struct Input {
    code: String,
    message: String,
    suggestion: Option<String>,
    #[serde(default)]
    actions: Vec<String>,
    #[serde(default)]
    details: Vec<(String, String)>,
    retry_after: Option<Duration>,
    severity: Option<String>,
}

#[derive(Deserialize)]
struct Expected {
    text: String,
    is_error: bool,
}

fn vectors() -> Vectors {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/tool_error.json");
    let text = std::fs::read_to_string(path).expect("vectors file is part of the repository");
    serde_json::from_str(&text).expect("vectors file is valid")
}

#[test]
fn every_vector_renders_byte_for_byte() {
    let v = vectors();
    assert_eq!(v.cases.len(), 46);
    let mut failures = Vec::new();
    for case in &v.cases {
        let i = &case.input;
        let mut e = error(ErrorCode::parse(&i.code), i.message.clone())
            .available_actions(i.actions.clone())
            .details(i.details.clone());
        if let Some(s) = &i.suggestion {
            e = e.recovery(s.clone());
        }
        if let Some(d) = i.retry_after {
            e = e.retry_after(d);
        }
        if let Some(s) = &i.severity {
            e = e.severity(Severity::parse(s).expect("vector severities are valid"));
        }
        if e.render() != case.expected.text || e.is_error() != case.expected.is_error {
            failures.push(format!(
                "{}:\n--- expected ---\n{}\n--- got ---\n{}",
                case.id,
                case.expected.text,
                e.render()
            ));
        }
        let response = ToolResponse::error(e);
        assert_eq!(response.is_error, case.expected.is_error, "{}", case.id);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn canonical_codes_match_the_contract() {
    let v = vectors();
    let ours: Vec<&str> = ErrorCode::CANONICAL.iter().map(|c| c.as_str()).collect();
    assert_eq!(ours, v.canonical_codes);
}
