//! The invalid path: `jsonschema` errors → [`Issue`]s of their SPEC §4 kind, with the value
//! sent and the expected text the schema implies.

use std::borrow::Cow;
use std::collections::HashMap;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind as K;
use jsonschema::paths::LocationSegment;
use serde_json::Value;

use super::rules::{self, enum_const, length, pattern, properties, types};
use super::{
    Format, Issue, IssueKind, IssuePath, MAX_COLLECTED_ISSUES, MAX_OBJECT_BYTES, MAX_OBJECT_DEPTH,
    MAX_OBJECT_KEYS, Measure, ValidationReport,
};
use crate::schema::{EXPECTED_KEY, KEYS_KEY, ref_target, resolve, unwrap_nullable};

/// How deep nested unions are followed before giving up.
const MAX_DEPTH: usize = 32;

/// Longest message kept from a `jsonschema` or serde error.
pub(crate) const MAX_MESSAGE: usize = 160;

/// The annotated schema as the mapping reads it, once per type: one node per subschema an
/// instance path reaches (through `properties`, `items` and `additionalProperties`, past
/// `$ref`s and `Option`'s `anyOf: [T, null]`); the root schema is node 0.
pub struct SchemaIndex {
    nodes: Vec<Node>,
}

struct Node {
    /// The author's expected text.
    expected: Option<String>,
    /// What the field takes, in words ([`describe`]).
    words: Cow<'static, str>,
    /// What each item of an array of objects takes (`an object with: …`), for its too-few
    /// line.
    each: Option<String>,
    shapes: Vec<String>,
    /// The `properties`, sorted by name.
    keys: Vec<Key>,
    items: Option<usize>,
    /// An object `additionalProperties`.
    additional: Option<usize>,
    /// The keys the object accepts, in declared order.
    known: Vec<String>,
    /// The options of a union of constants (a documented Rust enum), worded as an enum.
    options: Option<Vec<Value>>,
}

struct Key {
    name: String,
    node: usize,
    /// The first position of the name in the declared order.
    position: Option<usize>,
}

