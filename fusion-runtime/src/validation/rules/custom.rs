//! `validate = f`: the author's own check, run on the typed value after the schema passed;
//! its line is the author's message, then what was sent there.

use std::fmt::Display;

use serde_json::Value;

use crate::validation::path::Path;
use crate::validation::{Issue, IssueKind};

/// The problem: the author's message, its final periods dropped (the line adds one).
pub fn push_problem(out: &mut String, message: &str) {
    out.push_str(message.trim_end_matches('.'));
}

/// Custom validators of an input and its nested inputs; `path` is where `self` sits in `args`.
pub trait Validate {
    /// Pushes one `custom` issue per failed validator.
    fn validate(&self, args: &Value, path: &Path<'_>, issues: &mut Vec<Issue>);
}

impl<T: Validate> Validate for Option<T> {
    fn validate(&self, args: &Value, path: &Path<'_>, issues: &mut Vec<Issue>) {
        if let Some(v) = self {
            v.validate(args, path, issues);
        }
    }
}

impl<T: Validate> Validate for Vec<T> {
    fn validate(&self, args: &Value, path: &Path<'_>, issues: &mut Vec<Issue>) {
        for (i, item) in self.iter().enumerate() {
            item.validate(args, &Path::Index(path, i), issues);
        }
    }
}

impl<T: Validate> Validate for Box<T> {
    fn validate(&self, args: &Value, path: &Path<'_>, issues: &mut Vec<Issue>) {
        (**self).validate(args, path, issues);
    }
}

/// A field the derive dives into: `(&Dive(&field)).dive(..)` runs the field's validators when
/// its type has some ([`Validate`]) and does nothing otherwise (autoref specialization).
pub struct Dive<'a, T: ?Sized>(pub &'a T);

/// The [`Dive`] branch for types with validators.
pub trait DiveValidate {
    /// Runs the validators.
    fn dive(&self, args: &Value, path: &Path<'_>, issues: &mut Vec<Issue>);
}

impl<T: Validate + ?Sized> DiveValidate for Dive<'_, T> {
    fn dive(&self, args: &Value, path: &Path<'_>, issues: &mut Vec<Issue>) {
        self.0.validate(args, path, issues);
    }
}

/// The [`Dive`] branch for types without validators.
pub trait DiveNone {
    /// Does nothing.
    fn dive(&self, _args: &Value, _path: &Path<'_>, _issues: &mut Vec<Issue>) {}
}

impl<T: ?Sized> DiveNone for &Dive<'_, T> {}

/// Runs `#[fusion(validate = f)]` on a field: an `Err(message)` is a `custom` issue there.
pub fn run_validator<T: ?Sized, E: Display>(
    value: &T,
    validator: fn(&T) -> Result<(), E>,
    args: &Value,
    path: &Path<'_>,
    expected: Option<&'static str>,
    issues: &mut Vec<Issue>,
) {
    if let Err(message) = validator(value) {
        let path = path.to_issue_path();
        let sent = path.value_in(args).cloned();
        let message = message.to_string();
        let mut issue = Issue::new(path, IssueKind::Custom { message }, sent);
        issue.expected = expected.map(Into::into);
        issues.push(issue);
    }
}
