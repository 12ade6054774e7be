//! What the diff reports: a [`Delta`] per change, its [`DeltaSeverity`], and the helpers the
//! engine's parts write them with.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::contract::canonical::to_canonical_string;

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
    pub(crate) fn sort_key(&self) -> impl Ord + '_ {
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

/// Pairs each removed item with an added one when they are the only two sharing a key.
pub(crate) fn unique_pairs<'a>(
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

pub(crate) fn json_str(s: &str) -> String {
    to_canonical_string(&Value::String(s.to_owned()))
}

pub(crate) fn json(v: &Value) -> String {
    to_canonical_string(v)
}

/// `template` with each `{name}` of `vars` replaced by its value, in one pass: a value is
/// never read as a template itself.
pub(crate) fn fill(template: &str, vars: &[(&str, &str)]) -> String {
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
