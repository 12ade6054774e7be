//! Prompts, resources and completions end to end: an `rmcp` client talking to the billing
//! example over stdio (the spawned `billing-server` binary) and streamable HTTP (stateful and
//! stateless), and raw JSON-RPC lines for what each protocol version must see on the wire.

use std::process::Stdio;
use std::time::Duration;

use fusion_runtime::mcp::{HttpOptions, spawn_http};
use fusion_tests::clients::{self, Client, billing_command, over_http, over_stdio};
use fusion_tests::raw_stdio::RawStdio;
use rmcp::ErrorData;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ContentBlock, GetPromptRequestParams,
    ReadResourceRequestParams, Reference, ResourceContents, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::Child;

const LIMIT: Duration = Duration::from_secs(20);

async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    clients::bounded(what, LIMIT, f).await
}

fn billing() -> fusion_runtime::Server {
    examples::billing::server().unwrap_or_else(|e| panic!("{e}"))
}

fn mcp_error<T: std::fmt::Debug>(r: Result<T, ServiceError>) -> ErrorData {
    match r {
        Err(ServiceError::McpError(e)) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn object(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

async fn prompt_checks(client: &Client) {
    let prompts = bounded("prompts/list", client.list_prompts(None))
        .await
        .expect("prompts/list");
    let reminder = prompts
        .prompts
        .iter()
        .find(|p| p.name == "billing_payment_reminder")
        .unwrap_or_else(|| panic!("no reminder prompt: {prompts:?}"));
    assert_eq!(reminder.title.as_deref(), Some("Draft a payment reminder"));
    let args = reminder.arguments.as_deref().unwrap_or_default();
    let shape: Vec<(&str, Option<bool>)> =
        args.iter().map(|a| (a.name.as_str(), a.required)).collect();
    assert_eq!(
        shape,
        [("invoice_id", Some(true)), ("status", Some(false))],
        "{args:?}"
    );
    assert!(
        args[0]
            .description
            .as_deref()
            .is_some_and(|d| d.contains("inv_2026_0001")),
        "{args:?}"
    );

    let got = bounded(
        "prompts/get",
        client.get_prompt(
            GetPromptRequestParams::new("billing_payment_reminder")
                .with_arguments(object(json!({"invoice_id": "inv_2026_0004"}))),
        ),
    )
    .await
    .expect("prompts/get");
    assert_eq!(
        got.description.as_deref(),
        Some("Reminder for inv_2026_0004")
    );
    assert_eq!(got.messages.len(), 3, "{got:?}");
    match &got.messages[0].content {
        ContentBlock::Text(t) => {
            assert!(
                t.text.contains("nothing is owed"),
                "a void invoice: {}",
                t.text
            )
        }
        other => panic!("text first: {other:?}"),
    }
    match &got.messages[1].content {
        ContentBlock::Resource(resource) => match &resource.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                assert_eq!(uri, "billing://invoices/inv_2026_0004");
                assert!(text.contains("Umbrella"), "{text}");
            }
            other => panic!("{other:?}"),
        },
        other => panic!("an embedded resource second: {other:?}"),
    }

    // Bad arguments: -32602 with the tool's <validation_error> and the issues as data.
    let e = mcp_error(
        bounded(
            "prompts/get",
            client.get_prompt(
                GetPromptRequestParams::new("billing_payment_reminder")
                    .with_arguments(object(json!({"invoice_id": "inv_26", "tone": "x"}))),
            ),
        )
        .await,
    );
    assert_eq!(e.code.0, -32602, "{e:?}");
    assert!(
        e.message
            .starts_with("<validation_error action=\"billing_payment_reminder\">"),
        "{}",
        e.message
    );
    assert!(
        e.message
            .contains("<field name=\"invoice_id\">Invalid format. You sent: 'inv_26'."),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("Unrecognized key 'tone'"),
        "{}",
        e.message
    );
    let data = e.data.unwrap_or_default();
    assert_eq!(data["prompt"], "billing_payment_reminder");
    assert_eq!(data["issues"][0]["code"], "unrecognized_keys", "{data}");
    assert_eq!(data["issues"][1]["field"], "invoice_id", "{data}");
    assert_eq!(data["issues"][1]["code"], "invalid_format", "{data}");

    // A required argument missing.
    let e = mcp_error(
        bounded(
            "prompts/get",
            client.get_prompt(GetPromptRequestParams::new("billing_payment_reminder")),
        )
        .await,
    );
    assert_eq!(e.code.0, -32602);
    assert!(
        e.message
            .contains("<field name=\"invoice_id\">Required field is missing."),
        "{}",
        e.message
    );

    // An unknown prompt gets the closest name.
    let e = mcp_error(
        bounded(
            "prompts/get",
            client.get_prompt(GetPromptRequestParams::new("billing_payment_remindr")),
        )
        .await,
    );
    assert_eq!(e.code.0, -32602);
    assert_eq!(
        e.message,
        "Unknown prompt 'billing_payment_remindr'. Did you mean 'billing_payment_reminder'?"
    );
    assert_eq!(
        e.data.unwrap_or_default()["closest"],
        "billing_payment_reminder"
    );

    // The handler's NOT_FOUND is invalid params, carrying its envelope.
    let e = mcp_error(
        bounded(
            "prompts/get",
            client.get_prompt(
                GetPromptRequestParams::new("billing_payment_reminder")
                    .with_arguments(object(json!({"invoice_id": "inv_2026_9999"}))),
            ),
        )
        .await,
    );
    assert_eq!(e.code.0, -32602);
    assert!(
        e.message.starts_with("<tool_error code=\"NOT_FOUND\""),
        "{}",
        e.message
    );
}

async fn resource_checks(client: &Client) {
    let listed = bounded("resources/list", client.list_resources(None))
        .await
        .expect("resources/list");
    let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["billing://policy"]);
    assert_eq!(
        listed.resources[0].mime_type.as_deref(),
        Some("text/markdown")
    );
    let templates = bounded(
        "resources/templates/list",
        client.list_resource_templates(None),
    )
    .await
    .expect("templates");
    assert_eq!(templates.resource_templates.len(), 1);
    assert_eq!(
        templates.resource_templates[0].uri_template,
        "billing://invoices/{id}"
    );

    let read = bounded(
        "resources/read",
        client.read_resource(ReadResourceRequestParams::new(
            "billing://invoices/inv_2026_0002",
        )),
    )
    .await
    .expect("read");
    match &read.contents[..] {
        [
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            },
        ] => {
            assert_eq!(uri, "billing://invoices/inv_2026_0002");
            assert_eq!(mime_type.as_deref(), Some("application/json"));
            let invoice: Value = serde_json::from_str(text).expect("JSON contents");
            assert_eq!(invoice["customer"], "Globex");
            assert_eq!(invoice["status"], "paid");
        }
        other => panic!("{other:?}"),
    }

    // The handler's NOT_FOUND is the protocol's resource-not-found (-32002 for 2025 clients).
    let e = mcp_error(
        bounded(
            "read",
            client.read_resource(ReadResourceRequestParams::new(
                "billing://invoices/inv_2026_9999",
            )),
        )
        .await,
    );
    assert_eq!(e.code.0, -32002, "{e:?}");
    assert!(e.message.contains("No invoice with ID inv_2026_9999"));
    let data = e.data.unwrap_or_default();
    assert_eq!(data["uri"], "billing://invoices/inv_2026_9999");
    assert!(
        data["recovery"]
            .as_str()
            .is_some_and(|r| r.contains("resources/templates/list")),
        "{data}"
    );

    // A parameter the template's type refuses: the same <validation_error> as a tool's.
    let e = mcp_error(
        bounded(
            "read",
            client.read_resource(ReadResourceRequestParams::new("billing://invoices/nope")),
        )
        .await,
    );
    assert_eq!(e.code.0, -32602);
    assert!(
        e.message
            .contains("<field name=\"id\">Invalid format. You sent: 'nope'."),
        "{}",
        e.message
    );

    // No resource at all.
    let e = mcp_error(
        bounded(
            "read",
            client.read_resource(ReadResourceRequestParams::new("billing://nothing/here")),
        )
        .await,
    );
    assert_eq!(e.code.0, -32002);
    assert!(
        e.message
            .starts_with("Resource not found: 'billing://nothing/here'.")
    );
}

