//! Progress and log notifications from handlers, seen by an `rmcp` client whose handler
//! records every notification: `Context::progress` with and without a progress token,
//! `Context::log` filtered by the session's `logging/setLevel`, one level per session.

#![allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion_runtime::mcp::McpHandler;
use fusion_runtime::{Context, LogLevel, Server, ToolError, ToolInput, tool_action};
use fusion_tests::raw_stdio::RawStdio;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde::Deserialize;
use serde_json::{Value, json};

/// How many steps to work through.
#[derive(Deserialize, ToolInput)]
struct Steps {
    /// Steps, 1 to 10.
    #[fusion(range(min = 1, max = 10))]
    steps: u32,
}

/// Works through its steps, reporting progress after each, then logs once at four levels.
#[tool_action(name = "work.run")]
async fn run(input: Steps, cx: Context) -> Result<Value, ToolError> {
    let total = f64::from(input.steps);
    let mut progress_sent = 0;
    for i in 0..=input.steps {
        let message = format!("step {i} of {}", input.steps);
        if cx.progress(f64::from(i), Some(total), Some(&message)).await {
            progress_sent += 1;
        }
    }
    let mut logged = Vec::new();
    for level in [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ] {
        if cx
            .log(
                level,
                json!({ "level": level.as_str(), "steps": input.steps }),
            )
            .await
        {
            logged.push(level.as_str());
        }
    }
    Ok(json!({ "progress_sent": progress_sent, "logged": logged }))
}

