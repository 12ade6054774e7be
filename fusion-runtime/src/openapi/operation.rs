//! Each selected operation's plan: its action name, description and hints; its input schema
//! (path-level parameters merged with the operation's, then the request body) and where each
//! argument goes on the wire; its output schema (the 2xx answer's, when it is an object);
//! the server it is sent to; the security it needs.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value, json};

use super::document::{Document, Place};
use super::mount::OpenApi;
use super::schema::{Converted, Dialect, Direction, Schemas};
use super::security::{self, Scheme};
use super::{OpenApiError, ParamLocation};
use crate::input::JsonObject;

/// The HTTP methods an operation may have, as OpenAPI names them.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The longest description an action gets from its operation, in characters; the rest is
/// cut (long API prose costs every `tools/list` its tokens).
pub const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// How a parameter's value is written (OpenAPI `style`, or Swagger 2.0's `collectionFormat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    Simple,
    Label,
    Matrix,
    Form,
    SpaceDelimited,
    PipeDelimited,
    TabDelimited,
    DeepObject,
}

/// One argument of an operation's input and where it goes.
#[derive(Clone, Debug)]
pub(crate) struct Argument {
    /// Its key in the arguments.
    pub(crate) key: String,
    /// The parameter's name on the wire.
    pub(crate) wire: String,
    pub(crate) location: ParamLocation,
    pub(crate) style: Style,
    pub(crate) explode: bool,
    /// Sent as JSON text (a parameter described by `content`).
    pub(crate) as_json: bool,
}

/// How a request body is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Media {
    Json,
    Form,
    Text,
}

#[derive(Clone, Debug)]
pub(crate) struct BodyPlan {
    pub(crate) key: String,
    pub(crate) media: Media,
    pub(crate) content_type: String,
}

/// One operation of the document, as mounted: what [`OpenApi::load`] returns and
/// [`generate`](super::generate) writes code for.
#[derive(Clone, Debug)]
pub struct Operation {
    /// The action's name: `{prefix}_{tag}.{operation}` (see [`ServerBuilder::openapi`](crate::ServerBuilder::openapi)).
    pub action: String,
    /// Its `operationId`, when it has one.
    pub operation_id: Option<String>,
    /// The HTTP method, upper case.
    pub method: String,
    /// The path template (`/pets/{id}`).
    pub path: String,
    /// Its first tag.
    pub tag: Option<String>,
    /// The description the action gets: the summary, then the description (cut to
    /// [`MAX_DESCRIPTION_CHARS`]).
    pub description: String,
    /// Whether the document marks it deprecated.
    pub deprecated: bool,
    /// Its input's JSON Schema (2020-12): one property per parameter, and `body`.
    pub input_schema: JsonObject,
    /// Its 2xx answer's JSON Schema, when that is an object.
    pub output_schema: Option<JsonObject>,
    /// The base URL requests go to.
    pub server: String,
    /// Where in the document it is (`#/paths/~1pets~1{id}/get`).
    pub pointer: String,
}

impl Operation {
    /// `GET /pets/{id}`, with the `operationId` when there is one.
    pub fn label(&self) -> String {
        label(&self.method, &self.path, self.operation_id.as_deref())
    }
}

fn label(method: &str, path: &str, id: Option<&str>) -> String {
    match id {
        Some(id) => format!("{method} {path} ({id})"),
        None => format!("{method} {path}"),
    }
}

/// An operation's plan: the public view and what the call needs.
pub(crate) struct Plan {
    pub(crate) operation: Operation,
    pub(crate) arguments: Vec<Argument>,
    pub(crate) body: Option<BodyPlan>,
    /// Alternatives, each a set of schemes that must all be applied.
    pub(crate) security: Vec<Vec<String>>,
    pub(crate) schemes: std::sync::Arc<BTreeMap<String, Scheme>>,
}

