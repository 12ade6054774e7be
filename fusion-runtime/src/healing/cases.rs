//! The wrong calls: for each tool of a `tools/list`, a valid baseline built from its input
//! schema, then one wrong call per (field, issue kind) the schema allows. The generator reads
//! the schema; the reader never does.

use serde_json::{Map, Value, json};

use super::pattern;
use super::reader::Call;

/// An issue kind of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A value of another type (a string for a number, a one-item array for a string, …).
    WrongType,
    /// A required key left out.
    MissingRequired,
    /// A key spelled one edit away from a real one.
    UnknownKey,
    /// An enum value one edit away from a real one.
    EnumValue,
    /// A number just past a bound.
    OutOfRange,
    /// A string or array one shorter than its minimum.
    TooShort,
    /// A string or array one longer than its maximum.
    TooLong,
    /// A string that misses its pattern.
    Pattern,
    /// A string that is not of its format (email, URL, …).
    Format,
    /// The tool's name one edit away.
    WrongTool,
    /// A grouped tool's action one edit away.
    WrongAction,
    /// Two or three of the above in one call.
    Several,
    /// A key that is near no real one (not in the list; reported beside it).
    ExtraKey,
    /// A grouped tool called without its action (not in the list).
    MissingAction,
    /// An object sent as a value of each other type: a string, a number, a boolean, an array.
    ObjectWrongType,
    /// `null` for a required object.
    ObjectNull,
    /// An array of objects with fewer items than its minimum (empty, or one short).
    ObjectsTooFew,
    /// An item of an array of objects sent as a string, a number or `null`.
    ItemWrongType,
    /// Two or three problems at once, at different depths (a nested field, an object, an
    /// item, a top-level field).
    SeveralNested,
}

impl Kind {
    /// Every kind, in table order.
    pub const ALL: [Kind; 19] = [
        Kind::WrongType,
        Kind::MissingRequired,
        Kind::UnknownKey,
        Kind::EnumValue,
        Kind::OutOfRange,
        Kind::TooShort,
        Kind::TooLong,
        Kind::Pattern,
        Kind::Format,
        Kind::WrongTool,
        Kind::WrongAction,
        Kind::Several,
        Kind::ExtraKey,
        Kind::MissingAction,
        Kind::ObjectWrongType,
        Kind::ObjectNull,
        Kind::ObjectsTooFew,
        Kind::ItemWrongType,
        Kind::SeveralNested,
    ];

    /// The kind's name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Kind::WrongType => "wrong type",
            Kind::MissingRequired => "missing required",
            Kind::UnknownKey => "unknown key (1 edit)",
            Kind::EnumValue => "enum value (1 edit)",
            Kind::OutOfRange => "out of range",
            Kind::TooShort => "too short",
            Kind::TooLong => "too long",
            Kind::Pattern => "pattern",
            Kind::Format => "format",
            Kind::WrongTool => "wrong tool name",
            Kind::WrongAction => "wrong action in a group",
            Kind::Several => "several at once",
            Kind::ExtraKey => "extra key (no near match)",
            Kind::MissingAction => "action missing in a group",
            Kind::ObjectWrongType => "object: wrong type",
            Kind::ObjectNull => "object: null",
            Kind::ObjectsTooFew => "objects: too few items",
            Kind::ItemWrongType => "item: wrong type",
            Kind::SeveralNested => "several, nested",
        }
    }
}

/// One wrong call.
#[derive(Clone, Debug)]
pub struct Case {
    /// The tool (as `tools/list` shows it) whose call was broken.
    pub tool: String,
    /// Its kind.
    pub kind: Kind,
    /// The call sent.
    pub call: Call,
    /// What was changed, for the report.
    pub what: String,
}

/// A tool as `tools/list` shows it.
#[derive(Clone, Debug)]
pub struct Tool {
    /// Its name.
    pub name: String,
    /// Its `inputSchema`.
    pub schema: Value,
}

