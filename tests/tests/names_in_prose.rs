//! Every sentence the framework writes that names an action names it as clients call it, in
//! both exposures: `lab_get_invoice` flat (`lab__get_invoice` with the separator `__`),
//! `lab.get_invoice` grouped (the `lab` tool with `"action": "get_invoice"`). The list below is every such message: `SERVER_BUSY`,
//! `RATE_LIMITED`, `TIMEOUT`, `DEPRECATED` (the action's warning, its note and its
//! `tools/list` description, a deprecated field's warning), `INTERNAL_ERROR` (a failure, a
//! panic), `AUTH_REQUIRED` and `FORBIDDEN`, `CANCELLED`, a `<validation_error>`'s action, a
//! `<contract_awareness>` delta, and a handler's or a middleware's envelope naming actions by
//! their registered names. Each is checked twice: it carries the expected spelling, and every
//! action name in it is one the client can call.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use fusion_runtime::context::CancellationToken;
use fusion_runtime::contract::Lockfile;
use fusion_runtime::server::{CallRequest, Next, RequestScope, middleware_fn};
use fusion_runtime::{Principal, Server, ToolError, ToolInput, ToolResponse, error, tool_action};
use fusion_tests::text_of;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, ToolInput)]
struct Id {
    /// The invoice ID.
    #[fusion(pattern = r"^inv_[0-9]{4}$")]
    id: String,
}

#[derive(Debug, Deserialize, ToolInput)]
struct Wait {
    /// How long the handler runs, in milliseconds.
    #[fusion(range(max = 60_000))]
    ms: u64,
}

#[derive(Debug, Deserialize, ToolInput)]
struct Note {
    /// The note.
    text: String,
    /// The old name of `text`.
    #[fusion(deprecated = "use `text` (lab.list_invoices lists them)")]
    body: Option<String>,
}

/// Lists invoices.
#[tool_action(name = "lab.list_invoices", read_only)]
async fn list_invoices(_: Wait) -> Result<String, ToolError> {
    Ok("none".into())
}

/// One invoice; none exists: the handler's envelope names another action, by its registered name.
#[tool_action(name = "lab.get_invoice", read_only)]
async fn get_invoice(input: Id) -> Result<String, ToolError> {
    Err(error("NOT_FOUND", format!("No invoice {}", input.id))
        .recovery("Call lab.list_invoices first, then retry with a real ID.")
        .available_actions(["lab.list_invoices"]))
}

/// The same, under the name the lockfile knew (for the rename delta).
#[tool_action(name = "lab.get_bill", read_only)]
async fn get_bill(input: Id) -> Result<String, ToolError> {
    Ok(input.id)
}

/// The old way to read an invoice.
#[tool_action(name = "lab.find_invoice", deprecated = "use lab.get_invoice instead")]
async fn find_invoice(input: Id) -> Result<String, ToolError> {
    Ok(input.id)
}

/// Writes a note.
#[tool_action(name = "lab.write_note")]
async fn write_note(input: Note) -> Result<String, ToolError> {
    Ok(input.text)
}

/// One call at a time, none waiting.
#[tool_action(name = "lab.slow", max_active = 1, max_queue = 0)]
async fn slow(input: Wait) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    Ok("done".into())
}

/// One call a minute.
#[tool_action(name = "lab.limited", rate_limit = "1/min")]
async fn limited(_: Wait) -> Result<String, ToolError> {
    Ok("done".into())
}

/// Stopped after a second.
#[tool_action(name = "lab.timed", timeout = "1s")]
async fn timed(input: Wait) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    Ok("done".into())
}

/// Fails with a plain error.
#[tool_action(name = "lab.failing")]
async fn failing(_: Wait) -> Result<String, std::io::Error> {
    Err(std::io::Error::other("disk full"))
}

/// Panics.
#[tool_action(name = "lab.panicky")]
async fn panicky(_: Wait) -> Result<String, ToolError> {
    panic!("a bug")
}

