//! HTTP's hot path: a plain `tools/call` — `jsonrpc`, `id`, `method` and
//! `params { name, arguments }` (and in a 2026-07-28 call `_meta`), nothing else — read by
//! `serde`'s derive in one pass, its
//! strings borrowed from the body and its arguments a [`RawValue`] (their syntax checked,
//! not parsed). Anything else is not plain and goes to the probe
//! ([`check_body`](super::check_body)): another member (`_meta`, `task`, a retry's state), a
//! duplicate, an escape in `jsonrpc`, `method` or the name, arguments that are not an object.
//!
//! Its contract: a body read as a plain call is one the probe passes, with the same
//! [`Passed`], and has nothing to answer — or one `serde_json`'s full parse refuses. Its
//! arguments are checked by `serde_json`'s `ignore_value` (syntax, escapes, control
//! characters), so a lone surrogate, a number out of range or nesting past `serde_json`'s
//! limit passes here; the arguments' own parse refuses it, the caller then hands the body to
//! rmcp, whose parse refuses it too, and the answer is the probe's
//! ([`refused_by_rmcp`](super::refused_by_rmcp)).

use std::marker::PhantomData;
use std::ops::Range;

use rmcp::model::RequestId;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::probe::{Passed, SniffSeed};

/// Where a plain call keeps its tool name and arguments in the body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlainCall {
    /// The tool's name, without its quotes (a plain string: no escape to undo).
    pub(crate) name: Range<usize>,
    /// The `arguments` object, braces included; `None` when the call sent none.
    pub(crate) arguments: Option<Range<usize>>,
    /// A 2026-07-28 call's `_meta` object, braces included ([`modern_call`]); `None` in a
    /// 2025 one's.
    pub(crate) meta: Option<Range<usize>>,
}

/// The body read as a plain call, with what the layers after the check need of it; `None`
/// when it is not one.
pub(crate) fn plain_call(bytes: &[u8]) -> Option<(Passed, PlainCall)> {
    read(bytes).filter(|(_, call)| call.meta.is_none())
}

/// The body read as a plain 2026-07-28 call: [`plain_call`]'s, and a `_meta` object in its
/// params (what the version requires of every request; its content is the room's to read).
/// `None` when it is not one.
pub(crate) fn modern_call(bytes: &[u8]) -> Option<(Passed, PlainCall)> {
    read(bytes).filter(|(_, call)| call.meta.is_some())
}

fn read(bytes: &[u8]) -> Option<(Passed, PlainCall)> {
    let Object(message): Object<Message<'_>> = serde_json::from_slice(bytes).ok()?;
    let Object(params) = message.params;
    let arguments = params.arguments.map(RawValue::get);
    let meta = params.meta.map(RawValue::get);
    let plain = message.jsonrpc == "2.0"
        && message.method == "tools/call"
        && arguments.is_none_or(|a| a.starts_with('{'))
        && meta.is_none_or(|m| m.starts_with('{'));
    if !plain {
        return None;
    }
    let call = PlainCall {
        name: span(bytes, params.name)?,
        arguments: match arguments {
            Some(a) => Some(span(bytes, a)?),
            None => None,
        },
        meta: match meta {
            Some(m) => Some(span(bytes, m)?),
            None => None,
        },
    };
    let passed = Passed {
        id: Some(message.id),
        cancels: false,
    };
    Some((passed, call))
}

/// Where `part`, borrowed from `bytes`, stands in it.
fn span(bytes: &[u8], part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= bytes.len()).then_some(start..end)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message<'a> {
    jsonrpc: &'a str,
    #[serde(deserialize_with = "request_id")]
    id: RequestId,
    method: &'a str,
    #[serde(borrow)]
    params: Object<Params<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params<'a> {
    name: &'a str,
    /// `null` is a value here, not an absent member: such a call is not plain.
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
    /// A 2026-07-28 call's; a 2025 call with one is not plain.
    #[serde(rename = "_meta", borrow, default, deserialize_with = "present")]
    meta: Option<&'a RawValue>,
}

/// A struct read from a JSON object only: `serde`'s derive reads a struct from an array of its
/// fields too (`"params": ["a_tool"]`), which rmcp's parse refuses, so such a call is not plain.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Fields(PhantomData)).map(Object)
    }
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// An id as the probe reads one ([`Sniff::request_id`](super::probe::Sniff::request_id)): a
/// string, or an integer that fits an `i64`. Any other value makes the call not plain.
fn request_id<'de, D: Deserializer<'de>>(d: D) -> Result<RequestId, D::Error> {
    SniffSeed
        .deserialize(d)?
        .request_id()
        .ok_or_else(|| D::Error::custom("an id that is neither a string nor an integer"))
}
