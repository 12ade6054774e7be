//! The diff engine: every change between two sets of contracts, classified.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

use super::ToolContract;
use super::canonical::to_canonical_string;

/// How a change affects an agent that learned the old contract.
///
/// Ordered from most to least severe, so sorting puts `Breaking` first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeltaSeverity {
    /// A call that was valid before may now fail, or reach a different action.
    Breaking,
    /// Calls still validate, but what they do may have changed (hints toward destructive,
    /// deprecation, a field's meaning reworded).
    Risky,
    /// Only widens what is accepted, or adds something new.
    Safe,
    /// Wording or representation only.
    Cosmetic,
}

impl DeltaSeverity {
    /// The spelling used in reports and in `<contract_awareness>`: `BREAKING`, `RISKY`, `SAFE`,
    /// `COSMETIC`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaSeverity::Breaking => "BREAKING",
            DeltaSeverity::Risky => "RISKY",
            DeltaSeverity::Safe => "SAFE",
            DeltaSeverity::Cosmetic => "COSMETIC",
        }
    }
}

impl fmt::Display for DeltaSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One classified change between two contracts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Delta {
    /// Where the change is: `actions.<action>` for the action itself, `actions.<action>.tool`,
    /// `.description`, `.deprecated`, `.annotations.<hint>`, and `actions.<action>.input` for
    /// the input schema, followed by the dotted field path (`.address.city`); array items are
    /// `[]` (`.lines[].sku`), `prefixItems` entries `[N]`, an `additionalProperties` schema `.*`.
    pub path: String,
    /// How the change affects an agent that learned the old contract.
    pub severity: DeltaSeverity,
    /// The action the change belongs to (for a rename, the new name); `None` for a change that
    /// concerns every action of the server.
    pub action: Option<String>,
    /// What changed, as a sentence a person or a model can read.
    pub description: String,
    /// The value before, as canonical compact JSON (`"id"`, `64`, `["a","b"]`), when there is one.
    pub before: Option<String>,
    /// The value after, as canonical compact JSON, when there is one.
    pub after: Option<String>,
}

impl Delta {
    fn sort_key(&self) -> impl Ord + '_ {
        (
            &self.action,
            &self.path,
            self.severity,
            &self.description,
            &self.before,
            &self.after,
        )
    }
}

impl fmt::Display for Delta {
    /// `BREAKING actions.billing.get_invoice.input.id: Field 'id' was renamed to
    /// 'invoice_id'. (before: "id", after: "invoice_id")`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.severity, self.path, self.description)?;
        match (&self.before, &self.after) {
            (Some(b), Some(a)) => write!(f, " (before: {b}, after: {a})"),
            (Some(b), None) => write!(f, " (before: {b})"),
            (None, Some(a)) => write!(f, " (after: {a})"),
            (None, None) => Ok(()),
        }
    }
}

