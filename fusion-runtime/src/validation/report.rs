//! The `<validation_error>` envelope: an [`Issue`]'s line (its problem and expected text in
//! its rule's words, from [`rules`](super::rules)) and the [`ValidationReport`] of one call.

use std::fmt::Write as _;

use serde_json::Value;

use super::issue::{Issue, IssueKind, MAX_FIELD_LINES, Measure, RECOVERY};
use super::rules;
use super::sent::{self, push_int, push_sent};
use crate::envelope::{MAX_ENVELOPE_BYTES, xml};

impl IssueKind {
    /// The kind's Zod-style code (`invalid_type`, `too_small`, …; `missing` for a required
    /// field); a rule's own kind's code is in its rule's file.
    pub fn code(&self) -> &'static str {
        match self {
            IssueKind::InvalidType { .. } => "invalid_type",
            IssueKind::Missing { .. } => "missing",
            IssueKind::TooSmall { .. } => "too_small",
            IssueKind::TooBig { .. } => "too_big",
            IssueKind::InvalidFormat { .. } => "invalid_format",
            IssueKind::UnrecognizedKey { .. } => "unrecognized_keys",
            IssueKind::InvalidValue { .. } => "invalid_value",
            IssueKind::InvalidUnion { .. } => "invalid_union",
            IssueKind::Custom { .. } => "custom",
            own => rules::own_issue(own).map_or("custom", |own| own.code),
        }
    }
}

impl Issue {
    /// The line's text (unescaped): problem, `You sent: …`, `Expected …`.
    pub fn line(&self) -> String {
        let mut out = String::with_capacity(96);
        self.write_line(&mut out);
        out
    }

    fn write_line(&self, out: &mut String) {
        match &self.kind {
            IssueKind::InvalidType { .. } => out.push_str(rules::types::PROBLEM),
            IssueKind::Missing { .. } => out.push_str(rules::required::PROBLEM),
            IssueKind::TooSmall { measure, .. } => out.push_str(measure.problem(false)),
            IssueKind::TooBig { measure, .. } => out.push_str(measure.problem(true)),
            IssueKind::InvalidFormat { format } => format.push_problem(out),
            IssueKind::UnrecognizedKey { key, known } => {
                rules::unknown_keys::push_problem(out, key, known);
            }
            IssueKind::InvalidValue { options } => {
                rules::enum_const::push_problem(out, options, self.sent.as_ref());
            }
            IssueKind::InvalidUnion { .. } => out.push_str(rules::union::PROBLEM),
            IssueKind::Custom { message } => rules::custom::push_problem(out, message),
            own => {
                if let Some(own_issue) = rules::own_issue(own) {
                    (own_issue.problem)(own, out);
                }
            }
        }
        out.push('.');
        if let Some(sent) = &self.sent {
            out.push_str(" You sent: ");
            push_sent(out, sent);
            if let IssueKind::TooSmall { measure, .. } | IssueKind::TooBig { measure, .. } =
                &self.kind
            {
                measure.push_measured(out, sent);
            }
            out.push('.');
        }
        // The expected text is written in place, then cut off its final periods (not past
        // the space of ` Expected `); nothing is left of ` Expected ` when it was empty.
        let before = out.len();
        out.push_str(" Expected ");
        let start = out.len();
        match &self.expected {
            Some(e) => out.push_str(e),
            None => self.push_default_expected(out),
        }
        let end = out.trim_end_matches('.').len();
        if end == start {
            out.truncate(before);
        } else {
            out.truncate(end);
            out.push('.');
        }
    }

    /// The "Expected …" text of the kind (before its final periods are cut).
    pub(crate) fn push_default_expected(&self, out: &mut String) {
        match &self.kind {
            IssueKind::InvalidType { expected } | IssueKind::Missing { expected } => {
                out.push_str(expected);
            }
            IssueKind::TooSmall {
                measure,
                limit,
                inclusive,
            } => measure.push_expected(out, *limit, *inclusive, false),
            IssueKind::TooBig {
                measure,
                limit,
                inclusive,
            } => measure.push_expected(out, *limit, *inclusive, true),
            IssueKind::InvalidFormat { format } => format.push_expected(out),
            IssueKind::UnrecognizedKey { known, .. } => {
                rules::unknown_keys::push_expected(out, known);
            }
            IssueKind::InvalidValue { options } => rules::enum_const::push_expected(out, options),
            IssueKind::InvalidUnion { shapes } => rules::union::push_expected(out, shapes),
            IssueKind::Custom { .. } => {}
            own => {
                if let Some(own_issue) = rules::own_issue(own) {
                    (own_issue.expected)(own, out);
                }
            }
        }
    }
}

