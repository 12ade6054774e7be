//! The checks' unit tests.

use super::check::*;
#[cfg(feature = "server-http")]
use super::plain::{PlainCall, plain_call};
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
fn what_serde_json_refuses_anywhere_is_the_probes_parse_error() -> anyhow::Result<()> {
    let server = crate::server::Server::builder()
        .name("t")
        .version("0")
        .build()?;
    for inside in [
        r#""\ud800""#.to_owned(),
        "1e400".to_owned(),
        format!("{}{}", "[".repeat(129), "]".repeat(129)),
        "tru".to_owned(),
    ] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{inside}}}}}}}"#
        );
        let answer = Probe::of(body.as_bytes()).err().map(|e| parse_error(&e));
        assert!(answer.is_some(), "{inside}");
        assert_eq!(
            check_body(body.as_bytes(), &server).err(),
            answer,
            "{inside}"
        );
        assert_eq!(refused_by_rmcp(body.as_bytes()), answer, "{inside}");
    }
    Ok(())
}

#[test]
fn answers_are_json_rpc_with_the_id_first_read() {
    let reply = Reply::error(None, rmcp::model::ErrorCode::PARSE_ERROR, "Parse error");
    assert_eq!(
        String::from_utf8(reply.to_json()).unwrap_or_default(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
    );
    assert_eq!(
        probe(r#"{"id":"a","method":"x"}"#).readable_id(),
        Some(rmcp::model::RequestId::String("a".into()))
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
            id: Some(rmcp::model::RequestId::String("c1".into())),
            cancels: false
        })
    );
    let cancel =
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}"#;
    assert_eq!(
        check_body(cancel, &server),
        Ok(Passed {
            id: None,
            cancels: true
        })
    );
    assert!(check_body(b"{", &server).is_err());
}

/// Bodies of every kind: a plain call must be read as the probe reads it, the others left to
/// it.
#[cfg(feature = "server-http")]
const CORPUS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"accounts_register","arguments":{"id":"acc_7f3k9q2m","email":"a@b.c","seats":12,"plan":"pro","tags":["beta","eu-west"]}}}"#,
    r#" { "jsonrpc" : "2.0" , "id" : "x" , "method" : "ping" } "#,
    r#"{"jsonrpc":"2.0","id":-5,"method":"tools/list","params":null}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"x\"y"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
    r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":123456789012345678,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
    r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
    r#"{"jsonrpc":2,"id":1,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
    r#"{"jsonrpc":"2.0","id":1}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":null}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","requestState":5}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":"x"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","requestState":"s","inputResponses":{"a":{}}}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t\u0041","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","name":5}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":true,"b":false,"c":null,"d":-1.5e3,"e":[[],{}]}},"_meta":{}}"#,
    r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
    r#"{}"#,
    r#"[]"#,
    r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
    r#""x""#,
    "{\"jsonrpc\":\"2.0\",\"id\":\"a\u{1}\",\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":\"é\",\"method\":\"ping\"}",
];

/// Reads `body` as a plain call, its `Passed` the one the probe hands on (or the body one
/// `serde_json`'s full parse refuses, answered as the probe answers it).
#[cfg(feature = "server-http")]
fn plain(body: &str) -> Option<PlainCall> {
    let server = crate::server::Server::builder()
        .name("t")
        .version("0")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = body.as_bytes();
    let (passed, call) = plain_call(bytes)?;
    match check_body(bytes, &server) {
        Ok(checked) => assert_eq!(checked, passed, "{body}"),
        Err(answer) => assert_eq!(Some(answer), refused_by_rmcp(bytes), "{body}"),
    }
    Some(call)
}