impl SchemaIndex {
    /// The index of the annotated schema `root`.
    pub fn new<'a>(root: &'a Value) -> SchemaIndex {
        // Each subschema gets one node, whatever the paths that reach it (recursive types
        // reach the same ones again); the pointers are only compared.
        // Each found subschema's location (the first path that reached it), for the words
        // that name where the schema lists an object's keys.
        let mut ids: HashMap<*const Value, usize> = HashMap::new();
        let mut found: Vec<(&'a Value, String)> = vec![(root, "#".to_owned())];
        ids.insert(root, 0);
        let mut nodes = Vec::new();
        while let Some((schema, at)) = found.get(nodes.len()).cloned() {
            let (s, s_at) = unwrap_nullable_at(root, schema, &at);
            let mut id = |v: &'a Value, at: String| -> usize {
                *ids.entry(v).or_insert_with(|| {
                    found.push((v, at));
                    found.len() - 1
                })
            };
            let mut keys: Vec<Key> = match s.get("properties") {
                Some(Value::Object(props)) => props
                    .iter()
                    .map(|(name, p)| Key {
                        name: name.clone(),
                        node: id(p, property_at(&s_at, name)),
                        position: None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            // The keys in declared order: `x-fusion-keys`, else the properties' order.
            let mut known: Vec<String> = keys.iter().map(|k| k.name.clone()).collect();
            if let Some(Value::Array(declared)) = s.get(KEYS_KEY) {
                known = declared
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                for k in &mut keys {
                    k.position = declared.iter().position(|name| *name == *k.name);
                }
            }
            keys.sort_by(|a, b| a.name.cmp(&b.name));
            // The arguments object itself is the tool's whole `inputSchema`: its wrong type
            // says `an object`, as the answer to `arguments` that are not one does.
            let objects = if nodes.is_empty() {
                Words::PLAIN
            } else {
                Words::default()
            };
            let items_at = format!("{s_at}/items");
            nodes.push(Node {
                expected: expected_override(root, schema),
                words: describe(root, schema, &at, objects),
                each: s
                    .get("items")
                    .filter(|items| object_keys(root, items).is_some())
                    .map(|items| describe(root, items, &items_at, Words::default()).into_owned()),
                shapes: union_shapes(root, schema, &at),
                keys,
                items: s.get("items").map(|v| id(v, items_at.clone())),
                additional: s
                    .get("additionalProperties")
                    .filter(|ap| ap.is_object())
                    .map(|v| id(v, format!("{s_at}/additionalProperties"))),
                known,
                options: const_options(root, schema),
            });
        }
        SchemaIndex { nodes }
    }

    fn node(&self, node: Option<usize>) -> Option<&Node> {
        node.and_then(|n| self.nodes.get(n))
    }
}

/// The issues found, each with its sort key (a range of `keys`), and the problems only counted.
struct Found {
    keys: Vec<usize>,
    issues: Vec<(usize, usize, Issue)>,
    uncollected: usize,
}

/// Every issue `errors` describe, sorted in the schema's declared key order; `index` is built
/// from the annotated schema the validator was built from. At most [`MAX_COLLECTED_ISSUES`]
/// are collected, in the validator's order; the problems beyond them are only counted.
pub fn issues_from_errors<'i>(
    index: &SchemaIndex,
    errors: impl Iterator<Item = ValidationError<'i>>,
) -> ValidationReport {
    let mut found = Found {
        keys: Vec::with_capacity(8),
        issues: Vec::with_capacity(4),
        uncollected: 0,
    };
    for e in errors {
        push_error(index, e, 0, &mut found);
    }
    // Stable: issues with equal keys keep the validator's order.
    let keys = &found.keys;
    found
        .issues
        .sort_by(|a, b| keys[a.0..a.1].cmp(&keys[b.0..b.1]));
    ValidationReport::new(found.issues.into_iter().map(|(_, _, i)| i).collect())
        .with_uncollected(found.uncollected)
}

/// Where an error is: its path, the node of the schema there, and its sort key `keys[key..]`.
struct At {
    path: IssuePath,
    node: Option<usize>,
    key: usize,
}

impl At {
    /// Goes one segment down, a key or (`Some`) an index: to the node of the instance there (a
    /// property, else the items for an index, else an object `additionalProperties`), sorted
    /// by the declared position of `seg`, else by the index.
    fn push(
        &mut self,
        index: &SchemaIndex,
        keys: &mut Vec<usize>,
        seg: &str,
        number: Option<usize>,
    ) {
        let n = index.node(self.node);
        let key = n.and_then(|n| {
            let i = n.keys.binary_search_by(|k| k.name.as_str().cmp(seg)).ok()?;
            n.keys.get(i)
        });
        keys.push(
            key.and_then(|k| k.position)
                .or(number)
                .unwrap_or(usize::MAX),
        );
        self.node = match (key, n) {
            (Some(k), _) => Some(k.node),
            (None, Some(n)) if number.is_some() && n.items.is_some() => n.items,
            (None, n) => n.and_then(|n| n.additional),
        };
        match number {
            Some(i) => self.path.push_index(i),
            None => self.path.push_key(seg),
        }
    }
}

fn push_error(index: &SchemaIndex, e: ValidationError<'_>, depth: usize, found: &mut Found) {
    if found.issues.len() >= MAX_COLLECTED_ISSUES {
        found.uncollected += match e.kind() {
            K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
                unexpected.len()
            }
            _ => 1,
        };
        return;
    }
    let mut at = At {
        path: IssuePath::root(),
        node: Some(0),
        key: found.keys.len(),
    };
    // A property segment never reads as an index (`Location::segments` makes those `Index`).
    let mut down = |seg: LocationSegment<'_>| match seg {
        LocationSegment::Property(p) => at.push(index, &mut found.keys, &p, None),
        LocationSegment::Index(i) => {
            let mut digits = String::with_capacity(4);
            super::sent::push_int(&mut digits, i);
            at.push(index, &mut found.keys, &digits, Some(i));
        }
    };
    let pointer = e.instance_path().as_str();
    if pointer.contains('~') {
        // Escaped segments: `jsonschema` unescapes them.
        e.instance_path().segments().for_each(&mut down);
    } else {
        // What `Location::segments` gives, without its unescaping pass per segment.
        for part in pointer.split('/').filter(|p| !p.is_empty()) {
            down(match part.parse::<usize>() {
                Ok(i) => LocationSegment::Index(i),
                Err(_) => LocationSegment::Property(Cow::Borrowed(part)),
            });
        }
    }
    let node = index.node(at.node);
    let shapes = || IssueKind::InvalidUnion {
        shapes: node.map_or_else(Vec::new, |n| n.shapes.clone()),
    };
    let kind = match e.kind() {
        // The whole expectation of the field, not its type alone: a wrong type must not hide
        // the rest of the rule (`a string matching ^acc_[a-z0-9]{6,12}$`, `a valid email
        // address`, `an integer >= 1 and <= 100`, `one of: 'free', 'pro'`), or the model
        // fixes the type, then learns the rule in a second round.
        K::Type { kind } => IssueKind::InvalidType {
            expected: node
                .map(|n| n.words.clone())
                .filter(|words| words != "a value")
                .unwrap_or_else(|| types::expected(kind)),
        },
        K::Required { property } => {
            let name = match property {
                Value::String(s) => Cow::Borrowed(s.as_str()),
                other => Cow::Owned(other.to_string()),
            };
            at.push(index, &mut found.keys, &name, None);
            let expected = index
                .node(at.node)
                .map_or(Cow::Borrowed("a value"), |n| n.words.clone());
            let issue = Issue::new(at.path, IssueKind::Missing { expected }, None);
            found.issues.push((at.key, found.keys.len(), issue));
            return;
        }
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
            let known = node.map_or(&[][..], |n| &n.known[..]);
            let (start, end) = (at.key, found.keys.len());
            for key in unexpected {
                if found.issues.len() >= MAX_COLLECTED_ISSUES {
                    found.uncollected += 1;
                    continue;
                }
                let kind = IssueKind::UnrecognizedKey {
                    key: key.clone(),
                    known: known.to_vec(),
                };
                let issue = Issue::new(at.path.clone(), kind, None);
                found.issues.push((start, end, issue));
            }
            return;
        }
        K::Pattern { .. } => {
            let parts = e.into_parts();
            let K::Pattern { pattern } = parts.kind else {
                return;
            };
            let kind = IssueKind::InvalidFormat {
                format: Format::Pattern(pattern),
            };
            push_issue(found, at, kind, parts.instance.into_owned(), node);
            return;
        }
        // A union of constants (a documented Rust enum) reads as the enum it is.
        K::AnyOf { .. } | K::OneOfNotValid { .. } if node.is_some_and(|n| n.options.is_some()) => {
            IssueKind::InvalidValue {
                options: node.and_then(|n| n.options.clone()).unwrap_or_default(),
            }
        }
        K::AnyOf { .. } | K::OneOfNotValid { .. } => {
            let parts = e.into_parts();
            let (K::AnyOf { context } | K::OneOfNotValid { context }) = parts.kind else {
                return;
            };
            // `Option<T>` is `anyOf: [T, null]`: when something other than null was sent,
            // the one branch that is not a plain type mismatch says what is wrong.
            let mut informative = context
                .into_iter()
                .filter(|errs| !is_type_mismatch_at(errs, &parts.instance_path));
            if let (Some(errs), None) = (informative.next(), informative.next())
                && depth < MAX_DEPTH
            {
                found.keys.truncate(at.key);
                for inner in errs {
                    push_error(index, inner, depth + 1, found);
                }
                return;
            }
            push_issue(found, at, shapes(), parts.instance.into_owned(), node);
            return;
        }
        K::OneOfMultipleValid { .. } => shapes(),
        K::UniqueItems => IssueKind::Custom {
            message: "Items must be unique".into(),
        },
        // The rest is a rule's keyword, read by its rule, or else the engine's own words.
        other => match rules::read(other) {
            Some(kind) => kind,
            None => IssueKind::Custom {
                message: cut(&e.to_string(), MAX_MESSAGE),
            },
        },
    };
    push_issue(found, at, kind, e.into_parts().instance.into_owned(), node);
}