/// Every change from the `old` contracts to the `new` ones, classified and sorted by action,
/// then path, then severity (`Breaking` first), then description.
///
/// Actions are matched by name. An action that disappears while exactly one new action has an
/// identical input schema (and no other disappearing action shares it) is reported as renamed;
/// fields are matched the same way within an object. Hints are compared by their effective
/// value (MCP defaults applied). Input schemas are walked keyword by keyword, following local
/// `$ref`s (`#/$defs/…`, any JSON pointer into the same schema); a keyword the engine does not
/// classify is reported as `Risky` with both values, so no change goes unreported: an empty
/// result means the contracts are identical. Names must be unique within each slice (the
/// registry guarantees it); with duplicates, the last one wins.
pub fn diff(old: &[ToolContract], new: &[ToolContract]) -> Vec<Delta> {
    let old: BTreeMap<&str, &ToolContract> = old.iter().map(|c| (c.action.as_str(), c)).collect();
    let new: BTreeMap<&str, &ToolContract> = new.iter().map(|c| (c.action.as_str(), c)).collect();
    let removed: Vec<&str> = old
        .keys()
        .filter(|k| !new.contains_key(*k))
        .copied()
        .collect();
    let added: Vec<&str> = new
        .keys()
        .filter(|k| !old.contains_key(*k))
        .copied()
        .collect();
    let renames = unique_pairs(
        &removed,
        &added,
        |r| to_canonical_string(&old[r].input_schema),
        |a| to_canonical_string(&new[a].input_schema),
    );

    let mut out = Vec::new();
    for (name, o) in &old {
        if let Some(n) = new.get(name) {
            let before = out.len();
            compare_actions(o, n, false, &mut out);
            if out.len() == before && o.canonical_json() != n.canonical_json() {
                out.push(Delta {
                    path: format!("actions.{name}"),
                    severity: DeltaSeverity::Cosmetic,
                    action: Some((*name).to_owned()),
                    description: format!(
                        "The contract of '{name}' was rewritten without a change in meaning (for example a number written differently)."
                    ),
                    before: None,
                    after: None,
                });
            }
        }
    }
    for (r, a) in &renames {
        out.push(Delta {
            path: format!("actions.{a}"),
            severity: DeltaSeverity::Breaking,
            action: Some((*a).to_owned()),
            description: format!(
                "Action '{r}' was renamed to '{a}' (same input schema); call '{a}' instead."
            ),
            before: Some(json_str(r)),
            after: Some(json_str(a)),
        });
        compare_actions(old[r], new[a], true, &mut out);
    }
    for r in removed.iter().filter(|r| !renames.contains_key(*r)) {
        out.push(Delta {
            path: format!("actions.{r}"),
            severity: DeltaSeverity::Breaking,
            action: Some((*r).to_owned()),
            description: format!("Action '{r}' was removed."),
            before: Some(json_str(r)),
            after: None,
        });
    }
    let renamed_to: BTreeSet<&str> = renames.values().copied().collect();
    for a in added.iter().filter(|a| !renamed_to.contains(*a)) {
        out.push(Delta {
            path: format!("actions.{a}"),
            severity: DeltaSeverity::Safe,
            action: Some((*a).to_owned()),
            description: format!("Action '{a}' was added."),
            before: None,
            after: Some(json_str(a)),
        });
    }
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out.dedup();
    out
}

