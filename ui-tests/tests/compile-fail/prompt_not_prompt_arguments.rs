use fusion_runtime::{PromptReply, ToolError, ToolInput, prompt};
use serde::Deserialize;

/// Derives `ToolInput` only: a prompt needs `PromptArguments` as well.
#[derive(Deserialize, ToolInput)]
struct Topic {
    /// The topic.
    topic: String,
}

/// Outlines a topic.
#[prompt]
async fn outline(t: Topic) -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user(t.topic))
}

fn main() {}
