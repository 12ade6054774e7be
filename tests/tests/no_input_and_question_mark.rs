//! Actions without an input (no parameter at all, or only their context) list an empty object
//! schema, answer `{}` and refuse any key with the `<validation_error>` a derived
//! `struct Empty {}` gets, as flat tools and as members of a grouped one; `?` on an
//! `io::Error`, a `serde_json::Error` or an `anyhow::Error` in a handler returning
//! `Result<_, ToolError>` answers exactly what the same handler returning that error answers
//! (`INTERNAL_ERROR`, its message shown or hidden by the same option), and a `ToolError` inside
//! an `anyhow::Error` passes intact.

use fusion_runtime::action::NoInput;
use fusion_runtime::client::ToolCallError;
use fusion_runtime::codes::{INTERNAL_ERROR, NOT_FOUND};
use fusion_runtime::context::CallContext;
use fusion_runtime::server::INTERNAL_RECOVERY;
use fusion_runtime::testing::TestServer;
use fusion_runtime::{Context, Server, ServerBuilder, ToolError, ToolInput, error, tool_action};
use serde_json::{Value, json};

/// Answers a ping.
#[tool_action]
async fn ping() -> Result<String, ToolError> {
    Ok("pong".into())
}

/// The shared count.
struct Counter(u32);

/// Reads the shared count.
#[tool_action(name = "counter.read", read_only)]
async fn read_count(counter: Context<Counter>) -> Result<u32, ToolError> {
    Ok(counter.state().0)
}

/// Names the action it runs as.
#[tool_action(name = "whoami")]
async fn whoami(cx: CallContext) -> Result<String, ToolError> {
    Ok(cx.action().to_owned())
}

/// Nothing, declared the way the guides did before an action could take no input.
#[derive(serde::Deserialize, serde::Serialize, ToolInput)]
struct Empty {}

/// Answers a ping.
#[tool_action(name = "ping")]
async fn ping_empty(_: Empty) -> Result<String, ToolError> {
    Ok("pong".into())
}

fn kit(builder: ServerBuilder) -> TestServer {
    TestServer::build(builder).unwrap_or_else(|e| panic!("{e}"))
}

fn schema_of(tools: &[fusion_runtime::server::ToolSpec], name: &str) -> Value {
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        panic!("{name} is not listed")
    };
    Value::Object(tool.input_schema.as_ref().clone())
}

#[tokio::test]
async fn an_action_without_input_lists_an_empty_object_answers_and_refuses_keys() {
    let kit = kit(Server::builder()
        .state(Counter(3))
        .action::<PingAction>()
        .action::<ReadCountAction>()
        .action::<WhoamiAction>());
    let tools = kit.tools().await;
    for name in ["ping", "counter_read", "whoami"] {
        let schema = schema_of(&tools, name);
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        assert_eq!(schema["properties"], json!({}), "{name}: {schema}");
        assert_eq!(schema["additionalProperties"], false, "{name}: {schema}");
        assert!(schema.get("required").is_none(), "{name}: {schema}");
    }

    assert_eq!(
        kit.call_tool("ping", json!({})).await.output::<String>(),
        "pong"
    );
    assert_eq!(
        kit.call::<PingAction>(&NoInput {}).await.output::<String>(),
        "pong"
    );
    assert_eq!(
        kit.call_tool("counter_read", json!({}))
            .await
            .output::<u32>(),
        3
    );
    assert_eq!(
        kit.call_tool("whoami", json!({})).await.output::<String>(),
        "whoami"
    );

    for name in ["ping", "counter_read", "whoami"] {
        let refused = kit.call_tool(name, json!({"verbose": true})).await;
        let v = refused.expect_validation();
        assert_eq!(v.fields.len(), 1, "{}", refused.render());
        assert!(refused.render().contains("verbose"), "{}", refused.render());
    }
}

#[tokio::test]
async fn no_input_is_refused_as_a_derived_empty_input_is() {
    let bare = kit(Server::builder().action::<PingAction>());
    let derived = kit(Server::builder().action::<PingEmptyAction>());
    assert_eq!(
        schema_of(&bare.tools().await, "ping")["properties"],
        schema_of(&derived.tools().await, "ping")["properties"]
    );
    for arguments in [
        json!({"verbose": true}),
        json!({"a": 1, "b": 2}),
        json!([1]),
    ] {
        let (a, b) = (
            bare.call_tool("ping", arguments.clone()).await,
            derived.call_tool("ping", arguments.clone()).await,
        );
        assert!(a.is_error(), "{arguments}: {}", a.render());
        assert_eq!(a.render(), b.render(), "{arguments}");
    }
}

// ---- `?` in a handler returning `Result<_, ToolError>`.

fn missing_file() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotFound, "ledger.csv: no such file")
}

/// Reads the ledger.
#[tool_action(name = "files.read")]
async fn read_with_question_mark() -> Result<String, ToolError> {
    Err(missing_file())?;
    Ok("read".into())
}

/// Reads the ledger.
#[tool_action(name = "files.read")]
async fn read_returning_io() -> Result<String, std::io::Error> {
    Err(missing_file())
}

/// Parses the ledger.
#[tool_action(name = "files.parse")]
async fn parse_with_question_mark() -> Result<Value, ToolError> {
    Ok(serde_json::from_str::<Value>("{not json")?)
}