impl Measure {
    /// The problem, from the rule that measures it: `Too short`, `Too large`, ….
    fn problem(self, upper: bool) -> &'static str {
        let (below, above) = match self {
            Measure::Length => rules::length::PROBLEMS,
            Measure::Number => rules::range::PROBLEMS,
            Measure::Items => rules::items::PROBLEMS,
            Measure::Properties => rules::properties::PROBLEMS,
        };
        if upper { above } else { below }
    }

    /// The count after a sent string or object bound by its size: ` (2 characters)`.
    fn push_measured(self, out: &mut String, sent: &Value) {
        let (n, unit) = match (self, sent) {
            (Measure::Length, Value::String(s)) => (s.chars().count(), rules::length::UNIT),
            (Measure::Properties, Value::Object(m)) => (m.len(), rules::properties::UNIT),
            _ => return,
        };
        out.push_str(" (");
        push_int(out, n);
        out.push(' ');
        out.push_str(if n == 1 { unit.0 } else { unit.1 });
        out.push(')');
    }

    /// The expected text: `a number >= 1`, `at least 3 characters`, ….
    fn push_expected(self, out: &mut String, limit: f64, inclusive: bool, upper: bool) {
        let unit = match self {
            Measure::Number => return rules::range::push_expected(out, limit, inclusive, upper),
            Measure::Length => rules::length::UNIT,
            Measure::Items => rules::items::UNIT,
            Measure::Properties => rules::properties::UNIT,
        };
        // Counts are integers: an exclusive bound is the next integer inclusive.
        let count = match (upper, inclusive) {
            (_, true) => limit,
            (false, false) => limit.floor() + 1.0,
            (true, false) => limit.ceil() - 1.0,
        };
        out.push_str(if upper { "at most " } else { "at least " });
        sent::push_number(out, count);
        out.push(' ');
        out.push_str(if count == 1.0 { unit.0 } else { unit.1 });
    }
}

/// Every problem with one call's arguments; renders as the `<validation_error>` envelope.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValidationReport {
    issues: Vec<Issue>,
    /// Problems found beyond the issues collected ([`MAX_COLLECTED_ISSUES`]).
    uncollected: usize,
}

impl ValidationReport {
    /// The same report with `key` also accepted at the root: a grouped tool's discriminator,
    /// which the member's own schema does not name but every call of the tool sends.
    pub(crate) fn accepting_at_root(mut self, key: &str) -> Self {
        for issue in &mut self.issues {
            if let IssueKind::UnrecognizedKey { known, .. } = &mut issue.kind
                && issue.path.is_root()
                && !known.iter().any(|k| k == key)
            {
                known.insert(0, key.to_owned());
            }
        }
        self
    }

    /// A report of these issues.
    pub fn new(issues: Vec<Issue>) -> Self {
        ValidationReport {
            issues,
            uncollected: 0,
        }
    }

    /// Counts `n` problems found but not collected, for the `<omitted>` line.
    pub fn with_uncollected(mut self, n: usize) -> Self {
        self.uncollected = n;
        self
    }

    /// The problems found but not collected as issues.
    pub fn uncollected(&self) -> usize {
        self.uncollected
    }

    /// The issues, in order.
    pub fn issues(&self) -> &[Issue] {
        &self.issues
    }

    /// Whether there is no issue.
    pub fn is_empty(&self) -> bool {
        self.issues.is_empty() && self.uncollected == 0
    }

    /// The `<validation_error>` envelope for `action`.
    pub fn render(&self, action: &str) -> String {
        self.render_with_sections(action, &[])
    }

    /// The envelope with further sections (rendered XML, such as `<contract_awareness>`) after
    /// the recovery line, indented two spaces. It is at most [`MAX_ENVELOPE_BYTES`] long: past
    /// that, each line is cut (with `...`) and the sections that no longer fit are left out.
    pub fn render_with_sections(&self, action: &str, sections: &[&str]) -> String {
        let out = self.render_within(action, sections, None);
        if out.len() <= MAX_ENVELOPE_BYTES {
            return out;
        }
        self.render_within(action, sections, Some(CAPPED))
    }

