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
//! What reads what: `document` reads the text and follows `$ref`s; `schema` turns OpenAPI
//! schemas into JSON Schema 2020-12; `operation` makes each operation's plan (its name, its
//! input and output schemas, where each argument goes); `security` fills credentials;
//! `call` is the action (validation, then the HTTP request); `answer` writes the upstream's
//! answer as a result or an envelope; `generate` writes Rust for the operations a user
//! curates.

mod answer;
mod call;
mod document;
mod generate;
mod operation;
mod schema;
mod security;

pub use call::OpenApiClient;
pub use generate::{GenerateOptions, generate};
pub use operation::{Operation, ParamLocation};
pub use security::Credential;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::server::{BuildError, ServerBuilder};

/// One OpenAPI document to mount, and how: which operations, under which prefix, against
/// which server, with which credentials, within which bounds.
#[derive(Clone, Debug)]
pub struct OpenApi {
    pub(crate) source: document::Source,
    pub(crate) prefix: Option<String>,
    pub(crate) tags: Vec<String>,
    pub(crate) operations: Vec<String>,
    pub(crate) paths: Vec<String>,
    pub(crate) exclude: Vec<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) variables: BTreeMap<String, String>,
    pub(crate) credentials: BTreeMap<String, Credential>,
    pub(crate) limits: OpenApiLimits,
    pub(crate) skip_unsupported: bool,
    pub(crate) output_schemas: bool,
}

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

    pub(crate) fn in_operation(mut self, operation: &str) -> Self {
        if self.operation.is_none() {
            self.operation = Some(operation.to_owned());
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

impl OpenApi {
    fn from_source(source: document::Source) -> Self {
        OpenApi {
            source,
            prefix: None,
            tags: Vec::new(),
            operations: Vec::new(),
            paths: Vec::new(),
            exclude: Vec::new(),
            base_url: None,
            variables: BTreeMap::new(),
            credentials: BTreeMap::new(),
            limits: OpenApiLimits::default(),
            skip_unsupported: false,
            output_schemas: true,
        }
    }

    /// A document in a file (JSON or YAML); the files its `$ref`s name are read relative to
    /// its folder.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self::from_source(document::Source::File(path.into()))
    }

    /// A document as text (JSON or YAML).
    pub fn text(text: impl Into<String>) -> Self {
        Self::from_source(document::Source::Text(text.into(), None))
    }

    /// A document already parsed.
    pub fn json(value: serde_json::Value) -> Self {
        Self::from_source(document::Source::Value(value, None))
    }

    /// Where the files named by the `$ref`s of a document given as text or a value are read
    /// from.
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = Some(dir.into());
        match &mut self.source {
            document::Source::Text(_, base) | document::Source::Value(_, base) => *base = dir,
            document::Source::File(_) => {}
        }
        self
    }

    /// Names every action `prefix` + `_` + its tag (`pets_store.get_order`): the tools of
    /// this document stand apart from the server's others. Without it, actions are named by
    /// tag alone.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Mounts the operations that have one of these tags (with [`operations`](Self::operations)
    /// and [`paths`](Self::paths): any of them). A tag no operation has fails the build.
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// Mounts these operations, by `operationId` or by `METHOD /path` (`GET /pets/{id}`).
    pub fn operations<S: Into<String>>(mut self, operations: impl IntoIterator<Item = S>) -> Self {
        self.operations
            .extend(operations.into_iter().map(Into::into));
        self
    }

    /// Mounts the operations whose path template is one of these, or starts with one that
    /// ends in `/` or `*` (`/pets/`, `/store*`).
    pub fn paths<S: Into<String>>(mut self, paths: impl IntoIterator<Item = S>) -> Self {
        self.paths.extend(paths.into_iter().map(Into::into));
        self
    }

    /// Leaves these operations out (by `operationId` or `METHOD /path`), whatever selects them.
    pub fn exclude<S: Into<String>>(mut self, operations: impl IntoIterator<Item = S>) -> Self {
        self.exclude.extend(operations.into_iter().map(Into::into));
        self
    }

    /// Sends every request to this base URL instead of the document's `servers` (at every
    /// level): the mount's override, and the one origin calls may reach.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// A value for a server variable (`{region}` in `https://{region}.api.example.com`),
    /// instead of its default.
    pub fn server_variable(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.variables.insert(name.into(), value.into());
        self
    }

    /// The credential for the security scheme `scheme` (its name under
    /// `components.securitySchemes`, or Swagger 2.0's `securityDefinitions`). A scheme the
    /// document does not declare fails the build.
    pub fn credential(mut self, scheme: impl Into<String>, credential: Credential) -> Self {
        self.credentials.insert(scheme.into(), credential);
        self
    }

    /// Other bounds than [`OpenApiLimits::default`].
    pub fn limits(mut self, limits: OpenApiLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Leaves out, with a warning in the log, the operations the loader cannot send (a
    /// request body only in a media type it does not write, a cookie or header parameter
    /// that is an object, …) instead of failing the build (default: fail).
    pub fn skip_unsupported(mut self, skip: bool) -> Self {
        self.skip_unsupported = skip;
        self
    }

    /// Whether actions declare the output schema of their 2xx answer (default true). An
    /// answer that does not match it is an error envelope (MCP clients check structured
    /// results against it): turn it off for an API whose document describes its answers
    /// loosely.
    pub fn output_schemas(mut self, on: bool) -> Self {
        self.output_schemas = on;
        self
    }

    /// Reads the document and makes the plan of every selected operation, without mounting
    /// them: what [`ServerBuilder::openapi`] mounts and [`generate`] writes code for.
    pub fn load(&self) -> Result<Vec<Operation>, OpenApiError> {
        Ok(operation::plan(self)?
            .into_iter()
            .map(|p| p.operation)
            .collect())
    }
}

impl ServerBuilder {
    /// Mounts the operations of an OpenAPI document as actions (see [`openapi`](crate::openapi)):
    /// listed, grouped, validated, guarded and scoped as any action (named
    /// `{prefix}_{tag}.{operation}`, so grouped exposure makes one tool per tag). The document
    /// is read now; a document that cannot be honoured fails [`build`](Self::build) with
    /// [`BuildError::OpenApi`] holding an [`OpenApiError`].
    pub fn openapi(self, api: OpenApi) -> Self {
        match call::actions(&api) {
            Ok(actions) => actions
                .into_iter()
                .fold(self, |b, a| b.erased_action(Arc::new(a))),
            Err(e) => self.fail(BuildError::OpenApi(Box::new(e))),
        }
    }
}
