//! What a task's handler runs with, on whichever instance runs it: [`TaskElicitor`], which
//! asks the task's client through the task store (`input_required` until a `tasks/update`
//! answers), and [`TaskSink`], which drops progress and log messages (a task has no
//! stream to send them on).
//!
//! Reads: the capabilities the starting request declared ([`Can`]), the task store. Writes:
//! the task's `inputRequests` in the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::context::{ElicitAnswer, ElicitFailure, ElicitRequest, Elicitor, LogLevel, RequestSink};
use crate::store::TaskStore;

/// What the client that started a task said it can answer (its request's capabilities).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Can {
    pub(crate) elicit: bool,
    pub(crate) sample: bool,
}

impl Can {
    /// What the request in `cx` declared.
    pub(crate) fn of(cx: &RequestContext<RoleServer>) -> Can {
        Can {
            elicit: super::elicit::client_can_elicit(cx),
            sample: super::elicit::client_can_sample(cx),
        }
    }
}

/// How often a handler waiting for an answer looks for it in the store.
pub(crate) const ANSWER_POLL: Duration = Duration::from_millis(200);

/// Asks a task's client: the k-th question is `e{k}`, stored as the task's `inputRequests`
/// (the task is `input_required`) until a `tasks/update` on any instance answers it; the
/// handler waits, and its task's TTL keeps running.
pub(crate) struct TaskElicitor {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) id: String,
    pub(crate) can: Can,
    pub(crate) asked: AtomicUsize,
}

impl TaskElicitor {
    fn ask(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> BoxFuture<'static, Result<serde_json::Value, ElicitFailure>> {
        let k = self.asked.fetch_add(1, Ordering::Relaxed);
        if k >= super::elicit::MAX_ELICITATION_ROUNDS {
            return Box::pin(async { Err(super::elicit::too_many()) });
        }
        let (store, id) = (Arc::clone(&self.store), self.id.clone());
        Box::pin(async move {
            let key = format!("e{k}");
            let request = serde_json::json!({"method": method, "params": params});
            let failed = |e: crate::store::StoreError| {
                ElicitFailure::Failed(format!("the task store cannot be reached: {}", e.0))
            };
            store.ask(&id, &key, request).await.map_err(failed)?;
            loop {
                tokio::time::sleep(ANSWER_POLL).await;
                match store.take_answer(&id, &key).await {
                    Ok(Some(answer)) => return Ok(answer),
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!(task = %id, error = %e.0, "could not read a task's answer")
                    }
                }
            }
        })
    }
}

impl Elicitor for TaskElicitor {
    fn elicit(
        &self,
        request: ElicitRequest,
    ) -> BoxFuture<'static, Result<ElicitAnswer, ElicitFailure>> {
        if !self.can.elicit {
            return Box::pin(async {
                Err(ElicitFailure::Unsupported(
                    "it did not declare the elicitation capability".to_owned(),
                ))
            });
        }
        let asked = self.ask("elicitation/create", super::elicit::form_params(&request));
        Box::pin(async move {
            let value = asked.await?;
            super::elicit::parse_answer(&value).ok_or_else(|| {
                ElicitFailure::Failed("the client's answer has no valid action".to_owned())
            })
        })
    }

    fn sample(
        &self,
        params: serde_json::Value,
    ) -> BoxFuture<'static, Result<serde_json::Value, ElicitFailure>> {
        if !self.can.sample {
            return Box::pin(async {
                Err(ElicitFailure::Unsupported(
                    "it did not declare the sampling capability".to_owned(),
                ))
            });
        }
        self.ask("sampling/createMessage", params)
    }
}

/// Where a task's handler reports: progress messages become the task's status message; logs
/// go nowhere (the extension sends no notifications for a task).
pub(crate) struct TaskSink {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) id: String,
}

impl RequestSink for TaskSink {
    fn has_progress_token(&self) -> bool {
        true
    }

    fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'static, Result<(), String>> {
        let message = message.unwrap_or_else(|| match total {
            Some(total) => format!("{progress} of {total}"),
            None => format!("{progress}"),
        });
        let (store, id) = (Arc::clone(&self.store), self.id.clone());
        Box::pin(async move {
            store
                .set_message(&id, message)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn log(
        &self,
        _level: LogLevel,
        _logger: &'static str,
        _data: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(std::future::ready(Err(
            "a task sends no log notifications".to_owned()
        )))
    }
}
