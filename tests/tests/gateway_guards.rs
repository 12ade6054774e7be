//! What of the gateway server's own settings reaches a mounted upstream's tools, with a real
//! upstream (`plain-upstream`, a plain rmcp server, over stdio): the guards set by the
//! prefixed tool name (`RATE_LIMITED`, `SERVER_BUSY`, `TIMEOUT`, worded as for an action),
//! the middleware chain (with a context that names the mount and the tool), and the scopes set
//! by name on top of the mount's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion_runtime::auth::Principal;
use fusion_runtime::client::parse_tool_error;
use fusion_runtime::context::RequestScope;
use fusion_runtime::envelope::ToolResponse;
use fusion_runtime::gateway::{MountOptions, Upstream};
use fusion_runtime::guard::{ConcurrencyLimit, RateLimit};
use fusion_runtime::server::{CallRequest, Next, middleware_fn};
use fusion_runtime::{Context, Server, ToolError, ToolInput, codes, error, tool_action};
use fusion_tests::{code_of, sinks::running_call, text_of};
use serde::Deserialize;
use serde_json::json;
use tokio::process::Command;

const LIMIT: Duration = Duration::from_secs(30);

fn plain() -> Command {
    Command::new(env!("CARGO_BIN_EXE_plain-upstream"))
}

/// What to echo.
#[derive(Deserialize, ToolInput)]
struct Said {
    /// The text.
    text: String,
}

/// Echoes the text: an action guarded like the mounted tool, to compare the envelopes.
#[tool_action(name = "local.echo")]
async fn local_echo(input: Said, _cx: Context) -> Result<String, ToolError> {
    Ok(input.text)
}

/// Waits until cancelled: an action with the same timeout as the mounted tool.
#[tool_action(name = "local.slow")]
async fn local_slow(_input: Said, _cx: Context) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(60)).await;
    Ok("done".into())
}

