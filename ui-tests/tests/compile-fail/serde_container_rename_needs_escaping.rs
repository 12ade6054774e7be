use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
#[serde(rename = "billing address")]
struct Address {
    city: String,
}

fn main() {}
