//! Validation issues and the `<validation_error>` they become (SPEC §4).
//!
//! Each [`Issue`] carries the dotted path of the field, its [`IssueKind`] (named after Zod's
//! issue codes) and the value the model sent. [`ValidationReport::render`] writes one
//! `<field>` line per issue — what went wrong, `You sent: …`, `Expected …` — and the verbatim
//! recovery line.

pub(crate) mod fast;
pub(crate) mod from_schema;
mod sent;

pub use sent::{describe_sent, quote_str};

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use crate::envelope::xml;

/// The recovery line every `<validation_error>` ends with, verbatim.
pub const RECOVERY: &str =
    "Fix the fields above and call the tool again. Do not explain the error.";

/// At most this many `<field>` lines; the rest are counted in one `<omitted>` line.
pub const MAX_FIELD_LINES: usize = 20;

/// What a size bound measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// The length of a string, in characters.
    Length,
    /// A number.
    Number,
    /// The number of items of an array.
    Items,
    /// The number of properties of an object.
    Properties,
}

/// A string format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// `email`
    Email,
    /// `uri`
    Url,
    /// `uuid`
    Uuid,
    /// `date-time`
    DateTime,
    /// `date`
    Date,
    /// `time`
    Time,
    /// `ipv4`
    Ipv4,
    /// `ipv6`
    Ipv6,
    /// `pattern`: the regex.
    Pattern(String),
    /// Any other JSON Schema format, by name.
    Other(String),
}

impl Format {
    /// The format for a JSON Schema `format` keyword value.
    pub fn from_keyword(name: &str) -> Format {
        match name {
            "email" | "idn-email" => Format::Email,
            "uri" | "url" | "iri" => Format::Url,
            "uuid" => Format::Uuid,
            "date-time" => Format::DateTime,
            "date" => Format::Date,
            "time" => Format::Time,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            other => Format::Other(other.to_owned()),
        }
    }

    fn problem(&self) -> Cow<'static, str> {
        match self {
            Format::Email => "Invalid email format".into(),
            Format::Url => "Invalid URL format".into(),
            Format::Uuid => "Invalid UUID format".into(),
            Format::DateTime => "Invalid date-time format".into(),
            Format::Date => "Invalid date format".into(),
            Format::Time => "Invalid time format".into(),
            Format::Ipv4 => "Invalid IPv4 address".into(),
            Format::Ipv6 => "Invalid IPv6 address".into(),
            Format::Pattern(_) => "Invalid format".into(),
            Format::Other(name) => format!("Invalid {name} format").into(),
        }
    }

    /// The default "Expected …" text of this format.
    pub fn expected(&self) -> Cow<'static, str> {
        match self {
            Format::Email => "a valid email address".into(),
            Format::Url => "a valid URL (e.g. https://example.com)".into(),
            Format::Uuid => "a UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)".into(),
            Format::DateTime => "an ISO 8601 date-time (e.g. 2026-01-15T10:30:00Z)".into(),
            Format::Date => "an ISO 8601 date (e.g. 2026-01-15)".into(),
            Format::Time => "an ISO 8601 time (e.g. 10:30:00Z)".into(),
            Format::Ipv4 => "an IPv4 address (e.g. 192.168.0.1)".into(),
            Format::Ipv6 => "an IPv6 address (e.g. 2001:db8::1)".into(),
            Format::Pattern(re) => format!("a string matching {re}").into(),
            Format::Other(name) => format!("a valid {name}").into(),
        }
    }
}

