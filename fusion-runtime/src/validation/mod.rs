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
use sent::{push_i64, push_quoted, push_sent, push_u64};

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use crate::envelope::{MAX_ENVELOPE_BYTES, xml};

/// The recovery line every `<validation_error>` ends with, verbatim.
pub const RECOVERY: &str =
    "Fix the fields above and call the tool again. Do not explain the error.";

/// At most this many `<field>` lines; the rest are counted in one `<omitted>` line.
pub const MAX_FIELD_LINES: usize = 20;

/// At most this many keys, options or shapes are listed after `Expected`; the rest are
/// counted (`…, and 12 more`).
pub const MAX_LISTED: usize = 30;

/// At most this many issues are collected from one call's arguments; the problems found
/// beyond them are only counted (in the `<omitted>` line), however many keys or items were sent.
pub const MAX_COLLECTED_ISSUES: usize = 200;

/// The longest name or key, in characters, [`closest`] looks for a near match of: edit
/// distance costs the product of the two lengths, and a longer text is no typo of a name.
pub const MAX_COMPARED_CHARS: usize = 128;

/// Longest field path shown in a `name` attribute, in characters; each segment of a longer
/// path is cut to 50 characters first, as a value sent is.
pub const MAX_PATH_CHARS: usize = 200;

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

    fn push_problem(&self, out: &mut String) {
        match self {
            Format::Other(name) => {
                out.push_str("Invalid ");
                out.push_str(name);
                out.push_str(" format");
            }
            known => out.push_str(&known.problem()),
        }
    }

    fn push_expected(&self, out: &mut String) {
        match self {
            Format::Pattern(re) => {
                out.push_str("a string matching ");
                out.push_str(re);
            }
            Format::Other(name) => {
                out.push_str("a valid ");
                out.push_str(name);
            }
            known => out.push_str(&known.expected()),
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
        match &self.kind {
            IssueKind::InvalidType { .. } => out.push_str("Invalid type"),
            IssueKind::Missing { .. } => out.push_str("Required field is missing"),
            IssueKind::TooSmall { measure, .. } => out.push_str(bound_problem(*measure, false)),
            IssueKind::TooBig { measure, .. } => out.push_str(bound_problem(*measure, true)),
            IssueKind::InvalidFormat { format } => format.push_problem(out),
            IssueKind::NotMultipleOf { divisor } => {
                out.push_str("Not a multiple of ");
                push_number(out, *divisor);
            }
            IssueKind::UnrecognizedKey { key, known } => {
                out.push_str("Unrecognized key ");
                push_quoted(out, key);
                if let Some(best) = closest(key, known.iter().map(String::as_str)) {
                    out.push_str(" (did you mean ");
                    push_quoted(out, best);
                    out.push_str("?)");
                }
            }
            IssueKind::InvalidValue { options } => out.push_str(if options.len() == 1 {
                "Invalid value"
            } else {
                "Invalid option"
            }),
            IssueKind::InvalidUnion { .. } => out.push_str("No allowed shape matched"),
            IssueKind::Custom { message } => out.push_str(message.trim_end_matches('.')),
        }
        out.push('.');
        if let Some(sent) = &self.sent {
            out.push_str(" You sent: ");
            push_sent(out, sent);
            if let IssueKind::TooSmall { measure, .. } | IssueKind::TooBig { measure, .. } =
                &self.kind
            {
                push_measured(out, *measure, sent);
            }
            out.push('.');
        }
        // The expected text is written in place, then cut off its final periods; nothing is
        // left of ` Expected ` when it was empty.
        let before = out.len();
        out.push_str(" Expected ");
        let start = out.len();
        match &self.expected {
            Some(e) => out.push_str(e),
            None => self.push_default_expected(out),
        }
        let dots = out.as_bytes()[start..]
            .iter()
            .rev()
            .take_while(|&&b| b == b'.')
            .count();
        let end = out.len() - start - dots;
        if end == 0 {
            out.truncate(before);
        } else {
            out.truncate(start + end);
            out.push('.');
        }
    }

    /// The "Expected …" text of the kind (before its final periods are cut).
    fn push_default_expected(&self, out: &mut String) {
        match &self.kind {
            IssueKind::InvalidType { expected } | IssueKind::Missing { expected } => {
                out.push_str(expected);
            }
            IssueKind::TooSmall {
                measure,
                limit,
                inclusive,
            } => push_bound_expected(out, *measure, *limit, *inclusive, false),
            IssueKind::TooBig {
                measure,
                limit,
                inclusive,
            } => push_bound_expected(out, *measure, *limit, *inclusive, true),
            IssueKind::InvalidFormat { format } => format.push_expected(out),
            IssueKind::NotMultipleOf { divisor } => {
                out.push_str("a multiple of ");
                push_number(out, *divisor);
            }
            IssueKind::UnrecognizedKey { known, .. } => {
                if known.is_empty() {
                    out.push_str("no properties");
                } else {
                    out.push_str("only: ");
                    push_list(out, known, ", ", |out, k| push_quoted(out, k));
                }
            }
            IssueKind::InvalidValue { options } => {
                if let [only] = options.as_slice() {
                    out.push_str("exactly ");
                    push_sent(out, only);
                } else {
                    out.push_str("one of: ");
                    push_list(out, options, ", ", push_sent);
                }
            }
            IssueKind::InvalidUnion { shapes } => {
                if shapes.is_empty() {
                    out.push_str("one of the allowed shapes");
                } else {
                    out.push_str("one of: ");
                    push_list(out, shapes, "; ", |out, s| out.push_str(s));
                }
            }
            IssueKind::Custom { .. } => {}
        }
    }
}

