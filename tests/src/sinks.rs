//! A downstream connection for in-process calls that records what reaches it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use fusion_runtime::context::{LogLevel, RequestScope, RequestSink};
use tokio::sync::mpsc;

type Sent = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// Sends each progress message, and each log's data as JSON text, down a channel.
pub struct Recorder(mpsc::UnboundedSender<String>);

impl RequestSink for Recorder {
    fn has_progress_token(&self) -> bool {
        true
    }

    fn progress(&self, _progress: f64, _total: Option<f64>, message: Option<String>) -> Sent {
        let _ = self.0.send(message.unwrap_or_default());
        Box::pin(async { Ok(()) })
    }

    fn log(&self, _level: LogLevel, _logger: &'static str, data: serde_json::Value) -> Sent {
        let _ = self.0.send(data.to_string());
        Box::pin(async { Ok(()) })
    }
}

/// A detached scope whose progress and logs arrive on the receiver.
pub fn recording_scope() -> (RequestScope, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut scope = RequestScope::detached();
    scope.sink = Some(Arc::new(Recorder(tx)));
    (scope, rx)
}

/// A call running in its own task, past its first progress report (so it runs at its
/// destination, an upstream for a mounted tool).
pub struct Running {
    /// The call's answer, once it ends.
    pub answer: tokio::task::JoinHandle<fusion_runtime::envelope::ToolResponse>,
    /// Cancels the call (its scope's token).
    pub cancel: fusion_runtime::context::CancellationToken,
    /// The first progress message it reported.
    pub first_progress: String,
}

/// Calls `tool` on `server` with no arguments, in a task, with a recording scope that
/// [`Running::cancel`] cancels, and waits (at most `limit`) for its first progress report.
pub async fn running_call(
    server: &fusion_runtime::Server,
    tool: &str,
    limit: std::time::Duration,
) -> Running {
    let (scope, mut progress) = recording_scope();
    let cancel = fusion_runtime::context::CancellationToken::new();
    let scope = scope.with_cancellation(cancel.clone());
    let answer = {
        let (server, tool) = (server.clone(), tool.to_owned());
        tokio::spawn(async move { server.call(&tool, None, scope).await })
    };
    let first_progress = tokio::time::timeout(limit, progress.recv())
        .await
        .expect("the call reported progress in time")
        .expect("the call reported progress");
    Running {
        answer,
        cancel,
        first_progress,
    }
}
