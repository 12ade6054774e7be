use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, InputRequests};
use serde_json::Value;

use super::parse::{Envelope, FieldLine, looks_like_envelope, parse_envelope};
use crate::envelope::{ErrorCode, Severity, ToolError};

/// The old name of [`codes::UNKNOWN`](crate::codes::UNKNOWN).
#[deprecated(since = "0.1.0", note = "use `codes::UNKNOWN`; removed in 0.2.0")]
pub const UNKNOWN_CODE: &str = "UNKNOWN";

/// What one `tools/call` answered, with its envelopes read back.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutcome {
    /// The tool name called.
    pub tool: String,
    /// The `isError` flag (absent counts as `false`).
    pub is_error: bool,
    /// The content blocks, as sent.
    pub content: Vec<ContentBlock>,
    /// `structuredContent`, when sent.
    pub structured_content: Option<Value>,
    /// Every text block that parsed as an envelope, in order.
    pub envelopes: Vec<Envelope>,
}

impl CallOutcome {
    /// Reads a result: every text block that is an envelope is parsed; anything else is
    /// left as content. Never fails and never panics, whatever the text.
    pub fn from_result(tool: impl Into<String>, result: CallToolResult) -> Self {
        let envelopes = result
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .filter(|t| looks_like_envelope(&t.text))
            .filter_map(|t| parse_envelope(&t.text).ok())
            .collect();
        CallOutcome {
            tool: tool.into(),
            is_error: result.is_error.unwrap_or(false),
            content: result.content,
            structured_content: result.structured_content,
            envelopes,
        }
    }

