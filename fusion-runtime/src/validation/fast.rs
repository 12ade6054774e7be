//! The fast path of validation: the schema a derive built from its rules, checked directly in
//! Rust on the parsed arguments, without the `jsonschema` validator.
//!
//! [`FastCheck::compile`] reads the annotated schema (the output of the derive's [`Rule`]s and
//! of `schemars` for the field types) once. It understands the keywords those two emit —
//! `type`, `enum`/`const` of strings, booleans and null, `properties`/`required`/
//! `additionalProperties`, `items`, `minItems`/`maxItems`, `minLength`/`maxLength`, the numeric
//! bounds, `multipleOf`, `pattern`, `format`, `anyOf`/`oneOf`/`allOf` and `$ref` into `$defs` —
//! and gives up ([`None`]) on any other keyword, so a type it cannot check fully keeps the
//! validator.
//!
//! Each check is exact, never an approximation: where the direct Rust check cannot decide a
//! case with certainty (a float against a bound, a `pattern`, a `format` other than the common
//! shape of an email address), it asks a small `jsonschema` validator compiled for that
//! keyword alone, so [`FastCheck::accepts`] agrees with `Validator::is_valid` by construction.
//! `tests/tests/fast_path_contract.rs` checks the agreement on generated arguments.
//!
//! [`Rule`]: crate::schema::Rule

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

mod typed;
pub use typed::{Probe, ProbeOpaque, ProbeTrusted, Trusted, Typed};

/// `type` as a bit set.
const NULL: u8 = 1;
const BOOLEAN: u8 = 1 << 1;
const INTEGER: u8 = 1 << 2;
const NUMBER: u8 = 1 << 3;
const STRING: u8 = 1 << 4;
const ARRAY: u8 = 1 << 5;
const OBJECT: u8 = 1 << 6;
const ANY: u8 = 0x7f;

/// Keywords that never change what validates.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
];

/// A compiled fast check of one schema.
///
/// Public only for the code `#[derive(ToolInput)]` writes (its typed check); not an API.
#[doc(hidden)]
pub struct FastCheck {
    nodes: Vec<Node>,
    root: usize,
    /// The typed check of a derived input, when its schema allows one ([`FastCheck::plan`]).
    typed: Option<typed::Plan>,
}

/// `additionalProperties`.
enum Additional {
    Allowed,
    Denied,
    Schema(usize),
}

/// One schema object, its keywords grouped by the instance type they apply to.
struct Node {
    /// `type` (every type when absent); a `false` schema is the empty set.
    types: u8,
    /// `enum` / `const` (all of them, each a list of strings, booleans or nulls).
    enums: Vec<Vec<Value>>,
    /// `minLength`, `maxLength` (characters).
    min_length: u64,
    max_length: u64,
    /// `format: email`.
    email: Option<jsonschema::Validator>,
    /// `pattern`, when it is a [`SimplePattern`].
    pattern: Option<SimplePattern>,
    /// Any other `pattern`, and every `format` but `email`, delegated.
    string_delegate: Option<jsonschema::Validator>,
    /// The numeric keywords as integers, when every one of them is an integer.
    int_bounds: Option<IntBounds>,
    /// Every numeric keyword, delegated (for non-integer instances or non-integer bounds).
    number_delegate: Option<jsonschema::Validator>,
    /// `minItems`, `maxItems`, `items`.
    min_items: u64,
    max_items: u64,
    items: Option<usize>,
    /// Whether the node has any object keyword.
    object: bool,
    /// `properties`, sorted by name (a `Map`'s own order), each with whether it is required.
    properties: Vec<(String, usize, bool)>,
    /// How many of `properties` are required.
    required_properties: usize,
    /// `required` names that are not in `properties`.
    required_other: Vec<String>,
    additional: Additional,
    any_of: Vec<usize>,
    one_of: Vec<usize>,
    all_of: Vec<usize>,
    ref_: Option<usize>,
    /// What [`FastCheck::check`] runs for this node, set once the whole tree is compiled.
    kind: Kind,
    /// No string keyword: any string passes them.
    plain_string: bool,
}

/// The shape of a node, for a check that skips what the node cannot hold.
///
/// A node without `$ref` and without `anyOf`/`oneOf`/`allOf` whose `type` is one type (with
/// or without `null`) is checked by the branch of that type alone: the other types fail at the
/// type test, and the combinators it lacks are vacuously true, so the answer is exactly the
/// general check's ([`FastCheck::check_general`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    General,
    String,
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    Boolean,
    Array,
    Object,
}

