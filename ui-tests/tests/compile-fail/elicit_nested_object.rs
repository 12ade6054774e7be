use fusion_runtime::{Elicitable, ToolInput};
use serde::Deserialize;
use std::collections::HashMap;

/// A nested object.
#[derive(Deserialize, ToolInput)]
struct Address {
    /// The city.
    city: String,
}

/// A form is flat: a nested object, a list of objects or a map cannot be a form field.
#[derive(Deserialize, ToolInput, Elicitable)]
struct Confirm {
    /// Fine: a string.
    invoice_id: String,
    /// Fine: a number.
    amount_cents: u64,
    /// Fine: an optional boolean.
    notify: Option<bool>,
    /// A nested object.
    address: Address,
    /// An optional nested object.
    billing_address: Option<Address>,
    /// A list of objects.
    previous: Vec<Address>,
    /// A map.
    labels: HashMap<String, String>,
}

fn main() {}
