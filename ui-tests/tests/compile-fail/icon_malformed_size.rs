use fusion_runtime::{ResourceContent, ToolError, resource};

/// The policy.
#[resource(
    uri = "billing://policy",
    icon(src = "https://example.com/policy.png", sizes = "48x48 96")
)]
async fn policy() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("net 30"))
}

fn main() {}
