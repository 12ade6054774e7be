//! What went wrong with the arguments, as data: an [`Issue`] per problem, its [`IssueKind`]
//! (named after Zod's issue codes), the [`Format`] a string missed, and the bounds of what is
//! collected and listed.

use std::borrow::Cow;

use serde_json::Value;

use super::path::{IssuePath, MAX_PATH_CHARS};
use super::sent::{cut_at, push_int};

/// The recovery line every `<validation_error>` ends with, verbatim.
pub const RECOVERY: &str =
    "Fix the fields above and call the tool again. Do not explain the error.";

/// At most this many `<field>` lines; the rest are counted in one `<omitted>` line.
pub const MAX_FIELD_LINES: usize = 20;

/// At most this many keys, options or shapes are listed after `Expected` (`…, and 12 more`).
pub const MAX_LISTED: usize = 30;

/// At most this many keys of an object are written out in a line that says what the object
/// takes (`an object with: sku (…), quantity (…)`); past them, how many more there are and
/// where the schema lists them.
pub const MAX_OBJECT_KEYS: usize = 12;

/// How many objects deep a line writes keys out: the field's own object, the objects in it
/// and the objects in those; an object deeper is named by its count of keys and where the
/// schema lists them.
pub const MAX_OBJECT_DEPTH: usize = 3;

/// The most bytes an object's words take (its keys' rules included) before the rest of
/// its keys are only counted: twenty such lines stay within the envelope's 16 KiB.
pub const MAX_OBJECT_BYTES: usize = 600;

/// At most this many issues are collected from one call's arguments; the rest are only counted.
pub const MAX_COLLECTED_ISSUES: usize = 200;

/// The longest name or key, in characters, [`closest`] looks for a near match of: edit
/// distance costs the product of the two lengths, and a longer text is no typo of a name.
///
/// [`closest`]: super::closest
pub const MAX_COMPARED_CHARS: usize = 128;

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
    /// A size bound broken: [`IssueKind::TooBig`] when `upper`, else [`IssueKind::TooSmall`].
    pub(crate) fn bound(upper: bool, measure: Measure, limit: f64, inclusive: bool) -> Self {
        if upper {
            IssueKind::TooBig {
                measure,
                limit,
                inclusive,
            }
        } else {
            IssueKind::TooSmall {
                measure,
                limit,
                inclusive,
            }
        }
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
    /// `pattern`: the regex (its wording is [`pattern`](super::rules::pattern)'s).
    Pattern(String),
    /// Any other JSON Schema format, by name.
    Other(String),
}

/// One problem with the arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    /// Where the field is (`items.0.sku` when rendered); the root for the object itself.
    pub path: IssuePath,
    /// What went wrong.
    pub kind: IssueKind,
    /// The value sent there; `None` for a missing field or an unknown key (on its parent).
    pub sent: Option<Value>,
    /// The "Expected …" text for this field, replacing the kind's default: the author's
    /// (`#[fusion(expected = "..")]`), or, for too few items of objects, the count and what
    /// each item takes (`at least 1 item, each an object with: …`).
    pub expected: Option<Cow<'static, str>>,
}

impl Issue {
    /// An issue at `path` with the value sent there.
    pub fn new(path: impl Into<IssuePath>, kind: IssueKind, sent: Option<Value>) -> Self {
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
    pub fn field_name(&self) -> String {
        if self.path.is_root() {
            return "(root)".into();
        }
        self.path.to_string()
    }

    /// The name as shown: as it is up to [`MAX_PATH_CHARS`] characters, else each key cut to
    /// 50 characters and the whole to [`MAX_PATH_CHARS`] (197 and `...`).
    pub(crate) fn write_shown_name(&self, out: &mut String) {
        if self.path.is_root() {
            return out.push_str("(root)");
        }
        self.path.write(out, false);
        if cut_at(out, MAX_PATH_CHARS).is_none() {
            return;
        }
        out.clear();
        self.path.write(out, true);
        if let Some(end) = cut_at(out, MAX_PATH_CHARS) {
            out.truncate(end);
            out.push_str("...");
        }
    }
}

/// Appends the first [`MAX_LISTED`] items, then how many more there are.
pub(crate) fn push_list<T>(
    out: &mut String,
    items: &[T],
    sep: &str,
    push: impl Fn(&mut String, &T),
) {
    for (i, item) in items.iter().take(MAX_LISTED).enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        push(out, item);
    }
    if items.len() > MAX_LISTED {
        out.push_str(sep);
        out.push_str("and ");
        push_int(out, items.len() - MAX_LISTED);
        out.push_str(" more");
    }
}
