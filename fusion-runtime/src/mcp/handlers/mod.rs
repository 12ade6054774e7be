//! The handler side: [`McpHandler`], the rmcp `ServerHandler` of a Fusion server — tools,
//! prompts, resources, completions, tasks, subscriptions — and what it needs: the protocol
//! generation's rules ([`era`]), elicitation ([`elicit`]), change notifications, a request's
//! scope.
//!
//! Nothing here knows HTTP: what the HTTP side worked out about a request (client, principal,
//! session, exchange) is read through [`facts`](super::facts), the one doorway.
//!
//! | file | answers |
//! |---|---|
//! | `methods.rs` | the `ServerHandler` methods, each handed to the file below that answers it |
//! | `call.rs` | `tools/call` |
//! | `listing.rs`, `tools.rs` | the lists (paged, cached), and tools as rmcp `Tool`s |
//! | `catalog.rs` | prompts, resources, completions |
//! | `tasks.rs` | the 2026-07-28 tasks extension |
//! | `tasks_2025.rs` | the 2025-11-25 tasks (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, a `tools/call` with `task`), which rmcp does not parse: handed here by both transports before rmcp |
//! | `notify.rs`, `subscriptions.rs` | change notifications, `subscriptions/listen`, `resources/subscribe` |
//! | `scope.rs`, `trace.rs` | a request's [`RequestScope`](crate::context::RequestScope) and span |
//! | `mcp_handler.rs` | the handler's state, results as rmcp's `CallToolResult` |

mod call;
mod catalog;
pub mod elicit;
pub mod era;
mod listing;
mod mcp_handler;
mod methods;
pub(crate) mod notify;
mod request_state;
pub(crate) mod scope;
mod subscriptions;
mod task_run;
pub(crate) mod tasks;
#[cfg(any(feature = "server-http", feature = "server-stdio"))]
pub(crate) mod tasks_2025;
mod tools;
mod trace;

#[cfg(feature = "server-http")]
pub(crate) use call::{RoomCall, RoomCallKind};
pub(crate) use listing::CursorNotAString;
pub use listing::MAX_CURSOR_BYTES;
#[cfg(feature = "server-http")]
pub(crate) use mcp_handler::LiveList;
pub use mcp_handler::{McpHandler, to_call_tool_result};
#[cfg(feature = "server-stdio")]
pub(crate) use methods::SERVED_METHODS;
pub use scope::request_scope;
pub use subscriptions::{MAX_SUBSCRIPTIONS, Subscriptions};
pub use tools::MOUNT_META_KEY;