/// The plans of every operation `api` selects, in the document's order.
pub(crate) fn plan(api: &OpenApi) -> Result<Vec<Plan>, OpenApiError> {
    let mut doc = Document::load(&api.source, &api.limits)?;
    let root = doc.root();
    let dialect = dialect_of(&root)?;
    let schemes = std::sync::Arc::new(security::schemes(&mut doc, dialect)?);
    for scheme in api.credentials.keys() {
        if !schemes.contains_key(scheme) {
            let declared: Vec<&str> = schemes.keys().map(String::as_str).collect();
            return Err(OpenApiError::document(
                security::schemes_pointer(dialect),
                format!(
                    "a credential is configured for the security scheme `{scheme}`, which the document does not declare (it declares: {})",
                    if declared.is_empty() {
                        "none".to_owned()
                    } else {
                        declared.join(", ")
                    }
                ),
            ));
        }
    }
    let mut schemas = Schemas::new(dialect, api.limits.max_schemas);
    let mut ctx = Context {
        api,
        dialect,
        schemes: &schemes,
        root: &root,
    };
    let mut plans = Vec::new();
    let mut used_selectors: HashSet<&str> = HashSet::new();
    let mut names: HashSet<String> = HashSet::new();
    let mut schema_bytes = 0usize;
    let Some(Value::Object(paths)) = root.get("paths") else {
        return Err(OpenApiError::document(
            "#/paths",
            "the document has no paths",
        ));
    };
    for path in paths.keys() {
        let item_place = doc.follow(&Place::root("/paths").join(path))?;
        let Some(Value::Object(item)) = doc.at(&item_place).cloned() else {
            continue;
        };
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let upper = method.to_ascii_uppercase();
            let id = op.get("operationId").and_then(Value::as_str);
            let tags: Vec<&str> = op
                .get("tags")
                .and_then(Value::as_array)
                .map(|t| t.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let Some(selector) = selected(api, &upper, path, id, &tags) else {
                continue;
            };
            used_selectors.extend(selector);
            if plans.len() >= api.limits.max_operations {
                return Err(OpenApiError::document(
                    "#/paths",
                    format!(
                        "the document selects more than {} operations (OpenApiLimits::max_operations): select fewer with tags, operations or paths",
                        api.limits.max_operations
                    ),
                ));
            }
            let place = item_place.join(method);
            let shown = label(&upper, path, id);
            let planned = ctx
                .operation(&mut doc, &mut schemas, &place, &item, op, &upper, path)
                .map_err(|e| e.in_operation(&shown));
            match planned {
                Ok(mut p) => {
                    schema_bytes += json_len(&p.operation.input_schema)
                        + p.operation.output_schema.as_ref().map_or(0, json_len);
                    if schema_bytes > api.limits.max_schema_bytes {
                        return Err(OpenApiError::document(
                            &doc.describe(&place),
                            format!(
                                "the operations' input and output schemas come to more than {} bytes (OpenApiLimits::max_schema_bytes): select fewer operations, or raise the bound if it is meant",
                                api.limits.max_schema_bytes
                            ),
                        )
                        .in_operation(&shown));
                    }
                    p.operation.action = unique(p.operation.action, &mut names);
                    plans.push(p);
                }
                Err(e) if api.skip_unsupported => {
                    tracing::warn!(error = %e, "OpenAPI operation left out");
                }
                Err(e) => return Err(e),
            }
        }
    }
    check_selectors(api, &used_selectors)?;
    Ok(plans)
}

impl OpenApi {
    /// Reads the document and makes the plan of every selected operation, without mounting
    /// them: what [`ServerBuilder::openapi`](crate::ServerBuilder::openapi) mounts and
    /// [`generate`](super::generate) writes code for.
    pub fn load(&self) -> Result<Vec<Operation>, OpenApiError> {
        Ok(plan(self)?.into_iter().map(|p| p.operation).collect())
    }
}

/// The length of `schema` as compact JSON, counted without writing it.
fn json_len(schema: &JsonObject) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a map of JSON values to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, schema);
    count.0
}

/// The first action name `name` or `name_2`, `name_3`… not taken yet, as written and as a
/// flat tool name (`a_b.c` and `a.b_c` are both the tool `a_b_c`), within 64 characters.
fn unique(name: String, names: &mut HashSet<String>) -> String {
    let flat = |n: &str| n.replace('.', "_");
    let mut candidate = name.clone();
    let mut n = 2;
    while names.contains(&flat(&candidate)) {
        let suffix = format!("_{n}");
        let mut keep = name.len().min(64usize.saturating_sub(suffix.len()));
        while !name.is_char_boundary(keep) {
            keep -= 1;
        }
        candidate = format!("{}{suffix}", &name[..keep]);
        n += 1;
    }
    names.insert(flat(&candidate));
    candidate
}

fn dialect_of(root: &Value) -> Result<Dialect, OpenApiError> {
    if let Some(v) = root.get("openapi").and_then(Value::as_str) {
        if v.starts_with("3.0") {
            return Ok(Dialect::V30);
        }
        if v.starts_with("3.1") || v.starts_with("3.2") {
            return Ok(Dialect::V31);
        }
        return Err(OpenApiError::document(
            "#/openapi",
            format!("OpenAPI {v} is not read (3.0, 3.1 and Swagger 2.0 are)"),
        ));
    }
    match root.get("swagger").and_then(Value::as_str) {
        Some("2.0") => Ok(Dialect::V2),
        Some(v) => Err(OpenApiError::document(
            "#/swagger",
            format!("Swagger {v} is not read (2.0 is)"),
        )),
        None => Err(OpenApiError::document(
            "",
            "not an OpenAPI document: it has neither `openapi` nor `swagger`",
        )),
    }
}

/// Which selectors pick this operation: `None` when it is not mounted; `Some(empty)` when
/// nothing is selected (everything is mounted).
fn selected<'a>(
    api: &'a OpenApi,
    method: &str,
    path: &str,
    id: Option<&str>,
    tags: &[&str],
) -> Option<Vec<&'a str>> {
    let by_name = |s: &str| Some(s) == id || s.eq_ignore_ascii_case(&format!("{method} {path}"));
    if api.exclude.iter().any(|e| by_name(e)) {
        return None;
    }
    if api.tags.is_empty() && api.operations.is_empty() && api.paths.is_empty() {
        return Some(Vec::new());
    }
    let mut hits: Vec<&str> = Vec::new();
    hits.extend(
        api.tags
            .iter()
            .filter(|t| tags.contains(&t.as_str()))
            .map(String::as_str),
    );
    hits.extend(
        api.operations
            .iter()
            .filter(|o| by_name(o))
            .map(String::as_str),
    );
    hits.extend(
        api.paths
            .iter()
            .filter(|p| {
                *p == path
                    || p.strip_suffix('*').is_some_and(|pre| path.starts_with(pre))
                    || (p.ends_with('/') && path.starts_with(p.as_str()))
            })
            .map(String::as_str),
    );
    (!hits.is_empty()).then_some(hits)
}

