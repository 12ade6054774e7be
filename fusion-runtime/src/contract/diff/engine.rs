//! Actions matched by name across the two sets (a removed action with exactly one added twin
//! of the same input schema is a rename), each matched pair compared by [`metadata`] and
//! [`walk`].
//!
//! [`metadata`]: super::metadata
//! [`walk`]: super::walk

use std::collections::{BTreeMap, BTreeSet};

use super::delta::{Delta, DeltaSeverity, json_str, unique_pairs};
use super::{keywords, metadata, walk};
use crate::contract::ToolContract;
use crate::contract::canonical::to_canonical_string;

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

fn compare_actions(old: &ToolContract, new: &ToolContract, renamed: bool, out: &mut Vec<Delta>) {
    metadata::compare(old, new, renamed, out);
    walk::compare_inputs(old, new, keywords::compare, out);
}
