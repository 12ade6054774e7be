//! `email`, `url`, `uuid`, `date_time`, `date`, `ipv4`, `ipv6`: `format`, a row of [`FORMATS`].

use jsonschema::error::ValidationErrorKind as K;
use serde_json::{Map, Value};

use super::{Change, Check, Declaration, Keyword, On, Typed};
use crate::validation::IssueKind;
pub use crate::validation::issue::Format;

/// The rule: its keyword and `jsonschema`'s error for it (worded by its [`Format`]).
pub(crate) const RULE: Declaration = Declaration {
    keywords: &[Keyword {
        name: "format",
        on: On::String,
        change: Change::WhenSet([
            "now must have a format",
            "must have a different format",
            "no longer must have a format",
        ]),
    }],
    reads: |error| match error {
        K::Format { format } => Some(IssueKind::InvalidFormat {
            format: Format::from_keyword(format),
        }),
        _ => None,
    },
    issue: None,
    attribute,
};

/// The attribute of a format the macro has one for, unless the schema's pattern is written
/// (the macro takes one of the two).
fn attribute(schema: &Value, integer: bool) -> Option<String> {
    if (super::pattern::RULE.attribute)(schema, integer).is_some() {
        return None;
    }
    let attribute = match schema.get("format").and_then(Value::as_str)? {
        "email" => "email",
        "uri" | "url" => "url",
        "uuid" => "uuid",
        "date-time" => "date_time",
        "date" => "date",
        "ipv4" => "ipv4",
        "ipv6" => "ipv6",
        _ => return None,
    };
    Some(attribute.to_owned())
}

/// Its keyword: the first name of its row (an attribute's format is a known one).
pub fn keywords(format: Format, schema: &mut Map<String, Value>) {
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
/// last one letters only. `false` says nothing: the engine decides. `fast_path_contract.rs`
/// checks that the engine accepts whatever this accepts.
///
/// One table step per two bytes (each step waits for the one before: half as many steps is
/// half the wait); the lengths need checking only past 64 bytes.
pub fn is_plain_email(s: &str) -> bool {
    let b = s.as_bytes();
    let class = |c: u8| usize::from(EMAIL_CLASS[usize::from(c)] & 7);
    let mut state = L0;
    let mut pairs = b.chunks_exact(2);
    for pair in &mut pairs {
        let column = class(pair[0]) << 3 | class(pair[1]);
        state = EMAIL_NEXT2[usize::from(state & 15)][column];
    }
    if let [c] = pairs.remainder() {
        state = EMAIL_NEXT[usize::from(state & 15)][class(*c)];
    }
    state == A2 && (b.len() <= 64 || lengths_fit(b))
}

/// The local part at most 64 bytes, the domain 253, each label 63.
fn lengths_fit(b: &[u8]) -> bool {
    match b.iter().position(|&c| c == b'@') {
        Some(at) => {
            let domain = &b[at + 1..];
            at <= 64 && domain.len() <= 253 && domain.split(|&c| c == b'.').all(|l| l.len() <= 63)
        }
        None => false,
    }
}

// The states of [`is_plain_email`]: in the local part, at an atom's start (`L0`) or inside
// one (`L1`); in the domain before its first dot, at its start (`D0`), in a label (`N`) or
// after a hyphen (`NH`); after a dot, at a label's start (`S`), after one or more letters
// (`A1`, `A2`), in a label with a digit or hyphen (`M`), after a hyphen (`H`). `A2` accepts;
// `R` rejects, for good.
const R: u8 = 0;
const L0: u8 = 1;
const L1: u8 = 2;
const D0: u8 = 3;
const N: u8 = 4;
const NH: u8 = 5;
const S: u8 = 6;
const A1: u8 = 7;
const A2: u8 = 8;
const M: u8 = 9;
const H: u8 = 10;

/// The byte classes of [`EMAIL_NEXT`]'s columns: anything else (0), a letter (1), a digit
/// (2), `_` or `+` (3), `-` (4), `.` (5), `@` (6).
const EMAIL_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = match c {
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

/// The next state, by state and byte class.
#[rustfmt::skip]
const EMAIL_NEXT: [[u8; 8]; 16] = {
    let mut t = [[R; 8]; 16];
    //        other letter digit _+  -   .   @
    t[L0 as usize] = [R, L1, L1, L1, L1, R,  R,  R];
    t[L1 as usize] = [R, L1, L1, L1, L1, L0, D0, R];
    t[D0 as usize] = [R, N,  N,  R,  R,  R,  R,  R];
    t[N as usize]  = [R, N,  N,  R,  NH, S,  R,  R];
    t[NH as usize] = [R, N,  N,  R,  R,  R,  R,  R];
    t[S as usize]  = [R, A1, M,  R,  R,  R,  R,  R];
    t[A1 as usize] = [R, A2, M,  R,  H,  S,  R,  R];
    t[A2 as usize] = [R, A2, M,  R,  H,  S,  R,  R];
    t[M as usize]  = [R, M,  M,  R,  H,  S,  R,  R];
    t[H as usize]  = [R, M,  M,  R,  R,  R,  R,  R];
    t
};

/// Two steps of [`EMAIL_NEXT`] at once, by state and the two bytes' classes (`first << 3 | second`).
const EMAIL_NEXT2: [[u8; 64]; 16] = {
    let mut t = [[R; 64]; 16];
    let mut state = 0;
    while state < 16 {
        let mut column = 0;
        while column < 64 {
            let half = EMAIL_NEXT[state][column >> 3];
            t[state][column] = EMAIL_NEXT[half as usize][column & 7];
            column += 1;
        }
        state += 1;
    }
    t
};

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
