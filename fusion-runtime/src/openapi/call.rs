//! One operation as an action: its arguments validated against its input schema by the
//! validation engine (a bad call is a `<validation_error>`, as for a derived input), then the
//! request the document describes — the path filled from its template (every value
//! percent-encoded, never a `.` or `..` segment, never another origin), the query, headers,
//! cookies and body written in each parameter's style — sent with bounded time, redirects and
//! answer size, and the answer written by `reply`; and the mount of a document's actions on a
//! server ([`ServerBuilder::openapi`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use super::mount::OpenApi;
use super::operation::{self, Argument, Media, Operation, Plan, Style};
use super::reply::{self, Reply};
use super::security::{self, Credential};
use super::{OpenApiError, OpenApiLimits, ParamLocation};
use crate::action::{ActionInfo, ActionLimits, HandlerFailure, HandlerOutcome, Hints, TaskSupport};
use crate::context::CallContext;
use crate::envelope::{ToolError, codes};
use crate::input::JsonObject;
use crate::server::{BuildError, Erased, ServerBuilder, Started};
use crate::validation::ValidationReport;
use crate::validation::explain::{SchemaIndex, issues_from_errors};

/// Path segment characters left as written (RFC 3986 unreserved); everything else, `/`
/// included, is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// A URL-encoded form's value set (`application/x-www-form-urlencoded`).
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'*');

/// An operation mounted as an action.
pub(crate) struct OperationAction {
    info: ActionInfo,
    call: Arc<Call>,
    input: Checker,
}

/// A compiled schema and what the explainer reads of it.
struct Checker {
    validator: jsonschema::Validator,
    index: SchemaIndex,
}

impl Checker {
    /// The checker of `schema`, and the schema back (it is also what the action shows).
    fn new(schema: Value) -> Result<(Checker, JsonObject), String> {
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| e.to_string())?;
        let index = SchemaIndex::new(&schema);
        let Value::Object(schema) = schema else {
            return Err("not an object".to_owned());
        };
        Ok((Checker { validator, index }, schema))
    }

    fn report(&self, value: &Value) -> Option<ValidationReport> {
        if self.validator.is_valid(value) {
            return None;
        }
        Some(issues_from_errors(
            &self.index,
            self.validator.iter_errors(value),
        ))
    }
}

/// What one call needs, shared by the calls of one action.
struct Call {
    /// The action's name, for the envelopes.
    action: String,
    label: String,
    method: reqwest::Method,
    path: String,
    base: reqwest::Url,
    arguments: Vec<Argument>,
    body: Option<operation::BodyPlan>,
    security: Vec<Vec<String>>,
    schemes: Arc<BTreeMap<String, security::Scheme>>,
    mount: Arc<Mount>,
    output: Option<Checker>,
}

/// What the actions of one mounted document share.
struct Mount {
    client: reqwest::Client,
    credentials: BTreeMap<String, Credential>,
    limits: OpenApiLimits,
}

/// The actions of every operation `api` selects.
pub(crate) fn actions(api: &OpenApi) -> Result<Vec<OperationAction>, OpenApiError> {
    let plans = operation::plan(api)?;
    let mount = mount(api)?;
    plans.into_iter().map(|p| action(p, &mount)).collect()
}

fn mount(api: &OpenApi) -> Result<Arc<Mount>, OpenApiError> {
    Ok(Arc::new(Mount {
        client: client(&api.limits)?,
        credentials: api.credentials.clone(),
        limits: api.limits.clone(),
    }))
}

impl ServerBuilder {
    /// Mounts the operations of an OpenAPI document as actions (see [`openapi`](crate::openapi)):
    /// listed, grouped, validated, guarded and scoped as any action (named
    /// `{prefix}_{tag}.{operation}`, so grouped exposure makes one tool per tag). The document
    /// is read now; a document that cannot be honoured fails [`build`](Self::build) with
    /// [`BuildError::OpenApi`] holding an [`OpenApiError`].
    pub fn openapi(self, api: OpenApi) -> Self {
        match actions(&api) {
            Ok(actions) => actions
                .into_iter()
                .fold(self, |b, a| b.erased_action(Arc::new(a))),
            Err(e) => self.fail(BuildError::OpenApi(Box::new(e))),
        }
    }
}

