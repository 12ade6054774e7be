//! `pattern` is ECMA-262, as the run-time validator reads it: look-ahead and back-references
//! compile (Rust's `regex` crate would refuse both).
use fusion_runtime::ToolInput;
use serde::Deserialize;

#[derive(Deserialize, ToolInput)]
struct Input {
    #[fusion(pattern = "^(?=.*[0-9]).+$")]
    password: String,
    #[fusion(pattern = "^(\\w)\\1$")]
    twice: String,
}

fn main() {}
