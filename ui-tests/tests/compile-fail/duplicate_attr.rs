use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(length(min = 1))]
    #[fusion(length(max = 5))]
    name: String,
}

fn main() {}
