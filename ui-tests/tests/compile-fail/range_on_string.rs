use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(range(min = 1, max = 10))]
    name: Option<String>,
}

fn main() {}
