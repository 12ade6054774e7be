//! The upstream's answer as the model reads it: a 2xx body as the result (structured when the
//! operation has an output schema and the body matches it), every other status as an
//! envelope of its canonical code — the API's own words (an `application/problem+json`
//! body's title and detail, or a JSON body's `message`) as its message and details, its
//! `Retry-After` as `retry_after`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::action::{ActionOutput, HandlerFailure, HandlerOutcome};
use crate::envelope::{ToolError, ToolResponse, codes};

/// At most this many characters of the API's words go into an envelope.
pub const MAX_QUOTED_CHARS: usize = 300;

/// When a `429` or `503` says nothing about when to come back.
const DEFAULT_RETRY_SECS: u64 = 5;

/// Checks a JSON body against the operation's output schema: `Err` says why it does not match.
pub(crate) type OutputCheck<'a> = &'a dyn Fn(&Value) -> Result<(), String>;

/// What came back, as read.
pub(crate) struct Reply<'a> {
    pub(crate) status: u16,
    pub(crate) content_type: Option<&'a str>,
    pub(crate) retry_after: Option<&'a str>,
    pub(crate) location: Option<&'a str>,
    pub(crate) body: &'a [u8],
}

/// The call's outcome: `action` is the action's registered name (the server writes it as the
/// client calls it), `operation` the request (`GET /pets/{id}`); `output` checks a JSON body
/// against the operation's output schema, when it has one.
pub(crate) fn outcome(
    action: &str,
    operation: &str,
    reply: &Reply<'_>,
    output: Option<OutputCheck<'_>>,
) -> HandlerOutcome {
    let json = parse_json(reply);
    if (200..300).contains(&reply.status) {
        return success(action, operation, reply, json, output);
    }
    Err(HandlerFailure::Tool(failure(
        action,
        operation,
        reply,
        json.as_ref(),
    )))
}

fn parse_json(reply: &Reply<'_>) -> Option<Value> {
    let declared = reply.content_type.is_some_and(|c| {
        let c = c
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        c == "application/json" || c.ends_with("+json")
    });
    let looks = matches!(
        reply.body.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    );
    if !(declared || looks) {
        return None;
    }
    serde_json::from_slice(reply.body).ok()
}

fn success(
    action: &str,
    operation: &str,
    reply: &Reply<'_>,
    json: Option<Value>,
    output: Option<OutputCheck<'_>>,
) -> HandlerOutcome {
    match (json, output) {
        (Some(value), Some(check)) => match check(&value) {
            Ok(()) => Ok(ActionOutput::Value {
                value,
                warnings: Vec::new(),
            }),
            Err(why) => Err(HandlerFailure::Tool(mismatch(
                action, operation, reply, &why,
            ))),
        },
        (Some(value), None) => Ok(ActionOutput::Value {
            value,
            warnings: Vec::new(),
        }),
        (None, Some(_)) if !reply.body.is_empty() => Err(HandlerFailure::Tool(mismatch(
            action,
            operation,
            reply,
            "the body is not JSON",
        ))),
        (None, _) if reply.body.is_empty() => {
            Ok(ActionOutput::Response(ToolResponse::text(format!(
                "The API answered {} with no body: the operation succeeded.",
                reply.status
            ))))
        }
        (None, _) => Ok(ActionOutput::Response(ToolResponse::text(
            String::from_utf8_lossy(reply.body).into_owned(),
        ))),
    }
}

/// A 2xx body that is not what the document says: the call did happen, so it is not to be
/// repeated blindly.
fn mismatch(action: &str, operation: &str, reply: &Reply<'_>, why: &str) -> ToolError {
    ToolError::new(
        codes::INTERNAL_ERROR,
        format!(
            "{action} reached the API, which answered {} with a body that does not match the schema its OpenAPI document gives ({why})",
            reply.status
        ),
    )
    .recovery("The operation may have taken effect: do not repeat it blindly. Tell the user the API's answer did not match its description")
    .detail("operation", operation)
    .detail("status", reply.status)
    .detail("body", quote(&String::from_utf8_lossy(reply.body)))
}

