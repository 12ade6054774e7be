use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[serde(alias = "mail")]
    email: String,
}

fn main() {}
