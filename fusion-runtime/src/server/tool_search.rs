//! Tool search: the exposure for a server with more tools than a model's context holds
//! ([`ServerBuilder::tool_search`](super::ServerBuilder::tool_search)). `tools/list` shows
//! three tools whatever the server has — [`SEARCH_TOOL`] (the tools whose name or description
//! match words), [`DESCRIBE_TOOL`] (one tool's description and schemas) and [`CALL_TOOL`]
//! (one call, by name) — while calls keep the pipeline: `call_tool` is routed as a call of the
//! tool it names (visibility, scopes, guards, validation, the same envelopes; a misspelt name
//! gets the closest one), and the tools stay callable by their own names. A search or
//! description shows only the tools the caller could list: enabled ones and, with
//! `hide_forbidden`, those its scopes allow.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value, json};

use super::registry::Inner;
use super::routing;
use super::source::ToolSpec;
use crate::auth::Principal;
use crate::envelope::{ToolError, ToolResponse};
use crate::input::JsonObject;
use crate::validation::explain::{SchemaIndex, issues_from_errors};

/// The tool that searches the catalog.
pub const SEARCH_TOOL: &str = "search_tools";
/// The tool that describes one tool.
pub const DESCRIBE_TOOL: &str = "describe_tool";
/// The tool that calls one tool.
pub const CALL_TOOL: &str = "call_tool";

/// At most this many tools in one search's answer.
pub const MAX_SEARCH_RESULTS: usize = 50;

/// How many characters of each description a search shows.
const SEARCH_DESCRIPTION_CHARS: usize = 160;

/// The three tools, as `tools/list` shows them.
pub(super) fn listed(total: usize) -> Vec<ToolSpec> {
    let spec = |name: &str, description: String, schema: Value, read_only: bool| ToolSpec {
        name: name.to_owned(),
        title: None,
        description,
        input_schema: Arc::new(match schema {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        }),
        output_schema: None,
        hints: Some(crate::action::Hints {
            read_only: Some(read_only),
            destructive: Some(!read_only),
            idempotent: Some(read_only),
            open_world: Some(!read_only),
        }),
    };
    vec![
        spec(
            SEARCH_TOOL,
            format!(
                "Search this server's {total} tools by words in their names and descriptions. Returns the best matches' names and summaries; describe one with {DESCRIBE_TOOL}, then call it with {CALL_TOOL}."
            ),
            schemas().0.clone(),
            true,
        ),
        spec(
            DESCRIBE_TOOL,
            format!(
                "Describe one tool found with {SEARCH_TOOL}: its description, the JSON Schema of its arguments and of its result."
            ),
            schemas().1.clone(),
            true,
        ),
        spec(
            CALL_TOOL,
            format!(
                "Call one tool by its name (as {SEARCH_TOOL} shows it) with its arguments (as {DESCRIBE_TOOL} shows their schema). Answers what the tool answers."
            ),
            schemas().2.clone(),
            false,
        ),
    ]
}

/// The three input schemas.
fn schemas() -> &'static (Value, Value, Value) {
    static SCHEMAS: OnceLock<(Value, Value, Value)> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let name = json!({"type": "string", "minLength": 1, "maxLength": 128, "description": "The tool's name, as search_tools shows it."});
        (
            json!({"type": "object", "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Words to look for, e.g. `list pull requests`."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "description": "How many tools to return (default 10)."}},
                "required": ["query"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"name": name}, "required": ["name"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"name": name,
                "arguments": {"type": "object", "description": "The tool's arguments (default {})."}},
                "required": ["name"], "additionalProperties": false}),
        )
    })
}

/// What a call of a tool-search tool comes to.
pub(super) enum Meta {
    /// Answered here (a search, a description, a refusal).
    Answer(ToolResponse),
    /// A call of `call_tool`: run the call of this tool with these arguments.
    Call(String, Option<JsonObject>),
}

/// The answer to a call of `tool`, when it is one of the three; `None` for any other tool.
pub(super) async fn answer(
    inner: &Inner,
    tool: &str,
    arguments: Option<&JsonObject>,
    principal: Option<&Principal>,
) -> Option<Meta> {
    let index = match tool {
        SEARCH_TOOL => 0,
        DESCRIBE_TOOL => 1,
        CALL_TOOL => 2,
        _ => return None,
    };
    let args = Value::Object(arguments.cloned().unwrap_or_default());
    if let Some(refusal) = refuse(tool, index, &args) {
        return Some(Meta::Answer(refusal));
    }
    let text = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    Some(match index {
        0 => {
            let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(10) as usize;
            let tools = shown(inner, principal).await;
            Meta::Answer(search(&tools, &text("query"), limit))
        }
        1 => {
            let name = text("name");
            let tools = shown(inner, principal).await;
            match tools.iter().find(|t| t.name == name) {
                Some(t) => Meta::Answer(ToolResponse::text(describe(t).to_string())),
                None => {
                    let names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
                    Meta::Answer(ToolResponse::error(routing::unknown_tool(&name, &names)))
                }
            }
        }
        _ => {
            let inner_args = match args.get("arguments") {
                Some(Value::Object(m)) => Some(m.clone()),
                _ => None,
            };
            Meta::Call(text("name"), inner_args)
        }
    })
}