/// Pairs each removed item with an added one when they are the only two sharing a key.
fn unique_pairs<'a>(
    removed: &[&'a str],
    added: &[&'a str],
    old_key: impl Fn(&str) -> String,
    new_key: impl Fn(&str) -> String,
) -> BTreeMap<&'a str, &'a str> {
    let mut by_key: BTreeMap<String, (Vec<&'a str>, Vec<&'a str>)> = BTreeMap::new();
    for r in removed {
        by_key.entry(old_key(r)).or_default().0.push(r);
    }
    for a in added {
        by_key.entry(new_key(a)).or_default().1.push(a);
    }
    by_key
        .into_values()
        .filter_map(|(r, a)| match (r.as_slice(), a.as_slice()) {
            ([r], [a]) => Some((*r, *a)),
            _ => None,
        })
        .collect()
}

fn json_str(s: &str) -> String {
    to_canonical_string(&Value::String(s.to_owned()))
}

fn json(v: &Value) -> String {
    to_canonical_string(v)
}

fn compare_actions(old: &ToolContract, new: &ToolContract, renamed: bool, out: &mut Vec<Delta>) {
    let name = new.action.as_str();
    let base = format!("actions.{name}");
    let mut push = |path: String, severity, description: String, before, after| {
        out.push(Delta {
            path,
            severity,
            action: Some(name.to_owned()),
            description,
            before,
            after,
        });
    };
    if old.tool != new.tool && !renamed {
        push(
            format!("{base}.tool"),
            DeltaSeverity::Breaking,
            format!(
                "The MCP tool of '{name}' was renamed from '{}' to '{}'; call '{}' instead.",
                old.tool, new.tool, new.tool
            ),
            Some(json_str(&old.tool)),
            Some(json_str(&new.tool)),
        );
    }
    if old.description != new.description {
        push(
            format!("{base}.description"),
            DeltaSeverity::Cosmetic,
            format!("The description of '{name}' was reworded."),
            Some(json_str(&old.description)),
            Some(json_str(&new.description)),
        );
    }
    match (&old.deprecated, &new.deprecated) {
        (None, Some(note)) => push(
            format!("{base}.deprecated"),
            DeltaSeverity::Risky,
            format!("Action '{name}' is now deprecated: {note}"),
            None,
            Some(json_str(note)),
        ),
        (Some(note), None) => push(
            format!("{base}.deprecated"),
            DeltaSeverity::Safe,
            format!("Action '{name}' is no longer deprecated."),
            Some(json_str(note)),
            None,
        ),
        (Some(a), Some(b)) if a != b => push(
            format!("{base}.deprecated"),
            DeltaSeverity::Cosmetic,
            format!("The deprecation note of '{name}' was reworded."),
            Some(json_str(a)),
            Some(json_str(b)),
        ),
        _ => {}
    }
    let (oa, na) = (&old.annotations, &new.annotations);
    // (key, written before, written after, effective before, effective after, value that is
    // riskier, wording when it became riskier, wording when it became safer)
    let hints = [
        (
            "readOnlyHint",
            oa.read_only,
            na.read_only,
            oa.effective_read_only(),
            na.effective_read_only(),
            false,
            "is no longer read-only: it may now modify its environment",
            "is now read-only",
        ),
        (
            "destructiveHint",
            oa.destructive,
            na.destructive,
            oa.effective_destructive(),
            na.effective_destructive(),
            true,
            "may now perform destructive updates",
            "no longer performs destructive updates",
        ),
        (
            "idempotentHint",
            oa.idempotent,
            na.idempotent,
            oa.effective_idempotent(),
            na.effective_idempotent(),
            false,
            "is no longer idempotent: repeating a call may have further effects",
            "is now idempotent",
        ),
        (
            "openWorldHint",
            oa.open_world,
            na.open_world,
            oa.effective_open_world(),
            na.effective_open_world(),
            true,
            "now interacts with external systems (open world)",
            "no longer interacts with external systems",
        ),
    ];
    for (key, wb, wa, eb, ea, risky, worse, better) in hints {
        let path = format!("{base}.annotations.{key}");
        let show = |w: Option<bool>| w.map(|b| b.to_string());
        if eb != ea {
            let (severity, words) = if ea == risky {
                (DeltaSeverity::Risky, worse)
            } else {
                (DeltaSeverity::Safe, better)
            };
            push(
                path,
                severity,
                format!("Action '{name}' {words} ({key} {eb} -> {ea})."),
                Some(eb.to_string()),
                Some(ea.to_string()),
            );
        } else if wb != wa {
            push(
                path,
                DeltaSeverity::Cosmetic,
                format!(
                    "{key} of '{name}' is now written differently; its effective value stays {ea}."
                ),
                show(wb),
                show(wa),
            );
        }
    }
    let mut walker = Walker {
        old_root: &old.input_schema,
        new_root: &new.input_schema,
        action: name,
        base: format!("{base}.input"),
        refs: Vec::new(),
        roots_equal: old.input_schema == new.input_schema,
        out,
    };
    walker.node(&old.input_schema, &new.input_schema, "", 0);
}

const MAX_DEPTH: usize = 64;

/// Keywords that annotate a schema without constraining it.
const ANNOTATIONS: &[&str] = &["description", "title", "examples", "$comment"];

/// Lower bounds: raising one (or adding one) tightens.
const LOWER: &[&str] = &[
    "minLength",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "minProperties",
];
/// Upper bounds: lowering one (or adding one) tightens.
const UPPER: &[&str] = &[
    "maxLength",
    "maximum",
    "exclusiveMaximum",
    "maxItems",
    "maxProperties",
];

struct Walker<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
    action: &'a str,
    base: String,
    /// The `$ref` pairs being expanded, to stop on recursive schemas.
    refs: Vec<(Option<String>, Option<String>)>,
    /// Whether both whole schemas are equal: then equal subschemas resolve equally.
    roots_equal: bool,
    out: &'a mut Vec<Delta>,
}

enum Node {
    Object(Map<String, Value>),
    Never,
    Other(Value),
}

enum Extra {
    Any,
    Never,
    Schema(Value),
}

fn extra(v: Option<&Value>) -> Extra {
    match v {
        None | Some(Value::Bool(true)) => Extra::Any,
        Some(Value::Bool(false)) => Extra::Never,
        Some(Value::Object(m)) if m.is_empty() => Extra::Any,
        Some(v) => Extra::Schema(v.clone()),
    }
}

fn type_set(v: Option<&Value>) -> Option<BTreeSet<String>> {
    match v? {
        Value::String(s) => Some(BTreeSet::from([s.clone()])),
        Value::Array(items) => Some(
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| json(i), str::to_owned))
                .collect(),
        ),
        other => Some(BTreeSet::from([json(other)])),
    }
}

