//! The checks' unit tests.

use super::check::*;
use super::probe::*;
use super::reply::*;
use std::borrow::Cow;

use serde_json::Value;

fn probe(s: &str) -> Probe<'_> {
    Probe::of(s.as_bytes()).unwrap_or_else(|e| panic!("{e}: {s}"))
}

#[test]
fn the_probe_reads_what_the_checks_need_and_borrows_the_rest() {
    let p = probe(
        r#"{"params":{"arguments":{"a":[1,{"b":"\u00e9"}]},"name":"t"},"id":7,"method":"tools/call","jsonrpc":"2.0","extra":null}"#,
    );
    assert_eq!(p.shape, Shape::Object);
    assert_eq!(p.id, Some(Sniff::Int(7)));
    assert!(matches!(
        p.method,
        Some(Sniff::Str(Cow::Borrowed("tools/call")))
    ));
    assert!(matches!(
        p.params,
        Some(Params::Object {
            name: Some(Sniff::Str(_)),
            arguments: Some(Sniff::Object),
            bad_retry: None,
        })
    ));
    assert_eq!(
        probe(r#"{"id":18446744073709551615}"#).id,
        Some(Sniff::Number)
    );
    assert_eq!(probe(" [1, 2] ").shape, Shape::Batch);
    assert_eq!(probe("\"x\"").shape, Shape::NotObject);
}

#[test]
fn what_serde_json_refuses_the_probe_refuses() {
    for bad in [
        "",
        "{",
        r#"{"a":1} x"#,
        r#"{"a":"\ud800"}"#,
        r#"{"\udc00":1}"#,
        "{\"a\":\"\u{1}\"}",
        &"[".repeat(129),
    ] {
        assert!(Probe::of(bad.as_bytes()).is_err(), "{bad}");
        assert!(serde_json::from_str::<Value>(bad).is_err(), "{bad}");
    }
    assert!(Probe::of(b"{\"a\":\"\xff\"}").is_err());
}

#[test]
#[cfg(feature = "server-http")]
fn the_quick_probe_reads_what_the_exact_one_reads_and_leaves_the_rest_to_rmcp() {
    let call = r#"{"params":{"arguments":{"a":[1,{"b":"\u00e9"}]},"name":"t","_meta":{"k":[]}},"id":"7","method":"tools/call","jsonrpc":"2.0","extra":{"x":null}}"#;
    let (quick, exact) = (Probe::quick(call.as_bytes()), Probe::of(call.as_bytes()));
    assert_eq!(format!("{quick:?}"), format!("{exact:?}"));
    // What only `serde_json`'s full parse refuses, inside a value the quick probe passes
    // over: it passes (rmcp's parse refuses it), and the answer is the exact probe's.
    for inside in [
        r#""\ud800""#.to_owned(),
        "1e400".to_owned(),
        format!("{}{}", "[".repeat(129), "]".repeat(129)),
    ] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{inside}}}}}}}"#
        );
        assert!(Probe::quick(body.as_bytes()).is_ok(), "{inside}");
        let exact = Probe::of(body.as_bytes()).err().map(|e| parse_error(&e));
        assert!(exact.is_some(), "{inside}");
        assert_eq!(refused_by_rmcp(body.as_bytes()), exact, "{inside}");
    }
    // Syntax errors the quick probe finds are answered by the exact one too.
    for bad in [
        "{",
        r#"{"a":1} x"#,
        r#"{"id":1,"params":{"arguments":{"a":tru}}}"#,
    ] {
        let exact = Probe::of(bad.as_bytes()).err().map(|e| parse_error(&e));
        assert!(
            Probe::quick(bad.as_bytes()).is_err() && exact.is_some(),
            "{bad}"
        );
    }
}

#[test]
fn answers_are_json_rpc_with_the_id_first_read() {
    let reply = Reply::error(Value::Null, PARSE_ERROR, "Parse error");
    assert_eq!(
        String::from_utf8(reply.to_json()).unwrap_or_default(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
    );
    assert_eq!(
        probe(r#"{"id":"a","method":"x"}"#).readable_id(),
        Some(Value::from("a"))
    );
    assert_eq!(probe(r#"{"id":[1]}"#).readable_id(), None);
}

#[test]
#[cfg(feature = "server-http")]
fn a_passed_body_hands_on_its_id_and_whether_it_cancels() {
    let server = match crate::server::Server::builder()
        .name("t")
        .version("0")
        .build()
    {
        Ok(server) => server,
        Err(e) => panic!("{e}"),
    };
    let call = br#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"x","arguments":{"method":"notifications/cancelled"}}}"#;
    assert_eq!(
        check_body(call, &server),
        Ok(Passed {
            id: Value::from("c1"),
            cancels: false
        })
    );
    let cancel =
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}"#;
    assert_eq!(
        check_body(cancel, &server),
        Ok(Passed {
            id: Value::Null,
            cancels: true
        })
    );
    assert!(check_body(b"{", &server).is_err());
}
