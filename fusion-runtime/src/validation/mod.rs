//! Validation issues and the `<validation_error>` they become (SPEC §4): one `<field>` line
//! per [`Issue`] — what went wrong (its [`IssueKind`], named after Zod's issue codes, worded
//! by its rule in [`rules`]), `You sent: …`, `Expected …` — then the verbatim recovery line.
//!
//! A derived input is checked by [`derived::from_arguments`]: serde, then the rules on the
//! typed fields, then the key count; when they say no, `jsonschema` collects every problem and
//! `explain` words them.

pub mod deprecated;
pub mod derived;
pub(crate) mod explain;
mod issue;
mod path;
mod report;
pub mod rules;
mod sent;
pub mod spec;

pub use deprecated::DeprecatedField;
pub(crate) use issue::push_list;
pub use issue::{
    Format, Issue, IssueKind, MAX_COLLECTED_ISSUES, MAX_COMPARED_CHARS, MAX_FIELD_LINES,
    MAX_LISTED, MAX_OBJECT_BYTES, MAX_OBJECT_DEPTH, MAX_OBJECT_KEYS, Measure, RECOVERY,
};
pub use path::{IssuePath, MAX_PATH_CHARS, Path, Segment};
pub use report::ValidationReport;
pub use rules::unknown_keys::closest;
pub use sent::{describe_sent, quote_str};