/// Needs a scope.
#[tool_action(name = "lab.secret", scopes = ["lab:read"])]
async fn secret(_: Wait) -> Result<String, ToolError> {
    Ok("s".into())
}

/// Refused by the middleware.
#[tool_action(name = "lab.void", destructive)]
async fn void(_: Wait) -> Result<String, ToolError> {
    Ok("voided".into())
}

/// A middleware's envelope names the action by `req.action()` (its registered name).
async fn guard(req: CallRequest, next: Next) -> Result<ToolResponse, ToolError> {
    if req.action() == "lab.void" {
        return Err(error(
            "UNAUTHORIZED",
            format!("{} needs an operator token", req.action()),
        )
        .recovery("Call lab.list_invoices instead")
        .available_actions(["lab.list_invoices"]));
    }
    Ok(next.run(req).await)
}

/// How the lab's actions are exposed.
#[derive(Clone, Copy, Debug)]
enum Exposure {
    /// One tool per action, `lab_get_invoice`.
    Flat,
    /// One tool per action, with another separator: `lab__get_invoice`.
    FlatWith(&'static str),
    /// One `lab` tool; `lab.get_invoice` is its `get_invoice` action.
    Grouped,
}

/// The lab server; `then` has `lab.get_bill` where today's has `lab.get_invoice`.
fn server(exposure: Exposure, then: bool, lock: Option<&PathBuf>) -> Server {
    let mut b = Server::builder().name("lab");
    b = match then {
        true => b.action::<GetBillAction>(),
        false => b.action::<GetInvoiceAction>(),
    };
    b = b
        .action::<ListInvoicesAction>()
        .action::<FindInvoiceAction>()
        .action::<WriteNoteAction>()
        .action::<SlowAction>()
        .action::<LimitedAction>()
        .action::<TimedAction>()
        .action::<FailingAction>()
        .action::<PanickyAction>()
        .action::<SecretAction>()
        .action::<VoidAction>()
        .middleware(middleware_fn(guard));
    b = match exposure {
        Exposure::Flat => b,
        Exposure::FlatWith(separator) => b.separator(separator),
        Exposure::Grouped => b.grouped(),
    };
    if let Some(path) = lock {
        b = b.self_healing(path);
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// How clients call `action` in this exposure: the tool `tools/list` shows, `tool.action` for
/// a grouped tool's member.
fn callable(s: &Server, action: &str) -> String {
    let d = s
        .actions()
        .iter()
        .find(|d| d.info.name == action)
        .unwrap_or_else(|| panic!("no action {action}"));
    match &d.discriminator {
        Some(v) => format!("{}.{v}", d.tool),
        None => d.tool.clone(),
    }
}

/// Every spelling a client can call: the names `tools/list` shows, and each grouped member's
/// `tool.action`.
fn callables(s: &Server) -> BTreeSet<String> {
    let listed: BTreeSet<String> = s.tool_specs().iter().map(|t| t.name.clone()).collect();
    let mut all = listed.clone();
    for d in s.actions() {
        assert!(listed.contains(&d.tool), "{} is not in tools/list", d.tool);
        all.insert(callable(s, d.info.name));
    }
    all
}

/// The words of `text` that name one of the lab's actions or tools (`lab.…`, `lab_…`).
fn names_in(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| w.starts_with("lab.") || w.starts_with("lab_"))
        .collect()
}

async fn call(s: &Server, tool: &str, args: Value) -> ToolResponse {
    s.call(tool, args.as_object().cloned(), RequestScope::detached())
        .await
}

/// Every framework-written message naming an action, as `(what, text)`, from `s`.
async fn messages(s: &Server) -> Vec<(&'static str, String)> {
    let c = |a: &str| callable(s, a);
    let mut out = Vec::new();

    // SERVER_BUSY: a second call while the first holds the only slot.
    let first = {
        let (s, tool) = (s.clone(), c("lab.slow"));
        tokio::spawn(async move { call(&s, &tool, json!({"ms": 2000})).await })
    };
    while s.guard_state("lab.slow").is_none_or(|g| g.active == 0) {
        tokio::task::yield_now().await;
    }
    out.push((
        "SERVER_BUSY",
        text_of(&call(s, &c("lab.slow"), json!({"ms": 1})).await),
    ));
    let first = first.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(!first.is_error, "{}", text_of(&first));

    // RATE_LIMITED: the second call within the minute.
    let ok = call(s, &c("lab.limited"), json!({"ms": 1})).await;
    assert!(!ok.is_error, "{}", text_of(&ok));
    out.push((
        "RATE_LIMITED",
        text_of(&call(s, &c("lab.limited"), json!({"ms": 1})).await),
    ));

    out.push((
        "TIMEOUT",
        text_of(&call(s, &c("lab.timed"), json!({"ms": 5000})).await),
    ));

    // DEPRECATED: the action's warning (its note names the replacement), a field's warning.
    let found = call(s, &c("lab.find_invoice"), json!({"id": "inv_0001"})).await;
    assert!(!found.is_error);
    out.push((
        "DEPRECATED (action)",
        found.content.iter().skip(1).map(text).collect(),
    ));
    let noted = call(s, &c("lab.write_note"), json!({"text": "a", "body": "b"})).await;
    assert!(!noted.is_error);
    out.push((
        "DEPRECATED (field)",
        noted.content.iter().skip(1).map(text).collect(),
    ));

    out.push((
        "INTERNAL_ERROR (failure)",
        text_of(&call(s, &c("lab.failing"), json!({"ms": 1})).await),
    ));
    out.push((
        "INTERNAL_ERROR (panic)",
        text_of(&call(s, &c("lab.panicky"), json!({"ms": 1})).await),
    ));

    out.push((
        "AUTH_REQUIRED",
        text_of(&call(s, &c("lab.secret"), json!({"ms": 1})).await),
    ));
    let stranger = RequestScope::detached().with_principal(Principal::new("u"));
    let args = json!({"ms": 1}).as_object().cloned();
    out.push((
        "FORBIDDEN",
        text_of(&s.call(&c("lab.secret"), args.clone(), stranger).await),
    ));

    let token = CancellationToken::new();
    token.cancel();
    let cancelled = RequestScope::detached().with_cancellation(token);
    out.push((
        "CANCELLED",
        text_of(&s.call(&c("lab.slow"), args, cancelled).await),
    ));

    out.push((
        "VALIDATION_ERROR (with its contract_awareness)",
        text_of(&call(s, &c("lab.get_invoice"), json!({"id": 7})).await),
    ));
    out.push((
        "a handler's envelope",
        text_of(&call(s, &c("lab.get_invoice"), json!({"id": "inv_0009"})).await),
    ));
    out.push((
        "a middleware's envelope",
        text_of(&call(s, &c("lab.void"), json!({"ms": 1})).await),
    ));
    for tool in s.tool_specs() {
        if tool.description.to_lowercase().contains("deprecated") {
            out.push(("tools/list description", tool.description.clone()));
        }
    }
    out
}

fn text(c: &fusion_runtime::Content) -> String {
    match c {
        fusion_runtime::Content::Text(t) => t.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// What each message must say, with `c` the callable spelling of an action.
fn expected(what: &str, c: &dyn Fn(&str) -> String) -> Vec<String> {
    match what {
        "SERVER_BUSY" => vec![format!("{} is busy: 1 call running", c("lab.slow"))],
        "RATE_LIMITED" => vec![format!("{} is rate limited", c("lab.limited"))],
        "TIMEOUT" => vec![format!(
            "{} did not finish within 1 seconds",
            c("lab.timed")
        )],
        "DEPRECATED (action)" => vec![format!(
            "{} is deprecated: use {} instead",
            c("lab.find_invoice"),
            c("lab.get_invoice")
        )],
        "DEPRECATED (field)" => vec![format!(
            "Field 'body' is deprecated: use `text` ({} lists them)",
            c("lab.list_invoices")
        )],
        "INTERNAL_ERROR (failure)" => vec![format!("{} failed: disk full", c("lab.failing"))],
        "INTERNAL_ERROR (panic)" => vec![format!("The handler of {} panicked", c("lab.panicky"))],
        "AUTH_REQUIRED" | "FORBIDDEN" => vec![format!("{} needs", c("lab.secret"))],
        "CANCELLED" => vec![format!("The call to {} was cancelled", c("lab.slow"))],
        "VALIDATION_ERROR (with its contract_awareness)" => vec![
            format!("<validation_error action=\"{}\">", c("lab.get_invoice")),
            format!(
                "Action 'lab.get_bill' was renamed to '{0}' (same input schema); call '{0}' instead.",
                c("lab.get_invoice")
            ),
            format!("After: '{}'.", c("lab.get_invoice")),
        ],
        "a handler's envelope" => vec![
            format!("Call {} first", c("lab.list_invoices")),
            format!("<action>{}</action>", c("lab.list_invoices")),
        ],
        "a middleware's envelope" => vec![
            format!("{} needs an operator token", c("lab.void")),
            format!("Call {} instead", c("lab.list_invoices")),
            format!("<action>{}</action>", c("lab.list_invoices")),
        ],
        "tools/list description" => vec![format!("use {} instead", c("lab.get_invoice"))],
        other => panic!("no expectation for {other}"),
    }
}

async fn every_message_names_callable_actions(how: Exposure, get_invoice: &str) {
    let exposure = format!("{how:?}");
    let dir = std::env::temp_dir().join(format!(
        "fusion-names-{}-{}",
        std::process::id(),
        exposure.replace(|c: char| !c.is_alphanumeric(), "")
    ));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let lock = dir.join("fusion.lock");
    Lockfile::from_contracts(server(how, true, None).contracts())
        .and_then(|l| l.write(&lock))
        .unwrap_or_else(|e| panic!("{e}"));
    let s = server(how, false, Some(&lock));
    let can_call = callables(&s);
    let c = |a: &str| callable(&s, a);
    assert_eq!(c("lab.get_invoice"), get_invoice);

    let all = messages(&s).await;
    let kinds: BTreeSet<&str> = all.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds.len(),
        14,
        "{exposure}: every kind of message was made: {kinds:?}"
    );
    for (what, text) in &all {
        println!("── {exposure} · {what}\n{text}");
        for want in expected(what, &c) {
            assert!(
                text.contains(&want),
                "{exposure} · {what}: `{want}` not in\n{text}"
            );
        }
        // The contract delta's path is the lockfile's address, and its "Before" is the name
        // the lockfile had: neither is a name to call.
        let prose = text
            .split('\n')
            .map(|l| match l.split_once(" path=\"") {
                Some((head, tail)) => {
                    format!("{head}{}", &tail[tail.find('"').map_or(0, |i| i + 1)..])
                }
                None => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
            .replace("'lab.get_bill'", "");
        for name in names_in(&prose) {
            assert!(
                can_call.contains(name),
                "{exposure} · {what}: `{name}` is not a name the client can call ({can_call:?})\n{text}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(start_paused = true)]
async fn every_framework_message_names_actions_as_flat_clients_call_them() {
    every_message_names_callable_actions(Exposure::Flat, "lab_get_invoice").await;
}

#[tokio::test(start_paused = true)]
async fn every_framework_message_names_actions_with_the_flat_separator_in_force() {
    every_message_names_callable_actions(Exposure::FlatWith("__"), "lab__get_invoice").await;
}

#[tokio::test(start_paused = true)]
async fn every_framework_message_names_actions_as_grouped_clients_call_them() {
    every_message_names_callable_actions(Exposure::Grouped, "lab.get_invoice").await;
}
