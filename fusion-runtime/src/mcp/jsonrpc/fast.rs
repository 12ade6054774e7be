//! The fast probe: the common case — an object whose members the checks read are plain
//! (strings without escapes, integer ids) — read by hand in one pass over the bytes, without
//! `serde`'s visitors. It reads what [`Probe::quick`](super::probe::Probe) reads, or gives up.
//!
//! Its contract: `Some(probe)` only for a body the quick probe reads the same way, or one
//! `serde_json` refuses (which rmcp's parse refuses too, and the answer to that is the serde
//! probes' own, [`refused_by_rmcp`](super::refused_by_rmcp)). The members the checks read are
//! read exactly as `serde_json` reads them; the other values are checked as the quick probe
//! checks them (syntax, escapes, control characters; not a skipped string's UTF-8 or a
//! number's range), but for a `tools/call`'s `arguments` object, passed over by its brackets
//! and strings alone. So every body gets the answer the serde probes give it. `None`: the
//! caller asks the serde probes.

use std::borrow::Cow;
use std::ops::Range;

use super::probe::{Params, Passed, Probe, Shape, Sniff};
use super::scan::special;
use crate::server::Server;

/// The hot path's check of an HTTP body: what the layers after the check need when the fast
/// probe reads it and the framework has nothing to answer; `None` sends the caller to
/// [`check_body`](super::check_body). The fast probe passes some bodies `serde_json` refuses:
/// rmcp's parse then refuses them, and the answer to that is
/// [`refused_by_rmcp`](super::refused_by_rmcp)'s, the one `check_body` gives; a request whose
/// headers rmcp refuses (`Accept`, `Host`) goes to rmcp whatever its body, either way.
#[cfg(test)]
pub(crate) fn pass_fast(bytes: &[u8], server: &Server) -> Option<Passed> {
    pass_fast_call(bytes, server).map(|(passed, _)| passed)
}

/// [`pass_fast`], and where a plain `tools/call` keeps its tool name and arguments
/// ([`PlainCall`]): a body the framework may answer without rmcp.
pub(crate) fn pass_fast_call(bytes: &[u8], server: &Server) -> Option<(Passed, Option<PlainCall>)> {
    let (probe, scan) = scan(bytes)?;
    if probe.verdict(bytes, server).is_some() {
        return None;
    }
    let call = scan.plain_call(&probe);
    Some((probe.passed(), call))
}

/// A `tools/call` read whole by the fast probe: `jsonrpc`, `id`, `method` and `params` once
/// each and nothing else; `params` holds a plain `name` and, at most, an `arguments` object —
/// no `_meta` (so no progress token, no per-request version, no capabilities), no `task`, no
/// retry's state. Every byte but the arguments' was read as `serde_json` reads it; the
/// arguments are the caller's to parse (a body whose arguments `serde_json` refuses is
/// rmcp's, which refuses it too).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlainCall {
    /// The tool's name, without its quotes (a plain string: no escape to undo).
    pub(crate) name: Range<usize>,
    /// The `arguments` object, braces included; `None` when the call sent none.
    pub(crate) arguments: Option<Range<usize>>,
}

/// The fast probe of `bytes`, or `None` when it cannot be sure (see the module's contract).
#[cfg(test)]
pub(super) fn probe(bytes: &[u8]) -> Option<Probe<'_>> {
    scan(bytes).map(|(probe, _)| probe)
}

/// The [`PlainCall`] of `bytes` (whatever the server's tools), for the tests.
#[cfg(test)]
pub(super) fn plain_call(bytes: &[u8]) -> Option<PlainCall> {
    let (probe, scan) = scan(bytes)?;
    scan.plain_call(&probe)
}

fn scan(bytes: &[u8]) -> Option<(Probe<'_>, Scan<'_>)> {
    let mut s = Scan {
        b: bytes,
        i: 0,
        members: 0,
        params_members: 0,
        name: None,
        arguments: None,
    };
    let mut p = Probe {
        shape: Shape::Object,
        ..Probe::default()
    };
    s.ws();
    s.eat(b'{')?;
    s.ws();
    if !s.eat_if(b'}') {
        loop {
            let key = s.key()?;
            s.members = s.members.saturating_add(1);
            match key {
                b"jsonrpc" => p.jsonrpc = Some(s.sniff()?),
                b"id" => p.id = Some(s.sniff()?),
                b"method" => p.method = Some(s.sniff()?),
                b"params" => p.params = Some(s.params()?),
                b"result" | b"error" => {
                    s.skip()?;
                    p.result_or_error = true;
                }
                _ => s.skip()?,
            }
            if !s.next_member()? {
                break;
            }
        }
    }
    s.ws();
    (s.i == bytes.len()).then_some((p, s))
}