    /// The text blocks that are not envelopes, joined by newlines: the result itself.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .map(|t| t.text.as_str())
            .filter(|t| !(looks_like_envelope(t) && parse_envelope(t).is_ok()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The result as JSON: `structuredContent` when sent, else the text parsed as JSON.
    pub fn json(&self) -> Option<Value> {
        self.structured_content
            .clone()
            .or_else(|| serde_json::from_str(&self.text()).ok())
    }

    /// Warning envelopes (`severity="warning"`), which travel on successful results, read as
    /// an error is read ([`ToolCallError`]; its `text` is the warning's own).
    pub fn warnings(&self) -> Vec<ToolCallError> {
        self.envelopes
            .iter()
            .filter_map(|e| match e {
                Envelope::Tool(t) if t.severity_of() == Severity::Warning => Some(
                    ToolCallError::of_tool(self.tool.clone(), t.clone(), t.render().to_owned()),
                ),
                _ => None,
            })
            .collect()
    }

    /// The client error this outcome stands for, when it is an error result.
    pub fn error(&self) -> Option<ToolCallError> {
        if !self.is_error {
            return None;
        }
        let raw_text = self
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .map(|t| t.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Some(ToolCallError::read(&self.tool, &self.envelopes, raw_text))
    }
}

/// A tool call that answered with an error, read back from its envelope.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{tool} failed with {code}: {message}")]
pub struct ToolCallError {
    /// The tool name called.
    pub tool: String,
    /// The envelope's code; `VALIDATION_ERROR` for a `<validation_error>`; `UNKNOWN` when the
    /// result carried no envelope.
    pub code: ErrorCode,
    /// The message (for a validation error, every field line).
    pub message: String,
    /// The `<recovery>` text.
    pub recovery: Option<String>,
    /// The `<available_actions>`.
    pub available_actions: Vec<String>,
    /// The severity.
    pub severity: Severity,
    /// `retry_after`, in whole seconds.
    pub retry_after: Option<Duration>,
    /// The `<details>`, in order.
    pub details: Vec<(String, String)>,
    /// For a validation error, its field lines.
    pub fields: Vec<FieldLine>,
    /// The parsed envelope, when there was one.
    pub envelope: Option<Envelope>,
    /// All text the result carried, as sent.
    pub text: String,
}

impl ToolCallError {
    /// `err` as a client reads it back from a result answering `tool` with it: rendered, then
    /// parsed, so every field is what [`FusionClient`](crate::client::FusionClient) and the
    /// test kit hand back for the same envelope (texts past the envelope's bound cut,
    /// `retry_after` in whole seconds). For unit-testing a handler called directly:
    ///
    /// ```
    /// use fusion_runtime::{client::ToolCallError, codes::NOT_FOUND, error};
    ///
    /// let e = error(NOT_FOUND, "No invoice with that ID").recovery("List invoices first");
    /// let read = ToolCallError::from_error("billing_get_invoice", &e);
    /// assert_eq!(read.recovery.as_deref(), Some("List invoices first"));
    /// assert_eq!(read.code, NOT_FOUND);
    /// ```
    pub fn from_error(tool: impl Into<String>, err: &ToolError) -> ToolCallError {
        let tool = tool.into();
        let text = err.render().to_owned();
        match parse_envelope(&text) {
            Ok(Envelope::Tool(read)) => ToolCallError::of_tool(tool, read, text),
            // Every rendering parses; should one not, the error is read as it is.
            _ => ToolCallError::of_tool(tool, err.clone(), text),
        }
    }

    /// The value of the first detail with this key.
    ///
    /// ```
    /// use fusion_runtime::{client::ToolCallError, error};
    ///
    /// let read = ToolCallError::from_error("t", &error("X", "m").detail("id", 7));
    /// assert_eq!(read.detail_value("id"), Some("7"));
    /// ```
    pub fn detail_value(&self, key: &str) -> Option<&str> {
        self.details
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `t`, the failure of a result answering `tool` whose text is `raw_text`.
    pub(crate) fn of_tool(tool: String, t: ToolError, raw_text: String) -> ToolCallError {
        ToolCallError {
            tool,
            code: t.code().clone(),
            message: t.message().to_owned(),
            recovery: t.recovery_text().map(str::to_owned),
            available_actions: t.action_list().to_vec(),
            severity: t.severity_of(),
            retry_after: t.retry_after_secs().map(Duration::from_secs),
            details: t.detail_list().to_vec(),
            fields: Vec::new(),
            envelope: Some(Envelope::Tool(t)),
            text: raw_text,
        }
    }

    /// The error a result answering `tool` stands for: its first failing envelope among
    /// `envelopes` (a `<tool_error>` that is not a warning, or a `<validation_error>`), else
    /// `text` (all the result's text) under [`codes::UNKNOWN`](crate::codes::UNKNOWN).
    pub(crate) fn read(tool: &str, envelopes: &[Envelope], raw_text: String) -> ToolCallError {
        let envelope = envelopes
            .iter()
            .find(|e| match e {
                Envelope::Tool(t) => t.is_error(),
                Envelope::Validation(_) => true,
            })
            .cloned();
        match envelope {
            Some(Envelope::Tool(t)) => ToolCallError::of_tool(tool.to_owned(), t, raw_text),
            Some(Envelope::Validation(v)) => ToolCallError {
                tool: tool.to_owned(),
                code: ErrorCode::ValidationError,
                message: format!(
                    "Invalid arguments for {}: {}",
                    v.action,
                    v.fields
                        .iter()
                        .map(|f| format!("{}: {}", f.name, f.text))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                recovery: v.recovery.clone(),
                available_actions: Vec::new(),
                severity: Severity::Error,
                retry_after: None,
                details: Vec::new(),
                fields: v.fields.clone(),
                envelope: Some(Envelope::Validation(v)),
                text: raw_text,
            },
            None => ToolCallError {
                tool: tool.to_owned(),
                code: crate::envelope::codes::UNKNOWN,
                message: if raw_text.is_empty() {
                    "The tool reported an error without any text".to_owned()
                } else {
                    raw_text.clone()
                },
                recovery: None,
                available_actions: Vec::new(),
                severity: Severity::Error,
                retry_after: None,
                details: Vec::new(),
                fields: Vec::new(),
                envelope: None,
                text: raw_text,
            },
        }
    }

    /// Whether retrying after `retry_after` can help: `RATE_LIMITED` and `SERVER_BUSY`, never
    /// when `critical`.
    pub fn is_retryable(&self) -> bool {
        self.severity != Severity::Critical
            && matches!(self.code, ErrorCode::RateLimited | ErrorCode::ServerBusy)
    }
}

/// Why `FusionClient::wait_task` returned no result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The task was cancelled.
    #[error("task {task_id} was cancelled")]
    Cancelled {
        /// The task.
        task_id: String,
    },
    /// The handler asked a question; answer with `FusionClient::answer_task`, then wait
    /// again.
    #[error("task {task_id} needs input ({} question(s))", requests.len())]
    InputRequired {
        /// The task.
        task_id: String,
        /// The questions, by key.
        requests: InputRequests,
    },
    /// The wait's limit passed with the task still running.
    #[error("task {task_id} still running after {waited:?}")]
    StillRunning {
        /// The task.
        task_id: String,
        /// How long the client waited.
        waited: Duration,
    },
    /// The server answered something that is not a task of this protocol.
    #[error("unexpected task answer: {0}")]
    Unexpected(String),
}