fn check_selectors(api: &OpenApi, used: &HashSet<&str>) -> Result<(), OpenApiError> {
    let kinds = [
        ("tag", &api.tags),
        ("operation", &api.operations),
        ("path", &api.paths),
    ];
    for (kind, list) in kinds {
        if let Some(unused) = list.iter().find(|s| !used.contains(s.as_str())) {
            return Err(OpenApiError::document(
                "#/paths",
                format!("the {kind} `{unused}` selects no operation of the document"),
            ));
        }
    }
    Ok(())
}

struct Context<'a> {
    api: &'a OpenApi,
    dialect: Dialect,
    /// Shared by every plan (not copied per operation).
    schemes: &'a std::sync::Arc<BTreeMap<String, Scheme>>,
    root: &'a Value,
}

/// A parameter, merged and resolved.
struct Param {
    name: String,
    location: ParamLocation,
    place: Place,
    value: Map<String, Value>,
}

impl Context<'_> {
    #[allow(
        clippy::too_many_arguments,
        reason = "one call site; the parts of one operation"
    )]
    fn operation(
        &mut self,
        doc: &mut Document,
        schemas: &mut Schemas,
        place: &Place,
        item: &Map<String, Value>,
        op: &Value,
        method: &str,
        path: &str,
    ) -> Result<Plan, OpenApiError> {
        let id = op.get("operationId").and_then(Value::as_str);
        let tag = op
            .get("tags")
            .and_then(Value::as_array)
            .and_then(|t| t.first())
            .and_then(Value::as_str)
            .map(str::to_owned);
        let item_place = Place {
            file: place.file,
            pointer: place
                .pointer
                .rsplit_once('/')
                .map_or("", |(p, _)| p)
                .to_owned(),
        };
        let params = self.parameters(doc, &item_place, item, place, op)?;
        let security = self.security(op);
        let mut properties = Map::new();
        let mut required: Vec<Value> = Vec::new();
        let mut defs = BTreeMap::new();
        let mut arguments = Vec::new();
        let mut keys: HashSet<String> = HashSet::new();
        let mut consumes_form = false;
        let mut form_fields: Vec<(String, Value, bool)> = Vec::new();
        for p in &params {
            if p.location == ParamLocation::Header
                && ["accept", "content-type", "authorization"]
                    .contains(&p.name.to_ascii_lowercase().as_str())
            {
                continue;
            }
            if security::supplied(self.schemes, &security, p.location, &p.name) {
                continue;
            }
            let (schema, as_json) = self.param_schema(doc, schemas, p, &mut defs)?;
            let key = if keys.contains(&p.name) {
                format!("{}_{}", p.name, p.location.as_str())
            } else {
                p.name.clone()
            };
            keys.insert(key.clone());
            let is_required = p.location == ParamLocation::Path
                || p.value.get("required") == Some(&Value::Bool(true));
            if is_required {
                required.push(Value::String(key.clone()));
            }
            let (style, explode) = self.style(doc, p)?;
            properties.insert(key.clone(), schema);
            arguments.push(Argument {
                key,
                wire: p.name.clone(),
                location: p.location,
                style,
                explode,
                as_json,
            });
        }
        // A template variable the document forgot to declare (httpbin's `/anything/{anything}`)
        // is what it says: a required string in the path.
        for name in path_names(path) {
            if !arguments
                .iter()
                .any(|a| a.location == ParamLocation::Path && a.wire == name)
            {
                tracing::debug!(path, name, "undeclared path parameter read as a string");
                let key = if keys.contains(name) {
                    format!("{name}_path")
                } else {
                    name.to_owned()
                };
                keys.insert(key.clone());
                required.push(Value::String(key.clone()));
                properties.insert(key.clone(), json!({"type": "string", "minLength": 1}));
                arguments.push(Argument {
                    key,
                    wire: name.to_owned(),
                    location: ParamLocation::Path,
                    style: Style::Simple,
                    explode: false,
                    as_json: false,
                });
            }
        }
        // Swagger 2.0's body and formData parameters.
        let mut body = None;
        if self.dialect == Dialect::V2 {
            for (p_place, p) in v2_body_params(doc, &item_place, item, place, op)? {
                match p.get("in").and_then(Value::as_str) {
                    Some("body") => {
                        let s_place = p_place.join("schema");
                        let c = schemas.convert(doc, &s_place, Direction::Request)?;
                        let key = body_key(&keys);
                        keys.insert(key.clone());
                        if p.get("required") == Some(&Value::Bool(true)) {
                            required.push(Value::String(key.clone()));
                        }
                        properties.insert(
                            key.clone(),
                            with_description(c.schema, p.get("description")),
                        );
                        defs.extend(c.defs);
                        let media = self.v2_consumes(op, &["application/json"]);
                        body = Some(BodyPlan {
                            key,
                            media: Media::Json,
                            content_type: media.unwrap_or_else(|| "application/json".to_owned()),
                        });
                    }
                    Some("formData") => {
                        consumes_form = true;
                        if p.get("type").and_then(Value::as_str) == Some("file") {
                            return Err(OpenApiError::document(
                                &doc.describe(&p_place),
                                "a file upload (formData of type file, sent as multipart) is not sent by the loader; curate this operation with `openapi gen` and send it yourself",
                            ));
                        }
                        let schema = v2_param_schema(&p);
                        let c =
                            schemas.convert_value(doc, &p_place, &schema, Direction::Request)?;
                        defs.extend(c.defs);
                        let name = p
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned();
                        let req = p.get("required") == Some(&Value::Bool(true));
                        form_fields.push((
                            name,
                            with_description(c.schema, p.get("description")),
                            req,
                        ));
                    }
                    _ => {}
                }
            }
            if consumes_form {
                if self.v2_consumes(op, &["multipart/form-data"]).is_some()
                    && self
                        .v2_consumes(op, &["application/x-www-form-urlencoded"])
                        .is_none()
                {
                    return Err(OpenApiError::document(
                        &doc.describe(place),
                        "the form is sent only as multipart/form-data, which the loader does not write; curate this operation with `openapi gen`",
                    ));
                }
                let key = body_key(&keys);
                keys.insert(key.clone());
                let mut props = Map::new();
                let mut req = Vec::new();
                for (name, schema, r) in form_fields {
                    if r {
                        req.push(Value::String(name.clone()));
                    }
                    props.insert(name, schema);
                }
                if !req.is_empty() {
                    required.push(Value::String(key.clone()));
                }
                properties.insert(
                    key.clone(),
                    json!({"type": "object", "properties": props, "required": req, "additionalProperties": false}),
                );
                body = Some(BodyPlan {
                    key,
                    media: Media::Form,
                    content_type: "application/x-www-form-urlencoded".into(),
                });
            }
        } else if let Some(rb) = op.get("requestBody") {
            let rb_place = doc.follow(&place.join("requestBody"))?;
            let rb = doc.at(&rb_place).cloned().unwrap_or_else(|| rb.clone());
            let (media, content_type, schema_place) = pick_media(doc, &rb_place, &rb)?;
            let c = match schema_place {
                Some(sp) => schemas.convert(doc, &sp, Direction::Request)?,
                None => Converted {
                    schema: if media == Media::Text {
                        json!({"type": "string"})
                    } else {
                        json!({})
                    },
                    defs: BTreeMap::new(),
                },
            };
            let key = body_key(&keys);
            keys.insert(key.clone());
            if rb.get("required") == Some(&Value::Bool(true)) {
                required.push(Value::String(key.clone()));
            }
            properties.insert(
                key.clone(),
                with_description(c.schema, rb.get("description")),
            );
            defs.extend(c.defs);
            body = Some(BodyPlan {
                key,
                media,
                content_type,
            });
        }
        let mut input = Map::new();
        input.insert(
            "$schema".into(),
            "https://json-schema.org/draft/2020-12/schema".into(),
        );
        input.insert("type".into(), "object".into());
        input.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            input.insert("required".into(), Value::Array(required));
        }
        input.insert("additionalProperties".into(), Value::Bool(false));
        if !defs.is_empty() {
            input.insert("$defs".into(), Value::Object(defs.into_iter().collect()));
        }
        let output_schema = if self.api.output_schemas {
            self.output(doc, schemas, place, op)?
        } else {
            None
        };
        let server = self.server(doc, place, &item_place, item, op)?;
        let description = describe(op, method, path);
        Ok(Plan {
            operation: Operation {
                action: action_name(self.api.prefix.as_deref(), tag.as_deref(), id, method, path),
                operation_id: id.map(str::to_owned),
                method: method.to_owned(),
                path: path.to_owned(),
                tag,
                description,
                deprecated: op.get("deprecated") == Some(&Value::Bool(true)),
                input_schema: input,
                output_schema,
                server,
                pointer: doc.describe(place),
            },
            arguments,
            body,
            security,
            schemes: std::sync::Arc::clone(self.schemes),
        })
    }

    fn v2_consumes(&self, op: &Value, wanted: &[&str]) -> Option<String> {
        let list = op.get("consumes").or_else(|| self.root.get("consumes"));
        let list: Vec<&str> = list
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if list.is_empty() {
            return wanted
                .first()
                .map(|s| (*s).to_owned())
                .filter(|w| w == "application/json");
        }
        list.iter()
            .find(|m| {
                wanted
                    .iter()
                    .any(|w| m.split(';').next().is_some_and(|b| b.trim() == *w))
            })
            .map(|s| (*s).to_owned())
    }

    /// The path item's parameters, then the operation's (which replace a path item's of the
    /// same name and location); each `$ref` followed. Swagger 2.0's body and form parameters
    /// are read apart.
    fn parameters(
        &self,
        doc: &mut Document,
        item_place: &Place,
        item: &Map<String, Value>,
        place: &Place,
        op: &Value,
    ) -> Result<Vec<Param>, OpenApiError> {
        let mut merged: Vec<Param> = Vec::new();
        let lists = [
            (item_place.join("parameters"), item.get("parameters")),
            (place.join("parameters"), op.get("parameters")),
        ];
        for (list_place, list) in lists {
            let Some(Value::Array(list)) = list else {
                continue;
            };
            for i in 0..list.len() {
                let p_place = doc.follow(&list_place.join(&i.to_string()))?;
                let Some(Value::Object(p)) = doc.at(&p_place).cloned() else {
                    return Err(OpenApiError::document(
                        &doc.describe(&p_place),
                        "a parameter that is not an object",
                    ));
                };
                let name = p.get("name").and_then(Value::as_str);
                let at = p.get("in").and_then(Value::as_str);
                let (Some(name), Some(at)) = (name, at) else {
                    return Err(OpenApiError::document(
                        &doc.describe(&p_place),
                        "a parameter without a `name` or an `in`",
                    ));
                };
                if self.dialect == Dialect::V2 && matches!(at, "body" | "formData") {
                    continue;
                }
                let Some(location) = ParamLocation::parse(at) else {
                    return Err(OpenApiError::document(
                        &doc.describe(&p_place),
                        format!(
                            "the parameter `{name}` is `in: {at}`, which is not path, query, header or cookie"
                        ),
                    ));
                };
                let param = Param {
                    name: name.to_owned(),
                    location,
                    place: p_place,
                    value: p,
                };
                match merged
                    .iter_mut()
                    .find(|m| m.name == param.name && m.location == location)
                {
                    Some(m) => *m = param,
                    None => merged.push(param),
                }
            }
        }
        Ok(merged)
    }

    /// A parameter's schema (with its description), and whether it is sent as JSON text.
    fn param_schema(
        &self,
        doc: &mut Document,
        schemas: &mut Schemas,
        p: &Param,
        defs: &mut BTreeMap<String, Value>,
    ) -> Result<(Value, bool), OpenApiError> {
        let (c, as_json) = if self.dialect == Dialect::V2 {
            let schema = v2_param_schema(&p.value);
            (
                schemas.convert_value(doc, &p.place, &schema, Direction::Request)?,
                false,
            )
        } else if p.value.contains_key("schema") {
            (
                schemas.convert(doc, &p.place.join("schema"), Direction::Request)?,
                false,
            )
        } else if let Some(Value::Object(content)) = p.value.get("content") {
            let Some(media) = content.keys().next() else {
                return Err(OpenApiError::document(
                    &doc.describe(&p.place),
                    "a parameter with an empty `content`",
                ));
            };
            let sp = p.place.join("content").join(media).join("schema");
            (schemas.convert(doc, &sp, Direction::Request)?, true)
        } else {
            (
                Converted {
                    schema: json!({"type": "string"}),
                    defs: BTreeMap::new(),
                },
                false,
            )
        };
        defs.extend(c.defs);
        let mut schema = with_description(c.schema, p.value.get("description"));
        if p.value.get("deprecated") == Some(&Value::Bool(true))
            && let Value::Object(m) = &mut schema
        {
            m.insert("deprecated".into(), Value::Bool(true));
        }
        if let (Some(example), Value::Object(m)) = (p.value.get("example"), &mut schema)
            && !m.contains_key("examples")
        {
            m.insert("examples".into(), Value::Array(vec![example.clone()]));
        }
        Ok((schema, as_json))
    }

    fn style(&self, doc: &Document, p: &Param) -> Result<(Style, bool), OpenApiError> {
        let at = doc.describe(&p.place);
        let unsupported = |what: String| OpenApiError::document(&at, what);
        if self.dialect == Dialect::V2 {
            let format = p
                .value
                .get("collectionFormat")
                .and_then(Value::as_str)
                .unwrap_or("csv");
            let (style, explode) = match format {
                "csv" => (
                    if p.location == ParamLocation::Query {
                        Style::Form
                    } else {
                        Style::Simple
                    },
                    false,
                ),
                "ssv" => (Style::SpaceDelimited, false),
                "tsv" => (Style::TabDelimited, false),
                "pipes" => (Style::PipeDelimited, false),
                "multi" => (Style::Form, true),
                other => {
                    return Err(unsupported(format!(
                        "the collectionFormat `{other}` is not one Swagger 2.0 defines"
                    )));
                }
            };
            return Ok((style, explode));
        }
        let default = match p.location {
            ParamLocation::Path | ParamLocation::Header => Style::Simple,
            ParamLocation::Query | ParamLocation::Cookie => Style::Form,
        };
        let style = match p.value.get("style").and_then(Value::as_str) {
            None => default,
            Some("simple") => Style::Simple,
            Some("label") => Style::Label,
            Some("matrix") => Style::Matrix,
            Some("form") => Style::Form,
            Some("spaceDelimited") => Style::SpaceDelimited,
            Some("pipeDelimited") => Style::PipeDelimited,
            Some("deepObject") => Style::DeepObject,
            Some(other) => {
                return Err(unsupported(format!(
                    "the parameter `{}` has the style `{other}`, which OpenAPI does not define",
                    p.name
                )));
            }
        };
        let fits = match p.location {
            ParamLocation::Path => matches!(style, Style::Simple | Style::Label | Style::Matrix),
            ParamLocation::Query => matches!(
                style,
                Style::Form | Style::SpaceDelimited | Style::PipeDelimited | Style::DeepObject
            ),
            ParamLocation::Header => style == Style::Simple,
            ParamLocation::Cookie => style == Style::Form,
        };
        if !fits {
            return Err(unsupported(format!(
                "the {} parameter `{}` cannot have the style `{:?}`",
                p.location.as_str(),
                p.name,
                style
            )));
        }
        let explode = p
            .value
            .get("explode")
            .and_then(Value::as_bool)
            .unwrap_or(style == Style::Form);
        Ok((style, explode))
    }

    fn security(&self, op: &Value) -> Vec<Vec<String>> {
        let list = op.get("security").or_else(|| self.root.get("security"));
        list.and_then(Value::as_array)
            .map(|alts| {
                alts.iter()
                    .filter_map(Value::as_object)
                    .map(|req| req.keys().cloned().collect())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The output schema: the first 2xx answer's JSON schema, when it describes an object.
    fn output(
        &self,
        doc: &mut Document,
        schemas: &mut Schemas,
        place: &Place,
        op: &Value,
    ) -> Result<Option<JsonObject>, OpenApiError> {
        let Some(Value::Object(responses)) = op.get("responses") else {
            return Ok(None);
        };
        let mut codes: Vec<&String> = responses.keys().filter(|c| c.starts_with('2')).collect();
        codes.sort();
        let Some(code) = codes.first() else {
            return Ok(None);
        };
        let r_place = doc.follow(&place.join("responses").join(code))?;
        let Some(r) = doc.at(&r_place).cloned() else {
            return Ok(None);
        };
        let schema_place = if self.dialect == Dialect::V2 {
            r.get("schema").map(|_| r_place.join("schema"))
        } else {
            match r.get("content") {
                Some(Value::Object(content)) => content
                    .keys()
                    .find(|m| is_json(m))
                    .filter(|m| content[*m].get("schema").is_some())
                    .map(|m| r_place.join("content").join(m).join("schema")),
                _ => None,
            }
        };
        let Some(sp) = schema_place else {
            return Ok(None);
        };
        let c = schemas.convert(doc, &sp, Direction::Response)?;
        let root_type = match c.schema.get("$ref").and_then(Value::as_str) {
            Some(r) => r
                .strip_prefix("#/$defs/")
                .and_then(|n| c.defs.get(n))
                .and_then(|d| d.get("type")),
            None => c.schema.get("type"),
        };
        if root_type != Some(&json!("object")) {
            return Ok(None);
        }
        let mut out = match c.schema {
            Value::Object(m) => m,
            _ => return Ok(None),
        };
        out.insert(
            "$schema".into(),
            "https://json-schema.org/draft/2020-12/schema".into(),
        );
        out.insert("type".into(), "object".into());
        if !c.defs.is_empty() {
            out.insert("$defs".into(), Value::Object(c.defs.into_iter().collect()));
        }
        Ok(Some(out))
    }

    /// The base URL: the mount's, else the operation's, path item's or document's first
    /// server (its variables filled), else Swagger 2.0's scheme, host and basePath.
    fn server(
        &self,
        doc: &Document,
        place: &Place,
        item_place: &Place,
        item: &Map<String, Value>,
        op: &Value,
    ) -> Result<String, OpenApiError> {
        if let Some(url) = &self.api.base_url {
            return checked_url(url.trim_end_matches('/'), "the mount's base_url");
        }
        if self.dialect == Dialect::V2 {
            let root = self.root;
            let Some(host) = root.get("host").and_then(Value::as_str) else {
                return Err(OpenApiError::document(
                    "#/host",
                    "the document names no host: set the mount's base_url",
                ));
            };
            let schemes: Vec<&str> = op
                .get("schemes")
                .or_else(|| root.get("schemes"))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let scheme = if schemes.contains(&"https") || schemes.is_empty() {
                "https"
            } else {
                "http"
            };
            let base = root.get("basePath").and_then(Value::as_str).unwrap_or("");
            let url = format!("{scheme}://{host}{base}");
            return checked_url(url.trim_end_matches('/'), "#/host");
        }
        let candidates = [
            (place.join("servers"), op.get("servers")),
            (item_place.join("servers"), item.get("servers")),
            (Place::root("/servers"), self.root.get("servers")),
        ];
        for (s_place, servers) in candidates {
            let Some(Value::Array(list)) = servers else {
                continue;
            };
            let Some(first) = list.first() else { continue };
            let at = doc.describe(&s_place.join("0"));
            let Some(template) = first.get("url").and_then(Value::as_str) else {
                return Err(OpenApiError::document(&at, "a server without a url"));
            };
            let url = self.fill_variables(template, first.get("variables"), &at)?;
            if !url.contains("://") {
                return Err(OpenApiError::document(
                    &at,
                    format!(
                        "the server URL `{url}` is relative: set the mount's base_url to the API's address"
                    ),
                ));
            }
            return checked_url(url.trim_end_matches('/'), &at);
        }
        Err(OpenApiError::document(
            "#/servers",
            "the document names no server: set the mount's base_url",
        ))
    }

    fn fill_variables(
        &self,
        template: &str,
        vars: Option<&Value>,
        at: &str,
    ) -> Result<String, OpenApiError> {
        let mut out = String::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                return Err(OpenApiError::document(
                    at,
                    format!("the server URL `{template}` has an unclosed `{{`"),
                ));
            };
            let name = &rest[open + 1..open + close];
            let var = vars.and_then(|v| v.get(name));
            let value = match (self.api.variables.get(name), var) {
                (Some(v), Some(def)) => {
                    if let Some(Value::Array(allowed)) = def.get("enum")
                        && !allowed.iter().any(|a| a.as_str() == Some(v))
                    {
                        return Err(OpenApiError::document(
                            at,
                            format!(
                                "the server variable `{name}` is set to `{v}`, not one of its enum: {}",
                                Value::Array(allowed.clone())
                            ),
                        ));
                    }
                    v.clone()
                }
                (Some(v), None) => v.clone(),
                (None, Some(def)) => match def.get("default") {
                    Some(Value::String(d)) => d.clone(),
                    _ => {
                        return Err(OpenApiError::document(
                            at,
                            format!(
                                "the server variable `{name}` has no default: set it with server_variable"
                            ),
                        ));
                    }
                },
                (None, None) => {
                    return Err(OpenApiError::document(
                        at,
                        format!(
                            "the server URL uses `{{{name}}}`, which it does not define: set it with server_variable"
                        ),
                    ));
                }
            };
            out.push_str(&value);
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

fn checked_url(url: &str, at: &str) -> Result<String, OpenApiError> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(url.to_owned()),
        Ok(u) => Err(OpenApiError::document(
            at,
            format!(
                "the server URL `{url}` is not http or https with a host (scheme `{}`)",
                u.scheme()
            ),
        )),
        Err(e) => Err(OpenApiError::document(
            at,
            format!("the server URL `{url}` is not a URL: {e}"),
        )),
    }
}

/// The `{name}`s of a path template.
pub(crate) fn path_names(path: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        names.push(&rest[open + 1..open + close]);
        rest = &rest[open + close + 1..];
    }
    names
}

