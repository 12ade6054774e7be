use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(email, pattern = "@example\\.com$")]
    contact: String,
}

fn main() {}