impl Node {
    fn new(types: u8) -> Self {
        Node {
            types,
            enums: Vec::new(),
            min_length: 0,
            max_length: u64::MAX,
            email: None,
            pattern: None,
            string_delegate: None,
            int_bounds: None,
            number_delegate: None,
            min_items: 0,
            max_items: u64::MAX,
            items: None,
            object: false,
            properties: Vec::new(),
            required_properties: 0,
            required_other: Vec::new(),
            additional: Additional::Allowed,
            any_of: Vec::new(),
            one_of: Vec::new(),
            all_of: Vec::new(),
            ref_: None,
            kind: Kind::General,
            plain_string: false,
        }
    }

    /// A node that only refers to another one (`{"$ref": …}` with annotations at most).
    fn is_pure_ref(&self) -> bool {
        self.ref_.is_some()
            && self.types == ANY
            && self.enums.is_empty()
            && self.min_length == 0
            && self.max_length == u64::MAX
            && self.email.is_none()
            && self.pattern.is_none()
            && self.string_delegate.is_none()
            && self.int_bounds.is_none()
            && self.number_delegate.is_none()
            && self.min_items == 0
            && self.max_items == u64::MAX
            && self.items.is_none()
            && !self.object
            && self.properties.is_empty()
            && self.required_other.is_empty()
            && matches!(self.additional, Additional::Allowed)
            && self.any_of.is_empty()
            && self.one_of.is_empty()
            && self.all_of.is_empty()
    }

    fn kind(&self) -> Kind {
        if self.ref_.is_some()
            || !self.any_of.is_empty()
            || !self.one_of.is_empty()
            || !self.all_of.is_empty()
        {
            return Kind::General;
        }
        match self.types & !NULL {
            STRING => Kind::String,
            INTEGER => Kind::Integer,
            t if t == NUMBER | INTEGER => Kind::Number,
            BOOLEAN => Kind::Boolean,
            ARRAY => Kind::Array,
            OBJECT => Kind::Object,
            _ => Kind::General,
        }
    }

    fn enums_accept(&self, v: &Value) -> bool {
        self.enums.iter().all(|items| match v {
            // A string equals only a string: compare the text alone.
            Value::String(s) => items.iter().any(|o| o.as_str() == Some(s.as_str())),
            _ => items.contains(v),
        })
    }
}

/// Integer bounds: `lo <= v <= hi`, `v % multiple == 0`.
#[derive(Clone, Copy)]
struct IntBounds {
    lo: i128,
    hi: i128,
    multiple: Option<i128>,
}

/// Builds the schema nodes.
struct Compiler<'a> {
    root: &'a Map<String, Value>,
    defs: Option<&'a Map<String, Value>>,
    nodes: Vec<Node>,
    /// `$defs` name → node, so recursive types compile once.
    refs: HashMap<&'a str, usize>,
}

fn delegate(schema: Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .ok()
}

fn as_i128(v: &Value) -> Option<i128> {
    v.as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
}

fn type_bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "integer" => INTEGER,
        "number" => NUMBER | INTEGER,
        "string" => STRING,
        "array" => ARRAY,
        "object" => OBJECT,
        _ => return None,
    })
}

impl<'a> Compiler<'a> {
    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn subschemas(&mut self, v: &'a Value) -> Option<Vec<usize>> {
        v.as_array()?.iter().map(|s| self.node(s)).collect()
    }

    fn resolve(&mut self, reference: &'a str) -> Option<usize> {
        let name = reference.strip_prefix("#/$defs/")?;
        if name.contains(['~', '/', '%']) {
            return None;
        }
        if let Some(&i) = self.refs.get(name) {
            return Some(i);
        }
        let target = self.defs?.get(name)?;
        // A placeholder first, so a recursive reference finds its index.
        let slot = self.push(Node::new(ANY));
        self.refs.insert(name, slot);
        let compiled = self.node(target)?;
        // The placeholder becomes a pure reference to the compiled node.
        self.nodes[slot].ref_ = Some(compiled);
        Some(slot)
    }