/// Adds the issue with the value sent, and the author's expected text of its node; too few
/// items of objects also say what each item takes (the model is asked to build one).
fn push_issue(found: &mut Found, at: At, kind: IssueKind, sent: Value, node: Option<&Node>) {
    let mut issue = Issue::new(at.path, kind, Some(sent));
    issue.expected = node.and_then(|n| n.expected.clone()).map(Into::into);
    if let (None, Some(each), IssueKind::TooSmall { measure, .. }) = (
        &issue.expected,
        node.and_then(|n| n.each.as_deref()),
        &issue.kind,
    ) && *measure == Measure::Items
    {
        let mut expected = String::with_capacity(32 + each.len());
        issue.push_default_expected(&mut expected);
        expected.push_str(properties::EACH);
        expected.push_str(each);
        issue.expected = Some(expected.into());
    }
    found.issues.push((at.key, found.keys.len(), issue));
}

fn is_type_mismatch_at(errs: &[ValidationError<'_>], at: &jsonschema::paths::Location) -> bool {
    !errs.is_empty()
        && errs
            .iter()
            .all(|e| matches!(e.kind(), K::Type { .. }) && e.instance_path() == at)
}

pub(crate) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((i, _)) => format!("{}...", &s[..i]),
    }
}

/// The author's expected text at this subschema.
fn expected_override(root: &Value, schema: &Value) -> Option<String> {
    schema
        .get(EXPECTED_KEY)
        .or_else(|| unwrap_nullable(root, schema).get(EXPECTED_KEY))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// How far a description goes: how many unions and objects deep it already is, whether an
/// object's keys are written out at all, and the bytes its object words may take.
#[derive(Clone, Copy)]
struct Words {
    unions: usize,
    objects: usize,
    keys: bool,
    budget: usize,
}

impl Default for Words {
    fn default() -> Self {
        Words {
            unions: 0,
            objects: 0,
            keys: true,
            budget: MAX_OBJECT_BYTES,
        }
    }
}

impl Words {
    /// `an object`, without its keys.
    const PLAIN: Words = Words {
        unions: 0,
        objects: 0,
        keys: false,
        budget: 0,
    };
}

/// What a subschema takes, in words: the author's text, a format, a pattern, an enum, a type
/// with its bounds; an object with its keys and each key's rule, an array of objects with
/// what each item takes (see [`push_object`]). `at` is where `schema` is in `root`.
fn describe(root: &Value, schema: &Value, at: &str, w: Words) -> Cow<'static, str> {
    if let Some(e) = expected_override(root, schema) {
        return e.into();
    }
    let (s, s_at) = resolve_at(root, schema, at);
    if let Some(row) = s
        .get("format")
        .and_then(Value::as_str)
        .and_then(|f| Format::from_keyword(f).row())
    {
        return row.3.into();
    }
    let mut out = String::new();
    if let Some(p) = s.get("pattern").and_then(Value::as_str) {
        pattern::push_expected(&mut out, p);
        return out.into();
    }
    let options = match (s.get("enum"), s.get("const")) {
        (Some(Value::Array(options)), _) => Some(options.clone()),
        (_, Some(c)) => Some(vec![c.clone()]),
        _ => const_options(root, schema),
    };
    if let Some(options) = options {
        enum_const::push_expected(&mut out, &options);
        return out.into();
    }
    let keyed = w.keys && object_keys(root, s).is_some();
    match s.get("type") {
        Some(Value::String(t)) if t == "object" && keyed => {
            push_object(&mut out, root, s, &s_at, w);
            return out.into();
        }
        Some(Value::String(t)) => {
            let words = types::words(t);
            let mut out = String::from(words);
            push_bounds(&mut out, s);
            if t == "array" && w.keys {
                push_each(&mut out, root, s, &s_at, w);
            }
            return match out.len() == words.len() {
                true => words.into(),
                false => out.into(),
            };
        }
        Some(Value::Array(ts)) => {
            let names = || ts.iter().filter_map(Value::as_str);
            if keyed && names().all(|t| t == "object" || t == "null") {
                if names().any(|t| t == "null") {
                    out.push_str(properties::NULL_OR);
                }
                push_object(&mut out, root, s, &s_at, w);
                return out.into();
            }
            let words = types::words_of(names());
            // An optional field's bounds (`["integer", "null"]` with a `minimum`) after its
            // one non-null type: `an integer >= 1 or null`.
            let mut bounds = String::new();
            push_bounds(&mut bounds, s);
            let typed = ts.iter().filter(|t| t.as_str() != Some("null")).count();
            return match (bounds.is_empty(), typed, words.split_once(" or null")) {
                (false, 1, Some((one, rest))) => format!("{one}{bounds} or null{rest}").into(),
                _ => words,
            };
        }
        _ => {}
    }
    let branches_key = if s.get("anyOf").is_some() {
        "anyOf"
    } else {
        "oneOf"
    };
    if w.unions < 4
        && let Some(Value::Array(branches)) = s.get(branches_key)
    {
        let inner = Words {
            unions: w.unions + 1,
            ..w
        };
        let words: Vec<Cow<'static, str>> = branches
            .iter()
            .enumerate()
            .map(|(i, b)| describe(root, b, &format!("{s_at}/{branches_key}/{i}"), inner))
            .collect();
        // `Option` of an object: `null or an object with: …`, so that `or null` cannot be
        // read as its last key's alternative.
        if let [a, b] = &words[..]
            && let Some(object) = [(a, b), (b, a)]
                .into_iter()
                .find_map(|(x, y)| (y == "null" && x.starts_with(properties::WITH)).then_some(x))
        {
            return format!("{}{object}", properties::NULL_OR).into();
        }
        return words.join(" or ").into();
    }
    "a value".into()
}

