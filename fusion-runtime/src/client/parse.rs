//! Reading envelopes back: `<tool_error>` and `<validation_error>` text into typed values.
//!
//! The parser accepts everything the renderers write (round trip) and returns an
//! [`EnvelopeParseError`] — never panics — on anything else. It does not normalize line ends,
//! so a CR the renderer wrote comes back as a CR.

use std::ops::Range;
use std::time::Duration;

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::Event;
use quick_xml::reader::Reader;

use crate::envelope::{ErrorCode, Severity, ToolError};

/// Nesting deeper than this is refused: no envelope comes close, and hostile input cannot
/// make the parser hold an unbounded stack.
const MAX_DEPTH: usize = 64;

/// Why a text is not an envelope.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvelopeParseError {
    /// The text is not well-formed XML.
    #[error("malformed XML at byte {position}: {message}")]
    Xml {
        /// Byte offset where the reader stopped.
        position: u64,
        /// What the reader said.
        message: String,
    },
    /// There is no element at all.
    #[error("no envelope element in the text")]
    Empty,
    /// More than one root element, or text outside the root.
    #[error("unexpected content after the envelope")]
    TrailingContent,
    /// Nested deeper than the parser accepts.
    #[error("elements nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// The root element is not the one expected.
    #[error("expected <{expected}>, found <{found}>")]
    UnexpectedRoot {
        /// What the caller asked for (`tool_error`, `validation_error` or either).
        expected: &'static str,
        /// What the text holds.
        found: String,
    },
    /// A required attribute is missing.
    #[error("<{element}> has no `{attribute}` attribute")]
    MissingAttribute {
        /// The element.
        element: &'static str,
        /// The attribute.
        attribute: &'static str,
    },
    /// A required child element is missing.
    #[error("<{parent}> has no <{child}>")]
    MissingElement {
        /// The parent element.
        parent: &'static str,
        /// The missing child.
        child: &'static str,
    },
    /// A child element occurs where only text or another child is allowed.
    #[error("unexpected <{found}> inside <{parent}>")]
    UnexpectedElement {
        /// The parent element.
        parent: String,
        /// The element found.
        found: String,
    },
    /// Text occurs where only child elements are allowed.
    #[error("unexpected text inside <{0}>")]
    UnexpectedText(String),
    /// An element that may occur once occurs again.
    #[error("<{0}> occurs more than once")]
    Duplicate(&'static str),
    /// The severity is not `error`, `critical` or `warning`.
    #[error("unknown severity `{0}`")]
    UnknownSeverity(String),
    /// `<retry_after>` is not `N seconds`.
    #[error("unreadable retry_after `{0}`")]
    BadRetryAfter(String),
    /// An entity other than the five XML predefines, or a character reference XML forbids.
    #[error("unknown or forbidden reference `&{0};`")]
    BadReference(String),
}

/// A `<validation_error>`, read back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationEnvelope {
    /// The `action` attribute.
    pub action: String,
    /// One entry per `<field>` line, in order.
    pub fields: Vec<FieldLine>,
    /// The `<recovery>` text.
    pub recovery: Option<String>,
    /// Any further section (`<contract_awareness>`, …), kept as the raw XML it was sent as.
    pub sections: Vec<RawSection>,
}

/// One `<field name="…">…</field>` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldLine {
    /// The dotted path of the field, `(root)` for the object.
    pub name: String,
    /// The line's text, unescaped.
    pub text: String,
}

/// A nested section kept as raw XML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSection {
    /// The element name (`contract_awareness`).
    pub name: String,
    /// The element exactly as it appeared, from `<` to the closing `>`.
    pub xml: String,
}

/// Either envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Envelope {
    /// A `<tool_error>`.
    Tool(ToolError),
    /// A `<validation_error>`.
    Validation(ValidationEnvelope),
}

/// Reads a `<tool_error>` or a `<validation_error>`.
pub fn parse_envelope(text: &str) -> Result<Envelope, EnvelopeParseError> {
    let root = parse_tree(text)?;
    match root.name.as_str() {
        "tool_error" => tool_error_from(&root).map(Envelope::Tool),
        "validation_error" => validation_from(&root, text).map(Envelope::Validation),
        _ => Err(EnvelopeParseError::UnexpectedRoot {
            expected: "tool_error or validation_error",
            found: root.name,
        }),
    }
}

