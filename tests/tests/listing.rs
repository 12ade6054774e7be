//! Issue 33, steps 2–4, over raw JSON-RPC on a real streamable HTTP server, each for a 2025
//! request and a 2026-07-28 one: method middleware refuses `resources/read` with the
//! `<tool_error>` envelope and a list with readable text (and sees every method it wraps);
//! pages walk `tools/list`, `prompts/list` and `resources/list` whole; a forged, foreign,
//! oversized or stale cursor is `-32602`; icons are listed to 2025-11-25 and later clients
//! only; `hide_forbidden` lists each caller the tools it may call (over stdio as the embedding
//! code names the caller, over HTTP as its bearer token does — the principal method middleware
//! sees too); a call of a disabled tool is counted in the metrics as one no tool answers. The official TypeScript and Python clients page through the conformance example in
//! `tests/node/surface.test.mjs` and `tests/python/modern_client.py`.

use std::sync::{Arc, Mutex};

use fusion_runtime::auth::{Auth, AuthMode, JwtVerifier};
use fusion_runtime::client::{ToolCallError, parse_tool_error};
use fusion_runtime::mcp::{
    HttpOptions, HttpServer, MAX_CURSOR_BYTES, StdioOptions, serve_io, spawn_http,
};
use fusion_runtime::server::{
    BuildError, Icon, IconTheme, Item, MAX_PAGE_SIZE, Method, MethodNext, MethodRequest,
    method_middleware_fn,
};
use fusion_runtime::{
    Principal, PromptReply, ResourceContent, Server, ToolError, ToolInput, codes, error, prompt,
    resource, tool_action,
};
use fusion_tests::{raw_http, services};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// No arguments.
#[derive(Deserialize, ToolInput)]
struct Nothing {}

/// Tool one.
#[tool_action(name = "t.one")]
async fn one(_: Nothing) -> Result<Value, ToolError> {
    Ok(json!(1))
}

/// Tool two.
#[tool_action(name = "t.two")]
async fn two(_: Nothing) -> Result<Value, ToolError> {
    Ok(json!(2))
}

/// Tool three.
#[tool_action(name = "t.three")]
async fn three(_: Nothing) -> Result<Value, ToolError> {
    Ok(json!(3))
}

/// Tool four.
#[tool_action(name = "t.four")]
async fn four(_: Nothing) -> Result<Value, ToolError> {
    Ok(json!(4))
}

/// Tool five.
#[tool_action(name = "t.five")]
async fn five(_: Nothing) -> Result<Value, ToolError> {
    Ok(json!(5))
}

/// Says hello.
#[prompt]
async fn hello() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("hello"))
}

/// Says goodbye.
#[prompt]
async fn goodbye() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("goodbye"))
}

/// Says thanks.
#[prompt]
async fn thanks() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("thanks"))
}

/// The public index.
#[resource(uri = "test://index", name = "index", mime = "text/plain")]
async fn index() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("a, b"))
}

/// The changelog.
#[resource(uri = "test://changelog", name = "changelog", mime = "text/plain")]
async fn changelog() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("v1"))
}

/// Operators' notes.
#[resource(uri = "internal://notes", name = "notes", mime = "text/plain")]
async fn notes() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("secret"))
}

/// An invoice, with two icons declared: a URL, and an SVG `data:` URI for dark themes.
#[tool_action(
    name = "iconic.invoice",
    icon = "https://example.com/invoice.png",
    icon(
        src = "data:image/svg+xml;base64,PHN2Zy8+",
        mime_type = "image/svg+xml",
        sizes = "any",
        theme = "dark"
    )
)]
async fn iconic_invoice(_: Nothing) -> Result<Value, ToolError> {
    Ok(json!("invoice"))
}

/// A refund, whose declared icon the builder replaces.
#[tool_action(name = "iconic.refund", icon = "https://example.com/refund.png")]
async fn iconic_refund(_: Nothing) -> Result<Value, ToolError> {
    Ok(json!("refund"))
}

/// A reminder, with an icon for light themes in two sizes.
#[prompt(
    name = "iconic.remind",
    icon(
        src = "https://example.com/remind.png",
        sizes = "48x48 96x96",
        theme = "light"
    )
)]
async fn iconic_remind() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("remind"))
}

