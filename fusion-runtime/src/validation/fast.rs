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
pub(crate) struct FastCheck {
    nodes: Vec<Node>,
    root: usize,
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
    /// `pattern` and every `format` but `email`, delegated.
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
    properties: Vec<(String, usize)>,
    required: Vec<String>,
    additional: Additional,
    any_of: Vec<usize>,
    one_of: Vec<usize>,
    all_of: Vec<usize>,
    ref_: Option<usize>,
}

impl Node {
    fn new(types: u8) -> Self {
        Node {
            types,
            enums: Vec::new(),
            min_length: 0,
            max_length: u64::MAX,
            email: None,
            string_delegate: None,
            int_bounds: None,
            number_delegate: None,
            min_items: 0,
            max_items: u64::MAX,
            items: None,
            object: false,
            properties: Vec::new(),
            required: Vec::new(),
            additional: Additional::Allowed,
            any_of: Vec::new(),
            one_of: Vec::new(),
            all_of: Vec::new(),
            ref_: None,
        }
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
                "pattern" => {
                    string.insert(key.clone(), value.clone());
                }
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
                        node.properties.push((name.clone(), i));
                    }
                }
                "required" => {
                    node.object = true;
                    node.required = value
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
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    if local.is_empty() || local.len() > 64 || domain.len() > 253 {
        return false;
    }
    let atext = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'/'
                    | b'='
                    | b'?'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'{'
                    | b'|'
                    | b'}'
                    | b'~'
            )
    };
    let local_ok = local
        .as_bytes()
        .split(|&b| b == b'.')
        .all(|atom| !atom.is_empty() && atom.iter().all(|&b| atext(b)));
    if !local_ok {
        return false;
    }
    let mut labels = 0;
    for label in domain.as_bytes().split(|&b| b == b'.') {
        let (Some(&first), Some(&last)) = (label.first(), label.last()) else {
            return false;
        };
        if label.len() > 63
            || !first.is_ascii_alphanumeric()
            || !last.is_ascii_alphanumeric()
            || !label
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || b == b'-')
            || (label.len() >= 4 && label[2] == b'-' && label[3] == b'-')
        {
            return false;
        }
        labels += 1;
    }
    labels >= 2
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
        Some(FastCheck {
            nodes: c.nodes,
            root,
        })
    }

    /// Whether the schema accepts `instance` (exactly what `Validator::is_valid` answers).
    pub(crate) fn accepts(&self, instance: &Value) -> bool {
        self.check(self.root, instance)
    }

    fn check(&self, i: usize, v: &Value) -> bool {
        let n = &self.nodes[i];
        if n.ref_.is_some_and(|r| !self.check(r, v)) {
            return false;
        }
        if n.types & type_of(v) == 0 {
            return false;
        }
        if !n.enums.iter().all(|items| items.contains(v)) {
            return false;
        }
        let ok = match v {
            Value::String(s) => {
                string_length_within(s, n.min_length, n.max_length)
                    && n.email
                        .as_ref()
                        .is_none_or(|d| is_plain_email(s) || d.is_valid(v))
                    && n.string_delegate.as_ref().is_none_or(|d| d.is_valid(v))
            }
            Value::Number(x) => {
                let int = x
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| x.as_u64().map(i128::from));
                match (n.int_bounds, int) {
                    (Some(b), Some(x)) => {
                        b.lo <= x && x <= b.hi && b.multiple.is_none_or(|m| x % m == 0)
                    }
                    _ => n.number_delegate.as_ref().is_none_or(|d| d.is_valid(v)),
                }
            }
            Value::Array(items) => {
                let len = items.len() as u64;
                n.min_items <= len
                    && len <= n.max_items
                    && n.items
                        .is_none_or(|it| items.iter().all(|item| self.check(it, item)))
            }
            Value::Object(obj) => !n.object || self.check_object(n, obj),
            Value::Null | Value::Bool(_) => true,
        };
        ok && n.all_of.iter().all(|&s| self.check(s, v))
            && (n.any_of.is_empty() || n.any_of.iter().any(|&s| self.check(s, v)))
            && (n.one_of.is_empty() || n.one_of.iter().filter(|&&s| self.check(s, v)).count() == 1)
    }

    fn check_object(&self, n: &Node, obj: &Map<String, Value>) -> bool {
        for (key, value) in obj {
            let ok = match n.properties.iter().find(|(name, _)| name == key) {
                Some(&(_, p)) => self.check(p, value),
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
        n.required.iter().all(|k| obj.contains_key(k))
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
    fn unknown_keywords_keep_the_validator() {
        assert!(FastCheck::compile(&json!({"type": "object", "patternProperties": {}})).is_none());
        assert!(FastCheck::compile(&json!({"enum": [1, 2]})).is_none());
        assert!(FastCheck::compile(&json!({"uniqueItems": true})).is_none());
    }
}