/// Reads a `<tool_error>`.
pub fn parse_tool_error(text: &str) -> Result<ToolError, EnvelopeParseError> {
    let root = parse_tree(text)?;
    if root.name != "tool_error" {
        return Err(EnvelopeParseError::UnexpectedRoot {
            expected: "tool_error",
            found: root.name,
        });
    }
    tool_error_from(&root)
}

/// Reads a `<validation_error>`.
pub fn parse_validation_error(text: &str) -> Result<ValidationEnvelope, EnvelopeParseError> {
    let root = parse_tree(text)?;
    if root.name != "validation_error" {
        return Err(EnvelopeParseError::UnexpectedRoot {
            expected: "validation_error",
            found: root.name,
        });
    }
    validation_from(&root, text)
}

/// Whether `text` looks like an envelope (cheap; a real check is [`parse_envelope`]).
pub fn looks_like_envelope(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<tool_error") || t.starts_with("<validation_error")
}

#[derive(Debug)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
    span: Range<usize>,
}

#[derive(Debug)]
enum Node {
    Element(Element),
    Text(String),
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// Only whitespace between child elements.
    fn check_no_text(&self) -> Result<(), EnvelopeParseError> {
        let stray = self
            .children
            .iter()
            .any(|n| matches!(n, Node::Text(t) if !t.chars().all(char::is_whitespace)));
        if stray {
            return Err(EnvelopeParseError::UnexpectedText(self.name.clone()));
        }
        Ok(())
    }

    /// The text content of a leaf element.
    fn text(&self) -> Result<String, EnvelopeParseError> {
        let mut out = String::new();
        for n in &self.children {
            match n {
                Node::Text(t) => out.push_str(t),
                Node::Element(e) => {
                    return Err(EnvelopeParseError::UnexpectedElement {
                        parent: self.name.clone(),
                        found: e.name.clone(),
                    });
                }
            }
        }
        Ok(out)
    }
}

fn xml_error(reader: &Reader<&[u8]>, e: impl std::fmt::Display) -> EnvelopeParseError {
    EnvelopeParseError::Xml {
        position: reader.error_position(),
        message: e.to_string(),
    }
}

fn start_element(
    reader: &Reader<&[u8]>,
    e: &quick_xml::events::BytesStart<'_>,
    start: usize,
) -> Result<Element, EnvelopeParseError> {
    let name = std::str::from_utf8(e.name().as_ref())
        .map_err(|err| xml_error(reader, err))?
        .to_owned();
    let mut attrs = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|err| xml_error(reader, err))?;
        let key = std::str::from_utf8(a.key.as_ref())
            .map_err(|err| xml_error(reader, err))?
            .to_owned();
        let value = a
            .decode_and_unescape_value(reader.decoder())
            .map_err(|err| xml_error(reader, err))?;
        if value.chars().any(|c| !crate::envelope::xml::is_xml_char(c)) {
            return Err(EnvelopeParseError::BadReference(format!("in `{key}`")));
        }
        attrs.push((key, value.into_owned()));
    }
    Ok(Element {
        name,
        attrs,
        children: Vec::new(),
        span: start..start,
    })
}

fn parse_tree(text: &str) -> Result<Element, EnvelopeParseError> {
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let before = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let event = reader.read_event().map_err(|e| xml_error(&reader, e))?;
        let after = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        match event {
            Event::Start(e) => {
                if root.is_some() {
                    return Err(EnvelopeParseError::TrailingContent);
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(EnvelopeParseError::TooDeep);
                }
                stack.push(start_element(&reader, &e, before)?);
            }
            Event::Empty(e) => {
                if root.is_some() {
                    return Err(EnvelopeParseError::TrailingContent);
                }
                let mut el = start_element(&reader, &e, before)?;
                el.span = before..after;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(Node::Element(el)),
                    None => root = Some(el),
                }
            }
            Event::End(_) => {
                let Some(mut el) = stack.pop() else {
                    return Err(xml_error(&reader, "closing tag without an opening tag"));
                };
                el.span.end = after;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(Node::Element(el)),
                    None => root = Some(el),
                }
            }
            Event::Text(t) => {
                let s = t.decode().map_err(|e| xml_error(&reader, e))?;
                push_text(&mut stack, &root, &s)?;
            }
            Event::CData(t) => {
                let s = t.decode().map_err(|e| xml_error(&reader, e))?;
                push_text(&mut stack, &root, &s)?;
            }
            Event::GeneralRef(r) => {
                let resolved = if r.is_char_ref() {
                    match r.resolve_char_ref() {
                        Ok(Some(c)) if crate::envelope::xml::is_xml_char(c) => c.to_string(),
                        _ => return Err(EnvelopeParseError::BadReference(lossy(&r))),
                    }
                } else {
                    let name = r.decode().map_err(|e| xml_error(&reader, e))?;
                    match resolve_predefined_entity(&name) {
                        Some(s) => s.to_owned(),
                        None => return Err(EnvelopeParseError::BadReference(name.into_owned())),
                    }
                };
                push_text(&mut stack, &root, &resolved)?;
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
            Event::DocType(_) => return Err(xml_error(&reader, "DTDs are not accepted")),
            Event::Eof => break,
        }
    }
    if !stack.is_empty() {
        return Err(xml_error(&reader, "unclosed element at end of text"));
    }
    root.ok_or(EnvelopeParseError::Empty)
}

