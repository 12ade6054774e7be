//! An HTTP API described by OpenAPI, as actions (feature `openapi`): each operation of an
//! OpenAPI 3.1, 3.0 or Swagger 2.0 document (JSON or YAML) becomes an action whose input
//! schema is made of the operation's parameters and request body, enforced by the validation
//! engine, and whose handler sends the request the document describes and writes the answer
//! as the model should read it.
//!
//! ```no_run
//! use fusion_runtime::openapi::{Credential, OpenApi};
//! use fusion_runtime::Server;
//!
//! let server = Server::builder()
//!     .name("pets")
//!     .openapi(
//!         OpenApi::file("petstore.yaml")
//!             .prefix("pets")
//!             .tags(["pet"])
//!             .base_url("http://127.0.0.1:8080/api/v3")
//!             .credential("api_key", Credential::api_key("secret")),
//!     )
//!     .build()?;
//! # Ok::<(), fusion_runtime::server::BuildError>(())
//! ```
//!
//! The document is read by [`ServerBuilder::openapi`](crate::ServerBuilder::openapi); a
//! document the loader cannot honour — a `$ref` to nothing, a cycle of `$ref`s, a parameter
//! style it cannot send, a server URL it cannot reach — fails
//! [`build`](crate::ServerBuilder::build) with an [`OpenApiError`] naming the operation and
//! the JSON pointer. Everything a document or an upstream can make cost is bounded by
//! [`OpenApiLimits`].
//!
//! What reads what: this file holds the bounds, the error and where a parameter travels;
//! `mount` what to mount (the document's source, the selection, the server, credentials);
//! `document` reads the text and follows `$ref`s; `schema` turns OpenAPI schemas into JSON
//! Schema 2020-12; `operation` makes each operation's plan (its name, its input and output
//! schemas, where each argument goes); `security` fills credentials; `call` is the action
//! (validation, then the HTTP request) and mounts it on a server; `reply` writes the
//! upstream's answer as a result or an envelope; `generate` writes Rust for the operations a
//! user curates.

mod call;
mod document;
mod generate;
mod mount;
mod operation;
mod reply;
mod schema;
mod security;

pub use call::OpenApiClient;
pub use generate::{GenerateOptions, generate};
pub use mount::OpenApi;
pub use operation::{MAX_DESCRIPTION_CHARS, Operation};
pub use security::Credential;

use std::fmt;
use std::time::Duration;

/// The bounds of one mounted document and of the calls its actions make, each with a default.
#[derive(Clone, Debug)]
pub struct OpenApiLimits {
    /// The largest document (and each file a `$ref` reads), in bytes (default 64 MiB: GitHub's
    /// REST description is about 12 MiB).
    pub max_document_bytes: usize,
    /// Files read besides the document through `$ref`s (default 64).
    pub max_files: usize,
    /// `$ref`s followed in one chain before giving up (default 64).
    pub max_ref_depth: usize,
    /// Operations mounted from one document (default 5,000); more fail the build.
    pub max_operations: usize,
    /// Schemas one operation's input or output may hold in `$defs` (default 2,000).
    pub max_schemas: usize,
    /// The input and output schemas of every operation mounted from the document, together,
    /// as JSON, in bytes (default 64 MiB; GitHub's REST description's are 5.3 MB). Each
    /// operation holds its own copy of every schema it reaches, so a small document whose
    /// operations all reach one wide web of schemas would otherwise cost its size times the
    /// number of operations.
    pub max_schema_bytes: usize,
    /// A call gives up after this, connecting and reading included (default 30 s): `TIMEOUT`.
    pub timeout: Duration,
    /// Connecting gives up after this (default 10 s): `TIMEOUT`.
    pub connect_timeout: Duration,
    /// The largest answer read from the API, in bytes (default 4 MiB); a larger one is not
    /// read past the bound and is answered with an envelope.
    pub max_response_bytes: usize,
    /// Redirects followed, each to the same origin only (default 5).
    pub max_redirects: usize,
}

impl Default for OpenApiLimits {
    fn default() -> Self {
        OpenApiLimits {
            max_document_bytes: 64 << 20,
            max_files: 64,
            max_ref_depth: 64,
            max_operations: 5_000,
            max_schemas: 2_000,
            max_schema_bytes: 64 << 20,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_response_bytes: 4 << 20,
            max_redirects: 5,
        }
    }
}

/// Why a document cannot be mounted: what, the operation it concerns (when one), and where in
/// the document (a JSON pointer, prefixed with the file for another file than the document).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenApiError {
    /// The operation (`GET /pets/{id}`, with its `operationId` when it has one), if the fault is
    /// in one.
    pub operation: Option<String>,
    /// Where: `#/paths/~1pets~1{id}/get/parameters/0`.
    pub pointer: String,
    /// What is wrong, and what to do about it.
    pub message: String,
}

impl OpenApiError {
    pub(crate) fn document(pointer: &str, message: impl Into<String>) -> Self {
        OpenApiError {
            operation: None,
            pointer: pointer.to_owned(),
            message: message.into(),
        }
    }

    /// The error, said of the operation `label` (`GET /pets/{id} (getPet)`) unless it names
    /// one already.
    pub(crate) fn in_operation(mut self, label: &str) -> Self {
        if self.operation.is_none() {
            self.operation = Some(label.to_owned());
        }
        self
    }
}

impl fmt::Display for OpenApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OpenAPI document: ")?;
        if let Some(op) = &self.operation {
            write!(f, "operation {op}: ")?;
        }
        if !self.pointer.is_empty() {
            write!(f, "at {}: ", self.pointer)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpenApiError {}

/// Where a parameter travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamLocation {
    /// In the path, in place of `{name}`.
    Path,
    /// In the query string.
    Query,
    /// A request header.
    Header,
    /// A cookie.
    Cookie,
}

impl ParamLocation {
    fn parse(s: &str) -> Option<ParamLocation> {
        Some(match s {
            "path" => ParamLocation::Path,
            "query" => ParamLocation::Query,
            "header" => ParamLocation::Header,
            "cookie" => ParamLocation::Cookie,
            _ => return None,
        })
    }

    /// The document's word: `path`, `query`, `header` or `cookie`.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamLocation::Path => "path",
            ParamLocation::Query => "query",
            ParamLocation::Header => "header",
            ParamLocation::Cookie => "cookie",
        }
    }
}