/// What went wrong, with what the line needs to say so.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum IssueKind {
    /// `invalid_type`: `expected` is the type in words (`a string`, `an integer`).
    InvalidType {
        /// The expected type in words.
        expected: Cow<'static, str>,
    },
    /// A required field is missing; `expected` says what the field takes.
    Missing {
        /// What the field takes, in words (`a valid email address`).
        expected: Cow<'static, str>,
    },
    /// `too_small`.
    TooSmall {
        /// What the bound measures.
        measure: Measure,
        /// The bound.
        limit: f64,
        /// Whether the bound itself is allowed (`>=`) or not (`>`).
        inclusive: bool,
    },
    /// `too_big`.
    TooBig {
        /// What the bound measures.
        measure: Measure,
        /// The bound.
        limit: f64,
        /// Whether the bound itself is allowed (`<=`) or not (`<`).
        inclusive: bool,
    },
    /// `invalid_format`.
    InvalidFormat {
        /// The format.
        format: Format,
    },
    /// `not_multiple_of`.
    NotMultipleOf {
        /// The divisor.
        divisor: f64,
    },
    /// `unrecognized_keys`, reported on the parent object.
    UnrecognizedKey {
        /// The key sent.
        key: String,
        /// The keys the object accepts, in schema order.
        known: Vec<String>,
    },
    /// `invalid_value`: an enum (several options) or a literal (one option).
    InvalidValue {
        /// The allowed values.
        options: Vec<Value>,
    },
    /// `invalid_union`: no allowed shape matched.
    InvalidUnion {
        /// The allowed shapes, in words.
        shapes: Vec<String>,
    },
    /// `custom`: a user validator's own message.
    Custom {
        /// The message.
        message: String,
    },
}

impl IssueKind {
    /// The Zod-style name of the kind (`invalid_type`, `too_small`, …; `missing` for a
    /// missing required field).
    pub fn code(&self) -> &'static str {
        match self {
            IssueKind::InvalidType { .. } => "invalid_type",
            IssueKind::Missing { .. } => "missing",
            IssueKind::TooSmall { .. } => "too_small",
            IssueKind::TooBig { .. } => "too_big",
            IssueKind::InvalidFormat { .. } => "invalid_format",
            IssueKind::NotMultipleOf { .. } => "not_multiple_of",
            IssueKind::UnrecognizedKey { .. } => "unrecognized_keys",
            IssueKind::InvalidValue { .. } => "invalid_value",
            IssueKind::InvalidUnion { .. } => "invalid_union",
            IssueKind::Custom { .. } => "custom",
        }
    }
}

/// One problem with the arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    /// The dotted path of the field (`items.0.sku`); empty for the object itself.
    pub path: String,
    /// What went wrong.
    pub kind: IssueKind,
    /// The value sent at that path; `None` when nothing specific was sent (a missing field,
    /// an unrecognized key reported on its parent).
    pub sent: Option<Value>,
    /// The author's "Expected …" text for this field, replacing the default.
    pub expected: Option<Cow<'static, str>>,
}

impl Issue {
    /// An issue at `path` with the value sent there.
    pub fn new(path: impl Into<String>, kind: IssueKind, sent: Option<Value>) -> Self {
        Issue {
            path: path.into(),
            kind,
            sent,
            expected: None,
        }
    }

    /// Replaces the default "Expected …" text.
    pub fn with_expected(mut self, expected: impl Into<Cow<'static, str>>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    /// The `name` attribute: the dotted path, or `(root)`.
    pub fn field_name(&self) -> &str {
        if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        }
    }

    /// The line's text (unescaped): problem, `You sent: …`, `Expected …`.
    pub fn line(&self) -> String {
        let mut out = String::with_capacity(96);
        self.write_line(&mut out);
        out
    }