/// Appends the first [`MAX_LISTED`] items, then how many more there are.
fn push_list<T>(out: &mut String, items: &[T], sep: &str, push: impl Fn(&mut String, &T)) {
    for (i, item) in items.iter().take(MAX_LISTED).enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        push(out, item);
    }
    if items.len() > MAX_LISTED {
        out.push_str(sep);
        out.push_str("and ");
        push_u64(out, (items.len() - MAX_LISTED) as u64);
        out.push_str(" more");
    }
}

/// The count after a sent string or object bound by its size: ` (2 characters)`.
fn push_measured(out: &mut String, measure: Measure, sent: &Value) {
    let (n, unit) = match (measure, sent) {
        (Measure::Length, Value::String(s)) => {
            let n = s.chars().count();
            (n, if n == 1 { "character" } else { "characters" })
        }
        (Measure::Properties, Value::Object(m)) => {
            let n = m.len();
            (n, if n == 1 { "property" } else { "properties" })
        }
        _ => return,
    };
    out.push_str(" (");
    push_u64(out, n as u64);
    out.push(' ');
    out.push_str(unit);
    out.push(')');
}

fn plural(n: f64) -> &'static str {
    if n == 1.0 { "" } else { "s" }
}

/// Appends a number as a model reads it: integers without a fraction.
fn push_number(out: &mut String, n: f64) {
    if n.fract() == 0.0 && n.abs() < 1e16 {
        push_i64(out, n as i64);
    } else {
        let _ = write!(out, "{n}");
    }
}

fn bound_problem(measure: Measure, upper: bool) -> &'static str {
    match (measure, upper) {
        (Measure::Number, false) => "Too small",
        (Measure::Number, true) => "Too large",
        (Measure::Length, false) => "Too short",
        (Measure::Length, true) => "Too long",
        (Measure::Items, false) => "Too few items",
        (Measure::Items, true) => "Too many items",
        (Measure::Properties, false) => "Too few properties",
        (Measure::Properties, true) => "Too many properties",
    }
}

fn push_bound_expected(
    out: &mut String,
    measure: Measure,
    limit: f64,
    inclusive: bool,
    upper: bool,
) {
    if measure == Measure::Number {
        out.push_str(match (upper, inclusive) {
            (false, true) => "a number >= ",
            (false, false) => "a number > ",
            (true, true) => "a number <= ",
            (true, false) => "a number < ",
        });
        push_number(out, limit);
        return;
    }
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
    out.push_str(if upper { "at most " } else { "at least " });
    push_number(out, count);
    out.push(' ');
    out.push_str(if count == 1.0 { unit.0 } else { unit.1 });
}

