//! The two input schemas walked side by side: each subschema pair resolved through its `$ref`s,
//! each keyword handed to the keyword table the walk is given (`super::keywords::compare`),
//! properties matched by name (and by schema, for renames). The walk knows no keyword's
//! meaning, so the table can call back into it without the two files naming each other.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::delta::{Delta, DeltaSeverity, json, json_str, unique_pairs};
use crate::contract::ToolContract;
use crate::schema::{has_ref, resolve_overlaid};

/// Nesting followed before the walk stops.
const MAX_DEPTH: usize = 64;

/// How a keyword's change is judged: one row of the keyword table, given the walker to
/// report to and recurse with.
pub(super) type Compare = fn(&mut Walker<'_>, &Change<'_>);

/// One keyword that differs between two object schemas at the same place.
pub(super) struct Change<'a> {
    pub keyword: &'a str,
    pub old: Option<&'a Value>,
    pub new: Option<&'a Value>,
    /// The two schemas holding it.
    pub old_schema: &'a Map<String, Value>,
    pub new_schema: &'a Map<String, Value>,
    /// The dotted field path (`""` for the input itself).
    pub field: &'a str,
    pub depth: usize,
}

/// The deltas of the input schemas of `old` and `new`, each keyword's change judged by
/// `compare`.
pub(super) fn compare_inputs(
    old: &ToolContract,
    new: &ToolContract,
    compare: Compare,
    out: &mut Vec<Delta>,
) {
    let mut walker = Walker {
        compare,
        old_root: &old.input_schema,
        new_root: &new.input_schema,
        action: &new.action,
        base: format!("actions.{}.input", new.action),
        refs: Vec::new(),
        roots_equal: old.input_schema == new.input_schema,
        out,
    };
    walker.node(&old.input_schema, &new.input_schema, "", 0);
}

pub(super) struct Walker<'a> {
    compare: Compare,
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

impl Node {
    fn new(v: Value) -> Node {
        match v {
            Value::Object(m) => Node::Object(m),
            Value::Bool(true) => Node::Object(Map::new()),
            Value::Bool(false) => Node::Never,
            other => Node::Other(other),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Node::Object(m) => Value::Object(m),
            Node::Never => Value::Bool(false),
            Node::Other(v) => v,
        }
    }
}

/// `the input`, or `field 'a.b'`.
pub(super) fn subject(field: &str) -> String {
    if field.is_empty() {
        "the input".to_owned()
    } else {
        format!("field '{field}'")
    }
}

pub(super) fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

pub(super) fn join_field(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

impl Walker<'_> {
    /// Whether two subschemas are certainly equivalent: equal, and either free of `$ref` or
    /// read against equal roots (the same `$ref` may point at a changed definition).
    fn same(&self, a: Option<&Value>, b: Option<&Value>) -> bool {
        a == b && (self.roots_equal || !a.is_some_and(has_ref))
    }

    pub(super) fn push(
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

    /// Compares two subschemas at `field`.
    pub(super) fn node(&mut self, old: &Value, new: &Value, field: &str, depth: usize) {
        if depth > MAX_DEPTH || self.same(Some(old), Some(new)) {
            return;
        }
        let o = resolve_overlaid(self.old_root, old);
        let n = resolve_overlaid(self.new_root, new);
        let pair = (o.first_ref, n.first_ref);
        if (pair.0.is_some() || pair.1.is_some()) && self.refs.contains(&pair) {
            return;
        }
        self.refs.push(pair);
        let subj = subject(field);
        match (Node::new(o.schema), Node::new(n.schema)) {
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
                let (ov, nv) = (o.into_value(), n.into_value());
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

    /// Two object schemas: every keyword that differs through its row, then the fields.
    fn object(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        field: &str,
        depth: usize,
    ) {
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for key in keys {
            let (ov, nv) = (o.get(key.as_str()), n.get(key.as_str()));
            if self.same(ov, nv) {
                continue;
            }
            let change = Change {
                keyword: key,
                old: ov,
                new: nv,
                old_schema: o,
                new_schema: n,
                field,
                depth,
            };
            (self.compare)(self, &change);
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

    /// A change the rules do not classify: reported as risky with both values.
    pub(super) fn unclassified(
        &mut self,
        k: &str,
        ov: Option<&Value>,
        nv: Option<&Value>,
        field: &str,
    ) {
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
