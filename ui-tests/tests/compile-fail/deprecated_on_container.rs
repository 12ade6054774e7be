use fusion_runtime::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
#[fusion(deprecated = "use `CreateTaskV2`")]
struct CreateTask {
    title: String,
}

fn main() {}
