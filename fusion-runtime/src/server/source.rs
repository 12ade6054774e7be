//! Tools served by something other than the server's own actions — the upstream MCP servers
//! the gateway mounts ([`ServerBuilder::mount`](crate::ServerBuilder::mount)). A source owns
//! every tool name under its prefix; the pipeline routes a name no action has to the source
//! that owns it, and `tools/list` shows the server's tools, then each source's.

use futures::future::BoxFuture;
use tokio::sync::watch;

use super::registry::ToolSpec;
use crate::context::RequestScope;
use crate::envelope::ToolResponse;
use crate::input::JsonObject;

/// Tools a server serves besides its actions: their list changes at run time, and each call
/// is answered by the source, never by the pipeline's validation stage.
pub trait ToolSource: Send + Sync + 'static {
    /// Called once by [`ServerBuilder::build`](super::ServerBuilder::build) with the
    /// separator flat exposure puts in place of `.` (`_` for grouped exposure).
    fn bind(&self, separator: &str);

    /// Whether `tool` is under this source's prefix: the source answers every call of it,
    /// known tool or not.
    fn owns(&self, tool: &str) -> bool;

    /// The tools to list now, named as clients call them. May wait (bounded) for a first
    /// connection.
    fn tools(&self) -> BoxFuture<'_, Vec<ToolSpec>>;

    /// Runs one call. Never fails and never panics: every failure is a response carrying an
    /// envelope. The pipeline races it against the request's cancellation.
    fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        scope: RequestScope,
    ) -> BoxFuture<'static, ToolResponse>;

    /// A counter bumped whenever the listed tools change (MCP `notifications/tools/list_changed`).
    fn changes(&self) -> watch::Receiver<u64>;
}
