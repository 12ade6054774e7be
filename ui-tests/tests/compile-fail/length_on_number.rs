use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(length(max = 3))]
    count: u32,
}

fn main() {}
