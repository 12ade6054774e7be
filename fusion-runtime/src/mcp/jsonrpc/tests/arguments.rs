//! Arguments of any shape, well-formed or not: a plain call's reading is the probe's.

use proptest::prelude::*;

use super::super::check::{check_body, refused_by_rmcp};
use super::super::plain::plain_call;

/// Pieces of JSON, and pieces of what is not.
fn piece() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("{"),
        Just("}"),
        Just("["),
        Just("]"),
        Just("\""),
        Just("\\"),
        Just("\\\""),
        Just(":"),
        Just(","),
        Just(" "),
        Just("\"a\""),
        Just("\"b\":"),
        Just("1"),
        Just("-2.5e3"),
        Just("01"),
        Just("tru"),
        Just("null"),
        Just("\t"),
        Just("\"\\ud800\""),
        Just("é"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn a_plain_call_is_read_as_the_probe_reads_it(
        pieces in proptest::collection::vec(piece(), 0..24),
    ) {
        let server = crate::server::Server::builder().name("t").version("0").build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{{{}}}}}}}"#,
            pieces.concat()
        );
        let bytes = body.as_bytes();
        let whole = serde_json::from_slice::<serde_json::Value>(bytes).ok();
        match plain_call(bytes) {
            Some((passed, call)) => {
                match check_body(bytes, &server) {
                    Ok(checked) => prop_assert_eq!(checked, passed),
                    Err(answer) => prop_assert_eq!(Some(answer), refused_by_rmcp(bytes)),
                }
                // Its arguments parse as the whole body's do.
                if let Some(whole) = whole {
                    let span = call.arguments.unwrap_or_default();
                    let read = serde_json::from_slice::<serde_json::Value>(&bytes[span]).ok();
                    prop_assert_eq!(read.as_ref(), whole["params"].get("arguments"));
                }
            }
            // Not plain: only a body `serde_json` refuses.
            None => prop_assert!(whole.is_none(), "{}", body),
        }
    }

    /// Every well-formed arguments object passes, read as `serde_json` reads it.
    #[test]
    fn well_formed_arguments_pass_whole(arguments in object()) {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{arguments}}}}}"#
        );
        let bytes = body.as_bytes();
        let call = plain_call(bytes);
        prop_assert!(call.is_some(), "{}", body);
        let span = call.and_then(|(_, c)| c.arguments).unwrap_or_default();
        let read: serde_json::Value = serde_json::from_slice(&bytes[span])
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read, arguments);
    }
}

/// JSON objects whose strings are full of brackets, quotes and backslashes.
fn object() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let text = "[a-z{}\\[\\]\"\\\\:,\u{e9}\n]{0,6}";
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        text.prop_map(Value::String),
    ];
    let value = leaf.prop_recursive(6, 48, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(text, inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    proptest::collection::btree_map(text, value, 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}
