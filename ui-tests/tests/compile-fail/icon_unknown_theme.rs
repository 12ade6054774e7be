use fusion_runtime::{PromptReply, ToolError, prompt};

/// Reminds a customer.
#[prompt(icon(src = "https://example.com/remind.png", theme = "sepia"))]
async fn remind() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("pay"))
}

fn main() {}