/// `node` with `$ref` (to `#/$defs/…`) followed and a nullable `anyOf`/`oneOf`/type list
/// reduced to its non-null part.
pub fn resolve(node: &Value, root: &Value) -> Value {
    let mut node = node.clone();
    for _ in 0..8 {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let target = r
                .strip_prefix("#/")
                .and_then(|p| p.split('/').try_fold(root, |at, seg| at.get(seg)))
                .cloned();
            match target {
                Some(mut t) => {
                    if let (Some(Value::Object(extra)), Value::Object(obj)) =
                        (node.as_object().cloned().map(Value::Object), &mut t)
                    {
                        for (k, v) in extra {
                            if k != "$ref" {
                                obj.entry(k).or_insert(v);
                            }
                        }
                    }
                    node = t;
                    continue;
                }
                None => return node,
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = node.get(key) {
                let non_null: Vec<&Value> = options
                    .iter()
                    .filter(|o| o.get("type").and_then(Value::as_str) != Some("null"))
                    .collect();
                if non_null.len() == 1 && options.len() == 2 {
                    let mut merged = non_null[0].clone();
                    if let (Value::Object(m), Value::Object(outer)) = (&mut merged, &node) {
                        for (k, v) in outer {
                            if k != key {
                                m.entry(k.clone()).or_insert(v.clone());
                            }
                        }
                    }
                    node = merged;
                }
            }
        }
        for key in ["oneOf", "anyOf"] {
            let consts: Option<Vec<Value>> = node
                .get(key)
                .and_then(Value::as_array)
                .and_then(|o| o.iter().map(|c| c.get("const").cloned()).collect());
            if let (Some(consts), Value::Object(m)) = (consts, &mut node) {
                m.remove(key);
                m.insert("type".into(), json!("string"));
                m.insert("enum".into(), Value::Array(consts));
            }
        }
        if node.get("$ref").is_none() {
            break;
        }
    }
    if let Some(Value::Array(types)) = node.get("type").cloned() {
        let non_null: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
        if non_null.len() == 1
            && let Value::Object(m) = &mut node
        {
            m.insert("type".into(), non_null[0].clone());
        }
    }
    node
}

fn type_of(node: &Value) -> &str {
    match node.get("type").and_then(Value::as_str) {
        Some(t) => t,
        None if node.get("enum").is_some() || node.get("const").is_some() => "string",
        None if node.get("properties").is_some() => "object",
        None => "",
    }
}

/// A valid value for `node`, or `None` when none can be built from what it says.
pub fn baseline(node: &Value, root: &Value) -> Option<Value> {
    let node = resolve(node, root);
    if let Some(v) = node
        .get("examples")
        .and_then(|e| e.get(0))
        .or_else(|| node.get("default"))
        .or_else(|| node.get("const"))
        .or_else(|| node.get("enum").and_then(|e| e.get(0)))
    {
        return Some(v.clone());
    }
    let num = |k: &str| node.get(k).and_then(Value::as_f64);
    match type_of(&node) {
        "string" => {
            if let Some(p) = node.get("pattern").and_then(Value::as_str) {
                return pattern::sample(p).map(Value::String);
            }
            if let Some(f) = node.get("format").and_then(Value::as_str) {
                return format_sample(f).map(|s| Value::String(s.into()));
            }
            let min = num("minLength").unwrap_or(0.0) as usize;
            let max = num("maxLength").map_or(usize::MAX, |m| m as usize);
            let mut s = "sample".to_owned();
            while s.len() < min {
                s.push('x');
            }
            s.truncate(max.max(min));
            Some(Value::String(s))
        }
        t @ ("integer" | "number") => {
            let lo = num("minimum").or(num("exclusiveMinimum").map(|m| m + 1.0));
            let hi = num("maximum").or(num("exclusiveMaximum").map(|m| m - 1.0));
            let v = lo.unwrap_or(1.0).min(hi.unwrap_or(f64::MAX));
            Some(if t == "integer" {
                json!(v as i64)
            } else {
                json!(v)
            })
        }
        "boolean" => Some(Value::Bool(true)),
        "array" => {
            let item = baseline(node.get("items").unwrap_or(&json!({})), root)?;
            let n = num("minItems").unwrap_or(1.0).max(1.0) as usize;
            let n = n.min(num("maxItems").map_or(n, |m| m as usize));
            Some(Value::Array(vec![item; n]))
        }
        "object" => {
            let mut out = Map::new();
            if let Some(Value::Object(props)) = node.get("properties") {
                for (k, p) in props {
                    out.insert(k.clone(), baseline(p, root)?);
                }
            }
            Some(Value::Object(out))
        }
        "" => Some(Value::String("sample".into())),
        _ => None,
    }
}