/// Parses the ledger.
#[tool_action(name = "files.parse")]
async fn parse_returning_json() -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Value>("{not json")
}

/// Charges.
#[tool_action(name = "files.charge")]
async fn charge_with_question_mark() -> Result<String, ToolError> {
    Err(anyhow::anyhow!("db down").context("while charging"))?;
    Ok("charged".into())
}

/// Charges.
#[tool_action(name = "files.charge")]
async fn charge_returning_anyhow() -> anyhow::Result<String> {
    Err(anyhow::anyhow!("db down").context("while charging"))
}

/// Finds.
#[tool_action(name = "files.find")]
async fn find_with_question_mark() -> Result<String, ToolError> {
    Err(
        anyhow::Error::new(error(NOT_FOUND, "No such ledger").recovery("List ledgers first"))
            .context("while finding"),
    )?;
    Ok("found".into())
}

/// Reads the ledger, with the author's own recovery.
#[tool_action(name = "files.edited")]
async fn edited() -> Result<String, ToolError> {
    std::fs::read_to_string("/nonexistent/fusion/ledger.csv")
        .map_err(|e| ToolError::from(e).recovery("Create the ledger first"))
}

#[tokio::test]
async fn question_mark_answers_what_returning_the_error_answers() {
    for hide in [false, true] {
        let with = kit(Server::builder()
            .hide_internal_errors(hide)
            .action::<ReadWithQuestionMarkAction>()
            .action::<ParseWithQuestionMarkAction>()
            .action::<ChargeWithQuestionMarkAction>());
        let without = kit(Server::builder()
            .hide_internal_errors(hide)
            .action::<ReadReturningIoAction>()
            .action::<ParseReturningJsonAction>()
            .action::<ChargeReturningAnyhowAction>());
        for (tool, message) in [
            ("files_read", "ledger.csv: no such file"),
            ("files_parse", "key must be a string"),
            ("files_charge", "while charging"),
        ] {
            let (a, b) = (
                with.call_tool(tool, json!({})).await,
                without.call_tool(tool, json!({})).await,
            );
            assert!(a.is_error(), "{tool}: {}", a.render());
            let e = a.expect_error(INTERNAL_ERROR.as_str());
            assert_eq!(e.recovery.as_deref(), Some(INTERNAL_RECOVERY), "{tool}");
            assert_eq!(a.render(), b.render(), "{tool}, hidden: {hide}");
            assert_eq!(
                a.render().contains(message),
                !hide,
                "{tool}: {}",
                a.render()
            );
        }
    }
}

#[tokio::test]
async fn a_tool_error_inside_anyhow_passes_intact_and_an_edited_one_as_edited() {
    let kit = kit(Server::builder()
        .action::<FindWithQuestionMarkAction>()
        .action::<EditedAction>());
    let found = kit.call_tool("files_find", json!({})).await;
    let e = found.expect_error(NOT_FOUND.as_str());
    assert_eq!(e.message, "No such ledger");
    assert_eq!(e.recovery.as_deref(), Some("List ledgers first"));

    let edited = kit.call_tool("files_edited", json!({})).await;
    let e = edited.expect_error(INTERNAL_ERROR.as_str());
    assert_eq!(e.recovery.as_deref(), Some("Create the ledger first"));
    // The author chose the envelope: it carries no internal text.
    assert!(
        !edited.render().contains("No such file"),
        "{}",
        edited.render()
    );
    assert!(
        !edited.render().contains("nonexistent"),
        "{}",
        edited.render()
    );
}

#[test]
fn a_converted_error_on_its_own_shows_no_internal_text() {
    let e = ToolError::from(missing_file());
    assert_eq!(e.code().as_str(), INTERNAL_ERROR.as_str());
    assert_eq!(
        ToolCallError::from_error("files_read", &e)
            .recovery
            .as_deref(),
        Some(INTERNAL_RECOVERY)
    );
    assert!(!e.render().contains("ledger.csv"), "{}", e.render());
    let inner = error(NOT_FOUND, "gone");
    assert_eq!(ToolError::from(anyhow::Error::new(inner.clone())), inner);
}

/// Pings the network.
#[tool_action(name = "net.ping")]
async fn net_ping() -> Result<String, ToolError> {
    Ok("pong".into())
}

/// What to echo.
#[derive(serde::Deserialize, serde::Serialize, ToolInput)]
struct Echo {
    /// The text.
    text: String,
}

/// Echoes the text.
#[tool_action(name = "net.echo")]
async fn net_echo(input: Echo) -> Result<String, ToolError> {
    Ok(input.text)
}

#[tokio::test]
async fn an_action_without_input_is_a_member_of_a_grouped_tool() {
    let kit = kit(Server::builder()
        .action::<NetPingAction>()
        .action::<NetEchoAction>()
        .grouped());
    assert_eq!(kit.tool_names().await, ["net"]);
    let ping = kit.call_tool("net", json!({"action": "ping"})).await;
    assert_eq!(ping.output::<String>(), "pong");
    let echo = kit
        .call_tool("net", json!({"action": "echo", "text": "hi"}))
        .await;
    assert_eq!(echo.output::<String>(), "hi");
    let refused = kit
        .call_tool("net", json!({"action": "ping", "text": "hi"}))
        .await;
    assert!(refused.is_error(), "{}", refused.render());
    assert!(refused.render().contains("text"), "{}", refused.render());
}
