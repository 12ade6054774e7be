//! `email`, `url`, `uuid`, `date_time`, `date`, `ipv4`, `ipv6`: `format`.
//!
//! What a format accepts is `jsonschema`'s (its `format` checks are on): the typed check hands
//! the value to it. A format is one row of [`FORMATS`].

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{Check, Typed};
use crate::schema::{Rule, StringFormat};

/// The rule a format attribute writes.
pub const fn rule(format: StringFormat) -> Rule {
    Rule::Format(format)
}

/// Its keyword.
pub fn keywords(format: StringFormat, schema: &mut Map<String, Value>) {
    schema.insert("format".into(), format.keyword().into());
}

/// The engine decides a string; `format` applies to strings only.
#[inline]
pub fn check(value: Typed<'_>, _format: StringFormat) -> Check {
    match value {
        Typed::Str(_) | Typed::Opaque => Check::Engine,
        _ => Check::Pass,
    }
}

/// A string format, as issues name it.
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
    /// `pattern`: the regex (its wording is [`super::pattern`]'s).
    Pattern(String),
    /// Any other JSON Schema format, by name.
    Other(String),
}

/// One known format: the `format` values that name it, its problem, its expected text.
pub struct FormatRow {
    /// The format.
    pub format: fn() -> Format,
    /// The `format` keyword values that name it.
    pub keywords: &'static [&'static str],
    /// The problem (`Invalid email format`).
    pub problem: &'static str,
    /// The default "Expected …" text.
    pub expected: &'static str,
}

/// The known formats.
pub const FORMATS: &[FormatRow] = &[
    FormatRow {
        format: || Format::Email,
        keywords: &["email", "idn-email"],
        problem: "Invalid email format",
        expected: "a valid email address",
    },
    FormatRow {
        format: || Format::Url,
        keywords: &["uri", "url", "iri"],
        problem: "Invalid URL format",
        expected: "a valid URL (e.g. https://example.com)",
    },
    FormatRow {
        format: || Format::Uuid,
        keywords: &["uuid"],
        problem: "Invalid UUID format",
        expected: "a UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)",
    },
    FormatRow {
        format: || Format::DateTime,
        keywords: &["date-time"],
        problem: "Invalid date-time format",
        expected: "an ISO 8601 date-time (e.g. 2026-01-15T10:30:00Z)",
    },
    FormatRow {
        format: || Format::Date,
        keywords: &["date"],
        problem: "Invalid date format",
        expected: "an ISO 8601 date (e.g. 2026-01-15)",
    },
    FormatRow {
        format: || Format::Time,
        keywords: &["time"],
        problem: "Invalid time format",
        expected: "an ISO 8601 time (e.g. 10:30:00Z)",
    },
    FormatRow {
        format: || Format::Ipv4,
        keywords: &["ipv4"],
        problem: "Invalid IPv4 address",
        expected: "an IPv4 address (e.g. 192.168.0.1)",
    },
    FormatRow {
        format: || Format::Ipv6,
        keywords: &["ipv6"],
        problem: "Invalid IPv6 address",
        expected: "an IPv6 address (e.g. 2001:db8::1)",
    },
];

impl Format {
    /// The format for a JSON Schema `format` keyword value.
    pub fn from_keyword(name: &str) -> Format {
        FORMATS
            .iter()
            .find(|r| r.keywords.contains(&name))
            .map_or_else(|| Format::Other(name.to_owned()), |r| (r.format)())
    }

    /// Its row, for a known format.
    pub fn row(&self) -> Option<&'static FormatRow> {
        FORMATS.iter().find(|r| (r.format)() == *self)
    }

    /// The problem: `Invalid email format`.
    pub(crate) fn push_problem(&self, out: &mut String) {
        match (self, self.row()) {
            (_, Some(row)) => out.push_str(row.problem),
            (Format::Pattern(_), None) => out.push_str(super::pattern::PROBLEM),
            (Format::Other(name), None) => {
                out.push_str("Invalid ");
                out.push_str(name);
                out.push_str(" format");
            }
            (_, None) => out.push_str("Invalid format"),
        }
    }

    /// The default "Expected …" text, written out.
    pub(crate) fn push_expected(&self, out: &mut String) {
        match (self, self.row()) {
            (_, Some(row)) => out.push_str(row.expected),
            (Format::Pattern(re), None) => super::pattern::push_expected(out, re),
            (Format::Other(name), None) => {
                out.push_str("a valid ");
                out.push_str(name);
            }
            (_, None) => out.push_str("a valid value"),
        }
    }

    /// The default "Expected …" text of this format.
    pub fn expected(&self) -> Cow<'static, str> {
        if let Some(row) = self.row() {
            return Cow::Borrowed(row.expected);
        }
        let mut out = String::new();
        self.push_expected(&mut out);
        Cow::Owned(out)
    }
}