fn format_sample(format: &str) -> Option<&'static str> {
    Some(match format {
        "email" | "idn-email" => "ada@example.com",
        "uri" | "url" | "iri" | "uri-reference" => "https://example.com/a",
        "uuid" => "123e4567-e89b-12d3-a456-426614174000",
        "date-time" => "2026-01-15T10:30:00Z",
        "date" => "2026-01-15",
        "time" => "10:30:00Z",
        "ipv4" => "192.0.2.7",
        "ipv6" => "2001:db8::7",
        "hostname" => "example.com",
        _ => return None,
    })
}

/// One edit: two neighbouring characters swapped in the middle (or, for a short word, its
/// last character doubled), never equal to any of `avoid`.
pub fn one_edit(word: &str, avoid: &[&str]) -> String {
    let chars: Vec<char> = word.chars().collect();
    let mut tries = Vec::new();
    if chars.len() >= 3 {
        let mid = chars.len() / 2;
        for i in [mid, mid.saturating_sub(1), 1] {
            if i + 1 < chars.len() && chars[i] != chars[i + 1] {
                let mut c = chars.clone();
                c.swap(i, i + 1);
                tries.push(c.into_iter().collect::<String>());
            }
        }
        let mut dropped = chars.clone();
        dropped.remove(mid);
        tries.push(dropped.into_iter().collect());
    }
    tries.push(format!("{word}{}", chars.last().copied().unwrap_or('x')));
    tries
        .into_iter()
        .find(|t| t != word && !avoid.contains(&t.as_str()))
        .unwrap_or_else(|| format!("{word}_x"))
}

/// The same value as another type, keeping what it says: a number or boolean as a string, a
/// string as a one-item array, an array as its first item, an object as a JSON string.
fn wrong_type(v: &Value) -> Value {
    match v {
        Value::String(s) => json!([s]),
        Value::Number(_) | Value::Bool(_) => Value::String(v.to_string()),
        Value::Array(a) => a.first().cloned().unwrap_or(json!("x")),
        Value::Object(_) => Value::String(v.to_string()),
        Value::Null => json!(0),
    }
}

/// A string that misses the `pattern` its valid value `v` meets: the same text upper-cased
/// with `_` as `-` (an ID written the way a person would), else prefixed with `?`.
fn off_pattern(v: &str, pattern: &str) -> String {
    let shouted = v.to_uppercase().replace('_', "-");
    let re = regex::Regex::new(pattern).ok();
    if shouted != v && re.as_ref().is_none_or(|re| !re.is_match(&shouted)) {
        shouted
    } else {
        format!("?{v}")
    }
}

fn off_format(format: &str) -> String {
    match format {
        "email" | "idn-email" => "ada.example.com".into(),
        "uri" | "url" | "iri" | "uri-reference" => "example dot com".into(),
        "uuid" => "123e4567-e89b-12d3".into(),
        "date-time" => "2026-01-15 10:30".into(),
        "date" => "15/01/2026".into(),
        other => format!("not a {other}"),
    }
}

/// The note of a wrong type sent to a field with a rule beyond its type.
const CONSTRAINED_WRONG_TYPE: &str = "another type, unrelated to the valid value";

