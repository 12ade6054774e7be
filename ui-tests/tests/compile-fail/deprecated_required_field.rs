use fusion_runtime::ToolInput;

#[derive(serde::Deserialize, ToolInput)]
struct CreateTask {
    title: String,
    #[fusion(deprecated = "use `due_date`")]
    due: String,
}

fn main() {}