    /// `capped`: the escaped bytes written of the action, each name and each line.
    fn render_within(&self, action: &str, sections: &[&str], capped: Option<Caps>) -> String {
        let text = |out: &mut String, s: &str, max: fn(Caps) -> usize| match capped {
            Some(c) => xml::push_text_within(out, s, max(c)),
            None => xml::push_text(out, s),
        };
        let attr = |out: &mut String, s: &str, max: fn(Caps) -> usize| match capped {
            Some(c) => xml::push_attr_within(out, s, max(c)),
            None => xml::push_attr(out, s),
        };
        let shown = self.issues.len().min(MAX_FIELD_LINES);
        let mut out = String::with_capacity(64 + action.len() + shown * 128 + RECOVERY.len());
        out.push_str("<validation_error action=\"");
        attr(&mut out, action, |c| c.0);
        out.push_str("\">");
        let mut line = String::with_capacity(128);
        let mut name = String::with_capacity(32);
        for issue in &self.issues[..shown] {
            out.push_str("\n  <field name=\"");
            name.clear();
            issue.write_shown_name(&mut name);
            attr(&mut out, &name, |c| c.1);
            out.push_str("\">");
            line.clear();
            issue.write_line(&mut line);
            text(&mut out, &line, |c| c.2);
            out.push_str("</field>");
        }
        let hidden = self.issues.len() - shown + self.uncollected;
        if hidden > 0 {
            let _ = write!(
                out,
                "\n  <omitted count=\"{hidden}\">{hidden} more problem{} not shown. Fix the fields above first; the next call reports the rest.</omitted>",
                if hidden == 1 { "" } else { "s" }
            );
        }
        out.push_str("\n  <recovery>");
        out.push_str(RECOVERY);
        out.push_str("</recovery>");
        const CLOSE: &str = "\n</validation_error>";
        for section in sections {
            let size = || section.lines().map(|l| l.len() + 3).sum::<usize>();
            if capped.is_some() && out.len() + size() + CLOSE.len() > MAX_ENVELOPE_BYTES {
                continue;
            }
            for l in section.lines() {
                out.push_str("\n  ");
                out.push_str(l);
            }
        }
        out.push_str(CLOSE);
        out
    }
}

/// The escaped bytes of the action, of each name and of each line of a capped envelope.
type Caps = (usize, usize, usize);

/// Shares of [`MAX_ENVELOPE_BYTES`]: 20 lines and the fixed parts take at most 14.7 KiB.
const CAPPED: Caps = (128, 256, 448);

impl std::fmt::Display for ValidationReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} validation problem(s)",
            self.issues.len() + self.uncollected
        )?;
        for i in &self.issues {
            write!(f, "; {}: {}", i.field_name(), i.line())?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationReport {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validation::Format;

    /// Every issue kind has its own code and a problem to say: a kind no arm here and no
    /// rule's `RULE` owns would read as `custom`, with no problem before `You sent`. The match
    /// has an arm per variant, so a new variant does not compile here until it has a sample.
    #[test]
    fn every_issue_kind_has_its_code_and_words() {
        let bound = |upper| IssueKind::bound(upper, Measure::Number, 1.0, true);
        let samples = [
            IssueKind::InvalidType {
                expected: "a string".into(),
            },
            IssueKind::Missing {
                expected: "a string".into(),
            },
            bound(false),
            bound(true),
            IssueKind::InvalidFormat {
                format: Format::Email,
            },
            IssueKind::NotMultipleOf { divisor: 5.0 },
            IssueKind::UnrecognizedKey {
                key: "x".into(),
                known: vec!["y".into()],
            },
            IssueKind::InvalidValue {
                options: vec![json!("a"), json!("b")],
            },
            IssueKind::InvalidUnion {
                shapes: vec!["a string".into()],
            },
            IssueKind::Custom {
                message: "Not allowed".into(),
            },
        ];
        let mut codes = Vec::new();
        for kind in samples {
            match &kind {
                IssueKind::InvalidType { .. }
                | IssueKind::Missing { .. }
                | IssueKind::TooSmall { .. }
                | IssueKind::TooBig { .. }
                | IssueKind::InvalidFormat { .. }
                | IssueKind::NotMultipleOf { .. }
                | IssueKind::UnrecognizedKey { .. }
                | IssueKind::InvalidValue { .. }
                | IssueKind::InvalidUnion { .. }
                | IssueKind::Custom { .. } => {}
            }
            let code = kind.code();
            assert!(
                code != "custom" || matches!(kind, IssueKind::Custom { .. }),
                "{kind:?} has no code of its own"
            );
            codes.push(code);
            let line = Issue::new("x", kind.clone(), Some(json!(3))).line();
            assert!(
                !line.starts_with('.'),
                "{kind:?} has no problem to say: {line}"
            );
        }
        let distinct: std::collections::BTreeSet<_> = codes.iter().collect();
        // too_small / too_big are two kinds with two codes; every code is one kind's.
        assert_eq!(distinct.len(), codes.len(), "{codes:?}");
        assert!(codes.contains(&"not_multiple_of"), "{codes:?}");
    }
}
