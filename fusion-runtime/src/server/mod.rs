//! The server: registered actions and states, routing, middleware and the call pipeline.
//!
//! ```text
//! let server = Server::builder()
//!     .name("billing")
//!     .state(Store::seeded())
//!     .action::<GetInvoiceAction>()
//!     .middleware(auth)
//!     .build()?;
//! fusion_runtime::cli::run(server).await
//! ```
//!
//! A call goes through [`Server::call`]: route → (guard slot) → validate → middleware →
//! handler → response. Every failure on the way is a [`ToolResponse`] carrying an envelope;
//! nothing panics out of it.
//!
//! [`ToolResponse`]: crate::ToolResponse

mod build;
mod builder;
mod cache;
pub mod catalog;
mod delegation;
mod failure;
mod group;
mod instance;
mod limits;
pub mod listing;
mod middleware;
mod names;
mod pipeline;
mod registry;
mod respond;
mod routing;
// Counted by the task runner, which the MCP servers carry.
#[cfg_attr(
    not(any(feature = "server-stdio", feature = "server-http")),
    allow(dead_code)
)]
mod running;
mod source;
mod surface;
pub mod tool_search;
mod visibility;

pub use crate::action::{Exposure, Placement, failure_from};
pub use crate::action::{IconTheme, StaticIcon};
pub use crate::context::{
    CallContext, Context, DEFAULT_LOG_LEVEL, FromCallContext, ListenLimits, LogLevel, LogThreshold,
    Notifier, RequestScope, StateRequirement,
};

/// The old path of [`context::ClientKey`](crate::context::ClientKey).
#[deprecated(since = "0.1.0", note = "use `context::ClientKey`; removed in 0.2.0")]
pub type ClientKey = crate::context::ClientKey;
pub use builder::{BuildError, DEFAULT_MAX_RESULT_BYTES, ServerBuilder};
pub(crate) use cache::ReadCache;
pub use cache::{CacheScope, DEFAULT_LIST_CACHE, DEFAULT_READ_CACHE, ListCache};
pub use delegation::DelegationMiddleware;
pub use failure::INTERNAL_RECOVERY;
pub use instance::Server;
pub use listing::{
    FnMethodMiddleware, Icon, MAX_PAGE_SIZE, Method, MethodAnswer, MethodMiddleware, MethodNext,
    MethodRequest, method_middleware_fn,
};
pub use middleware::{CallRequest, FnMiddleware, Middleware, Next, middleware_fn};
pub use registry::ActionDescriptor;
#[cfg(feature = "openapi")]
pub(crate) use registry::{Erased, Started};
pub use respond::SPANS;
#[allow(deprecated)]
pub use respond::{RESULT_TOO_LARGE, RESULT_TRUNCATED};
#[cfg(feature = "gateway")]
pub(crate) use routing::nearest;
pub use routing::{MAX_TOOL_NAME_CHARS, SHOWN_NAME_CHARS, valid_tool_name};
pub use source::{RETURN_TOOL, ToolSource, ToolSpec};
pub use visibility::{Item, Visibility};
