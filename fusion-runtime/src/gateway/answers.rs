//! What the gateway answers when the upstream cannot: every failure between gateway and
//! upstream is an envelope the model can act on, never a JSON-RPC error nor the upstream's
//! raw text.

use std::time::Duration;

use super::UpstreamFailure;
use crate::client::parse_envelope;
use crate::envelope::{Content, ToolError, ToolResponse, codes};

/// `retry_after` of `HANDOFF_CONNECTING`, in seconds.
pub const CONNECTING_RETRY_SECS: u64 = 2;

/// At most this many characters of an upstream's own error text go into an envelope.
pub const MAX_QUOTED_CHARS: usize = 300;

/// `HANDOFF_CONNECTING`: the connection to `mount` is coming up.
pub(crate) fn connecting(mount: &str, upstream: &str) -> ToolError {
    ToolError::new(
        codes::HANDOFF_CONNECTING,
        format!("The {mount} service ({upstream}) is connecting; this call was not sent"),
    )
    .recovery("Wait for the time below, then call the same tool again with the same arguments")
    .detail("mount", mount)
    .retry_after(Duration::from_secs(CONNECTING_RETRY_SECS))
    .warning()
}

/// `HANDOFF_UPSTREAM_UNAVAILABLE`: `mount` cannot be reached (`why`); try again after `retry`.
pub(crate) fn unavailable(mount: &str, why: &str, retry: Duration) -> ToolError {
    ToolError::new(
        codes::HANDOFF_UPSTREAM_UNAVAILABLE,
        format!("The {mount} service is unavailable: {why}"),
    )
    .recovery(format!(
        "Do not retry at once: wait for the time below, then call again. If it is still unavailable, tell the user the {mount} service is down and continue with other tools"
    ))
    .detail("mount", mount)
    .retry_after(retry.max(Duration::from_secs(1)))
}

/// The answer for a tool under `mount`'s prefix that the upstream does not list: the
/// closest of its tools, as for a server's own.
pub(crate) fn unknown_tool(requested: &str, mount: &str, tools: &[String]) -> ToolError {
    let near = crate::validation::closest(requested, tools.iter().map(String::as_str));
    let recovery = match near {
        Some(n) => {
            format!("Call {n} instead (the closest name), or pick one of the available tools")
        }
        None => "Call one of the available tools; do not invent tool names".to_owned(),
    };
    let mut e = ToolError::new(
        codes::UNKNOWN_ACTION,
        format!("The {mount} service has no tool named '{requested}'"),
    )
    .recovery(recovery)
    .available_actions(crate::server::nearest(requested, tools))
    .detail("requested", requested);
    if let Some(n) = near {
        e = e.detail("closest", n);
    }
    e
}

/// The answer for a reply larger than the mount's limit.
pub(crate) fn too_large(tool: &str, bytes: usize, limit: usize) -> ToolError {
    ToolError::new(
        codes::INTERNAL_ERROR,
        format!(
            "The answer of {tool} was {bytes} bytes, more than the gateway passes on ({limit})"
        ),
    )
    .recovery("Ask for less: narrow the call with filters or pagination, then call again")
    .detail("bytes", bytes)
    .detail("limit", limit)
}

/// A failure of the JSON-RPC exchange (not of the connection) wrapped for the model.
pub(crate) fn rpc_failed(tool: &str, mount: &str, failure: &UpstreamFailure) -> ToolError {
    let (code, message) = match failure {
        UpstreamFailure::Rpc { code, message } => (Some(*code), message.as_str()),
        UpstreamFailure::Closed(why) | UpstreamFailure::Other(why) => (None, why.as_str()),
    };
    let mut e = ToolError::new(
        codes::INTERNAL_ERROR,
        format!("The {mount} service refused the call to {tool}"),
    )
    .recovery(format!(
        "Check the arguments against the tool's description and call once more; if it fails again, tell the user the {mount} service reported an error"
    ))
    .detail("upstream_error", quote(message));
    if let Some(code) = code {
        e = e.detail("jsonrpc_code", code);
    }
    e
}

/// An upstream's `isError` result: a Fusion upstream's envelopes pass through intact; a
/// plain-text error becomes an `INTERNAL_ERROR` envelope quoting it.
pub(crate) fn error_reply(tool: &str, mount: &str, content: Vec<Content>) -> ToolResponse {
    let texts: Vec<&str> = content.iter().filter_map(Content::as_text).collect();
    let fusion = !texts.is_empty() && texts.iter().all(|t| parse_envelope(t).is_ok());
    if fusion {
        return ToolResponse {
            content,
            is_error: true,
            structured_content: None,
        };
    }
    let said = texts.join("\n");
    let said = if said.trim().is_empty() {
        "(no text)".to_owned()
    } else {
        quote(&said)
    };
    ToolResponse::error(
        ToolError::new(
            codes::INTERNAL_ERROR,
            format!("{tool} failed in the {mount} service"),
        )
        .recovery(format!(
            "Check the arguments against the tool's description and call once more; if it fails again, tell the user the {mount} service reported an error"
        ))
        .detail("upstream_error", said),
    )
}

