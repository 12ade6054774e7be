use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Inner {
    a: String,
}

#[derive(Deserialize, ToolInput)]
struct Input {
    #[serde(flatten)]
    inner: Inner,
}

fn main() {}