    /// Compiles one schema; `None` when it holds a keyword the fast path does not check.
    fn node(&mut self, schema: &'a Value) -> Option<usize> {
        let obj = match schema {
            Value::Bool(true) => return Some(self.push(Node::new(ANY))),
            Value::Bool(false) => return Some(self.push(Node::new(0))),
            Value::Object(obj) => obj,
            _ => return None,
        };
        let mut node = Node::new(ANY);
        let mut required: Vec<String> = Vec::new();
        let mut numeric = Map::new();
        let mut string = Map::new();
        for (key, value) in obj {
            match key.as_str() {
                k if ANNOTATIONS.contains(&k)
                    || k.starts_with(crate::schema::ANNOTATION_PREFIX) => {}
                // Only the root's `$defs`, read by `resolve`.
                "$defs" if std::ptr::eq(obj, self.root) => {}
                "type" => {
                    node.types = match value {
                        Value::String(t) => type_bit(t)?,
                        Value::Array(ts) => ts
                            .iter()
                            .try_fold(0, |acc, t| t.as_str().and_then(type_bit).map(|b| acc | b))?,
                        _ => return None,
                    }
                }
                "enum" => {
                    let items = value.as_array()?;
                    if !items.iter().all(plain_value) {
                        return None;
                    }
                    node.enums.push(items.clone());
                }
                "const" => {
                    if !plain_value(value) {
                        return None;
                    }
                    node.enums.push(vec![value.clone()]);
                }
                "minLength" => node.min_length = value.as_u64()?,
                "maxLength" => node.max_length = value.as_u64()?,
                "pattern" => match SimplePattern::parse(value.as_str()?) {
                    Some(p) => node.pattern = Some(p),
                    None => {
                        string.insert(key.clone(), value.clone());
                    }
                },
                "format" => {
                    if value.as_str()? == "email" {
                        node.email = Some(delegate(serde_json::json!({ "format": "email" }))?);
                    } else {
                        string.insert(key.clone(), value.clone());
                    }
                }
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
                    if !value.is_number() {
                        return None;
                    }
                    numeric.insert(key.clone(), value.clone());
                }
                "minItems" => node.min_items = value.as_u64()?,
                "maxItems" => node.max_items = value.as_u64()?,
                "items" => node.items = Some(self.node(value)?),
                "properties" => {
                    node.object = true;
                    for (name, sub) in value.as_object()? {
                        let i = self.node(sub)?;
                        node.properties.push((name.clone(), i, false));
                    }
                }
                "required" => {
                    node.object = true;
                    required = value
                        .as_array()?
                        .iter()
                        .map(|k| k.as_str().map(str::to_owned))
                        .collect::<Option<_>>()?;
                }
                "additionalProperties" => {
                    node.object = true;
                    node.additional = match value {
                        Value::Bool(true) => Additional::Allowed,
                        Value::Bool(false) => Additional::Denied,
                        other => Additional::Schema(self.node(other)?),
                    }
                }
                "anyOf" => node.any_of = self.subschemas(value)?,
                "oneOf" => node.one_of = self.subschemas(value)?,
                "allOf" => node.all_of = self.subschemas(value)?,
                "$ref" => node.ref_ = Some(self.resolve(value.as_str()?)?),
                _ => return None,
            }
        }
        node.properties.sort_by(|a, b| a.0.cmp(&b.0));
        node.properties.dedup_by(|a, b| a.0 == b.0);
        required.sort();
        required.dedup();
        for name in required {
            match node
                .properties
                .binary_search_by(|p| p.0.as_str().cmp(&name))
            {
                Ok(i) => {
                    node.properties[i].2 = true;
                    node.required_properties += 1;
                }
                Err(_) => node.required_other.push(name),
            }
        }
        if !string.is_empty() {
            node.string_delegate = Some(delegate(Value::Object(string))?);
        }
        if !numeric.is_empty() {
            node.int_bounds = int_bounds(&numeric);
            node.number_delegate = Some(delegate(Value::Object(numeric))?);
        }
        Some(self.push(node))
    }
}

/// Only strings, booleans and null compare the same under `==` and under JSON Schema equality
/// (numbers do not: `1` and `1.0` are equal in JSON Schema).
fn plain_value(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Bool(_) | Value::Null)
}

/// The numeric keywords as one integer interval and modulus, when each of them is an integer.
fn int_bounds(numeric: &Map<String, Value>) -> Option<IntBounds> {
    let mut b = IntBounds {
        lo: i128::MIN,
        hi: i128::MAX,
        multiple: None,
    };
    for (k, v) in numeric {
        let n = as_i128(v)?;
        match k.as_str() {
            "minimum" => b.lo = b.lo.max(n),
            "maximum" => b.hi = b.hi.min(n),
            "exclusiveMinimum" => b.lo = b.lo.max(n + 1),
            "exclusiveMaximum" => b.hi = b.hi.min(n - 1),
            "multipleOf" if n > 0 => b.multiple = Some(n),
            _ => return None,
        }
    }
    Some(b)
}

/// `type: integer` as JSON Schema reads it: a float with no fractional part is an integer.
fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn type_of(v: &Value) -> u8 {
    match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(n) if is_integer(n) => INTEGER,
        Value::Number(_) => NUMBER,
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    }
}

