//! What `#[derive(ToolInput)]` expands to calls. Not a public API: it changes in any release.

use std::fmt::Display;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use schemars;
pub use schemars::{JsonSchema, Schema, SchemaGenerator};
pub use serde_json;

use crate::input::JsonObject;
pub use crate::schema::{ContainerSpec, FieldSpec, Num, Rule, StringFormat, object_schema};
pub use crate::validation::fast::{FastCheck, Probe, ProbeOpaque, ProbeTrusted, Trusted, Typed};
use crate::validation::from_schema::{SchemaIndex, issues_from_errors, serde_issue, value_at};
use crate::validation::{Issue, IssueKind, ValidationReport};

/// The schema of a field's type, as a `fn` pointer the derive can store in a `const`.
pub fn schema_for<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// A derived input's schema and validator, built once per type.
pub struct Compiled {
    /// What the error mapping reads from the annotated schema the validator was built from.
    index: SchemaIndex,
    shown: Arc<JsonObject>,
    validator: Result<jsonschema::Validator, String>,
    /// The schema checked directly in Rust; `None` when it holds a keyword the fast path does
    /// not check.
    fast: Option<FastCheck>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("shown", &self.shown)
            .finish_non_exhaustive()
    }
}

/// Builds `T`'s schema (draft 2020-12) and its validator, with format validation on.
pub fn compile<T: JsonSchema>() -> Compiled {
    let annotated = crate::schema::annotated_root_schema::<T>();
    let shown = Arc::new(crate::schema::shown_schema(&annotated));
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&annotated)
        .map_err(|e| e.to_string());
    let fast = validator
        .is_ok()
        .then(|| FastCheck::compile(&annotated))
        .flatten();
    Compiled {
        index: SchemaIndex::new(&annotated),
        shown,
        validator,
        fast,
    }
}

impl Compiled {
    /// The schema agents see.
    pub fn schema(&self) -> Arc<JsonObject> {
        Arc::clone(&self.shown)
    }

    /// What the fast path answers for `arguments`: `Some(accepted)`, or `None` when the
    /// schema has keywords it does not check. For contract tests: it must equal
    /// [`Compiled::schema_accepts`].
    pub fn fast_accepts(&self, arguments: &Value) -> Option<bool> {
        self.fast.as_ref().map(|f| f.accepts(arguments))
    }

    /// What the `jsonschema` validator answers for `arguments` (`false` when the schema does
    /// not compile).
    pub fn schema_accepts(&self, arguments: &Value) -> bool {
        self.validator.as_ref().is_ok_and(|v| v.is_valid(arguments))
    }

    /// Every structural problem of `arguments`, in one pass; empty when the schema accepts them.
    pub fn check(&self, arguments: &Value) -> Vec<Issue> {
        self.report(arguments).issues().to_vec()
    }

    /// [`Compiled::check`] as a report, which also counts the problems beyond the issues
    /// collected.
    fn report(&self, arguments: &Value) -> ValidationReport {
        match &self.validator {
            Ok(v) if v.is_valid(arguments) => ValidationReport::default(),
            _ => self.collect(arguments),
        }
    }

    /// Every structural problem of `arguments`, for arguments already known to be invalid
    /// (no `is_valid` pass first); empty when the schema accepts them after all.
    fn collect(&self, arguments: &Value) -> ValidationReport {
        match &self.validator {
            Ok(v) => issues_from_errors(&self.index, v.iter_errors(arguments)),
            Err(e) => ValidationReport::new(vec![Issue::new(
                "",
                IssueKind::Custom {
                    message: format!(
                        "The server's input schema does not compile ({e}); report this to the server's author"
                    ),
                },
                None,
            )]),
        }
    }
}

/// What `#[derive(ToolInput)]` implements besides [`ToolInput`](crate::ToolInput): the
/// input's compiled schema and its typed check.
pub trait Derived: DeserializeOwned + Validate + JsonSchema {
    /// The input's schema and validator, built once.
    fn compiled() -> &'static Compiled;

    /// The derived rules on the fields serde read (see [`FastCheck::field`]); `obj` is the
    /// arguments object they were read from.
    fn typed_check(&self, fast: &FastCheck, obj: &JsonObject) -> bool;
}

/// [`compile`] for a derived input, with its typed check when the schema allows one.
pub fn compile_derived<T: JsonSchema>(spec: &ContainerSpec) -> Compiled {
    let mut compiled = compile::<T>();
    if let Some(fast) = &mut compiled.fast {
        fast.plan(spec);
    }
    compiled
}

