//! Nested test tools for the healing benchmark (issue 59): objects in objects, arrays of
//! objects with a minimum of two, arrays of objects inside the items of another, enums, formats
//! and patterns at every depth, optional nested objects; no unknown key anywhere. With the
//! benches' `orders.place` (an object holding an object, an array of objects, a date, a
//! `multipleOf`), they are where the object kinds of the benchmark are sent.

use fusion_runtime::{Server, ToolError, ToolInput, tool_action};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A country, by its ISO code.
#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy)]
pub enum Country {
    /// Germany.
    DE,
    /// France.
    FR,
    /// The United States.
    US,
}

/// How to reach someone.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Contact {
    /// Where notices go.
    #[fusion(email)]
    pub email: String,
    /// A phone number, with its country code.
    #[fusion(pattern = r"^\+[0-9]{6,15}$")]
    pub phone: Option<String>,
}

/// Who sends.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Party {
    /// The name on the label.
    #[fusion(length(min = 1, max = 80))]
    pub name: String,
    /// Where the party is.
    pub country: Country,
    /// How to reach the party.
    pub contact: Contact,
}

/// A parcel's size.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Dimensions {
    /// Length, in centimetres.
    #[fusion(range(min = 1, max = 200))]
    pub length_cm: u16,
    /// Width, in centimetres.
    #[fusion(range(min = 1, max = 200))]
    pub width_cm: u16,
    /// Height, in centimetres.
    #[fusion(range(min = 1, max = 200))]
    pub height_cm: u16,
}

/// One thing in a parcel, for customs.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Content {
    /// What it is.
    #[fusion(length(min = 1, max = 60))]
    pub description: String,
    /// Its customs code, six digits.
    #[fusion(pattern = "^[0-9]{6}$")]
    pub hs_code: String,
    /// Its value in cents.
    #[fusion(range(min = 1, max = 1000000))]
    pub value_cents: u32,
}

/// One parcel.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Parcel {
    /// Its weight, in grams.
    #[fusion(range(min = 1, max = 30000))]
    pub weight_grams: u32,
    /// Its size.
    pub dimensions: Dimensions,
    /// What is in it, at least one thing.
    #[fusion(items(min = 1, max = 10))]
    pub contents: Vec<Content>,
}

/// A time of day for the pickup.
#[derive(Debug, Deserialize, Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Window {
    /// 8 to 12.
    Morning,
    /// 12 to 18.
    Afternoon,
}

/// When the courier comes.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Pickup {
    /// The day.
    #[fusion(date)]
    pub date: String,
    /// The time of day.
    pub window: Window,
}

/// A shipment of two parcels or more.
#[derive(Debug, Deserialize, ToolInput)]
pub struct CreateShipment {
    /// Who sends it.
    pub sender: Party,
    /// The parcels, 2 to 10.
    #[fusion(items(min = 2, max = 10))]
    pub parcels: Vec<Parcel>,
    /// When to pick it up; the next working day when left out.
    pub pickup: Option<Pickup>,
    /// The caller's own reference.
    #[fusion(uuid)]
    pub reference: String,
}

/// Creates a shipment.
#[tool_action(name = "shipments.create")]
pub async fn create_shipment(input: CreateShipment) -> Result<String, ToolError> {
    let items: usize = input.parcels.iter().map(|p| p.contents.len()).sum();
    Ok(format!(
        "shipment {} from {} ({:?}): {} parcels, {items} items",
        input.reference,
        input.sender.name,
        input.sender.country,
        input.parcels.len()
    ))
}

/// A rectangle on a page.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Rect {
    /// From the left, in points.
    #[fusion(range(min = 0, max = 2000))]
    pub x: u32,
    /// From the top, in points.
    #[fusion(range(min = 0, max = 2000))]
    pub y: u32,
    /// The width, in points, a multiple of 4.
    #[fusion(range(min = 4, max = 2000), multiple_of = 4)]
    pub width: u32,
}

/// A text box.
#[derive(Debug, Deserialize, ToolInput)]
pub struct TextBox {
    /// Where it is.
    pub at: Rect,
    /// What it says.
    #[fusion(length(min = 1, max = 500))]
    pub text: String,
}

/// A page: its text boxes, one at least.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Page {
    /// The boxes.
    #[fusion(items(min = 1, max = 50))]
    pub boxes: Vec<TextBox>,
}

/// A document to lay out.
#[derive(Debug, Deserialize, ToolInput)]
pub struct Layout {
    /// Its title, e.g. `Q3 report`.
    #[fusion(length(min = 1, max = 120))]
    pub title: String,
    /// Its pages, at least one.
    #[fusion(items(min = 1, max = 100))]
    pub pages: Vec<Page>,
}

/// Lays out a document.
#[tool_action(name = "docs.layout")]
pub async fn layout(input: Layout) -> Result<String, ToolError> {
    let boxes: usize = input.pages.iter().map(|p| p.boxes.len()).sum();
    Ok(format!(
        "{}: {} pages, {boxes} boxes",
        input.title,
        input.pages.len()
    ))
}

/// The nested tools' server.
pub fn server() -> Server {
    Server::builder()
        .name("nested")
        .version("0.1.0")
        .action::<CreateShipmentAction>()
        .action::<LayoutAction>()
        .build()
        .unwrap_or_else(|e| panic!("the nested server builds: {e}"))
}