fn body_key(keys: &HashSet<String>) -> String {
    if keys.contains("body") {
        "request_body".into()
    } else {
        "body".into()
    }
}

fn is_json(media: &str) -> bool {
    let base = media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    base == "application/json" || base.ends_with("+json") || base == "*/*"
}

/// The media type a request body is written in: JSON first, then a URL-encoded form, then
/// plain text; and the place of its schema.
fn pick_media(
    doc: &Document,
    rb_place: &Place,
    rb: &Value,
) -> Result<(Media, String, Option<Place>), OpenApiError> {
    let Some(Value::Object(content)) = rb.get("content") else {
        return Err(OpenApiError::document(
            &doc.describe(rb_place),
            "a request body without `content`",
        ));
    };
    let pick = |pred: &dyn Fn(&str) -> bool| {
        content.keys().find(|m| {
            pred(
                &m.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase(),
            )
        })
    };
    let chosen = pick(&|m| m == "application/json" || m.ends_with("+json"))
        .map(|m| (Media::Json, m))
        .or_else(|| pick(&|m| m == "application/x-www-form-urlencoded").map(|m| (Media::Form, m)))
        .or_else(|| {
            pick(&|m| m.starts_with("text/") || m == "application/octet-stream" || m == "*/*")
                .map(|m| (Media::Text, m))
        });
    let Some((media, name)) = chosen else {
        let offered: Vec<&str> = content.keys().map(String::as_str).collect();
        return Err(OpenApiError::document(
            &doc.describe(&rb_place.join("content")),
            format!(
                "the request body is offered only as {}, which the loader does not write (it writes JSON, URL-encoded forms and text); curate this operation with `openapi gen`",
                offered.join(", ")
            ),
        ));
    };
    let schema = content[name]
        .get("schema")
        .map(|_| rb_place.join("content").join(name).join("schema"));
    let content_type = if name == "*/*" {
        "application/octet-stream".to_owned()
    } else {
        name.clone()
    };
    Ok((media, content_type, schema))
}

