//! Integration tests for Fusion (see tests/), and what they share.

use std::any::Any;

pub mod clients;
pub mod echo;
pub mod fixtures;
pub mod guides;
pub mod healing;
pub mod hs256;
pub mod mrtr;
pub mod openapi;
pub mod raw_http;
pub mod raw_stdio;
pub mod services;
pub mod sinks;
pub mod tasks;
pub mod triage;

use fusion_runtime::envelope::ToolResponse;

/// SPEC §1's `<tool_error>` example, byte for byte.
pub const SEED_NOT_FOUND: &str = r#"<tool_error code="NOT_FOUND" severity="error">
  <message>No invoice with that ID</message>
  <recovery>List invoices first, then retry with a real ID</recovery>
  <available_actions>
    <action>billing.list_invoices</action>
  </available_actions>
  <details>
    <detail key="requestedId">inv_2026_9999</detail>
  </details>
  <retry_after>30 seconds</retry_after>
</tool_error>"#;
use proptest::test_runner::{Config, FailurePersistence, FileFailurePersistence, PersistedSeed};

/// The property tests' configuration: `cases` cases, and failures persisted as the
/// [`Replayed`] policy says (none at all with `PROPTEST_DISABLE_FAILURE_PERSISTENCE`, as
/// `scripts/flake-hunt` runs them).
pub fn proptest_config(cases: u32) -> Config {
    let base = Config::default();
    Config {
        cases,
        failure_persistence: base
            .failure_persistence
            .map(|_| Box::new(Replayed) as Box<dyn FailurePersistence>),
        ..base
    }
}

/// Failure persistence that replays the committed `*.proptest-regressions` files beside each
/// test file everywhere, but writes a new one only on a developer's machine. In CI (`CI` set)
/// a new failure is printed instead — `cc <seed>` lines to paste into the file — so a run
/// never writes into the source tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Replayed;

impl Replayed {
    const FILES: FileFailurePersistence =
        FileFailurePersistence::WithSource("proptest-regressions");
}

impl FailurePersistence for Replayed {
    fn load_persisted_failures2(&self, source_file: Option<&'static str>) -> Vec<PersistedSeed> {
        Self::FILES.load_persisted_failures2(source_file)
    }

    fn save_persisted_failure2(
        &mut self,
        source_file: Option<&'static str>,
        seed: PersistedSeed,
        shrunken_value: &dyn std::fmt::Debug,
    ) {
        if std::env::var_os("CI").is_some() {
            eprintln!(
                "proptest: a new failure in {}; add this line to its .proptest-regressions file to replay it:\ncc {seed} # shrinks to {shrunken_value:?}",
                source_file.unwrap_or("(unknown file)")
            );
        } else {
            let mut files = Self::FILES;
            files.save_persisted_failure2(source_file, seed, shrunken_value);
        }
    }

    fn box_clone(&self) -> Box<dyn FailurePersistence> {
        Box::new(Replayed)
    }

    fn eq(&self, other: &dyn FailurePersistence) -> bool {
        other.as_any().is::<Replayed>()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A response's text blocks, one per line.
pub fn text_of(r: &ToolResponse) -> String {
    r.texts().collect::<Vec<_>>().join("\n")
}

/// The code of the envelope a response's text is, or `(not an envelope)`.
pub fn code_of(r: &ToolResponse) -> String {
    fusion_runtime::client::parse_tool_error(&text_of(r))
        .map(|e| e.code().to_string())
        .unwrap_or_else(|_| "(not an envelope)".to_owned())
}