/// An upstream's `<tool_error>` envelope with the upstream's tool names it gives the model
/// — each `<action>` of `<available_actions>`, and the names in `<recovery>` — written as the
/// gateway exposes them (`rename`), so that a model following it calls a tool that exists on
/// the gateway; every other byte is kept. In the recovery text only a word that is a name
/// with a separator (`billing.get_invoice`, `billing_list_invoices`) is renamed: a one-word
/// tool name cannot be told from prose. `None` when nothing was renamed (or `text` is not a
/// `<tool_error>`).
pub(crate) fn rename_tools<'a>(
    text: &str,
    rename: impl Fn(&str) -> Option<&'a str>,
) -> Option<String> {
    if !text.starts_with("<tool_error") {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut changed = false;
    let mut rest = text;
    if let Some((before, inner, after)) = element(rest, "<recovery>", "</recovery>") {
        out.push_str(before);
        for (word, is_name) in words(inner) {
            let trimmed = word.trim_end_matches(['.', '-']);
            let renamed = is_name
                .then(|| rename(trimmed))
                .flatten()
                .filter(|_| trimmed.contains(['.', '_', '-']));
            match renamed {
                Some(new) => {
                    out.push_str(new);
                    out.push_str(&word[trimmed.len()..]);
                    changed = true;
                }
                None => out.push_str(word),
            }
        }
        rest = after;
    }
    if let Some((before, mut inner, after)) =
        element(rest, "<available_actions>", "</available_actions>")
    {
        out.push_str(before);
        while let Some((gap, name, next)) = element(inner, "<action>", "</action>") {
            out.push_str(gap);
            match rename(name) {
                Some(new) => {
                    out.push_str(new);
                    changed = true;
                }
                None => out.push_str(name),
            }
            inner = next;
        }
        out.push_str(inner);
        rest = after;
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// `text` split around the first `open`…`close` element: what comes before it and its
/// opening tag, its content, and its closing tag and what follows.
fn element<'t>(text: &'t str, open: &str, close: &str) -> Option<(&'t str, &'t str, &'t str)> {
    let start = text.find(open)? + open.len();
    let end = start + text[start..].find(close)?;
    Some((&text[..start], &text[start..end], &text[end..]))
}

/// `text` cut into runs of tool-name characters (`true`) and of anything else (`false`).
fn words(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let kind = is_name(first);
        let end = rest
            .find(|c: char| is_name(c) != kind)
            .unwrap_or(rest.len());
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some((word, kind))
    })
}

/// `text` cut to [`MAX_QUOTED_CHARS`] characters on a character boundary.
fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_envelopes_pass_and_plain_text_is_wrapped() {
        let envelope = ToolError::new(codes::NOT_FOUND, "No invoice")
            .render()
            .to_string();
        let r = error_reply("t", "m", vec![Content::text(envelope.clone())]);
        assert_eq!(r.content[0].as_text(), Some(envelope.as_str()));
        let r = error_reply("t", "m", vec![Content::text("boom <b>")]);
        let text = r.content[0].as_text().unwrap_or_default();
        assert!(
            text.starts_with("<tool_error code=\"INTERNAL_ERROR\""),
            "{text}"
        );
        assert!(text.contains("boom &lt;b>"), "{text}");
        assert!(r.is_error);
    }

    #[test]
    fn upstream_names_are_renamed_and_nothing_else() {
        let envelope = ToolError::new(codes::CONFLICT, "billing.get_invoice & <b> failed")
            .recovery("Call billing.get_invoice. Then billing_list_invoices, or get_invoice & <x>")
            .available_actions(["billing.get_invoice", "other.tool"])
            .detail("tool", "billing.get_invoice")
            .render()
            .to_string();
        let rename = |n: &str| match n {
            "billing.get_invoice" => Some("f_billing_get_invoice"),
            "billing_list_invoices" => Some("f_billing_list_invoices"),
            "get_invoice" => Some("wrong"),
            _ => None,
        };
        let renamed = rename_tools(&envelope, rename).unwrap_or_default();
        let expected = envelope
            .replace(
                "Call billing.get_invoice. Then billing_list_invoices, or get_invoice",
                "Call f_billing_get_invoice. Then f_billing_list_invoices, or wrong",
            )
            .replace(
                "<action>billing.get_invoice</action>",
                "<action>f_billing_get_invoice</action>",
            );
        assert_eq!(renamed, expected);
        assert!(renamed.contains("<message>billing.get_invoice &amp;"));
        assert!(renamed.contains("<detail key=\"tool\">billing.get_invoice</detail>"));
        assert_eq!(rename_tools(&envelope, |_| None), None);
        assert_eq!(rename_tools("plain text", rename), None);
    }

    #[test]
    fn quotes_are_bounded() {
        let long = "é".repeat(MAX_QUOTED_CHARS * 3);
        assert_eq!(quote(&long).chars().count(), MAX_QUOTED_CHARS + 3);
    }
}
