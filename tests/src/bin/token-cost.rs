//! What the model reads, in bytes and in tokens (`o200k_base`, through `tiktoken-rs`): the
//! billing example's `tools/list`, flat and grouped, each answer of the demo's calls, and what
//! a few reductions of `tools/list` would save. Built only with the `tokens` feature, so the
//! tokenizer is no part of the usual builds:
//!
//! ```sh
//! cargo run --release -p fusion-tests --features tokens --bin token-cost
//! ```
//!
//! It prints Markdown tables (BENCHMARKS.md carries them). The applied reduction is measured
//! against the schemas the actions declare; the further ones on copies of the JSON.

use std::collections::HashMap;
use std::process::ExitCode;

use serde_json::Value;
use tiktoken_rs::CoreBPE;

fn tokens(bpe: &CoreBPE, text: &str) -> usize {
    bpe.encode_with_special_tokens(text).len()
}

fn compact(v: &Value) -> String {
    v.to_string()
}

fn row(bpe: &CoreBPE, what: &str, text: &str) -> (usize, usize) {
    let (b, t) = (text.len(), tokens(bpe, text));
    println!("| {what} | {b} | {t} |");
    (b, t)
}

fn tools(v: &Value) -> Vec<Value> {
    v.get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Removes every `"description": ""` (and empty `title`), at any depth.
fn drop_empty_descriptions(v: &mut Value) -> usize {
    let mut removed = 0;
    match v {
        Value::Object(map) => {
            for key in ["description", "title"] {
                if map.get(key).and_then(Value::as_str) == Some("") {
                    map.remove(key);
                    removed += 1;
                }
            }
            for child in map.values_mut() {
                removed += drop_empty_descriptions(child);
            }
        }
        Value::Array(items) => {
            for item in items {
                removed += drop_empty_descriptions(item);
            }
        }
        _ => {}
    }
    removed
}

/// The bytes of `$defs` entries that appear, identical, in more than one schema of the list
/// (input and output schemas): what sharing them would save, were MCP to allow it.
fn repeated_defs(list: &[Value]) -> (usize, usize) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for tool in list {
        for schema in ["inputSchema", "outputSchema"] {
            if let Some(defs) = tool
                .get(schema)
                .and_then(|s| s.get("$defs"))
                .and_then(Value::as_object)
            {
                for (name, def) in defs {
                    *seen.entry(format!("{name}:{def}")).or_default() += 1;
                }
            }
        }
    }
    let (mut entries, mut bytes) = (0, 0);
    for (key, n) in seen {
        if n > 1 {
            entries += n - 1;
            bytes += (n - 1) * key.len();
        }
    }
    (entries, bytes)
}

/// Output schemas identical across tools: the copies after the first.
fn duplicated_output_schemas(list: &[Value]) -> (usize, usize) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for tool in list {
        if let Some(schema) = tool.get("outputSchema") {
            *seen.entry(compact(schema)).or_default() += 1;
        }
    }
    seen.iter()
        .filter(|(_, n)| **n > 1)
        .fold((0, 0), |(c, b), (s, n)| (c + n - 1, b + (n - 1) * s.len()))
}

/// Each tool's schemas without the root keyword `key` (`title`: the Rust type's name;
/// `description`: the input type's doc comment, which the tool's description already says).
fn without_root(v: &Value, key: &str, schemas: &[&str]) -> (Value, usize) {
    let mut v = v.clone();
    let mut removed = 0;
    if let Some(list) = v.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in list {
            for schema in schemas {
                if let Some(s) = tool.get_mut(*schema).and_then(Value::as_object_mut) {
                    removed += usize::from(s.remove(key).is_some());
                }
            }
        }
    }
    (v, removed)
}

/// Output schemas dropped, for a count of what they weigh in the list.
fn without_output_schemas(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(list) = v.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in list {
            if let Some(t) = tool.as_object_mut() {
                t.remove("outputSchema");
            }
        }
    }
    v
}

/// `list` as it was before `tools/list` left out the root annotations that repeat the tool
/// (`schema::for_tools_list`): each tool's schemas put back as its action declares them.
fn as_declared(server: &fusion_runtime::Server, list: &Value) -> Value {
    let mut v = list.clone();
    if let Some(tools) = v.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools {
            let name = tool["name"].as_str().unwrap_or_default().to_owned();
            let Some(action) = server.actions().iter().find(|a| a.tool == name) else {
                continue;
            };
            if let Some(t) = tool.as_object_mut() {
                if t.contains_key("inputSchema") {
                    t.insert(
                        "inputSchema".into(),
                        Value::Object(action.info.input_schema.as_ref().clone()),
                    );
                }
                if let (true, Some(out)) =
                    (t.contains_key("outputSchema"), &action.info.output_schema)
                {
                    t.insert("outputSchema".into(), Value::Object(out.as_ref().clone()));
                }
            }
        }
    }
    v
}

