//! Per-action scopes as data: declared by `#[tool_action(scopes = [..])]` or the builder,
//! recorded in the contract lockfile, a newly required scope flagged BREAKING by the diff,
//! and enforced in-process and over stdio (where there is no principal unless the embedding
//! code sets one).

use fusion_runtime::contract::{DeltaSeverity, Lockfile, ToolContract, diff};
use fusion_runtime::mcp::{StdioOptions, serve_io};
use fusion_runtime::server::{BuildError, RequestScope};
use fusion_runtime::{Content, Principal, Server, ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Nothing to send.
#[derive(Deserialize, ToolInput)]
struct Note {
    /// Anything.
    note: Option<String>,
}

/// Reads the ledger.
#[tool_action(name = "ledger.read", scopes = ["ledger:read"])]
async fn read(_input: Note) -> Result<Value, ToolError> {
    Ok(json!({"ok": true}))
}

/// Public.
#[tool_action(name = "ledger.ping", read_only)]
async fn ping(_input: Note) -> Result<Value, ToolError> {
    Ok(json!({"pong": true}))
}

fn server() -> Server {
    Server::builder()
        .action::<ReadAction>()
        .action::<PingAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn text(r: &fusion_runtime::ToolResponse) -> String {
    r.content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_lockfile_records_scopes_and_leaves_unscoped_contracts_as_they_were() {
    let s = server();
    let contracts = s.contracts();
    assert_eq!(contracts[0].scopes, ["ledger:read"]);
    assert!(contracts[1].scopes.is_empty());
    assert_eq!(contracts[0].to_json()["scopes"], json!(["ledger:read"]));
    assert!(contracts[1].to_json().get("scopes").is_none());
    let lock = Lockfile::from_contracts(contracts).unwrap_or_else(|e| panic!("{e}"));
    let text = lock.to_json().to_string();
    let back = Lockfile::parse(&text).unwrap_or_else(|e| panic!("{e}"));
    for c in contracts {
        assert_eq!(back.get(&c.action), Some(c));
    }
    assert!(lock.check(contracts).is_empty());
    assert_eq!(s.declared_scopes(), ["ledger:read"]);
}

#[test]
fn a_newly_required_scope_is_breaking_and_a_dropped_one_safe() {
    let old = ToolContract::new("a.b", "a_b", "Does b", json!({"type": "object"}));
    let new = old.clone().with_scopes(["a:write"]);
    let deltas = diff(std::slice::from_ref(&old), std::slice::from_ref(&new));
    assert_eq!(deltas.len(), 1, "{deltas:?}");
    assert_eq!(deltas[0].severity, DeltaSeverity::Breaking);
    assert_eq!(deltas[0].path, "actions.a.b.scopes.a:write");
    assert!(
        deltas[0]
            .description
            .contains("now requires the scope 'a:write'")
    );
    let back = diff(&[new], &[old]);
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].severity, DeltaSeverity::Safe);
}

#[tokio::test]
async fn the_builder_sets_scopes_and_refuses_unknown_actions() {
    let s = Server::builder()
        .action::<PingAction>()
        .scopes("ledger.ping", ["ledger:ping", "ledger:ping"])
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.actions()[0].info.scopes, ["ledger:ping"]);
    let anonymous = s.call_json("ledger_ping", json!({})).await;
    assert!(text(&anonymous).contains("code=\"AUTH_REQUIRED\""));
    let scope =
        RequestScope::detached().with_principal(Principal::new("u").with_scopes(["ledger:ping"]));
    let allowed = s.call("ledger_ping", None, scope).await;
    assert!(!allowed.is_error, "{}", text(&allowed));

    let unknown = Server::builder()
        .action::<PingAction>()
        .scopes("ledger.nope", ["x"])
        .build();
    assert!(matches!(unknown, Err(BuildError::Guard(m)) if m.contains("ledger.nope")));
}

#[tokio::test]
async fn refused_calls_are_not_validated() {
    // A scoped action answers AUTH_REQUIRED before looking at the arguments.
    let r = server().call_json("ledger_read", json!({"note": 42})).await;
    assert!(text(&r).contains("code=\"AUTH_REQUIRED\""), "{}", text(&r));
}

async fn stdio_call(options: StdioOptions) -> String {
    let (client, server_side) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_side);
    let task = tokio::spawn(serve_io(server(), read, write, options));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let send = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "ledger_read", "arguments": {}}}),
    ];
    for m in send {
        let _ = client_write.write_all(format!("{m}\n").as_bytes()).await;
    }
    let mut answer = String::new();
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line()).await
    {
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["id"] == 2 {
            answer = v["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            break;
        }
    }
    drop(client_write);
    task.abort();
    answer
}

#[tokio::test]
async fn over_stdio_there_is_no_principal_unless_the_embedding_code_sets_one() {
    let anonymous = stdio_call(StdioOptions::default()).await;
    assert!(anonymous.contains("code=\"AUTH_REQUIRED\""), "{anonymous}");
    let signed_in = stdio_call(
        StdioOptions::default()
            .principal(Principal::new("local-user").with_scopes(["ledger:read"])),
    )
    .await;
    assert!(signed_in.contains("\"ok\""), "{signed_in}");
}
