//! Visibility at runtime (issue 33), over raw JSON-RPC on a real streamable HTTP server, for
//! a 2025 session (stateful, its GET stream) and 2026-07-28 requests (a `subscriptions/listen`
//! stream): a disabled tool leaves `tools/list` and answers
//! `UNKNOWN_ACTION` with the closest *enabled* name (under every spelling); prompts and
//! resources likewise leave their lists and answer as unknown; each change is announced
//! (`list_changed` to the session, on the `subscriptions/listen` stream); the builder's rule
//! starts a tool disabled and refuses a name the server does not have.

use std::time::Duration;

use fusion_runtime::client::parse_tool_error;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::server::{BuildError, Item};
use fusion_runtime::{
    PromptReply, ResourceContent, Server, ToolError, ToolInput, prompt, resource, tool_action,
};
use fusion_tests::raw_http::{self, Streaming};
use fusion_tests::raw_stdio::WAIT;
use serde::Deserialize;
use serde_json::{Value, json};

/// An invoice's ID.
#[derive(Deserialize, ToolInput)]
struct Id {
    /// The invoice, e.g. `a`.
    #[fusion(pattern = "^[a-z]{1,8}$")]
    id: String,
}

/// Gets one invoice.
#[tool_action(name = "billing.get_invoice")]
async fn get_invoice(input: Id) -> Result<Value, ToolError> {
    Ok(json!({ "invoice": input.id }))
}

/// Gets several invoices.
#[tool_action(name = "billing.get_invoices")]
async fn get_invoices(input: Id) -> Result<Value, ToolError> {
    Ok(json!({ "invoices": [input.id] }))
}

/// Voids an invoice.
#[tool_action(name = "billing.void")]
async fn void(input: Id) -> Result<Value, ToolError> {
    Ok(json!({ "voided": input.id }))
}

/// One document.
#[resource(template = "test://docs/{id}", name = "doc", mime = "text/plain")]
async fn doc(d: Id) -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(format!("document {}", d.id)))
}

/// The index.
#[resource(uri = "test://index", name = "index", mime = "text/plain")]
async fn index() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("a, b"))
}

/// Says hello.
#[prompt]
async fn hello() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("hello"))
}

fn builder() -> fusion_runtime::ServerBuilder {
    Server::builder()
        .name("visibility")
        .action::<GetInvoiceAction>()
        .action::<GetInvoicesAction>()
        .action::<VoidAction>()
        .resource::<DocResource>()
        .resource::<IndexResource>()
        .prompt::<HelloPrompt>()
}

fn server() -> Server {
    builder().build().unwrap_or_else(|e| panic!("{e}"))
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    })
}

