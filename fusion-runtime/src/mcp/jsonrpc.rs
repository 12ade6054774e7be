//! What the framework answers itself, before rmcp sees a message: bytes that are not JSON,
//! JSON that is not a JSON-RPC message, batches, and `tools/call` requests whose `name` or
//! `arguments` cannot be used. Shared by the stdio and HTTP transports.
//!
//! The check is one pass over the bytes that allocates nothing for a valid message (strings
//! are borrowed, nested values skipped) yet validates everything `serde_json` would: syntax,
//! nesting depth, lone surrogates.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

#[cfg(feature = "server-stdio")]
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::server::Server;

use super::to_call_tool_result;

/// JSON-RPC `Parse error`.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC `Invalid Request`.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC `Invalid params`.
pub const INVALID_PARAMS: i64 = -32602;

/// An answer the framework gives itself, without rmcp.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reply {
    /// A JSON-RPC error; `id` is `null` when none could be read.
    Error {
        id: Value,
        code: i64,
        message: Cow<'static, str>,
    },
    /// A `tools/call` answered with an `isError` result carrying an envelope.
    ToolResult { id: Value, result: Value },
}

impl Reply {
    pub(crate) fn error(id: Value, code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        Reply::Error {
            id,
            code,
            message: message.into(),
        }
    }

    /// The answer as one line of JSON (no trailing newline).
    pub(crate) fn to_json(&self) -> Vec<u8> {
        #[derive(serde::Serialize)]
        struct Answer<'a> {
            jsonrpc: &'static str,
            id: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<ErrorObject<'a>>,
        }
        #[derive(serde::Serialize)]
        struct ErrorObject<'a> {
            code: i64,
            message: &'a str,
        }
        let answer = match self {
            Reply::Error { id, code, message } => Answer {
                jsonrpc: "2.0",
                id,
                result: None,
                error: Some(ErrorObject {
                    code: *code,
                    message,
                }),
            },
            Reply::ToolResult { id, result } => Answer {
                jsonrpc: "2.0",
                id,
                result: Some(result),
                error: None,
            },
        };
        serde_json::to_vec(&answer).unwrap_or_default()
    }

    /// Whether it is a JSON-RPC error (HTTP answers it with status 400).
    #[cfg(feature = "server-http")]
    pub(crate) fn is_error(&self) -> bool {
        matches!(self, Reply::Error { .. })
    }
}

#[cfg(feature = "server-stdio")]
/// What the framework does instead of handing a stdio line to rmcp.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Answer this.
    Reply(Reply),
    /// Nothing to answer (a response or notification rmcp cannot read).
    Ignore(&'static str),
}

#[cfg(feature = "server-stdio")]
/// Reads one stdio line (without its newline): rmcp's own parse first, so a valid message
/// costs exactly that; the check runs only when that parse fails or lands on a request
/// rmcp would answer with `Method not found`.
pub(crate) fn read_line(bytes: &[u8], server: &Server) -> Result<ClientJsonRpcMessage, Refusal> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(message) if custom_method(&message).is_none() => Ok(message),
        parsed => refuse(parsed.ok(), bytes, server),
    }
}