/// Whether `s` has the everyday shape of an email address — `local@label.label…` in ASCII
/// letters, digits and the usual punctuation — which `jsonschema`'s `email` format (the
/// `email_address` crate, then a hostname check of the domain) accepts. `false` means "not
/// decided here", never "invalid": the caller then asks the validator.
///
/// Why each accepted string is valid there: no space, so no display name; one `@`; the local
/// part is a dot-atom of 1..=64 ASCII `atext` bytes (no quotes); the domain has at least two
/// labels of 1..=63 ASCII letters, digits and inner hyphens, is at most 253 bytes and has no
/// `--` in positions 3–4 (so no A-label for the hostname check to decode).
pub(crate) fn is_plain_email(s: &str) -> bool {
    let bytes = s.as_bytes();
    let class = |i: usize| bytes.get(i).map_or(0, |&b| EMAIL_BYTES[usize::from(b)]);
    // The local part: atoms of `atext` joined by single dots, up to the `@`.
    let mut i = 0;
    let mut atom_start = 0;
    let at = loop {
        if class(i) & ATEXT != 0 {
            i += 1;
            continue;
        }
        if i == atom_start {
            return false;
        }
        match bytes.get(i) {
            Some(b'.') => {
                i += 1;
                atom_start = i;
            }
            Some(b'@') => break i,
            _ => return false,
        }
    };
    if at > 64 || bytes.len() - at - 1 > 253 {
        return false;
    }
    // The domain: labels joined by single dots, to the end.
    let mut start = at + 1;
    let mut labels = 0;
    loop {
        let mut end = start;
        while class(end) & LABEL != 0 {
            end += 1;
        }
        let len = end - start;
        let (Some(&first), Some(&last)) = (bytes.get(start), bytes.get(end.wrapping_sub(1))) else {
            return false;
        };
        if len == 0
            || len > 63
            || !first.is_ascii_alphanumeric()
            || !last.is_ascii_alphanumeric()
            || (len >= 4 && bytes[start + 2] == b'-' && bytes[start + 3] == b'-')
        {
            return false;
        }
        labels += 1;
        match bytes.get(end) {
            Some(b'.') => start = end + 1,
            None => return labels >= 2,
            Some(_) => return false,
        }
    }
}

const ATEXT: u8 = 1;
/// [`EMAIL_BYTES`]: a byte of a domain label (ASCII letter, digit, `-`).
const LABEL: u8 = 2;

/// What each byte may be in [`is_plain_email`].
static EMAIL_BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            t[b] = ATEXT | LABEL;
        }
        b += 1;
    }
    let punct = b"!#$%&'*+-/=?^_`{|}~";
    let mut i = 0;
    while i < punct.len() {
        t[punct[i] as usize] |= ATEXT;
        i += 1;
    }
    t[b'-' as usize] |= LABEL;
    t
};

/// A `pattern` of the shape most ID and code patterns have — `^`, then a sequence of ASCII
/// literals and ASCII bracket classes (`[a-z0-9_]`, `\d`), each with an optional quantifier,
/// then an optional `$` — matched directly, without the regex engine.
///
/// Exact under ECMA-262 (what `jsonschema` implements): every atom matches one ASCII
/// character, so a UTF-16 code unit, a `char` and a byte are the same unit for it and a
/// non-ASCII character matches nothing; `$` without the `m` flag is the end of the string
/// only. The sequence is matched without backtracking, which is exact only when each piece of
/// variable length is the last or is followed by a piece of at least one character whose set
/// is disjoint from its own: it must then take exactly its run. Any other pattern is `None`
/// (the validator's matcher is used).
#[derive(Debug)]
pub(crate) struct SimplePattern {
    /// The leading literal characters, compared at once.
    prefix: Vec<u8>,
    pieces: Vec<Piece>,
    anchored_end: bool,
    /// For each byte, bit `i` set when piece `i`'s atom matches it (never for non-ASCII).
    table: Box<[u16; 256]>,
}

#[derive(Clone, Copy, Debug)]
struct Piece {
    /// The ASCII characters the atom matches, one bit each.
    set: u128,
    min: usize,
    max: usize,
}

/// The most pieces a simple pattern may have.
const MAX_PIECES: usize = 16;

impl SimplePattern {
    pub(crate) fn parse(pattern: &str) -> Option<SimplePattern> {
        let mut rest = pattern.strip_prefix('^')?.as_bytes();
        let mut pieces: Vec<Piece> = Vec::new();
        let mut anchored_end = false;
        while let Some(&c) = rest.first() {
            let set = match c {
                b'$' if rest.len() == 1 => {
                    anchored_end = true;
                    rest = &rest[1..];
                    continue;
                }
                b'[' => {
                    let end = rest.iter().position(|&b| b == b']')?;
                    let set = class_set(&rest[1..end])?;
                    rest = &rest[end + 1..];
                    set
                }
                b'\\' => {
                    if rest.get(1) != Some(&b'd') {
                        return None;
                    }
                    rest = &rest[2..];
                    digits()
                }
                c if c.is_ascii_alphanumeric() || b"_-:@/=,#%&~!;<>'\" ".contains(&c) => {
                    rest = &rest[1..];
                    1u128 << c
                }
                _ => return None,
            };
            let (min, max, used) = quantifier(rest)?;
            rest = &rest[used..];
            pieces.push(Piece { set, min, max });
            if pieces.len() > MAX_PIECES {
                return None;
            }
        }
        // Deterministic only when each variable piece must take its whole run.
        for (i, p) in pieces.iter().enumerate() {
            if p.min != p.max
                && let Some(next) = pieces.get(i + 1)
                && (next.min == 0 || next.set & p.set != 0)
            {
                return None;
            }
        }
        let literals = pieces
            .iter()
            .take_while(|p| p.min == 1 && p.max == 1 && p.set.count_ones() == 1)
            .count();
        let prefix = pieces
            .drain(..literals)
            .map(|p| p.set.trailing_zeros() as u8)
            .collect();
        let mut table = Box::new([0u16; 256]);
        for (i, p) in pieces.iter().enumerate() {
            for b in 0..128u8 {
                if p.set & (1u128 << b) != 0 {
                    table[usize::from(b)] |= 1 << i;
                }
            }
        }
        Some(SimplePattern {
            prefix,
            pieces,
            anchored_end,
            table,
        })
    }

