use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input(String, u32);

fn main() {}