fn lossy(r: &quick_xml::events::BytesRef<'_>) -> String {
    String::from_utf8_lossy(r).into_owned()
}

fn push_text(
    stack: &mut [Element],
    root: &Option<Element>,
    s: &str,
) -> Result<(), EnvelopeParseError> {
    match stack.last_mut() {
        Some(parent) => {
            if let Some(Node::Text(prev)) = parent.children.last_mut() {
                prev.push_str(s);
            } else {
                parent.children.push(Node::Text(s.to_owned()));
            }
            Ok(())
        }
        None if s.chars().all(char::is_whitespace) => Ok(()),
        None if root.is_some() => Err(EnvelopeParseError::TrailingContent),
        None => Err(EnvelopeParseError::UnexpectedText("(document)".to_owned())),
    }
}

fn tool_error_from(root: &Element) -> Result<ToolError, EnvelopeParseError> {
    root.check_no_text()?;
    let code = root
        .attr("code")
        .ok_or(EnvelopeParseError::MissingAttribute {
            element: "tool_error",
            attribute: "code",
        })?;
    let severity = match root.attr("severity") {
        None => Severity::Error,
        Some(s) => {
            Severity::parse(s).ok_or_else(|| EnvelopeParseError::UnknownSeverity(s.to_owned()))?
        }
    };
    let mut message = None;
    let mut recovery = None;
    let mut actions = Vec::new();
    let mut details = Vec::new();
    let mut retry_after = None;
    for child in root.elements() {
        match child.name.as_str() {
            "message" => set_once(&mut message, child.text()?, "message")?,
            "recovery" => set_once(&mut recovery, child.text()?, "recovery")?,
            "available_actions" => {
                child.check_no_text()?;
                for a in child.elements() {
                    if a.name != "action" {
                        return Err(unexpected(child, a));
                    }
                    actions.push(a.text()?);
                }
            }
            "details" => {
                child.check_no_text()?;
                for d in child.elements() {
                    if d.name != "detail" {
                        return Err(unexpected(child, d));
                    }
                    let key = d.attr("key").ok_or(EnvelopeParseError::MissingAttribute {
                        element: "detail",
                        attribute: "key",
                    })?;
                    details.push((key.to_owned(), d.text()?));
                }
            }
            "retry_after" => {
                let secs = parse_retry_after(&child.text()?)?;
                set_once(&mut retry_after, secs, "retry_after")?;
            }
            // Sections a newer server may add are skipped, so old clients keep reading.
            _ => {}
        }
    }
    let message = message.ok_or(EnvelopeParseError::MissingElement {
        parent: "tool_error",
        child: "message",
    })?;
    let mut e = ToolError::new(ErrorCode::parse(code), message).severity(severity);
    if let Some(r) = recovery {
        e = e.recovery(r);
    }
    if !actions.is_empty() {
        e = e.available_actions(actions);
    }
    if !details.is_empty() {
        e = e.details(details);
    }
    if let Some(secs) = retry_after {
        e = e.retry_after(Duration::from_secs(secs));
    }
    Ok(e)
}

fn unexpected(parent: &Element, found: &Element) -> EnvelopeParseError {
    EnvelopeParseError::UnexpectedElement {
        parent: parent.name.clone(),
        found: found.name.clone(),
    }
}

fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    name: &'static str,
) -> Result<(), EnvelopeParseError> {
    if slot.is_some() {
        return Err(EnvelopeParseError::Duplicate(name));
    }
    *slot = Some(value);
    Ok(())
}

