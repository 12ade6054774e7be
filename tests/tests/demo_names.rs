//! The billing demo (`cargo run --example billing`) prints no action name a client could not
//! call: every `billing.…` or `billing_…` word in its transcript — the tools' descriptions,
//! the envelopes the model reads (messages, recoveries, available actions, warnings) and what
//! the client reads back — is a tool its own `tools/list` shows, but for the typo the demo
//! sends on purpose to show `UNKNOWN_ACTION`.

use std::collections::BTreeSet;
use std::time::Duration;

use fusion_tests::clients::bounded;

/// The words of `text` that look like one of the billing server's names: `billing.` or
/// `billing_` and more (an email's `billing@…` and `BILLING_…` variables are not names).
fn names_in(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| w.starts_with("billing.") || w.starts_with("billing_"))
        .collect()
}

#[tokio::test]
async fn the_demo_prints_only_names_tools_list_shows() {
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_billing-server"));
    let limit = Duration::from_secs(60);
    let transcript = bounded("demo", limit, examples::billing::demo::transcript(exe))
        .await
        .unwrap_or_else(|e| panic!("demo: {e:#}"));

    // What the demo's client got from tools/list: the indented lines under its first line.
    let listed: BTreeSet<&str> = transcript
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let server = examples::billing::server().unwrap_or_else(|e| panic!("{e}"));
    let specs = server.listed_tool_specs().await;
    let in_process: BTreeSet<&str> = specs.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(listed, in_process, "the demo's tools/list is the server's");
    assert_eq!(listed.len(), 10);

    // The one name no tool has is the demo's own typo, sent to show UNKNOWN_ACTION: the
    // server quotes it back as what was requested.
    let typos: BTreeSet<&str> = transcript
        .split("<detail key=\"requested\">")
        .skip(1)
        .filter_map(|rest| rest.split_once("</detail>").map(|(v, _)| v))
        .collect();
    assert_eq!(typos, BTreeSet::from(["billing_get_invoce"]));
    let mut printed = names_in(&transcript);
    printed.retain(|n| !typos.contains(n));
    // The demo names most of its tools, in envelopes and in the calls it shows.
    assert!(printed.len() >= 8, "{printed:?}");
    let strays: Vec<&&str> = printed.difference(&listed).collect();
    assert!(
        strays.is_empty(),
        "the demo printed names tools/list does not show: {strays:?}\n{transcript}"
    );
    // The messages the issue quoted, as the client calls the tools.
    for needle in [
        "DEPRECATED: use billing_get_invoice instead",
        "billing_find_invoice is deprecated: use billing_get_invoice instead",
        "billing_reconcile is busy: 1 call running",
        "billing_reconcile did not finish within 5 seconds",
        "billing_charge is rate limited",
    ] {
        assert!(
            transcript.contains(needle),
            "missing {needle}:\n{transcript}"
        );
    }
}