/// The policy, whose declared icon the builder hides.
#[resource(uri = "iconic://policy", icon = "https://example.com/policy.png")]
async fn iconic_policy() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("policy"))
}

/// An invoice document's ID.
#[derive(Deserialize, ToolInput)]
struct InvoiceId {
    /// The invoice, e.g. `a1`.
    id: String,
}

/// One invoice document.
#[resource(
    template = "iconic://invoices/{id}",
    icon = "https://example.com/doc.png"
)]
async fn iconic_doc(p: InvoiceId) -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(p.id))
}

fn builder() -> fusion_runtime::ServerBuilder {
    Server::builder()
        .name("listing")
        .action::<OneAction>()
        .action::<TwoAction>()
        .action::<ThreeAction>()
        .action::<FourAction>()
        .action::<FiveAction>()
        .prompt::<HelloPrompt>()
        .prompt::<GoodbyePrompt>()
        .prompt::<ThanksPrompt>()
        .resource::<IndexResource>()
        .resource::<ChangelogResource>()
        .resource::<NotesResource>()
}

fn built(b: fusion_runtime::ServerBuilder) -> Server {
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

async fn http(server: Server) -> HttpServer {
    spawn_http(
        server,
        "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        HttpOptions::default().stateless(true),
    )
    .await
    .unwrap_or_else(|e| panic!("bind: {e}"))
}

/// The protocol versions the tests speak: two 2025 ones (stateless, no `_meta`) and
/// 2026-07-28.
const MODERN: &str = "2026-07-28";
const GENERATIONS: [&str; 2] = ["2025-11-25", MODERN];

/// The answer to one request sent as protocol `version`.
async fn request(running: &HttpServer, version: &str, method: &str, params: Value) -> Value {
    request_as(running, None, version, method, params).await
}

/// The answer to one request sent as protocol `version`, with `token` as its bearer token.
async fn request_as(
    running: &HttpServer,
    token: Option<&str>,
    version: &str,
    method: &str,
    mut params: Value,
) -> Value {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", version),
    ];
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    if version == MODERN {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        });
        headers.push(("mcp-method", method));
        if let Some(n) = &name {
            headers.push(("mcp-name", n));
        }
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let addr = running.local_addr;
    raw_http::request(addr, "POST", "/mcp", &headers, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"))
        .message()
}