/// A parameter object as written, and where.
type RawParam = (Place, Map<String, Value>);

/// Swagger 2.0's body and formData parameters, path item's then operation's.
fn v2_body_params(
    doc: &mut Document,
    item_place: &Place,
    item: &Map<String, Value>,
    place: &Place,
    op: &Value,
) -> Result<Vec<RawParam>, OpenApiError> {
    let mut out = Vec::new();
    let lists = [
        (item_place.join("parameters"), item.get("parameters")),
        (place.join("parameters"), op.get("parameters")),
    ];
    for (list_place, list) in lists {
        let Some(Value::Array(list)) = list else {
            continue;
        };
        for i in 0..list.len() {
            let p_place = doc.follow(&list_place.join(&i.to_string()))?;
            if let Some(Value::Object(p)) = doc.at(&p_place).cloned()
                && matches!(
                    p.get("in").and_then(Value::as_str),
                    Some("body" | "formData")
                )
            {
                out.push((p_place, p));
            }
        }
    }
    Ok(out)
}

/// A Swagger 2.0 non-body parameter's schema: its own schema keywords.
fn v2_param_schema(p: &Map<String, Value>) -> Value {
    const KEYS: [&str; 18] = [
        "type",
        "format",
        "items",
        "enum",
        "default",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "multipleOf",
        "x-nullable",
        "example",
    ];
    let mut m = Map::new();
    // A non-body parameter without a `type` is a string on the wire (2.0 requires the type;
    // generated documents leave it out).
    if !p.contains_key("type") {
        m.insert("type".to_owned(), Value::String("string".to_owned()));
    }
    for k in KEYS {
        if let Some(v) = p.get(k) {
            m.insert(k.to_owned(), v.clone());
        }
    }
    Value::Object(m)
}