fn client(limits: &OpenApiLimits) -> Result<reqwest::Client, OpenApiError> {
    let max = limits.max_redirects;
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let first = attempt.previous().first().map(|u| u.origin());
        if attempt.previous().len() > max {
            attempt.error(format!("more than {max} redirects"))
        } else if first.is_some_and(|o| o != attempt.url().origin()) {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .connect_timeout(limits.connect_timeout)
        .timeout(limits.timeout)
        .redirect(policy)
        .build()
        .map_err(|e| OpenApiError::document("", format!("the HTTP client cannot be built: {e}")))
}

/// What a call of `plan`'s operation needs (its output checked when it declares one), and
/// the operation, for the action's description.
fn call_of(plan: Plan, mount: &Arc<Mount>) -> Result<(Operation, Call), OpenApiError> {
    let Plan {
        mut operation,
        arguments,
        body,
        security,
        schemes,
    } = plan;
    let op = &mut operation;
    let output = match op.output_schema.take() {
        Some(s) => {
            let (checker, s) = Checker::new(Value::Object(s))
                .map_err(|e| compile_error(&op.pointer, &op.label(), "output", &e))?;
            op.output_schema = Some(s);
            Some(checker)
        }
        None => None,
    };
    let method = reqwest::Method::from_bytes(op.method.as_bytes())
        .map_err(|_| OpenApiError::document(&op.pointer, "an HTTP method reqwest cannot send"))?;
    let base = reqwest::Url::parse(&op.server)
        .map_err(|e| OpenApiError::document(&op.pointer, format!("the server URL: {e}")))?;
    let call = Call {
        action: op.action.clone(),
        label: format!("{} {}", op.method, op.path),
        method,
        path: op.path.clone(),
        base,
        arguments,
        body,
        security,
        schemes,
        mount: Arc::clone(mount),
        output,
    };
    Ok((operation, call))
}

fn compile_error(pointer: &str, label: &str, what: &str, e: &str) -> OpenApiError {
    OpenApiError::document(pointer, format!("its {what} schema does not compile: {e}"))
        .in_operation(label)
}

fn action(plan: Plan, mount: &Arc<Mount>) -> Result<OperationAction, OpenApiError> {
    let (op, call) = call_of(plan, mount)?;
    let label = op.label();
    let input_schema = Value::Object(op.input_schema);
    let deprecated_fields = crate::validation::deprecated::deprecated_fields(&input_schema);
    let (input, input_schema) =
        Checker::new(input_schema).map_err(|e| compile_error(&op.pointer, &label, "input", &e))?;
    // An action's name is `'static`: one string per mounted operation, for the server's life.
    let name: &'static str = Box::leak(op.action.into_boxed_str());
    let info = ActionInfo {
        name,
        title: op.operation_id.map(Cow::Owned),
        description: Cow::Owned(op.description),
        hints: hints(&op.method),
        deprecated: op.deprecated.then_some(Cow::Borrowed(
            "the API's document marks this operation deprecated",
        )),
        input_schema: Arc::new(input_schema),
        deprecated_fields: deprecated_fields.into(),
        output_schema: op.output_schema.map(Arc::new),
        state: None,
        limits: ActionLimits::none(),
        scopes: Vec::new(),
        task: TaskSupport::Forbidden,
        icons: &[],
    };
    Ok(OperationAction {
        info,
        input,
        call: Arc::new(call),
    })
}

/// The requests of a document's operations, for handlers written by hand or by
/// [`generate`](super::generate): the same request building, credentials, bounds and
/// envelopes as a mounted operation, for an input the handler's own type validated.
///
/// Register it as state (`.state(OpenApiClient::new(&api)?)`) and call it from a handler
/// that takes `api: Context<OpenApiClient>`:
/// `api.state().send("GET /pets/{id}", &input, api.untyped()).await`.
#[derive(Clone)]
pub struct OpenApiClient {
    calls: Arc<BTreeMap<String, Arc<Call>>>,
}

impl OpenApiClient {
    /// Reads the document and plans every operation `api` selects (select the ones your
    /// handlers send: the others cost their plans for nothing).
    pub fn new(api: &OpenApi) -> Result<OpenApiClient, OpenApiError> {
        let mount = mount(api)?;
        let mut calls = BTreeMap::new();
        for plan in operation::plan(api)? {
            let (_, call) = call_of(plan, &mount)?;
            calls.insert(call.label.clone(), Arc::new(call));
        }
        Ok(OpenApiClient {
            calls: Arc::new(calls),
        })
    }

    /// Sends the operation `operation` (`METHOD /path`, as [`Operation::label`] begins) with
    /// `input` as its arguments (a struct serialized to the input schema's shape), and reads
    /// the answer: the 2xx body as JSON (text as a JSON string), any other status as the
    /// envelope a mounted operation answers.
    ///
    /// [`Operation::label`]: super::Operation::label
    pub async fn send(
        &self,
        operation: &str,
        input: &impl serde::Serialize,
        cx: &CallContext,
    ) -> Result<Value, ToolError> {
        let Some(call) = self.calls.get(operation) else {
            return Err(ToolError::new(
                codes::INTERNAL_ERROR,
                format!("the OpenAPI document has no operation {operation}"),
            ));
        };
        let arguments = serde_json::to_value(input).map_err(|e| {
            ToolError::new(
                codes::INTERNAL_ERROR,
                format!("the input could not be serialized: {e}"),
            )
        })?;
        let request = call.request(&arguments, cx)?;
        match call.send(request).await {
            Ok(crate::action::ActionOutput::Value { value, .. }) => Ok(value),
            Ok(crate::action::ActionOutput::Response(r)) => {
                Ok(Value::String(r.texts().collect::<Vec<_>>().join("\n")))
            }
            Err(HandlerFailure::Tool(e)) => Err(e),
            Err(HandlerFailure::Internal(m)) => Err(ToolError::new(codes::INTERNAL_ERROR, m)),
        }
    }
}

/// MCP hints from the method: safe methods read only, `PUT` and `DELETE` idempotent and
/// destructive; every operation reaches the world outside.
fn hints(method: &str) -> Hints {
    let safe = matches!(method, "GET" | "HEAD" | "OPTIONS" | "TRACE");
    let idempotent = safe || matches!(method, "PUT" | "DELETE");
    Hints {
        read_only: Some(safe),
        destructive: Some(matches!(method, "PUT" | "DELETE")),
        idempotent: Some(idempotent),
        open_world: Some(true),
    }
}

impl Erased for OperationAction {
    fn info(&self) -> &ActionInfo {
        &self.info
    }

    fn start(&self, arguments: &Value, cx: &CallContext, chained: bool) -> Started {
        if let Some(report) = self.input.report(arguments) {
            return Started::Invalid(report);
        }
        let request = self.call.request(arguments, cx);
        let call = Arc::clone(&self.call);
        let run = move || -> BoxFuture<'static, HandlerOutcome> {
            Box::pin(async move {
                match request {
                    Ok(r) => call.send(r).await,
                    Err(e) => Err(HandlerFailure::Tool(e)),
                }
            })
        };
        if chained {
            return Started::Chained(Box::new(move |_: &CallContext| run()));
        }
        Started::Running(run())
    }
}

