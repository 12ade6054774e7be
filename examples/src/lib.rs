//! Example servers; see the `billing` example (`cargo run --example billing`).

#[path = "../billing/mod.rs"]
pub mod billing;
