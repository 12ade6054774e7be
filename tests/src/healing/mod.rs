//! The healing benchmark (issue 31): wrong calls generated from each tool's input schema are
//! sent over a real MCP connection (stateless streamable HTTP on loopback), repaired by a
//! reader that sees only the call and the answer's text ([`reader`]), and sent again, twice at
//! most. The `healing` bin prints the table; `tests/healing.rs` holds the rates to a floor.
//!
//! "Healed" means the repaired call passed validation and routing: its answer is not a
//! `<validation_error>`, nor a `<tool_error>` coded `UNKNOWN_ACTION`, `MISSING_DISCRIMINATOR`,
//! `VALIDATION_ERROR` or `MISSING_REQUIRED_FIELD` (nor, from a server without envelopes, any
//! `isError` answer). A domain error after repair (`NOT_FOUND`, `CONFLICT`, `UNAUTHORIZED`, a
//! handler's `INTERNAL_ERROR`) counts as healed: the arguments were right.

pub mod cases;
pub mod pattern;
pub mod reader;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use fusion_runtime::Server;
use fusion_runtime::client::{Envelope, parse_envelope};
use fusion_runtime::mcp::{HttpOptions, spawn_http};
use serde_json::{Value, json};

pub use cases::{Case, Kind, Tool};
pub use reader::{Call, repair};

use crate::raw_http;

/// How many rounds of repair a case gets.
pub const ROUNDS: usize = 2;

/// Where the calls go.
#[derive(Clone)]
pub enum Endpoint {
    /// A fresh Fusion server per case (and per baseline), in this process, so that no case
    /// sees another's side effects (a charge, a rate limit spent).
    Fresh(Arc<dyn Fn() -> Server + Send + Sync>),
    /// A server already listening (a stateless streamable HTTP endpoint at `/mcp`).
    At(SocketAddr),
}

/// One answer to a `tools/call`.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The text blocks (or a JSON-RPC error's message), joined.
    pub text: String,
    /// Whether the call was refused for its arguments or its name.
    pub refused: bool,
}

/// What became of one case.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The case.
    pub case: Case,
    /// The answer to the wrong call.
    pub first: Answer,
    /// The calls the reader made, in order.
    pub repairs: Vec<Call>,
    /// The round whose call passed (1 or 2), `None` when none did (or the wrong call was not
    /// refused at all).
    pub healed_in: Option<usize>,
    /// The last answer seen.
    pub last: Answer,
    /// A repaired call named a tool that `tools/list` does not show (a name the envelope gave).
    pub unlisted_name: bool,
}

/// A tool whose valid baseline could not be built or was refused.
#[derive(Clone, Debug)]
pub struct NoBaseline {
    /// The tool.
    pub tool: String,
    /// Why.
    pub why: String,
}

/// Everything one run against one server found.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// One per case.
    pub outcomes: Vec<Outcome>,
    /// Tools left out, and why.
    pub no_baseline: Vec<NoBaseline>,
}

/// Whether an answer's text refuses the call for its arguments or name.
pub fn refuses(is_error: bool, text: &str) -> bool {
    if !is_error {
        return false;
    }
    match parse_envelope(text) {
        Ok(Envelope::Validation(_)) => true,
        Ok(Envelope::Tool(e)) => matches!(
            e.code().as_str(),
            "UNKNOWN_ACTION"
                | "MISSING_DISCRIMINATOR"
                | "VALIDATION_ERROR"
                | "MISSING_REQUIRED_FIELD"
        ),
        Err(_) => true,
    }
}

/// A JSON-RPC request to `addr`'s `/mcp`, stateless.
async fn rpc(addr: SocketAddr, method: &str, params: Value) -> anyhow::Result<Value> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let response = raw_http::request(
        addr,
        "POST",
        "/mcp",
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-06-18"),
        ],
        &body,
    )
    .await?;
    Ok(response.message())
}

/// Sends one call.
async fn send(addr: SocketAddr, call: &Call) -> Answer {
    let params = json!({"name": call.tool, "arguments": call.args});
    let message = match rpc(addr, "tools/call", params).await {
        Ok(m) => m,
        Err(e) => {
            return Answer {
                text: format!("(transport: {e})"),
                refused: true,
            };
        }
    };
    if let Some(err) = message.get("error") {
        return Answer {
            text: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(JSON-RPC error)")
                .to_owned(),
            refused: true,
        };
    }
    let result = message.get("result").cloned().unwrap_or(Value::Null);
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    Answer {
        refused: refuses(is_error, &text),
        text,
    }
}

/// A live address for `endpoint`, and the server to shut down after (for `Fresh`).
async fn open(
    endpoint: &Endpoint,
) -> anyhow::Result<(SocketAddr, Option<fusion_runtime::mcp::HttpServer>)> {
    match endpoint {
        Endpoint::At(addr) => Ok((*addr, None)),
        Endpoint::Fresh(make) => {
            let running = spawn_http(
                make(),
                SocketAddr::from(([127, 0, 0, 1], 0)),
                HttpOptions::default().stateless(true),
            )
            .await?;
            Ok((running.local_addr, Some(running)))
        }
    }
}

