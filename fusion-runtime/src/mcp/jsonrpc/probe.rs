//! What the framework answers itself, before rmcp sees a message: bytes that are not JSON,
//! JSON that is not a JSON-RPC message, batches, and `tools/call` requests whose `name` or
//! `arguments` cannot be used. Shared by the stdio and HTTP transports.
//!
//! The check is one pass over the bytes that allocates nothing for a valid message (strings
//! are borrowed, nested values skipped) yet validates everything `serde_json` would: syntax,
//! nesting depth, lone surrogates.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use rmcp::model::{ErrorCode, RequestId};

use super::reply::Reply;
use crate::mcp::handlers::era;
use crate::mcp::handlers::to_call_tool_result;
use crate::server::Server;

/// What the one read of an HTTP body rmcp should have tells the layers after the check.
#[cfg(feature = "server-http")]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Passed {
    /// The message's id, for an answer about it (`None` when unreadable).
    pub(crate) id: Option<RequestId>,
    /// Whether it is a `notifications/cancelled` (the cancellation layer reads those again).
    pub(crate) cancels: bool,
}

/// A JSON value's type, with the few values the checks need.
#[derive(Debug, PartialEq)]
pub(super) enum Sniff<'a> {
    Null,
    Bool,
    Int(i64),
    Number,
    Str(Cow<'a, str>),
    Array,
    Object,
}

impl Sniff<'_> {
    pub(super) fn is_str(&self, s: &str) -> bool {
        matches!(self, Sniff::Str(v) if v == s)
    }

    /// The value as a JSON-RPC id: a string, or an integer that fits an `i64`.
    pub(super) fn request_id(&self) -> Option<RequestId> {
        match self {
            Sniff::Int(n) => Some(RequestId::Number(*n)),
            Sniff::Str(s) => Some(RequestId::String(s.as_ref().into())),
            _ => None,
        }
    }
}

/// The top-level members that matter, read in one pass.
#[derive(Debug, Default)]
pub(super) struct Probe<'a> {
    pub(super) shape: Shape,
    pub(super) jsonrpc: Option<Sniff<'a>>,
    pub(super) id: Option<Sniff<'a>>,
    pub(super) method: Option<Sniff<'a>>,
    pub(super) params: Option<Params<'a>>,
    pub(super) result_or_error: bool,
}

#[derive(Debug, Default, PartialEq)]
pub(super) enum Shape {
    #[default]
    Object,
    Batch,
    NotObject,
}

/// `params`: for an object, its `name` and `arguments`, and what is wrong with a retry's
/// `requestState` / `inputResponses` (MRTR), if anything.
#[derive(Debug)]
pub(super) enum Params<'a> {
    Object {
        name: Option<Sniff<'a>>,
        arguments: Option<Sniff<'a>>,
        bad_retry: Option<&'static str>,
    },
    Null,
    Other,
}

impl<'a> Probe<'a> {
    /// The probe: every value validated as `serde_json`'s own parse validates it, so its
    /// error is the one to answer a body `serde_json` refuses with.
    pub(super) fn of(bytes: &'a [u8]) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let probe = de.deserialize_any(ProbeVisitor)?;
        de.end()?;
        Ok(probe)
    }

    pub(super) fn readable_id(&self) -> Option<RequestId> {
        self.id.as_ref()?.request_id()
    }

    /// What the layers after the HTTP check need of a message it passed.
    #[cfg(feature = "server-http")]
    pub(super) fn passed(&self) -> Passed {
        Passed {
            id: self.readable_id(),
            cancels: self
                .method
                .as_ref()
                .is_some_and(|m| m.is_str("notifications/cancelled")),
        }
    }

    /// The framework's answer, or `None` when the message is rmcp's to handle.
    pub(super) fn verdict(&self, bytes: &[u8], server: &Server) -> Option<Reply> {
        match self.shape {
            Shape::Batch => {
                return Some(Reply::error(
                    None,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: batches are not supported (MCP 2025-06-18 removed them)",
                ));
            }
            Shape::NotObject => {
                return Some(Reply::error(
                    None,
                    ErrorCode::INVALID_REQUEST,
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
        let invalid =
            |why: &'static str| Some(Reply::error(id.clone(), ErrorCode::INVALID_REQUEST, why));
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
            }) => return Some(Reply::error(Some(id?), ErrorCode::INVALID_PARAMS, *why)),
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
pub(super) fn malformed_call(id: RequestId, bytes: &[u8], server: &Server) -> Reply {
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
        .and_then(|m| m.get(era::PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str)
        .is_some_and(era::is_modern_version);
    if modern {
        era::Era::Modern {
            threshold: crate::context::LogThreshold::off(),
        }
        .stamp(&mut result.meta, server);
    } else {
        result.result_type = None;
    }
    Reply::ToolResult {
        id,
        result: Box::new(result),
    }
}

/// Skips any value, validating it as `serde_json` does (strings included).
pub(super) struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SniffVisitor)?;
        Ok(Skip)
    }
}

/// A value's [`Sniff`], what is inside it passed over with [`Skip`].
pub(super) struct SniffSeed;

impl<'de> DeserializeSeed<'de> for SniffSeed {
    type Value = Sniff<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Sniff<'de>, D::Error> {
        d.deserialize_any(SniffVisitor)
    }
}

pub(super) struct SniffVisitor;

impl<'de> Visitor<'de> for SniffVisitor {
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
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Sniff::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Sniff::Object)
    }
}

/// A member name, without allocating.
pub(super) enum Key {
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

pub(super) struct ProbeVisitor;

impl<'de> Visitor<'de> for ProbeVisitor {
    type Value = Probe<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe<'de>, A::Error> {
        let mut p = Probe::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Jsonrpc => p.jsonrpc = Some(map.next_value_seed(SniffSeed)?),
                Key::Id => p.id = Some(map.next_value_seed(SniffSeed)?),
                Key::Method => p.method = Some(map.next_value_seed(SniffSeed)?),
                Key::Params => p.params = Some(map.next_value_seed(ParamsSeed)?),
                Key::ResultOrError => {
                    map.next_value::<Skip>()?;
                    p.result_or_error = true;
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(p)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Probe<'de>, A::Error> {
        SniffVisitor.visit_seq(seq)?;
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

pub(super) fn not_object<'a>() -> Probe<'a> {
    Probe {
        shape: Shape::NotObject,
        ..Probe::default()
    }
}

/// `params`, what the probe does not read passed over with [`Skip`].
pub(super) struct ParamsSeed;

impl<'de> DeserializeSeed<'de> for ParamsSeed {
    type Value = Params<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Params<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed {
    type Value = Params<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("params")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params<'de>, A::Error> {
        let (mut name, mut arguments, mut bad_retry) = (None, None, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Name => name = Some(map.next_value_seed(SniffSeed)?),
                Key::Arguments => arguments = Some(map.next_value_seed(SniffSeed)?),
                Key::RequestState => {
                    if !matches!(map.next_value_seed(SniffSeed)?, Sniff::Str(_) | Sniff::Null) {
                        bad_retry = Some("Invalid params: requestState must be a string");
                    }
                }
                Key::InputResponses => {
                    if !matches!(map.next_value_seed(SniffSeed)?, Sniff::Object | Sniff::Null) {
                        bad_retry = Some("Invalid params: inputResponses must be an object");
                    }
                }
                _ => {
                    map.next_value::<Skip>()?;
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
        SniffVisitor.visit_seq(seq)?;
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