    fn write_line(&self, out: &mut String) {
        let sent = self.sent.as_ref().map(describe_sent);
        let default_expected: Cow<'_, str>;
        let problem: Cow<'_, str>;
        let mut sent_suffix = String::new();
        match &self.kind {
            IssueKind::InvalidType { expected } => {
                problem = "Invalid type".into();
                default_expected = Cow::Borrowed(expected);
            }
            IssueKind::Missing { expected } => {
                problem = "Required field is missing".into();
                default_expected = Cow::Borrowed(expected);
            }
            IssueKind::TooSmall {
                measure,
                limit,
                inclusive,
            } => {
                let (p, e) = bound_words(*measure, *limit, *inclusive, false);
                problem = p.into();
                default_expected = e.into();
                sent_suffix = self.measured_suffix(*measure);
            }
            IssueKind::TooBig {
                measure,
                limit,
                inclusive,
            } => {
                let (p, e) = bound_words(*measure, *limit, *inclusive, true);
                problem = p.into();
                default_expected = e.into();
                sent_suffix = self.measured_suffix(*measure);
            }
            IssueKind::InvalidFormat { format } => {
                problem = format.problem();
                default_expected = format.expected();
            }
            IssueKind::NotMultipleOf { divisor } => {
                problem = format!("Not a multiple of {}", number(*divisor)).into();
                default_expected = format!("a multiple of {}", number(*divisor)).into();
            }
            IssueKind::UnrecognizedKey { key, known } => {
                let mut p = format!("Unrecognized key {}", quote_str(key));
                if let Some(best) = closest(key, known.iter().map(String::as_str)) {
                    let _ = write!(p, " (did you mean {}?)", quote_str(best));
                }
                problem = p.into();
                default_expected = if known.is_empty() {
                    "no properties".into()
                } else {
                    format!("only: {}", quoted_list(known.iter().map(String::as_str))).into()
                };
            }
            IssueKind::InvalidValue { options } => {
                if let [only] = options.as_slice() {
                    problem = "Invalid value".into();
                    default_expected = format!("exactly {}", describe_sent(only)).into();
                } else {
                    problem = "Invalid option".into();
                    let list: Vec<String> = options.iter().map(describe_sent).collect();
                    default_expected = format!("one of: {}", list.join(", ")).into();
                }
            }
            IssueKind::InvalidUnion { shapes } => {
                problem = "No allowed shape matched".into();
                default_expected = if shapes.is_empty() {
                    "one of the allowed shapes".into()
                } else {
                    format!("one of: {}", shapes.join("; ")).into()
                };
            }
            IssueKind::Custom { message } => {
                problem = Cow::Borrowed(message.trim_end_matches('.'));
                default_expected = "".into();
            }
        }
        out.push_str(&problem);
        out.push('.');
        if let Some(sent) = &sent {
            out.push_str(" You sent: ");
            out.push_str(sent);
            out.push_str(&sent_suffix);
            out.push('.');
        }
        let expected = self.expected.as_deref().unwrap_or(&default_expected);
        let expected = expected.trim_end_matches('.');
        if !expected.is_empty() {
            out.push_str(" Expected ");
            out.push_str(expected);
            out.push('.');
        }
    }

    fn measured_suffix(&self, measure: Measure) -> String {
        match (measure, &self.sent) {
            (Measure::Length, Some(Value::String(s))) => {
                let n = s.chars().count();
                format!(" ({n} character{})", plural(n as f64))
            }
            (Measure::Properties, Some(Value::Object(m))) => {
                let n = m.len();
                format!(" ({n} propert{})", if n == 1 { "y" } else { "ies" })
            }
            _ => String::new(),
        }
    }
}

fn plural(n: f64) -> &'static str {
    if n == 1.0 { "" } else { "s" }
}

/// A number as a model reads it: integers without a fraction.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e16 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

fn bound_words(
    measure: Measure,
    limit: f64,
    inclusive: bool,
    upper: bool,
) -> (&'static str, String) {
    let n = number(limit);
    match measure {
        Measure::Number => {
            let op = match (upper, inclusive) {
                (false, true) => ">=",
                (false, false) => ">",
                (true, true) => "<=",
                (true, false) => "<",
            };
            let problem = if upper { "Too large" } else { "Too small" };
            (problem, format!("a number {op} {n}"))
        }
        Measure::Length | Measure::Items | Measure::Properties => {
            // Counts are integers: an exclusive bound is the next integer inclusive.
            let count = match (upper, inclusive) {
                (_, true) => limit,
                (false, false) => limit.floor() + 1.0,
                (true, false) => limit.ceil() - 1.0,
            };
            let unit = match measure {
                Measure::Length => ("character", "characters"),
                Measure::Items => ("item", "items"),
                _ => ("property", "properties"),
            };
            let unit = if count == 1.0 { unit.0 } else { unit.1 };
            let problem = match (measure, upper) {
                (Measure::Length, false) => "Too short",
                (Measure::Length, true) => "Too long",
                (Measure::Items, false) => "Too few items",
                (Measure::Items, true) => "Too many items",
                (_, false) => "Too few properties",
                (_, true) => "Too many properties",
            };
            let side = if upper { "at most" } else { "at least" };
            (problem, format!("{side} {} {unit}", number(count)))
        }
    }
}

