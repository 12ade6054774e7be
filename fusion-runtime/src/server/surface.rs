//! The catalog's calls on a running [`Server`]: `prompts/get`, `resources/read` and
//! `completion/complete`, each checked against what the caller may see.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt as _;
use serde_json::{Value, json};

use super::Server;
use super::catalog::{
    Catalog, CompletionRef, MAX_URI_BYTES, RESOURCE_NOT_FOUND_RECOVERY, ResourceRead, SurfaceError,
    SurfaceErrorKind, cut, handler_error, invalid, not_found, properties, run,
};
use super::visibility::{Item, Visibility};
use crate::action::HandlerFailure;
use crate::completion::{CompletionRequest, Completions, enum_values};
use crate::context::RequestScope;
use crate::input::JsonObject;
use crate::prompt::PromptReply;
use crate::validation::{MAX_LISTED, closest, quote_str};

impl Server {
    /// `prompts/get`: validates the arguments like a tool's, then runs the prompt's handler.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        scope: RequestScope,
    ) -> Result<PromptReply, SurfaceError> {
        let catalog = self.catalog();
        let shown = self.visibility();
        let Some(entry) = catalog
            .prompts
            .iter()
            .find(|p| p.name == name && shown.is_enabled(Item::Prompt, name))
        else {
            return Err(unknown_prompt(catalog, shown, name));
        };
        let arguments = Value::Object(arguments.unwrap_or_default());
        let cx = self.call_context(entry.info.name, Arc::from(entry.name.as_str()), scope);
        let started =
            std::panic::catch_unwind(AssertUnwindSafe(|| entry.erased.start(&arguments, &cx)));
        let fut = match started {
            Ok(Ok(fut)) => fut,
            Ok(Err(report)) => return Err(invalid(&entry.name, "prompt", &report)),
            Err(_) => {
                return Err(handler_error(
                    SurfaceErrorKind::Internal,
                    &entry.name,
                    catalog.internal(
                        &entry.name,
                        HandlerFailure::Internal("its arguments could not be read".into()),
                    ),
                ));
            }
        };
        match run(fut, cx.scope(), &entry.name).await {
            Ok(reply) => Ok(reply),
            Err(failure) => {
                let e = catalog.internal(&entry.name, failure);
                let kind = match e.code().as_str() {
                    "NOT_FOUND" | "VALIDATION_ERROR" | "MISSING_REQUIRED_FIELD" => {
                        SurfaceErrorKind::InvalidParams
                    }
                    _ => SurfaceErrorKind::Internal,
                };
                Err(handler_error(kind, &entry.name, e))
            }
        }
    }

    /// `resources/read`: the exact URI of a static resource, else the first template that
    /// matches, its parameters validated like a tool's input.
    pub async fn read_resource(
        &self,
        uri: &str,
        scope: RequestScope,
    ) -> Result<ResourceRead, SurfaceError> {
        let catalog = self.catalog();
        if uri.len() > MAX_URI_BYTES {
            return Err(not_found(
                uri,
                format!(
                    "Resource not found: the URI is longer than {MAX_URI_BYTES} bytes. {RESOURCE_NOT_FOUND_RECOVERY}."
                ),
            ));
        }
        let found = catalog
            .find_resource(uri)
            .filter(|(e, _)| self.visibility().is_enabled(Item::Resource, e.info.uri));
        let Some((entry, vars)) = found else {
            return Err(not_found(
                uri,
                format!(
                    "Resource not found: {}. {RESOURCE_NOT_FOUND_RECOVERY}.",
                    quote_str(uri)
                ),
            ));
        };
        let params = template_arguments(&entry.info.params_schema, vars);
        let cx = self.call_context(entry.info.uri, Arc::from(entry.info.name.as_ref()), scope);
        let started =
            std::panic::catch_unwind(AssertUnwindSafe(|| entry.erased.start(&params, &cx)));
        let fut = match started {
            Ok(Ok(fut)) => fut,
            Ok(Err(report)) => return Err(invalid(entry.info.uri, "template", &report)),
            Err(_) => {
                return Err(handler_error(
                    SurfaceErrorKind::Internal,
                    entry.info.uri,
                    catalog.internal(
                        entry.info.uri,
                        HandlerFailure::Internal("its parameters could not be read".into()),
                    ),
                ));
            }
        };
        match run(fut, cx.scope(), entry.info.uri).await {
            Ok(content) => Ok(ResourceRead {
                uri: uri.to_owned(),
                resource: entry.info.uri,
                mime_type: content
                    .mime()
                    .or(entry.info.mime_type.as_deref())
                    .or(content.fallback_mime())
                    .map(str::to_owned),
                content,
            }),
            Err(failure) => {
                let e = catalog.internal(entry.info.uri, failure);
                if e.code().as_str() == "NOT_FOUND" {
                    let mut err = not_found(uri, e.render().to_owned());
                    err.data["code"] = Value::from("NOT_FOUND");
                    Err(err)
                } else {
                    Err(handler_error(SurfaceErrorKind::Internal, entry.info.uri, e))
                }
            }
        }
    }

    /// `completion/complete`: the prompt's or template's completer for the argument, else its
    /// enum values matching the typed prefix, else nothing.
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        request: CompletionRequest,
        scope: RequestScope,
    ) -> Result<Completions, SurfaceError> {
        let catalog = self.catalog();
        let (item, exposed, schema, completer) = match reference {
            CompletionRef::Prompt(name) => {
                let shown = self.visibility();
                let Some(p) = (catalog.prompts.iter())
                    .find(|p| &p.name == name && shown.is_enabled(Item::Prompt, name))
                else {
                    return Err(unknown_prompt(catalog, shown, name));
                };
                (
                    p.info.name,
                    p.name.as_str(),
                    &p.info.arguments_schema,
                    p.erased.completer(request.argument()),
                )
            }
            CompletionRef::Resource(uri) => {
                let shown = self.visibility();
                let Some(r) = (catalog.resources.iter())
                    .find(|r| r.info.uri == uri && shown.is_enabled(Item::Resource, uri))
                else {
                    return Err(SurfaceError::new(
                        SurfaceErrorKind::InvalidParams,
                        format!(
                            "Unknown resource template {}. List them with resources/templates/list.",
                            quote_str(uri)
                        ),
                        json!({ "requested": cut(uri) }),
                    ));
                };
                (
                    r.info.uri,
                    r.info.name.as_ref(),
                    &r.info.params_schema,
                    r.erased.completer(request.argument()),
                )
            }
        };
        if !properties(schema).any(|(k, _)| k == request.argument()) {
            let known: Vec<&str> = properties(schema).map(|(k, _)| k.as_str()).collect();
            return Err(SurfaceError::new(
                SurfaceErrorKind::InvalidParams,
                format!(
                    "{exposed} has no argument {}. Its arguments: {}.",
                    quote_str(request.argument()),
                    known
                        .iter()
                        .map(|k| quote_str(k))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                json!({ "argument": cut(request.argument()), "arguments": known }),
            ));
        }
        if let Some(completer) = completer {
            let cx = self.call_context(item, Arc::from(exposed), scope);
            let fut = completer(request, &cx);
            let guarded = AssertUnwindSafe(fut).catch_unwind();
            let values = tokio::select! {
                biased;
                () = cx.scope().cancelled() => Vec::new(),
                r = guarded => r.unwrap_or_default(),
            };
            return Ok(Completions::capped(values));
        }
        Ok(match enum_values(schema, request.argument()) {
            Some(values) => {
                Completions::matching(values.iter().map(String::as_str), request.value())
            }
            None => Completions::default(),
        })
    }
}