/// A value of another type that carries nothing of `valid` (`7` for an ID, `false` for an
/// email, a word for a bounded number), for a string or number field with a rule beyond its
/// type: what a model sends when it has the type wrong, so that only the answer's text can
/// tell it the rest of the rule.
fn constrained_wrong_type(node: &Value, valid: &Value) -> Option<Value> {
    // The keywords that constrain a string or a number beyond its type, as the rules declare
    // them.
    if !crate::validation::rules::on_scalars().any(|k| node.get(k).is_some()) {
        return None;
    }
    match valid {
        Value::String(_) if node.get("format").is_some() => Some(json!(false)),
        Value::String(_) => Some(json!(7)),
        Value::Number(_) => Some(json!("lots")),
        _ => None,
    }
}

/// One field's single mutations (kind, new value, note), from its schema and valid value.
/// Too few items of objects are [`object_mutations`]'.
fn field_mutations(node: &Value, valid: &Value, root: &Value) -> Vec<(Kind, Value, String)> {
    let mut out = vec![(
        Kind::WrongType,
        wrong_type(valid),
        "another type".to_owned(),
    )];
    if let Some(bad) = constrained_wrong_type(node, valid) {
        out.push((Kind::WrongType, bad, CONSTRAINED_WRONG_TYPE.to_owned()));
    }
    let num = |k: &str| node.get(k).and_then(Value::as_f64);
    if let (Some(Value::Array(options)), Value::String(s)) = (node.get("enum"), valid) {
        let avoid: Vec<&str> = options.iter().filter_map(Value::as_str).collect();
        out.push((
            Kind::EnumValue,
            Value::String(one_edit(s, &avoid)),
            "a near option".into(),
        ));
    }
    let integer = type_of(node) == "integer";
    let step = if integer { 1.0 } else { 0.5 };
    let as_num = |n: f64| if integer { json!(n as i64) } else { json!(n) };
    // A 64-bit integer type's own limits are past what an `f64` step can cross.
    if let Some(lo) = num("minimum").filter(|l| *l > -9.0e15) {
        out.push((Kind::OutOfRange, as_num(lo - step), format!("below {lo}")));
    }
    if let Some(lo) = num("exclusiveMinimum") {
        out.push((Kind::OutOfRange, as_num(lo), format!("at exclusive {lo}")));
    }
    if let Some(hi) = num("maximum").filter(|h| *h < 9.0e15) {
        out.push((Kind::OutOfRange, as_num(hi + step), format!("above {hi}")));
    }
    if let Some(hi) = num("exclusiveMaximum") {
        out.push((Kind::OutOfRange, as_num(hi), format!("at exclusive {hi}")));
    }
    match valid {
        Value::String(s) => {
            if let Some(min) = num("minLength").filter(|m| *m >= 1.0) {
                let short: String = s.chars().take(min as usize - 1).collect();
                out.push((Kind::TooShort, json!(short), format!("{} chars", min - 1.0)));
            }
            if let Some(max) = num("maxLength") {
                let mut long = s.clone();
                while long.chars().count() <= max as usize {
                    long.push('x');
                }
                out.push((Kind::TooLong, json!(long), format!("{} chars", max + 1.0)));
            }
            if let Some(p) = node.get("pattern").and_then(Value::as_str) {
                out.push((
                    Kind::Pattern,
                    json!(off_pattern(s, p)),
                    "off pattern".into(),
                ));
            }
            if let Some(f) = node.get("format").and_then(Value::as_str) {
                out.push((Kind::Format, json!(off_format(f)), format!("not a {f}")));
            }
        }
        Value::Array(a) => {
            if let Some(min) = num("minItems").filter(|m| *m >= 1.0 && !of_objects(node, root)) {
                let short: Vec<Value> = a.iter().take(min as usize - 1).cloned().collect();
                out.push((Kind::TooShort, json!(short), format!("{} items", min - 1.0)));
            }
            if let Some(max) = num("maxItems") {
                let fill = a.first().cloned().unwrap_or(json!("x"));
                let long = vec![fill; max as usize + 1];
                out.push((Kind::TooLong, json!(long), format!("{} items", max + 1.0)));
            }
        }
        _ => {}
    }
    out
}