fn quoted_list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.map(quote_str).collect::<Vec<_>>().join(", ")
}

/// The candidate closest to `key` by edit distance, when it is close enough to be a typo.
pub fn closest<'a>(key: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let key_lower = key.to_lowercase();
    candidates
        .map(|c| {
            let d = strsim::damerau_levenshtein(&key_lower, &c.to_lowercase());
            (d, c)
        })
        .filter(|(d, c)| {
            let len = c.chars().count().max(key.chars().count());
            *d <= (len / 3).max(1)
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Every problem with one call's arguments; renders as the `<validation_error>` envelope.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValidationReport {
    issues: Vec<Issue>,
}

impl ValidationReport {
    /// A report of these issues.
    pub fn new(issues: Vec<Issue>) -> Self {
        ValidationReport { issues }
    }

    /// Adds an issue.
    pub fn push(&mut self, issue: Issue) {
        self.issues.push(issue);
    }

    /// The issues, in order.
    pub fn issues(&self) -> &[Issue] {
        &self.issues
    }

    /// Whether there is no issue.
    pub fn is_empty(&self) -> bool {
        self.issues.is_empty()
    }

    /// The `<validation_error>` envelope for `action`.
    pub fn render(&self, action: &str) -> String {
        self.render_with_sections(action, &[])
    }

    /// The envelope with further sections (already rendered XML, such as
    /// `<contract_awareness>`) placed after the recovery line, before `</validation_error>`.
    /// Each section is indented two spaces, line by line.
    pub fn render_with_sections(&self, action: &str, sections: &[&str]) -> String {
        let shown = self.issues.len().min(MAX_FIELD_LINES);
        let mut out = String::with_capacity(64 + action.len() + shown * 128 + RECOVERY.len());
        out.push_str("<validation_error action=\"");
        xml::push_attr(&mut out, action);
        out.push_str("\">");
        let mut line = String::with_capacity(128);
        for issue in &self.issues[..shown] {
            out.push_str("\n  <field name=\"");
            xml::push_attr(&mut out, issue.field_name());
            out.push_str("\">");
            line.clear();
            issue.write_line(&mut line);
            xml::push_text(&mut out, &line);
            out.push_str("</field>");
        }
        let hidden = self.issues.len() - shown;
        if hidden > 0 {
            let _ = write!(
                out,
                "\n  <omitted count=\"{hidden}\">{hidden} more problem{} not shown. Fix the fields above first; the next call reports the rest.</omitted>",
                plural(hidden as f64)
            );
        }
        out.push_str("\n  <recovery>");
        out.push_str(RECOVERY);
        out.push_str("</recovery>");
        for section in sections {
            for l in section.lines() {
                out.push_str("\n  ");
                out.push_str(l);
            }
        }
        out.push_str("\n</validation_error>");
        out
    }
}

impl From<Vec<Issue>> for ValidationReport {
    fn from(issues: Vec<Issue>) -> Self {
        ValidationReport::new(issues)
    }
}

impl std::fmt::Display for ValidationReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} validation problem(s)", self.issues.len())?;
        for i in &self.issues {
            write!(f, "; {}: {}", i.field_name(), i.line())?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationReport {}

#[cfg(test)]
mod tests;
