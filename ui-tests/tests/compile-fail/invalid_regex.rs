use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(pattern = "^inv_[0-9{4}$")]
    invoice_id: String,
}

fn main() {}