fn parse_retry_after(text: &str) -> Result<u64, EnvelopeParseError> {
    let t = text.trim();
    let number = t
        .strip_suffix(" seconds")
        .or_else(|| t.strip_suffix(" second"))
        .unwrap_or(t);
    number
        .parse::<u64>()
        .map_err(|_| EnvelopeParseError::BadRetryAfter(text.to_owned()))
}

fn validation_from(root: &Element, text: &str) -> Result<ValidationEnvelope, EnvelopeParseError> {
    root.check_no_text()?;
    let action = root
        .attr("action")
        .ok_or(EnvelopeParseError::MissingAttribute {
            element: "validation_error",
            attribute: "action",
        })?;
    let mut out = ValidationEnvelope {
        action: action.to_owned(),
        ..Default::default()
    };
    for child in root.elements() {
        match child.name.as_str() {
            "field" => {
                let name = child
                    .attr("name")
                    .ok_or(EnvelopeParseError::MissingAttribute {
                        element: "field",
                        attribute: "name",
                    })?;
                out.fields.push(FieldLine {
                    name: name.to_owned(),
                    text: child.text()?,
                });
            }
            "recovery" => set_once(&mut out.recovery, child.text()?, "recovery")?,
            _ => out.sections.push(RawSection {
                name: child.name.clone(),
                xml: text.get(child.span.clone()).unwrap_or_default().to_owned(),
            }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::error;

    #[test]
    fn reads_the_spec_example() {
        let text = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n  <message>No invoice with that ID</message>\n  <recovery>List invoices first, then retry with a real ID</recovery>\n  <available_actions>\n    <action>billing.list_invoices</action>\n  </available_actions>\n  <details>\n    <detail key=\"requestedId\">inv_2026_9999</detail>\n  </details>\n  <retry_after>30 seconds</retry_after>\n</tool_error>";
        let e = parse_tool_error(text).expect("parses");
        assert_eq!(
            e,
            error(ErrorCode::NotFound, "No invoice with that ID")
                .recovery("List invoices first, then retry with a real ID")
                .available_actions(["billing.list_invoices"])
                .details([("requestedId", "inv_2026_9999")])
                .retry_after(30)
        );
        assert_eq!(e.render(), text);
    }

    #[test]
    fn validation_error_keeps_unknown_sections_raw() {
        let text = "<validation_error action=\"billing.get_invoice\">\n  <field name=\"email\">Invalid email format. You sent: 'x&lt;y'. Expected a valid email address.</field>\n  <contract_awareness>\n    <delta severity=\"BREAKING\">field renamed</delta>\n  </contract_awareness>\n  <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>";
        let v = parse_validation_error(text).expect("parses");
        assert_eq!(v.action, "billing.get_invoice");
        assert_eq!(v.fields.len(), 1);
        assert_eq!(v.fields[0].name, "email");
        assert!(v.fields[0].text.contains("'x<y'"));
        assert_eq!(v.sections.len(), 1);
        assert_eq!(v.sections[0].name, "contract_awareness");
        assert_eq!(
            v.sections[0].xml,
            "<contract_awareness>\n    <delta severity=\"BREAKING\">field renamed</delta>\n  </contract_awareness>"
        );
        assert_eq!(
            v.recovery.as_deref(),
            Some("Fix the fields above and call the tool again. Do not explain the error.")
        );
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let cases = [
            "",
            "plain text",
            "<tool_error code=\"X\">",
            "<tool_error code=\"X\"><message>m</message></tool_error><x/>",
            "<tool_error><message>m</message></tool_error>",
            "<tool_error code=\"X\"></tool_error>",
            "<tool_error code=\"X\" severity=\"fatal\"><message>m</message></tool_error>",
            "<tool_error code=\"X\"><message>m</message><retry_after>soon</retry_after></tool_error>",
            "<tool_error code=\"X\"><message>&bogus;</message></tool_error>",
            "<tool_error code=\"X\"><message>&#0;</message></tool_error>",
            "<tool_error code=\"X\"><message><b>m</b></message></tool_error>",
            "<tool_error code=\"X\"><message>a</message><message>b</message></tool_error>",
            "<other/>",
            "<tool_error code=\"X\"><message>m</message></tool_errorx>",
        ];
        for c in cases {
            assert!(parse_envelope(c).is_err(), "accepted: {c:?}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_without_recursion() {
        let mut s = String::from("<validation_error action=\"a\">");
        for _ in 0..10_000 {
            s.push_str("<x>");
        }
        assert_eq!(parse_envelope(&s), Err(EnvelopeParseError::TooDeep));
    }
}