/// `ToolInput::from_arguments` of a derived input: the schema first (every problem at once),
/// then serde on the parsed value, then the custom validators.
///
/// A valid call takes the typed path: serde first, then the derived rules on the typed fields
/// ([`Derived::typed_check`]). When serde fails or the typed check says no, the arguments go
/// the full way: the fast path (direct Rust checks of the same schema) when it can check the
/// schema, and only when it rejects them the `jsonschema` validator, to collect every problem.
/// The three agree on what they accept, so the outcome is the same either way.
pub fn from_arguments<T: Derived>(arguments: &Value) -> Result<T, ValidationReport> {
    let compiled = T::compiled();
    let fast = match typed::<T>(compiled, arguments) {
        TypedPath::Accepted(value) => return validated(value, arguments),
        // serde read the arguments and a rule failed: the schema rejects them too.
        TypedPath::Rejected => Some(false),
        TypedPath::Undecided => compiled.fast_accepts(arguments),
    };
    match fast {
        Some(true) => {}
        // The fast path agrees with the validator: it rejected, so collect the problems
        // without asking `is_valid` again. Should they disagree after all, no problem is
        // collected and serde decides below.
        Some(false) => {
            let report = compiled.collect(arguments);
            if !report.is_empty() {
                return Err(report);
            }
        }
        None => {
            let report = compiled.report(arguments);
            if !report.is_empty() {
                return Err(report);
            }
        }
    }
    match T::deserialize(arguments) {
        Ok(value) => validated(value, arguments),
        Err(e) => Err(ValidationReport::new(vec![serde_issue(&e)])),
    }
}

/// What the typed path found.
enum TypedPath<T> {
    /// serde read the arguments and every rule holds: the schema accepts them.
    Accepted(T),
    /// serde read the arguments and a rule does not hold: the schema rejects them.
    Rejected,
    /// No typed check, arguments that are not an object, or serde failed.
    Undecided,
}

/// The typed path: serde, then the derived rules on the typed fields.
fn typed<T: Derived>(compiled: &Compiled, arguments: &Value) -> TypedPath<T> {
    let (Some(fast), Some(obj)) = (
        compiled.fast.as_ref().filter(|f| f.has_plan()),
        arguments.as_object(),
    ) else {
        return TypedPath::Undecided;
    };
    match T::deserialize(arguments) {
        Ok(value) if value.typed_check(fast, obj) => TypedPath::Accepted(value),
        Ok(_) => TypedPath::Rejected,
        Err(_) => TypedPath::Undecided,
    }
}

/// What the typed path answers for `arguments`: `Some(accepted)` when serde reads them,
/// `None` when the input has no typed check or serde does not read them. For contract tests:
/// it must equal [`Compiled::schema_accepts`].
pub fn typed_accepts<T: Derived>(arguments: &Value) -> Option<bool> {
    match typed::<T>(T::compiled(), arguments) {
        TypedPath::Accepted(_) => Some(true),
        TypedPath::Rejected => Some(false),
        TypedPath::Undecided => None,
    }
}

/// Runs the custom validators on a value that passed the schema.
fn validated<T: Validate>(value: T, arguments: &Value) -> Result<T, ValidationReport> {
    let mut issues = Vec::new();
    value.validate(arguments, &Path::Root, &mut issues);
    if issues.is_empty() {
        Ok(value)
    } else {
        Err(ValidationReport::new(issues))
    }
}

/// Where a value sits in the arguments; rendered (`items.0.sku`) only when an issue needs it.
#[derive(Clone, Copy, Debug)]
pub enum Path<'a> {
    /// The arguments object.
    Root,
    /// A key of the object at the parent path.
    Key(&'a Path<'a>, &'a str),
    /// An index of the array at the parent path.
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// The dotted path.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        let (parent, seg) = match self {
            Path::Root => return,
            Path::Key(p, k) => (p, (*k).to_owned()),
            Path::Index(p, i) => (p, i.to_string()),
        };
        parent.write(out);
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(&seg);
    }
}

/// Custom validators of a derived input and of the inputs nested in it. `args` is the
/// arguments object (for "You sent"); `path` where `self` sits in it.
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

/// Runs `#[fusion(validate = f)]` on a field: an `Err(message)` becomes a `custom` issue at
/// the field's path, with the value sent there and the author's expected text.
pub fn run_validator<T: ?Sized, E: Display>(
    value: &T,
    validator: fn(&T) -> Result<(), E>,
    args: &Value,
    path: &Path<'_>,
    expected: Option<&'static str>,
    issues: &mut Vec<Issue>,
) {
    if let Err(message) = validator(value) {
        let path = path.render();
        let sent = value_at(args, &path).cloned();
        let mut issue = Issue::new(
            path,
            IssueKind::Custom {
                message: message.to_string(),
            },
            sent,
        );
        if let Some(e) = expected {
            issue = issue.with_expected(e);
        }
        issues.push(issue);
    }
}

// `#[tool_action]` (issue 4)
mod tool_action;
pub use tool_action::*;
