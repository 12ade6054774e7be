use fusion_runtime::{PromptArguments, ToolInput};
use serde::Deserialize;

/// A nested object.
#[derive(Deserialize, ToolInput)]
struct Address {
    /// The city.
    city: String,
}

/// MCP sends prompt arguments as strings: a number, a boolean, a list or an object cannot be
/// one.
#[derive(Deserialize, ToolInput, PromptArguments)]
struct ReminderArgs {
    /// Fine: a string.
    invoice_id: String,
    /// Fine: an optional string.
    note: Option<String>,
    /// A number.
    days_overdue: u32,
    /// A boolean.
    urgent: Option<bool>,
    /// A list.
    tags: Vec<String>,
    /// A nested object.
    address: Address,
}

fn main() {}