    pub(crate) fn is_match(&self, s: &str) -> bool {
        let bytes = s.as_bytes();
        if !bytes.starts_with(&self.prefix) {
            return false;
        }
        let mut pos = self.prefix.len();
        for (i, p) in self.pieces.iter().enumerate() {
            let bit = 1u16 << i;
            let last = i + 1 == self.pieces.len();
            let limit = if p.min == p.max || !last || self.anchored_end {
                p.max
            } else {
                // The last piece of a pattern without `$` needs only its minimum.
                p.min
            };
            let stop = bytes.len().min(pos.saturating_add(limit).saturating_add(1));
            let run = bytes
                .get(pos..stop)
                .unwrap_or_default()
                .iter()
                .take_while(|&&b| self.table[usize::from(b)] & bit != 0)
                .count();
            if run < p.min {
                return false;
            }
            let take = if p.min == p.max {
                p.min
            } else if run > limit {
                // The next character is in this set, so not in the next piece's (disjoint):
                // no way to stop here.
                if !last || self.anchored_end {
                    return false;
                }
                limit
            } else {
                run
            };
            pos += take;
        }
        !self.anchored_end || pos == bytes.len()
    }
}

fn digits() -> u128 {
    (b'0'..=b'9').fold(0, |acc, b| acc | 1u128 << b)
}

/// The set of a bracket class's body: ASCII letters, digits, `_`, `.`, ranges between two
/// letters or digits, `\d`, and `-` first or last. No negation, no other escape.
fn class_set(body: &[u8]) -> Option<u128> {
    if body.is_empty() || body[0] == b'^' {
        return None;
    }
    let plain = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let mut set = 0u128;
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c == b'\\' {
            if body.get(i + 1) != Some(&b'd') || body.get(i + 2) == Some(&b'-') {
                return None;
            }
            set |= digits();
            i += 2;
        } else if c == b'-' {
            if i != 0 && i + 1 != body.len() {
                return None;
            }
            set |= 1u128 << b'-';
            i += 1;
        } else if body.get(i + 1) == Some(&b'-') && i + 2 < body.len() {
            let hi = body[i + 2];
            let same_kind = (c.is_ascii_digit() && hi.is_ascii_digit())
                || (c.is_ascii_lowercase() && hi.is_ascii_lowercase())
                || (c.is_ascii_uppercase() && hi.is_ascii_uppercase());
            if !same_kind || c > hi {
                return None;
            }
            set |= (c..=hi).fold(0, |acc, b| acc | 1u128 << b);
            i += 3;
        } else if plain(c) {
            set |= 1u128 << c;
            i += 1;
        } else {
            return None;
        }
    }
    Some(set)
}

/// `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}` (greedy only) → (min, max, bytes used).
fn quantifier(rest: &[u8]) -> Option<(usize, usize, usize)> {
    let (min, max, used) = match rest.first() {
        Some(b'?') => (0, 1, 1),
        Some(b'*') => (0, usize::MAX, 1),
        Some(b'+') => (1, usize::MAX, 1),
        Some(b'{') => {
            let end = rest.iter().position(|&b| b == b'}')?;
            let body = std::str::from_utf8(&rest[1..end]).ok()?;
            let num = |s: &str| -> Option<usize> {
                if s.is_empty() || s.len() > 6 || !s.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                s.parse().ok()
            };
            let (min, max) = match body.split_once(',') {
                None => {
                    let n = num(body)?;
                    (n, n)
                }
                Some((lo, "")) => (num(lo)?, usize::MAX),
                Some((lo, hi)) => (num(lo)?, num(hi)?),
            };
            if min > max {
                return None;
            }
            (min, max, end + 1)
        }
        _ => (1, 1, 0),
    };
    // A lazy (`?`) or possessive suffix, or a second quantifier: not handled.
    if used > 0 && matches!(rest.get(used), Some(b'?' | b'+' | b'*' | b'{')) {
        return None;
    }
    Some((min, max, used))
}