/// The wrong calls of one tool whose valid arguments are `valid` (an object). `known` are all
/// tool names (a wrong name must be none of them). With `action_key` (a grouped tool's
/// discriminator), its value is mutated as a routing name, not as a field.
pub fn cases(tool: &Tool, valid: &Value, known: &[&str], action_key: Option<&str>) -> Vec<Case> {
    let root = &tool.schema;
    let mut out = Vec::new();
    let case = |kind: Kind, call: Call, what: String| Case {
        tool: tool.name.clone(),
        kind,
        call,
        what,
    };
    let mut singles: Vec<(String, Kind, Value, String)> = Vec::new();
    let mut nested: Vec<Mutation> = Vec::new();
    let props = root
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    let Some(obj) = valid.as_object() else {
        return out;
    };
    let base = |args: Map<String, Value>| Call {
        tool: tool.name.clone(),
        args: Value::Object(args),
    };
    for (key, value) in obj {
        if Some(key.as_str()) == action_key {
            let avoid: Vec<&str> = Vec::new();
            let Some(s) = value.as_str() else { continue };
            let mut args = obj.clone();
            args.insert(key.clone(), json!(one_edit(s, &avoid)));
            out.push(case(
                Kind::WrongAction,
                base(args),
                format!("{key} misspelt"),
            ));
            let mut args = obj.clone();
            args.remove(key);
            out.push(case(
                Kind::MissingAction,
                base(args),
                format!("{key} left out"),
            ));
            continue;
        }
        let Some(node) = props.get(key) else { continue };
        let node = resolve(node, root);
        if required.contains(&key.as_str()) {
            let mut args = obj.clone();
            args.remove(key);
            out.push(case(
                Kind::MissingRequired,
                base(args),
                format!("{key} left out"),
            ));
        }
        if key.chars().count() >= 2 {
            let typo = one_edit(key, &names);
            let mut args = Map::new();
            for (k, v) in obj {
                args.insert(if k == key { typo.clone() } else { k.clone() }, v.clone());
            }
            out.push(case(
                Kind::UnknownKey,
                base(args),
                format!("{key} as {typo}"),
            ));
        }
        for (kind, bad, note) in field_mutations(&node, value, root) {
            let mut args = obj.clone();
            args.insert(key.clone(), bad.clone());
            out.push(case(kind, base(args), format!("{key}: {note}")));
            singles.push((key.clone(), kind, bad, note));
        }
        // Below: the object kinds of an object or an array of objects, and the fields of
        // the objects in it (an array's first item), each as a top-level field is mutated.
        let required_here = required.contains(&key.as_str());
        let at = [key.clone()];
        let raw = props.get(key).unwrap_or(&node);
        below(raw, value, &at, required_here, root, &mut nested);
    }
    for m in &nested {
        out.push(case(m.kind, base(apply(obj, m)), m.what()));
    }
    let mut args = obj.clone();
    args.insert("zzz_note".into(), json!("from the benchmark"));
    out.push(case(Kind::ExtraKey, base(args), "zzz_note added".into()));
    out.push(case(
        Kind::WrongTool,
        Call {
            tool: one_edit(&tool.name, known),
            args: valid.clone(),
        },
        "tool name misspelt".into(),
    ));
    // Several at once: per field its most telling mutation (not a type change when the field
    // has a constraint to miss), over two or three fields.
    let mut picked: Vec<(String, Value, String)> = Vec::new();
    for key in obj.keys() {
        let best = singles
            .iter()
            .filter(|(k, ..)| k == key)
            .max_by_key(|(_, kind, ..)| *kind != Kind::WrongType);
        if let Some((k, _, bad, note)) = best
            && picked.len() < 3
        {
            picked.push((k.clone(), bad.clone(), note.clone()));
        }
    }
    if picked.len() >= 2 {
        let mut args = obj.clone();
        let mut what = Vec::new();
        for (k, bad, note) in &picked {
            args.insert(k.clone(), bad.clone());
            what.push(format!("{k}: {note}"));
        }
        out.push(case(Kind::Several, base(args), what.join("; ")));
    }
    // Several wrong types at once, each on a constrained field (two or three of them), beside
    // one more problem of another kind when a field is left: one round must heal them all.
    let typed: Vec<&(String, Kind, Value, String)> = singles
        .iter()
        .filter(|(_, _, _, note)| note == CONSTRAINED_WRONG_TYPE)
        .take(3)
        .collect();
    if typed.len() >= 2 || (typed.len() == 1 && !picked.is_empty()) {
        let mut args = obj.clone();
        let mut what = Vec::new();
        for (k, _, bad, note) in &typed {
            args.insert(k.clone(), bad.clone());
            what.push(format!("{k}: {note}"));
        }
        if typed.len() == 1
            && let Some((k, bad, note)) = picked.iter().find(|(k, ..)| *k != typed[0].0)
        {
            args.insert(k.clone(), bad.clone());
            what.push(format!("{k}: {note}"));
        }
        if what.len() >= 2 {
            out.push(case(Kind::Several, base(args), what.join("; ")));
        }
    }
    // Several at once at different depths: one problem per depth (top-level field, object or
    // item, nested field), on paths apart, two ways — the object kinds first, then the nested
    // fields' rules first.
    let mut all: Vec<Mutation> = singles
        .iter()
        .map(|(k, kind, bad, note)| Mutation {
            path: vec![k.clone()],
            kind: *kind,
            value: Some(bad.clone()),
            note: note.clone(),
            was: None,
        })
        .collect();
    all.extend(nested.iter().cloned());
    let objects_first = |m: &Mutation| -> u8 {
        match m.kind {
            Kind::ItemWrongType => 4,
            Kind::ObjectWrongType | Kind::ObjectNull => 3,
            _ if m.path.len() >= 2 && m.kind != Kind::WrongType => 2,
            Kind::WrongType => 0,
            _ => 1,
        }
    };
    let fields_first = |m: &Mutation| -> u8 {
        match m.kind {
            Kind::WrongType | Kind::UnknownKey => 0,
            _ if m.path.len() >= 2 && !m.kind.is_object_kind() => 4,
            Kind::ObjectsTooFew | Kind::ObjectNull => 3,
            _ => 1,
        }
    };
    let mut sent: Vec<Value> = Vec::new();
    for rank in [&objects_first as &dyn Fn(&Mutation) -> u8, &fields_first] {
        let picked = pick_apart(&all, rank);
        if picked.len() < 2 || picked.iter().all(|m| m.path.len() < 2) {
            continue;
        }
        let mut args = Value::Object(obj.clone());
        for m in &picked {
            set_path(&mut args, &m.path, m.value.clone());
        }
        if sent.contains(&args) {
            continue;
        }
        sent.push(args.clone());
        let what: Vec<String> = picked.iter().map(|m| m.what()).collect();
        out.push(case(
            Kind::SeveralNested,
            Call {
                tool: tool.name.clone(),
                args,
            },
            what.join("; "),
        ));
    }
    out
}

