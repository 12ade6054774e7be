//! Elicitation's unit tests.

use super::*;
use crate::mcp::handlers::request_state::*;

use crate::store::MemoryOnce;

fn binding() -> Binding {
    Binding::of("billing_refund", Some(&serde_json::Map::new()), "sub:alice")
}

fn state(iat: u64, bind: &str) -> State {
    State {
        v: STATE_VERSION,
        iat,
        bind: bind.to_owned(),
        n: format!("n{iat}{bind}"),
        ask: "e1".to_owned(),
        answers: BTreeMap::from([("e0".to_owned(), json!({"action": "decline"}))]),
    }
}

/// The answers of a retry, or the refusal's JSON-RPC code (`0` for an unchecked one).
async fn taken(
    sealed: Option<&str>,
    responses: Option<&BTreeMap<String, Value>>,
    binding: &Binding,
    once: &MemoryOnce,
) -> Result<BTreeMap<String, Value>, i32> {
    answers(sealed, responses, binding, once)
        .await
        .map_err(|r| match r {
            Refused::Invalid(e) => e.code.0,
            Refused::Unchecked(_) => 0,
        })
}

/// rmcp parses the request into its typed schema on the way out: every SEP-1330 enum form
/// and every SEP-1034 default must survive it.
#[test]
fn every_form_shape_survives_rmcps_typed_request() {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2"]},
            "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First"}]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["One", "Two"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First"}]}},
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "verified": {"type": "boolean", "default": true},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"}
        },
        "required": ["name"]
    });
    let params = json!({"mode": "form", "message": "m", "requestedSchema": schema});
    let wire = json!({"method": "elicitation/create", "params": params});
    let request: Result<ServerRequest, _> = serde_json::from_value(wire.clone());
    let back = request
        .map_err(|e| e.to_string())
        .and_then(|r| serde_json::to_value(r).map_err(|e| e.to_string()));
    let back = back.unwrap_or_else(|e| panic!("{e}"));
    let props = &back["params"]["requestedSchema"]["properties"];
    for (name, expected) in schema["properties"].as_object().into_iter().flatten() {
        for (key, value) in expected.as_object().into_iter().flatten() {
            assert_eq!(&props[name][key], value, "{name}.{key}: {back}");
        }
    }
    let input: Result<InputRequest, _> = serde_json::from_value(wire);
    assert!(input.is_ok(), "{input:?}");
}

#[tokio::test]
async fn a_sealed_state_opens_only_untampered_fresh_and_for_its_own_call_and_caller() {
    let once = MemoryOnce::default();
    let b = binding();
    let k = key().expect("a key");
    let sealed = seal(&state(now_secs(), &b.0), k).unwrap_or_default();
    let opened = taken(Some(&sealed), None, &b, &once).await;
    assert_eq!(opened.map(|a| a.len()), Ok(1));

    // Tampered: one character of the payload changed.
    let mut tampered = sealed.clone().into_bytes();
    let body = sealed.find('.').map_or(0, |dot| dot + 1);
    tampered[body + 3] ^= 1;
    let tampered = String::from_utf8(tampered).unwrap_or_default();
    assert_eq!(taken(Some(&tampered), None, &b, &once).await, Err(-32602));

    // Expired, and issued in the future (past the skew).
    let old = seal(
        &state(now_secs() - REQUEST_STATE_TTL.as_secs() - 5, &b.0),
        k,
    );
    let old = old.unwrap_or_default();
    assert_eq!(taken(Some(&old), None, &b, &once).await, Err(-32602));
    let ahead = seal(&state(now_secs() + 60, &b.0), k).unwrap_or_default();
    assert_eq!(taken(Some(&ahead), None, &b, &once).await, Err(-32602));

    // Another call's (other arguments), another caller's.
    let mut args = serde_json::Map::new();
    args.insert("invoice_id".into(), json!("inv_2026_0002"));
    let other = Binding::of("billing_refund", Some(&args), "sub:alice");
    assert_eq!(taken(Some(&sealed), None, &other, &once).await, Err(-32602));
    let bob = Binding::of("billing_refund", Some(&serde_json::Map::new()), "sub:bob");
    assert_eq!(taken(Some(&sealed), None, &bob, &once).await, Err(-32602));

    // Signed with another key (the builder's): refused; opened with that key: fine.
    let own: Arc<[u8]> = Arc::from(&[7u8; 32][..]);
    let keyed = binding().signed_with(Some(own.clone()));
    assert!(taken(Some(&sealed), None, &keyed, &once).await.is_err());
    let mut fresh = state(now_secs(), &keyed.0);
    fresh.n = "another".into();
    let sealed_own = seal(&fresh, &own).unwrap_or_default();
    assert!(taken(Some(&sealed_own), None, &keyed, &once).await.is_ok());

    // Oversized.
    let huge = format!("rs1.{}", "a".repeat(MAX_REQUEST_STATE_BYTES));
    assert_eq!(taken(Some(&huge), None, &b, &once).await, Err(-32602));
}

