use fusion_runtime::{ToolError, ToolInput, tool_action};

#[derive(serde::Deserialize, ToolInput)]
struct Charge {
    amount_cents: u64,
}

/// Charges an amount.
#[tool_action(name = "billing.charge", scopes = ["billing:write", 42])]
async fn charge(input: Charge) -> Result<u64, ToolError> {
    Ok(input.amount_cents)
}

fn main() {}
