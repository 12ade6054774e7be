//! One row per JSON Schema keyword: what a change of it means for an agent that learned the
//! old schema, and the words for it. A keyword a validation rule writes has its row in its
//! rule's declaration (its [`Change`]), read here; every other keyword has its row below. A
//! keyword without a row is reported as `Risky` with both values, so no change goes
//! unreported.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::delta::{DeltaSeverity, json};
use super::walk::{Change, Walker, capitalized, join_field, subject};
use crate::schema::without_annotations;
use crate::validation::rules::{self, Change as RuleChange};

use DeltaSeverity::{Cosmetic, Risky, Safe};

/// What a change of a keyword means.
enum Effect {
    /// A lower bound: adding or raising it tightens, removing or lowering it loosens.
    Lower,
    /// An upper bound: adding or lowering it tightens.
    Upper,
    /// Restricts when present: adding or changing it tightens, removing it loosens. The words
    /// after the subject when it is added, changed, removed.
    WhenSet([&'static str; 3]),
    /// Wording or representation only.
    Cosmetic,
    /// Calls still validate but may behave differently; `{subject}` is the field.
    Risky(&'static str),
    /// Holds subschemas, compared with the walk; its rule says how they pair up.
    Recurse(fn(&mut Walker<'_>, &Change<'_>)),
    /// A rule of its own, with its words in it.
    Rule(fn(&mut Walker<'_>, &Change<'_>)),
    /// Compared elsewhere: `properties` and `required` field by field, `$defs` through the
    /// `$ref`s that reach them, `$ref` by following it.
    Elsewhere,
}

use Effect::{Elsewhere, Lower, Recurse, Rule, Upper, WhenSet};

const KEYWORDS: &[(&str, Effect)] = &[
    ("type", Rule(types)),
    (
        "const",
        WhenSet([
            "now accepts only one value",
            "now accepts only a different value",
            "no longer accepts only one value",
        ]),
    ),
    ("minProperties", Lower),
    ("maxProperties", Upper),
    ("uniqueItems", Rule(unique_items)),
    ("additionalProperties", Recurse(additional)),
    ("items", Recurse(items)),
    ("prefixItems", Recurse(prefix_items)),
    ("anyOf", Recurse(alternatives)),
    ("oneOf", Recurse(alternatives)),
    ("allOf", Recurse(all_of)),
    ("description", Rule(description)),
    ("title", Effect::Cosmetic),
    ("examples", Effect::Cosmetic),
    ("$comment", Effect::Cosmetic),
    ("$schema", Effect::Cosmetic),
    ("$id", Effect::Cosmetic),
    (
        "default",
        Effect::Risky(
            "The default of {subject} changed: a call that leaves it out behaves differently.",
        ),
    ),
    ("deprecated", Rule(deprecated)),
    ("properties", Elsewhere),
    ("required", Elsewhere),
    ("$defs", Elsewhere),
    ("definitions", Elsewhere),
    ("$ref", Elsewhere),
];

/// The deltas of one keyword that differs, through its row: its rule's, else the table's.
pub(super) fn compare(w: &mut Walker<'_>, c: &Change<'_>) {
    if let Some(rule) = rules::keywords().find(|k| k.name == c.keyword) {
        return match rule.change {
            RuleChange::Lower => bound(w, c, false),
            RuleChange::Upper => bound(w, c, true),
            RuleChange::WhenSet(words) => when_set(w, c, words),
            RuleChange::Divisor => divisor(w, c),
            RuleChange::Choice => enums(w, c),
        };
    }
    let Some((_, effect)) = KEYWORDS.iter().find(|(k, _)| *k == c.keyword) else {
        return unclassified(w, c);
    };
    match effect {
        Lower => bound(w, c, false),
        Upper => bound(w, c, true),
        WhenSet(words) => when_set(w, c, *words),
        Effect::Cosmetic => w.push(
            c.field,
            Cosmetic,
            format!("Keyword '{}' of {} changed.", c.keyword, subject(c.field)),
            c.old.map(json),
            c.new.map(json),
        ),
        Effect::Risky(sentence) => w.push(
            c.field,
            Risky,
            sentence.replace("{subject}", &subject(c.field)),
            c.old.map(json),
            c.new.map(json),
        ),
        Recurse(rule) | Rule(rule) => rule(w, c),
        Elsewhere => {}
    }
}

fn unclassified(w: &mut Walker<'_>, c: &Change<'_>) {
    w.unclassified(c.keyword, c.old, c.new, c.field);
}

fn items(w: &mut Walker<'_>, c: &Change<'_>) {
    match (c.old, c.new) {
        (Some(a), Some(b)) if !a.is_array() && !b.is_array() => {
            w.node(a, b, &format!("{}[]", c.field), c.depth + 1)
        }
        _ => unclassified(w, c),
    }
}

fn prefix_items(w: &mut Walker<'_>, c: &Change<'_>) {
    match (c.old, c.new) {
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                w.node(x, y, &format!("{}[{i}]", c.field), c.depth + 1);
            }
        }
        _ => unclassified(w, c),
    }
}

fn all_of(w: &mut Walker<'_>, c: &Change<'_>) {
    match (c.old, c.new) {
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (x, y) in a.iter().zip(b) {
                w.node(x, y, c.field, c.depth + 1);
            }
        }
        _ => unclassified(w, c),
    }
}

