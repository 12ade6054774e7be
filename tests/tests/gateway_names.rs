//! The names a model reads about mounted tools, with real upstreams (`plain-upstream`, a
//! plain rmcp server; the billing example, a Fusion server): `UNKNOWN_ACTION` suggests the
//! closest of every tool, mounted ones included; the `tools` command lists mounted tools by
//! mount and says when one is unreachable, without hanging.

use std::time::Duration;

use fusion_runtime::client::{ToolCallError, parse_tool_error};
use fusion_runtime::gateway::{MountOptions, Upstream};
use fusion_runtime::mcp::MOUNT_META_KEY;
use fusion_runtime::{Context, Server, ToolError, ToolInput, tool_action};
use fusion_tests::{clients::billing_command, text_of};
use serde::Deserialize;
use serde_json::json;
use tokio::process::Command;

fn plain() -> Command {
    Command::new(env!("CARGO_BIN_EXE_plain-upstream"))
}

/// A `<tool_error>` text read as a client reads it.
fn read(text: &str) -> ToolCallError {
    let e = parse_tool_error(text).unwrap_or_else(|e| panic!("not a tool_error ({e}): {text}"));
    ToolCallError::from_error("", &e)
}

/// What to say.
#[derive(Deserialize, ToolInput)]
struct Said {
    /// The text.
    text: String,
}

