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