#[test]
#[cfg(feature = "server-http")]
fn a_plain_call_is_one_the_probe_passes_and_nothing_else_is() -> anyhow::Result<()> {
    let garbage = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[tru]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[1,]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{1:2}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":\"\t\"}}",
    ];
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}{}}}}}}}"#,
        "[".repeat(129),
        "]".repeat(129)
    );
    // What only `serde_json`'s full parse refuses passes (a lone surrogate, a number out of
    // range, nesting past its limit): the arguments' own parse refuses it, and so does rmcp's.
    let odd = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"\ud800","b":1e400,"c":"\u00e9\n\"\\\/\b\f\r\t"}}}"#;
    // Arguments whose syntax is wrong: not plain, and the probe answers them.
    let bad_arguments = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":tru}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,]}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"a":01},"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{"a":"\x"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{1:2}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t","arguments":{"a":{"b":1]}}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{\"a\":\"\t\"}}}",
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t","arguments":{"a":"}"#,
    ];
    // Brackets in strings, escaped quotes: read as `serde_json` reads them.
    let bracketed = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"a":"\"}","b":["]",{"c":"{["}],"d":"\\"}}}"#;
    let server = crate::server::Server::builder()
        .name("t")
        .version("0")
        .build()?;
    let all = CORPUS.iter().copied().chain(garbage).chain(bad_arguments);
    let read: Vec<&str> = all
        .chain([odd, deep.as_str(), bracketed])
        .filter(|body| plain(body).is_some())
        .collect();
    assert_eq!(read, [CORPUS[0], odd, deep.as_str(), bracketed]);
    for body in bad_arguments {
        let answer = check_body(body.as_bytes(), &server).err();
        assert!(answer.is_some_and(|a| a.is_error()), "{body}");
    }
    let arguments = plain(bracketed).and_then(|c| c.arguments);
    let whole: Value = serde_json::from_str(bracketed)?;
    let read = arguments.map(|a| serde_json::from_slice::<Value>(&bracketed.as_bytes()[a]));
    assert_eq!(read.transpose()?.as_ref(), whole["params"].get("arguments"));
    for body in [odd, deep.as_str()] {
        let arguments = plain(body).and_then(|c| c.arguments).unwrap_or_default();
        assert!(serde_json::from_slice::<Value>(&body.as_bytes()[arguments]).is_err());
        assert!(refused_by_rmcp(body.as_bytes()).is_some());
    }
    Ok(())
}

/// A plain `tools/call` ([`PlainCall`]) is one the framework may answer without rmcp: its
/// spans hold exactly the name and arguments `serde_json` reads, and any member beyond
/// `jsonrpc`, `id`, `method`, `params { name, arguments }` — or a duplicate, an escape in the
/// name, arguments that are not an object — makes it rmcp's.
#[test]
#[cfg(feature = "server-http")]
fn a_plain_call_is_read_whole_and_nothing_else_is_one() -> anyhow::Result<()> {
    let plain_bodies = [
        CORPUS[0],
        r#" { "params" : { "arguments" : { "a" : [ 1 , { } ] } , "name" : "t" } , "method" : "tools/call" , "id" : "x" , "jsonrpc" : "2.0" } "#,
        r#"{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"é"}}"#,
        r#"{"jsonrpc":"2.0","id":"\u0078","method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":"\ud800","b":1e400}}}"#,
    ];
    let not_plain = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":1}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"task":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}},"x":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"params":{"name":"u"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","name":"u"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t\u0041","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":null}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","requestState":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":tru}}}"#,
    ];
    for body in plain_bodies {
        let bytes = body.as_bytes();
        let call = plain(body).ok_or_else(|| anyhow::anyhow!("not plain: {body}"))?;
        let name = std::str::from_utf8(&bytes[call.name.clone()])?;
        let arguments = call.arguments.as_ref().map(|a| &bytes[a.clone()]);
        match serde_json::from_slice::<Value>(bytes) {
            Ok(whole) => {
                assert_eq!(whole["params"]["name"], name, "{body}");
                let read = arguments.map(serde_json::from_slice::<Value>).transpose()?;
                assert_eq!(whole["params"].get("arguments"), read.as_ref(), "{body}");
            }
            // What only the full parse refuses: the arguments' own parse refuses it too.
            Err(_) => {
                let refused = arguments.map(serde_json::from_slice::<Value>);
                assert!(matches!(refused, Some(Err(_))), "{body}");
            }
        }
    }
    for body in not_plain {
        assert_eq!(plain(body), None, "{body}");
    }
    Ok(())
}

/// Arguments of any shape, well-formed or not: a plain call's reading is the probe's.
#[cfg(feature = "server-http")]
mod arguments;