/// A request ready to send.
struct Request {
    url: reqwest::Url,
    headers: Vec<(String, String)>,
    body: Option<(String, Vec<u8>)>,
}

impl Call {
    /// The request `arguments` (valid for the input schema) describe.
    fn request(&self, arguments: &Value, cx: &CallContext) -> Result<Request, ToolError> {
        let args = arguments.as_object();
        let get = |key: &str| args.and_then(|a| a.get(key)).filter(|v| !v.is_null());
        let mut path = String::with_capacity(self.path.len() + 16);
        let mut rest = self.path.as_str();
        while let Some(open) = rest.find('{') {
            path.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let name = &rest[open + 1..open + close];
            let arg = self
                .arguments
                .iter()
                .find(|a| a.location == ParamLocation::Path && a.wire == name);
            let value = arg.and_then(|a| get(&a.key).map(|v| (a, v)));
            let Some((arg, value)) = value else {
                return Err(self.refused(name, "is required in the path"));
            };
            path.push_str(&self.path_value(arg, value)?);
            rest = &rest[open + close + 1..];
        }
        path.push_str(rest);
        let mut url = self.base.clone();
        let joined = format!("{}{}", self.base.path().trim_end_matches('/'), path);
        url.set_path(&joined);
        if url.origin() != self.base.origin() || url.path() != joined {
            return Err(self.refused("(path)", "would leave the operation's path"));
        }
        let applied = security::apply(&self.schemes, &self.security, &self.mount.credentials, cx);
        let mut query: Vec<(String, String)> = Vec::new();
        let mut headers: Vec<(String, String)> = Vec::new();
        let mut cookies: Vec<(String, String)> = Vec::new();
        for arg in &self.arguments {
            let Some(value) = get(&arg.key) else { continue };
            match arg.location {
                ParamLocation::Path => {}
                ParamLocation::Query => query.extend(query_pairs(arg, value)),
                ParamLocation::Header => headers.push((arg.wire.clone(), simple(arg, value))),
                ParamLocation::Cookie => {
                    cookies.push((arg.wire.clone(), joined_value(arg, value, ",")))
                }
            }
        }
        query.extend(applied.query);
        headers.extend(applied.headers);
        cookies.extend(applied.cookies);
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in &query {
                pairs.append_pair(k, v);
            }
        }
        if !cookies.is_empty() {
            let cookie: Vec<String> = cookies
                .iter()
                .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, SEGMENT)))
                .collect();
            headers.push(("cookie".into(), cookie.join("; ")));
        }
        for (k, v) in &headers {
            if reqwest::header::HeaderName::from_bytes(k.as_bytes()).is_err()
                || reqwest::header::HeaderValue::from_str(v).is_err()
            {
                return Err(self.refused(
                    k,
                    "holds characters a header cannot carry (a line break, a control character)",
                ));
            }
        }
        let body = match (&self.body, self.body.as_ref().and_then(|b| get(&b.key))) {
            (Some(plan), Some(value)) => {
                Some((plan.content_type.clone(), encode_body(plan.media, value)))
            }
            _ => None,
        };
        Ok(Request { url, headers, body })
    }

    fn path_value(&self, arg: &Argument, value: &Value) -> Result<String, ToolError> {
        let raw = if arg.as_json {
            value.to_string()
        } else {
            match arg.style {
                Style::Label => {
                    let sep = if arg.explode { "." } else { "," };
                    format!(".{}", joined_value(arg, value, sep))
                }
                Style::Matrix => matrix(arg, value),
                _ => simple(arg, value),
            }
        };
        if raw.is_empty() || raw == "." || raw == ".." {
            return Err(self.refused(&arg.key, "cannot be empty, `.` or `..` in the path"));
        }
        Ok(utf8_percent_encode(&raw, SEGMENT).to_string())
    }

    fn refused(&self, field: &str, why: &str) -> ToolError {
        ToolError::new(
            codes::VALIDATION_ERROR,
            format!("{}: the argument `{field}` {why}", self.action),
        )
        .recovery(
            "Send a value that names one resource (an identifier, not a path), then call again",
        )
        .detail("operation", &self.label)
    }

    async fn send(&self, request: Request) -> HandlerOutcome {
        let limits = &self.mount.limits;
        let mut builder = self.mount.client.request(self.method.clone(), request.url);
        for (k, v) in &request.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        if let Some((content_type, bytes)) = request.body {
            builder = builder.header("content-type", content_type).body(bytes);
        }
        let read = async {
            let mut response = builder.send().await?;
            let status = response.status().as_u16();
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            let (content_type, retry_after, location) = (
                header("content-type"),
                header("retry-after"),
                header("location"),
            );
            if response
                .content_length()
                .is_some_and(|n| n > limits.max_response_bytes as u64)
            {
                return Ok(Err(status));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > limits.max_response_bytes {
                    return Ok(Err(status));
                }
                body.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>(Ok((status, content_type, retry_after, location, body)))
        };
        // reqwest's own timeout covers connecting, sending and reading; this one is a
        // backstop with the same bound.
        let read = tokio::time::timeout(limits.timeout + Duration::from_secs(1), read).await;
        let (status, content_type, retry_after, location, body) = match read {
            Ok(Ok(Ok(parts))) => parts,
            Ok(Ok(Err(status))) => return Err(HandlerFailure::Tool(self.too_large(status))),
            Ok(Err(e)) => return Err(HandlerFailure::Tool(self.unreached(&e))),
            Err(_) => return Err(HandlerFailure::Tool(self.timed_out())),
        };
        let reply = Reply {
            status,
            content_type: content_type.as_deref(),
            retry_after: retry_after.as_deref(),
            location: location.as_deref(),
            body: &body,
        };
        let check = self.output.as_ref().map(|c| {
            move |v: &Value| match c.report(v) {
                None => Ok(()),
                Some(r) => Err(r.issues().first().map_or_else(
                    || "it does not match".to_owned(),
                    |i| format!("{} at {}", i.kind.code(), i.field_name()),
                )),
            }
        });
        let check: Option<reply::OutputCheck<'_>> =
            check.as_ref().map(|c| c as reply::OutputCheck<'_>);
        reply::outcome(&self.action, &self.label, &reply, check)
    }

    fn too_large(&self, status: u16) -> ToolError {
        let max = self.mount.limits.max_response_bytes;
        ToolError::new(
            codes::RESULT_TOO_LARGE,
            format!(
                "{}: the API answered {status} with a body larger than {max} bytes, which was not read",
                self.action
            ),
        )
        .recovery("Ask for less: use the operation's paging or filtering parameters (a smaller page, a narrower query), then call again")
        .detail("operation", &self.label)
    }

    fn timed_out(&self) -> ToolError {
        let secs = self.mount.limits.timeout.as_secs_f64();
        ToolError::new(
            codes::TIMEOUT,
            format!("{}: the API did not answer within {secs} seconds", self.action),
        )
        .recovery("The request may or may not have taken effect: check before repeating a change; a read can be called again")
        .detail("operation", &self.label)
    }

    fn unreached(&self, e: &reqwest::Error) -> ToolError {
        if e.is_timeout() {
            return self.timed_out();
        }
        if e.is_redirect() {
            return ToolError::new(
                codes::INTERNAL_ERROR,
                format!("{}: the API redirected too many times", self.action),
            )
            .recovery("Tell the user the API's address may be wrong; do not retry")
            .detail("operation", &self.label);
        }
        let why = {
            use std::error::Error as _;
            let mut why = e.to_string();
            let mut source = e.source();
            while let Some(s) = source {
                why = format!("{why}: {s}");
                source = s.source();
            }
            operation::cut(&why, reply::MAX_QUOTED_CHARS)
        };
        ToolError::new(
            codes::HANDOFF_UPSTREAM_UNAVAILABLE,
            format!(
                "{}: the API at {} could not be reached ({why})",
                self.action,
                self.base.origin().ascii_serialization()
            ),
        )
        .recovery("Wait for retry_after, then call again; tell the user if it keeps failing")
        .retry_after(5u64)
        .detail("operation", &self.label)
    }
}

/// A value as `simple` style writes it: an array's items joined by `,`; an object's keys and
/// values, `k,v` (or `k=v` exploded).
fn simple(arg: &Argument, value: &Value) -> String {
    if arg.as_json {
        return value.to_string();
    }
    match value {
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    if arg.explode {
                        format!("{k}={}", scalar(v))
                    } else {
                        format!("{k},{}", scalar(v))
                    }
                })
                .collect();
            parts.join(",")
        }
        _ => joined_value(arg, value, ","),
    }
}

