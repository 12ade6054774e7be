use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
enum Input {
    A,
    B,
}

fn main() {}
