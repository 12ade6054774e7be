//! The gateway with real upstreams: the billing example (a Fusion server) and
//! `plain-upstream` (a plain rmcp server), over stdio and streamable HTTP. Each failure is
//! the exact envelope, read back by the typed client's parser.

use std::net::SocketAddr;
use std::time::Duration;

use fusion_runtime::auth::DelegationKey;
use fusion_runtime::client::{Envelope, FusionClient, parse_envelope, parse_tool_error};
use fusion_runtime::context::RequestScope;
use fusion_runtime::envelope::ToolResponse;
use fusion_runtime::gateway::{Backoff, MountDelegation, MountOptions, Upstream};
use fusion_runtime::mcp::{HttpOptions, spawn_http};
use fusion_runtime::{Server, codes};
use fusion_tests::clients::{billing_command, list_watcher, over_http_with};
use fusion_tests::{code_of, sinks::running_call, text_of};
use serde_json::json;
use tokio::process::Command;

const LIMIT: Duration = Duration::from_secs(30);

fn plain() -> Command {
    Command::new(env!("CARGO_BIN_EXE_plain-upstream"))
}

/// Bounds that make the backoff short and exact (no jitter).
fn quick(base_ms: u64) -> MountOptions {
    MountOptions {
        backoff: Backoff {
            base: Duration::from_millis(base_ms),
            cap: Duration::from_secs(8),
            jitter: 0.0,
        },
        ..MountOptions::default()
    }
}

