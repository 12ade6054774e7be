//! Completions (`completion/complete`) for prompt arguments and resource-template parameters.
//!
//! An argument whose type is a string enum completes for free: its values, those starting
//! with what the user typed (case-insensitively), in schema order. A prompt or template can
//! name its own completer for any argument:
//!
//! ```text
//! #[prompt(complete(invoice_id = complete_invoice_ids))]
//! async fn payment_reminder(args: ReminderArgs, store: Context<Store>) -> Result<PromptReply, ToolError> { .. }
//!
//! async fn complete_invoice_ids(req: CompletionRequest, store: Context<Store>) -> Vec<String> {
//!     store.state().ids().filter(|id| id.starts_with(req.value())).collect()
//! }
//! ```
//!
//! At most [`MAX_COMPLETION_VALUES`] values go out; `total` counts them all and `hasMore`
//! says some were left out.

use std::collections::BTreeMap;
use std::future::Future;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::context::{CallContext, FromCallContext};
use crate::input::JsonObject;

/// At most this many values in one completion (MCP's limit).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What the client asked to complete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompletionRequest {
    argument: String,
    value: String,
    arguments: BTreeMap<String, String>,
}

impl CompletionRequest {
    /// A request to complete `argument`, of which the user typed `value`, with the values of
    /// the other arguments already chosen.
    pub fn new(
        argument: impl Into<String>,
        value: impl Into<String>,
        arguments: BTreeMap<String, String>,
    ) -> Self {
        CompletionRequest {
            argument: argument.into(),
            value: value.into(),
            arguments,
        }
    }

    /// The argument being completed.
    pub fn argument(&self) -> &str {
        &self.argument
    }

    /// What the user typed so far.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The other arguments the client already resolved (`context.arguments`).
    pub fn arguments(&self) -> &BTreeMap<String, String> {
        &self.arguments
    }
}

/// A completer, as the registry holds it.
pub type Completer = fn(CompletionRequest, &CallContext) -> BoxFuture<'static, Vec<String>>;

/// The answer to a completion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completions {
    /// At most [`MAX_COMPLETION_VALUES`] values.
    pub values: Vec<String>,
    /// How many values matched in all.
    pub total: usize,
    /// Whether values were left out.
    pub has_more: bool,
}

impl Completions {
    /// The first [`MAX_COMPLETION_VALUES`] of `values`.
    pub fn capped(mut values: Vec<String>) -> Self {
        let total = values.len();
        values.truncate(MAX_COMPLETION_VALUES);
        Completions {
            values,
            total,
            has_more: total > MAX_COMPLETION_VALUES,
        }
    }

    /// The `candidates` that start with `prefix`, case-insensitively, in order.
    pub fn matching<'a>(candidates: impl IntoIterator<Item = &'a str>, prefix: &str) -> Self {
        let prefix = prefix.to_lowercase();
        let mut values = Vec::new();
        let mut total = 0;
        for c in candidates {
            if starts_with_ignoring_case(c, &prefix) {
                total += 1;
                if values.len() < MAX_COMPLETION_VALUES {
                    values.push(c.to_owned());
                }
            }
        }
        Completions {
            values,
            total,
            has_more: total > MAX_COMPLETION_VALUES,
        }
    }
}

fn starts_with_ignoring_case(candidate: &str, lower_prefix: &str) -> bool {
    let mut rest = candidate.chars().flat_map(char::to_lowercase);
    lower_prefix.chars().all(|p| rest.next() == Some(p))
}

/// The string values a property of `schema` takes, when it is a string enum (`enum`, or
/// `oneOf`/`anyOf` of `const`s, through `$ref`s and `Option`'s null branch); `None` otherwise.
pub fn enum_values(schema: &JsonObject, property: &str) -> Option<Vec<String>> {
    let root = Value::Object(schema.clone());
    let prop = schema.get("properties")?.get(property)?;
    let mut out = Vec::new();
    collect_values(&root, prop, &mut out, 0);
    (!out.is_empty()).then_some(out)
}

fn collect_values(root: &Value, schema: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 8 {
        return;
    }
    let schema = crate::schema::resolve(root, schema);
    if let Some(Value::Array(values)) = schema.get("enum") {
        out.extend(values.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    if let Some(Value::String(c)) = schema.get("const") {
        out.push(c.clone());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for b in branches {
                collect_values(root, b, out, depth + 1);
            }
        }
    }
}

/// Calls a completer function written as `async fn(CompletionRequest) -> Vec<String>` or
/// `async fn(CompletionRequest, Context<S>) -> Vec<String>`. Used by the `complete(..)` key of
/// `#[prompt]` and `#[resource]`.
pub trait CompleterFn<M>: Copy + Send + Sync + 'static {
    /// Runs it.
    fn run(self, request: CompletionRequest, cx: &CallContext) -> BoxFuture<'static, Vec<String>>;
}

impl<F, Fut> CompleterFn<()> for F
where
    F: Fn(CompletionRequest) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    fn run(self, request: CompletionRequest, _: &CallContext) -> BoxFuture<'static, Vec<String>> {
        Box::pin(self(request))
    }
}

impl<F, Fut, C> CompleterFn<(C,)> for F
where
    F: Fn(CompletionRequest, C) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
    C: FromCallContext,
{
    fn run(self, request: CompletionRequest, cx: &CallContext) -> BoxFuture<'static, Vec<String>> {
        match C::from_call_context(cx) {
            Ok(c) => Box::pin(self(request, c)),
            Err(_) => Box::pin(std::future::ready(Vec::new())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn enum_values_follow_refs_and_options() {
        let schema = obj(json!({
            "type": "object",
            "properties": {
                "status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}]},
                "tone": {"oneOf": [{"const": "firm", "title": "Firm"}, {"const": "kind"}]},
                "id": {"type": "string"}
            },
            "$defs": {"Status": {"type": "string", "enum": ["draft", "open", "paid", "void"]}}
        }));
        assert_eq!(
            enum_values(&schema, "status"),
            Some(vec![
                "draft".into(),
                "open".into(),
                "paid".into(),
                "void".into()
            ])
        );
        assert_eq!(
            enum_values(&schema, "tone"),
            Some(vec!["firm".into(), "kind".into()])
        );
        assert_eq!(enum_values(&schema, "id"), None);
        assert_eq!(enum_values(&schema, "missing"), None);
    }

    #[test]
    fn matching_filters_by_prefix_ignoring_case_and_caps() {
        let c = Completions::matching(["Open", "overdue", "paid"], "o");
        assert_eq!(c.values, vec!["Open", "overdue"]);
        assert_eq!((c.total, c.has_more), (2, false));
        assert_eq!(Completions::matching(["open"], "").values, vec!["open"]);
        assert!(Completions::matching(["open"], "opened").values.is_empty());
        let many: Vec<String> = (0..250).map(|i| format!("v{i}")).collect();
        let c = Completions::matching(many.iter().map(String::as_str), "V");
        assert_eq!(c.values.len(), MAX_COMPLETION_VALUES);
        assert_eq!((c.total, c.has_more), (250, true));
        let c = Completions::capped(many);
        assert_eq!((c.values.len(), c.total, c.has_more), (100, 250, true));
    }
}
