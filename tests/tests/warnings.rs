//! Warnings on the success path (SPEC §2): a deprecated field sent (`#[fusion(deprecated)]`),
//! a result cut to its bound (`max_result_bytes`), a fallback applied (`WithWarnings`). In
//! process through `Server::call_json`, and once over a real MCP connection.

use std::time::Duration;

use fusion_runtime::client::{ToolCallError, parse_tool_error};
use fusion_runtime::codes::{RESULT_TOO_LARGE, RESULT_TRUNCATED};
use fusion_runtime::contract::{DeltaSeverity, Lockfile, ToolContract, diff};
use fusion_runtime::mcp::HttpOptions;
use fusion_runtime::{
    Server, ToolError, ToolInput, ToolResponse, WithWarnings, error, tool_action,
};
use fusion_tests::clients::{bounded, over_http};
use rmcp::model::CallToolRequestParams;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Create a task.
#[derive(Debug, Deserialize, ToolInput)]
struct CreateTask {
    /// What to do.
    title: String,
    /// When it is due (YYYY-MM-DD).
    #[fusion(deprecated = "use `due_date`")]
    due: Option<String>,
    /// When it is due (YYYY-MM-DD).
    due_date: Option<String>,
    /// Sub-steps.
    #[serde(default)]
    steps: Vec<Step>,
}

/// One sub-step.
#[derive(Debug, Deserialize, ToolInput)]
struct Step {
    /// What to do.
    text: String,
    /// Who does it.
    #[fusion(deprecated = "use `assignee`")]
    owner: Option<String>,
}

/// Create a task.
#[tool_action(name = "tasks.create")]
async fn create(input: CreateTask) -> Result<String, ToolError> {
    let due = input.due_date.or(input.due).unwrap_or_default();
    Ok(format!(
        "created {} due {due} with {} steps",
        input.title,
        input.steps.len()
    ))
}

/// No input.
#[derive(Debug, Deserialize, ToolInput)]
struct Repeat {
    /// The text to repeat.
    text: String,
    /// How many times.
    times: usize,
}

/// Repeat a text, as plain text (no output schema).
#[tool_action(name = "tasks.repeat", max_result_bytes = 10)]
async fn repeat(input: Repeat) -> Result<String, ToolError> {
    Ok(input.text.repeat(input.times))
}

/// Repeat a text, bounded by the server's default.
#[tool_action(name = "tasks.repeat_default")]
async fn repeat_default(input: Repeat) -> Result<String, ToolError> {
    Ok(input.text.repeat(input.times))
}

/// A structured result.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Listing {
    items: Vec<String>,
}

/// Repeat a text as a structured listing (an output schema).
#[tool_action(name = "tasks.listing", max_result_bytes = 64)]
async fn listing(input: Repeat) -> Result<Listing, ToolError> {
    Ok(Listing {
        items: vec![input.text; input.times],
    })
}

/// Look a rate up, falling back to the cached one.
#[tool_action(name = "tasks.rate")]
async fn rate(_input: Repeat) -> Result<WithWarnings<f64>, ToolError> {
    Ok(WithWarnings::new(1.08).warning(
        error(
            "FALLBACK_APPLIED",
            "The live rate service did not answer; this is yesterday's cached rate",
        )
        .recovery("Use it as an estimate; call again later for the live rate"),
    ))
}