fn string_length_within(s: &str, min: u64, max: u64) -> bool {
    if min == 0 && max == u64::MAX {
        return true;
    }
    let bytes = s.len() as u64;
    // A character takes one to four bytes.
    if bytes < min || bytes.div_ceil(4) > max {
        return false;
    }
    if min <= bytes.div_ceil(4) && bytes <= max {
        return true;
    }
    let chars = s.chars().count() as u64;
    min <= chars && chars <= max
}

/// The string keywords of `n` on `s` (the instance `v`).
fn string_ok(n: &Node, s: &str, v: &Value) -> bool {
    string_length_within(s, n.min_length, n.max_length)
        && n.pattern.as_ref().is_none_or(|p| p.is_match(s))
        && n.email
            .as_ref()
            .is_none_or(|d| is_plain_email(s) || d.is_valid(v))
        && n.string_delegate.as_ref().is_none_or(|d| d.is_valid(v))
}

/// The numeric keywords of `n` on `x` (the instance `v`).
fn number_ok(n: &Node, x: &Number, v: &Value) -> bool {
    let int = x
        .as_i64()
        .map(i128::from)
        .or_else(|| x.as_u64().map(i128::from));
    match (n.int_bounds, int) {
        (Some(b), Some(x)) => b.lo <= x && x <= b.hi && b.multiple.is_none_or(|m| x % m == 0),
        _ => n.number_delegate.as_ref().is_none_or(|d| d.is_valid(v)),
    }
}

/// Points every reference to a pure `$ref` node (and the root) at the node the chain ends
/// at, so a check does not hop through `$ref`s at run time; returns the new root. A chain
/// that loops is left as it is.
fn link(nodes: &mut [Node], root: usize) -> usize {
    let target = |nodes: &[Node], mut i: usize| {
        for _ in 0..=nodes.len() {
            match nodes[i].ref_ {
                Some(r) if nodes[i].is_pure_ref() => i = r,
                _ => return i,
            }
        }
        i
    };
    let targets: Vec<usize> = (0..nodes.len()).map(|i| target(nodes, i)).collect();
    let t = |i: &mut usize| *i = targets[*i];
    for n in nodes.iter_mut() {
        // A pure `$ref` keeps its own link: it is no longer reached, or it is in a loop.
        if !n.is_pure_ref()
            && let Some(r) = &mut n.ref_
        {
            t(r);
        }
        if let Some(it) = &mut n.items {
            t(it);
        }
        if let Additional::Schema(s) = &mut n.additional {
            t(s);
        }
        for p in &mut n.properties {
            t(&mut p.1);
        }
        n.any_of.iter_mut().for_each(t);
        n.one_of.iter_mut().for_each(t);
        n.all_of.iter_mut().for_each(t);
    }
    targets[root]
}

impl FastCheck {
    /// The fast check of an annotated root schema; `None` when it holds a keyword the fast
    /// path does not check (the validator then checks every call).
    pub(crate) fn compile(root: &Value) -> Option<FastCheck> {
        let root_obj = root.as_object()?;
        let mut c = Compiler {
            root: root_obj,
            defs: root_obj.get("$defs").and_then(Value::as_object),
            nodes: Vec::new(),
            refs: HashMap::new(),
        };
        let root = c.node(root)?;
        let mut nodes = c.nodes;
        let root = link(&mut nodes, root);
        for n in &mut nodes {
            n.kind = n.kind();
            n.plain_string = n.min_length == 0
                && n.max_length == u64::MAX
                && n.pattern.is_none()
                && n.email.is_none()
                && n.string_delegate.is_none();
        }
        Some(FastCheck {
            nodes,
            root,
            typed: None,
        })
    }

    /// Whether the schema accepts `instance` (exactly what `Validator::is_valid` answers).
    pub(crate) fn accepts(&self, instance: &Value) -> bool {
        self.check(self.root, instance)
    }

    /// The check of node `i`: the common leaf shapes here, inlined into the object and array
    /// walks; every other case in [`FastCheck::check_rest`].
    #[inline(always)]
    fn check(&self, i: usize, v: &Value) -> bool {
        let n = &self.nodes[i];
        match (n.kind, v) {
            (Kind::String, Value::String(s)) => {
                (n.enums.is_empty() || n.enums_accept(v)) && (n.plain_string || string_ok(n, s, v))
            }
            (Kind::Integer, Value::Number(x)) if n.enums.is_empty() => {
                match (n.int_bounds, x.as_i64()) {
                    (Some(b), Some(x)) => {
                        let x = i128::from(x);
                        b.lo <= x && x <= b.hi && b.multiple.is_none_or(|m| x % m == 0)
                    }
                    _ => is_integer(x) && number_ok(n, x, v),
                }
            }
            _ => self.check_rest(n, v),
        }
    }

