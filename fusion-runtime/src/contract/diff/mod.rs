//! The diff engine: every change between two sets of contracts, classified.
//!
//! [`metadata`] compares what an agent reads about an action (tool name, description,
//! deprecation, hints) from a table; [`walk`] walks the two input schemas side by side,
//! following `$ref`s through [`crate::schema`]; [`keywords`] says, one row per JSON Schema
//! keyword, what a change of it means and in which words.

mod keywords;
mod metadata;
mod walk;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

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
    metadata::compare(old, new, renamed, out);
    walk::compare_inputs(old, new, keywords::compare, out);
}

/// `template` with each `{name}` of `vars` replaced by its value, in one pass: a value is
/// never read as a template itself.
fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let var = after
            .find('}')
            .and_then(|close| vars.iter().find(|(k, _)| *k == &after[..close]));
        match var {
            Some((k, v)) => {
                out.push_str(v);
                rest = &after[k.len() + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A schema whose field `line` points at a definition named `name` through `reference`.
    fn behind_ref(name: &str, reference: &str, max: u64) -> ToolContract {
        ToolContract::new(
            "a",
            "a",
            "",
            json!({
                "type": "object",
                "properties": {"line": {"$ref": reference}},
                "$defs": {name: {"type": "object", "properties": {"sku": {"type": "string", "maxLength": max}}}}
            }),
        )
    }

    #[test]
    fn changes_behind_escaped_refs_are_found() {
        for (name, reference) in [
            ("Line Item", "#/$defs/Line%20Item"),
            ("a/b", "#/$defs/a~1b"),
            ("m~n", "#/$defs/m~0n"),
            ("100%", "#/$defs/100%25"),
        ] {
            let d = diff(
                &[behind_ref(name, reference, 10)],
                &[behind_ref(name, reference, 5)],
            );
            assert_eq!(d.len(), 1, "{reference}: {d:?}");
            assert_eq!(
                d[0].to_string(),
                "BREAKING actions.a.input.line.sku: maxLength of field 'line.sku' was lowered (tightened). (before: 10, after: 5)",
                "{reference}"
            );
        }
    }

    #[test]
    fn fill_replaces_known_names_once() {
        assert_eq!(
            fill(
                "'{name}' is now {after} {other}",
                &[("name", "{after}"), ("after", "x")]
            ),
            "'{after}' is now x {other}"
        );
        assert_eq!(fill("{", &[]), "{");
    }
}