/// The tools `tools/list` shows.
pub async fn list_tools(endpoint: &Endpoint) -> anyhow::Result<Vec<Tool>> {
    let (addr, running) = open(endpoint).await?;
    let message = rpc(addr, "tools/list", json!({})).await?;
    if let Some(r) = running {
        r.shutdown().await?;
    }
    let tools = message["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Ok(tools
        .into_iter()
        .filter_map(|t| {
            Some(Tool {
                name: t.get("name")?.as_str()?.to_owned(),
                schema: t.get("inputSchema").cloned().unwrap_or(json!({})),
            })
        })
        .collect())
}

/// A grouped tool's discriminator and members: a property whose schema is a string enum and
/// that is required, named in the members' `allOf` `if` clauses.
fn discriminator(tool: &Tool) -> Option<(String, Vec<String>)> {
    let all_of = tool.schema.get("allOf")?.as_array()?;
    let props = tool.schema.get("properties")?.as_object()?;
    let key = all_of.iter().find_map(|entry| {
        entry
            .get("if")?
            .get("properties")?
            .as_object()?
            .keys()
            .next()
            .cloned()
    })?;
    let members = props
        .get(&key)?
        .get("enum")?
        .as_array()?
        .iter()
        .filter_map(|m| m.as_str().map(str::to_owned))
        .collect();
    Some((key, members))
}

/// A grouped tool's schema for one member: the flat properties plus the member's `then`.
fn member_schema(tool: &Tool, key: &str, member: &str) -> Value {
    let mut schema = tool.schema.clone();
    let Some(obj) = schema.as_object_mut() else {
        return schema;
    };
    let entries = obj.remove("allOf").unwrap_or(json!([]));
    let mut props = obj
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut required: Vec<Value> = vec![json!(key)];
    for entry in entries.as_array().into_iter().flatten() {
        let is_member = entry["if"]["properties"][key]["const"].as_str() == Some(member);
        if !is_member {
            continue;
        }
        if let Some(then) = entry["then"]["properties"].as_object() {
            props.retain(|k, _| then.contains_key(k));
            for (k, v) in then {
                // `true`: the flat property's schema holds.
                if v.is_object() {
                    props.insert(k.clone(), v.clone());
                }
            }
        }
        if let Some(req) = entry["then"]["required"].as_array() {
            required.extend(req.iter().cloned());
        }
    }
    // Only the member's own fields: those its `then` names, or its required ones.
    props.insert(key.to_owned(), json!({"type": "string", "enum": [member]}));
    obj.insert("properties".into(), Value::Object(props));
    obj.insert("required".into(), Value::Array(required));
    schema
}

/// Runs every case of every tool `endpoint` lists, `parallel` at a time.
pub async fn run(endpoint: Endpoint, parallel: usize) -> anyhow::Result<Run> {
    let tools = list_tools(&endpoint).await?;
    let known: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let known_refs: Vec<&str> = known.iter().map(String::as_str).collect();
    let mut run = Run::default();
    let mut all: Vec<Case> = Vec::new();
    for tool in &tools {
        let mut variants: Vec<(Tool, Option<String>, Value)> = Vec::new();
        match discriminator(tool) {
            Some((key, members)) => {
                for m in members {
                    let schema = member_schema(tool, &key, &m);
                    let member = Tool {
                        name: tool.name.clone(),
                        schema,
                    };
                    match member_baseline(&member, &key, &m) {
                        Some(valid) => variants.push((member, Some(key.clone()), valid)),
                        None => run.no_baseline.push(NoBaseline {
                            tool: format!("{} ({key} = {m})", tool.name),
                            why: "no value can be built from its schema".into(),
                        }),
                    }
                }
            }
            None => match cases::baseline(&tool.schema, &tool.schema) {
                Some(valid) => variants.push((tool.clone(), None, valid)),
                None => run.no_baseline.push(NoBaseline {
                    tool: tool.name.clone(),
                    why: "no value can be built from its schema".into(),
                }),
            },
        }
        for (variant, key, valid) in variants {
            let call = Call {
                tool: variant.name.clone(),
                args: valid.clone(),
            };
            let (addr, running) = open(&endpoint).await?;
            let answer = send(addr, &call).await;
            if let Some(r) = running {
                r.shutdown().await?;
            }
            if answer.refused {
                run.no_baseline.push(NoBaseline {
                    tool: format!("{} {}", variant.name, valid),
                    why: format!(
                        "the valid baseline was refused: {}",
                        first_line(&answer.text)
                    ),
                });
                continue;
            }
            all.extend(cases::cases(&variant, &valid, &known_refs, key.as_deref()));
        }
    }
    let listed = Arc::new(known);
    let limit = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, case) in all.into_iter().enumerate() {
        let endpoint = endpoint.clone();
        let limit = Arc::clone(&limit);
        let listed = Arc::clone(&listed);
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            (i, run_case(&endpoint, case, &listed).await)
        });
    }
    let mut done = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (i, outcome) = joined?;
        done.push((i, outcome?));
    }
    done.sort_by_key(|(i, _)| *i);
    run.outcomes = done.into_iter().map(|(_, o)| o).collect();
    Ok(run)
}