#[cfg(feature = "server-stdio")]
fn custom_method(message: &ClientJsonRpcMessage) -> Option<&str> {
    match message {
        ClientJsonRpcMessage::Request(r) => match &r.request {
            ClientRequest::CustomRequest(c) => Some(c.method.as_str()),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(feature = "server-stdio")]
fn refuse(
    parsed: Option<ClientJsonRpcMessage>,
    bytes: &[u8],
    server: &Server,
) -> Result<ClientJsonRpcMessage, Refusal> {
    let probe = match Probe::of(bytes) {
        Ok(p) => p,
        Err(e) => return Err(Refusal::Reply(parse_error(&e))),
    };
    if let Some(reply) = probe.verdict(bytes, server) {
        return Err(Refusal::Reply(reply));
    }
    if let Some(message) = parsed {
        // A custom method is rmcp's to answer; a method this server serves, with params
        // rmcp cannot read, gets `Invalid params` rather than `Method not found`.
        if !custom_method(&message).is_some_and(|m| SERVED_METHODS.contains(&m)) {
            return Ok(message);
        }
    }
    if probe.method.is_none() {
        return Err(Refusal::Ignore("a response rmcp cannot read"));
    }
    match probe.readable_id() {
        Some(id) => Err(Refusal::Reply(Reply::error(
            id,
            INVALID_PARAMS,
            "Invalid params",
        ))),
        None => Err(Refusal::Ignore("a notification rmcp cannot read")),
    }
}

/// What the one read of an HTTP body rmcp should have tells the layers after the check.
#[cfg(feature = "server-http")]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Passed {
    /// The message's id, for an answer about it (`null` when unreadable).
    pub(crate) id: Value,
    /// Whether it is a `notifications/cancelled` (the cancellation layer reads those again).
    pub(crate) cancels: bool,
}

/// Checks an HTTP body, reading it once: `Err` with the framework's own answer, or what the
/// layers after the check need when rmcp should have it.
#[cfg(feature = "server-http")]
pub(crate) fn check_body(bytes: &[u8], server: &Server) -> Result<Passed, Reply> {
    // The quick probe decides that rmcp should have it; any answer is the exact probe's.
    let probe = match Probe::quick(bytes) {
        Ok(probe) if probe.verdict(bytes, server).is_none() => probe,
        _ => {
            let probe = Probe::of(bytes).map_err(|e| parse_error(&e))?;
            return match probe.verdict(bytes, server) {
                Some(answer) => Err(answer),
                // (The probes never disagree on a message both read.)
                None => Ok(passed(&probe)),
            };
        }
    };
    Ok(passed(&probe))
}

/// The framework's answer to a body it passed and rmcp could not read: the exact probe's,
/// when `serde_json` refuses it (what the quick probe let through: a lone surrogate, bad
/// UTF-8, a number out of range, too deep).
#[cfg(feature = "server-http")]
pub(crate) fn refused_by_rmcp(bytes: &[u8]) -> Option<Reply> {
    Probe::of(bytes).err().map(|e| parse_error(&e))
}

#[cfg(feature = "server-http")]
fn passed(probe: &Probe<'_>) -> Passed {
    Passed {
        id: probe.readable_id().unwrap_or(Value::Null),
        cancels: probe
            .method
            .as_ref()
            .is_some_and(|m| m.is_str("notifications/cancelled")),
    }
}

#[cfg(feature = "server-stdio")]
/// The methods this server answers (the others are rmcp's `Method not found`).
const SERVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "subscriptions/listen",
];

fn parse_error(e: &serde_json::Error) -> Reply {
    tracing::debug!(error = %e, "unparsable message");
    Reply::error(Value::Null, PARSE_ERROR, format!("Parse error: {e}"))
}

/// A JSON value's type, with the few values the checks need.
#[derive(Debug, PartialEq)]
enum Sniff<'a> {
    Null,
    Bool,
    Int(i64),
    Number,
    Str(Cow<'a, str>),
    Array,
    Object,
}

impl Sniff<'_> {
    fn is_str(&self, s: &str) -> bool {
        matches!(self, Sniff::Str(v) if v == s)
    }
}

/// The top-level members that matter, read in one pass.
#[derive(Debug, Default)]
struct Probe<'a> {
    shape: Shape,
    jsonrpc: Option<Sniff<'a>>,
    id: Option<Sniff<'a>>,
    method: Option<Sniff<'a>>,
    params: Option<Params<'a>>,
    result_or_error: bool,
}

#[derive(Debug, Default, PartialEq)]
enum Shape {
    #[default]
    Object,
    Batch,
    NotObject,
}

/// `params`: for an object, its `name` and `arguments`, and what is wrong with a retry's
/// `requestState` / `inputResponses` (MRTR), if anything.
#[derive(Debug)]
enum Params<'a> {
    Object {
        name: Option<Sniff<'a>>,
        arguments: Option<Sniff<'a>>,
        bad_retry: Option<&'static str>,
    },
    Null,
    Other,
}

impl<'a> Probe<'a> {
    /// The exact probe: every value validated as `serde_json`'s own parse validates it.
    fn of(bytes: &'a [u8]) -> Result<Self, serde_json::Error> {
        Probe::with::<Skip>(bytes)
    }

    /// The quick probe: what the checks read is read as [`Probe::of`] reads it, the rest only
    /// for its syntax (`serde_json`'s `ignore_value`: a string's UTF-8 and `\u` escapes, a
    /// number's range and the nesting depth go unchecked). A message that passes it goes to
    /// rmcp, whose own parse refuses what the exact probe would; the answer to that is then
    /// the exact probe's ([`refused_by_rmcp`]).
    #[cfg(feature = "server-http")]
    fn quick(bytes: &'a [u8]) -> Result<Self, serde_json::Error> {
        Probe::with::<serde::de::IgnoredAny>(bytes)
    }

    fn with<K: Skipper>(bytes: &'a [u8]) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let probe = de.deserialize_any(ProbeVisitor::<K>(PhantomData))?;
        de.end()?;
        Ok(probe)
    }