#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl Recorder {
    fn progress(&self) -> Vec<ProgressNotificationParam> {
        self.progress.lock().map(|v| v.clone()).unwrap_or_default()
    }

    fn logs(&self) -> Vec<LoggingMessageNotificationParam> {
        self.logs.lock().map(|v| v.clone()).unwrap_or_default()
    }

    fn log_levels(&self) -> Vec<LoggingLevel> {
        self.logs().into_iter().map(|l| l.level).collect()
    }

    fn clear(&self) {
        if let Ok(mut p) = self.progress.lock() {
            p.clear();
        }
        if let Ok(mut l) = self.logs.lock() {
            l.clear();
        }
    }

    /// Notifications are handled off the response path: wait until `n` progress and `m` log
    /// notifications are in (a loaded machine may take a while: the bound is 10 s), then a
    /// little more to catch extra ones.
    async fn settle(&self, n: usize, m: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.progress().len() < n || self.logs().len() < m {
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Ok(mut p) = self.progress.lock() {
            p.push(params);
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Ok(mut l) = self.logs.lock() {
            l.push(params);
        }
    }
}

type Client = RunningService<RoleClient, Recorder>;

fn server() -> Server {
    Server::builder()
        .name("notifications")
        .action::<RunAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A client connected to a fresh session of `server` over an in-memory byte stream.
async fn connect(server: &Server) -> (Client, Recorder) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = McpHandler::new(server.clone());
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let recorder = Recorder::default();
    let client = match tokio::time::timeout(
        Duration::from_secs(10),
        recorder.clone().serve(client_io),
    )
    .await
    {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => panic!("handshake: {e}"),
        Err(_) => panic!("handshake timed out"),
    };
    (client, recorder)
}

async fn call(client: &Client, steps: u32) -> Value {
    let params = CallToolRequestParams::new("work_run").with_arguments(
        json!({ "steps": steps })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    let result: CallToolResult =
        tokio::time::timeout(Duration::from_secs(10), client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("call timed out"))
            .unwrap_or_else(|e| panic!("call: {e}"));
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_else(|| panic!("no text: {:?}", result.content));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

async fn set_level(client: &Client, level: LoggingLevel) {
    client
        .set_level(SetLevelRequestParams::new(level))
        .await
        .unwrap_or_else(|e| panic!("logging/setLevel: {e}"));
}

#[tokio::test]
async fn the_server_advertises_logging() {
    let (client, _) = connect(&server()).await;
    let info = client
        .peer_info()
        .unwrap_or_else(|| panic!("no server info"));
    assert!(info.capabilities.logging.is_some(), "{info:?}");
    assert!(info.capabilities.tools.is_some());
}

#[tokio::test]
async fn an_rmcp_client_receives_progress_in_order() {
    // rmcp's client puts a progress token of its own on every request.
    let (client, recorder) = connect(&server()).await;
    let out = call(&client, 3).await;
    assert_eq!(out["progress_sent"], 4);
    recorder.settle(4, 3).await;
    let progress = recorder.progress();
    let seen: Vec<(f64, Option<f64>, Option<String>)> = progress
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    assert_eq!(
        seen,
        (0..=3)
            .map(|i| (f64::from(i), Some(3.0), Some(format!("step {i} of 3"))))
            .collect::<Vec<_>>()
    );
    assert!(
        progress
            .iter()
            .all(|p| p.progress_token == progress[0].progress_token)
    );
}

/// A 2025-06-18 session in raw JSON-RPC lines, to control `_meta` exactly and see the wire.
async fn raw_client(server: Server) -> RawStdio {
    let mut raw = RawStdio::serve(server);
    let init = raw.initialize("2025-06-18", json!({})).await;
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    raw
}

fn progress_params(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"].clone())
        .collect()
}

#[tokio::test]
async fn progress_carries_the_token_the_client_sent_and_comes_before_the_result() {
    let mut client = raw_client(server()).await;
    let (before, response) = client
        .request(
            2,
            "tools/call",
            json!({ "name": "work_run", "arguments": { "steps": 2 }, "_meta": { "progressToken": "job-7" } }),
        )
        .await;
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert_eq!(
        progress_params(&before),
        [
            json!({ "progressToken": "job-7", "progress": 0.0, "total": 2.0, "message": "step 0 of 2" }),
            json!({ "progressToken": "job-7", "progress": 1.0, "total": 2.0, "message": "step 1 of 2" }),
            json!({ "progressToken": "job-7", "progress": 2.0, "total": 2.0, "message": "step 2 of 2" }),
        ]
    );

    let (before, _) = client
        .request(
            3,
            "tools/call",
            json!({ "name": "work_run", "arguments": { "steps": 1 }, "_meta": { "progressToken": 42 } }),
        )
        .await;
    let tokens: Vec<Value> = progress_params(&before)
        .iter()
        .map(|p| p["progressToken"].clone())
        .collect();
    assert_eq!(tokens, [json!(42), json!(42)]);
}

#[tokio::test]
async fn no_progress_token_means_no_progress_notifications() {
    let mut client = raw_client(server()).await;
    let (before, response) = client
        .request(
            2,
            "tools/call",
            json!({ "name": "work_run", "arguments": { "steps": 2 } }),
        )
        .await;
    assert!(progress_params(&before).is_empty(), "{before:?}");
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{response}"));
    let out: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(out["progress_sent"], 0);
    // The default level lets info and above through, before any logging/setLevel.
    let levels: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| &m["params"]["level"])
        .collect();
    assert_eq!(levels, [&json!("info"), &json!("warning"), &json!("error")]);
}

#[tokio::test]
async fn logs_start_at_info_and_follow_set_level() {
    let (client, recorder) = connect(&server()).await;

    let out = call(&client, 1).await;
    assert_eq!(out["logged"], json!(["info", "warning", "error"]));
    recorder.settle(0, 3).await;
    assert_eq!(
        recorder.log_levels(),
        [
            LoggingLevel::Info,
            LoggingLevel::Warning,
            LoggingLevel::Error
        ]
    );
    let first = &recorder.logs()[0];
    assert_eq!(first.logger.as_deref(), Some("work.run"));
    assert_eq!(first.data, json!({ "level": "info", "steps": 1 }));

    recorder.clear();
    set_level(&client, LoggingLevel::Debug).await;
    let out = call(&client, 1).await;
    assert_eq!(out["logged"], json!(["debug", "info", "warning", "error"]));
    recorder.settle(0, 4).await;
    assert_eq!(recorder.logs().len(), 4);
    assert_eq!(recorder.log_levels()[0], LoggingLevel::Debug);

    recorder.clear();
    set_level(&client, LoggingLevel::Error).await;
    let out = call(&client, 1).await;
    assert_eq!(out["logged"], json!(["error"]));
    recorder.settle(0, 1).await;
    assert_eq!(recorder.log_levels(), [LoggingLevel::Error]);
}

#[tokio::test]
async fn each_session_keeps_its_own_level() {
    let server = server();
    let (quiet, quiet_log) = connect(&server).await;
    let (chatty, chatty_log) = connect(&server).await;
    set_level(&quiet, LoggingLevel::Emergency).await;
    set_level(&chatty, LoggingLevel::Debug).await;

    assert_eq!(call(&quiet, 1).await["logged"], json!([]));
    assert_eq!(
        call(&chatty, 1).await["logged"],
        json!(["debug", "info", "warning", "error"])
    );
    chatty_log.settle(0, 4).await;
    assert!(quiet_log.logs().is_empty(), "{:?}", quiet_log.logs());
    assert_eq!(chatty_log.logs().len(), 4);
}

#[tokio::test]
async fn in_process_calls_send_nothing_and_still_succeed() {
    let out = server().call_json("work_run", json!({ "steps": 2 })).await;
    assert!(!out.is_error);
    let text = out.texts().next().unwrap_or_else(|| panic!("{out:?}"));
    let value: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(value, json!({ "progress_sent": 0, "logged": [] }));
}
