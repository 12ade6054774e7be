//! `email`, `url`, `uuid`, `date_time`, `date`, `ipv4`, `ipv6`: `format`.
//!
//! What a format accepts is `jsonschema`'s (its `format` checks are on): the typed check hands
//! the value to it. A format is one row of [`FORMATS`].

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{Check, Typed};
use crate::validation::spec::{Rule, StringFormat};

/// The rule a format attribute writes.
pub const fn rule(format: StringFormat) -> Rule {
    Rule::Format(format)
}

/// Its keyword.
pub fn keywords(format: StringFormat, schema: &mut Map<String, Value>) {
    schema.insert("format".into(), format.keyword().into());
}

/// `format` applies to strings only. The engine decides a string, except an email address of
/// the common shape ([`is_plain_email`]), which it would accept: parsing an address in full
/// costs the engine several times what serde costs for the whole input.
#[inline]
pub fn check(value: Typed<'_>, format: StringFormat) -> Check {
    match (value, format) {
        (Typed::Str(s), StringFormat::Email) if is_plain_email(s) => Check::Pass,
        (Typed::Str(_) | Typed::Opaque, _) => Check::Engine,
        _ => Check::Pass,
    }
}

/// An address every email check accepts: `local@domain`, the local part dot-separated atoms of
/// letters, digits and `_+-` (at most 64 bytes), the domain at least two dot-separated ASCII
/// labels of letters, digits and inner single hyphens (at most 63 bytes each, 253 in all), the
/// last one letters only. `false` says nothing: the engine decides. `fast_path_contract.rs`
/// checks that the engine accepts whatever this accepts.
pub fn is_plain_email(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(at) = b.iter().position(|&c| c == b'@') else {
        return false;
    };
    let (local, domain) = (&b[..at], &b[at + 1..]);
    if local.is_empty() || local.len() > 64 || domain.len() > 253 {
        return false;
    }
    // The local part: atoms between single dots.
    let mut after_dot = true;
    for &c in local {
        if EMAIL_BYTES[usize::from(c)] & LOCAL != 0 {
            after_dot = false;
        } else if c == b'.' && !after_dot {
            after_dot = true;
        } else {
            return false;
        }
    }
    if after_dot {
        return false;
    }
    // The domain: labels between single dots, hyphens inside a label and never two in a row,
    // the last label (after at least one dot) letters only, two or more.
    let (mut label, mut labels, mut alpha, mut prev) = (0usize, 1usize, true, b'.');
    for &c in domain {
        let class = EMAIL_BYTES[usize::from(c)];
        if class & ALNUM != 0 {
            label += 1;
            alpha &= class & ALPHA != 0;
        } else if c == b'-' {
            if label == 0 || prev == b'-' {
                return false;
            }
            label += 1;
            alpha = false;
        } else if c == b'.' {
            if label == 0 || prev == b'-' {
                return false;
            }
            (label, labels, alpha) = (0, labels + 1, true);
        } else {
            return false;
        }
        if label > 63 {
            return false;
        }
        prev = c;
    }
    labels >= 2 && label >= 2 && alpha && prev != b'-'
}

/// [`EMAIL_BYTES`]: a letter or digit.
const ALNUM: u8 = 1;
/// [`EMAIL_BYTES`]: a letter.
const ALPHA: u8 = 2;
/// [`EMAIL_BYTES`]: a byte of a local part's atom (letters, digits, `_+-`).
const LOCAL: u8 = 4;

/// The class of each byte for [`is_plain_email`]: one lookup per byte.
const EMAIL_BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = if c.is_ascii_alphabetic() {
            ALNUM | ALPHA | LOCAL
        } else if c.is_ascii_digit() {
            ALNUM | LOCAL
        } else if matches!(c, b'_' | b'+' | b'-') {
            LOCAL
        } else {
            0
        };
        i += 1;
    }
    t
};

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

/// One known format: it, the `format` values that name it, its problem, its expected text.
pub type FormatRow = (Format, &'static [&'static str], &'static str, &'static str);

/// The known formats.
pub const FORMATS: &[FormatRow] = &[
    (
        Format::Email,
        &["email", "idn-email"],
        "Invalid email format",
        "a valid email address",
    ),
    (
        Format::Url,
        &["uri", "url", "iri"],
        "Invalid URL format",
        "a valid URL (e.g. https://example.com)",
    ),
    (
        Format::Uuid,
        &["uuid"],
        "Invalid UUID format",
        "a UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)",
    ),
    (
        Format::DateTime,
        &["date-time"],
        "Invalid date-time format",
        "an ISO 8601 date-time (e.g. 2026-01-15T10:30:00Z)",
    ),
    (
        Format::Date,
        &["date"],
        "Invalid date format",
        "an ISO 8601 date (e.g. 2026-01-15)",
    ),
    (
        Format::Time,
        &["time"],
        "Invalid time format",
        "an ISO 8601 time (e.g. 10:30:00Z)",
    ),
    (
        Format::Ipv4,
        &["ipv4"],
        "Invalid IPv4 address",
        "an IPv4 address (e.g. 192.168.0.1)",
    ),
    (
        Format::Ipv6,
        &["ipv6"],
        "Invalid IPv6 address",
        "an IPv6 address (e.g. 2001:db8::1)",
    ),
];

impl Format {
    /// The format for a JSON Schema `format` keyword value.
    pub fn from_keyword(name: &str) -> Format {
        FORMATS
            .iter()
            .find(|r| r.1.contains(&name))
            .map_or_else(|| Format::Other(name.to_owned()), |r| r.0.clone())
    }

    /// Its row, for a known format.
    pub fn row(&self) -> Option<&'static FormatRow> {
        FORMATS.iter().find(|r| r.0 == *self)
    }

    /// The problem: `Invalid email format`.
    pub(crate) fn push_problem(&self, out: &mut String) {
        match (self, self.row()) {
            (_, Some(row)) => out.push_str(row.2),
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
            (_, Some(row)) => out.push_str(row.3),
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
            return Cow::Borrowed(row.3);
        }
        let mut out = String::new();
        self.push_expected(&mut out);
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_emails_are_the_common_shape_only() {
        for ok in [
            "ada.lovelace@example.com",
            "a_b+c-d@mail.ex-ample.co",
            "x@a.io",
        ] {
            assert!(is_plain_email(ok), "{ok}");
        }
        for not in [
            "a@b",
            "a..b@c.de",
            ".a@c.de",
            "a.@c.de",
            "a@ab--c.de",
            "a@-c.de",
            "a@c-.de",
            "a@c.d",
            "a@1.23",
            "\"q\"@c.de",
            "a@c..de",
            "a@c.de.",
            "@c.de",
            "a b@c.de",
            "a@b@c.de",
        ] {
            assert!(!is_plain_email(not), "{not}");
        }
    }
}
