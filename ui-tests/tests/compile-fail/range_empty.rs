use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(range(exclusive_min = 5, max = 5))]
    n: f64,
}

fn main() {}