async fn completion_checks(client: &Client) {
    let complete = |r: Reference, name: &str, value: &str| {
        client.complete(CompleteRequestParams::new(
            r,
            ArgumentInfo::new(name, value),
        ))
    };
    let status = bounded(
        "complete",
        complete(
            Reference::for_prompt("billing_payment_reminder"),
            "status",
            "",
        ),
    )
    .await
    .expect("complete");
    assert_eq!(status.completion.values, ["open", "paid", "void"]);
    assert_eq!(status.completion.total, Some(3));
    let status = bounded(
        "complete",
        complete(
            Reference::for_prompt("billing_payment_reminder"),
            "status",
            "V",
        ),
    )
    .await
    .expect("complete");
    assert_eq!(status.completion.values, ["void"]);
    assert_eq!(status.completion.has_more, Some(false));

    // A custom completer: invoice IDs from the store, for the prompt and the template.
    let ids = bounded(
        "complete",
        complete(
            Reference::for_prompt("billing_payment_reminder"),
            "invoice_id",
            "inv_2026_000",
        ),
    )
    .await
    .expect("complete");
    assert_eq!(ids.completion.values.len(), 5, "{ids:?}");
    let ids = bounded(
        "complete",
        complete(
            Reference::for_resource("billing://invoices/{id}"),
            "id",
            "inv_2026_0003",
        ),
    )
    .await
    .expect("complete");
    assert_eq!(ids.completion.values, ["inv_2026_0003"]);

    let e = mcp_error(
        bounded(
            "complete",
            complete(
                Reference::for_prompt("billing_payment_reminder"),
                "colour",
                "",
            ),
        )
        .await,
    );
    assert_eq!(e.code.0, -32602);
    assert!(
        e.message.contains("has no argument 'colour'"),
        "{}",
        e.message
    );
    let e = mcp_error(
        bounded(
            "complete",
            complete(Reference::for_prompt("nope"), "status", ""),
        )
        .await,
    );
    assert_eq!(e.code.0, -32602);
}