/// The properties of an object schema that has some (past its `$ref`s).
fn object_keys<'a>(
    root: &'a Value,
    schema: &'a Value,
) -> Option<&'a serde_json::Map<String, Value>> {
    let s = resolve(root, schema);
    let typed_object = match s.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    match s.get("properties") {
        Some(Value::Object(props)) if typed_object && !props.is_empty() => Some(props),
        _ => None,
    }
}

/// What an object takes, key by key, in the words each key's own lines use: `an object with:
/// sku (a string matching ^[A-Z]{3}-[0-9]{4}$), quantity (an integer >= 1 and <= 99), note
/// (optional, a string)`. Required keys first, in declared order, then the optional ones.
/// Bounded: past [`MAX_OBJECT_KEYS`] keys or [`Words::budget`] bytes, how many more keys there
/// are and where the schema lists them; [`MAX_OBJECT_DEPTH`] objects deep, only that.
fn push_object(out: &mut String, root: &Value, s: &Value, at: &str, w: Words) {
    let Some(props) = object_keys(root, s) else {
        out.push_str(types::words("object"));
        return;
    };
    if w.objects >= MAX_OBJECT_DEPTH {
        properties::push_keys_elsewhere(out, props.len(), at);
        return;
    }
    let required: Vec<&str> = match s.get("required") {
        Some(Value::Array(r)) => r
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| props.contains_key(*k))
            .collect(),
        _ => Vec::new(),
    };
    // Declared order: `x-fusion-keys`, else the `required` list's, then the properties'.
    let declared: Vec<&str> = match s.get(KEYS_KEY) {
        Some(Value::Array(keys)) => keys
            .iter()
            .filter_map(Value::as_str)
            .chain(required.iter().copied())
            .chain(props.keys().map(String::as_str))
            .collect(),
        _ => required
            .iter()
            .copied()
            .chain(props.keys().map(String::as_str))
            .collect(),
    };
    let mut keys: Vec<(&str, bool)> = Vec::with_capacity(props.len());
    for pass in [true, false] {
        for k in &declared {
            let is_required = required.contains(k);
            if is_required == pass && props.contains_key(*k) && !keys.iter().any(|(x, _)| x == k) {
                keys.push((k, is_required));
            }
        }
    }
    let start = out.len();
    out.push_str(properties::WITH);
    let mut entry = String::new();
    for (i, (key, is_required)) in keys.iter().enumerate() {
        let used = out.len() - start;
        let left = w.budget.saturating_sub(used + key.len() + 16);
        let inner = Words {
            objects: w.objects + 1,
            budget: left,
            ..w
        };
        let rule = match props.get(*key) {
            Some(p) => describe(root, p, &property_at(at, key), inner),
            None => Cow::Borrowed(types::words("")),
        };
        entry.clear();
        properties::push_key(&mut entry, key, *is_required, &rule);
        let full = i >= MAX_OBJECT_KEYS || (i > 0 && used + 2 + entry.len() > w.budget);
        if i > 0 {
            out.push_str(", ");
        }
        if full {
            properties::push_more(out, keys.len() - i, at);
            return;
        }
        out.push_str(&entry);
    }
}

