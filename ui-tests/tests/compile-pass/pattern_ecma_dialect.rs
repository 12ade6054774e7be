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

fn main() {
    // And they validate as written: one digit somewhere, one character twice.
    let ok = serde_json::json!({ "password": "abc1", "twice": "aa" });
    assert!(Input::from_arguments(&ok).is_ok());
    for bad in [
        serde_json::json!({ "password": "abc", "twice": "aa" }),
        serde_json::json!({ "password": "abc1", "twice": "ab" }),
    ] {
        assert!(Input::from_arguments(&bad).is_err(), "{bad} was accepted");
    }
}
