use serde_json::json;

use super::*;

fn sample() -> ToolContract {
    ToolContract::new(
        "billing.get_invoice",
        "billing_get_invoice",
        "Fetch one invoice",
        json!({"type": "object", "properties": {"id": {"type": "string"}}}),
    )
    .with_annotations(Hints {
        read_only: Some(true),
        destructive: None,
        idempotent: Some(true),
        open_world: Some(false),
    })
    .with_deprecated("Use billing.fetch_invoice")
}

#[test]
fn mcp_defaults_apply_to_absent_hints() {
    let a = Hints::default();
    assert!(!a.effective_read_only());
    assert!(a.effective_destructive());
    assert!(!a.effective_idempotent());
    assert!(a.effective_open_world());
    assert_eq!(a.to_json(), json!({}));
    let written = Hints {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    };
    assert!(written.effective_read_only());
    assert!(!written.effective_destructive());
    assert_eq!(
        written.to_json(),
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
}

#[test]
fn contract_json_round_trips() {
    let c = sample();
    let back = ToolContract::from_json(&c.to_json(), "c").expect("reads");
    assert_eq!(back, c);
    assert_eq!(back.digest(), c.digest());
    let plain = ToolContract::new("a", "a", "", json!(true));
    assert_eq!(
        ToolContract::from_json(&plain.to_json(), "c").expect("reads"),
        plain
    );
}

#[test]
fn contract_json_errors_name_the_path() {
    let mut v = sample().to_json();
    v["deprecated"] = json!(3);
    match ToolContract::from_json(&v, "actions.x.contract") {
        Err(LockError::Invalid { path, .. }) => assert_eq!(path, "actions.x.contract.deprecated"),
        other => panic!("unexpected {other:?}"),
    }
    let mut v = sample().to_json();
    v["annotations"]["fastHint"] = json!(true);
    match ToolContract::from_json(&v, "c") {
        Err(LockError::Invalid { path, .. }) => assert_eq!(path, "c.annotations.fastHint"),
        other => panic!("unexpected {other:?}"),
    }
    let mut v = sample().to_json();
    v["extra"] = json!(1);
    assert!(ToolContract::from_json(&v, "c").is_err());
    assert!(ToolContract::from_json(&json!([]), "c").is_err());
}

#[test]
fn digest_is_the_sha256_of_the_canonical_json() {
    // SHA-256("") is a well-known vector; the digest of a contract hashes its canonical JSON.
    let empty = Sha256::digest(b"");
    assert_eq!(
        empty.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    let c = sample();
    let expected: String = Sha256::digest(c.canonical_json().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(c.digest(), format!("sha256:{expected}"));
}