fn names(answer: &Value, list: &str, key: &str) -> Vec<String> {
    answer["result"][list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {answer}"))
        .iter()
        .map(|t| t[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// What the recording middleware saw: each method, and the code of an inner refusal.
type Seen = Arc<Mutex<Vec<(Method, Option<String>)>>>;

/// A server whose method middleware keeps `internal://` resources and the template list to
/// operators, fails `completion/complete` with a plain error, and records every method it
/// sees.
fn guarded(seen: Seen) -> Server {
    let guard = method_middleware_fn(|req: MethodRequest, next: MethodNext| async move {
        let operator = req.principal().is_some_and(|p| p.has_scope("ops"));
        let internal = req.method() == Method::ReadResource
            && req
                .target()
                .is_some_and(|uri| uri.starts_with("internal://"));
        if internal && !operator {
            return Err(
                error(codes::FORBIDDEN, "Internal resources need the `ops` scope")
                    .recovery("Read the public resources listed by resources/list instead"),
            );
        }
        if req.method() == Method::ListResourceTemplates {
            return Err(error(codes::UNAUTHORIZED, "Templates are for operators"));
        }
        Ok::<_, ToolError>(next.run(req).await)
    });
    let failing = method_middleware_fn(|req: MethodRequest, next: MethodNext| async move {
        if req.method() == Method::Complete {
            return Err(std::io::Error::other("the audit log is full"));
        }
        if req.method() == Method::ListPrompts {
            panic!("a bug in the middleware");
        }
        Ok(next.run(req).await)
    });
    let record = method_middleware_fn(move |req: MethodRequest, next: MethodNext| {
        let seen = seen.clone();
        async move {
            let method = req.method();
            let answer = next.run(req).await;
            // An inner refusal reaches the outer middleware as such.
            let refused = answer.refusal().map(|e| e.code().as_str().to_owned());
            if let Ok(mut s) = seen.lock() {
                s.push((method, refused));
            }
            Ok::<_, ToolError>(answer)
        }
    });
    built(
        builder()
            .method_middleware(record)
            .method_middleware(guard)
            .method_middleware(failing),
    )
}

#[tokio::test]
async fn method_middleware_refuses_a_resource_read_with_a_readable_error_on_both_generations() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let running = http(guarded(seen.clone())).await;
    for version in GENERATIONS {
        let read = json!({"uri": "internal://notes"});
        let answer = request(&running, version, "resources/read", read).await;
        assert_eq!(answer["error"]["code"], -32602, "{version}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        let e = parse_tool_error(message).unwrap_or_else(|e| panic!("{e}: {answer}"));
        let e = ToolCallError::from_error("", &e);
        assert_eq!(e.code.as_str(), "FORBIDDEN");
        assert_eq!(e.message, "Internal resources need the `ops` scope");
        assert_eq!(
            e.recovery.as_deref(),
            Some("Read the public resources listed by resources/list instead")
        );
        assert_eq!(answer["error"]["data"]["code"], "FORBIDDEN", "{answer}");
        assert_eq!(answer["error"]["data"]["target"], "internal://notes");

        // A public resource passes through every link.
        let read = json!({"uri": "test://index"});
        let answer = request(&running, version, "resources/read", read).await;
        assert_eq!(answer["result"]["contents"][0]["text"], "a, b", "{answer}");

        // A list has no content for the model: readable text.
        let answer = request(&running, version, "resources/templates/list", json!({})).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_eq!(
            answer["error"]["message"],
            "UNAUTHORIZED: Templates are for operators"
        );
        // An error that is not a ToolError: INTERNAL_ERROR, -32603, its message kept.
        let complete = json!({
            "ref": {"type": "ref/prompt", "name": "hello"},
            "argument": {"name": "x", "value": ""},
        });
        let answer = request(&running, version, "completion/complete", complete).await;
        assert_eq!(answer["error"]["code"], -32603, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message
                .starts_with("INTERNAL_ERROR: completion/complete failed: the audit log is full"),
            "{answer}"
        );
        // A middleware that panics: INTERNAL_ERROR, and the server keeps serving.
        let answer = request(&running, version, "prompts/list", json!({})).await;
        assert_eq!(answer["error"]["code"], -32603, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("panicked"), "{answer}");
        // The lists and prompts/get go through it and answer as before.
        let answer = request(&running, version, "tools/list", json!({})).await;
        assert_eq!(names(&answer, "tools", "name").len(), 5, "{answer}");
        let answer = request(&running, version, "prompts/get", json!({"name": "hello"})).await;
        assert!(answer["result"]["messages"].is_array(), "{answer}");
    }
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    let refused = |m, code: &str| (m, Some(code.to_owned()));
    let once = [
        refused(Method::ReadResource, "FORBIDDEN"),
        (Method::ReadResource, None),
        refused(Method::ListResourceTemplates, "UNAUTHORIZED"),
        refused(Method::Complete, "INTERNAL_ERROR"),
        (Method::ListTools, None),
        (Method::GetPrompt, None),
    ];
    assert_eq!(seen, [once.clone(), once].concat());
    // tools/call is the tool middleware's: not seen here.
    let call = json!({"name": "t_one", "arguments": {}});
    let answer = request(&running, MODERN, "tools/call", call).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let _ = running.shutdown().await;
}

/// Every page of `method`'s `list` from the start, and the cursors that led to them.
async fn walk(
    running: &HttpServer,
    version: &str,
    method: &str,
    list: &str,
    key: &str,
) -> (Vec<Vec<String>>, Vec<String>) {
    let mut pages = Vec::new();
    let mut cursors = Vec::new();
    let mut params = json!({});
    loop {
        let answer = request(running, version, method, params.clone()).await;
        pages.push(names(&answer, list, key));
        match answer["result"]["nextCursor"].as_str() {
            Some(c) => {
                assert!(c.len() <= MAX_CURSOR_BYTES, "{c}");
                cursors.push(c.to_owned());
                params = json!({ "cursor": c });
            }
            None => break,
        }
        assert!(pages.len() < 10, "the pages never end: {pages:?}");
    }
    (pages, cursors)
}

#[tokio::test]
async fn pages_walk_the_whole_lists_on_both_generations() {
    let server = built(builder().page_size(2));
    assert_eq!(server.page_size(), Some(2));
    let running = http(server).await;
    for version in GENERATIONS {
        let (tools, _) = walk(&running, version, "tools/list", "tools", "name").await;
        assert_eq!(
            tools,
            [
                vec!["t_one", "t_two"],
                vec!["t_three", "t_four"],
                vec!["t_five"],
            ],
            "{version}"
        );
        let (prompts, _) = walk(&running, version, "prompts/list", "prompts", "name").await;
        assert_eq!(prompts, [vec!["hello", "goodbye"], vec!["thanks"]]);
        let (resources, _) = walk(&running, version, "resources/list", "resources", "uri").await;
        assert_eq!(
            resources,
            [
                vec!["test://index", "test://changelog"],
                vec!["internal://notes"]
            ]
        );
    }
    let _ = running.shutdown().await;

    // Without a page size, one page holds everything.
    let running = http(built(builder())).await;
    let (tools, cursors) = walk(&running, MODERN, "tools/list", "tools", "name").await;
    assert_eq!((tools.len(), tools[0].len(), cursors.len()), (1, 5, 0));
    let _ = running.shutdown().await;
}

/// The `-32602` refusal of `cursor` on `method`, its message.
async fn refused(running: &HttpServer, version: &str, method: &str, cursor: &str) -> String {
    let answer = request(running, version, method, json!({ "cursor": cursor })).await;
    assert_eq!(answer["error"]["code"], -32602, "{cursor}: {answer}");
    answer["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_cursor_that_is_not_a_string_is_refused_not_read_as_page_one() {
    let running = http(built(builder().page_size(2))).await;
    let lists = [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ];
    for version in GENERATIONS {
        for method in lists {
            for cursor in [json!(5), json!(null), json!({}), json!([]), json!(true)] {
                let answer = request(&running, version, method, json!({ "cursor": cursor })).await;
                assert_eq!(
                    answer["error"]["code"], -32602,
                    "{version} {method} cursor {cursor}: {answer}"
                );
                let message = answer["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    message.starts_with(&format!("Invalid cursor for {method}: ")),
                    "{message}"
                );
            }
            // No cursor at all is page one.
            let answer = request(&running, version, method, json!({})).await;
            assert!(answer["result"].is_object(), "{version} {method}: {answer}");
        }
    }
    let _ = running.shutdown().await;

    // Over stdio too (rmcp's parse, no HTTP step in front).
    let server = built(builder().page_size(2));
    let (client, server_side) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_side);
    let task = tokio::spawn(serve_io(server, read, write, StdioOptions::default()));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let mut send = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    let cursors = [json!(5), json!(null), json!({}), json!([]), json!(true)];
    for (i, cursor) in cursors.iter().enumerate() {
        send.push(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": lists[i % lists.len()],
            "params": {"cursor": cursor}}),
        );
    }
    for m in send {
        let _ = client_write.write_all(format!("{m}\n").as_bytes()).await;
    }
    let mut refused = 0;
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line()).await
    {
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["id"] == 0 {
            continue;
        }
        assert_eq!(v["error"]["code"], -32602, "stdio: {v}");
        refused += 1;
        if refused == cursors.len() {
            break;
        }
    }
    assert_eq!(refused, cursors.len());
    drop(client_write);
    task.abort();
}

#[tokio::test]
async fn a_forged_foreign_oversized_or_stale_cursor_is_refused() {
    let server = built(builder().page_size(2));
    let running = http(server.clone()).await;
    for version in GENERATIONS {
        let (_, cursors) = walk(&running, version, "tools/list", "tools", "name").await;
        let good = &cursors[0];
        // One character of the position changed: the MAC no longer verifies.
        let mut forged = good.clone().into_bytes();
        forged[6] = if forged[6] == b'A' { b'B' } else { b'A' };
        let forged = String::from_utf8(forged).unwrap_or_default();
        let message = refused(&running, version, "tools/list", &forged).await;
        assert!(
            message.contains("not a cursor this server issued"),
            "{message}"
        );
        for junk in ["", "0", "pg1.", "pg1.e30.", "page-2", "pg1.e30.AAAA"] {
            refused(&running, version, "tools/list", junk).await;
        }
        let long = format!("{good}{}", "A".repeat(MAX_CURSOR_BYTES));
        let message = refused(&running, version, "tools/list", &long).await;
        assert!(message.contains("longer than any cursor"), "{message}");
        // A real cursor of another list.
        let message = refused(&running, version, "prompts/list", good).await;
        assert!(message.contains("issued for another list"), "{message}");
        // Sealed under another server's key.
        let other = built(
            builder()
                .page_size(2)
                .request_state_key([7u8; 32].as_slice()),
        );
        let elsewhere = http(other).await;
        let (_, theirs) = walk(&elsewhere, version, "tools/list", "tools", "name").await;
        let _ = elsewhere.shutdown().await;
        refused(&running, version, "tools/list", &theirs[0]).await;
        // The good one still works.
        let answer = request(&running, version, "tools/list", json!({"cursor": good})).await;
        assert_eq!(names(&answer, "tools", "name"), ["t_three", "t_four"]);
    }
    // A cursor issued before a visibility change: list again from the start.
    let (_, cursors) = walk(&running, MODERN, "tools/list", "tools", "name").await;
    assert!(server.visibility().disable_tool("t_one"));
    let message = refused(&running, MODERN, "tools/list", &cursors[0]).await;
    assert!(message.contains("the list changed"), "{message}");
    let (tools, _) = walk(&running, MODERN, "tools/list", "tools", "name").await;
    assert_eq!(tools.concat(), ["t_two", "t_three", "t_four", "t_five"]);
    let _ = running.shutdown().await;

    for size in [0, MAX_PAGE_SIZE + 1] {
        match builder().page_size(size).build() {
            Err(BuildError::PageSize(s)) => assert_eq!(s, size),
            other => panic!("{size}: {:?}", other.map(|_| ())),
        }
    }
}

#[tokio::test]
async fn icons_are_listed_to_2025_11_25_and_later_clients_only() {
    let png = Icon::new("https://example.com/one.png")
        .mime_type("image/png")
        .sizes(["48x48"]);
    let dark = Icon::new("https://example.com/one-dark.svg")
        .sizes(["any"])
        .theme(IconTheme::Dark);
    let server = built(
        builder()
            .icons(Item::Tool, "t_one", [png, dark])
            .icons(
                Item::Prompt,
                "hello",
                [Icon::new("https://example.com/hi.png")],
            )
            .icons(
                Item::Resource,
                "test://index",
                [Icon::new("https://example.com/i.png")],
            ),
    );
    let running = http(server.clone()).await;
    for version in ["2025-11-25", MODERN] {
        let tools = request(&running, version, "tools/list", json!({})).await;
        assert_eq!(
            tools["result"]["tools"][0]["icons"],
            json!([
                {"src": "https://example.com/one.png", "mimeType": "image/png", "sizes": ["48x48"]},
                {"src": "https://example.com/one-dark.svg", "sizes": ["any"], "theme": "dark"},
            ]),
            "{version}: {tools}"
        );
        assert!(tools["result"]["tools"][1].get("icons").is_none());
        let prompts = request(&running, version, "prompts/list", json!({})).await;
        assert_eq!(
            prompts["result"]["prompts"][0]["icons"][0]["src"],
            "https://example.com/hi.png"
        );
        let resources = request(&running, version, "resources/list", json!({})).await;
        assert_eq!(
            resources["result"]["resources"][0]["icons"][0]["src"],
            "https://example.com/i.png"
        );
    }
    // A 2025 session over stdio: its negotiated version decides.
    for (version, shown) in [("2025-11-25", true), ("2025-06-18", false)] {
        let (answer, _) = stdio_session(server.clone(), None, version).await;
        let icons = &answer["result"]["tools"][0]["icons"];
        assert_eq!(icons.is_array(), shown, "{version}: {answer}");
    }
    // 2025-06-18 has no icons: none are listed.
    for (method, list) in [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
    ] {
        let answer = request(&running, "2025-06-18", method, json!({})).await;
        let items = answer["result"][list]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(!items.is_empty(), "{answer}");
        assert!(items.iter().all(|i| i.get("icons").is_none()), "{answer}");
    }
    let _ = running.shutdown().await;

    match builder()
        .icons(Item::Tool, "t_six", [Icon::new("x")])
        .build()
    {
        Err(BuildError::Icons(Item::Tool, name)) => assert_eq!(name, "t_six"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// The entry of `list` in `answer` whose `key` is `name`.
fn entry<'a>(answer: &'a Value, list: &str, key: &str, name: &str) -> &'a Value {
    answer["result"][list]
        .as_array()
        .and_then(|items| items.iter().find(|i| i[key] == name))
        .unwrap_or_else(|| panic!("no {name} in {answer}"))
}

#[tokio::test]
async fn icons_declared_in_attributes_are_listed_unless_the_builder_sets_others() {
    let server = built(
        builder()
            .action::<IconicInvoiceAction>()
            .action::<IconicRefundAction>()
            .prompt::<IconicRemindPrompt>()
            .resource::<IconicPolicyResource>()
            .resource::<IconicDocResource>()
            .icons(
                Item::Tool,
                "iconic_refund",
                [Icon::new("https://cdn.example.com/refund.svg").sizes(["any"])],
            )
            .icons(Item::Resource, "iconic://policy", []),
    );
    // The server's own view: the builder's icons, else the declared ones.
    assert_eq!(server.icons_of(Item::Tool, "iconic_invoice").len(), 2);
    assert_eq!(
        server.icons_of(Item::Tool, "iconic_refund"),
        [Icon::new("https://cdn.example.com/refund.svg").sizes(["any"])]
    );
    assert!(
        server
            .icons_of(Item::Resource, "iconic://policy")
            .is_empty()
    );
    assert!(server.icons_of(Item::Tool, "t_one").is_empty());
    let running = http(server.clone()).await;
    for version in ["2025-11-25", MODERN] {
        let tools = request(&running, version, "tools/list", json!({})).await;
        assert_eq!(
            entry(&tools, "tools", "name", "iconic_invoice")["icons"],
            json!([
                {"src": "https://example.com/invoice.png"},
                {"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml",
                 "sizes": ["any"], "theme": "dark"},
            ]),
            "{version}: {tools}"
        );
        // The builder's icons replace the declared ones: they are not merged.
        assert_eq!(
            entry(&tools, "tools", "name", "iconic_refund")["icons"],
            json!([{"src": "https://cdn.example.com/refund.svg", "sizes": ["any"]}]),
            "{version}: {tools}"
        );
        assert!(
            entry(&tools, "tools", "name", "t_one")
                .get("icons")
                .is_none()
        );
        let prompts = request(&running, version, "prompts/list", json!({})).await;
        assert_eq!(
            entry(&prompts, "prompts", "name", "iconic_remind")["icons"],
            json!([{"src": "https://example.com/remind.png", "sizes": ["48x48", "96x96"],
                    "theme": "light"}]),
            "{version}: {prompts}"
        );
        assert!(
            entry(&prompts, "prompts", "name", "hello")
                .get("icons")
                .is_none()
        );
        let resources = request(&running, version, "resources/list", json!({})).await;
        // An empty list from the builder hides the declared icon.
        assert!(
            entry(&resources, "resources", "uri", "iconic://policy")
                .get("icons")
                .is_none(),
            "{version}: {resources}"
        );
        let templates = request(&running, version, "resources/templates/list", json!({})).await;
        assert_eq!(
            entry(
                &templates,
                "resourceTemplates",
                "uriTemplate",
                "iconic://invoices/{id}"
            )["icons"],
            json!([{"src": "https://example.com/doc.png"}]),
            "{version}: {templates}"
        );
    }
    // 2025-06-18 has no icons: the declared ones are not listed either.
    for (method, list, key, name) in [
        ("tools/list", "tools", "name", "iconic_invoice"),
        ("prompts/list", "prompts", "name", "iconic_remind"),
        (
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate",
            "iconic://invoices/{id}",
        ),
    ] {
        let answer = request(&running, "2025-06-18", method, json!({})).await;
        assert!(
            entry(&answer, list, key, name).get("icons").is_none(),
            "{answer}"
        );
    }
    let _ = running.shutdown().await;
    // Over stdio, a session's negotiated version decides.
    for (version, shown) in [("2025-11-25", true), ("2025-06-18", false)] {
        let (answer, _) = stdio_session(server.clone(), None, version).await;
        let icons = &entry(&answer, "tools", "name", "iconic_invoice")["icons"];
        assert_eq!(icons.is_array(), shown, "{version}: {answer}");
    }
}

#[tokio::test]
async fn a_grouped_tool_has_only_the_icons_the_builder_sets() {
    let grouped = || {
        Server::builder()
            .name("grouped-icons")
            .grouped()
            .action::<IconicInvoiceAction>()
            .action::<IconicRefundAction>()
    };
    let plain = http(built(grouped())).await;
    let tools = request(&plain, "2025-11-25", "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["iconic"], "{tools}");
    assert!(
        entry(&tools, "tools", "name", "iconic")
            .get("icons")
            .is_none(),
        "the members' declared icons are not the group's: {tools}"
    );
    let _ = plain.shutdown().await;
    let set = built(grouped().icons(
        Item::Tool,
        "iconic",
        [Icon::new("https://example.com/billing.png")],
    ));
    assert!(set.icons_of(Item::Tool, "iconic_invoice").is_empty());
    let running = http(set).await;
    let tools = request(&running, "2025-11-25", "tools/list", json!({})).await;
    assert_eq!(
        entry(&tools, "tools", "name", "iconic")["icons"],
        json!([{"src": "https://example.com/billing.png"}]),
        "{tools}"
    );
    let _ = running.shutdown().await;
}

/// `tools/list` and a call of `t_five` over stdio (a real MCP connection), as protocol
/// `version`, for the session's `principal`: the listed names and the call's error code.
async fn stdio_view(
    server: Server,
    principal: Option<Principal>,
    version: &str,
) -> (Vec<String>, Option<String>) {
    let (answer, code) = stdio_session(server, principal, version).await;
    (names(&answer, "tools", "name"), code)
}

/// `tools/list` and a call of `t_five` over stdio, as [`stdio_view`]: the whole `tools/list`
/// answer.
async fn stdio_session(
    server: Server,
    principal: Option<Principal>,
    version: &str,
) -> (Value, Option<String>) {
    let mut options = StdioOptions::default();
    if let Some(p) = principal {
        options = options.principal(p);
    }
    let (client, server_side) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_side);
    let task = tokio::spawn(serve_io(server, read, write, options));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let mut send = Vec::new();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let params = |mut p: Value| {
        if version == MODERN {
            p["_meta"] = meta.clone();
        }
        p
    };
    if version != MODERN {
        send.push(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
        send.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
    send.push(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params(json!({}))}),
    );
    send.push(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": params(json!({"name": "t_five", "arguments": {}}))}));
    for m in send {
        let _ = client_write.write_all(format!("{m}\n").as_bytes()).await;
    }
    let (mut listed, mut code) = (None, None);
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line()).await
    {
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["id"] == 2 {
            listed = Some(v.clone());
        }
        if v["id"] == 3 {
            let text = v["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            code = parse_tool_error(text)
                .ok()
                .map(|e| e.code().as_str().to_owned());
            break;
        }
    }
    drop(client_write);
    task.abort();
    (
        listed.unwrap_or_else(|| panic!("no tools/list answer")),
        code,
    )
}

#[tokio::test]
async fn hide_forbidden_lists_each_caller_the_tools_it_may_call_and_the_contract_stays_whole() {
    let scoped = || {
        builder()
            .scopes("t.four", ["ops", "audit"])
            .scopes("t.five", ["ops"])
    };
    let hiding = built(scoped().hide_forbidden(true));
    assert!(hiding.hides_forbidden());
    let ops = || Some(Principal::new("ada").with_scopes(["ops"]));
    for version in ["2025-11-25", MODERN] {
        let (anonymous, code) = stdio_view(hiding.clone(), None, version).await;
        assert_eq!(anonymous, ["t_one", "t_two", "t_three"], "{version}");
        // Hidden is not unknown: the call says what is missing.
        assert_eq!(code.as_deref(), Some("AUTH_REQUIRED"));
        let (operator, code) = stdio_view(hiding.clone(), ops(), version).await;
        assert_eq!(
            operator,
            ["t_one", "t_two", "t_three", "t_five"],
            "{version}"
        );
        assert_eq!(code, None, "t_five runs for an operator");
        let auditor = Some(Principal::new("bo").with_scopes(["ops", "audit"]));
        let (all, _) = stdio_view(hiding.clone(), auditor, version).await;
        assert_eq!(all.len(), 5, "{all:?}");
        // Off (the default): everyone sees the whole list.
        let (listed, code) = stdio_view(built(scoped()), None, version).await;
        assert_eq!(listed.len(), 5, "{listed:?}");
        assert_eq!(code.as_deref(), Some("AUTH_REQUIRED"));
    }
    // The contract (what `lock` writes and the diff reads) is the whole list.
    assert_eq!(hiding.contracts().len(), 5);
    assert!(hiding.may_call("t_five", ops().as_ref()));
    assert!(!hiding.may_call("t_four", ops().as_ref()));
    assert!(!hiding.may_call("t_five", None));
}

#[tokio::test]
async fn over_http_the_bearer_tokens_scopes_decide_the_list_and_the_method_middleware() {
    const RESOURCE: &str = "https://listing.example.com/mcp";
    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef-listing";
    let operators = method_middleware_fn(|req: MethodRequest, next: MethodNext| async move {
        let internal = req.target().is_some_and(|t| t.starts_with("internal://"));
        if internal && !req.principal().is_some_and(|p| p.has_scope("ops")) {
            return Err(error(
                codes::FORBIDDEN,
                "Internal resources need the `ops` scope",
            ));
        }
        Ok::<_, ToolError>(next.run(req).await)
    });
    let server = built(
        builder()
            .scopes("t.five", ["ops"])
            .hide_forbidden(true)
            .method_middleware(operators),
    );
    let verifier = JwtVerifier::new(RESOURCE)
        .hs256_secret(SECRET)
        .unwrap_or_else(|e| panic!("{e}"));
    let auth = Auth::new(verifier, RESOURCE).mode(AuthMode::Optional);
    let options = HttpOptions::default().stateless(true).auth(auth);
    let addr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
    let running = spawn_http(server, addr, options)
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let token = |scope: &str| {
        let claims = json!({
            "sub": "ada", "scope": scope, "aud": RESOURCE,
            "exp": services::now() + 600, "iat": services::now(),
        });
        let key = EncodingKey::from_secret(SECRET).unwrap_or_else(|e| panic!("{e}"));
        services::mint(Algorithm::HS256, &key, &claims)
    };
    let (ops, reader) = (token("ops"), token("read"));
    for version in GENERATIONS {
        for (who, bearer, five) in [
            ("anonymous", None, false),
            ("ops", Some(ops.as_str()), true),
            ("read", Some(reader.as_str()), false),
        ] {
            let answer = request_as(&running, bearer, version, "tools/list", json!({})).await;
            let listed = names(&answer, "tools", "name");
            assert_eq!(listed.len(), if five { 5 } else { 4 }, "{who}, {version}");
            assert_eq!(
                listed.iter().any(|n| n == "t_five"),
                five,
                "{who}, {version}"
            );
            // Method middleware sees the same principal.
            let read = json!({"uri": "internal://notes"});
            let answer = request_as(&running, bearer, version, "resources/read", read).await;
            match five {
                true => assert_eq!(answer["result"]["contents"][0]["text"], "secret"),
                false => assert_eq!(answer["error"]["data"]["code"], "FORBIDDEN", "{answer}"),
            }
        }
    }
    let _ = running.shutdown().await;
}

/// The `fusion_calls_total` count of calls no tool answered with `UNKNOWN_ACTION`.
fn unknown_calls() -> u64 {
    let text = fusion_runtime::metrics::render().unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("fusion_calls_total{") && l.contains("tool=\"<unknown>\""))
        .filter(|l| l.contains("outcome=\"UNKNOWN_ACTION\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test]
async fn a_call_of_a_disabled_tool_is_counted_as_one_no_tool_answers() {
    fusion_runtime::metrics::enable();
    let server = built(builder().disabled(Item::Tool, "t_two"));
    let before = unknown_calls();
    // Both spellings, each refused UNKNOWN_ACTION and counted once.
    for name in ["t_two", "t.two"] {
        let answer = server.call_json(name, json!({})).await;
        let text = answer.texts().next().unwrap_or_default();
        assert!(text.contains("code=\"UNKNOWN_ACTION\""), "{text}");
    }
    assert_eq!(unknown_calls(), before + 2);
    // An enabled tool is counted under its own name, not as unknown.
    let answer = server.call_json("t_one", json!({})).await;
    assert!(!answer.is_error);
    assert_eq!(unknown_calls(), before + 2);
}