/// A `<validation_error>` for arguments the tool's schema refuses.
fn refuse(tool: &str, index: usize, args: &Value) -> Option<ToolResponse> {
    static CHECKERS: OnceLock<Vec<Option<(jsonschema::Validator, SchemaIndex)>>> = OnceLock::new();
    let checkers = CHECKERS.get_or_init(|| {
        let s = schemas();
        [&s.0, &s.1, &s.2]
            .into_iter()
            .map(|schema| {
                let v = jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(schema)
                    .ok()?;
                Some((v, SchemaIndex::new(schema)))
            })
            .collect()
    });
    let (validator, schema_index) = checkers.get(index)?.as_ref()?;
    if validator.is_valid(args) {
        return None;
    }
    let report = issues_from_errors(schema_index, validator.iter_errors(args));
    Some(super::respond::validation_response(tool, &report, None))
}

/// The tools the caller could list, with their full specs.
async fn shown(inner: &Inner, principal: Option<&Principal>) -> Vec<ToolSpec> {
    let mut all = inner.searchable.clone();
    for source in inner
        .sources
        .iter()
        .filter(|s| s.handoff_domain().is_none())
    {
        all.extend(source.tools().await);
    }
    let v = &inner.visibility;
    all.retain(|t| v.all_enabled() || v.is_enabled(super::Item::Tool, &t.name));
    if inner.listing.hide_forbidden {
        all.retain(|t| inner.may_call(&t.name, principal));
    }
    all
}

/// The tools whose name and description hold the query's words, best first: a word in the
/// name counts three, in the description one; ties by name.
fn search(tools: &[ToolSpec], query: &str, limit: usize) -> ToolResponse {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &ToolSpec)> = tools
        .iter()
        .filter_map(|t| {
            let name = t.name.to_lowercase();
            let description = t.description.to_lowercase();
            let score: usize = words
                .iter()
                .map(|w| {
                    3 * usize::from(name.contains(w.as_str()))
                        + usize::from(description.contains(w.as_str()))
                })
                .sum();
            (score > 0).then_some((score, t))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    let found: Vec<Value> = scored
        .iter()
        .take(limit.min(MAX_SEARCH_RESULTS))
        .map(|(_, t)| {
            let summary = t.description.lines().next().unwrap_or("");
            let summary: String = match summary.char_indices().nth(SEARCH_DESCRIPTION_CHARS) {
                Some((i, _)) => format!("{}…", &summary[..i]),
                None => summary.to_owned(),
            };
            json!({"name": t.name, "summary": summary})
        })
        .collect();
    let mut out = Map::new();
    out.insert("matches".into(), scored.len().into());
    out.insert("tools".into(), Value::Array(found));
    if scored.is_empty() {
        out.insert(
            "hint".into(),
            format!(
                "No tool matches; try other words (there are {} tools)",
                tools.len()
            )
            .into(),
        );
    }
    ToolResponse::text(Value::Object(out).to_string())
}

fn describe(t: &ToolSpec) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), t.name.clone().into());
    m.insert("description".into(), t.description.clone().into());
    m.insert(
        "inputSchema".into(),
        Value::Object(t.input_schema.as_ref().clone()),
    );
    if let Some(o) = &t.output_schema {
        m.insert("outputSchema".into(), Value::Object(o.as_ref().clone()));
    }
    if let Some(h) = &t.hints {
        m.insert("annotations".into(), h.to_json());
    }
    Value::Object(m)
}

/// The refusal for a call of `call_tool` naming one of the three.
pub(super) fn no_nesting(name: &str) -> ToolError {
    ToolError::new(
        crate::envelope::codes::UNKNOWN_ACTION,
        format!("{CALL_TOOL} calls the server's tools, not {name}"),
    )
    .recovery(format!(
        "Call {name} directly, or give {CALL_TOOL} the name of a tool {SEARCH_TOOL} found"
    ))
    .detail("requested", name)
}
