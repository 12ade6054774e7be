//! The healing check over MCP, for any server (features `healing` and `client-stdio` or
//! `client-http`): the tools its `tools/list` shows, each case sent with a [`FusionClient`] —
//! over stdio or streamable HTTP, to a server written in any language — and each answer's
//! text handed to the same reader ([`repair`](super::repair)) as in process. The `fusion-heal`
//! command runs it.
//!
//! Calls go over one connection, at most [`RemoteOptions::in_flight`] at once, each within
//! [`RemoteOptions::call_timeout`]; an answer's text is kept to
//! [`RemoteOptions::max_answer_bytes`]. A call that gets no answer (a timeout, a closed
//! connection) counts as refused, with what happened as its text.

use std::time::Duration;

use serde_json::Value;

use super::{Answer, Call, Report, Tool, refuses, run_among};
use crate::client::{FusionClient, FusionClientError};

/// How a run over MCP sends its calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteOptions {
    /// The longest wait for one answer (default 30 s).
    pub call_timeout: Duration,
    /// Calls sent at once, at most (default 8; at least 1).
    pub in_flight: usize,
    /// The bytes of an answer's text kept (default 64 KiB); the rest is cut, on a character
    /// boundary.
    pub max_answer_bytes: usize,
    /// The tools to break, by name; every tool when empty. The others still count as names
    /// that exist.
    pub only: Vec<String>,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            call_timeout: Duration::from_secs(30),
            in_flight: 8,
            max_answer_bytes: 64 * 1024,
            only: Vec::new(),
        }
    }
}

/// The tools `client`'s server lists, as the generator reads them (`inputSchema` kept as
/// sent).
pub async fn listed_tools(client: &FusionClient) -> Result<Vec<Tool>, FusionClientError> {
    Ok(client
        .list_tools()
        .await?
        .into_iter()
        .map(|t| Tool {
            name: t.name.into_owned(),
            schema: Value::Object((*t.input_schema).clone()),
        })
        .collect())
}

/// Runs every case of `tools` against `client`'s server: see the module's doc. `client`
/// should not raise error results (`throw_on_error` off, its default); if it does, the
/// error's text is read all the same.
pub async fn run_remote(client: &FusionClient, tools: &[Tool], options: &RemoteOptions) -> Report {
    let slots = tokio::sync::Semaphore::new(options.in_flight.max(1));
    let send = |call: Call| {
        let slots = &slots;
        async move {
            let _slot = slots.acquire().await.ok();
            let answered = tokio::time::timeout(
                options.call_timeout,
                client.call_tool(&call.tool, call.args),
            )
            .await;
            let (is_error, text) = match answered {
                // A success's text is not read: only whether the call was refused.
                Ok(Ok(outcome)) => match outcome.error() {
                    Some(e) => (true, e.text),
                    None => (false, String::new()),
                },
                Ok(Err(FusionClientError::Tool(e))) => (true, e.text.clone()),
                // A JSON-RPC error (`tool not found`): its message is what a model reads.
                Ok(Err(e @ FusionClientError::Service(_))) => (true, e.to_string()),
                Ok(Err(e)) => (true, format!("(no answer: {e})")),
                Err(_) => (
                    true,
                    format!(
                        "(no answer within {} s)",
                        options.call_timeout.as_secs_f64()
                    ),
                ),
            };
            let text = cut(text, options.max_answer_bytes);
            Answer {
                refused: refuses(is_error, &text),
                text,
            }
        }
    };
    let only = |name: &str| options.only.is_empty() || options.only.iter().any(|o| o == name);
    run_among(tools, &only, send).await
}

/// `text` cut to `max` bytes, on a character boundary.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::cut;

    /// An answer's text is kept to its bound, cut between characters.
    #[test]
    fn an_answer_is_cut_to_its_bytes_on_a_character_boundary() {
        let text = "é".repeat(40_000);
        let kept = cut(text, 64 * 1024 + 1);
        assert_eq!(kept.len(), 64 * 1024);
        assert!(kept.chars().all(|c| c == 'é'));
        assert_eq!(cut("short".into(), 64), "short");
    }
}