    fn readable_id(&self) -> Option<Value> {
        match self.id.as_ref()? {
            Sniff::Int(n) => Some(Value::from(*n)),
            Sniff::Str(s) => Some(Value::String(s.to_string())),
            _ => None,
        }
    }

    /// The framework's answer, or `None` when the message is rmcp's to handle.
    fn verdict(&self, bytes: &[u8], server: &Server) -> Option<Reply> {
        match self.shape {
            Shape::Batch => {
                return Some(Reply::error(
                    Value::Null,
                    INVALID_REQUEST,
                    "Invalid Request: batches are not supported (MCP 2025-06-18 removed them)",
                ));
            }
            Shape::NotObject => {
                return Some(Reply::error(
                    Value::Null,
                    INVALID_REQUEST,
                    "Invalid Request: a message is a JSON object",
                ));
            }
            Shape::Object => {}
        }
        if self.method.is_none() && self.result_or_error {
            // A response: never answered, whatever is wrong with it.
            return None;
        }
        let id = self.readable_id();
        let invalid = |why: &'static str| {
            Some(Reply::error(
                id.clone().unwrap_or(Value::Null),
                INVALID_REQUEST,
                why,
            ))
        };
        if self.id.is_some() && id.is_none() {
            return invalid("Invalid Request: id must be a string or an integer");
        }
        if !self.jsonrpc.as_ref().is_some_and(|v| v.is_str("2.0")) {
            return invalid("Invalid Request: jsonrpc must be \"2.0\"");
        }
        let method = match &self.method {
            Some(Sniff::Str(m)) => m,
            Some(_) => return invalid("Invalid Request: method must be a string"),
            None => return invalid("Invalid Request: no method"),
        };
        if self.result_or_error {
            return invalid("Invalid Request: a request carries no result or error");
        }
        let (name, arguments) = match &self.params {
            None | Some(Params::Null) => (None, None),
            Some(Params::Other) => {
                return invalid("Invalid Request: params must be an object");
            }
            Some(Params::Object {
                bad_retry: Some(why),
                ..
            }) => return Some(Reply::error(id?, INVALID_PARAMS, *why)),
            Some(Params::Object {
                name, arguments, ..
            }) => (name.as_ref(), arguments.as_ref()),
        };
        if method != "tools/call" {
            return None;
        }
        let id = id?;
        let name_ok = matches!(name, Some(Sniff::Str(_)));
        let arguments_ok = matches!(arguments, None | Some(Sniff::Null | Sniff::Object));
        if name_ok && arguments_ok {
            return None;
        }
        Some(malformed_call(id, bytes, server))
    }
}

/// The `isError` result for a `tools/call` with an unusable name or arguments. Rare, so the
/// message is read again in full for the values the envelope quotes.
fn malformed_call(id: Value, bytes: &[u8], server: &Server) -> Reply {
    let message: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    let params = message.get("params");
    let name = params.and_then(|p| p.get("name"));
    let arguments = params
        .and_then(|p| p.get("arguments"))
        .unwrap_or(&Value::Null);
    let sent_name = match name {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    tracing::debug!(tool = %sent_name, "tools/call with an unusable name or arguments");
    let response = server.malformed_call(name.and_then(Value::as_str), &sent_name, arguments);
    let mut result = to_call_tool_result(response);
    // A 2026-07-28 request gets what rmcp gives every modern result: `resultType` and the
    // server's name in `_meta`.
    let modern = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(super::era::PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str)
        .is_some_and(super::era::is_modern_version);
    if modern {
        super::era::Era::Modern {
            threshold: crate::context::LogThreshold::off(),
        }
        .stamp(&mut result.meta, server);
    } else {
        result.result_type = None;
    }
    let result = serde_json::to_value(result).unwrap_or(Value::Null);
    Reply::ToolResult { id, result }
}

/// Skips any value, validating it as `serde_json` does (strings included).
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SniffVisitor::<Skip>(PhantomData))?;
        Ok(Skip)
    }
}

/// How a probe passes over a value it does not read: [`Skip`], or `serde`'s `IgnoredAny`.
trait Skipper: for<'de> Deserialize<'de> {}

impl Skipper for Skip {}
impl Skipper for serde::de::IgnoredAny {}

/// A value's [`Sniff`], what is inside it passed over with `K`.
struct SniffSeed<K>(PhantomData<K>);

impl<'de, K: Skipper> DeserializeSeed<'de> for SniffSeed<K> {
    type Value = Sniff<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Sniff<'de>, D::Error> {
        d.deserialize_any(SniffVisitor::<K>(PhantomData))
    }
}

