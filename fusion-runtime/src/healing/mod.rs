//! The healing benchmark, for your own server (feature `healing`, on with `testing` and
//! `cli`): can a model repair a broken call from your errors alone?
//!
//! From each tool's input schema (as `tools/list` shows it) a valid call is built, then wrong
//! calls of every issue kind the schema allows ([`Kind`]: a wrong type, a missing or misspelt
//! key, an enum value or tool name one edit away, a number out of range, a string off its
//! pattern or format, several at once, …). Each is sent; the answer's text goes to a reader
//! that knows nothing else — no schema, no tool list — and writes the call it would send next
//! ([`repair`]); that call is sent, twice at most. The [`Report`] says, per kind and per tool,
//! how many healed in one round.
//!
//! "Healed" means the repaired call passed validation and routing: its answer is not a
//! `<validation_error>`, nor a `<tool_error>` coded `UNKNOWN_ACTION`, `MISSING_DISCRIMINATOR`,
//! `VALIDATION_ERROR` or `MISSING_REQUIRED_FIELD`. A domain error after repair (`NOT_FOUND`,
//! `CONFLICT`, a handler's `INTERNAL_ERROR`) counts as healed: the arguments were right.
//!
//! [`run`] calls a server in process, through the whole pipeline; each case as a principal of
//! its own (so per-client rate limits see one call each), the tools side by side and each
//! tool's cases one after another (so `max_active` sees one at a time). The test kit runs it
//! as `TestServer::healing` and the CLI as `heal`. [`run_with`] runs the same cases with any
//! way of sending a call; `remote::run_remote` (features `client-stdio` or `client-http`)
//! sends them to any MCP server over a `FusionClient` — what the `fusion-heal` command does.
//!
//! Nested inputs get their own kinds: an object sent as another type or as `null`, too few
//! items of an array of objects, an item of another type, and several problems at different
//! depths; the fields of nested objects (and of an array's first item) are broken as
//! top-level fields are, three levels deep.
//!
//! ```
//! use fusion_runtime::{tool_action, Server, ToolError, ToolInput};
//!
//! /// One invoice.
//! #[derive(serde::Deserialize, ToolInput)]
//! struct Get {
//!     /// The invoice ID, e.g. `inv_2026_0001`.
//!     #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
//!     id: String,
//! }
//!
//! /// Gets one invoice's customer.
//! #[tool_action(name = "billing.get")]
//! async fn get(input: Get) -> Result<String, ToolError> {
//!     Ok(format!("customer of {}", input.id))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let server = Server::builder().action::<GetAction>().build().unwrap_or_else(|e| panic!("{e}"));
//! let report = fusion_runtime::healing::run(&server).await;
//! report.assert_heals_in_one_round();
//! println!("{}", report.table());
//! # }
//! ```

pub mod cases;
pub mod pattern;
pub mod reader;
#[cfg(any(feature = "client-stdio", feature = "client-http"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "client-stdio", feature = "client-http")))
)]
pub mod remote;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

pub use cases::{Case, Kind, Tool};
pub use reader::{Call, repair};

use crate::auth::Principal;
use crate::client::{Envelope, parse_envelope};
use crate::context::RequestScope;
use crate::envelope::{Content, ToolResponse};
use crate::server::Server;

/// How many rounds of repair a case gets.
pub const ROUNDS: usize = 2;

/// One answer to a `tools/call`.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The text blocks (or a JSON-RPC error's message), joined.
    pub text: String,
    /// Whether the call was refused for its arguments or its name.
    pub refused: bool,
}