fn subject(field: &str) -> String {
    if field.is_empty() {
        "the input".to_owned()
    } else {
        format!("field '{field}'")
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn join_field(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

fn stripped(m: &Map<String, Value>) -> String {
    let mut m = m.clone();
    for k in ANNOTATIONS {
        m.remove(*k);
    }
    to_canonical_string(&Value::Object(m))
}

impl Walker<'_> {
    /// Whether two subschemas are certainly equivalent: equal, and either free of `$ref` or
    /// read against equal roots (the same `$ref` may point at a changed definition).
    fn same(&self, a: Option<&Value>, b: Option<&Value>) -> bool {
        a == b && (self.roots_equal || !a.is_some_and(has_ref))
    }

    fn push(
        &mut self,
        field: &str,
        severity: DeltaSeverity,
        description: String,
        before: Option<String>,
        after: Option<String>,
    ) {
        let path = if field.is_empty() {
            self.base.clone()
        } else if field.starts_with('[') {
            format!("{}{field}", self.base)
        } else {
            format!("{}.{field}", self.base)
        };
        self.out.push(Delta {
            path,
            severity,
            action: Some(self.action.to_owned()),
            description,
            before,
            after,
        });
    }

    /// `v` with its local `$ref` (if any) followed, sibling keywords overlaid on the target.
    fn resolve(&self, root: &Value, v: &Value) -> (Node, Option<String>) {
        let mut current = v.clone();
        let mut first_ref = None;
        for _ in 0..16 {
            let Value::Object(m) = &current else { break };
            let Some(Value::String(r)) = m.get("$ref") else {
                break;
            };
            let Some(target) = r.strip_prefix('#').and_then(|p| root.pointer(p)) else {
                break;
            };
            if first_ref.is_none() {
                first_ref = Some(r.clone());
            }
            let mut merged = match target {
                Value::Object(t) => t.clone(),
                Value::Bool(true) => Map::new(),
                other => {
                    current = other.clone();
                    break;
                }
            };
            for (k, val) in m {
                if k != "$ref" {
                    merged.insert(k.clone(), val.clone());
                }
            }
            current = Value::Object(merged);
        }
        let node = match current {
            Value::Object(m) => Node::Object(m),
            Value::Bool(true) => Node::Object(Map::new()),
            Value::Bool(false) => Node::Never,
            other => Node::Other(other),
        };
        (node, first_ref)
    }

    fn node(&mut self, old: &Value, new: &Value, field: &str, depth: usize) {
        if depth > MAX_DEPTH || self.same(Some(old), Some(new)) {
            return;
        }
        let (o, oref) = self.resolve(self.old_root, old);
        let (n, nref) = self.resolve(self.new_root, new);
        let pair = (oref, nref);
        if (pair.0.is_some() || pair.1.is_some()) && self.refs.contains(&pair) {
            return;
        }
        self.refs.push(pair);
        let subj = subject(field);
        match (o, n) {
            (Node::Object(o), Node::Object(n)) => self.object(&o, &n, field, depth),
            (Node::Never, Node::Never) => {}
            (_, Node::Never) => self.push(
                field,
                DeltaSeverity::Breaking,
                format!("{} no longer accepts any value.", capitalized(&subj)),
                Some(json(old)),
                Some(json(new)),
            ),
            (Node::Never, _) => self.push(
                field,
                DeltaSeverity::Safe,
                format!("{} now accepts values.", capitalized(&subj)),
                Some(json(old)),
                Some(json(new)),
            ),
            (o, n) => {
                let (ov, nv) = (node_value(o), node_value(n));
                if ov != nv {
                    self.push(
                        field,
                        DeltaSeverity::Risky,
                        format!(
                            "The schema of {subj} changed in a way Fusion does not classify; review it."
                        ),
                        Some(json(&ov)),
                        Some(json(&nv)),
                    );
                }
            }
        }
        self.refs.pop();
    }

    fn object(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        field: &str,
        depth: usize,
    ) {
        let subj = subject(field);
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for key in keys {
            let (ov, nv) = (o.get(key.as_str()), n.get(key.as_str()));
            if self.same(ov, nv) {
                continue;
            }
            let k = key.as_str();
            match k {
                "type" => self.types(ov, nv, field),
                "enum" => self.enums(ov, nv, field),
                "const" => self.tighten_when_set(
                    k,
                    ov,
                    nv,
                    field,
                    [
                        "now accepts only one value",
                        "now accepts only a different value",
                        "no longer accepts only one value",
                    ],
                ),
                "pattern" => self.tighten_when_set(
                    k,
                    ov,
                    nv,
                    field,
                    [
                        "now must match a pattern",
                        "must match a different pattern",
                        "no longer must match a pattern",
                    ],
                ),
                "format" => self.tighten_when_set(
                    k,
                    ov,
                    nv,
                    field,
                    [
                        "now must have a format",
                        "must have a different format",
                        "no longer must have a format",
                    ],
                ),
                "multipleOf" => self.multiple_of(ov, nv, field),
                "uniqueItems" => self.unique_items(ov, nv, field),
                "additionalProperties" => self.additional(ov, nv, field, depth),
                "properties" | "required" => {}
                "items" => match (ov, nv) {
                    (Some(a), Some(b)) if !a.is_array() && !b.is_array() => {
                        self.node(a, b, &format!("{field}[]"), depth + 1)
                    }
                    _ => self.unclassified(k, ov, nv, field),
                },
                "prefixItems" => match (ov, nv) {
                    (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
                        for (i, (x, y)) in a.iter().zip(b).enumerate() {
                            self.node(x, y, &format!("{field}[{i}]"), depth + 1);
                        }
                    }
                    _ => self.unclassified(k, ov, nv, field),
                },
                "anyOf" | "oneOf" => self.alternatives(k, ov, nv, field, depth),
                "allOf" => match (ov, nv) {
                    (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
                        for (x, y) in a.iter().zip(b) {
                            self.node(x, y, field, depth + 1);
                        }
                    }
                    _ => self.unclassified(k, ov, nv, field),
                },
                "description" => {
                    let severity = if !field.is_empty() && stripped(o) == stripped(n) {
                        DeltaSeverity::Risky
                    } else {
                        DeltaSeverity::Cosmetic
                    };
                    let words = if severity == DeltaSeverity::Risky {
                        "while its constraints did not: its meaning may have changed; read it again"
                    } else {
                        "(wording)"
                    };
                    self.push(
                        field,
                        severity,
                        format!("The description of {subj} changed {words}."),
                        ov.map(json),
                        nv.map(json),
                    );
                }
                "title" | "examples" | "$comment" | "$schema" | "$id" => self.push(
                    field,
                    DeltaSeverity::Cosmetic,
                    format!("Keyword '{k}' of {subj} changed."),
                    ov.map(json),
                    nv.map(json),
                ),
                "default" => self.push(
                    field,
                    DeltaSeverity::Risky,
                    format!(
                        "The default of {subj} changed: a call that leaves it out behaves differently."
                    ),
                    ov.map(json),
                    nv.map(json),
                ),
                "deprecated" => {
                    let now = nv.and_then(Value::as_bool).unwrap_or(false);
                    let (severity, words) = if now {
                        (DeltaSeverity::Risky, "is now deprecated")
                    } else {
                        (DeltaSeverity::Safe, "is no longer deprecated")
                    };
                    self.push(
                        field,
                        severity,
                        format!("{} {words}.", capitalized(&subj)),
                        ov.map(json),
                        nv.map(json),
                    );
                }
                "$defs" | "definitions" | "$ref" => {}
                _ if LOWER.contains(&k) => self.bound(k, ov, nv, field, false),
                _ if UPPER.contains(&k) => self.bound(k, ov, nv, field, true),
                _ => self.unclassified(k, ov, nv, field),
            }
        }
        if !self.same(o.get("properties"), n.get("properties"))
            || o.get("required") != n.get("required")
        {
            self.properties(o, n, field, depth);
        }
        // A `$ref` neither side could resolve: all that can be compared is where it points.
        if let (Some(a), Some(b)) = (o.get("$ref"), n.get("$ref"))
            && a != b
        {
            self.unclassified("$ref", Some(a), Some(b), field);
        }
    }

    fn unclassified(&mut self, k: &str, ov: Option<&Value>, nv: Option<&Value>, field: &str) {
        self.push(
            field,
            DeltaSeverity::Risky,
            format!(
                "Keyword '{k}' of {} changed in a way Fusion does not classify; review it.",
                subject(field)
            ),
            ov.map(json),
            nv.map(json),
        );
    }

    fn types(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: &str) {
        let subj = capitalized(&subject(field));
        let (before, after) = (ov.map(json), nv.map(json));
        match (type_set(ov), type_set(nv)) {
            (None, Some(_)) => self.push(
                field,
                DeltaSeverity::Breaking,
                format!("{subj} is now restricted to a type."),
                before,
                after,
            ),
            (Some(_), None) => self.push(
                field,
                DeltaSeverity::Safe,
                format!("{subj} no longer restricts its type."),
                before,
                after,
            ),
            (Some(a), Some(b)) if a != b => {
                let accepted =
                    |t: &String| b.contains(t) || (t == "integer" && b.contains("number"));
                if a.iter().all(accepted) {
                    self.push(
                        field,
                        DeltaSeverity::Safe,
                        format!("{subj} now accepts more types."),
                        before,
                        after,
                    );
                } else {
                    self.push(
                        field,
                        DeltaSeverity::Breaking,
                        format!("The type of {} changed.", subject(field)),
                        before,
                        after,
                    );
                }
            }
            _ => {}
        }
    }

    fn enums(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: &str) {
        let subj = subject(field);
        let set = |v: Option<&Value>| -> Option<BTreeMap<String, Value>> {
            match v? {
                Value::Array(items) => Some(items.iter().map(|i| (json(i), i.clone())).collect()),
                other => Some(BTreeMap::from([(json(other), other.clone())])),
            }
        };
        match (set(ov), set(nv)) {
            (None, Some(_)) => self.push(
                field,
                DeltaSeverity::Breaking,
                format!(
                    "{} is now restricted to a list of values.",
                    capitalized(&subj)
                ),
                None,
                nv.map(json),
            ),
            (Some(_), None) => self.push(
                field,
                DeltaSeverity::Safe,
                format!(
                    "{} is no longer restricted to a list of values.",
                    capitalized(&subj)
                ),
                ov.map(json),
                None,
            ),
            (Some(a), Some(b)) => {
                let removed: Vec<Value> = a
                    .iter()
                    .filter(|(k, _)| !b.contains_key(*k))
                    .map(|(_, v)| v.clone())
                    .collect();
                let added: Vec<Value> = b
                    .iter()
                    .filter(|(k, _)| !a.contains_key(*k))
                    .map(|(_, v)| v.clone())
                    .collect();
                if !removed.is_empty() {
                    self.push(
                        field,
                        DeltaSeverity::Breaking,
                        format!(
                            "{} no longer accepts {}.",
                            capitalized(&subj),
                            listed(&removed)
                        ),
                        ov.map(json),
                        nv.map(json),
                    );
                }
                if !added.is_empty() {
                    self.push(
                        field,
                        DeltaSeverity::Safe,
                        format!(
                            "{} now also accepts {}.",
                            capitalized(&subj),
                            listed(&added)
                        ),
                        ov.map(json),
                        nv.map(json),
                    );
                }
            }
            (None, None) => {}
        }
    }

    /// A keyword that restricts when present: adding or changing it tightens, removing it
    /// loosens.
    fn tighten_when_set(
        &mut self,
        k: &str,
        ov: Option<&Value>,
        nv: Option<&Value>,
        field: &str,
        [added, changed, removed]: [&str; 3],
    ) {
        let subj = subject(field);
        let (severity, words) = match (ov, nv) {
            (None, Some(_)) => (DeltaSeverity::Breaking, format!("{added} ({k} added)")),
            (Some(_), Some(_)) => (DeltaSeverity::Breaking, format!("{changed} ({k} changed)")),
            _ => (DeltaSeverity::Safe, format!("{removed} ({k} removed)")),
        };
        self.push(
            field,
            severity,
            format!("{} {words}.", capitalized(&subj)),
            ov.map(json),
            nv.map(json),
        );
    }

    fn bound(&mut self, k: &str, ov: Option<&Value>, nv: Option<&Value>, field: &str, upper: bool) {
        let subj = subject(field);
        let (before, after) = (ov.map(json), nv.map(json));
        let (severity, words) = match (ov.map(Value::as_f64), nv.map(Value::as_f64)) {
            (None, Some(Some(_))) => (DeltaSeverity::Breaking, format!("{k} was added to {subj}")),
            (Some(Some(_)), None) => (DeltaSeverity::Safe, format!("{k} was removed from {subj}")),
            (Some(Some(a)), Some(Some(b))) => {
                if a == b {
                    return;
                }
                let tightened = if upper { b < a } else { b > a };
                let moved = if b < a { "lowered" } else { "raised" };
                if tightened {
                    (
                        DeltaSeverity::Breaking,
                        format!("{k} of {subj} was {moved} (tightened)"),
                    )
                } else {
                    (
                        DeltaSeverity::Safe,
                        format!("{k} of {subj} was {moved} (loosened)"),
                    )
                }
            }
            _ => return self.unclassified(k, ov, nv, field),
        };
        self.push(field, severity, format!("{words}."), before, after);
    }

    fn multiple_of(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: &str) {
        let subj = subject(field);
        let (before, after) = (ov.map(json), nv.map(json));
        let (severity, words) = match (ov.map(Value::as_f64), nv.map(Value::as_f64)) {
            (None, Some(Some(_))) => (
                DeltaSeverity::Breaking,
                "now must be a multiple (multipleOf added)",
            ),
            (Some(Some(_)), None) => (
                DeltaSeverity::Safe,
                "no longer must be a multiple (multipleOf removed)",
            ),
            (Some(Some(a)), Some(Some(b))) if b != 0.0 && (a / b).fract() == 0.0 => (
                DeltaSeverity::Safe,
                "accepts more multiples (multipleOf loosened: every old value stays valid)",
            ),
            (Some(Some(_)), Some(Some(_))) => (
                DeltaSeverity::Breaking,
                "must be a multiple of a different number (multipleOf changed)",
            ),
            _ => return self.unclassified("multipleOf", ov, nv, field),
        };
        self.push(
            field,
            severity,
            format!("{} {words}.", capitalized(&subj)),
            before,
            after,
        );
    }

    fn unique_items(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: &str) {
        let on = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
        let (a, b) = (on(ov), on(nv));
        if a == b {
            return self.push(
                field,
                DeltaSeverity::Cosmetic,
                format!(
                    "Keyword 'uniqueItems' of {} is written differently.",
                    subject(field)
                ),
                ov.map(json),
                nv.map(json),
            );
        }
        let (severity, words) = if b {
            (DeltaSeverity::Breaking, "now requires unique items")
        } else {
            (DeltaSeverity::Safe, "no longer requires unique items")
        };
        self.push(
            field,
            severity,
            format!("{} {words}.", capitalized(&subject(field))),
            ov.map(json),
            nv.map(json),
        );
    }

    fn additional(&mut self, ov: Option<&Value>, nv: Option<&Value>, field: &str, depth: usize) {
        let subj = subject(field);
        let (before, after) = (ov.map(json), nv.map(json));
        let (severity, words) = match (extra(ov), extra(nv)) {
            (Extra::Never, Extra::Never) | (Extra::Any, Extra::Any) => (
                DeltaSeverity::Cosmetic,
                "writes additionalProperties differently",
            ),
            (_, Extra::Never) => (
                DeltaSeverity::Breaking,
                "now rejects unknown keys (additionalProperties: false)",
            ),
            (Extra::Never, _) => (DeltaSeverity::Safe, "now accepts unknown keys"),
            (Extra::Any, Extra::Schema(_)) => (
                DeltaSeverity::Breaking,
                "now constrains unknown keys (additionalProperties)",
            ),
            (Extra::Schema(_), Extra::Any) => (
                DeltaSeverity::Safe,
                "no longer constrains unknown keys (additionalProperties)",
            ),
            (Extra::Schema(a), Extra::Schema(b)) => {
                return self.node(&a, &b, &join_field(field, "*"), depth + 1);
            }
        };
        self.push(
            field,
            severity,
            format!("{} {words}.", capitalized(&subj)),
            before,
            after,
        );
    }

    fn alternatives(
        &mut self,
        k: &str,
        ov: Option<&Value>,
        nv: Option<&Value>,
        field: &str,
        depth: usize,
    ) {
        let (Some(Value::Array(a)), Some(Value::Array(b))) = (ov, nv) else {
            return self.unclassified(k, ov, nv, field);
        };
        if a.len() == b.len() {
            for (x, y) in a.iter().zip(b) {
                self.node(x, y, field, depth + 1);
            }
            return;
        }
        let sa: BTreeSet<String> = a.iter().map(json).collect();
        let sb: BTreeSet<String> = b.iter().map(json).collect();
        let subj = capitalized(&subject(field));
        if sa.iter().any(|s| !sb.contains(s)) {
            self.push(
                field,
                DeltaSeverity::Breaking,
                format!("{subj} no longer accepts some of the shapes it accepted ({k})."),
                ov.map(json),
                nv.map(json),
            );
        }
        if sb.iter().any(|s| !sa.contains(s)) {
            self.push(
                field,
                DeltaSeverity::Safe,
                format!("{subj} accepts new shapes ({k})."),
                ov.map(json),
                nv.map(json),
            );
        }
    }

    fn properties(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        field: &str,
        depth: usize,
    ) {
        let empty = Map::new();
        let props = |m: &Map<String, Value>| -> Map<String, Value> {
            m.get("properties")
                .and_then(Value::as_object)
                .unwrap_or(&empty)
                .clone()
        };
        let required = |m: &Map<String, Value>| -> BTreeSet<String> {
            m.get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let (op, np) = (props(o), props(n));
        let (or, nr) = (required(o), required(n));
        let op_keys: BTreeSet<&str> = op.keys().map(String::as_str).collect();
        let np_keys: BTreeSet<&str> = np.keys().map(String::as_str).collect();
        let removed: Vec<&str> = op_keys.difference(&np_keys).copied().collect();
        let added: Vec<&str> = np_keys.difference(&op_keys).copied().collect();
        let renames = unique_pairs(&removed, &added, |r| json(&op[r]), |a| json(&np[a]));
        let renamed_to: BTreeSet<&str> = renames.values().copied().collect();

        for (r, a) in &renames {
            let path = join_field(field, r);
            self.push(
                &path,
                DeltaSeverity::Breaking,
                format!("Field '{path}' was renamed to '{}'.", join_field(field, a)),
                Some(json_str(r)),
                Some(json_str(a)),
            );
            if !or.contains(*r) && nr.contains(*a) {
                let new_path = join_field(field, a);
                self.push(
                    &new_path,
                    DeltaSeverity::Breaking,
                    format!("Field '{new_path}' (formerly '{path}') is now required."),
                    Some("false".into()),
                    Some("true".into()),
                );
            } else if or.contains(*r) && !nr.contains(*a) {
                let new_path = join_field(field, a);
                self.push(
                    &new_path,
                    DeltaSeverity::Safe,
                    format!("Field '{new_path}' (formerly '{path}') is now optional."),
                    Some("true".into()),
                    Some("false".into()),
                );
            }
        }
        for r in removed.iter().filter(|r| !renames.contains_key(*r)) {
            let path = join_field(field, r);
            self.push(
                &path,
                DeltaSeverity::Breaking,
                format!("Field '{path}' was removed."),
                Some(json_str(r)),
                None,
            );
        }
        for a in added.iter().filter(|a| !renamed_to.contains(*a)) {
            let path = join_field(field, a);
            if nr.contains(*a) {
                self.push(
                    &path,
                    DeltaSeverity::Breaking,
                    format!("New required field '{path}'."),
                    None,
                    Some(json(&np[*a])),
                );
            } else {
                self.push(
                    &path,
                    DeltaSeverity::Safe,
                    format!("New optional field '{path}'."),
                    None,
                    Some(json(&np[*a])),
                );
            }
        }
        let skip: BTreeSet<&str> = removed.iter().chain(&added).copied().collect();
        for name in or.symmetric_difference(&nr) {
            if skip.contains(name.as_str()) {
                continue;
            }
            let path = join_field(field, name);
            if nr.contains(name) {
                self.push(
                    &path,
                    DeltaSeverity::Breaking,
                    format!("Field '{path}' was optional and is now required."),
                    Some("false".into()),
                    Some("true".into()),
                );
            } else {
                self.push(
                    &path,
                    DeltaSeverity::Safe,
                    format!("Field '{path}' was required and is now optional."),
                    Some("true".into()),
                    Some("false".into()),
                );
            }
        }
        if let (Some(a), Some(b)) = (o.get("required"), n.get("required"))
            && or == nr
            && a != b
        {
            self.push(
                field,
                DeltaSeverity::Cosmetic,
                format!("The required list of {} was reordered.", subject(field)),
                Some(json(a)),
                Some(json(b)),
            );
        }
        for (name, a) in &op {
            if let Some(b) = np.get(name) {
                self.node(a, b, &join_field(field, name), depth + 1);
            }
        }
    }
}

fn has_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("$ref") || m.values().any(has_ref),
        Value::Array(items) => items.iter().any(has_ref),
        _ => false,
    }
}

fn node_value(n: Node) -> Value {
    match n {
        Node::Object(m) => Value::Object(m),
        Node::Never => Value::Bool(false),
        Node::Other(v) => v,
    }
}

fn listed(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| match v {
            Value::String(s) => format!("'{s}'"),
            other => json(other),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