async fn run() -> anyhow::Result<()> {
    let bpe = tiktoken_rs::o200k_base()?;
    let flat = examples::billing::server()?;
    let grouped = examples::billing::builder().grouped().build()?;
    let (flat_list, grouped_list) = (flat.tools_json(), grouped.tools_json());

    println!("### tools/list (compact JSON, as sent)\n");
    println!("| what | bytes | tokens (o200k_base) |\n|---|---|---|");
    let n = tools(&flat_list).len();
    let (fb, ft) = row(&bpe, &format!("flat: {n} tools"), &compact(&flat_list));
    let (gb, gt) = row(&bpe, "grouped: 1 `billing` tool", &compact(&grouped_list));
    for tool in tools(&flat_list) {
        let name = tool["name"].as_str().unwrap_or("?").to_owned();
        row(&bpe, &format!("flat, `{name}` alone"), &compact(&tool));
    }

    println!("\n### Applied: root annotations that repeat the tool, left out\n");
    println!("| list | bytes before → after | tokens before → after | saved |\n|---|---|---|---|");
    // The grouped tool's schema is the framework's own, with no root title or description.
    for (label, server, list, b1, t1) in [("flat", &flat, &flat_list, fb, ft)] {
        let before = compact(&as_declared(server, list));
        let (b0, t0) = (before.len(), tokens(&bpe, &before));
        println!(
            "| {label} | {b0} → {b1} | {t0} → {t1} | {} B, {} tok ({:.1} %) |",
            b0 - b1,
            t0 - t1,
            100.0 * (t0 - t1) as f64 / t0.max(1) as f64
        );
    }

    println!("\n### Further reductions, measured (not applied)\n");
    println!(
        "| reduction | list | bytes before → after | tokens before → after | saved |\n|---|---|---|---|---|"
    );
    for (label, list, b0, t0) in [
        ("flat", &flat_list, fb, ft),
        ("grouped", &grouped_list, gb, gt),
    ] {
        let mut trimmed = list.clone();
        let n = drop_empty_descriptions(&mut trimmed);
        let text = compact(&trimmed);
        let (b1, t1) = (text.len(), tokens(&bpe, &text));
        println!(
            "| drop {n} empty `description`/`title` | {label} | {b0} → {b1} | {t0} → {t1} | {} B, {} tok |",
            b0 - b1,
            t0 - t1
        );
        for (key, schemas, why) in [
            (
                "title",
                &["inputSchema", "outputSchema"][..],
                "the Rust type's name",
            ),
            (
                "description",
                &["inputSchema"][..],
                "the input type's doc comment, beside the tool's description",
            ),
        ] {
            let (trimmed, n) = without_root(list, key, schemas);
            let text = compact(&trimmed);
            let (b1, t1) = (text.len(), tokens(&bpe, &text));
            println!(
                "| drop {n} root `{key}` of {} ({why}) | {label} | {b0} → {b1} | {t0} → {t1} | {} B, {} tok |",
                schemas.join("/"),
                b0 - b1,
                t0 - t1
            );
        }
        let no_out = compact(&without_output_schemas(list));
        let (b2, t2) = (no_out.len(), tokens(&bpe, &no_out));
        println!(
            "| (weight of all `outputSchema`s) | {label} | {b0} → {b2} | {t0} → {t2} | {} B, {} tok |",
            b0 - b2,
            t0 - t2
        );
        let list_tools = tools(list);
        let (copies, bytes) = duplicated_output_schemas(&list_tools);
        println!(
            "| `outputSchema` identical across tools: {copies} copies | {label} | | | {bytes} B |"
        );
        let (entries, bytes) = repeated_defs(&list_tools);
        println!(
            "| `$defs` entries repeated across schemas: {entries} copies | {label} | | | {bytes} B |"
        );
    }

    println!("\n### The demo's answers (each text part the model reads)\n");
    println!("| call | what | bytes | tokens |\n|---|---|---|---|");
    let (mut total_b, mut total_t) = (0, 0);
    for (tool, args, what) in examples::billing::demo::script() {
        let response = flat.call_json(tool, args.clone()).await;
        for text in response.texts() {
            let first = text.lines().next().unwrap_or_default();
            let kind = if first.starts_with("<validation_error") {
                "`validation_error`".to_owned()
            } else if first.starts_with("<tool_error") {
                first
                    .split('"')
                    .nth(1)
                    .map_or("envelope".to_owned(), |c| format!("`{c}`"))
            } else {
                "result".to_owned()
            };
            let (b, t) = (text.len(), tokens(&bpe, text));
            total_b += b;
            total_t += t;
            println!("| `{tool}` {kind} | {what} | {b} | {t} |");
        }
    }
    println!("| all of them | | {total_b} | {total_t} |");
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("token-cost: {e:#}");
            ExitCode::FAILURE
        }
    }
}