impl Answer {
    /// The answer a server gave: its text blocks, and whether they refuse the call.
    pub fn of(response: &ToolResponse) -> Answer {
        let text = response
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        Answer {
            refused: refuses(response.is_error, &text),
            text,
        }
    }
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
pub struct Report {
    /// One per case.
    pub outcomes: Vec<Outcome>,
    /// Tools left out, and why.
    pub no_baseline: Vec<NoBaseline>,
    /// Cases past [`MAX_CASES`], not sent.
    pub cases_left_out: usize,
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

/// One way to call a tool validly: the tool (a grouped tool's member as a tool of its own),
/// its discriminator's key for a grouped member, and the valid arguments.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The tool, or the grouped tool narrowed to one member.
    pub tool: Tool,
    /// A grouped member's discriminator key.
    pub key: Option<String>,
    /// Arguments its schema takes.
    pub valid: Value,
}

/// The valid calls of `tools`, and the tools none could be built for.
pub fn variants(tools: &[Tool]) -> (Vec<Variant>, Vec<NoBaseline>) {
    let (mut out, mut none) = (Vec::new(), Vec::new());
    for tool in tools {
        match discriminator(tool) {
            Some((key, members)) => {
                for m in members {
                    let member = Tool {
                        name: tool.name.clone(),
                        schema: member_schema(tool, &key, &m),
                    };
                    match member_baseline(&member, &key, &m) {
                        Some(valid) => out.push(Variant {
                            tool: member,
                            key: Some(key.clone()),
                            valid,
                        }),
                        None => none.push(NoBaseline {
                            tool: format!("{} ({key} = {m})", tool.name),
                            why: "no value can be built from its schema".into(),
                        }),
                    }
                }
            }
            None => match cases::baseline(&tool.schema, &tool.schema) {
                Some(valid) => out.push(Variant {
                    tool: tool.clone(),
                    key: None,
                    valid,
                }),
                None => none.push(NoBaseline {
                    tool: tool.name.clone(),
                    why: "no value can be built from its schema".into(),
                }),
            },
        }
    }
    (out, none)
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

/// A grouped member's valid arguments: its own fields' baseline with the discriminator set.
fn member_baseline(member: &Tool, key: &str, name: &str) -> Option<Value> {
    let mut valid = cases::baseline(&member.schema, &member.schema)?;
    let obj = valid.as_object_mut()?;
    obj.insert(key.to_owned(), json!(name));
    Some(valid)
}

/// Sends `case`'s wrong call with `send`, then the reader's repairs, [`ROUNDS`] at most.
/// `listed` are the names `tools/list` shows.
pub async fn heal<F, Fut>(case: Case, listed: &[String], mut send: F) -> Outcome
where
    F: FnMut(Call) -> Fut,
    Fut: Future<Output = Answer>,
{
    let first = send(case.call.clone()).await;
    let mut outcome = Outcome {
        first: first.clone(),
        last: first,
        repairs: Vec::new(),
        healed_in: None,
        unlisted_name: false,
        case,
    };
    if !outcome.first.refused {
        return outcome;
    }
    let mut call = outcome.case.call.clone();
    for round in 1..=ROUNDS {
        let Some(next) = repair(&call, &outcome.last.text) else {
            break;
        };
        outcome.unlisted_name |= !listed.contains(&next.tool);
        outcome.last = send(next.clone()).await;
        outcome.repairs.push(next.clone());
        call = next;
        if !outcome.last.refused {
            outcome.healed_in = Some(round);
            break;
        }
    }
    outcome
}

/// Runs every case of every tool `server` lists, in process: see the module's doc.
pub async fn run(server: &Server) -> Report {
    let tools: Vec<Tool> = server
        .listed_tool_specs()
        .await
        .into_iter()
        .map(|t| Tool {
            name: t.name,
            schema: Value::Object((*t.input_schema).clone()),
        })
        .collect();
    // One principal per call: per-client limits count each once.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let send = |call: Call| {
        let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let scope = RequestScope::detached().with_principal(Principal::new(format!("healing-{n}")));
        async move {
            let response = match call.args {
                Value::Object(map) => server.call(&call.tool, Some(map), scope).await,
                Value::Null => server.call(&call.tool, None, scope).await,
                // Answered before anything counts a call: no principal needed.
                other => server.call_json(&call.tool, other).await,
            };
            Answer::of(&response)
        }
    };
    run_with(&tools, send).await
}

/// At most this many broken calls are sent in one run; the cases past it are counted
/// ([`Report::cases_left_out`]), not sent. A `tools/list` drives the count: a server that
/// lists thousands of tools, or schemas of thousands of keys, is checked up to here.
pub const MAX_CASES: usize = 20_000;

/// Runs every case of `tools` (as `tools/list` shows them), each call sent with `send`
/// (any server, any transport: [`run`] sends in process, the `fusion-heal` command over MCP):
/// per tool, its valid baseline, then its cases one after another; the tools side by side.
/// At most [`MAX_CASES`] cases, in the tools' order.
pub async fn run_with<F, Fut>(tools: &[Tool], send: F) -> Report
where
    F: Fn(Call) -> Fut,
    Fut: Future<Output = Answer>,
{
    run_among(tools, &|_| true, send).await
}

/// [`run_with`] for the tools `only` picks by name; the others still count as names that
/// exist (a misspelt tool name is none of them, and a repair may call them).
pub async fn run_among<F, Fut>(
    tools: &[Tool],
    only: &(dyn Fn(&str) -> bool + Sync),
    send: F,
) -> Report
where
    F: Fn(Call) -> Fut,
    Fut: Future<Output = Answer>,
{
    let listed: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let known: Vec<&str> = listed.iter().map(String::as_str).collect();
    let picked: Vec<Tool> = tools.iter().filter(|t| only(&t.name)).cloned().collect();
    let (variants, mut no_baseline) = variants(&picked);
    let mut budget = MAX_CASES;
    let mut cases_left_out = 0;
    let planned: Vec<(Variant, Vec<Case>)> = variants
        .into_iter()
        .map(|variant| {
            let mut all = cases::cases(
                &variant.tool,
                &variant.valid,
                &known,
                variant.key.as_deref(),
            );
            let kept = all.len().min(budget);
            cases_left_out += all.len() - kept;
            budget -= kept;
            all.truncate(kept);
            (variant, all)
        })
        .collect();
    let send = &send;
    // Per tool, its baseline then its cases in order; the tools side by side.
    let per_tool = planned.into_iter().map(|(variant, cases)| {
        let listed = &listed;
        async move {
            let baseline = send(Call {
                tool: variant.tool.name.clone(),
                args: variant.valid.clone(),
            })
            .await;
            if baseline.refused {
                let why = format!(
                    "the valid baseline was refused: {}",
                    first_line(&baseline.text)
                );
                return Err(NoBaseline {
                    tool: format!("{} {}", variant.tool.name, variant.valid),
                    why,
                });
            }
            let mut outcomes = Vec::new();
            for case in cases {
                outcomes.push(heal(case, listed, send).await);
            }
            Ok(outcomes)
        }
    });
    let mut report = Report {
        cases_left_out,
        ..Report::default()
    };
    for result in futures::future::join_all(per_tool).await {
        match result {
            Ok(outcomes) => report.outcomes.extend(outcomes),
            Err(none) => no_baseline.push(none),
        }
    }
    report.no_baseline = no_baseline;
    report
}

/// The first line of a text that says what is wrong, cut to 160 characters.
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

/// One row of a table.
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

