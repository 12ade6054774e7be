//! Arbitrary text as tool result content never panics the client.

use fusion_runtime::client::CallOutcome;
use fusion_runtime::rmcp::model::{CallToolResult, ContentBlock};
use proptest::prelude::*;

fn content() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        any::<String>().prop_map(|s| format!("<tool_error code=\"X\">{s}")),
        any::<String>().prop_map(|s| format!(
            "<validation_error action=\"a\"><field name=\"f\">{s}</field></validation_error>"
        )),
        any::<String>().prop_map(|s| format!(
            "<tool_error code=\"{s}\" severity=\"warning\"><message>{s}</message></tool_error>"
        )),
    ]
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(256))]

    #[test]
    fn arbitrary_results_never_panic(texts in prop::collection::vec(content(), 0..4), is_error in any::<bool>()) {
        let blocks: Vec<ContentBlock> = texts.iter().cloned().map(ContentBlock::text).collect();
        let result = if is_error { CallToolResult::error(blocks) } else { CallToolResult::success(blocks) };
        let outcome = CallOutcome::from_result("t", result);
        let _ = outcome.text();
        let _ = outcome.json();
        let _ = outcome.warnings().len();
        let err = outcome.error();
        prop_assert_eq!(err.is_some(), is_error);
        if let Some(e) = err {
            prop_assert_eq!(e.text, texts.join("\n"));
        }
    }
}
