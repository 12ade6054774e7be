//! Resources: what `#[resource]` registers — a static URI or a URI template whose parameters
//! are typed and validated like tool inputs, and a handler that returns the contents.
//!
//! ```
//! use fusion_runtime::resource::ResourceContent;
//! use fusion_runtime::{ToolError, ToolInput, error, codes::NOT_FOUND, resource};
//! use serde::Deserialize;
//!
//! /// The billing policy every reminder quotes.
//! #[resource(uri = "billing://policy", name = "policy", mime = "text/markdown")]
//! async fn policy() -> Result<ResourceContent, ToolError> {
//!     Ok(ResourceContent::text("Invoices are due in 30 days."))
//! }
//!
//! /// Which invoice.
//! #[derive(Deserialize, ToolInput)]
//! struct InvoiceUri {
//!     /// The invoice ID.
//!     #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
//!     id: String,
//! }
//!
//! /// One invoice, as JSON.
//! #[resource(template = "billing://invoices/{id}", name = "invoice", mime = "application/json")]
//! async fn invoice(p: InvoiceUri) -> Result<ResourceContent, ToolError> {
//!     Err(error(NOT_FOUND, format!("No invoice {}", p.id)))
//! }
//!
//! let server = fusion_runtime::Server::builder()
//!     .resource::<PolicyResource>()
//!     .resource::<InvoiceResource>()
//!     .build()
//!     .unwrap();
//! assert_eq!(server.catalog().resources().len(), 2);
//! ```
//!
//! A read matches the exact URI of a static resource first, then each template in
//! registration order. The captured parameters are validated by the template's input type —
//! a `<validation_error>` in a JSON-RPC `-32602` when they are wrong — and a handler's
//! `NOT_FOUND` error, like a URI nothing matches, is the protocol's resource-not-found.

mod template;

pub use template::{TemplateError, UriTemplate};

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine as _;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::action::HandlerFailure;
use crate::completion::Completer;
use crate::context::{CallContext, StateRequirement};
use crate::envelope::{ToolError, codes};
use crate::input::{JsonObject, ToolInput};
use crate::validation::ValidationReport;

/// What a resource handler returns: text or bytes, with a MIME type (the attribute's
/// `mime` unless set here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceContent {
    body: Body,
    mime_type: Option<String>,
    /// The type when neither the contents nor the attribute set one (`application/json` for
    /// [`ResourceContent::json`]).
    fallback_mime: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Body {
    Text(String),
    Blob(String),
}

impl ResourceContent {
    /// Text contents.
    pub fn text(text: impl Into<String>) -> Self {
        ResourceContent {
            body: Body::Text(text.into()),
            mime_type: None,
            fallback_mime: None,
        }
    }

    /// A value as JSON text (`application/json` unless the attribute says otherwise).
    pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        match serde_json::to_string_pretty(value) {
            Ok(text) => Ok(ResourceContent {
                body: Body::Text(text),
                mime_type: None,
                fallback_mime: Some("application/json"),
            }),
            Err(e) => Err(ToolError::new(
                codes::INTERNAL_ERROR,
                format!("The resource could not be serialized: {e}"),
            )),
        }
    }

    /// Binary contents; they go out base64-encoded.
    pub fn blob(bytes: impl AsRef<[u8]>) -> Self {
        ResourceContent {
            body: Body::Blob(base64::engine::general_purpose::STANDARD.encode(bytes)),
            mime_type: None,
            fallback_mime: None,
        }
    }

    /// Binary contents already base64-encoded.
    pub fn blob_base64(base64: impl Into<String>) -> Self {
        ResourceContent {
            body: Body::Blob(base64.into()),
            mime_type: None,
            fallback_mime: None,
        }
    }

    /// Sets the MIME type of these contents.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The text, when the contents are text.
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            Body::Text(t) => Some(t),
            Body::Blob(_) => None,
        }
    }

    /// The base64 data, when the contents are binary.
    pub fn as_base64(&self) -> Option<&str> {
        match &self.body {
            Body::Blob(b) => Some(b),
            Body::Text(_) => None,
        }
    }

    /// The MIME type set on the contents, if any.
    pub fn mime(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The MIME type when neither the contents nor the resource's attribute set one.
    pub fn fallback_mime(&self) -> Option<&'static str> {
        self.fallback_mime
    }
}

