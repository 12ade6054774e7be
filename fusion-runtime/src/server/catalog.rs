//! The registry of prompts and resources and what a request does with them: list, get a
//! prompt, read a resource, complete an argument. Transport-free: `mcp` turns the results
//! into protocol messages and a [`SurfaceError`] into the JSON-RPC error of its
//! [`SurfaceErrorKind`].

use std::any::TypeId;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::failure::INTERNAL_RECOVERY;
use crate::action::HandlerFailure;
use crate::completion::{Completer, enum_values};
use crate::context::{CallContext, RequestScope};
use crate::envelope::{ToolError, codes};
use crate::input::{JsonObject, ToolInput};
use crate::prompt::{PromptAction, PromptInfo, PromptOutcome};
use crate::resource::{
    ResourceAction, ResourceContent, ResourceInfo, ResourceOutcome, TemplateError, UriTemplate,
};
use crate::validation::{MAX_FIELD_LINES, MAX_LISTED, ValidationReport};

/// The longest URI a read or a subscription looks up, in bytes; longer ones are not found.
pub const MAX_URI_BYTES: usize = 4096;

/// What a client is told to do when a resource is not found.
pub const RESOURCE_NOT_FOUND_RECOVERY: &str = "List the resources with resources/list and the URI templates with resources/templates/list, then read one of those URIs";

/// Why a server's prompts or resources cannot be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogBuildError {
    /// Two prompts have the same name.
    #[error("prompt `{0}` is registered twice")]
    DuplicatePrompt(String),
    /// Two resources have the same URI or template.
    #[error("resource `{0}` is registered twice")]
    DuplicateResource(String),
    /// A prompt argument MCP cannot carry (prompt arguments are strings).
    #[error(
        "prompt `{prompt}`: argument `{field}` is not a string: MCP sends prompt arguments as strings, so use `String`, `Option<String>` or a string enum"
    )]
    PromptArgument {
        /// The prompt.
        prompt: String,
        /// The argument.
        field: String,
    },
    /// A URI template that is not RFC 6570 level 1, or a static URI with a variable.
    #[error("resource `{resource}`: {error}")]
    Template {
        /// The resource's name.
        resource: String,
        /// What is wrong.
        error: TemplateError,
    },
    /// A template's variables are not its parameter type's fields.
    #[error(
        "resource template `{template}`: its variables {variables:?} must be exactly the fields of its parameters {fields:?}"
    )]
    TemplateVariables {
        /// The template.
        template: String,
        /// Its variables.
        variables: Vec<String>,
        /// The parameter type's fields.
        fields: Vec<String>,
    },
    /// A completer names an argument the prompt or template does not have.
    #[error("`{item}` has a completer for `{argument}`, which is not one of its arguments")]
    UnknownCompleter {
        /// The prompt or template.
        item: String,
        /// The argument.
        argument: String,
    },
    /// A handler needs a state that was not registered.
    #[error("`{item}` needs state `{state}`: register it with `.state(..)`")]
    MissingState {
        /// The prompt or resource.
        item: String,
        /// The state's type name.
        state: &'static str,
    },
}

/// Which JSON-RPC error a [`SurfaceError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SurfaceErrorKind {
    /// `-32602`: an unknown prompt or argument, arguments or parameters that fail validation.
    InvalidParams,
    /// Resource not found: `-32002` for 2025 clients, `-32602` for 2026-07-28 ones.
    ResourceNotFound,
    /// `-32603`: the handler failed.
    Internal,
}

/// A request about a prompt, a resource or a completion that cannot be answered.
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceError {
    /// Which JSON-RPC error it is.
    pub kind: SurfaceErrorKind,
    /// The message (a `<validation_error>` or `<tool_error>` envelope when there is one).
    pub message: String,
    /// Structured details.
    pub data: Value,
}

impl SurfaceError {
    pub(crate) fn new(kind: SurfaceErrorKind, message: impl Into<String>, data: Value) -> Self {
        SurfaceError {
            kind,
            message: message.into(),
            data,
        }
    }
}

/// One prompt argument, as `prompts/list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptArgumentInfo {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Whether it must be sent.
    pub required: bool,
}

/// A registered prompt.
#[derive(Clone)]
pub struct PromptEntry {
    /// The name clients see (`billing_payment_reminder`).
    pub name: String,
    /// Its metadata.
    pub info: PromptInfo,
    /// Its arguments, in schema order.
    pub arguments: Vec<PromptArgumentInfo>,
    pub(crate) erased: Arc<dyn ErasedPrompt>,
}

