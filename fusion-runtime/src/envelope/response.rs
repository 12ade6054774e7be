use super::{Severity, ToolError};

/// One content block of a tool result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Content {
    /// Text (envelopes are text blocks).
    Text(String),
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// An embedded text resource.
    Resource {
        /// The resource URI.
        uri: String,
        /// MIME type, if known.
        mime_type: Option<String>,
        /// The resource text.
        text: String,
    },
    /// An embedded binary resource, base64-encoded.
    ResourceBlob {
        /// The resource URI.
        uri: String,
        /// MIME type, if known.
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(s: impl Into<String>) -> Self {
        Content::Text(s.into())
    }

    /// An image block from base64 `data` (`image/png`, `image/jpeg`, …).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 `data` (`audio/wav`, `audio/mpeg`, …).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded text resource.
    pub fn resource(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
        }
    }

    /// An embedded binary resource from base64 `blob`.
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob: impl Into<String>,
    ) -> Self {
        Content::ResourceBlob {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: blob.into(),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// What a tool call answers: content blocks, the `isError` flag, and optional structured content.
///
/// A successful response can carry warning envelopes ([`ToolResponse::with_warning`]): the
/// result content and the guidance both reach the model, and `is_error` stays `false`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResponse {
    /// The content blocks, in order.
    pub content: Vec<Content>,
    /// Whether the MCP result is flagged `isError`.
    pub is_error: bool,
    /// Structured content (`structuredContent`), when the output has a schema.
    pub structured_content: Option<serde_json::Value>,
}

impl ToolResponse {
    /// A successful response with one text block.
    pub fn text(s: impl Into<String>) -> Self {
        ToolResponse {
            content: vec![Content::Text(s.into())],
            ..Default::default()
        }
    }

    /// A successful response from content blocks.
    pub fn content(content: impl IntoIterator<Item = Content>) -> Self {
        ToolResponse {
            content: content.into_iter().collect(),
            ..Default::default()
        }
    }

    /// A successful response carrying `value` as compact JSON text (no indentation: fewer
    /// tokens for the model) and as structured content.
    pub fn json(value: serde_json::Value) -> Self {
        // `serde_json::to_string` writes bytes; `Value`'s `Display` goes through `fmt` and
        // costs about twice as much (callgrind).
        let text = serde_json::to_string(&value).unwrap_or_else(|_| value.to_string());
        ToolResponse {
            content: vec![Content::Text(text)],
            is_error: false,
            structured_content: Some(value),
        }
    }

    /// The response for an error envelope: flagged `isError` unless its severity is `warning`.
    pub fn error(e: ToolError) -> Self {
        let is_error = e.is_error();
        ToolResponse {
            content: vec![Content::Text(e.into_rendered())],
            is_error,
            structured_content: None,
        }
    }

    /// Appends a warning envelope. Guidance on the success path is a warning by definition,
    /// so any other severity is lowered to `warning`; `is_error` is left as it was.
    pub fn with_warning(mut self, warning: ToolError) -> Self {
        let warning = if warning.severity_of() == Severity::Warning {
            warning
        } else {
            warning.warning()
        };
        self.content.push(Content::Text(warning.into_rendered()));
        self
    }

    /// Appends a content block.
    pub fn with_content(mut self, content: Content) -> Self {
        self.content.push(content);
        self
    }

    /// Sets the structured content.
    pub fn with_structured(mut self, value: serde_json::Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// The text blocks, in order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(Content::as_text)
    }
}

impl From<ToolError> for ToolResponse {
    fn from(e: ToolError) -> Self {
        ToolResponse::error(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{ErrorCode, error};

    #[test]
    fn warnings_ride_on_success_without_the_error_flag() {
        let r = ToolResponse::text("charged")
            .with_warning(error(ErrorCode::Conflict, "Invoice already paid"));
        assert!(!r.is_error);
        assert_eq!(r.content.len(), 2);
        let texts: Vec<_> = r.texts().collect();
        assert!(texts[1].starts_with(r#"<tool_error code="CONFLICT" severity="warning">"#));
    }

    #[test]
    fn error_responses_follow_severity() {
        assert!(ToolResponse::error(error(ErrorCode::NotFound, "m")).is_error);
        assert!(ToolResponse::error(error(ErrorCode::NotFound, "m").critical()).is_error);
        assert!(!ToolResponse::error(error(ErrorCode::Deprecated, "m").warning()).is_error);
    }
}
