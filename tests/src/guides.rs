//! The guides under `docs/`, each compiled here as a module's documentation, so that
//! `cargo test --doc` compiles and runs every Rust block in them: no guide's example rots.
//!
//! Each guide is Markdown read as rustdoc: a fence without a language is Rust, so blocks that
//! are not Rust name theirs (`text`, `toml`, `yaml`, `nginx`, `promql`, …).

#[doc = include_str!("../../docs/tracing.md")]
pub mod tracing {}

#[doc = include_str!("../../docs/operations.md")]
pub mod operations {}

#[doc = include_str!("../../docs/testing.md")]
pub mod testing {}

#[doc = include_str!("../../docs/errors.md")]
pub mod errors {}

#[doc = include_str!("../../docs/server.md")]
pub mod server {}

#[doc = include_str!("../../docs/exposure.md")]
pub mod exposure {}

#[doc = include_str!("../../docs/transports.md")]
pub mod transports {}

#[doc = include_str!("../../docs/network.md")]
pub mod network {}

#[doc = include_str!("../../docs/state.md")]
pub mod state {}

#[doc = include_str!("../../docs/gateway.md")]
pub mod gateway {}

#[doc = include_str!("../../docs/tasks.md")]
pub mod tasks {}

#[doc = include_str!("../../docs/envelope.md")]
pub mod envelope {}

#[doc = include_str!("../../docs/inputs.md")]
pub mod inputs {}

/// `llms.txt` at the repository's root: the page a coding agent loads whole. Compiled like the
/// guides, so what it teaches builds.
#[doc = include_str!("../../llms.txt")]
pub mod llms {}

#[doc = include_str!("../../docs/serving.md")]
pub mod serving {}

#[doc = include_str!("../../docs/openapi.md")]
pub mod openapi {}

#[doc = include_str!("../../docs/serverless.md")]
pub mod serverless {}
