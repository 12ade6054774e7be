//! `fusion.lock`: determinism, digests, round trips, and clean errors on anything else.

use std::path::PathBuf;

use fusion_runtime::contract::{Hints, LockError, Lockfile, ToolContract};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn get_invoice() -> ToolContract {
    ToolContract::new(
        "billing.get_invoice",
        "billing_get_invoice",
        "Fetch one invoice",
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["id"],
            "properties": {
                "id": {"type": "string", "description": "The invoice id", "pattern": "^inv_"},
                "expand": {"type": "array", "items": {"enum": ["lines", "customer"]}}
            }
        }),
    )
    .with_annotations(Hints {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: None,
        open_world: None,
    })
}

fn void_invoice() -> ToolContract {
    ToolContract::new(
        "billing.void_invoice",
        "billing_void_invoice",
        "Void an invoice",
        json!({"type": "object", "properties": {"id": {"type": "string"}, "reason": {"type": "string", "maxLength": 200}}}),
    )
    .with_deprecated("Use billing.cancel_invoice")
}

fn contracts() -> Vec<ToolContract> {
    vec![get_invoice(), void_invoice()]
}

/// The same JSON value with every object's keys inserted in reverse order.
fn reinserted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m.iter().rev() {
                out.insert(k.clone(), reinserted(v));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(reinserted).collect()),
        other => other.clone(),
    }
}

type Mutation = Box<dyn Fn(&mut ToolContract)>;
type IsExpected = fn(&LockError) -> bool;

struct TempPath(PathBuf);

impl TempPath {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "fusion-contract-lockfile-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempPath(dir.join("fusion.lock"))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

const EXPECTED: &str = r#"{
  "actions": {
    "billing.get_invoice": {
      "contract": {
        "action": "billing.get_invoice",
        "annotations": {
          "destructiveHint": false,
          "readOnlyHint": true
        },
        "description": "Fetch one invoice",
        "input": {
          "additionalProperties": false,
          "properties": {
            "expand": {
              "items": {
                "enum": [
                  "lines",
                  "customer"
                ]
              },
              "type": "array"
            },
            "id": {
              "description": "The invoice id",
              "pattern": "^inv_",
              "type": "string"
            }
          },
          "required": [
            "id"
          ],
          "type": "object"
        },
        "tool": "billing_get_invoice"
      },
      "digest": "DIGEST"
    }
  },
  "format": "fusion-lock",
  "version": 1
}
"#;

#[test]
fn layout_is_sorted_pretty_json_with_a_trailing_newline() {
    let c = get_invoice();
    let text = Lockfile::from_contracts(std::slice::from_ref(&c))
        .expect("builds")
        .to_string();
    assert_eq!(text, EXPECTED.replace("DIGEST", &c.digest()));
}

#[test]
fn canonical_json_and_digest_are_pinned() {
    let c = ToolContract::new(
        "a.b",
        "a_b",
        "d",
        json!({"type": "object", "b": 1, "a": [true, null]}),
    );
    assert_eq!(
        c.canonical_json(),
        r#"{"action":"a.b","annotations":{},"description":"d","input":{"a":[true,null],"b":1,"type":"object"},"tool":"a_b"}"#
    );
    let d = c.digest();
    assert!(d.starts_with("sha256:"), "{d}");
    assert_eq!(d.len(), 7 + 64);
    assert!(
        d[7..]
            .chars()
            .all(|ch| ch.is_ascii_hexdigit() && !ch.is_ascii_uppercase())
    );
}

#[test]
fn bytes_are_identical_across_runs_orders_and_key_insertion() {
    let first = Lockfile::from_contracts(&contracts())
        .expect("builds")
        .to_string();
    let again = Lockfile::from_contracts(&contracts())
        .expect("builds")
        .to_string();
    assert_eq!(first, again);

    let mut reversed = contracts();
    reversed.reverse();
    assert_eq!(
        Lockfile::from_contracts(&reversed)
            .expect("builds")
            .to_string(),
        first
    );

    let reordered: Vec<ToolContract> = contracts()
        .into_iter()
        .map(|mut c| {
            c.input_schema = reinserted(&c.input_schema);
            c
        })
        .collect();
    assert_eq!(
        Lockfile::from_contracts(&reordered)
            .expect("builds")
            .to_string(),
        first
    );
    for (a, b) in contracts().iter().zip(&reordered) {
        assert_eq!(a.digest(), b.digest());
    }
}

