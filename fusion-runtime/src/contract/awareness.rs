//! `<contract_awareness>`: the deltas an agent needs, rendered once, looked up per call.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::ToolContract;
use super::diff::{Delta, DeltaSeverity};
use super::lockfile::{LockError, Lockfile};
use crate::envelope::xml;
use crate::validation::quote_str;

/// The first line of every `<contract_awareness>` section.
pub const NOTICE: &str = "The contract of this tool changed since the version you may know. The changes are listed below; build your next call from the current contract, not from memory.";

/// Values longer than this many characters are cut (`…` marks the cut).
const MAX_VALUE_CHARS: usize = 50;

/// The `<contract_awareness>` sections of a server, rendered once from the deltas between its
/// lockfile and its current contracts.
///
/// Built once at startup; [`ContractAwareness::section_for`] is then a map lookup that returns
/// the pre-rendered section for the failed action (its own deltas plus tool-wide ones), or
/// `None`, without rendering or allocating anything. With no relevant deltas, the map is empty
/// and the lookup returns at once.
///
/// The section, as [`ValidationReport::render_with_sections`](crate::ValidationReport::render_with_sections)
/// places it before `</validation_error>`:
///
/// ```xml
/// <contract_awareness>
///   <notice>The contract of this tool changed since the version you may know. …</notice>
///   <delta severity="BREAKING" path="actions.billing.get_invoice.input.id">Field 'id' was renamed to 'invoice_id'. Before: 'id'. After: 'invoice_id'.</delta>
///   <delta severity="RISKY" path="actions.billing.get_invoice.annotations.destructiveHint">…</delta>
///   <omitted count="2">2 more changes not shown.</omitted>
/// </contract_awareness>
/// ```
///
/// Deltas come BREAKING first, then by path; at most `cap` are shown and the `<omitted>` line
/// counts the rest. Every name and value is escaped, line breaks in them become spaces (the
/// section stays one element per line), and values longer than 50 characters are cut.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContractAwareness {
    sections: HashMap<String, Box<str>>,
    tool_wide: Option<Box<str>>,
}

impl ContractAwareness {
    /// How many deltas a section shows by default.
    pub const DEFAULT_CAP: usize = 5;

    /// The severities a section shows by default.
    pub const DEFAULT_SEVERITIES: &'static [DeltaSeverity] =
        &[DeltaSeverity::Breaking, DeltaSeverity::Risky];

    /// Sections of the BREAKING and RISKY deltas, at most `cap` per section (`0` turns the
    /// sections off).
    pub fn new(deltas: Vec<Delta>, cap: usize) -> Self {
        Self::with_severities(deltas, cap, Self::DEFAULT_SEVERITIES)
    }

    /// Sections of the deltas whose severity is in `severities`, at most `cap` per section
    /// (`0` turns the sections off).
    pub fn with_severities(deltas: Vec<Delta>, cap: usize, severities: &[DeltaSeverity]) -> Self {
        if cap == 0 {
            return Self::default();
        }
        let mut tool_wide: Vec<Delta> = Vec::new();
        let mut per_action: HashMap<String, Vec<Delta>> = HashMap::new();
        for d in deltas {
            if !severities.contains(&d.severity) {
                continue;
            }
            match d.action.clone() {
                Some(action) => per_action.entry(action).or_default().push(d),
                None => tool_wide.push(d),
            }
        }
        let sections = per_action
            .into_iter()
            .map(|(action, mut own)| {
                own.extend(tool_wide.iter().cloned());
                (action, render(own, cap).into_boxed_str())
            })
            .collect();
        let tool_wide = (!tool_wide.is_empty()).then(|| render(tool_wide, cap).into_boxed_str());
        ContractAwareness {
            sections,
            tool_wide,
        }
    }

