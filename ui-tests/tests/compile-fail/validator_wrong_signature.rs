use fusion_runtime::ToolInput;
use serde::Deserialize;

fn positive(n: i64) -> bool {
    n > 0
}

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(validate = positive)]
    n: i64,
}

fn main() {}
