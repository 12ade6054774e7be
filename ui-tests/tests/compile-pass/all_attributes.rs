//! Every field attribute the derive accepts, on the field types users write them on.
// Written as users write them: a validator on `&Vec<_>`, `n % 2`, a `#[serde(skip)]` field.
#![allow(dead_code, clippy::ptr_arg, clippy::manual_is_multiple_of)]

use fusion_runtime::ToolInput;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Channel {
    Email,
    Sms,
}

fn not_empty(tags: &Vec<String>) -> Result<(), String> {
    if tags.iter().any(String::is_empty) {
        Err("Tags must not be empty".into())
    } else {
        Ok(())
    }
}

fn even(n: &u32) -> Result<(), &'static str> {
    if n % 2 == 0 {
        Ok(())
    } else {
        Err("Must be even")
    }
}

#[derive(Deserialize, ToolInput)]
struct Line {
    #[fusion(pattern = "^SKU-[0-9]+$")]
    sku: String,
}

/// Every attribute once.
#[derive(Deserialize, ToolInput)]
#[serde(rename_all = "camelCase")]
#[fusion(allow_unknown_fields, description = "All of them")]
struct Input {
    /// A name.
    #[fusion(length(min = 1, max = 64))]
    name: String,
    #[fusion(range(min = -5, max = 5), multiple_of = 5)]
    score: i32,
    #[fusion(range(exclusive_min = 0.0, exclusive_max = 1.5))]
    ratio: f64,
    #[fusion(items(min = 1), validate = not_empty)]
    tags: Vec<String>,
    #[fusion(email, expected = "a work email")]
    email: String,
    #[fusion(url)]
    site: Option<String>,
    /// The old name of `site`.
    #[fusion(url, deprecated = "use `site`")]
    homepage: Option<String>,
    #[fusion(uuid)]
    id: String,
    #[fusion(date_time)]
    at: String,
    #[fusion(date)]
    day: String,
    #[fusion(ipv4)]
    v4: String,
    #[fusion(ipv6)]
    v6: String,
    #[fusion(validate = even, description = "An even number")]
    pairs: Option<u32>,
    channel: Channel,
    lines: Vec<Line>,
    #[serde(rename = "r#type", default)]
    kind: String,
    #[serde(skip)]
    cache: u8,
}

fn main() {
    let _ = Input::input_schema();
    let _ = Input::from_arguments(&serde_json::json!({}));
}