#[tokio::test]
async fn only_the_asked_key_is_answered_and_a_state_with_answers_is_taken_once() {
    let once = MemoryOnce::default();
    let b = binding();
    let sealed = seal(&state(now_secs(), &b.0), key().expect("a key")).unwrap_or_default();
    let mut responses = BTreeMap::new();
    responses.insert("e0".to_owned(), json!({"action": "accept", "content": {}}));
    responses.insert("e1".to_owned(), json!({"action": "accept", "content": {}}));
    for i in 2..100 {
        responses.insert(format!("e{i}"), json!({"action": "cancel"}));
    }
    let merged = taken(Some(&sealed), Some(&responses), &b, &once).await;
    let merged = merged.unwrap_or_default();
    assert_eq!(
        merged.len(),
        2,
        "the sealed e0 and the asked e1: {merged:?}"
    );
    assert_eq!(
        merged["e0"],
        json!({"action": "decline"}),
        "sealed answers stay"
    );
    // Presented again: nothing is taken, the handler asks afresh.
    let again = taken(Some(&sealed), Some(&responses), &b, &once).await;
    assert_eq!(again, Ok(BTreeMap::new()));
    // A first call (no state) answers nothing, whatever it sends.
    let first = taken(None, Some(&responses), &b, &once).await;
    assert_eq!(first, Ok(BTreeMap::new()));
    // A store that cannot decide: refused, unchecked.
    let full = MemoryOnce::new(0);
    let mut other = state(now_secs(), &b.0);
    other.n = "other".into();
    let other = seal(&other, key().expect("a key")).unwrap_or_default();
    assert_eq!(taken(Some(&other), None, &b, &full).await, Err(0));
}

#[test]
fn argument_order_does_not_change_the_binding() {
    let a: serde_json::Map<String, Value> =
        serde_json::from_str(r#"{"a":1,"b":{"y":2,"x":3}}"#).unwrap_or_default();
    let b: serde_json::Map<String, Value> =
        serde_json::from_str(r#"{"b":{"x":3,"y":2},"a":1}"#).unwrap_or_default();
    let of = |tool, args, owner| Binding::of(tool, Some(args), owner).0;
    assert_eq!(of("t", &a, "o"), of("t", &b, "o"));
    assert_ne!(of("t", &a, "o"), of("u", &a, "o"));
    assert_ne!(of("t", &a, "o"), of("t", &a, "p"));
}

/// The binding's canonical JSON is the text `serde_json` prints for the arguments rebuilt
/// with sorted maps (how it was first computed, so a `requestState` sealed by an instance of
/// the earlier code still binds on this one), and its digest that text's, one line each.
mod canonical {
    use std::collections::BTreeMap;

    use base64::Engine;
    use proptest::prelude::*;
    use serde_json::Value;
    use sha2::{Digest, Sha256};

    use crate::mcp::handlers::request_state::{Binding, write_sorted};

    fn rebuilt_sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let b: BTreeMap<&String, Value> =
                    m.iter().map(|(k, v)| (k, rebuilt_sorted(v))).collect();
                serde_json::to_value(b).unwrap_or(Value::Null)
            }
            Value::Array(a) => Value::Array(a.iter().map(rebuilt_sorted).collect()),
            other => other.clone(),
        }
    }

    fn value() -> impl Strategy<Value = Value> {
        let text = "[a-zA-Z0-9 \"\\\\/\u{e9}\u{1}\n\u{2028}]{0,6}";
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            text.prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((text, inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_sorted_text_is_the_rebuilt_values(v in value()) {
            let mut streamed = Vec::new();
            write_sorted(&mut streamed, &v).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(String::from_utf8_lossy(&streamed), rebuilt_sorted(&v).to_string());
        }

        #[test]
        fn the_binding_is_the_digest_of_the_three_lines(
            arguments in proptest::collection::vec(("[a-z]{1,3}", value()), 0..5),
        ) {
            let map: serde_json::Map<String, Value> = arguments.into_iter().collect();
            let text = rebuilt_sorted(&Value::Object(map.clone())).to_string();
            let digest = Sha256::digest(format!("t\n{text}\nsub:alice").as_bytes());
            let expected = base64::prelude::BASE64_URL_SAFE_NO_PAD.encode(digest);
            prop_assert_eq!(Binding::of("t", Some(&map), "sub:alice").0, expected);
        }
    }

    #[test]
    fn no_arguments_hash_as_an_empty_line() {
        let digest = Sha256::digest(b"t\n\nsub:alice");
        let expected = base64::prelude::BASE64_URL_SAFE_NO_PAD.encode(digest);
        assert_eq!(Binding::of("t", None, "sub:alice").0, expected);
    }
}