    #[inline(never)]
    fn check_rest(&self, n: &Node, v: &Value) -> bool {
        let nullable = n.types & NULL != 0;
        match (n.kind, v) {
            (Kind::General, _) => self.check_general(n, v),
            (_, Value::Null) => nullable && n.enums_accept(v),
            (Kind::String, Value::String(s)) => n.enums_accept(v) && string_ok(n, s, v),
            (Kind::Number, Value::Number(x)) => n.enums_accept(v) && number_ok(n, x, v),
            (Kind::Integer, Value::Number(x)) => {
                is_integer(x) && n.enums_accept(v) && number_ok(n, x, v)
            }
            (Kind::Boolean, Value::Bool(_)) => n.enums_accept(v),
            (Kind::Array, Value::Array(items)) => n.enums_accept(v) && self.array_ok(n, items),
            (Kind::Object, Value::Object(obj)) => {
                n.enums_accept(v) && (!n.object || self.check_object(n, obj))
            }
            _ => false,
        }
    }

    /// Every keyword of a node, for any instance.
    fn check_general(&self, n: &Node, v: &Value) -> bool {
        if n.ref_.is_some_and(|r| !self.check(r, v)) {
            return false;
        }
        if n.types & type_of(v) == 0 {
            return false;
        }
        if !n.enums_accept(v) {
            return false;
        }
        let ok = match v {
            Value::String(s) => string_ok(n, s, v),
            Value::Number(x) => number_ok(n, x, v),
            Value::Array(items) => self.array_ok(n, items),
            Value::Object(obj) => !n.object || self.check_object(n, obj),
            Value::Null | Value::Bool(_) => true,
        };
        ok && n.all_of.iter().all(|&s| self.check(s, v))
            && (n.any_of.is_empty() || n.any_of.iter().any(|&s| self.check(s, v)))
            && (n.one_of.is_empty() || n.one_of.iter().filter(|&&s| self.check(s, v)).count() == 1)
    }

    fn array_ok(&self, n: &Node, items: &[Value]) -> bool {
        let len = items.len() as u64;
        n.min_items <= len
            && len <= n.max_items
            && n.items
                .is_none_or(|it| items.iter().all(|item| self.check(it, item)))
    }

    fn check_object(&self, n: &Node, obj: &Map<String, Value>) -> bool {
        let props = &n.properties;
        // `properties` is sorted as a `BTreeMap` iterates: usually the next one is the key.
        let mut next = 0;
        let mut required = 0;
        for (key, value) in obj {
            let found = match props.get(next) {
                Some(p) if p.0 == *key => Some(next),
                _ => props.binary_search_by(|p| p.0.as_str().cmp(key)).ok(),
            };
            let ok = match found {
                Some(i) => {
                    next = i + 1;
                    let (_, p, is_required) = props[i];
                    required += usize::from(is_required);
                    self.check(p, value)
                }
                None => match n.additional {
                    Additional::Allowed => true,
                    Additional::Denied => false,
                    Additional::Schema(s) => self.check(s, value),
                },
            };
            if !ok {
                return false;
            }
        }
        // Keys of a `Map` are unique, so each required property was counted at most once.
        required == n.required_properties && n.required_other.iter().all(|k| obj.contains_key(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn agree(schema: &Value, instances: &[Value]) {
        let fast = FastCheck::compile(schema).expect("supported schema");
        let slow = delegate(schema.clone()).expect("compiles");
        for i in instances {
            assert_eq!(fast.accepts(i), slow.is_valid(i), "{schema} on {i}");
        }
    }

    #[test]
    fn plain_emails_are_valid_emails() {
        let slow = delegate(json!({"format": "email"})).expect("compiles");
        for s in [
            "a@b.co",
            "first.last+tag@mail.example.com",
            "x_y@a-b.io",
            "a@b.c",
        ] {
            assert!(is_plain_email(s), "{s}");
            assert!(slow.is_valid(&json!(s)), "{s}");
        }
        for s in [
            "a@b",
            "a..b@c.d",
            ".a@b.c",
            "a@-b.c",
            "a@b-.c",
            "a@xn--a.com",
            "\"q\"@b.c",
            "a b@c.d",
            "",
        ] {
            assert!(!is_plain_email(s), "{s}");
        }
    }

    proptest::proptest! {
        // In CI a failure is reported, never written into the source tree.
        #![proptest_config(proptest::test_runner::Config {
            failure_persistence: if std::env::var_os("CI").is_some() { None } else { proptest::test_runner::Config::default().failure_persistence },
            ..proptest::test_runner::Config::default()
        })]

        /// Whatever the direct email check accepts, the validator's `email` format accepts.
        #[test]
        fn a_plain_email_is_a_valid_email(s in "[a-z0-9.@\\-_+\"é ]{0,12}(@[a-z0-9.\\-]{0,10})?") {
            let slow = delegate(json!({"format": "email"})).expect("compiles");
            if is_plain_email(&s) {
                proptest::prop_assert!(slow.is_valid(&json!(s)), "{s:?}");
            }
        }
    }