async fn http(server: Server, stateless: bool) -> HttpServer {
    spawn_http(
        server,
        "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        HttpOptions::default().stateless(stateless),
    )
    .await
    .unwrap_or_else(|e| panic!("bind: {e}"))
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        if tokio::time::Instant::now() >= deadline {
            panic!("{what} did not happen in {WAIT:?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One client of the HTTP server: a 2025-11-25 session (`session` set) or 2026-07-28
/// requests, and the stream its notifications come on.
struct Client {
    addr: std::net::SocketAddr,
    session: Option<String>,
    notes: Streaming,
    /// How many notifications were read from `notes`.
    seen: usize,
}

impl Client {
    /// A 2025-11-25 session: `initialize`, `notifications/initialized`, then its GET stream,
    /// open once a change sent through `server`'s notifier arrives on it.
    async fn legacy(addr: std::net::SocketAddr, server: &Server) -> Client {
        let session = Streaming::initialize(addr).await;
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let mut with_close = headers.to_vec();
        with_close.push(("connection", "close"));
        let mut ack = Streaming::open(addr, "POST", &with_close, Some(&initialized)).await;
        ack.until("HTTP/1.1 202").await;
        let notifier = server.notifier().clone();
        eventually("the session forwards changes", || notifier.listeners() == 1).await;
        let mut notes = Streaming::open(addr, "GET", &headers, None).await;
        notes.until("\r\n\r\n").await;
        // The GET stream is open once a change reaches it; what the priming sent is drained.
        let deadline = tokio::time::Instant::now() + WAIT;
        while notes.messages().is_empty() {
            assert!(tokio::time::Instant::now() < deadline, "no GET stream");
            notifier.tools_list_changed();
            let _ = notes
                .read_until(tokio::time::Instant::now() + Duration::from_millis(200))
                .await;
        }
        notes.during(Duration::from_millis(300)).await;
        let seen = notes.messages().len();
        Client {
            addr,
            session: Some(session),
            notes,
            seen,
        }
    }

    /// 2026-07-28 requests, their notifications on a `subscriptions/listen` (id 7) to every
    /// list change.
    async fn modern(addr: std::net::SocketAddr, server: &Server) -> Client {
        let body = json!({
            "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
            "params": {"_meta": meta(), "notifications": {
                "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
            }},
        });
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ];
        let mut notes = Streaming::open(addr, "POST", &headers, Some(&body)).await;
        notes.until("acknowledged").await;
        let notifier = server.notifier().clone();
        eventually("the listen holds its place", || notifier.listeners() == 1).await;
        let seen = notes.messages().len();
        Client {
            addr,
            session: None,
            notes,
            seen,
        }
    }

    fn is_modern(&self) -> bool {
        self.session.is_none()
    }

    /// The answer to one request.
    async fn request(&self, id: u64, method: &str, mut params: Value) -> Value {
        let version = if self.is_modern() {
            params["_meta"] = meta();
            "2026-07-28"
        } else {
            "2025-11-25"
        };
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", version),
        ];
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match &self.session {
            Some(s) => headers.push(("mcp-session-id", s)),
            None => {
                headers.push(("mcp-method", method));
                if let Some(n) = &name {
                    headers.push(("mcp-name", n));
                }
            }
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = raw_http::request(self.addr, "POST", "/mcp", &headers, &body.to_string())
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        response.message()
    }

    /// The method of the next notification, checked to belong to the listen on 2026-07-28.
    async fn told(&mut self) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.notes.messages().len() <= self.seen {
            let read = self.notes.read_until(deadline).await;
            assert!(read.is_some(), "no notification: {:?}", self.notes.text);
        }
        let m = self.notes.messages().swap_remove(self.seen);
        self.seen += 1;
        if self.is_modern() {
            assert_eq!(
                m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7,
                "{m}"
            );
        }
        m["method"].as_str().unwrap_or_default().to_owned()
    }

    /// Nothing more was sent within `wait`.
    async fn quiet(&mut self, wait: Duration) {
        self.notes.during(wait).await;
        let more = &self.notes.messages()[self.seen..];
        assert!(more.is_empty(), "unexpected: {more:?}");
    }
}

fn names(answer: &Value, list: &str, key: &str) -> Vec<String> {
    answer["result"][list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {answer}"))
        .iter()
        .map(|t| t[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The `UNKNOWN_ACTION` of a call to `name`: its closest name.
async fn refused(client: &Client, id: u64, name: &str) -> Option<String> {
    let answer = client
        .request(
            id,
            "tools/call",
            json!({"name": name, "arguments": {"id": "a"}}),
        )
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let e = parse_tool_error(text).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(e.code().as_str(), "UNKNOWN_ACTION", "{answer}");
    e.detail_value("closest").map(str::to_owned)
}

/// Everything one client sees of a disable and an enable of a tool, a prompt and a
/// resource template.
async fn walk(c: &mut Client, server: &Server) {
    let v = server.visibility().clone();
    let all = [
        "billing_get_invoice",
        "billing_get_invoices",
        "billing_void",
    ];
    let tools = c.request(10, "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), all);

    assert!(v.disable_tool("billing_get_invoice"));
    assert_eq!(c.told().await, "notifications/tools/list_changed");
    let tools = c.request(11, "tools/list", json!({})).await;
    assert_eq!(
        names(&tools, "tools", "name"),
        ["billing_get_invoices", "billing_void"]
    );
    // Disabled under both spellings; the closest *enabled* name is suggested.
    for (id, name) in [(12, "billing_get_invoice"), (13, "billing.get_invoice")] {
        assert_eq!(
            refused(c, id, name).await.as_deref(),
            Some("billing_get_invoices"),
            "{name}"
        );
    }
    // A typo of the disabled name does not lead to it either.
    assert_eq!(
        refused(c, 14, "billing_get_invoce").await.as_deref(),
        Some("billing_get_invoices")
    );
    // Disabling it again changes nothing and says nothing.
    assert!(!v.disable_tool("billing_get_invoice"));

    assert!(v.enable_tool("billing_get_invoice"));
    assert_eq!(c.told().await, "notifications/tools/list_changed");
    let tools = c.request(15, "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), all);
    let call = json!({"name": "billing_get_invoice", "arguments": {"id": "a"}});
    let answer = c.request(16, "tools/call", call).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");

    // Prompts.
    assert!(v.disable_prompt("hello"));
    assert_eq!(c.told().await, "notifications/prompts/list_changed");
    let answer = c.request(17, "prompts/list", json!({})).await;
    assert_eq!(names(&answer, "prompts", "name"), Vec::<String>::new());
    let answer = c.request(18, "prompts/get", json!({"name": "hello"})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Unknown prompt")),
        "{answer}"
    );
    assert!(v.enable_prompt("hello"));
    assert_eq!(c.told().await, "notifications/prompts/list_changed");
    let answer = c.request(19, "prompts/get", json!({"name": "hello"})).await;
    assert!(answer["result"]["messages"].is_array(), "{answer}");

    // Resources: a template, by its URI template.
    assert!(v.disable_resource("test://docs/{id}"));
    assert_eq!(c.told().await, "notifications/resources/list_changed");
    let answer = c.request(20, "resources/templates/list", json!({})).await;
    assert_eq!(
        names(&answer, "resourceTemplates", "name"),
        Vec::<String>::new()
    );
    let answer = c.request(21, "resources/list", json!({})).await;
    assert_eq!(names(&answer, "resources", "name"), ["index"]);
    let read = json!({"uri": "test://docs/a"});
    let answer = c.request(22, "resources/read", read.clone()).await;
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    assert!(v.enable_resource("test://docs/{id}"));
    assert_eq!(c.told().await, "notifications/resources/list_changed");
    let answer = c.request(23, "resources/read", read).await;
    assert_eq!(
        answer["result"]["contents"][0]["text"], "document a",
        "{answer}"
    );
    c.quiet(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_2025_session_sees_a_disabled_tool_prompt_and_resource_go_and_come_back() {
    let server = server();
    let running = http(server.clone(), false).await;
    let mut client = Client::legacy(running.local_addr, &server).await;
    walk(&mut client, &server).await;
    drop(client);
    let _ = running.shutdown().await;
}

#[tokio::test]
async fn a_2026_listen_is_told_of_each_change_and_the_lists_follow() {
    let server = server();
    let running = http(server.clone(), true).await;
    let mut client = Client::modern(running.local_addr, &server).await;
    walk(&mut client, &server).await;
    drop(client);
    let _ = running.shutdown().await;
}

#[tokio::test]
async fn the_builders_rule_starts_a_tool_disabled_and_refuses_an_unknown_name() {
    let server = builder()
        .disabled(Item::Tool, "billing_void")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!server.visibility().is_enabled(Item::Tool, "billing_void"));
    let running = http(server.clone(), false).await;
    let client = Client::legacy(running.local_addr, &server).await;
    let answer = client.request(1, "tools/list", json!({})).await;
    assert_eq!(
        names(&answer, "tools", "name"),
        ["billing_get_invoice", "billing_get_invoices"]
    );
    assert_eq!(refused(&client, 2, "billing_void").await, None);
    // The contract is the full one.
    assert_eq!(server.contracts().len(), 3);
    drop(client);
    let _ = running.shutdown().await;

    for (item, name) in [
        (Item::Tool, "billing_vod"),
        (Item::Prompt, "helo"),
        (Item::Resource, "test://docs/{name}"),
    ] {
        match builder().disabled(item, name).build() {
            Err(BuildError::Disabled(i, n)) => assert_eq!((i, n.as_str()), (item, name)),
            other => panic!("{name}: {other:?}"),
        }
    }
}
