//! An error that is not a tool error reaches the operator's log whole: the billing example
//! (`billing-server`, `cli::run`) served over stdio with `RUST_LOG=fusion_runtime::server=info`
//! answers `billing_export_ledger`'s plain `io::Error` with `INTERNAL_ERROR`, and its stderr
//! has the `handler failed: INTERNAL_ERROR` line with the error's text. (Off by default:
//! `log_defaults.rs` holds the default run to its startup line and the panic.)

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use tokio::io::AsyncReadExt;

const LIMIT: Duration = Duration::from_secs(30);

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} took more than {LIMIT:?}"),
    }
}

#[tokio::test]
async fn an_internal_error_is_logged_with_its_message() {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_billing-server"));
    command
        .arg("serve")
        .env("RUST_LOG", "warn,fusion_runtime::server=info")
        .env_remove("BILLING_LEDGER_DIR")
        .env_remove("BILLING_OPERATOR_TOKEN")
        .kill_on_drop(true);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn billing-server: {e}"));
    let Some(mut stderr) = stderr else {
        panic!("stderr is piped")
    };
    let read = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    let client = bounded("stdio handshake", ().serve(transport))
        .await
        .unwrap_or_else(|e| panic!("stdio handshake: {e}"));
    let result = bounded(
        "export",
        client.call_tool(CallToolRequestParams::new("billing_export_ledger")),
    )
    .await
    .unwrap_or_else(|e| panic!("export: {e}"));
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let answer = format!("{:?}", result.content);
    assert!(answer.contains("INTERNAL_ERROR"), "{answer}");
    let _ = client.cancel().await;
    let log = bounded("stderr", read)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("handler failed: INTERNAL_ERROR"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains("ledger storage is not configured (BILLING_LEDGER_DIR is unset)"),
        "{log}"
    );
}