fn with_description(schema: Value, description: Option<&Value>) -> Value {
    let Some(Value::String(d)) = description else {
        return schema;
    };
    let d = cut(d.trim(), MAX_DESCRIPTION_CHARS);
    match schema {
        Value::Object(mut m) => {
            m.entry("description").or_insert(Value::String(d));
            Value::Object(m)
        }
        other => json!({"allOf": [other], "description": d}),
    }
}

fn describe(op: &Value, method: &str, path: &str) -> String {
    let text = |k: &str| {
        op.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut d = match (text("summary"), text("description")) {
        (Some(s), Some(d)) if d.starts_with(s) => d.to_owned(),
        (Some(s), Some(d)) => format!("{s}\n\n{d}"),
        (Some(s), None) => s.to_owned(),
        (None, Some(d)) => d.to_owned(),
        (None, None) => String::new(),
    };
    if d.is_empty() {
        d = format!("{method} {path}");
    }
    cut(&d, MAX_DESCRIPTION_CHARS)
}

/// At most `max` characters of `s`, ending in `…` when cut.
pub(crate) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// `snake_case` of a name: `listPets` → `list_pets`, `repos/list-for-org` → `repos_list_for_org`.
pub(crate) fn snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_lowercase());
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    out.trim_matches('_').to_owned()
}