#[tokio::test]
async fn prompts_resources_and_completions_over_stdio() {
    let client = over_stdio(billing_command(env!("CARGO_BIN_EXE_billing-server"))).await;
    let caps = client
        .peer_info()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    assert!(caps.prompts.is_some(), "{caps:?}");
    assert_eq!(caps.resources.and_then(|r| r.subscribe), Some(true));
    assert!(caps.completions.is_some());
    prompt_checks(&client).await;
    resource_checks(&client).await;
    completion_checks(&client).await;

    #[allow(deprecated)] // resources/subscribe is what 2025 clients speak.
    {
        bounded(
            "subscribe",
            client.subscribe(SubscribeRequestParams::new(
                "billing://invoices/inv_2026_0001",
            )),
        )
        .await
        .expect("subscribe to a template URI");
        bounded(
            "unsubscribe",
            client.unsubscribe(UnsubscribeRequestParams::new(
                "billing://invoices/inv_2026_0001",
            )),
        )
        .await
        .expect("unsubscribe");
        let e = mcp_error(
            bounded(
                "subscribe",
                client.subscribe(SubscribeRequestParams::new("billing://nothing")),
            )
            .await,
        );
        assert_eq!(e.code.0, -32002);

        // At most MAX_SUBSCRIPTIONS URIs per session; the one past it is refused.
        for i in 0..fusion_runtime::mcp::MAX_SUBSCRIPTIONS {
            client
                .subscribe(SubscribeRequestParams::new(format!(
                    "billing://invoices/inv_2026_{i:04}"
                )))
                .await
                .unwrap_or_else(|e| panic!("subscription {i}: {e}"));
        }
        let e = mcp_error(
            client
                .subscribe(SubscribeRequestParams::new("billing://policy"))
                .await,
        );
        assert_eq!(e.code.0, -32602);
        assert!(
            e.message.contains("unsubscribe from one first"),
            "{}",
            e.message
        );
        // Subscribing again to a URI already held is fine.
        client
            .subscribe(SubscribeRequestParams::new(
                "billing://invoices/inv_2026_0001",
            ))
            .await
            .expect("already subscribed");
    }
    let _ = client.cancel().await;
}