/// Says the text back.
#[tool_action(name = "local.say")]
async fn local_say(input: Said, _cx: Context) -> Result<String, ToolError> {
    Ok(input.text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tool_answers_suggest_the_closest_mounted_tool() {
    let gateway = Server::builder()
        .action::<LocalSayAction>()
        .mount("plain", Upstream::stdio(plain()))
        .build()
        .expect("builds");
    assert!(
        gateway
            .listed_tool_specs()
            .await
            .iter()
            .any(|t| t.name == "plain_echo")
    );

    // Under no prefix: the server's answer, over its tools and the mounted ones.
    let typo = gateway.call_json("plian_echo", json!({"text": "x"})).await;
    let e = read(&text_of(&typo));
    assert_eq!(e.code.as_str(), "UNKNOWN_ACTION");
    assert_eq!(e.detail_value("closest"), Some("plain_echo"));
    assert_eq!(
        e.recovery.as_deref(),
        Some("Call plain_echo instead (the closest name), or pick one of the available tools")
    );
    assert_eq!(
        e.available_actions,
        [
            "local_say",
            "plain_echo",
            "plain_fail",
            "plain_reject",
            "plain_slow",
            "plain_grow"
        ]
    );

    // Under the mount's prefix: the mount's answer, with the closest of its tools.
    let typo = gateway.call_json("plain_ecoh", json!({"text": "x"})).await;
    let e = read(&text_of(&typo));
    assert_eq!(e.code.as_str(), "UNKNOWN_ACTION");
    assert_eq!(e.detail_value("closest"), Some("plain_echo"));
    assert!(
        e.recovery
            .as_deref()
            .is_some_and(|s| s.starts_with("Call plain_echo instead")),
        "{}",
        text_of(&typo)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_command_lists_mounted_tools_by_mount_and_names_an_unreachable_one() {
    let mut hangs = Command::new("sleep");
    hangs.arg("30");
    let gateway = Server::builder()
        .action::<LocalSayAction>()
        .mount("plain", Upstream::stdio(plain()))
        .timeout("plain_ecko", Duration::from_secs(5))
        .timeout("plain_echo", Duration::from_secs(5))
        .mount_with(
            "mute",
            Upstream::stdio(hangs),
            MountOptions {
                connect_timeout: Duration::from_secs(1),
                ..MountOptions::default()
            },
        )
        .build()
        .expect("builds");
    // The first-connection wait is 10 s; the connect timeout (1 s) ends it sooner.
    let listing = tokio::time::timeout(Duration::from_secs(9), gateway.tools_listing())
        .await
        .expect("bounded by the mute mount's connect timeout");
    let names: Vec<&str> = listing["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "local_say",
            "plain_echo",
            "plain_fail",
            "plain_reject",
            "plain_slow",
            "plain_grow"
        ]
    );
    assert_eq!(listing["tools"][0].get("_meta"), None);
    assert_eq!(listing["tools"][1]["_meta"][MOUNT_META_KEY], "plain");
    let mounts = &listing["mounts"];
    assert_eq!(mounts[0]["name"], "plain");
    assert_eq!(mounts[0]["reachable"], true);
    assert_eq!(mounts[0]["tools"], 5);
    assert!(
        mounts[0]["upstream"]
            .as_str()
            .is_some_and(|u| u.contains("plain-upstream")),
        "{mounts}"
    );
    assert_eq!(mounts[0]["unlisted_settings"], json!(["plain_ecko"]));
    assert_eq!(mounts[1]["name"], "mute");
    assert_eq!(mounts[1]["reachable"], false);
    assert_eq!(
        mounts[1]["error"], "no connection after 1 seconds",
        "{mounts}"
    );

    // Without mounts, the listing is exactly tools/list.
    let alone = Server::builder()
        .action::<LocalSayAction>()
        .build()
        .expect("builds");
    assert_eq!(alone.tools_listing().await, alone.tools_json());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_envelope_names_the_gateways_tools_and_keeps_every_other_byte() {
    let gateway = Server::builder()
        .mount(
            "finance",
            Upstream::stdio(billing_command(env!("CARGO_BIN_EXE_billing-server"))),
        )
        .build()
        .expect("builds");
    let direct = examples::billing::server().expect("billing builds");

    // An error: NOT_FOUND, whose available action is `billing.list_invoices`.
    let args = json!({"id": "inv_2026_9999"});
    let via = gateway
        .call_json("finance_billing_get_invoice", args.clone())
        .await;
    let upstream = direct.call_json("billing_get_invoice", args).await;
    assert!(via.is_error);
    insta::assert_snapshot!("renamed_not_found", text_of(&via));
    assert_eq!(
        text_of(&via),
        text_of(&upstream).replace(
            "<action>billing_list_invoices</action>",
            "<action>finance_billing_list_invoices</action>"
        )
    );
    let e = read(&text_of(&via));
    let listed: Vec<String> = gateway
        .listed_tool_specs()
        .await
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        e.available_actions.iter().all(|a| listed.contains(a)),
        "every named tool exists on the gateway: {:?}",
        e.available_actions
    );

    // A warning on the success path (an already paid invoice): recovery and actions renamed.
    let args = json!({"invoice_id": "inv_2026_0002", "amount_cents": 100});
    let via = gateway
        .call_json("finance_billing_charge", args.clone())
        .await;
    let upstream = direct.call_json("billing_charge", args).await;
    assert!(!via.is_error, "{}", text_of(&via));
    assert_eq!(via.content.len(), upstream.content.len());
    let warning = via.content[1].as_text().expect("the warning envelope");
    insta::assert_snapshot!("renamed_warning", warning);
    assert_eq!(
        warning,
        upstream.content[1]
            .as_text()
            .expect("text")
            .replace(
                "call billing_get_invoice to show it",
                "call finance_billing_get_invoice to show it"
            )
            .replace(
                "<action>billing_get_invoice</action>",
                "<action>finance_billing_get_invoice</action>"
            )
    );
    assert_eq!(
        via.content[0], upstream.content[0],
        "the result itself is untouched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_tool_whose_upstream_changed_since_the_lock_heals_like_an_action() {
    use fusion_runtime::contract::Lockfile;

    let dir = std::env::temp_dir().join(format!("fusion-gw-heal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let path = dir.join("fusion.lock");
    let locking = Server::builder()
        .action::<LocalSayAction>()
        .mount("plain", Upstream::stdio(plain()))
        .build()
        .expect("builds");
    Lockfile::from_contracts(&locking.all_contracts().await)
        .expect("a lockfile")
        .write(&path)
        .expect("written");

    // Unchanged upstream: no section.
    let same = Server::builder()
        .action::<LocalSayAction>()
        .mount("plain", Upstream::stdio(plain()))
        .self_healing(&path)
        .build()
        .expect("builds");
    assert!(
        same.contract_awareness().is_none(),
        "the actions did not change"
    );
    let fail = same.call_json("plain_fail", json!({})).await;
    assert!(
        !text_of(&fail).contains("contract_awareness"),
        "{}",
        text_of(&fail)
    );

    // The upstream now requires `times`: a call as the model learned it is refused upstream,
    // and the gateway says what changed.
    let mut changed = plain();
    changed.env("PLAIN_ECHO_SCHEMA", "v2");
    let gateway = Server::builder()
        .action::<LocalSayAction>()
        .mount("plain", Upstream::stdio(changed))
        .self_healing(&path)
        .build()
        .expect("builds");
    assert!(
        gateway.contract_awareness().is_none(),
        "the mounted tools are not reported as removed actions"
    );
    let refused = gateway.call_json("plain_echo", json!({"text": "hi"})).await;
    assert!(refused.is_error);
    insta::assert_snapshot!("mounted_contract_awareness", text_of(&refused));
    assert!(parse_tool_error(&text_of(&refused)).is_ok());
    // Only the changed tool's failures carry it.
    let fail = gateway.call_json("plain_fail", json!({})).await;
    assert!(
        !text_of(&fail).contains("contract_awareness"),
        "{}",
        text_of(&fail)
    );
    let ok = gateway
        .call_json("plain_echo", json!({"text": "hi", "times": 2}))
        .await;
    assert_eq!((text_of(&ok).as_str(), ok.is_error), ("hi", false));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `handoff-gateway tools` (a real gateway's `tools` command), with its upstream at `upstream`.
async fn tools_command(upstream: &str) -> serde_json::Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_handoff-gateway"));
    command
        .arg("tools")
        .env("RUST_LOG", "off")
        .env(
            "FUSION_DELEGATION_KEY",
            "gateway-names-key-0123456789-abcdefghijklmn",
        )
        .env("FUSION_UPSTREAM_BIN", upstream)
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(20), command.output())
        .await
        .expect("the tools command ends in time")
        .expect("runs");
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateways_tools_command_connects_its_mounts_or_says_why_not() {
    let listing = tools_command(env!("CARGO_BIN_EXE_delegated-server")).await;
    let tools = listing["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["triage_escalate", "finance_billing_lookup"]);
    assert_eq!(tools[1]["_meta"][MOUNT_META_KEY], "finance");
    assert_eq!(listing["mounts"][0]["reachable"], true);
    assert_eq!(listing["mounts"][0]["handoff_domain"], "finance");

    let listing = tools_command("/nonexistent/fusion-upstream").await;
    let names: Vec<&str> = listing["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["triage_escalate"]);
    let mount = &listing["mounts"][0];
    assert_eq!(mount["reachable"], false);
    assert!(
        mount["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("cannot connect")),
        "{mount}"
    );
}
