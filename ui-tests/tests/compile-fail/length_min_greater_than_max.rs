use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(length(min = 10, max = 3))]
    name: String,
}

fn main() {}
