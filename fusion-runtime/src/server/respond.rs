//! Stage 5 of the pipeline (`pipeline.rs`), **respond**: the outcome of a call written
//! for the model — a handler's value or error, a panic, a validation report, the warnings of
//! deprecated fields sent — and the bound on a result's size (`RESULT_TRUNCATED`,
//! `RESULT_TOO_LARGE`). Also the answers to arguments that are not an object.

use serde_json::Value;

use super::failure::InternalErrors;
use super::names::{Names, for_the_wire};
use super::registry::{ActionDescriptor, Inner};
use crate::action::{ActionInfo, ActionOutput, HandlerFailure, HandlerOutcome};
use crate::envelope::{ToolError, ToolResponse, codes};
use crate::validation::{Issue, IssueKind, ValidationReport};

/// The `tracing` target of the request and stage spans (`mcp.request`, `fusion.route`, …):
/// what OpenTelemetry export listens to, and what the stderr logs leave out.
pub const SPANS: &str = "fusion::trace";

pub(super) fn handler_panicked(action: &str, internal: InternalErrors) -> ToolResponse {
    tracing::error!(action, "handler panicked");
    ToolResponse::error(internal.panic_envelope(action))
}

/// Stage 3's answer for arguments that failed validation, naming the action as the client
/// calls it.
pub(super) fn invalid(
    inner: &Inner,
    entry: &ActionDescriptor,
    report: &ValidationReport,
) -> ToolResponse {
    if crate::metrics::enabled() {
        for issue in report.issues() {
            let field = issue.field_name();
            let called = (&*entry.routed_tool, entry.info.name);
            crate::metrics::validation_issue(called, &field, issue.kind.code());
        }
    }
    let section = inner
        .awareness
        .as_ref()
        .and_then(|a| a.section_for(entry.info.name));
    validation_response(&entry.callable, report, section)
}

pub(super) fn validation_response(
    action: &str,
    report: &ValidationReport,
    contract_awareness: Option<&str>,
) -> ToolResponse {
    let text = match contract_awareness {
        Some(section) => report.render_with_sections(action, &[section]),
        None => report.render(action),
    };
    ToolResponse {
        content: vec![crate::envelope::Content::Text(text)],
        is_error: true,
        structured_content: None,
    }
}

/// Stage 5: the outcome written for the model, every envelope as it reaches the wire
/// ([`for_the_wire`]); a user's form answer that failed validation is its own
/// `<validation_error>`. A success is held to `max_result_bytes` (the bound in force, from
/// the built server: the handler's own info has only the declared one), then carries its
/// warnings: the handler's, the action's deprecation, one per deprecated field sent.
pub(super) fn respond(
    info: &ActionInfo,
    callable: &str,
    names: &Names,
    outcome: HandlerOutcome,
    internal: InternalErrors,
    deprecated_fields: Vec<ToolError>,
    max_result_bytes: Option<usize>,
) -> ToolResponse {
    let _stage = tracing::info_span!(target: SPANS, "fusion.respond").entered();
    let outcome = match outcome {
        Err(HandlerFailure::Tool(e)) => {
            if let Some(report) = e
                .attachment()
                .and_then(|a| a.downcast_ref::<ValidationReport>())
            {
                return validation_response(callable, report, None);
            }
            Err(HandlerFailure::Tool(for_the_wire(names, e)))
        }
        Ok(ActionOutput::Value { value, warnings }) => Ok(ActionOutput::Value {
            value,
            warnings: warnings
                .into_iter()
                .map(|w| for_the_wire(names, w))
                .collect(),
        }),
        other => other,
    };
    let mut response = match outcome {
        Ok(ActionOutput::Value { value, warnings }) => {
            let mut r = ToolResponse::json(value);
            if info.output_schema.is_none()
                || !r.structured_content.as_ref().is_some_and(Value::is_object)
            {
                r.structured_content = None;
            }
            let r = bound(r, max_result_bytes, callable);
            if warnings.is_empty() {
                r
            } else {
                warnings.into_iter().fold(r, ToolResponse::with_warning)
            }
        }
        Ok(ActionOutput::Response(r)) => bound(r, max_result_bytes, callable),
        Err(f) => ToolResponse::error(internal.into_envelope(callable, f)),
    };
    if let Some(why) = &info.deprecated
        && !response.is_error
    {
        response = response.with_warning(
            ToolError::new(
                codes::DEPRECATED,
                format!("{callable} is deprecated: {}", names.spell_in(why)),
            )
            .recovery("This call worked; switch to the replacement before this action is removed"),
        );
    }
    if !response.is_error {
        response = deprecated_fields
            .into_iter()
            .fold(response, ToolResponse::with_warning);
    }
    response
}

