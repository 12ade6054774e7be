//! `email`, `url`, `uuid`, `date_time`, `date`, `ipv4`, `ipv6`: `format`, a row of [`FORMATS`].

use serde_json::{Map, Value};

use super::{Check, Typed};

/// Its keyword: the first name of its row (an attribute's format is a known one).
pub fn keywords(format: &Format, schema: &mut Map<String, Value>) {
    if let Some(row) = format.row() {
        schema.insert("format".into(), row.1[0].into());
    }
}

/// `format` applies to strings only. The engine decides a string, except an email address of
/// the common shape ([`is_plain_email`]), which it would accept: parsing an address in full
/// costs the engine several times what serde costs for the whole input.
#[inline]
pub fn check(value: Typed<'_>, format: Format) -> Check {
    match (value, format) {
        (Typed::Str(s), Format::Email) if is_plain_email(s) => Check::Pass,
        (Typed::Str(_) | Typed::Opaque, _) => Check::Engine,
        _ => Check::Pass,
    }
}

/// An address every email check accepts: `local@domain`, the local part dot-separated atoms of
/// letters, digits and `_+-` (at most 64 bytes), the domain at least two dot-separated ASCII
/// labels of letters, digits and inner single hyphens (at most 63 bytes each, 253 in all), the
/// last one two letters or more. `false` says nothing: the engine decides.
///
/// Each byte is checked against the one before it (a table of the pairs allowed), so no step
/// waits on the one before, as a state machine's steps would.
pub fn is_plain_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    let Some((_, last)) = domain.rsplit_once('.') else {
        return false;
    };
    last.len() >= 2
        && last.bytes().all(|c| c.is_ascii_alphabetic())
        && pairs_allowed(local.as_bytes(), LOCAL)
        && pairs_allowed(domain.as_bytes(), DOMAIN)
        && (s.len() <= 64
            || (local.len() <= 64
                && domain.len() <= 253
                && domain.split('.').all(|l| l.len() <= 63)))
}

/// Whether each byte's class may follow the one before it, the part's edges being [`EDGE`]:
/// bit `8 * before + class` of `allowed`.
#[inline]
fn pairs_allowed(part: &[u8], allowed: u64) -> bool {
    let (mut ok, mut prev) = (1, 8 * EDGE);
    for &c in part {
        let class = u32::from(EMAIL_CLASS[usize::from(c)]);
        ok &= allowed >> (prev | class);
        prev = 8 * class;
    }
    ok & allowed >> (prev | EDGE) & 1 == 1
}

/// The byte classes: anything else (0), a letter (1), a digit (2), `_` or `+` (3), `-` (4),
/// `.` (5), `@` (6); 7 is the edge of a part.
const EMAIL_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match i as u8 {
            b'a'..=b'z' | b'A'..=b'Z' => 1,
            b'0'..=b'9' => 2,
            b'_' | b'+' => 3,
            b'-' => 4,
            b'.' => 5,
            b'@' => 6,
            _ => 0,
        };
        i += 1;
    }
    t
};
const EDGE: u32 = 7;

/// By class (a byte each), the classes that may follow it (a bit each) in the local part:
/// atoms of letters, digits and `_+-`, one dot between two.
#[rustfmt::skip]
const LOCAL: u64 = u64::from_le_bytes([0, 0b1011_1110, 0b1011_1110, 0b1011_1110, 0b1011_1110, 0b0001_1110, 0, 0b0001_1110]);
/// The same in the domain: labels of letters and digits, one hyphen between two, one dot
/// between two labels.
#[rustfmt::skip]
const DOMAIN: u64 = u64::from_le_bytes([0, 0b1011_0110, 0b1011_0110, 0, 0b0000_0110, 0b0000_0110, 0, 0b0000_0110]);

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
            (Format::Other(name), _) => {
                out.push_str("Invalid ");
                out.push_str(name);
                out.push_str(" format");
            }
            // Only `Pattern` has no row.
            _ => out.push_str(super::pattern::PROBLEM),
        }
    }

    /// The default "Expected …" text, written out.
    pub(crate) fn push_expected(&self, out: &mut String) {
        match (self, self.row()) {
            (_, Some(row)) => out.push_str(row.3),
            (Format::Pattern(re), _) => super::pattern::push_expected(out, re),
            (Format::Other(name), _) => {
                out.push_str("a valid ");
                out.push_str(name);
            }
            _ => {}
        }
    }
}
