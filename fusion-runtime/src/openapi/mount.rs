//! What to mount: an OpenAPI document's source (a file, text or a value), which of its
//! operations, under which prefix, against which server, with which credentials and within
//! which bounds — the settings `operation` plans from.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::OpenApiLimits;
use super::document::Source;
use super::security::Credential;

/// One OpenAPI document to mount, and how: which operations, under which prefix, against
/// which server, with which credentials, within which bounds.
#[derive(Clone, Debug)]
pub struct OpenApi {
    pub(crate) source: Source,
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

impl OpenApi {
    fn from_source(source: Source) -> Self {
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
        Self::from_source(Source::File(path.into()))
    }

    /// A document as text (JSON or YAML).
    pub fn text(text: impl Into<String>) -> Self {
        Self::from_source(Source::Text(text.into(), None))
    }

    /// A document already parsed.
    pub fn json(value: serde_json::Value) -> Self {
        Self::from_source(Source::Value(Arc::new(value), None))
    }

    /// Where the files named by the `$ref`s of a document given as text or a value are read
    /// from.
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = Some(dir.into());
        match &mut self.source {
            Source::Text(_, base) | Source::Value(_, base) => *base = dir,
            Source::File(_) => {}
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
}