/// A grouped member's valid arguments: its own fields' baseline with the discriminator set.
fn member_baseline(member: &Tool, key: &str, name: &str) -> Option<Value> {
    let mut valid = cases::baseline(&member.schema, &member.schema)?;
    let obj = valid.as_object_mut()?;
    obj.insert(key.to_owned(), json!(name));
    Some(valid)
}

async fn run_case(endpoint: &Endpoint, case: Case, listed: &[String]) -> anyhow::Result<Outcome> {
    let (addr, running) = open(endpoint).await?;
    let first = send(addr, &case.call).await;
    let mut outcome = Outcome {
        first: first.clone(),
        last: first,
        repairs: Vec::new(),
        healed_in: None,
        unlisted_name: false,
        case,
    };
    if outcome.first.refused {
        let mut call = outcome.case.call.clone();
        for round in 1..=ROUNDS {
            let Some(next) = repair(&call, &outcome.last.text) else {
                break;
            };
            if !listed.contains(&next.tool) {
                outcome.unlisted_name = true;
            }
            let answer = send(addr, &next).await;
            outcome.repairs.push(next.clone());
            outcome.last = answer;
            call = next;
            if !outcome.last.refused {
                outcome.healed_in = Some(round);
                break;
            }
        }
    }
    if let Some(r) = running {
        r.shutdown().await?;
    }
    Ok(outcome)
}

/// The first line of a text, cut to 160 characters.
pub fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| l.contains("<field") || l.contains("<message>"))
        .or_else(|| text.lines().next())
        .unwrap_or("")
        .trim()
        .chars()
        .take(160)
        .collect()
}

/// One row of the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// Cases of the kind.
    pub cases: usize,
    /// Cases whose wrong call was not refused.
    pub not_refused: usize,
    /// Healed in one round.
    pub healed1: usize,
    /// Healed in one or two rounds.
    pub healed2: usize,
    /// Characters of the refusals' text, summed.
    pub chars: usize,
    /// Cases whose repair named a tool `tools/list` does not show.
    pub unlisted: usize,
}

impl Row {
    /// Healed in one round, in percent of the cases.
    pub fn pct1(&self) -> f64 {
        pct(self.healed1, self.cases)
    }

    /// Healed within two rounds, in percent of the cases.
    pub fn pct2(&self) -> f64 {
        pct(self.healed2, self.cases)
    }

    /// Mean characters of the first answer.
    pub fn mean_chars(&self) -> f64 {
        if self.cases == 0 {
            0.0
        } else {
            self.chars as f64 / self.cases as f64
        }
    }
}

fn pct(n: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}

/// Rows per kind (and a total under `None`).
pub fn rows<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> BTreeMap<Option<Kind>, Row> {
    let mut rows: BTreeMap<Option<Kind>, Row> = BTreeMap::new();
    for o in outcomes {
        for key in [Some(o.case.kind), None] {
            let row = rows.entry(key).or_default();
            row.cases += 1;
            row.not_refused += usize::from(!o.first.refused);
            row.healed1 += usize::from(o.healed_in == Some(1));
            row.healed2 += usize::from(o.healed_in.is_some());
            row.chars += o.first.text.chars().count();
            row.unlisted += usize::from(o.unlisted_name);
        }
    }
    rows
}

/// The table as Markdown: per kind, cases, not refused, healed in 1 and in ≤ 2 rounds, mean
/// characters of the answer and tokens estimated as characters / 4.
pub fn table(rows: &BTreeMap<Option<Kind>, Row>) -> String {
    let mut out = String::from(
        "| issue kind | cases | not refused | healed in 1 round | in ≤ 2 rounds | mean answer chars | ≈ tokens |\n|---|--:|--:|--:|--:|--:|--:|\n",
    );
    let ordered = Kind::ALL.iter().map(|k| Some(*k)).chain([None]);
    for key in ordered {
        let Some(r) = rows.get(&key) else { continue };
        let name = key.map_or("**all**", Kind::name);
        out.push_str(&format!(
            "| {name} | {} | {} | {:.1} % | {:.1} % | {:.0} | {:.0} |\n",
            r.cases,
            r.not_refused,
            r.pct1(),
            r.pct2(),
            r.mean_chars(),
            r.mean_chars() / 4.0
        ));
    }
    out
}

/// The billing example as the benchmark runs it: flat, self-healing against its lockfile.
pub fn billing() -> fusion_runtime::Server {
    examples::billing::server().unwrap_or_else(|e| panic!("billing builds: {e}"))
}

/// The billing example grouped (one `billing` tool), self-healing against its lockfile.
pub fn billing_grouped() -> fusion_runtime::Server {
    examples::billing::builder()
        .grouped()
        .self_healing(examples::billing::LOCKFILE)
        .build()
        .unwrap_or_else(|e| panic!("grouped billing builds: {e}"))
}
