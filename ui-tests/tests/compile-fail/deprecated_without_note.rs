use fusion_runtime::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
struct CreateTask {
    title: String,
    #[fusion(deprecated)]
    due: Option<String>,
}

fn main() {}