/// How deep the generator goes into objects: the top-level field is 1.
const MAX_NESTED_DEPTH: usize = 3;

/// One change at a nested path: a value set there, or (`None`) the key removed.
#[derive(Clone, Debug)]
struct Mutation {
    path: Vec<String>,
    kind: Kind,
    value: Option<Value>,
    note: String,
    /// For a misspelt key: the right key, removed beside it.
    was: Option<String>,
}

impl Mutation {
    fn what(&self) -> String {
        format!("{}: {}", self.path.join("."), self.note)
    }
}

impl Kind {
    /// Whether the kind is one of an object or an array of objects as a whole.
    fn is_object_kind(self) -> bool {
        matches!(
            self,
            Kind::ObjectWrongType | Kind::ObjectNull | Kind::ObjectsTooFew | Kind::ItemWrongType
        )
    }
}

/// Whether `node` (resolved) is an array whose items are objects with properties.
fn of_objects(node: &Value, root: &Value) -> bool {
    node.get("items")
        .is_some_and(|items| is_object(&resolve(items, root)))
}

fn is_object(node: &Value) -> bool {
    type_of(node) == "object"
        && node
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty())
}

/// Whether `null` is valid for `node` as written (before [`resolve`] reduces an `Option`).
fn nullable(node: &Value) -> bool {
    let null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    let in_union = ["anyOf", "oneOf"].into_iter().any(|k| {
        node.get(k)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(null))
    });
    let in_types = node
        .get("type")
        .and_then(Value::as_array)
        .is_some_and(|ts| ts.iter().any(|t| t == "null"));
    in_union || in_types
}