/// A field's description that changes while nothing it constrains does may mean the field
/// now means something else — unless its `deprecated` flag changed with it: the derive writes
/// the deprecation note into the description, and the flag's own delta says what happened.
fn description(w: &mut Walker<'_>, c: &Change<'_>) {
    let constraints = |m| json(&Value::Object(without_annotations(m)));
    let flag = |m: &serde_json::Map<String, Value>| m.get("deprecated") == Some(&Value::Bool(true));
    let deprecation = flag(c.old_schema) != flag(c.new_schema);
    let severity = if !c.field.is_empty()
        && !deprecation
        && constraints(c.old_schema) == constraints(c.new_schema)
    {
        Risky
    } else {
        Cosmetic
    };
    let words = if severity == Risky {
        "while its constraints did not: its meaning may have changed; read it again"
    } else if deprecation {
        "(wording, with its deprecation)"
    } else {
        "(wording)"
    };
    w.push(
        c.field,
        severity,
        format!("The description of {} changed {words}.", subject(c.field)),
        c.old.map(json),
        c.new.map(json),
    );
}

fn deprecated(w: &mut Walker<'_>, c: &Change<'_>) {
    let now = c.new.and_then(Value::as_bool).unwrap_or(false);
    let (severity, words) = if now {
        (Risky, "is now deprecated")
    } else {
        (Safe, "is no longer deprecated")
    };
    w.push(
        c.field,
        severity,
        format!("{} {words}.", capitalized(&subject(c.field))),
        c.old.map(json),
        c.new.map(json),
    );
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

fn types(w: &mut Walker<'_>, c: &Change<'_>) {
    let (ov, nv, field) = (c.old, c.new, c.field);
    let subj = capitalized(&subject(field));
    let (before, after) = (ov.map(json), nv.map(json));
    match (type_set(ov), type_set(nv)) {
        (None, Some(_)) => w.push(
            field,
            DeltaSeverity::Breaking,
            format!("{subj} is now restricted to a type."),
            before,
            after,
        ),
        (Some(_), None) => w.push(
            field,
            DeltaSeverity::Safe,
            format!("{subj} no longer restricts its type."),
            before,
            after,
        ),
        (Some(a), Some(b)) if a != b => {
            let accepted = |t: &String| b.contains(t) || (t == "integer" && b.contains("number"));
            if a.iter().all(accepted) {
                w.push(
                    field,
                    DeltaSeverity::Safe,
                    format!("{subj} now accepts more types."),
                    before,
                    after,
                );
            } else {
                w.push(
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

fn enums(w: &mut Walker<'_>, c: &Change<'_>) {
    let (ov, nv, field) = (c.old, c.new, c.field);
    let subj = subject(field);
    let set = |v: Option<&Value>| -> Option<BTreeMap<String, Value>> {
        match v? {
            Value::Array(items) => Some(items.iter().map(|i| (json(i), i.clone())).collect()),
            other => Some(BTreeMap::from([(json(other), other.clone())])),
        }
    };
    match (set(ov), set(nv)) {
        (None, Some(_)) => w.push(
            field,
            DeltaSeverity::Breaking,
            format!(
                "{} is now restricted to a list of values.",
                capitalized(&subj)
            ),
            None,
            nv.map(json),
        ),
        (Some(_), None) => w.push(
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
                w.push(
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
                w.push(
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
fn when_set(w: &mut Walker<'_>, c: &Change<'_>, [added, changed, removed]: [&str; 3]) {
    let (k, ov, nv, field) = (c.keyword, c.old, c.new, c.field);
    let subj = subject(field);
    let (severity, words) = match (ov, nv) {
        (None, Some(_)) => (DeltaSeverity::Breaking, format!("{added} ({k} added)")),
        (Some(_), Some(_)) => (DeltaSeverity::Breaking, format!("{changed} ({k} changed)")),
        _ => (DeltaSeverity::Safe, format!("{removed} ({k} removed)")),
    };
    w.push(
        field,
        severity,
        format!("{} {words}.", capitalized(&subj)),
        ov.map(json),
        nv.map(json),
    );
}

fn bound(w: &mut Walker<'_>, c: &Change<'_>, upper: bool) {
    let (k, ov, nv, field) = (c.keyword, c.old, c.new, c.field);
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
        _ => return unclassified(w, c),
    };
    w.push(field, severity, format!("{words}."), before, after);
}

/// A divisor (`multipleOf`): a new one that divides the old keeps every old value valid.
fn divisor(w: &mut Walker<'_>, c: &Change<'_>) {
    let (ov, nv, field) = (c.old, c.new, c.field);
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
        _ => return unclassified(w, c),
    };
    w.push(
        field,
        severity,
        format!("{} {words}.", capitalized(&subj)),
        before,
        after,
    );
}

fn unique_items(w: &mut Walker<'_>, c: &Change<'_>) {
    let (ov, nv, field) = (c.old, c.new, c.field);
    let on = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
    let (a, b) = (on(ov), on(nv));
    if a == b {
        return w.push(
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
    w.push(
        field,
        severity,
        format!("{} {words}.", capitalized(&subject(field))),
        ov.map(json),
        nv.map(json),
    );
}

fn additional(w: &mut Walker<'_>, c: &Change<'_>) {
    let (ov, nv, field, depth) = (c.old, c.new, c.field, c.depth);
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
            return w.node(&a, &b, &join_field(field, "*"), depth + 1);
        }
    };
    w.push(
        field,
        severity,
        format!("{} {words}.", capitalized(&subj)),
        before,
        after,
    );
}

fn alternatives(w: &mut Walker<'_>, c: &Change<'_>) {
    let (k, ov, nv, field, depth) = (c.keyword, c.old, c.new, c.field, c.depth);
    let (Some(Value::Array(a)), Some(Value::Array(b))) = (ov, nv) else {
        return unclassified(w, c);
    };
    if a.len() == b.len() {
        for (x, y) in a.iter().zip(b) {
            w.node(x, y, field, depth + 1);
        }
        return;
    }
    let sa: BTreeSet<String> = a.iter().map(json).collect();
    let sb: BTreeSet<String> = b.iter().map(json).collect();
    let subj = capitalized(&subject(field));
    if sa.iter().any(|s| !sb.contains(s)) {
        w.push(
            field,
            DeltaSeverity::Breaking,
            format!("{subj} no longer accepts some of the shapes it accepted ({k})."),
            ov.map(json),
            nv.map(json),
        );
    }
    if sb.iter().any(|s| !sa.contains(s)) {
        w.push(
            field,
            DeltaSeverity::Safe,
            format!("{subj} accepts new shapes ({k})."),
            ov.map(json),
            nv.map(json),
        );
    }
}

#[cfg(test)]
mod rule_rows {
    use super::KEYWORDS;

    /// A rule's keyword has its row in its rule's declaration only: a second row here would
    /// never be read, and could say something else.
    #[test]
    fn no_rule_keyword_has_a_row_here() {
        for keyword in crate::validation::rules::keywords() {
            assert!(
                !KEYWORDS.iter().any(|(name, _)| *name == keyword.name),
                "`{}` has a row in the contract diff's table and in its rule's declaration",
                keyword.name
            );
        }
    }
}