fn server(default_bound: Option<usize>) -> Server {
    let b = Server::builder()
        .action::<CreateAction>()
        .action::<RepeatAction>()
        .action::<RepeatDefaultAction>()
        .action::<ListingAction>()
        .action::<RateAction>();
    let b = match default_bound {
        Some(n) => b.max_result_bytes(n),
        None => b,
    };
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// The warning envelopes of a response (its text blocks after the first).
fn warnings(r: &ToolResponse) -> Vec<ToolCallError> {
    r.texts()
        .skip(1)
        .map(|t| parse_tool_error(t).unwrap_or_else(|e| panic!("not a tool_error ({e}): {t}")))
        .map(|w| ToolCallError::from_error("", &w))
        .collect()
}

fn first_text(r: &ToolResponse) -> &str {
    r.texts().next().unwrap_or_else(|| panic!("no text: {r:?}"))
}

#[tokio::test]
async fn a_deprecated_field_sent_succeeds_with_a_warning_naming_it() {
    let s = server(None);
    let r = s
        .call_json(
            "tasks.create",
            json!({"title": "Pay rent", "due": "2026-01-01"}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        first_text(&r),
        "\"created Pay rent due 2026-01-01 with 0 steps\""
    );
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{r:?}");
    assert_eq!(w[0].code.as_str(), "DEPRECATED");
    assert!(!w[0].severity.is_error());
    assert_eq!(w[0].message, "Field 'due' is deprecated: use `due_date`");
    assert_eq!(
        w[0].recovery.as_deref(),
        Some("This call worked; stop sending 'due' before it is removed")
    );
    assert_eq!(w[0].detail_value("field"), Some("due"));
}

#[tokio::test]
async fn only_deprecated_fields_actually_sent_count_at_their_paths() {
    let s = server(None);
    let r = s
        .call_json(
            "tasks.create",
            json!({"title": "t", "due_date": "2026-01-01", "due": null}),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    assert!(warnings(&r).is_empty(), "{r:?}");

    let args = json!({
        "title": "t",
        "due": "2026-01-01",
        "steps": [{"text": "a"}, {"text": "b", "owner": "ann"}, {"text": "c", "owner": "bob"}]
    });
    let r = s.call_json("tasks.create", args).await;
    let fields: Vec<String> = warnings(&r)
        .iter()
        .map(|w| w.detail_value("field").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(fields, ["due", "steps.1.owner", "steps.2.owner"], "{r:?}");
    assert_eq!(
        warnings(&r)[1].message,
        "Field 'steps.1.owner' is deprecated: use `assignee`"
    );

    // An invalid call is a validation error, with no warning beside it.
    let r = s.call_json("tasks.create", json!({"due": "x"})).await;
    assert!(r.is_error);
    assert_eq!(r.texts().count(), 1, "{r:?}");
}

#[test]
fn the_schema_marks_a_deprecated_field_and_says_what_to_use() {
    let schema = Value::Object(CreateTask::input_schema().as_ref().clone());
    let due = &schema["properties"]["due"];
    assert_eq!(due["deprecated"], json!(true), "{schema}");
    assert_eq!(
        due["description"],
        json!("When it is due (YYYY-MM-DD).\n\nDeprecated: use `due_date`.")
    );
    assert!(
        due.get("x-fusion-deprecated").is_none(),
        "annotations stay inside: {due}"
    );
    assert!(schema["properties"]["due_date"].get("deprecated").is_none());
    // tools/list shows it as built.
    let s = server(None);
    let tool = s
        .tool_specs()
        .iter()
        .find(|t| t.name == "tasks_create")
        .unwrap_or_else(|| panic!("no tasks_create"));
    assert_eq!(
        tool.input_schema["properties"]["due"]["deprecated"],
        json!(true)
    );
}

#[test]
fn the_contract_diff_reports_a_field_becoming_deprecated_as_risky() {
    let s = server(None);
    let now: Vec<ToolContract> = s
        .contracts()
        .iter()
        .filter(|c| c.action == "tasks.create")
        .cloned()
        .collect();
    assert_eq!(now.len(), 1);
    let mut before = now.clone();
    let due = &mut before[0].input_schema["properties"]["due"];
    due.as_object_mut()
        .unwrap_or_else(|| panic!("due is not an object"))
        .remove("deprecated");
    due["description"] = json!("When it is due (YYYY-MM-DD).");
    // One delta above cosmetic: the flag. The description's new sentence is its wording.
    let deltas = diff(&before, &now);
    let flagged: Vec<_> = deltas
        .iter()
        .filter(|d| d.severity != DeltaSeverity::Cosmetic)
        .collect();
    assert_eq!(flagged.len(), 1, "{deltas:#?}");
    assert_eq!(flagged[0].severity, DeltaSeverity::Risky);
    assert!(
        flagged[0].description.contains("'due' is now deprecated"),
        "{deltas:#?}"
    );
    // The lockfile keeps the flag: `lock --check` against the old one reports it.
    let lock = Lockfile::from_contracts(&before).unwrap_or_else(|e| panic!("{e}"));
    let lock = Lockfile::parse(&lock.to_string()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        lock.check(&now)
            .iter()
            .any(|d| d.severity == DeltaSeverity::Risky && d.description.contains("deprecated"))
    );
    let written = Lockfile::from_contracts(&now)
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string();
    assert!(written.contains("\"deprecated\": true"), "{written}");
    let back = diff(&now, &before);
    let flagged: Vec<_> = back
        .iter()
        .filter(|d| d.severity != DeltaSeverity::Cosmetic)
        .collect();
    assert_eq!(flagged.len(), 1, "{back:#?}");
    assert_eq!(flagged[0].severity, DeltaSeverity::Safe);
}

#[tokio::test]
async fn an_oversized_text_result_is_cut_on_a_character_boundary_with_a_warning() {
    let s = server(None);
    // "é" is two bytes: the JSON text `"éééééé"` is 14 bytes, cut at 10 would split one.
    let r = s
        .call_json("tasks.repeat", json!({"text": "é", "times": 6}))
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(first_text(&r), "\"éééé");
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{r:?}");
    assert_eq!(w[0].code.as_str(), RESULT_TRUNCATED.as_str());
    assert!(!w[0].severity.is_error());
    assert!(
        w[0].message.contains("9 of 14 bytes were sent"),
        "{}",
        w[0].message
    );
    assert_eq!(
        w[0].recovery.as_deref(),
        Some("Call again with a narrower filter or a page to get the rest")
    );
    assert_eq!(w[0].detail_value("total_bytes"), Some("14"));

    // At the bound exactly: untouched, no warning.
    let r = s
        .call_json("tasks.repeat", json!({"text": "ab", "times": 4}))
        .await;
    assert_eq!(first_text(&r), "\"abababab\"");
    assert!(warnings(&r).is_empty());
}

#[tokio::test]
async fn the_server_default_bounds_actions_that_declare_none() {
    let s = server(Some(100));
    let r = s
        .call_json("tasks.repeat_default", json!({"text": "x", "times": 1000}))
        .await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(first_text(&r).len(), 100);
    assert_eq!(warnings(&r)[0].code.as_str(), RESULT_TRUNCATED.as_str());
    // The declared bound wins over the server's.
    let r = s
        .call_json("tasks.repeat", json!({"text": "x", "times": 50}))
        .await;
    assert_eq!(first_text(&r).len(), 10);

    // The built-in default (1 MiB) leaves a large result whole.
    let s = server(None);
    let r = s
        .call_json(
            "tasks.repeat_default",
            json!({"text": "x", "times": 500_000}),
        )
        .await;
    assert_eq!(first_text(&r).len(), 500_002);
    assert!(warnings(&r).is_empty());
    assert!(
        Server::builder()
            .action::<RepeatAction>()
            .max_result_bytes(0)
            .build()
            .is_err()
    );
}

#[tokio::test]
async fn an_oversized_structured_result_is_refused_not_cut() {
    let s = server(None);
    let r = s
        .call_json("tasks.listing", json!({"text": "x", "times": 2}))
        .await;
    assert!(!r.is_error && r.structured_content.is_some(), "{r:?}");
    let r = s
        .call_json("tasks.listing", json!({"text": "word", "times": 100}))
        .await;
    assert!(r.is_error, "{r:?}");
    assert!(r.structured_content.is_none());
    let e = parse_tool_error(first_text(&r)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(e.code().as_str(), RESULT_TOO_LARGE.as_str());
    assert_eq!(e.detail_value("max_result_bytes"), Some("64"));
}

#[tokio::test]
async fn a_fallback_reads_as_a_warning_with_the_value() {
    let s = server(None);
    let r = s
        .call_json("tasks.rate", json!({"text": "x", "times": 1}))
        .await;
    assert!(!r.is_error);
    assert_eq!(first_text(&r), "1.08");
    let w = warnings(&r);
    assert_eq!(w[0].code.as_str(), "FALLBACK_APPLIED");
    assert!(!w[0].severity.is_error());
}

#[tokio::test]
async fn over_mcp_the_warnings_reach_the_client() {
    let (client, http) = over_http(server(None), HttpOptions::default()).await;
    let limit = Duration::from_secs(20);
    let call = |tool: &str, args: Value| {
        let params = CallToolRequestParams::new(tool.to_owned())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        client.call_tool(params)
    };
    let r = bounded(
        "create",
        limit,
        call("tasks_create", json!({"title": "t", "due": "d"})),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let texts: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    let w = parse_tool_error(&texts[1]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.code().as_str(), "DEPRECATED");
    assert_eq!(w.detail_value("field"), Some("due"));

    let r = bounded(
        "repeat",
        limit,
        call("tasks_repeat", json!({"text": "é", "times": 6})),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let texts: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert_eq!(texts[0], "\"éééé");
    let w = parse_tool_error(&texts[1]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.code().as_str(), RESULT_TRUNCATED.as_str());
    drop(client);
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}
