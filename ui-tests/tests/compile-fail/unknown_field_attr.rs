use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(lenght(min = 1))]
    name: String,
}

fn main() {}
