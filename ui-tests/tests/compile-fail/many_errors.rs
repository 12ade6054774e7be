use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
#[fusion(strict)]
struct Input {
    #[fusion(lenght(min = 1))]
    name: String,
    #[fusion(length(min = 1))]
    count: u32,
    #[fusion(range(min = 10, max = 1))]
    score: i32,
    #[fusion(pattern = "(unclosed")]
    code: String,
    #[fusion(uuid, uuid)]
    id: String,
    #[serde(alias = "mail")]
    email: String,
}

fn main() {}