#[tokio::test]
async fn prompts_resources_and_completions_over_http() {
    for stateless in [false, true] {
        let (client, running) =
            over_http(billing(), HttpOptions::default().stateless(stateless)).await;
        prompt_checks(&client).await;
        resource_checks(&client).await;
        completion_checks(&client).await;
        let _ = client.cancel().await;
        let _ = bounded("shutdown", running.shutdown()).await;
    }
}

#[tokio::test]
async fn listings_are_identical_on_every_request() {
    let client = over_stdio(billing_command(env!("CARGO_BIN_EXE_billing-server"))).await;
    let a = client.list_prompts(None).await.expect("list");
    let b = client.list_prompts(None).await.expect("list");
    assert_eq!(
        serde_json::to_string(&a).expect("json"),
        serde_json::to_string(&b).expect("json")
    );
    let _ = client.cancel().await;
}

/// A billing server spoken to in raw JSON-RPC lines over its stdio.
struct Raw {
    child: Child,
    io: RawStdio,
}

impl Raw {
    fn spawn() -> Self {
        let mut child = billing_command(env!("CARGO_BIN_EXE_billing-server"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn billing-server: {e}"));
        let stdin = child.stdin.take().expect("stdin piped");
        let stdout = child.stdout.take().expect("stdout piped");
        Raw {
            child,
            io: RawStdio::over(stdout, stdin),
        }
    }

    /// The response to a request.
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.io.request(id, method, params).await.1
    }

    async fn initialize(&mut self, version: &str) {
        let answer = self.io.initialize(version, json!({})).await;
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
    }

    async fn close(mut self) {
        self.io.close();
        let _ = bounded("exit", self.child.wait()).await;
    }
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    })
}

#[tokio::test]
async fn a_2026_client_gets_result_types_and_invalid_params_for_a_missing_resource() {
    let mut raw = Raw::spawn();
    let answer = raw
        .request(
            1,
            "prompts/get",
            json!({"_meta": modern_meta(), "name": "billing_payment_reminder", "arguments": {"invoice_id": "inv_2026_0001", "status": "open"}}),
        )
        .await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["messages"][0]["role"], "user", "{answer}");

    let answer = raw
        .request(
            2,
            "resources/read",
            json!({"_meta": modern_meta(), "uri": "billing://invoices/inv_2026_0001"}),
        )
        .await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert!(answer["result"]["ttlMs"].is_u64(), "{answer}");
    assert_eq!(
        answer["result"]["contents"][0]["uri"],
        "billing://invoices/inv_2026_0001"
    );

    // Resource not found is -32602 in 2026-07-28, with the URI and the recovery kept.
    let answer = raw
        .request(
            3,
            "resources/read",
            json!({"_meta": modern_meta(), "uri": "billing://invoices/inv_2026_9999"}),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["data"]["uri"],
        "billing://invoices/inv_2026_9999"
    );

    let answer = raw
        .request(
            4,
            "completion/complete",
            json!({"_meta": modern_meta(), "ref": {"type": "ref/prompt", "name": "billing_payment_reminder"}, "argument": {"name": "status", "value": "o"}}),
        )
        .await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["completion"]["values"], json!(["open"]));
    raw.close().await;
}