fn failure(action: &str, operation: &str, reply: &Reply<'_>, json: Option<&Value>) -> ToolError {
    let status = reply.status;
    let reason = reason(status);
    let words = upstream_words(json, reply.body);
    let said = match &words.message {
        Some(m) => format!(": {m}"),
        None => String::new(),
    };
    let (code, recovery) = match status {
        401 => (
            codes::AUTH_REQUIRED,
            "The API refused this server's credentials: tell the user the API's credentials are missing or expired. Do not retry until they are renewed".to_owned(),
        ),
        403 => (
            codes::FORBIDDEN,
            "The credentials in use may not do this: do not retry with other arguments; tell the user which permission is missing".to_owned(),
        ),
        404 | 410 => (
            codes::NOT_FOUND,
            "Check the identifiers you sent: look the resource up with a listing or search action first, then call again with one that exists".to_owned(),
        ),
        409 => (
            codes::CONFLICT,
            "The resource is not in a state that allows this: read its current state first, then decide what to call".to_owned(),
        ),
        429 => (
            codes::RATE_LIMITED,
            "Wait for retry_after, then call again with the same arguments".to_owned(),
        ),
        503 => (
            codes::SERVER_BUSY,
            "The API is overloaded or down for maintenance: wait for retry_after, then call again".to_owned(),
        ),
        408 | 504 => (
            codes::TIMEOUT,
            "The API gave up on the request: it may or may not have taken effect; check before repeating a change".to_owned(),
        ),
        400..=499 => (
            codes::VALIDATION_ERROR,
            "The API refused the arguments: fix them as its words above say, then call again".to_owned(),
        ),
        300..=399 => (
            codes::INTERNAL_ERROR,
            "The API sent the request elsewhere, which this server does not follow: tell the user; do not retry".to_owned(),
        ),
        _ => (
            codes::INTERNAL_ERROR,
            "The API failed on its side: the operation may or may not have taken effect; do not repeat a change blindly".to_owned(),
        ),
    };
    let mut e = ToolError::new(
        code,
        format!("{action} failed: the API answered {status} {reason}{said}"),
    )
    .recovery(recovery)
    .detail("operation", operation)
    .detail("status", status);
    if (300..400).contains(&status)
        && let Some(location) = reply.location
    {
        e = e.detail("location", quote(location));
    }
    for (k, v) in words.details {
        e = e.detail(k, v);
    }
    if matches!(status, 429 | 503) {
        let secs = reply
            .retry_after
            .and_then(retry_after_secs)
            .unwrap_or(DEFAULT_RETRY_SECS);
        e = e.retry_after(Duration::from_secs(secs.max(1)));
    }
    e
}

/// What the API said: a message, and the details worth showing.
#[derive(Default)]
struct Words {
    message: Option<String>,
    details: Vec<(String, String)>,
}

/// An RFC 9457 problem (`title`, `detail`, `type`, `instance`, `errors`), or a JSON body's
/// usual keys (`message`, `error`, `error_description`, `detail`, `errors`), or the text.
fn upstream_words(json: Option<&Value>, body: &[u8]) -> Words {
    let mut words = Words::default();
    let Some(Value::Object(m)) = json else {
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        if !text.is_empty() {
            words.message = Some(quote(text));
        }
        return words;
    };
    let text = |k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let message = match (text("title"), text("detail")) {
        (Some(t), Some(d)) => Some(format!("{t}: {d}")),
        (Some(t), None) => Some(t.to_owned()),
        (None, Some(d)) => Some(d.to_owned()),
        (None, None) => text("message")
            .or_else(|| text("error_description"))
            .or_else(|| text("error"))
            .map(str::to_owned),
    };
    words.message = message.map(|m| quote(&m));
    for key in ["type", "instance", "code", "documentation_url"] {
        if let Some(v) = m.get(key).filter(|v| !v.is_null())
            && (key != "type" || v != "about:blank")
        {
            let shown = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            words.details.push((key.to_owned(), quote(&shown)));
        }
    }
    for key in ["errors", "invalid_params", "invalid-params", "violations"] {
        if let Some(v) = m.get(key).filter(|v| !v.is_null()) {
            words
                .details
                .push((key.replace('-', "_"), quote(&v.to_string())));
        }
    }
    if words.message.is_none() && words.details.is_empty() {
        words.message = Some(quote(&Value::Object(m.clone()).to_string()));
    }
    words
}