/// The candidate closest to `key` by edit distance, when it is close enough to be a typo.
///
/// A `key` longer than [`MAX_COMPARED_CHARS`] characters has none, and a candidate is compared
/// only when the lengths differ by no more than the distance allowed: the cost stays bounded
/// by the candidates' lengths, whatever the length of `key`.
pub fn closest<'a>(key: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let key_len = key.chars().take(MAX_COMPARED_CHARS + 1).count();
    if key_len > MAX_COMPARED_CHARS {
        return None;
    }
    let key_lower = key.to_lowercase();
    let key_lower_len = key_lower.chars().count();
    candidates
        .filter_map(|c| {
            let c_len = c.chars().count();
            let allowed = (c_len.max(key_len) / 3).max(1);
            let c_lower = c.to_lowercase();
            // The distance is at least the difference of the lengths.
            if c_lower.chars().count().abs_diff(key_lower_len) > allowed {
                return None;
            }
            let d = strsim::damerau_levenshtein(&key_lower, &c_lower);
            (d <= allowed).then_some((d, c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// A field path as shown: as it is up to [`MAX_PATH_CHARS`] characters, else each segment cut
/// to 50 characters and the whole to [`MAX_PATH_CHARS`] (197 and `...`).
fn shown_path(path: &str) -> Cow<'_, str> {
    if path.chars().take(MAX_PATH_CHARS + 1).count() <= MAX_PATH_CHARS {
        return Cow::Borrowed(path);
    }
    let mut shown = String::with_capacity(MAX_PATH_CHARS * 2);
    for (i, seg) in path.split('.').enumerate() {
        if i > 0 {
            shown.push('.');
        }
        sent::push_cut(&mut shown, seg);
        if shown.len() > MAX_PATH_CHARS * 4 {
            break;
        }
    }
    if let Some((end, _)) = shown.char_indices().nth(MAX_PATH_CHARS) {
        let keep = shown
            .char_indices()
            .nth(MAX_PATH_CHARS - 3)
            .map_or(end, |(i, _)| i);
        shown.truncate(keep);
        shown.push_str("...");
    }
    Cow::Owned(shown)
}

/// Every problem with one call's arguments; renders as the `<validation_error>` envelope.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValidationReport {
    issues: Vec<Issue>,
    /// Problems found beyond the issues collected ([`MAX_COLLECTED_ISSUES`]).
    uncollected: usize,
}

impl ValidationReport {
    /// A report of these issues.
    pub fn new(issues: Vec<Issue>) -> Self {
        ValidationReport {
            issues,
            uncollected: 0,
        }
    }

    /// Counts `n` more problems that were found but not collected as issues; the
    /// `<omitted>` line counts them with the issues not shown.
    pub fn with_uncollected(mut self, n: usize) -> Self {
        self.uncollected = n;
        self
    }

    /// The problems found but not collected as issues.
    pub fn uncollected(&self) -> usize {
        self.uncollected
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
        self.issues.is_empty() && self.uncollected == 0
    }

    /// The `<validation_error>` envelope for `action`.
    pub fn render(&self, action: &str) -> String {
        self.render_with_sections(action, &[])
    }

    /// The envelope with further sections (already rendered XML, such as
    /// `<contract_awareness>`) placed after the recovery line, before `</validation_error>`.
    /// Each section is indented two spaces, line by line.
    ///
    /// The envelope is at most [`MAX_ENVELOPE_BYTES`] long: when the author's texts make it
    /// longer, each line is cut (with `...`) and the sections that no longer fit are left out.
    pub fn render_with_sections(&self, action: &str, sections: &[&str]) -> String {
        let out = self.render_within(action, sections, &Limits::NONE);
        if out.len() <= MAX_ENVELOPE_BYTES {
            return out;
        }
        self.render_within(action, sections, &Limits::CAPPED)
    }

    fn render_within(&self, action: &str, sections: &[&str], limits: &Limits) -> String {
        let shown = self.issues.len().min(MAX_FIELD_LINES);
        let mut out = String::with_capacity(64 + action.len() + shown * 128 + RECOVERY.len());
        out.push_str("<validation_error action=\"");
        limits.attr(&mut out, action, limits.action);
        out.push_str("\">");
        let mut line = String::with_capacity(128);
        for issue in &self.issues[..shown] {
            out.push_str("\n  <field name=\"");
            limits.attr(&mut out, &shown_path(issue.field_name()), limits.name);
            out.push_str("\">");
            line.clear();
            issue.write_line(&mut line);
            limits.text(&mut out, &line, limits.line);
            out.push_str("</field>");
        }
        let hidden = self.issues.len() - shown + self.uncollected;
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
        const CLOSE: &str = "\n</validation_error>";
        for section in sections {
            if limits.capped {
                let size: usize = section.lines().map(|l| l.len() + 3).sum();
                if out.len() + size + CLOSE.len() > MAX_ENVELOPE_BYTES {
                    continue;
                }
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

/// How much of each part of a `<validation_error>` is written, in escaped bytes.
struct Limits {
    capped: bool,
    action: usize,
    name: usize,
    line: usize,
}

impl Limits {
    const NONE: Limits = Limits {
        capped: false,
        action: usize::MAX,
        name: usize::MAX,
        line: usize::MAX,
    };

    /// Shares of [`MAX_ENVELOPE_BYTES`]: 20 lines and the fixed parts take at most 14.7 KiB,
    /// the rest is room for sections.
    const CAPPED: Limits = Limits {
        capped: true,
        action: 128,
        name: 256,
        line: 448,
    };

    fn text(&self, out: &mut String, s: &str, max: usize) {
        if self.capped {
            xml::push_text_within(out, s, max);
        } else {
            xml::push_text(out, s);
        }
    }

    fn attr(&self, out: &mut String, s: &str, max: usize) {
        if self.capped {
            xml::push_attr_within(out, s, max);
        } else {
            xml::push_attr(out, s);
        }
    }
}

impl From<Vec<Issue>> for ValidationReport {
    fn from(issues: Vec<Issue>) -> Self {
        ValidationReport::new(issues)
    }
}

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
mod tests;