    /// Reads the lockfile at `path`, diffs it against the `current` contracts and builds the
    /// default sections (BREAKING and RISKY, at most `cap` each). An error means the server
    /// should run without the section (and say so once).
    pub fn from_lockfile(
        path: impl AsRef<Path>,
        current: &[ToolContract],
        cap: usize,
    ) -> Result<Self, LockError> {
        let lock = Lockfile::read(path)?;
        Ok(Self::new(lock.check(current), cap))
    }

    /// The rendered `<contract_awareness>` section for a validation error of `action`, or
    /// `None` when nothing relevant changed.
    #[inline]
    pub fn section_for(&self, action: &str) -> Option<&str> {
        if self.sections.is_empty() {
            return self.tool_wide.as_deref();
        }
        self.sections
            .get(action)
            .or(self.tool_wide.as_ref())
            .map(|s| &**s)
    }

    /// Whether no action has a section.
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty() && self.tool_wide.is_none()
    }
}

fn render(mut deltas: Vec<Delta>, cap: usize) -> String {
    deltas.sort_by(|a, b| {
        (a.severity, &a.path, &a.description).cmp(&(b.severity, &b.path, &b.description))
    });
    deltas.dedup();
    let shown = deltas.len().min(cap);
    let mut out = String::with_capacity(256 + shown * 160);
    out.push_str("<contract_awareness>\n  <notice>");
    out.push_str(NOTICE);
    out.push_str("</notice>");
    let mut text = String::with_capacity(160);
    for d in &deltas[..shown] {
        out.push_str("\n  <delta severity=\"");
        out.push_str(d.severity.as_str());
        out.push_str("\" path=\"");
        xml::push_attr(&mut out, &d.path);
        out.push_str("\">");
        text.clear();
        text.push_str(d.description.trim_end());
        if !text.ends_with(['.', '!', '?']) {
            text.push('.');
        }
        if let Some(b) = &d.before {
            let _ = write!(text, " Before: {}.", display_value(b));
        }
        if let Some(a) = &d.after {
            let _ = write!(text, " After: {}.", display_value(a));
        }
        xml::push_text(&mut out, &one_line(&text));
        out.push_str("</delta>");
    }
    let hidden = deltas.len() - shown;
    if hidden > 0 {
        let _ = write!(
            out,
            "\n  <omitted count=\"{hidden}\">{hidden} more change{} not shown.</omitted>",
            if hidden == 1 { "" } else { "s" }
        );
    }
    out.push_str("\n</contract_awareness>");
    out
}

/// A delta's JSON value as a model reads it: strings in single quotes, anything else as
/// compact JSON; cut to 50 characters.
fn display_value(json: &str) -> String {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::String(s)) => quote_str(&s),
        _ => match json.char_indices().nth(MAX_VALUE_CHARS) {
            None => json.to_owned(),
            Some(_) => {
                let end = json
                    .char_indices()
                    .nth(MAX_VALUE_CHARS - 3)
                    .map_or(json.len(), |(i, _)| i);
                format!("{}...", &json[..end])
            }
        },
    }
}

/// `s` with every line break and tab replaced by a space, so that the section keeps one
/// element per line when it is indented.
fn one_line(s: &str) -> String {
    s.replace(['\r', '\n', '\t'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_display_as_a_model_reads_them() {
        assert_eq!(display_value("\"id\""), "'id'");
        assert_eq!(display_value("64"), "64");
        assert_eq!(display_value("[\"a\",\"b\"]"), "[\"a\",\"b\"]");
        let long = format!("[{}]", "1,".repeat(40) + "1");
        let shown = display_value(&long);
        assert_eq!(shown.chars().count(), 50);
        assert!(shown.ends_with("..."));
        assert_eq!(display_value("not json"), "not json");
    }

    #[test]
    fn line_breaks_become_spaces() {
        assert_eq!(one_line("a\nb\r\nc\td"), "a b  c d");
    }

    #[test]
    fn lookup_without_deltas_is_empty() {
        let a = ContractAwareness::new(Vec::new(), 5);
        assert!(a.sections.is_empty() && a.tool_wide.is_none());
        assert_eq!(a.section_for("anything"), None);
    }
}
