use fusion_runtime::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
struct CreateTask {
    title: String,
    #[fusion(deprecated = 2026)]
    due: Option<String>,
}

fn main() {}