#[test]
fn writing_twice_gives_identical_files_that_read_back() {
    let tmp = TempPath::new("write-twice");
    let lock = Lockfile::from_contracts(&contracts()).expect("builds");
    lock.write(&tmp.0).expect("writes");
    let first = std::fs::read(&tmp.0).expect("reads");
    let mut reversed = contracts();
    reversed.reverse();
    Lockfile::from_contracts(&reversed)
        .expect("builds")
        .write(&tmp.0)
        .expect("writes");
    let second = std::fs::read(&tmp.0).expect("reads");
    assert_eq!(first, second);
    assert_eq!(first, lock.to_string().into_bytes());
    let back = Lockfile::read(&tmp.0).expect("reads back");
    assert_eq!(back, lock);
    assert!(back.check(&contracts()).is_empty());
    assert!(!tmp.0.with_file_name("fusion.lock.tmp").exists());
}

#[test]
fn digest_changes_iff_the_contract_changes() {
    let base = get_invoice();
    let same = {
        let mut c = base.clone();
        c.input_schema = reinserted(&c.input_schema);
        c
    };
    assert_eq!(base.digest(), same.digest());

    let mutations: Vec<(&str, Mutation)> = vec![
        ("action", Box::new(|c| c.action.push('2'))),
        ("tool", Box::new(|c| c.tool.push('2'))),
        ("description", Box::new(|c| c.description.push('.'))),
        (
            "a hint",
            Box::new(|c| c.annotations.idempotent = Some(false)),
        ),
        (
            "a hint at its default",
            Box::new(|c| c.annotations.open_world = Some(true)),
        ),
        (
            "deprecation",
            Box::new(|c| c.deprecated = Some(String::new())),
        ),
        (
            "a schema keyword",
            Box::new(|c| c.input_schema["properties"]["id"]["maxLength"] = json!(9)),
        ),
        (
            "array order",
            Box::new(|c| {
                c.input_schema["properties"]["expand"]["items"]["enum"] =
                    json!(["customer", "lines"])
            }),
        ),
        (
            "a number's spelling",
            Box::new(|c| c.input_schema["properties"]["id"]["minLength"] = json!(1.0)),
        ),
    ];
    let mut seen = std::collections::BTreeSet::from([base.digest()]);
    for (what, m) in mutations {
        let mut c = base.clone();
        m(&mut c);
        let d = c.digest();
        assert_ne!(d, base.digest(), "changing {what} must change the digest");
        assert!(seen.insert(d), "changing {what} gave a digest seen before");
        // And the lockfile sees every such change.
        let lock = Lockfile::from_contracts(std::slice::from_ref(&base)).expect("builds");
        let current = [c.clone()];
        assert!(
            !lock.check(&current).is_empty(),
            "`check` must report a change of {what}"
        );
    }
}

#[test]
fn round_trip_and_check() {
    let lock = Lockfile::from_contracts(&contracts()).expect("builds");
    let text = lock.to_string();
    let back = Lockfile::parse(&text).expect("parses");
    assert_eq!(back, lock);
    assert_eq!(back.to_string(), text);
    assert_eq!(back.contracts().len(), 2);
    assert_eq!(
        back.get("billing.void_invoice").map(|c| c.tool.as_str()),
        Some("billing_void_invoice")
    );
    assert!(back.get("billing.nope").is_none());
    assert!(back.check(&contracts()).is_empty());

    let mut changed = contracts();
    changed[0].input_schema["required"] = json!(["id", "expand"]);
    let deltas = back.check(&changed);
    assert_eq!(deltas.len(), 1, "{deltas:#?}");
    assert_eq!(deltas[0].path, "actions.billing.get_invoice.input.expand");
}

#[test]
fn duplicate_actions_are_an_error() {
    let err = Lockfile::from_contracts(&[get_invoice(), get_invoice()]).expect_err("duplicate");
    assert!(matches!(err, LockError::DuplicateAction(ref a) if a == "billing.get_invoice"));
}