/// The action's name: `{prefix}_{tag}.{operation}`; the operation's part from its
/// `operationId` (the tag's own words in front of it left out: `repos/list-for-org` under
/// `repos` is `list_for_org`), else from the method and path. Whole, as a flat tool name
/// (`.` as `_`), it fits 64 characters: a longer one is cut and ends in a hash of the whole.
pub(crate) fn action_name(
    prefix: Option<&str>,
    tag: Option<&str>,
    id: Option<&str>,
    method: &str,
    path: &str,
) -> String {
    let tag_part = tag.map(snake).filter(|t| !t.is_empty());
    let group = match (prefix.map(snake).filter(|p| !p.is_empty()), &tag_part) {
        (Some(p), Some(t)) => Some(format!("{p}_{t}")),
        (Some(p), None) => Some(p),
        (None, Some(t)) => Some(t.clone()),
        (None, None) => None,
    };
    let mut op = match id {
        Some(id) => snake(id),
        None => snake(&format!("{method} {}", path.replace(['{', '}'], ""))),
    };
    if let Some(t) = &tag_part
        && let Some(rest) = op
            .strip_prefix(t.as_str())
            .and_then(|r| r.strip_prefix('_'))
        && !rest.is_empty()
    {
        op = rest.to_owned();
    }
    if op.is_empty() {
        op = method.to_ascii_lowercase();
    }
    let whole = match &group {
        Some(g) => format!("{g}.{op}"),
        None => op.clone(),
    };
    if whole.len() <= 64 {
        return whole;
    }
    let hash = {
        use sha2::Digest as _;
        let d = sha2::Sha256::digest(whole.as_bytes());
        format!("{:02x}{:02x}{:02x}", d[0], d[1], d[2])
    };
    let room = 64usize.saturating_sub(group.as_ref().map_or(0, |g| g.len() + 1) + hash.len() + 1);
    let short = format!("{}_{hash}", &op[..room.min(op.len())].trim_end_matches('_'));
    match group {
        Some(g) if g.len() + 1 + short.len() <= 64 => format!("{g}.{short}"),
        Some(g) => format!("{}_{hash}", &g[..(64 - hash.len() - 1).min(g.len())]),
        None => short,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_operation_ids_and_tags() {
        assert_eq!(
            action_name(
                Some("gh"),
                Some("repos"),
                Some("repos/list-for-org"),
                "GET",
                "/orgs/{org}/repos"
            ),
            "gh_repos.list_for_org"
        );
        assert_eq!(
            action_name(
                None,
                Some("pet"),
                Some("findPetsByStatus"),
                "GET",
                "/pet/findByStatus"
            ),
            "pet.find_pets_by_status"
        );
        assert_eq!(
            action_name(None, None, None, "GET", "/pets/{petId}"),
            "get_pets_pet_id"
        );
        let long = action_name(
            Some("github"),
            Some("code-scanning"),
            Some(&"x".repeat(90)),
            "GET",
            "/",
        );
        assert!(long.len() <= 64, "{long}");
        assert!(long.starts_with("github_code_scanning.xxx"), "{long}");
    }

    #[test]
    fn names_are_unique_as_flat_tool_names_too() {
        let mut names = HashSet::new();
        assert_eq!(unique("a_b.c".into(), &mut names), "a_b.c");
        assert_eq!(unique("a.b_c".into(), &mut names), "a.b_c_2");
        let long = format!("g.{}", "x".repeat(62));
        assert_eq!(unique(long.clone(), &mut names), long);
        let second = unique(long.clone(), &mut names);
        assert_eq!(second.len(), 64);
        assert!(second.ends_with("x_2"), "{second}");
    }
}