struct SniffVisitor<K>(PhantomData<K>);

impl<'de, K: Skipper> Visitor<'de> for SniffVisitor<K> {
    type Value = Sniff<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Sniff::Null)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Sniff::Bool)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Sniff::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(i64::try_from(v).map_or(Sniff::Number, Sniff::Int))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Sniff::Number)
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Sniff::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Sniff::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<K>()?.is_some() {}
        Ok(Sniff::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<K, K>()?.is_some() {}
        Ok(Sniff::Object)
    }
}

/// A member name, without allocating.
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    ResultOrError,
    Name,
    Arguments,
    RequestState,
    InputResponses,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "jsonrpc" => Key::Jsonrpc,
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "params" => Key::Params,
                    "result" | "error" => Key::ResultOrError,
                    "name" => Key::Name,
                    "arguments" => Key::Arguments,
                    "requestState" => Key::RequestState,
                    "inputResponses" => Key::InputResponses,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

struct ProbeVisitor<K>(PhantomData<K>);

impl<'de, K: Skipper> Visitor<'de> for ProbeVisitor<K> {
    type Value = Probe<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe<'de>, A::Error> {
        let sniff = || SniffSeed::<K>(PhantomData);
        let mut p = Probe::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Jsonrpc => p.jsonrpc = Some(map.next_value_seed(sniff())?),
                Key::Id => p.id = Some(map.next_value_seed(sniff())?),
                Key::Method => p.method = Some(map.next_value_seed(sniff())?),
                Key::Params => p.params = Some(map.next_value_seed(ParamsSeed::<K>(PhantomData))?),
                Key::ResultOrError => {
                    map.next_value::<K>()?;
                    p.result_or_error = true;
                }
                _ => {
                    map.next_value::<K>()?;
                }
            }
        }
        Ok(p)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Probe<'de>, A::Error> {
        SniffVisitor::<K>(PhantomData).visit_seq(seq)?;
        Ok(Probe {
            shape: Shape::Batch,
            ..Probe::default()
        })
    }
    fn visit_unit<E>(self) -> Result<Probe<'de>, E> {
        Ok(not_object())
    }
    fn visit_bool<E>(self, _: bool) -> Result<Probe<'de>, E> {
        Ok(not_object())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Probe<'de>, E> {
        Ok(not_object())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Probe<'de>, E> {
        Ok(not_object())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Probe<'de>, E> {
        Ok(not_object())
    }
    fn visit_str<E>(self, _: &str) -> Result<Probe<'de>, E> {
        Ok(not_object())
    }
}

fn not_object<'a>() -> Probe<'a> {
    Probe {
        shape: Shape::NotObject,
        ..Probe::default()
    }
}

/// `params`, what the probe does not read passed over with `K`.
struct ParamsSeed<K>(PhantomData<K>);

impl<'de, K: Skipper> DeserializeSeed<'de> for ParamsSeed<K> {
    type Value = Params<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Params<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, K: Skipper> Visitor<'de> for ParamsSeed<K> {
    type Value = Params<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("params")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params<'de>, A::Error> {
        let sniff = || SniffSeed::<K>(PhantomData);
        let (mut name, mut arguments, mut bad_retry) = (None, None, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Name => name = Some(map.next_value_seed(sniff())?),
                Key::Arguments => arguments = Some(map.next_value_seed(sniff())?),
                Key::RequestState => {
                    if !matches!(map.next_value_seed(sniff())?, Sniff::Str(_) | Sniff::Null) {
                        bad_retry = Some("Invalid params: requestState must be a string");
                    }
                }
                Key::InputResponses => {
                    if !matches!(map.next_value_seed(sniff())?, Sniff::Object | Sniff::Null) {
                        bad_retry = Some("Invalid params: inputResponses must be an object");
                    }
                }
                _ => {
                    map.next_value::<K>()?;
                }
            }
        }
        Ok(Params::Object {
            name,
            arguments,
            bad_retry,
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Params<'de>, A::Error> {
        SniffVisitor::<K>(PhantomData).visit_seq(seq)?;
        Ok(Params::Other)
    }
    fn visit_unit<E>(self) -> Result<Params<'de>, E> {
        Ok(Params::Null)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Params<'de>, E> {
        Ok(Params::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Params<'de>, E> {
        Ok(Params::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Params<'de>, E> {
        Ok(Params::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Params<'de>, E> {
        Ok(Params::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Params<'de>, E> {
        Ok(Params::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