/// At most [`MAX_QUOTED_CHARS`] characters, on a character boundary.
fn quote(s: &str) -> String {
    super::operation::cut(s, MAX_QUOTED_CHARS)
}

/// `Retry-After`: delay-seconds, or an HTTP date (IMF-fixdate) from now.
pub(crate) fn retry_after_secs(value: &str) -> Option<u64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(secs.min(86_400));
    }
    let at = imf_fixdate(value)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(at.saturating_sub(now).min(86_400))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` as seconds since the epoch.
fn imf_fixdate(s: &str) -> Option<u64> {
    let rest = s.split_once(", ")?.1;
    let mut parts = rest.split(' ');
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, mi, se) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m as i64 + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days)
        .ok()
        .map(|d| d * 86_400 + h * 3600 + mi * 60 + se)
}

fn reason(status: u16) -> &'static str {
    match status {
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, ct: &'static str, body: &'static str) -> Reply<'static> {
        Reply {
            status,
            content_type: Some(ct),
            retry_after: None,
            location: None,
            body: body.as_bytes(),
        }
    }

    fn error_of(o: HandlerOutcome) -> ToolError {
        match o {
            Err(HandlerFailure::Tool(e)) => e,
            other => panic!("not a tool error: {other:?}"),
        }
    }

    #[test]
    fn a_problem_becomes_message_and_details() {
        let body = r#"{"type": "https://example.com/probs/out-of-credit", "title": "You do not have enough credit.", "detail": "Your current balance is 30, but that costs 50.", "instance": "/account/12345/msgs/abc", "status": 403}"#;
        let e = error_of(outcome(
            "shop.buy",
            "POST /buy",
            &reply(403, "application/problem+json", body),
            None,
        ));
        assert_eq!(e.code().as_str(), "FORBIDDEN");
        assert_eq!(
            e.message(),
            "shop.buy failed: the API answered 403 Forbidden: You do not have enough credit.: Your current balance is 30, but that costs 50."
        );
        assert_eq!(
            e.detail_value("type"),
            Some("https://example.com/probs/out-of-credit")
        );
        assert_eq!(e.detail_value("instance"), Some("/account/12345/msgs/abc"));
    }

    #[test]
    fn rate_limits_carry_retry_after() {
        let mut r = reply(429, "text/plain", "slow down");
        r.retry_after = Some("17");
        let e = error_of(outcome("a.b", "GET /x", &r, None));
        assert_eq!(e.code().as_str(), "RATE_LIMITED");
        assert_eq!(e.retry_after_secs(), Some(17));
        let mut r = reply(503, "text/plain", "");
        r.retry_after = Some("Wed, 21 Oct 2015 07:28:00 GMT");
        let e = error_of(outcome("a.b", "GET /x", &r, None));
        assert_eq!(
            (e.code().as_str(), e.retry_after_secs()),
            ("SERVER_BUSY", Some(1))
        );
        assert_eq!(
            imf_fixdate("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(1_445_412_480)
        );
    }

    #[test]
    fn a_long_body_is_quoted_short() {
        let body: &'static str = Box::leak("x".repeat(10_000).into_boxed_str());
        let e = error_of(outcome(
            "a.b",
            "GET /x",
            &reply(500, "text/plain", body),
            None,
        ));
        assert!(e.message().chars().count() < 400, "{}", e.message());
    }
}
