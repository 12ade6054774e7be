//! The client side: reading envelopes back, over a real MCP connection.

#[cfg(any(feature = "client-stdio", feature = "client-http"))]
mod connect;
mod outcome;
mod parse;
#[cfg(any(feature = "client-stdio", feature = "client-http"))]
mod task_calls;
#[cfg(any(feature = "client-stdio", feature = "client-http"))]
pub(crate) mod transport;

#[cfg(any(feature = "client-stdio", feature = "client-http"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "client-stdio", feature = "client-http")))
)]
pub use connect::{FusionClient, FusionClientError, RetryPolicy, Typed};
#[allow(deprecated)]
pub use outcome::UNKNOWN_CODE;
pub use outcome::{CallOutcome, TaskError, ToolCallError};
pub use parse::{
    Envelope, EnvelopeParseError, FieldLine, RawSection, ValidationEnvelope, looks_like_envelope,
    parse_envelope, parse_tool_error, parse_validation_error,
};
#[cfg(any(feature = "client-stdio", feature = "client-http"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "client-stdio", feature = "client-http")))
)]
pub use task_calls::{ListedTask, TaskList, TaskStart, TaskState, ToolTask, TypedTask};
