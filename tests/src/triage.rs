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
    Ok(cx.handoff(
        "finance",
        "a billing question",
        json!({"invoice": input.invoice}),
    ))
}

/// The triage gateway of the handoff tests and the `handoff-gateway` bin: `triage.escalate`
/// hands the session to the `finance` domain, `upstream` (a `delegated-server serve`), mounted
/// for handoff only behind delegation (issuer `triage`, audience `billing`).
pub fn gateway(
    upstream: tokio::process::Command,
    key: fusion_runtime::auth::DelegationKey,
) -> Result<fusion_runtime::Server, fusion_runtime::server::BuildError> {
    use fusion_runtime::gateway::{MountDelegation, MountOptions, Upstream};
    fusion_runtime::Server::builder()
        .name("triage")
        .action::<EscalateAction>()
        .mount_with(
            "finance",
            Upstream::stdio(upstream),
            MountOptions {
                handoff_only: true,
                delegation: Some(MountDelegation::new(key, "triage", "billing")),
                ..MountOptions::default()
            },
        )
        .build()
}