#[test]
fn malformed_and_foreign_files_are_clear_errors() {
    let good = Lockfile::from_contracts(&contracts())
        .expect("builds")
        .to_string();
    let tampered = good.replace("\"Fetch one invoice\"", "\"Fetch two invoices\"");
    assert_ne!(tampered, good);
    let renamed_key = good.replacen("\"billing.get_invoice\": {", "\"billing.other\": {", 1);
    let cases: Vec<(&str, String, IsExpected)> = vec![
        ("empty", String::new(), |e| matches!(e, LockError::Json(_))),
        ("not json", "lock v1".into(), |e| matches!(e, LockError::Json(_))),
        ("truncated", good[..good.len() / 2].to_owned(), |e| matches!(e, LockError::Json(_))),
        ("array", "[]".into(), |e| matches!(e, LockError::Foreign(_))),
        ("package.json", r#"{"name": "x", "version": "1.0.0"}"#.into(), |e| matches!(e, LockError::Foreign(_))),
        ("other format", r#"{"format": "npm", "version": 1, "actions": {}}"#.into(), |e| matches!(e, LockError::Foreign(_))),
        ("future version", r#"{"format": "fusion-lock", "version": 2, "actions": {}}"#.into(), |e| matches!(e, LockError::UnsupportedVersion { found } if found == "2")),
        ("string version", r#"{"format": "fusion-lock", "version": "1", "actions": {}}"#.into(), |e| matches!(e, LockError::UnsupportedVersion { .. })),
        ("no actions", r#"{"format": "fusion-lock", "version": 1}"#.into(), |e| matches!(e, LockError::Invalid { path, .. } if path == "actions")),
        ("actions not an object", r#"{"format": "fusion-lock", "version": 1, "actions": []}"#.into(), |e| matches!(e, LockError::Invalid { path, .. } if path == "actions")),
        ("unknown top-level key", r#"{"format": "fusion-lock", "version": 1, "actions": {}, "generated": "today"}"#.into(), |e| matches!(e, LockError::Invalid { path, .. } if path == "generated")),
        ("entry not an object", r#"{"format": "fusion-lock", "version": 1, "actions": {"a": 1}}"#.into(), |e| matches!(e, LockError::Invalid { path, .. } if path == "actions.a")),
        ("entry without digest", r#"{"format": "fusion-lock", "version": 1, "actions": {"a": {"contract": {}}}}"#.into(), |e| matches!(e, LockError::Invalid { path, .. } if path == "actions.a.digest")),
        ("contract missing fields", r#"{"format": "fusion-lock", "version": 1, "actions": {"a": {"contract": {"action": "a"}, "digest": "sha256:00"}}}"#.into(), |e| matches!(e, LockError::Invalid { path, .. } if path.starts_with("actions.a.contract."))),
        ("hint not a boolean", r#"{"format": "fusion-lock", "version": 1, "actions": {"a": {"contract": {"action": "a", "tool": "a", "description": "", "input": {}, "annotations": {"readOnlyHint": "yes"}}, "digest": "x"}}}"#.into(), |e| matches!(e, LockError::Invalid { path, .. } if path == "actions.a.contract.annotations.readOnlyHint")),
        ("hand-edited contract", tampered, |e| matches!(e, LockError::DigestMismatch { action } if action == "billing.get_invoice")),
        ("entry key differs from its action", renamed_key, |e| matches!(e, LockError::Invalid { path, .. } if path == "actions.billing.other.contract.action")),
    ];
    for (name, text, ok) in cases {
        match Lockfile::parse(&text) {
            Ok(_) => panic!("case `{name}` parsed"),
            Err(e) => {
                assert!(ok(&e), "case `{name}`: unexpected error {e:?}");
                assert!(!e.to_string().is_empty());
            }
        }
    }
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let tmp = TempPath::new("missing");
    let err = Lockfile::read(&tmp.0).expect_err("missing");
    assert!(matches!(err, LockError::Io { op: "read", .. }), "{err:?}");
    assert!(err.to_string().contains("fusion.lock"), "{err}");
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(256))]

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in ".{0,200}") {
        let _ = Lockfile::parse(&text);
    }

    #[test]
    fn parse_never_panics_on_damaged_lockfiles(cut in 0usize..2000, insert in any::<char>()) {
        let good = Lockfile::from_contracts(&contracts()).expect("builds").to_string();
        let at = good.char_indices().map(|(i, _)| i).nth(cut % good.chars().count()).unwrap_or(0);
        let mut damaged = good.clone();
        damaged.insert(at, insert);
        if let Ok(lock) = Lockfile::parse(&damaged) {
            // Only harmless damage (whitespace) may parse, and then it is the same lockfile.
            prop_assert_eq!(lock.to_string(), good.clone());
        }
        // A truncation that removes only trailing whitespace (the final newline) leaves the
        // whole document, which parses to the same lockfile; one that removes more fails.
        let truncated = &good[..at];
        match Lockfile::parse(truncated) {
            Ok(lock) => {
                prop_assert!(good[at..].trim().is_empty(), "a truncation removing {:?} parsed", &good[at..]);
                prop_assert_eq!(lock.to_string(), good.clone());
            }
            Err(_) => prop_assert!(!good[at..].trim().is_empty(), "cutting only whitespace must leave a lockfile"),
        }
    }

    #[test]
    fn arbitrary_json_values_are_errors_not_panics(v in arb_json()) {
        let _ = Lockfile::parse(&v.to_string());
        let wrapped = json!({"format": "fusion-lock", "version": 1, "actions": {"a": v.clone()}});
        prop_assert!(Lockfile::parse(&wrapped.to_string()).is_err());
        let as_contract = json!({"format": "fusion-lock", "version": 1, "actions": {"a": {"contract": v, "digest": "sha256:0"}}});
        prop_assert!(Lockfile::parse(&as_contract.to_string()).is_err());
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z\"<&]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,12}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