/// Everything known about a resource before it is read.
#[derive(Clone, Debug)]
pub struct ResourceInfo {
    /// The URI (`billing://policy`) or the URI template (`billing://invoices/{id}`).
    pub uri: &'static str,
    /// Whether [`uri`](Self::uri) is a template.
    pub is_template: bool,
    /// A short name (`invoice`).
    pub name: Cow<'static, str>,
    /// A human-readable title, if given.
    pub title: Option<Cow<'static, str>>,
    /// What the resource holds (from the doc comment unless given).
    pub description: Cow<'static, str>,
    /// The MIME type of its contents, if declared.
    pub mime_type: Option<Cow<'static, str>>,
    /// The template parameters' JSON Schema (an empty object schema for a static resource).
    pub params_schema: Arc<JsonObject>,
    /// The shared state the handler needs, checked when the server is built.
    pub state: Option<StateRequirement>,
    /// The icons its attribute declares (`icon = ".."`), listed unless
    /// [`ServerBuilder::icons`](crate::ServerBuilder::icons) sets others.
    pub icons: &'static [crate::action::StaticIcon],
}

/// What a resource handler produced: its contents, or why it failed.
pub type ResourceOutcome = Result<ResourceContent, HandlerFailure>;

/// A resource `#[resource]` generated.
///
/// Implemented by the companion struct of each `#[resource]` function (`InvoiceResource` for
/// `fn invoice`); register it with [`ServerBuilder::resource`](crate::ServerBuilder::resource).
pub trait ResourceAction: Send + Sync + 'static {
    /// The URI or URI template.
    const URI: &'static str;
    /// The template's parameters ([`NoParams`] for a static resource).
    type Params: ToolInput;

    /// The resource's metadata.
    fn info() -> ResourceInfo;

    /// Reads the resource with validated parameters. A panic inside is caught.
    fn read(params: Self::Params, cx: &CallContext) -> BoxFuture<'static, ResourceOutcome>;

    /// The completer of a template parameter, when one is named
    /// (`#[resource(complete(id = path::to_fn))]`). Enum parameters complete without one.
    fn completer(parameter: &str) -> Option<Completer> {
        let _ = parameter;
        None
    }

    /// The parameters that have a completer.
    fn completed_parameters() -> &'static [&'static str] {
        &[]
    }
}

/// The parameters of a static resource: none.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoParams;

// Not listed among the types that implement `ToolInput` when a user's type does not.
#[diagnostic::do_not_recommend]
impl ToolInput for NoParams {
    fn input_schema() -> Arc<JsonObject> {
        static SCHEMA: std::sync::OnceLock<Arc<JsonObject>> = std::sync::OnceLock::new();
        SCHEMA
            .get_or_init(|| {
                let mut m = JsonObject::new();
                m.insert("type".into(), Value::from("object"));
                m.insert("properties".into(), Value::Object(JsonObject::new()));
                Arc::new(m)
            })
            .clone()
    }

    fn from_arguments(_: &Value) -> Result<Self, ValidationReport> {
        Ok(NoParams)
    }
}

/// What `#[resource]` expands to call. Not a stable API.
#[doc(hidden)]
pub mod __private {
    use super::*;

    pub use crate::action::HandlerReturn;

    /// Builds a resource's metadata (`#[resource]`'s `info()`).
    #[allow(clippy::too_many_arguments)]
    pub fn resource_info(
        uri: &'static str,
        is_template: bool,
        name: &'static str,
        title: Option<&'static str>,
        description: &'static str,
        mime_type: Option<&'static str>,
        params_schema: Arc<JsonObject>,
        state: Option<StateRequirement>,
    ) -> ResourceInfo {
        ResourceInfo {
            uri,
            is_template,
            name: Cow::Borrowed(name),
            title: title.map(Cow::Borrowed),
            description: crate::action::expand::description_text(description),
            mime_type: mime_type.map(Cow::Borrowed),
            params_schema,
            state,
            icons: &[],
        }
    }

    /// Sets the icons a resource declares (`icon = ".."`, `icon(..)`).
    pub fn resource_with_icons(
        mut info: ResourceInfo,
        icons: &'static [crate::action::StaticIcon],
    ) -> ResourceInfo {
        info.icons = icons;
        info
    }

    /// A handler's return value as its outcome.
    pub fn resource_outcome<R>(ret: R) -> ResourceOutcome
    where
        R: HandlerReturn<Ok = ResourceContent>,
        R::Err: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
    {
        ret.into_result().map_err(crate::action::failure_from)
    }

    /// A handler that fails before it starts (its context could not be built).
    pub fn resource_fails_now(e: ToolError) -> BoxFuture<'static, ResourceOutcome> {
        Box::pin(std::future::ready(Err(HandlerFailure::Tool(e))))
    }
}
