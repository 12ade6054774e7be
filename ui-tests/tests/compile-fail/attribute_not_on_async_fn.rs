use fusion_runtime::{prompt, resource, tool_action};

#[tool_action]
struct NotAnAction;

#[prompt]
const NOT_A_PROMPT: u8 = 0;

#[resource(uri = "x://y")]
enum NotAResource {}

fn main() {}