/// `text` with every `from` made `to`: the action's envelope, named as the mounted tool.
fn renamed(r: &ToolResponse, from: &str, to: &str) -> String {
    text_of(r).replace(from, to)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_rate_limit_and_timeout_reach_a_mounted_tool_by_its_prefixed_name() {
    let gateway = Server::builder()
        .action::<LocalEchoAction>()
        .action::<LocalSlowAction>()
        .mount("plain", Upstream::stdio(plain()))
        .rate_limit("plain_echo", RateLimit::per_minute(1))
        .rate_limit("local.echo", RateLimit::per_minute(1))
        .timeout("plain_slow", Duration::from_secs(1))
        .timeout("local.slow", Duration::from_secs(1))
        .build()
        .expect("the gateway builds");
    let first = gateway.call_json("plain_echo", json!({"text": "hi"})).await;
    assert_eq!((text_of(&first).as_str(), first.is_error), ("hi", false));
    let limited = gateway.call_json("plain_echo", json!({"text": "hi"})).await;
    assert_eq!(code_of(&limited), "RATE_LIMITED", "{}", text_of(&limited));
    let e = parse_tool_error(&text_of(&limited)).expect("an envelope");
    assert!(
        e.retry_after_duration()
            .is_some_and(|d| d >= Duration::from_secs(59))
    );
    // Another tool of the same mount has no limit.
    let other = gateway.call_json("plain_fail", json!({})).await;
    assert_eq!(code_of(&other), "INTERNAL_ERROR");

    let _ = gateway.call_json("local_echo", json!({"text": "hi"})).await;
    let action_limited = gateway.call_json("local_echo", json!({"text": "hi"})).await;
    assert_eq!(
        text_of(&limited),
        renamed(&action_limited, "local_echo", "plain_echo"),
        "the same envelope as an action's"
    );

    let timed_out = gateway.call_json("plain_slow", json!({})).await;
    assert_eq!(code_of(&timed_out), "TIMEOUT", "{}", text_of(&timed_out));
    let action_timed_out = gateway.call_json("local_slow", json!({"text": "x"})).await;
    assert_eq!(
        text_of(&timed_out),
        renamed(&action_timed_out, "local_slow", "plain_slow")
    );
    // The server's timeout stops the call, not the upstream: the next call is forwarded.
    let after = gateway.call_json("plain_fail", json!({})).await;
    assert_eq!(code_of(&after), "INTERNAL_ERROR", "{}", text_of(&after));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_concurrency_limit_reaches_a_mounted_tool() {
    let gateway = Server::builder()
        .mount("plain", Upstream::stdio(plain()))
        .concurrency("plain_slow", ConcurrencyLimit::new(1, 0))
        .build()
        .expect("builds");
    // The upstream reports progress once the call runs there: the slot is taken.
    let running = running_call(&gateway, "plain_slow", LIMIT).await;
    let busy = gateway.call_json("plain_slow", json!({})).await;
    assert_eq!(code_of(&busy), "SERVER_BUSY", "{}", text_of(&busy));
    assert!(text_of(&busy).contains("plain_slow is busy: 1 call running and 0 waiting"));
    running.cancel.cancel();
    let first = tokio::time::timeout(LIMIT, running.answer)
        .await
        .expect("in time")
        .expect("joins");
    assert!(text_of(&first).contains("cancelled"), "{}", text_of(&first));
    // The slot is free again.
    let echo = gateway.call_json("plain_echo", json!({"text": "x"})).await;
    assert!(!echo.is_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_middleware_chain_runs_around_a_forwarded_call() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = Arc::clone(&seen);
    let gateway = Server::builder()
        .mount("plain", Upstream::stdio(plain()))
        .middleware(middleware_fn(move |req: CallRequest, next: Next| {
            let record = Arc::clone(&record);
            async move {
                let cx = req.context();
                record.lock().expect("lock").push(format!(
                    "{} {} {:?} {}",
                    req.action(),
                    cx.tool(),
                    cx.mount(),
                    serde_json::Value::Object(req.arguments().clone())
                ));
                if cx.tool() == "plain_fail" {
                    return Err(anyhow::Error::new(error(
                        codes::FORBIDDEN,
                        "plain_fail is off limits",
                    )));
                }
                if cx.tool() == "plain_reject" {
                    return Err(anyhow::anyhow!("the audit log is full"));
                }
                Ok(next.run(req).await)
            }
        }))
        .build()
        .expect("builds");
    let echo = gateway.call_json("plain_echo", json!({"text": "hi"})).await;
    assert_eq!((text_of(&echo).as_str(), echo.is_error), ("hi", false));
    let refused = gateway.call_json("plain_fail", json!({})).await;
    assert_eq!(code_of(&refused), "FORBIDDEN", "{}", text_of(&refused));
    let failed = gateway.call_json("plain_reject", json!({})).await;
    assert_eq!(code_of(&failed), "INTERNAL_ERROR", "{}", text_of(&failed));
    assert!(
        text_of(&failed).contains("plain_reject"),
        "{}",
        text_of(&failed)
    );
    assert!(
        !text_of(&failed).contains("flux capacitor"),
        "the upstream was not called: {}",
        text_of(&failed)
    );
    assert_eq!(
        *seen.lock().expect("lock"),
        [
            r#"plain plain_echo Some("plain") {"text":"hi"}"#,
            r#"plain plain_fail Some("plain") {}"#,
            r#"plain plain_reject Some("plain") {}"#,
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_set_by_tool_name_compose_with_the_mounts_and_all_are_declared() {
    let gateway = Server::builder()
        .mount_with(
            "plain",
            Upstream::stdio(plain()),
            MountOptions {
                scopes: vec!["plain:call".into()],
                ..MountOptions::default()
            },
        )
        .scopes("plain_fail", ["plain:admin"])
        .build()
        .expect("builds");
    assert_eq!(gateway.declared_scopes(), ["plain:admin", "plain:call"]);
    let caller = |scopes: &[&str]| {
        RequestScope::detached().with_principal(Principal::new("u").with_scopes(scopes.to_vec()))
    };
    let call = |tool: &'static str, scope: RequestScope| {
        let gateway = gateway.clone();
        async move { gateway.call(tool, Some(Default::default()), scope).await }
    };
    let anonymous = gateway.call_json("plain_fail", json!({})).await;
    assert_eq!(code_of(&anonymous), "AUTH_REQUIRED");
    let echo = call("plain_echo", caller(&["plain:call"])).await;
    assert!(!echo.is_error, "{}", text_of(&echo));
    let only_mount = call("plain_fail", caller(&["plain:call"])).await;
    assert_eq!(code_of(&only_mount), "FORBIDDEN");
    assert!(
        text_of(&only_mount).contains("plain:admin"),
        "{}",
        text_of(&only_mount)
    );
    let only_tool = call("plain_fail", caller(&["plain:admin"])).await;
    assert_eq!(code_of(&only_tool), "FORBIDDEN");
    assert!(
        text_of(&only_tool).contains("plain:call"),
        "{}",
        text_of(&only_tool)
    );
    let both = call("plain_fail", caller(&["plain:admin", "plain:call"])).await;
    assert_eq!(
        code_of(&both),
        "INTERNAL_ERROR",
        "forwarded: {}",
        text_of(&both)
    );
    assert!(text_of(&both).contains("database exploded"));
}

#[test]
fn a_setting_for_a_name_under_no_mount_and_no_action_is_refused() {
    let built = Server::builder()
        .mount("plain", Upstream::stdio(plain()))
        .rate_limit("other_echo", RateLimit::per_minute(1))
        .build();
    let e = built.expect_err("refused").to_string();
    assert!(e.contains("other_echo"), "{e}");
    let built = Server::builder()
        .mount("plain", Upstream::stdio(plain()))
        .scopes("other_echo", ["x"])
        .build();
    assert!(built.is_err());
    // A mount's own name: its options hold for all its tools.
    let e = Server::builder()
        .mount("plain", Upstream::stdio(plain()))
        .concurrency("plain", ConcurrencyLimit::new(1, 0))
        .build()
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("`plain` is a mount") && e.contains("MountOptions"),
        "{e}"
    );
}