    fn add(&mut self, o: &Outcome) {
        self.cases += 1;
        self.not_refused += usize::from(!o.first.refused);
        self.healed1 += usize::from(o.healed_in == Some(1));
        self.healed2 += usize::from(o.healed_in.is_some());
        self.chars += o.first.text.chars().count();
        self.unlisted += usize::from(o.unlisted_name);
    }
}

/// A share in percent, 0 to 100 (`90`, `97.5`, `90%`): a `--min-healed` flag's parser.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if (0.0..=100.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is not between 0 and 100"))
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
            rows.entry(key).or_default().add(o);
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
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {:.1} % | {:.1} % | {:.0} | {:.0} |",
            r.cases,
            r.not_refused,
            r.pct1(),
            r.pct2(),
            r.mean_chars(),
            r.mean_chars() / 4.0
        );
    }
    out
}

impl Report {
    /// Rows per kind (and a total under `None`).
    pub fn rows(&self) -> BTreeMap<Option<Kind>, Row> {
        rows(&self.outcomes)
    }

    /// Rows per tool.
    pub fn per_tool(&self) -> BTreeMap<String, Row> {
        let mut rows: BTreeMap<String, Row> = BTreeMap::new();
        for o in &self.outcomes {
            rows.entry(o.case.tool.clone()).or_default().add(o);
        }
        rows
    }

    /// The per-kind table, then the per-tool one, as Markdown; then what did not heal in one
    /// round, a line each.
    pub fn table(&self) -> String {
        let mut out = table(&self.rows());
        out.push_str("\n| tool | cases | not refused | healed in 1 round | in ≤ 2 rounds |\n|---|--:|--:|--:|--:|\n");
        for (tool, r) in self.per_tool() {
            let _ = writeln!(
                out,
                "| {tool} | {} | {} | {:.1} % | {:.1} % |",
                r.cases,
                r.not_refused,
                r.pct1(),
                r.pct2()
            );
        }
        let failed = self.not_healed();
        if !failed.is_empty() {
            out.push_str("\nnot healed in one round:\n");
            out.push_str(&failed.join("\n"));
            out.push('\n');
        }
        for none in &self.no_baseline {
            let _ = writeln!(out, "left out: {}: {}", none.tool, none.why);
        }
        if self.cases_left_out > 0 {
            let _ = writeln!(
                out,
                "left out: {} cases past the bound of {MAX_CASES}",
                self.cases_left_out
            );
        }
        out
    }