/// `, each an object with: …` after an array's words, when its items are objects with keys.
fn push_each(out: &mut String, root: &Value, s: &Value, at: &str, w: Words) {
    let Some(items) = s.get("items").filter(|i| object_keys(root, i).is_some()) else {
        return;
    };
    let budget = w.budget.saturating_sub(out.len());
    out.push_str(properties::EACH);
    out.push_str(&describe(
        root,
        items,
        &format!("{at}/items"),
        Words { budget, ..w },
    ));
}

/// `schema` past its local `$ref`s, with its location: the last `$ref` followed (`#/$defs/X`),
/// else `at`.
fn resolve_at<'a>(root: &'a Value, mut schema: &'a Value, at: &str) -> (&'a Value, String) {
    let mut location = at.to_owned();
    for _ in 0..crate::schema::MAX_REF_HOPS {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(next) = ref_target(root, reference) else {
            break;
        };
        schema = next;
        location = reference.to_owned();
    }
    (schema, location)
}

/// [`unwrap_nullable`] with the location of what it returns.
fn unwrap_nullable_at<'a>(root: &'a Value, schema: &'a Value, at: &str) -> (&'a Value, String) {
    let (s, s_at) = resolve_at(root, schema, at);
    if let Some(Value::Array(branches)) = s.get("anyOf") {
        let mut non_null = branches
            .iter()
            .enumerate()
            .filter(|(_, b)| b.get("type").and_then(Value::as_str) != Some("null"));
        if let (Some((i, only)), None) = (non_null.next(), non_null.next()) {
            return resolve_at(root, only, &format!("{s_at}/anyOf/{i}"));
        }
    }
    (s, s_at)
}