/// One `DEPRECATED` warning per deprecated field `arguments` sends (SPEC §2: "a deprecated
/// parameter used"), naming the field by its path (and the actions its note names as clients
/// call them). The list was found once, when the action was registered: an action without
/// deprecated fields checks nothing.
pub(super) fn deprecated_fields_sent(
    info: &ActionInfo,
    callable: &str,
    names: &Names,
    arguments: &Value,
) -> Vec<ToolError> {
    if info.deprecated_fields.is_empty() {
        return Vec::new();
    }
    crate::validation::deprecated::sent(&info.deprecated_fields, arguments)
        .into_iter()
        .map(|f| {
            let message = match f.note {
                Some(note) => format!("Field '{}' is deprecated: {}", f.path, names.spell_in(note)),
                None => format!("Field '{}' of {callable} is deprecated", f.path),
            };
            ToolError::new(codes::DEPRECATED, message)
                .recovery(format!(
                    "This call worked; stop sending '{}' before it is removed",
                    f.path
                ))
                .detail("field", &f.path)
                .warning()
        })
        .collect()
}

/// The old path of [`codes::RESULT_TRUNCATED`](crate::codes::RESULT_TRUNCATED).
#[deprecated(
    since = "0.1.0",
    note = "use `codes::RESULT_TRUNCATED`; removed in 0.2.0"
)]
pub const RESULT_TRUNCATED: &str = "RESULT_TRUNCATED";

/// The old path of [`codes::RESULT_TOO_LARGE`](crate::codes::RESULT_TOO_LARGE).
#[deprecated(
    since = "0.1.0",
    note = "use `codes::RESULT_TOO_LARGE`; removed in 0.2.0"
)]
pub const RESULT_TOO_LARGE: &str = "RESULT_TOO_LARGE";

/// Stage 5's bound on a successful result (`max_result_bytes`): text blocks past `limit`
/// bytes, all together, are cut on a character boundary, in place (the result is never
/// copied to be cut), and a `RESULT_TRUNCATED` warning says how much was sent and how to ask
/// for the rest. Structured content cannot be cut into valid JSON, and MCP wants a tool with
/// an output schema to send it: such a result is refused with `RESULT_TOO_LARGE`. Images
/// and other binary blocks are not counted.
fn bound(mut response: ToolResponse, limit: Option<usize>, callable: &str) -> ToolResponse {
    use crate::envelope::Content;
    fn text(c: &mut Content) -> Option<&mut String> {
        match c {
            Content::Text(t) | Content::Resource { text: t, .. } => Some(t),
            _ => None,
        }
    }
    let Some(limit) = limit.filter(|_| !response.is_error) else {
        return response;
    };
    let total: usize = response
        .content
        .iter_mut()
        .filter_map(text)
        .map(|t| t.len())
        .sum();
    if total <= limit {
        return response;
    }
    if response.structured_content.is_some() {
        tracing::warn!(callable, total, limit, "result over its bound refused");
        return ToolResponse::error(
            ToolError::new(
                crate::envelope::codes::RESULT_TOO_LARGE,
                format!(
                    "The result of {callable} is {total} bytes, over this server's bound of {limit}; its structured content cannot be cut into valid JSON, so none of it was sent. The action itself ran"
                ),
            )
            .recovery("Call again with a narrower filter or a page to get a smaller result; if the action changes state, that change is made: do not repeat it only to see the result")
            .detail("result_bytes", total)
            .detail("max_result_bytes", limit),
        );
    }
    let mut room = limit;
    response.content.retain_mut(|c| match text(c) {
        None => true,
        Some(t) if t.len() <= room => {
            room -= t.len();
            true
        }
        Some(_) if room == 0 => false,
        Some(t) => {
            let mut at = room;
            while !t.is_char_boundary(at) {
                at -= 1;
            }
            t.truncate(at);
            room = 0;
            true
        }
    });
    let sent: usize = response
        .content
        .iter_mut()
        .filter_map(text)
        .map(|t| t.len())
        .sum();
    response.with_warning(
        ToolError::new(
            crate::envelope::codes::RESULT_TRUNCATED,
            format!(
                "The result was cut: {sent} of {total} bytes were sent (at most {limit} per result). What is above ends mid-way and, if it was JSON, is not valid JSON"
            ),
        )
        .recovery("Call again with a narrower filter or a page to get the rest")
        .detail("sent_bytes", sent)
        .detail("total_bytes", total)
        .warning(),
    )
}

/// The answer for a `tools/call` whose `arguments` member is not an object.
#[cfg_attr(
    not(any(feature = "server-stdio", feature = "server-http")),
    allow(dead_code, reason = "called by mcp/ only")
)]
pub(crate) fn arguments_not_an_object(tool: &str, sent: &Value) -> ToolResponse {
    let report = ValidationReport::new(vec![Issue::new(
        "arguments",
        IssueKind::InvalidType {
            expected: "an object".into(),
        },
        Some(sent.clone()),
    )]);
    validation_response(tool, &report, None)
}

/// The answer for arguments that are not a JSON object.
pub(crate) fn not_an_object(tool: &str, sent: &Value) -> ToolResponse {
    let report = ValidationReport::new(vec![Issue::new(
        "",
        IssueKind::InvalidType {
            expected: "an object".into(),
        },
        Some(sent.clone()),
    )]);
    validation_response(tool, &report, None)
}