fn matrix(arg: &Argument, value: &Value) -> String {
    let name = &arg.wire;
    match value {
        Value::Array(items) if arg.explode => items
            .iter()
            .map(|v| format!(";{name}={}", scalar(v)))
            .collect(),
        Value::Object(m) if arg.explode => m
            .iter()
            .map(|(k, v)| format!(";{k}={}", scalar(v)))
            .collect(),
        _ => format!(";{name}={}", simple(arg, value)),
    }
}

fn joined_value(arg: &Argument, value: &Value, sep: &str) -> String {
    if arg.as_json {
        return value.to_string();
    }
    match value {
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(sep),
        _ => scalar(value),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The query pairs of one argument, as its style writes them.
fn query_pairs(arg: &Argument, value: &Value) -> Vec<(String, String)> {
    let name = arg.wire.clone();
    if arg.as_json {
        return vec![(name, value.to_string())];
    }
    match (arg.style, value) {
        (Style::DeepObject, Value::Object(m)) => m
            .iter()
            .map(|(k, v)| (format!("{name}[{k}]"), scalar(v)))
            .collect(),
        (Style::Form, Value::Array(items)) if arg.explode => {
            items.iter().map(|v| (name.clone(), scalar(v))).collect()
        }
        (Style::Form, Value::Object(m)) if arg.explode => {
            m.iter().map(|(k, v)| (k.clone(), scalar(v))).collect()
        }
        (Style::SpaceDelimited, _) => vec![(name, joined_value(arg, value, " "))],
        (Style::PipeDelimited, _) => vec![(name, joined_value(arg, value, "|"))],
        (Style::TabDelimited, _) => vec![(name, joined_value(arg, value, "\t"))],
        (_, Value::Object(m)) => {
            let flat: Vec<String> = m.iter().flat_map(|(k, v)| [k.clone(), scalar(v)]).collect();
            vec![(name, flat.join(","))]
        }
        _ => vec![(name, joined_value(arg, value, ","))],
    }
}

fn encode_body(media: Media, value: &Value) -> Vec<u8> {
    match media {
        Media::Json => serde_json::to_vec(value).unwrap_or_default(),
        Media::Text => match value {
            Value::String(s) => s.clone().into_bytes(),
            other => other.to_string().into_bytes(),
        },
        Media::Form => {
            let mut out = String::new();
            let mut push = |k: &str, v: &str| {
                if !out.is_empty() {
                    out.push('&');
                }
                out.push_str(&utf8_percent_encode(k, FORM).to_string());
                out.push('=');
                out.push_str(&utf8_percent_encode(v, FORM).to_string());
            };
            if let Value::Object(m) = value {
                for (k, v) in m {
                    match v {
                        Value::Array(items) => items.iter().for_each(|i| push(k, &scalar(i))),
                        Value::Object(_) => push(k, &v.to_string()),
                        _ => push(k, &scalar(v)),
                    }
                }
            }
            out.replace("%20", "+").into_bytes()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(location: ParamLocation, style: Style, explode: bool) -> Argument {
        Argument {
            key: "id".into(),
            wire: "id".into(),
            location,
            style,
            explode,
            as_json: false,
        }
    }

    #[test]
    fn styles_write_what_the_specification_shows() {
        // The examples of OpenAPI 3.1's "Style Examples" table.
        let array = serde_json::json!(["blue", "black", "brown"]);
        let object = serde_json::json!({"R": 100, "G": 200, "B": 150});
        assert_eq!(
            simple(&arg(ParamLocation::Path, Style::Simple, false), &array),
            "blue,black,brown"
        );
        assert_eq!(
            simple(&arg(ParamLocation::Path, Style::Simple, false), &object),
            "B,150,G,200,R,100"
        );
        assert_eq!(
            simple(&arg(ParamLocation::Path, Style::Simple, true), &object),
            "B=150,G=200,R=100"
        );
        assert_eq!(
            matrix(&arg(ParamLocation::Path, Style::Matrix, true), &array),
            ";id=blue;id=black;id=brown"
        );
        let q = query_pairs(&arg(ParamLocation::Query, Style::Form, true), &array);
        assert_eq!(q.len(), 3);
        let q = query_pairs(
            &arg(ParamLocation::Query, Style::PipeDelimited, false),
            &array,
        );
        assert_eq!(q, vec![("id".to_owned(), "blue|black|brown".to_owned())]);
        let q = query_pairs(&arg(ParamLocation::Query, Style::DeepObject, true), &object);
        assert_eq!(q[0], ("id[B]".to_owned(), "150".to_owned()));
        let form = encode_body(Media::Form, &serde_json::json!({"a b": "c&d", "n": [1, 2]}));
        assert_eq!(String::from_utf8_lossy(&form), "a+b=c%26d&n=1&n=2");
    }
}