    #[test]
    fn keywords_agree_with_the_validator() {
        agree(
            &json!({"type": "object", "properties": {
                "n": {"type": ["integer", "null"], "minimum": 1, "exclusiveMaximum": 10, "multipleOf": 3},
                "f": {"type": "number", "maximum": 2.5},
                "s": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^a"},
                "e": {"enum": ["x", "y"]},
                "a": {"type": "array", "items": {"type": "string"}, "maxItems": 1}
            }, "required": ["n"], "additionalProperties": false}),
            &[
                json!({"n": 3}),
                json!({"n": 3.0}),
                json!({"n": 4}),
                json!({"n": 9}),
                json!({"n": 12}),
                json!({"n": null}),
                json!({}),
                json!({"n": 3, "z": 1}),
                json!({"n": 3, "f": 2.5}),
                json!({"n": 3, "f": 2.6}),
                json!({"n": 3, "f": 3}),
                json!({"n": 3, "s": "ab"}),
                json!({"n": 3, "s": "ba"}),
                json!({"n": 3, "s": "aéé"}),
                json!({"n": 3, "s": "aéééé"}),
                json!({"n": 3, "e": "x"}),
                json!({"n": 3, "e": "z"}),
                json!({"n": 3, "a": ["x"]}),
                json!({"n": 3, "a": ["x", "y"]}),
                json!({"n": 3, "a": [1]}),
            ],
        );
    }

    #[test]
    fn refs_and_any_of_agree() {
        agree(
            &json!({"$defs": {"L": {"type": "object", "properties": {"q": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}}, "additionalProperties": false}},
                "type": "object", "properties": {"l": {"anyOf": [{"$ref": "#/$defs/L"}, {"type": "null"}]}}}),
            &[
                json!({"l": null}),
                json!({"l": {"q": 1}}),
                json!({"l": {"q": 256}}),
                json!({"l": {"q": -1}}),
                json!({"l": {"r": 1}}),
                json!({"l": 5}),
            ],
        );
    }

    #[test]
    fn simple_patterns_agree_with_the_validator() {
        let texts = [
            "",
            "a",
            "acc_",
            "acc_abc123",
            "acc_abcdef",
            "acc_abcde",
            "acc_abcdefghijkl",
            "acc_abcdefghijklm",
            "acc_ABCDEF",
            "acc_abcdef\n",
            "acc_abcdéf",
            "acc_abcdef1é",
            "xacc_abcdef",
            "SKU-1",
            "SKU-123",
            "SKU-1234",
            "SKU-",
            "SKU-١",
            "ab-12",
            "ab-",
            "a.b",
            "AB12",
            "ab_12",
            "-x",
            "x-",
            "é",
            "a\nb",
            "😀",
            "aa",
            "aaa",
            "a1b2",
        ];
        for pattern in [
            "^acc_[a-z0-9]{6,12}$",
            "^acc_[a-z0-9]{6,12}",
            "^SKU-\\d{1,3}$",
            "^[a-z]+-[0-9]+$",
            "^[A-Z]{2}[0-9]{2}$",
            "^[a-z._]+$",
            "^[-a-z]+$",
            "^[a-z-]*$",
            "^a{2,}$",
            "^a?$",
            "^$",
            "^[a-z]*[0-9]+$",
            "^[\\dA-F]+$",
        ] {
            let simple = SimplePattern::parse(pattern).expect(pattern);
            let slow = delegate(json!({ "pattern": pattern })).expect("compiles");
            for t in texts {
                assert_eq!(
                    simple.is_match(t),
                    slow.is_valid(&json!(t)),
                    "{pattern} on {t:?}"
                );
            }
        }
        // Shapes the direct matcher does not decide keep the validator's matcher.
        for pattern in [
            "acc_[a-z]+",
            "^[a-z]{2}-?[0-9]*$",
            "^[a-z]*[a-z0-9]+$",
            "^[a-z]*$x",
            "^[^a-z]+$",
            "^a.b$",
            "^\\w+$",
            "^(ab)+$",
            "^a|b$",
            "^a+?$",
            "^[a-z]*",
            "^[a-z]*a$",
        ] {
            if let Some(simple) = SimplePattern::parse(pattern) {
                let slow = delegate(json!({ "pattern": pattern })).expect("compiles");
                for t in texts {
                    assert_eq!(
                        simple.is_match(t),
                        slow.is_valid(&json!(t)),
                        "{pattern} on {t:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn unknown_keywords_keep_the_validator() {
        assert!(FastCheck::compile(&json!({"type": "object", "patternProperties": {}})).is_none());
        assert!(FastCheck::compile(&json!({"enum": [1, 2]})).is_none());
        assert!(FastCheck::compile(&json!({"uniqueItems": true})).is_none());
    }
}