/// The first string anywhere in `v` (an ID, a SKU), else `sample`: what a model sends when it
/// gives one value where an object belongs.
fn first_string(v: &Value) -> String {
    fn find(v: &Value) -> Option<&str> {
        match v {
            Value::String(s) => Some(s),
            Value::Object(o) => o.values().find_map(find),
            Value::Array(a) => a.iter().find_map(find),
            _ => None,
        }
    }
    find(v).unwrap_or("sample").to_owned()
}

/// The mutations below a field at `at` (a path of keys and indexes) whose schema is `raw`
/// (as written in its parent, `$ref`s and `Option`s unresolved) and valid value `value`: an object of every
/// wrong type and `null` for a required one; too few items and items of another type for an
/// array of objects; then, inside the object (or the array's first item), each key as a
/// top-level key is mutated — left out, misspelt, its field mutations — and the objects in it
/// in turn, [`MAX_NESTED_DEPTH`] deep.
fn below(
    raw: &Value,
    value: &Value,
    at: &[String],
    required: bool,
    root: &Value,
    out: &mut Vec<Mutation>,
) {
    let node = resolve(raw, root);
    let push = |out: &mut Vec<Mutation>, path: Vec<String>, kind, value, note: &str| {
        out.push(Mutation {
            path,
            kind,
            value,
            note: note.to_owned(),
            was: None,
        })
    };
    match value {
        Value::Object(inner) if is_object(&node) => {
            for (bad, note) in [
                (json!(first_string(value)), "a string"),
                (json!(7), "a number"),
                (json!(true), "a boolean"),
                (json!([value]), "in an array"),
            ] {
                push(out, at.to_vec(), Kind::ObjectWrongType, Some(bad), note);
            }
            if required && !nullable(raw) {
                push(
                    out,
                    at.to_vec(),
                    Kind::ObjectNull,
                    Some(Value::Null),
                    "null",
                );
            }
            fields_below(&node, inner, at, root, out);
        }
        Value::Array(items) if of_objects(&node, root) => {
            let min = node.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            if min >= 1 {
                push(
                    out,
                    at.to_vec(),
                    Kind::ObjectsTooFew,
                    Some(json!([])),
                    "empty",
                );
            }
            if min >= 2 {
                let short: Vec<Value> = items.iter().take(min - 1).cloned().collect();
                let note = format!("{} items", min - 1);
                push(
                    out,
                    at.to_vec(),
                    Kind::ObjectsTooFew,
                    Some(json!(short)),
                    &note,
                );
            }
            let Some(first) = items.first() else { return };
            let mut item_at = at.to_vec();
            item_at.push("0".into());
            for (bad, note) in [
                (json!(first_string(first)), "a string"),
                (json!(7), "a number"),
                (Value::Null, "null"),
            ] {
                push(out, item_at.clone(), Kind::ItemWrongType, Some(bad), note);
            }
            let item = node
                .get("items")
                .map(|i| resolve(i, root))
                .unwrap_or_default();
            if let Value::Object(inner) = first {
                fields_below(&item, inner, &item_at, root, out);
            }
        }
        _ => {}
    }
}