/// Calls `tool` until it answers without a `HANDOFF_*` code (at most `LIMIT`).
async fn until_working(server: &Server, tool: &str, args: serde_json::Value) -> ToolResponse {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let r = server.call_json(tool, args.clone()).await;
        if !code_of(&r).starts_with("HANDOFF_") || tokio::time::Instant::now() > deadline {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn billing_over_stdio_is_listed_under_the_prefix_and_its_envelopes_pass_intact() {
    let gateway = Server::builder()
        .name("triage")
        .mount(
            "finance",
            Upstream::stdio(billing_command(env!("CARGO_BIN_EXE_billing-server"))),
        )
        .build()
        .expect("the gateway builds");
    let http = spawn_http(
        gateway,
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default(),
    )
    .await
    .expect("the gateway serves");
    let client = tokio::time::timeout(LIMIT, FusionClient::connect_http(&http.url))
        .await
        .expect("in time")
        .expect("connects");
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        names.contains(&"finance_billing_get_invoice".to_owned()),
        "{names:?}"
    );
    assert!(
        names.iter().all(|n| n.starts_with("finance_billing_")),
        "{names:?}"
    );

    let direct = examples::billing::server().expect("billing builds");
    let ok = client
        .call_tool(
            "finance_billing_get_invoice",
            json!({"id": "inv_2026_0001"}),
        )
        .await
        .expect("call");
    assert!(!ok.is_error, "{}", ok.text());
    for args in [json!({"id": "inv_2026_9999"}), json!({"id": "nope"})] {
        let via_gateway = client
            .call_tool("finance_billing_get_invoice", args.clone())
            .await
            .expect("call");
        let upstream = direct.call_json("billing_get_invoice", args).await;
        assert!(via_gateway.is_error);
        let wire: Vec<String> = via_gateway
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .map(|t| t.text.clone())
            .collect();
        // Intact, but for the upstream's tool names, written as the gateway exposes them.
        let expected = text_of(&upstream).replace(
            "<action>billing_list_invoices</action>",
            "<action>finance_billing_list_invoices</action>",
        );
        assert_eq!(wire.join("\n"), expected, "passed through intact");
        assert!(parse_envelope(&wire.join("\n")).is_ok());
    }
    let e = client
        .call_tool(
            "finance_billing_get_invoice",
            json!({"id": "inv_2026_9999"}),
        )
        .await
        .expect("call")
        .error()
        .expect("an error the typed client reads");
    assert_eq!(e.code, codes::NOT_FOUND);
    let _ = client.close().await;
    let _ = http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_servers_errors_are_wrapped_as_envelopes() {
    let gateway = Server::builder()
        .mount("plain", Upstream::stdio(plain()))
        .build()
        .expect("builds");
    let echo = gateway.call_json("plain_echo", json!({"text": "hi"})).await;
    assert_eq!((text_of(&echo).as_str(), echo.is_error), ("hi", false));
    let fail = gateway.call_json("plain_fail", json!({})).await;
    assert!(fail.is_error);
    insta::assert_snapshot!("plain_is_error_text_wrapped", text_of(&fail));
    let reject = gateway.call_json("plain_reject", json!({})).await;
    assert!(reject.is_error);
    insta::assert_snapshot!("plain_jsonrpc_error_wrapped", text_of(&reject));
    let unknown = gateway.call_json("plain_nope", json!({})).await;
    insta::assert_snapshot!("plain_unknown_tool", text_of(&unknown));
    for r in [&fail, &reject, &unknown] {
        assert!(matches!(parse_envelope(&text_of(r)), Ok(Envelope::Tool(_))));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_upstream_is_unavailable_then_connecting_then_working() {
    let gateway = Server::builder()
        .mount_with("plain", Upstream::stdio(plain()), quick(400))
        .build()
        .expect("builds");
    let running = running_call(&gateway, "plain_slow", LIMIT).await;
    let pid = running
        .first_progress
        .strip_prefix("pid ")
        .expect("the upstream's pid")
        .to_owned();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let died = tokio::time::timeout(LIMIT, running.answer)
        .await
        .expect("answered in time")
        .expect("no panic");
    assert!(died.is_error);
    insta::assert_snapshot!("killed_mid_call", text_of(&died));

    // The circuit is open: answered at once, without a new upstream.
    let open = gateway.call_json("plain_echo", json!({"text": "x"})).await;
    assert_eq!(code_of(&open), "HANDOFF_UPSTREAM_UNAVAILABLE");
    assert_eq!(text_of(&open), text_of(&died));

    // After the backoff, the next call probes: a new child is spawned.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let probing = gateway.call_json("plain_echo", json!({"text": "x"})).await;
    assert!(!probing.is_error, "a warning");
    insta::assert_snapshot!("connecting", text_of(&probing));
    let back = until_working(&gateway, "plain_echo", json!({"text": "back"})).await;
    assert_eq!((text_of(&back).as_str(), back.is_error), ("back", false));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backoff_grows_while_the_upstream_stays_down() {
    let gateway = Server::builder()
        .mount_with(
            "gone",
            Upstream::stdio(Command::new("/nonexistent/fusion-upstream")),
            quick(1000),
        )
        .build()
        .expect("builds");
    let first = gateway.call_json("gone_x", json!({})).await;
    insta::assert_snapshot!("cannot_spawn", text_of(&first));
    let retry = |r: &ToolResponse| {
        parse_tool_error(&text_of(r))
            .ok()
            .and_then(|e| e.retry_after_secs())
    };
    assert_eq!(retry(&first), Some(1));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let probing = gateway.call_json("gone_x", json!({})).await;
    assert_eq!(code_of(&probing), "HANDOFF_CONNECTING");
    let deadline = tokio::time::Instant::now() + LIMIT;
    let second = loop {
        let r = gateway.call_json("gone_x", json!({})).await;
        if code_of(&r) == "HANDOFF_UPSTREAM_UNAVAILABLE" || tokio::time::Instant::now() > deadline {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(retry(&second), Some(2), "{}", text_of(&second));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_cancelled_upstream() {
    let marker = std::env::temp_dir().join(format!("fusion-gw-cancel-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let mut command = plain();
    command.env("PLAIN_CANCEL_MARKER", &marker);
    let gateway = Server::builder()
        .mount("plain", Upstream::stdio(command))
        .build()
        .expect("builds");
    let running = running_call(&gateway, "plain_slow", LIMIT).await;
    running.cancel.cancel();
    let answered = tokio::time::timeout(LIMIT, running.answer)
        .await
        .expect("in time")
        .expect("no panic");
    assert_eq!(code_of(&answered), "CANCELLED");
    let deadline = tokio::time::Instant::now() + LIMIT;
    while !marker.exists() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(marker.exists(), "the upstream saw notifications/cancelled");
    let _ = std::fs::remove_file(&marker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstreams_over_http_billing_and_plain() {
    let billing = spawn_http(
        examples::billing::server().expect("billing builds"),
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default(),
    )
    .await
    .expect("billing serves");
    let mut child = plain()
        .args(["--http", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("plain spawns");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let addr = tokio::time::timeout(LIMIT, lines.next_line())
        .await
        .expect("in time")
        .expect("reads")
        .expect("an address");
    let gateway = Server::builder()
        .mount("finance", Upstream::http(&billing.url))
        .mount("plain", Upstream::http(format!("http://{addr}/mcp")))
        .build()
        .expect("builds");
    let ok = gateway
        .call_json(
            "finance_billing_get_invoice",
            json!({"id": "inv_2026_0001"}),
        )
        .await;
    assert!(!ok.is_error, "{}", text_of(&ok));
    let missing = gateway
        .call_json(
            "finance_billing_get_invoice",
            json!({"id": "inv_2026_9999"}),
        )
        .await;
    assert_eq!(code_of(&missing), "NOT_FOUND");
    let fail = gateway.call_json("plain_fail", json!({})).await;
    insta::assert_snapshot!("plain_is_error_text_wrapped_http", text_of(&fail));

    // The upstream's tools/list_changed: the gateway lists the new tool.
    let mut changes = gateway.tool_sources()[1].changes();
    let grown = gateway.call_json("plain_grow", json!({})).await;
    assert_eq!(text_of(&grown), "grown");
    tokio::time::timeout(LIMIT, changes.changed())
        .await
        .expect("list_changed in time")
        .expect("changed");
    let names: Vec<String> = gateway
        .listed_tool_specs()
        .await
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.contains(&"plain_extra".to_owned()), "{names:?}");
    let extra = gateway.call_json("plain_extra", json!({})).await;
    assert_eq!(text_of(&extra), "extra");
    let _ = child.kill().await;
    let _ = billing.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_forwarded_call_carries_a_fresh_delegation_token() {
    const SECRET: &str = "gateway-test-key-0123456789-abcdefghijklmnop";
    let upstream = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_delegated-server"));
        c.arg("serve")
            .env("RUST_LOG", "off")
            .env("FUSION_DELEGATION_KEY", SECRET);
        c
    };
    let key = DelegationKey::new(SECRET).expect("a long enough key");
    let signed = MountOptions {
        delegation: Some(MountDelegation::new(key, "triage", "billing")),
        ..MountOptions::default()
    };
    let gateway = Server::builder()
        .mount_with("finance", Upstream::stdio(upstream()), signed)
        .mount("unsigned", Upstream::stdio(upstream()))
        .build()
        .expect("builds");
    for _ in 0..2 {
        // Two calls: each token is accepted once, so each call needs its own.
        let r = gateway
            .call_json("finance_billing_lookup", json!({"invoice": "inv_1"}))
            .await;
        assert!(!r.is_error, "{}", text_of(&r));
        let got: serde_json::Value = serde_json::from_str(&text_of(&r)).expect("JSON");
        assert_eq!(
            got,
            json!({"invoice": "inv_1", "subject": "local", "issuer": "triage", "carry": {}})
        );
    }
    let refused = gateway
        .call_json("unsigned_billing_lookup", json!({"invoice": "inv_1"}))
        .await;
    assert_eq!(
        code_of(&refused),
        "UNAUTHORIZED",
        "the upstream's envelope, intact"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_list_changed_reaches_a_2025_session() {
    use fusion_runtime::rmcp::model::CallToolRequestParams;

    let gateway = Server::builder()
        .mount("plain", Upstream::stdio(plain()))
        .build()
        .expect("builds");
    let (watcher, mut changed) = list_watcher();
    let (client, http) = over_http_with(gateway, HttpOptions::default(), watcher).await;
    let before = client.list_all_tools().await.expect("tools/list");
    assert!(!before.iter().any(|t| t.name == "plain_extra"));
    let grown = client
        .call_tool(CallToolRequestParams::new("plain_grow"))
        .await
        .expect("call");
    assert_eq!(grown.is_error, Some(false));
    // The first connection's list may have been announced too: wait for the one that
    // brings the new tool.
    let mut listed = false;
    while !listed {
        tokio::time::timeout(LIMIT, changed.recv())
            .await
            .expect("list_changed in time")
            .expect("list_changed");
        let after = client.list_all_tools().await.expect("tools/list");
        listed = after.iter().any(|t| t.name == "plain_extra");
    }
    let _ = client.cancel().await;
    let _ = http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mount_bound_holds_past_it() {
    use fusion_runtime::guard::{ConcurrencyLimit, RateLimit};

    // Tools listed, and upstream tool names: `reject` (6 characters) is left out.
    let gateway = Server::builder()
        .mount_with(
            "plain",
            Upstream::stdio(plain()),
            MountOptions {
                max_tools: 3,
                max_name_chars: 4,
                max_response_bytes: 3,
                ..MountOptions::default()
            },
        )
        .build()
        .expect("builds");
    let names: Vec<String> = gateway
        .listed_tool_specs()
        .await
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["plain_echo", "plain_fail", "plain_slow"]);
    let small = gateway
        .call_json("plain_echo", json!({"text": "abc"}))
        .await;
    assert_eq!(text_of(&small), "abc");
    let big = gateway
        .call_json("plain_echo", json!({"text": "abcd"}))
        .await;
    insta::assert_snapshot!("response_too_large", text_of(&big));

    // Calls forwarded at once: one running, none waiting.
    let gateway = Server::builder()
        .mount_with(
            "plain",
            Upstream::stdio(plain()),
            MountOptions {
                pending: ConcurrencyLimit::new(1, 0),
                call_timeout: Duration::from_secs(2),
                ..quick(400)
            },
        )
        .build()
        .expect("builds");
    let slow = running_call(&gateway, "plain_slow", LIMIT).await;
    let busy = gateway.call_json("plain_echo", json!({"text": "x"})).await;
    assert_eq!(code_of(&busy), "SERVER_BUSY", "{}", text_of(&busy));
    // The slow call outlives the call timeout: the upstream counts as down.
    let timed_out = tokio::time::timeout(LIMIT, slow.answer)
        .await
        .expect("in time")
        .expect("no panic");
    insta::assert_snapshot!("call_timed_out", text_of(&timed_out));

    // A rate limit on the mount's calls.
    let gateway = Server::builder()
        .mount_with(
            "plain",
            Upstream::stdio(plain()),
            MountOptions {
                rate_limit: Some(RateLimit::per_minute(1)),
                ..MountOptions::default()
            },
        )
        .build()
        .expect("builds");
    let first = gateway.call_json("plain_echo", json!({"text": "x"})).await;
    assert_eq!(text_of(&first), "x");
    let second = gateway.call_json("plain_echo", json!({"text": "x"})).await;
    assert_eq!(code_of(&second), "RATE_LIMITED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lockfile_records_a_mounts_tools_and_sees_the_upstream_change() {
    use fusion_runtime::contract::{DeltaSeverity, Lockfile};

    let locked = Server::builder()
        .mount("plain", Upstream::stdio(plain()))
        .build()
        .expect("builds")
        .all_contracts()
        .await;
    assert!(locked.iter().any(|c| c.tool == "plain_echo"));
    let lock = Lockfile::from_contracts(&locked).expect("a lockfile");
    let mut changed = plain();
    changed.env("PLAIN_ECHO_SCHEMA", "v2");
    let now = Server::builder()
        .mount("plain", Upstream::stdio(changed))
        .build()
        .expect("builds")
        .all_contracts()
        .await;
    let deltas = lock.check(&now);
    assert!(
        deltas
            .iter()
            .any(|d| d.severity == DeltaSeverity::Breaking
                && d.action.as_deref() == Some("plain_echo")),
        "{deltas:?}"
    );
    assert!(lock.check(&locked).is_empty());
}

#[tokio::test]
async fn a_mounts_scopes_are_checked_before_anything_is_forwarded() {
    use fusion_runtime::auth::Principal;

    let gateway = Server::builder()
        .mount_with(
            "plain",
            Upstream::stdio(plain()),
            MountOptions {
                scopes: vec!["plain:call".into()],
                ..MountOptions::default()
            },
        )
        .build()
        .expect("builds");
    let anonymous = gateway
        .call_json("plain_echo", json!({"text": "abc"}))
        .await;
    assert!(anonymous.is_error);
    assert!(
        text_of(&anonymous).contains("code=\"AUTH_REQUIRED\""),
        "{}",
        text_of(&anonymous)
    );
    let other = RequestScope::detached().with_principal(Principal::new("u").with_scopes(["x"]));
    let forbidden = gateway
        .call(
            "plain_echo",
            json!({"text": "abc"}).as_object().cloned(),
            other,
        )
        .await;
    assert!(
        text_of(&forbidden).contains("code=\"FORBIDDEN\""),
        "{}",
        text_of(&forbidden)
    );
    assert!(
        text_of(&forbidden).contains("plain:call"),
        "{}",
        text_of(&forbidden)
    );
    let granted =
        RequestScope::detached().with_principal(Principal::new("u").with_scopes(["plain:call"]));
    let allowed = gateway
        .call(
            "plain_echo",
            json!({"text": "abc"}).as_object().cloned(),
            granted,
        )
        .await;
    assert!(!allowed.is_error, "{}", text_of(&allowed));
    assert_eq!(text_of(&allowed), "abc");
}
