//! The triage server's one action, shared by the handoff tests and the `handoff-gateway` bin:
//! it hands the conversation to the finance domain.

use fusion_runtime::{Context, ToolError, ToolInput, ToolResponse, tool_action};
use serde::Deserialize;
use serde_json::json;

/// Why the user needs billing.
#[derive(Deserialize, ToolInput)]
pub struct Escalate {
    /// The invoice the user asks about.
    #[fusion(length(min = 1, max = 40))]
    pub invoice: String,
}

/// Hands the conversation to the finance domain.
#[tool_action(name = "triage.escalate")]
pub async fn escalate(input: Escalate, cx: Context) -> Result<ToolResponse, ToolError> {
    Ok(cx.call().handoff(
        "finance",
        "a billing question",
        json!({"invoice": input.invoice}),
    ))
}