/// The location of property `name` of the object at `at`, escaped as a JSON pointer.
fn property_at(at: &str, name: &str) -> String {
    let mut out = String::with_capacity(at.len() + 12 + name.len());
    out.push_str(at);
    out.push_str("/properties/");
    for c in name.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// A type's bounds after its words, so that a line naming only the type (a missing field, a
/// wrong type) still says every value it takes: `an integer >= 1`, `a string of at least 3
/// characters`, `an array of 1 to 5 items`.
fn push_bounds(out: &mut String, s: &Value) {
    let count = |k: &str| s.get(k).and_then(Value::as_u64);
    let counted = |out: &mut String, min: Option<u64>, max: Option<u64>, unit: (&str, &str)| {
        let plural = |n: u64| if n == 1 { unit.0 } else { unit.1 };
        match (min, max) {
            (Some(a), Some(b)) if a == b => out.push_str(&format!(" of exactly {a} {}", plural(b))),
            (Some(a), Some(b)) => out.push_str(&format!(" of {a} to {b} {}", plural(b))),
            (Some(a), None) => out.push_str(&format!(" of at least {a} {}", plural(a))),
            (None, Some(b)) => out.push_str(&format!(" of at most {b} {}", plural(b))),
            (None, None) => {}
        }
    };
    counted(out, count("minLength"), count("maxLength"), length::UNIT);
    counted(out, count("minItems"), count("maxItems"), ("item", "items"));
    let mut joined = false;
    for (key, sign) in [
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
    ] {
        // A 32- or 64-bit integer type's own limits say nothing a model can use.
        if let Some(n) = s
            .get(key)
            .and_then(Value::as_f64)
            .filter(|n| n.abs() < f64::from(i32::MAX))
        {
            out.push_str(if joined { " and " } else { " " });
            out.push_str(sign);
            out.push(' ');
            super::sent::push_number(out, n);
            joined = true;
        }
    }
}

/// The shapes of the union at `schema` (at `at`), in words.
fn union_shapes(root: &Value, schema: &Value, at: &str) -> Vec<String> {
    let (inner, inner_at) = unwrap_nullable_at(root, schema, at);
    let (s, s_at) = if inner.get("anyOf").is_some() || inner.get("oneOf").is_some() {
        (inner, inner_at)
    } else {
        resolve_at(root, schema, at)
    };
    let key = if s.get("anyOf").is_some() {
        "anyOf"
    } else {
        "oneOf"
    };
    let w = Words {
        unions: 1,
        ..Words::default()
    };
    match s.get(key) {
        Some(Value::Array(branches)) => branches
            .iter()
            .enumerate()
            .map(|(i, b)| describe(root, b, &format!("{s_at}/{key}/{i}"), w).into_owned())
            .collect(),
        _ => Vec::new(),
    }
}

/// The options of a union of constants at `schema` (past `Option`'s `anyOf: [T, null]`).
fn const_options(root: &Value, schema: &Value) -> Option<Vec<Value>> {
    let s = unwrap_nullable(root, schema);
    let branches = match s.get("oneOf").or_else(|| s.get("anyOf")) {
        Some(Value::Array(branches)) if branches.len() >= 2 => branches,
        _ => return None,
    };
    branches
        .iter()
        .map(|b| {
            let b = resolve(root, b);
            match (b.get("const"), b.get("enum")) {
                (Some(c), None) => Some(c.clone()),
                (None, Some(Value::Array(one))) if one.len() == 1 => one.first().cloned(),
                _ => None,
            }
        })
        .collect()
}