/// The keys of an object at `at` (schema `node`, value `inner`), mutated as top-level keys are.
fn fields_below(
    node: &Value,
    inner: &Map<String, Value>,
    at: &[String],
    root: &Value,
    out: &mut Vec<Mutation>,
) {
    if at.len() >= MAX_NESTED_DEPTH {
        return;
    }
    let Some(props) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    let closed = node.get("additionalProperties") == Some(&Value::Bool(false));
    for (k, v) in inner {
        let Some(raw) = props.get(k) else { continue };
        let n = resolve(raw, root);
        let mut path = at.to_vec();
        path.push(k.clone());
        let is_required = required.contains(&k.as_str());
        if is_required {
            out.push(Mutation {
                path: path.clone(),
                kind: Kind::MissingRequired,
                value: None,
                note: "left out".into(),
                was: None,
            });
        }
        if k.chars().count() >= 2 && closed {
            // A misspelt key (where unknown keys are refused): the typo set, the right key
            // removed.
            let typo = one_edit(k, &names);
            let mut renamed = at.to_vec();
            renamed.push(typo.clone());
            out.push(Mutation {
                path: renamed,
                kind: Kind::UnknownKey,
                value: Some(v.clone()),
                note: format!("{k} misspelt"),
                was: Some(k.clone()),
            });
        }
        for (kind, bad, note) in field_mutations(&n, v, root) {
            out.push(Mutation {
                path: path.clone(),
                kind,
                value: Some(bad),
                note,
                was: None,
            });
        }
        below(raw, v, &path, is_required, root, out);
    }
}

/// `obj` with `m` applied; a misspelt key also loses its right key.
fn apply(obj: &Map<String, Value>, m: &Mutation) -> Map<String, Value> {
    let mut args = Value::Object(obj.clone());
    if let Some(was) = &m.was {
        let mut right = m.path.clone();
        if let Some(last) = right.last_mut() {
            last.clone_from(was);
        }
        set_path(&mut args, &right, None);
    }
    set_path(&mut args, &m.path, m.value.clone());
    match args {
        Value::Object(o) => o,
        _ => obj.clone(),
    }
}

/// Sets (or, with `None`, removes) the value at `path`: keys of objects, indexes of arrays.
fn set_path(at: &mut Value, path: &[String], value: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = at;
    for seg in parents {
        at = match at {
            Value::Object(o) => match o.get_mut(seg) {
                Some(v) => v,
                None => return,
            },
            Value::Array(a) => match seg.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(v) => v,
                None => return,
            },
            _ => return,
        };
    }
    match (at, value) {
        (Value::Object(o), Some(v)) => {
            o.insert(last.clone(), v);
        }
        (Value::Object(o), None) => {
            o.remove(last);
        }
        (Value::Array(a), v) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                *slot = v.unwrap_or(Value::Null);
            }
        }
        _ => {}
    }
}

/// Up to three mutations of `all`, best `rank` first, one per depth, none on a path inside
/// another's.
fn pick_apart<'m>(all: &'m [Mutation], rank: &dyn Fn(&Mutation) -> u8) -> Vec<&'m Mutation> {
    let mut order: Vec<&Mutation> = all.iter().filter(|m| rank(m) > 0).collect();
    // Stable: equal ranks keep the generator's order.
    order.sort_by_key(|m| std::cmp::Reverse(rank(m)));
    let mut picked: Vec<&Mutation> = Vec::new();
    for m in order {
        let apart = picked.iter().all(|p| {
            p.path.len() != m.path.len()
                && !p.path.starts_with(&m.path)
                && !m.path.starts_with(&p.path)
                && p.path.first() != m.path.first()
        });
        if apart {
            picked.push(m);
        }
        if picked.len() == 3 {
            break;
        }
    }
    picked
}