#[tokio::test]
async fn a_2025_client_gets_no_result_type_and_the_resource_not_found_code() {
    for version in ["2025-06-18", "2025-11-25"] {
        let mut raw = Raw::spawn();
        raw.initialize(version).await;
        let answer = raw
            .request(
                1,
                "prompts/get",
                json!({"name": "billing_payment_reminder", "arguments": {"invoice_id": "inv_2026_0001"}}),
            )
            .await;
        assert!(answer["result"]["messages"].is_array(), "{answer}");
        assert!(answer["result"].get("resultType").is_none(), "{answer}");
        let answer = raw
            .request(
                2,
                "resources/read",
                json!({"uri": "billing://invoices/inv_2026_9999"}),
            )
            .await;
        assert_eq!(answer["error"]["code"], -32002, "{version}: {answer}");
        assert_eq!(
            answer["error"]["data"]["uri"],
            "billing://invoices/inv_2026_9999"
        );
        // Params rmcp cannot read, for a method the server serves: Invalid params, not
        // Method not found.
        let answer = raw.request(3, "prompts/get", json!({"name": 5})).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let answer = raw.request(4, "resources/read", json!({})).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        raw.close().await;
    }
}

/// One HTTP POST on a new connection (`Connection: close`): the status and the JSON-RPC
/// message of the body (plain JSON, or the last `data:` line of an SSE stream).
async fn post(addr: std::net::SocketAddr, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
             content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
             content-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        stream.write_all(request.as_bytes()).await?;
        let mut raw = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut raw).await?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&raw).into_owned())
    };
    let text = bounded("POST", exchange)
        .await
        .unwrap_or_else(|e| panic!("POST: {e}"));
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let message = text
        .lines()
        .rev()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .find_map(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .filter(Value::is_object)
        })
        .unwrap_or_else(|| panic!("no JSON-RPC message in {text:?}"));
    (status, message)
}

#[tokio::test]
async fn a_2026_client_over_stateless_http_reads_prompts_and_resources() {
    let server = examples::billing::server().unwrap_or_else(|e| panic!("{e}"));
    let running = spawn_http(
        server,
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default().stateless(true),
    )
    .await
    .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = running.local_addr;
    let headers = |method: &'static str, name: &'static str| {
        [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
            ("mcp-name", name),
        ]
    };
    let (status, answer) = post(
        addr,
        &headers("prompts/get", "billing_payment_reminder"),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
            "_meta": modern_meta(), "name": "billing_payment_reminder",
            "arguments": {"invoice_id": "inv_2026_0002"}}}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert!(
        answer["result"]["messages"][0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("thank-you")),
        "a paid invoice: {answer}"
    );

    let (_, answer) = post(
        addr,
        &headers("resources/read", "billing://invoices/inv_2026_9999"),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {
            "_meta": modern_meta(), "uri": "billing://invoices/inv_2026_9999"}}),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["code"], "NOT_FOUND", "{answer}");

    // The body names another prompt than the header: rmcp's header check still runs.
    let (status, answer) = post(
        addr,
        &headers("prompts/get", "something_else"),
        &json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {
            "_meta": modern_meta(), "name": "billing_payment_reminder",
            "arguments": {"invoice_id": "inv_2026_0002"}}}),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], -32020, "{answer}");
    let _ = bounded("shutdown", running.shutdown()).await;
}

#[tokio::test]
async fn a_server_without_prompts_or_resources_answers_method_not_found() {
    let empty = fusion_runtime::Server::builder()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (client, running) = over_http(empty, HttpOptions::default().stateless(true)).await;
    let caps = client
        .peer_info()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    assert!(caps.prompts.is_none() && caps.resources.is_none() && caps.completions.is_none());
    assert_eq!(mcp_error(client.list_prompts(None).await).code.0, -32601);
    assert_eq!(
        mcp_error(
            client
                .read_resource(ReadResourceRequestParams::new("x://y"))
                .await
        )
        .code
        .0,
        -32601
    );
    let _ = client.cancel().await;
    let _ = bounded("shutdown", running.shutdown()).await;
}