fn unknown_prompt(catalog: &Catalog, shown: &Visibility, name: &str) -> SurfaceError {
    let names = (catalog.prompts.iter())
        .map(|p| p.name.as_str())
        .filter(|n| shown.is_enabled(Item::Prompt, n));
    let near = closest(name, names.clone());
    let mut message = format!("Unknown prompt {}.", quote_str(name));
    match near {
        Some(n) => message.push_str(&format!(" Did you mean {}?", quote_str(n))),
        None => message.push_str(" List the prompts with prompts/list."),
    }
    SurfaceError::new(
        SurfaceErrorKind::InvalidParams,
        message,
        json!({
            "requested": cut(name),
            "closest": near,
            "available": names.take(MAX_LISTED).collect::<Vec<_>>(),
        }),
    )
}

/// The captured variables as arguments: a parameter typed integer, number or boolean is
/// parsed from its text (left as text when it does not parse, for validation to report).
fn template_arguments(schema: &JsonObject, vars: Vec<(&str, String)>) -> Value {
    let root = Value::Object(schema.clone());
    let props = schema.get("properties");
    let mut out = JsonObject::new();
    for (name, text) in vars {
        let ty = props
            .and_then(|p| p.get(name))
            .map(|p| crate::schema::unwrap_nullable(&root, p))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match ty {
            Some("integer") => text
                .parse::<i64>()
                .map(Value::from)
                .or_else(|_| text.parse::<u64>().map(Value::from))
                .unwrap_or(Value::String(text)),
            Some("number") => text
                .parse::<f64>()
                .ok()
                .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
                .unwrap_or(Value::String(text)),
            Some("boolean") => match text.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => Value::String(text),
            },
            _ => Value::String(text),
        };
        out.insert(name.to_owned(), value);
    }
    Value::Object(out)
}