    /// How many cases healed in one round.
    pub fn healed_in_one_round(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.healed_in == Some(1))
            .count()
    }

    /// The share of cases healed in one round, in percent (0 when there is none).
    pub fn pct_healed_in_one_round(&self) -> f64 {
        pct(self.healed_in_one_round(), self.outcomes.len())
    }

    /// Whether at least `min_healed` percent of the cases healed in one round, with every
    /// case sent (none left out past the bound) and at least one case: a CI gate's verdict.
    pub fn meets(&self, min_healed: f64) -> bool {
        !self.outcomes.is_empty()
            && self.pct_healed_in_one_round() >= min_healed
            && self.cases_left_out == 0
    }

    /// The gate's line: `40 of 42 broken calls healed in one round (95.2 %); threshold 90 %:
    /// met`.
    pub fn verdict(&self, min_healed: f64) -> String {
        format!(
            "{} of {} broken calls healed in one round ({:.1} %); threshold {min_healed} %: {}",
            self.healed_in_one_round(),
            self.outcomes.len(),
            self.pct_healed_in_one_round(),
            if self.meets(min_healed) {
                "met"
            } else {
                "not met"
            }
        )
    }

    /// A line per case that did not heal in one round (or was not refused at all): its kind,
    /// its tool and change, and the answer's line that says what is wrong.
    pub fn not_healed(&self) -> Vec<String> {
        self.outcomes
            .iter()
            .filter(|o| o.healed_in != Some(1))
            .map(|o| {
                let why = match o.first.refused {
                    false => "the wrong call was not refused".to_owned(),
                    true => first_line(&o.last.text),
                };
                format!(
                    "[{}] {} {}: {why}",
                    o.case.kind.name(),
                    o.case.tool,
                    o.case.what
                )
            })
            .collect()
    }

    /// Whether every case was refused and healed in one round, every tool had a valid
    /// baseline, no case was left out, and there was a case at all.
    pub fn heals_in_one_round(&self) -> bool {
        self.not_healed().is_empty()
            && self.no_baseline.is_empty()
            && self.cases_left_out == 0
            && !self.outcomes.is_empty()
    }

    /// Panics, listing them, unless [`heals_in_one_round`](Self::heals_in_one_round): the
    /// assertion for your CI.
    pub fn assert_heals_in_one_round(&self) {
        let failed = self.not_healed();
        assert!(
            self.heals_in_one_round(),
            "{} of {} broken calls did not heal in one round{}:\n{}\n{}",
            failed.len(),
            self.outcomes.len(),
            if self.no_baseline.is_empty() {
                String::new()
            } else {
                format!(", {} tools left out", self.no_baseline.len())
            },
            failed.join("\n"),
            self.no_baseline
                .iter()
                .map(|n| format!("left out: {}: {}", n.tool, n.why))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::{Answer, Call, MAX_CASES, Tool, run_with};

    /// A `tools/list` drives how many broken calls a run sends: past [`MAX_CASES`] they are
    /// counted, not sent, and the run does not pass.
    #[tokio::test(flavor = "current_thread")]
    async fn a_run_sends_at_most_max_cases() {
        let mut props = Map::new();
        for i in 0..12 {
            props.insert(format!("field_{i:02}"), json!({"type": "string"}));
        }
        let keys: Vec<String> = props.keys().cloned().collect();
        let schema = json!({"type": "object", "properties": props, "required": keys, "additionalProperties": false});
        let tools: Vec<Tool> = (0..700)
            .map(|i| Tool {
                name: format!("tool_{i:03}"),
                schema: schema.clone(),
            })
            .collect();
        let sent = std::cell::Cell::new(0usize);
        // Only the baseline (every field `sample`) passes; nothing the answer says heals.
        let send = |call: Call| {
            sent.set(sent.get() + 1);
            let valid = call
                .args
                .as_object()
                .is_some_and(|o| o.len() == 12 && o.values().all(|v| v == "sample"));
            async move {
                Answer {
                    text: "no".into(),
                    refused: !valid,
                }
            }
        };
        let report = run_with(&tools, send).await;
        assert_eq!(report.outcomes.len(), MAX_CASES);
        assert!(report.cases_left_out > 0);
        assert!(report.no_baseline.is_empty());
        // The baselines, then each case once (the reader found nothing to repair).
        assert_eq!(sent.get(), tools.len() + MAX_CASES);
        assert!(!report.heals_in_one_round());
        assert!(report.table().contains(&format!(
            "left out: {} cases past the bound of {MAX_CASES}",
            report.cases_left_out
        )));
    }
}