/// A cursor over the body.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// The top-level object's members, duplicates counted.
    members: u8,
    /// `params`' members, duplicates counted.
    params_members: u8,
    /// `params.name`'s span, when a plain string.
    name: Option<Range<usize>>,
    /// `params.arguments`' span, when an object.
    arguments: Option<Range<usize>>,
}

impl<'a> Scan<'a> {
    /// The [`PlainCall`] of a body scanned whole, if it is one.
    fn plain_call(&self, p: &Probe<'_>) -> Option<PlainCall> {
        let only_these = self.members == 4
            && p.jsonrpc.as_ref()?.is_str("2.0")
            && p.method.as_ref()?.is_str("tools/call")
            && p.readable_id().is_some();
        let params = match p.params.as_ref()? {
            Params::Object {
                name: Some(Sniff::Str(_)),
                arguments,
                bad_retry: None,
            } => matches!(arguments, None | Some(Sniff::Object)),
            _ => false,
        };
        let name = self.name.clone()?;
        let members = 1 + u8::from(self.arguments.is_some());
        (only_these && params && self.params_members == members).then(|| PlainCall {
            name,
            arguments: self.arguments.clone(),
        })
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.eat_if(c).then_some(())
    }

    fn eat_if(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.i += 1;
        }
        hit
    }

    /// After a member's value: `true` at `,` (another member follows), `false` at `}`.
    fn next_member(&mut self) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                self.ws();
                Some(true)
            }
            b'}' => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// A member name (ASCII, without escapes) and its `:`, the value's first byte next.
    fn key(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let rest = self.b.get(self.i..)?;
        let len = special(rest)?;
        let key = &rest[..len];
        if rest[len] != b'"' || !key.is_ascii() {
            return None;
        }
        self.i += len + 1;
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some(key)
    }

    /// A string without escapes or control characters, as `serde_json` reads it; `None`
    /// for any other.
    fn plain_string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let rest = self.b.get(self.i..)?;
        let len = special(rest)?;
        if rest[len] != b'"' {
            return None;
        }
        let s = std::str::from_utf8(&rest[..len]).ok()?;
        self.i += len + 1;
        Some(s)
    }

    /// A value's [`Sniff`]: plain strings, integers that are plainly an `i64`, the literals;
    /// objects and arrays passed over.
    fn sniff(&mut self) -> Option<Sniff<'a>> {
        Some(match self.peek()? {
            b'"' => Sniff::Str(Cow::Borrowed(self.plain_string()?)),
            b'{' => {
                self.skip()?;
                Sniff::Object
            }
            b'[' => {
                self.skip()?;
                Sniff::Array
            }
            b'n' => self.literal(b"null", Sniff::Null)?,
            b't' => self.literal(b"true", Sniff::Bool)?,
            b'f' => self.literal(b"false", Sniff::Bool)?,
            _ => Sniff::Int(self.integer()?),
        })
    }

    fn literal<T>(&mut self, word: &[u8], value: T) -> Option<T> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| {
            self.i = end;
            value
        })
    }

    /// An integer of at most 18 digits, without a fraction or exponent, not `-0`.
    fn integer(&mut self) -> Option<i64> {
        let negative = self.eat_if(b'-');
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let digits = self.b.get(start..self.i)?;
        if digits.is_empty() || digits.len() > 18 || (digits[0] == b'0' && digits.len() > 1) {
            return None;
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) || (negative && digits == b"0") {
            return None;
        }
        let n = std::str::from_utf8(digits).ok()?.parse::<i64>().ok()?;
        Some(if negative { -n } else { n })
    }

    /// `params`: an object's `name`, `arguments`, `requestState` and `inputResponses`.
    fn params(&mut self) -> Option<Params<'a>> {
        match self.peek()? {
            b'{' => {}
            b'n' => return self.literal(b"null", Params::Null),
            _ => {
                self.skip()?;
                return Some(Params::Other);
            }
        }
        self.i += 1;
        self.ws();
        let (mut name, mut arguments, mut bad_retry) = (None, None, None);
        if !self.eat_if(b'}') {
            loop {
                let key = self.key()?;
                self.params_members = self.params_members.saturating_add(1);
                let start = self.i;
                match key {
                    b"name" => {
                        let value = self.sniff()?;
                        if matches!(value, Sniff::Str(_)) {
                            self.name = Some(start + 1..self.i - 1);
                        }
                        name = Some(value);
                    }
                    b"arguments" => {
                        let value = match self.peek()? {
                            b'{' => {
                                self.pass_over_arguments()?;
                                Sniff::Object
                            }
                            _ => self.sniff()?,
                        };
                        if matches!(value, Sniff::Object) {
                            self.arguments = Some(start..self.i);
                        }
                        arguments = Some(value);
                    }
                    b"requestState" => {
                        if !matches!(self.sniff()?, Sniff::Str(_) | Sniff::Null) {
                            bad_retry = Some("Invalid params: requestState must be a string");
                        }
                    }
                    b"inputResponses" => {
                        if !matches!(self.sniff()?, Sniff::Object | Sniff::Null) {
                            bad_retry = Some("Invalid params: inputResponses must be an object");
                        }
                    }
                    _ => self.skip()?,
                }
                if !self.next_member()? {
                    break;
                }
            }
        }
        Some(Params::Object {
            name,
            arguments,
            bad_retry,
        })
    }

    /// Passes over a value, checking it as the quick probe does (`serde_json`'s
    /// `ignore_value`): its syntax, its strings' escapes and control characters, its numbers'
    /// grammar. Deeper than [`MAX_DEPTH`]: `None`.
    fn skip(&mut self) -> Option<()> {
        self.value(0)
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string::<true>(),
            b'n' => self.literal(b"null", ()),
            b't' => self.literal(b"true", ()),
            b'f' => self.literal(b"false", ()),
            b'-' | b'0'..=b'9' => self.number(),
            open @ (b'{' | b'[') => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                self.ws();
                if self.eat_if(close) {
                    return Some(());
                }
                loop {
                    if open == b'{' {
                        self.skip_string::<true>()?;
                        self.ws();
                        self.eat(b':')?;
                        self.ws();
                    }
                    self.value(depth + 1)?;
                    self.ws();
                    match self.peek()? {
                        b',' => {
                            self.i += 1;
                            self.ws();
                        }
                        c if c == close => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    /// Passes over the `arguments` object (most of a call's bytes) by its brackets and strings
    /// alone: arguments `serde_json` refuses pass, and rmcp's parse refuses them (see the
    /// module's contract). Unpaired brackets, a control character in a string, or nesting
    /// deeper than [`MAX_DEPTH`]: `None`.
    fn pass_over_arguments(&mut self) -> Option<()> {
        // One bit per open bracket, innermost lowest: set for `{`.
        let (mut open, mut depth) = (0u64, 0usize);
        loop {
            let c = self.peek()?;
            if c == b'"' {
                self.skip_string::<false>()?;
                continue;
            }
            self.i += 1;
            match c {
                b'{' | b'[' => {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    open = open << 1 | u64::from(c == b'{');
                    depth += 1;
                }
                b'}' | b']' => {
                    if depth == 0 || (open & 1 == 1) != (c == b'}') {
                        return None;
                    }
                    open >>= 1;
                    depth -= 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                _ => {}
            }
        }
    }

    /// A string: its escapes checked (not what a `\u` names) when `CHECKED`, else its
    /// escape's next byte skipped whatever it is; no control character.
    fn skip_string<const CHECKED: bool>(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let rest = self.b.get(self.i..)?;
            let at = special(rest)?;
            self.i += at + 1;
            match rest[at] {
                b'"' => return Some(()),
                b'\\' if !CHECKED => self.i += 1,
                b'\\' => match self.peek()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
                    b'u' => {
                        let hex = self.b.get(self.i + 1..self.i + 5)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        self.i += 5;
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    /// A number by JSON's grammar (its range unchecked).
    fn number(&mut self) -> Option<()> {
        self.eat_if(b'-');
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat_if(b'.') {
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }
}

/// How deep a passed-over value may nest before the serde probes take the body.
const MAX_DEPTH: usize = 64;