/// A registered resource or resource template.
#[derive(Clone)]
pub struct ResourceEntry {
    /// Its metadata.
    pub info: ResourceInfo,
    template: UriTemplate,
    pub(crate) erased: Arc<dyn ErasedResource>,
}

/// What a completion is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompletionRef {
    /// A prompt, by the name clients see.
    Prompt(String),
    /// A resource template, by its template text.
    Resource(String),
}

/// What a read returns: the contents of one URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRead {
    /// The URI read.
    pub uri: String,
    /// The resource that answered: its URI, or its URI template.
    pub resource: &'static str,
    /// Its MIME type: the contents' own, else the resource's declared one.
    pub mime_type: Option<String>,
    /// The contents.
    pub content: ResourceContent,
}

/// The prompts and resources of a server.
#[derive(Clone, Default)]
pub struct Catalog {
    pub(crate) prompts: Vec<PromptEntry>,
    pub(crate) resources: Vec<ResourceEntry>,
    hide_internal: bool,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field(
                "prompts",
                &self.prompts.iter().map(|p| &p.name).collect::<Vec<_>>(),
            )
            .field(
                "resources",
                &self
                    .resources
                    .iter()
                    .map(|r| r.info.uri)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Catalog {
    /// Every prompt, in registration order.
    pub fn prompts(&self) -> &[PromptEntry] {
        &self.prompts
    }

    /// Every resource and template, in registration order.
    pub fn resources(&self) -> &[ResourceEntry] {
        &self.resources
    }

    /// The static resources, in registration order.
    pub fn static_resources(&self) -> impl Iterator<Item = &ResourceEntry> {
        self.resources.iter().filter(|r| !r.info.is_template)
    }

    /// The resource templates, in registration order.
    pub fn templates(&self) -> impl Iterator<Item = &ResourceEntry> {
        self.resources.iter().filter(|r| r.info.is_template)
    }

    /// Whether anything completes: a prompt with arguments or a template.
    pub fn has_completions(&self) -> bool {
        self.prompts.iter().any(|p| !p.arguments.is_empty()) || self.templates().next().is_some()
    }

    /// Whether `uri` names a resource: a static URI, or one a template matches (its
    /// parameters are not validated here).
    pub fn knows_uri(&self, uri: &str) -> bool {
        uri.len() <= MAX_URI_BYTES && self.find_resource(uri).is_some()
    }

    pub(crate) fn find_resource(&self, uri: &str) -> Option<(&ResourceEntry, Vec<(&str, String)>)> {
        if let Some(r) = self.static_resources().find(|r| r.info.uri == uri) {
            return Some((r, Vec::new()));
        }
        self.templates()
            .find_map(|r| r.template.matches(uri).map(|vars| (r, vars)))
    }

    pub(crate) fn internal(&self, item: &str, failure: HandlerFailure) -> ToolError {
        match failure {
            HandlerFailure::Tool(t) => t,
            HandlerFailure::Internal(message) => {
                let text = if self.hide_internal || message.is_empty() {
                    format!("{item} failed because of an internal error")
                } else {
                    format!("{item} failed: {message}")
                };
                ToolError::new(codes::INTERNAL_ERROR, text)
                    .recovery(INTERNAL_RECOVERY)
                    .critical()
            }
        }
    }
}

/// Registrations, checked when the server is built.
#[derive(Default)]
pub(crate) struct CatalogBuilder {
    prompts: Vec<Arc<dyn ErasedPrompt>>,
    resources: Vec<Arc<dyn ErasedResource>>,
}

impl CatalogBuilder {
    pub(crate) fn prompt<P: PromptAction>(&mut self) {
        self.prompts.push(Arc::new(RegisteredPrompt::<P>::new()));
    }

    pub(crate) fn resource<R: ResourceAction>(&mut self) {
        self.resources
            .push(Arc::new(RegisteredResource::<R>::new()));
    }

    /// Checks every registration: names, argument types, templates, completers, states.
    pub(crate) fn build(
        self,
        separator: &str,
        hide_internal: bool,
        has_state: impl Fn(TypeId) -> bool,
    ) -> Result<Catalog, CatalogBuildError> {
        let mut seen = HashSet::new();
        let mut prompts = Vec::with_capacity(self.prompts.len());
        for erased in self.prompts {
            let info = erased.info().clone();
            let name = info.name.replace('.', separator);
            if !seen.insert(name.clone()) {
                return Err(CatalogBuildError::DuplicatePrompt(name));
            }
            if let Some(req) = info.state
                && !has_state(req.type_id)
            {
                return Err(CatalogBuildError::MissingState {
                    item: name,
                    state: req.type_name,
                });
            }
            let arguments = prompt_arguments(&name, &info.arguments_schema)?;
            check_completers(&name, erased.completed(), &info.arguments_schema)?;
            prompts.push(PromptEntry {
                name,
                info,
                arguments,
                erased,
            });
        }
        let mut seen = HashSet::new();
        let mut resources = Vec::with_capacity(self.resources.len());
        for erased in self.resources {
            let info = erased.info().clone();
            if !seen.insert(info.uri) {
                return Err(CatalogBuildError::DuplicateResource(info.uri.to_owned()));
            }
            if let Some(req) = info.state
                && !has_state(req.type_id)
            {
                return Err(CatalogBuildError::MissingState {
                    item: info.uri.to_owned(),
                    state: req.type_name,
                });
            }
            let template = check_template(&info)?;
            check_completers(info.uri, erased.completed(), &info.params_schema)?;
            resources.push(ResourceEntry {
                info,
                template,
                erased,
            });
        }
        Ok(Catalog {
            prompts,
            resources,
            hide_internal,
        })
    }
}

pub(crate) fn properties(schema: &JsonObject) -> impl Iterator<Item = (&String, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

fn required(schema: &JsonObject) -> BTreeSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The prompt's arguments from its schema, each checked to be a string (or a string enum).
fn prompt_arguments(
    prompt: &str,
    schema: &JsonObject,
) -> Result<Vec<PromptArgumentInfo>, CatalogBuildError> {
    let root = Value::Object(schema.clone());
    let required = required(schema);
    properties(schema)
        .map(|(name, prop)| {
            let resolved = crate::schema::unwrap_nullable(&root, prop);
            let is_string = match resolved.get("type") {
                Some(Value::String(t)) => t == "string",
                // `Option<String>`: `["string", "null"]`.
                Some(Value::Array(types)) => {
                    types.iter().any(|t| t == "string")
                        && types.iter().all(|t| t == "string" || t == "null")
                }
                _ => false,
            } || enum_values(schema, name).is_some();
            if !is_string {
                return Err(CatalogBuildError::PromptArgument {
                    prompt: prompt.to_owned(),
                    field: name.clone(),
                });
            }
            let description = prop
                .get("description")
                .or_else(|| resolved.get("description"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            Ok(PromptArgumentInfo {
                name: name.clone(),
                description,
                required: required.contains(name.as_str()),
            })
        })
        .collect()
}

fn check_template(info: &ResourceInfo) -> Result<UriTemplate, CatalogBuildError> {
    let template = UriTemplate::parse(info.uri).map_err(|error| CatalogBuildError::Template {
        resource: info.name.to_string(),
        error,
    })?;
    let fields: BTreeSet<&str> = properties(&info.params_schema)
        .map(|(k, _)| k.as_str())
        .collect();
    let variables: BTreeSet<&str> = template.variables().collect();
    if template.is_template() != info.is_template || variables != fields {
        return Err(CatalogBuildError::TemplateVariables {
            template: info.uri.to_owned(),
            variables: variables.into_iter().map(str::to_owned).collect(),
            fields: fields.into_iter().map(str::to_owned).collect(),
        });
    }
    Ok(template)
}

fn check_completers(
    item: &str,
    completed: &[&str],
    schema: &JsonObject,
) -> Result<(), CatalogBuildError> {
    for argument in completed {
        if !properties(schema).any(|(k, _)| k == argument) {
            return Err(CatalogBuildError::UnknownCompleter {
                item: item.to_owned(),
                argument: (*argument).to_owned(),
            });
        }
    }
    Ok(())
}

/// The issues of a report as data: field, kind, what was sent and the line.
fn issues_data(report: &ValidationReport) -> Value {
    Value::Array(
        report
            .issues()
            .iter()
            .take(MAX_FIELD_LINES)
            .map(|i| {
                let mut issue = json!({
                    "field": i.field_name(),
                    "code": i.kind.code(),
                    "line": i.line(),
                });
                if let Some(sent) = &i.sent {
                    issue["sent"] = Value::from(crate::validation::describe_sent(sent));
                }
                issue
            })
            .collect(),
    )
}

pub(crate) fn invalid(name: &str, key: &str, report: &ValidationReport) -> SurfaceError {
    SurfaceError::new(
        SurfaceErrorKind::InvalidParams,
        report.render(name),
        json!({ key: name, "issues": issues_data(report) }),
    )
}

pub(crate) fn not_found(uri: &str, message: String) -> SurfaceError {
    SurfaceError::new(
        SurfaceErrorKind::ResourceNotFound,
        message,
        json!({ "uri": cut(uri), "recovery": RESOURCE_NOT_FOUND_RECOVERY }),
    )
}

/// A client-sent text as it may be echoed: at most 200 characters.
pub(crate) fn cut(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}

pub(crate) fn handler_error(kind: SurfaceErrorKind, item: &str, e: ToolError) -> SurfaceError {
    let data = json!({ "item": item, "code": e.code().as_str() });
    SurfaceError::new(kind, e.render(), data)
}

/// Runs a handler future: a panic or the request's cancellation ends it as a failure.
pub(crate) async fn run<T>(
    fut: BoxFuture<'static, Result<T, HandlerFailure>>,
    scope: &RequestScope,
    item: &str,
) -> Result<T, HandlerFailure> {
    let guarded = AssertUnwindSafe(fut).catch_unwind();
    tokio::select! {
        biased;
        () = scope.cancelled() => Err(HandlerFailure::Internal(String::from("the request was cancelled"))),
        r = guarded => match r {
            Ok(outcome) => outcome,
            Err(_) => Err(HandlerFailure::Tool(
                ToolError::new(
                    codes::INTERNAL_ERROR,
                    format!("The handler of {item} panicked; the server is still running"),
                )
                .recovery(INTERNAL_RECOVERY)
                .critical(),
            )),
        },
    }
}

/// A prompt with its types erased.
pub(crate) trait ErasedPrompt: Send + Sync {
    fn info(&self) -> &PromptInfo;
    fn start(
        &self,
        arguments: &Value,
        cx: &CallContext,
    ) -> Result<BoxFuture<'static, PromptOutcome>, ValidationReport>;
    fn completer(&self, argument: &str) -> Option<Completer>;
    fn completed(&self) -> &'static [&'static str];
}

struct RegisteredPrompt<P> {
    info: PromptInfo,
    _p: PhantomData<fn() -> P>,
}

impl<P: PromptAction> RegisteredPrompt<P> {
    fn new() -> Self {
        RegisteredPrompt {
            info: P::info(),
            _p: PhantomData,
        }
    }
}

impl<P: PromptAction> ErasedPrompt for RegisteredPrompt<P> {
    fn info(&self) -> &PromptInfo {
        &self.info
    }

    fn start(
        &self,
        arguments: &Value,
        cx: &CallContext,
    ) -> Result<BoxFuture<'static, PromptOutcome>, ValidationReport> {
        let args = <P::Args as ToolInput>::from_arguments(arguments)?;
        Ok(P::get(args, cx))
    }

    fn completer(&self, argument: &str) -> Option<Completer> {
        P::completer(argument)
    }

    fn completed(&self) -> &'static [&'static str] {
        P::completed_arguments()
    }
}

/// A resource with its types erased.
pub(crate) trait ErasedResource: Send + Sync {
    fn info(&self) -> &ResourceInfo;
    fn start(
        &self,
        params: &Value,
        cx: &CallContext,
    ) -> Result<BoxFuture<'static, ResourceOutcome>, ValidationReport>;
    fn completer(&self, parameter: &str) -> Option<Completer>;
    fn completed(&self) -> &'static [&'static str];
}

struct RegisteredResource<R> {
    info: ResourceInfo,
    _r: PhantomData<fn() -> R>,
}

impl<R: ResourceAction> RegisteredResource<R> {
    fn new() -> Self {
        RegisteredResource {
            info: R::info(),
            _r: PhantomData,
        }
    }
}

impl<R: ResourceAction> ErasedResource for RegisteredResource<R> {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn start(
        &self,
        params: &Value,
        cx: &CallContext,
    ) -> Result<BoxFuture<'static, ResourceOutcome>, ValidationReport> {
        let params = <R::Params as ToolInput>::from_arguments(params)?;
        Ok(R::read(params, cx))
    }

    fn completer(&self, parameter: &str) -> Option<Completer> {
        R::completer(parameter)
    }

    fn completed(&self) -> &'static [&'static str] {
        R::completed_parameters()
    }
}

/// The other arguments of a completion request, as the completer reads them.
#[cfg_attr(
    not(any(feature = "server-stdio", feature = "server-http")),
    allow(dead_code, reason = "called by mcp/ only")
)]
pub(crate) fn completion_arguments(
    arguments: Option<&std::collections::HashMap<String, String>>,
) -> BTreeMap<String, String> {
    arguments
        .map(|m| {
            m.iter()
                .take(MAX_LISTED)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}
