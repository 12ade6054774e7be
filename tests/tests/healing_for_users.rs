//! The healing benchmark as users run it (issue 51): the test kit over a user's own server
//! (flat, and nested: issue 59), and the CLI's `heal` command over the billing example, both
//! in process through the whole pipeline.

use std::process::Stdio;
use std::time::Duration;

use fusion_runtime::healing::Kind;
use fusion_runtime::testing::TestServer;
use fusion_runtime::{Server, ToolError, ToolInput, tool_action};
use serde::Deserialize;

/// An account to open.
#[derive(Deserialize, ToolInput)]
struct Open {
    /// The account's ID, e.g. `acc_abc123`.
    #[fusion(pattern = "^acc_[a-z0-9]{6,12}$")]
    id: String,
    /// Where to write.
    #[fusion(email)]
    email: String,
    /// Seats, 1 to 100.
    #[fusion(range(min = 1, max = 100))]
    seats: u32,
}

/// Opens an account.
#[tool_action(name = "accounts.open")]
async fn open(input: Open) -> Result<String, ToolError> {
    Ok(format!("{} opened for {}", input.id, input.email))
}

/// Two numbers, then nothing else.
#[derive(Deserialize, ToolInput)]
struct Pair {
    /// The first.
    a: i64,
    /// The second.
    b: i64,
}

/// Adds them.
#[tool_action(name = "math.add")]
async fn add(input: Pair) -> Result<i64, ToolError> {
    Ok(input.a.saturating_add(input.b))
}

#[tokio::test]
async fn a_users_server_heals_every_broken_call_in_one_round() {
    let kit = TestServer::build(
        Server::builder()
            .action::<OpenAction>()
            .action::<AddAction>(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let report = kit.healing().await;
    report.assert_heals_in_one_round();
    let tools = report.per_tool();
    assert_eq!(
        tools.keys().map(String::as_str).collect::<Vec<_>>(),
        ["accounts_open", "math_add"]
    );
    let rows = report.rows();
    for kind in [
        Kind::WrongType,
        Kind::MissingRequired,
        Kind::UnknownKey,
        Kind::OutOfRange,
        Kind::Pattern,
        Kind::Format,
        Kind::WrongTool,
        Kind::Several,
    ] {
        let row = rows
            .get(&Some(kind))
            .unwrap_or_else(|| panic!("no {kind:?} cases"));
        assert!(
            row.cases > 0 && row.healed1 == row.cases,
            "{kind:?}: {row:?}"
        );
    }
    let table = report.table();
    assert!(table.contains("| accounts_open |"), "{table}");
}

/// Nested tools (issue 59): every object kind is sent, and heals in one round, in process as
/// users run it.
#[tokio::test]
async fn nested_tools_heal_every_object_kind_in_one_round() {
    let kit = TestServer::new(fusion_tests::healing::nested::server());
    let report = kit.healing().await;
    report.assert_heals_in_one_round();
    let rows = report.rows();
    for kind in [
        Kind::ObjectWrongType,
        Kind::ObjectNull,
        Kind::ObjectsTooFew,
        Kind::ItemWrongType,
        Kind::SeveralNested,
        Kind::MissingRequired,
        Kind::UnknownKey,
        Kind::Pattern,
        Kind::OutOfRange,
    ] {
        let row = rows
            .get(&Some(kind))
            .unwrap_or_else(|| panic!("no {kind:?} cases"));
        assert!(
            row.cases > 0 && row.healed1 == row.cases,
            "{kind:?}: {row:?}"
        );
    }
    // Too few parcels: one short of two, and none; an item of another type three ways.
    let sent = |kind: Kind| -> Vec<String> {
        report
            .outcomes
            .iter()
            .filter(|o| o.case.kind == kind && o.case.tool == "shipments_create")
            .map(|o| o.case.what.clone())
            .collect()
    };
    for what in ["parcels: empty", "parcels: 1 items"] {
        assert!(
            sent(Kind::ObjectsTooFew).iter().any(|w| w == what),
            "{:?}",
            sent(Kind::ObjectsTooFew)
        );
    }
    for what in [
        "parcels.0: a string",
        "parcels.0: a number",
        "parcels.0: null",
    ] {
        assert!(
            sent(Kind::ItemWrongType).iter().any(|w| w == what),
            "{:?}",
            sent(Kind::ItemWrongType)
        );
    }
}

/// A tool whose errors say nothing of the rule: the report names what did not heal, and the
/// assertion fails.
mod mute {
    use super::*;

    /// A code.
    #[derive(Deserialize, ToolInput)]
    pub struct Code {
        /// A code, e.g. `AB12`.
        #[fusion(pattern = "^[A-Z]{2}[0-9]{2}$", expected = "a valid code")]
        pub code: String,
    }

    /// Checks a code.
    #[tool_action(name = "codes.check")]
    pub async fn check(input: Code) -> Result<String, ToolError> {
        Ok(input.code)
    }
}

#[tokio::test]
async fn an_error_that_hides_the_rule_is_reported_and_fails_the_assertion() {
    let kit = TestServer::build(Server::builder().action::<mute::CheckAction>())
        .unwrap_or_else(|e| panic!("{e}"));
    let report = kit.healing().await;
    let failed = report.not_healed();
    assert!(
        failed
            .iter()
            .any(|l| l.starts_with("[pattern] codes_check")),
        "{failed:?}"
    );
    let held = std::panic::catch_unwind(|| report.assert_heals_in_one_round());
    assert!(held.is_err(), "the assertion passed with {failed:?}");
}

#[tokio::test]
async fn the_cli_prints_the_report_for_the_billing_example() {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_billing-server"));
    command
        .arg("heal")
        .env("RUST_LOG", "off")
        .env_remove("BILLING_OPERATOR_TOKEN")
        .env_remove("BILLING_LEDGER_DIR")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .unwrap_or_else(|_| panic!("heal did not finish in 120 s"))
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("| wrong type |"), "{stdout}");
    assert!(stdout.contains("| billing_charge |"), "{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("all ") && last.ends_with(" broken calls healed in one round"),
        "{last}"
    );
}
