//! Properties of the envelope over arbitrary Unicode: the output is well-formed XML, the
//! parser gives back what was rendered (up to the documented character replacement), and the
//! parser never panics.

use std::time::Duration;

use fusion_runtime::client::{Envelope, parse_envelope, parse_tool_error};
use fusion_runtime::envelope::xml::replace_forbidden;
use fusion_runtime::{ErrorCode, Severity, ToolError, error};
use proptest::prelude::*;
use quick_xml::events::Event;
use quick_xml::reader::Reader;

/// Strings biased toward what breaks XML: specials, `]]>`, C0 controls, U+FFFE/FFFF, emoji.
fn nasty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        Just("&".to_owned()),
        Just("<".to_owned()),
        Just(">".to_owned()),
        Just("\"".to_owned()),
        Just("'".to_owned()),
        Just("]]>".to_owned()),
        Just("]]".to_owned()),
        Just("&amp;".to_owned()),
        Just("</message>".to_owned()),
        Just("\u{0}\u{1}\u{1b}\u{7f}".to_owned()),
        Just("\t\n\r".to_owned()),
        Just("\u{FFFE}\u{FFFF}".to_owned()),
        Just("🚀👩‍👩‍👧".to_owned()),
        "[a-z ]{0,8}",
    ];
    prop::collection::vec(piece, 0..6).prop_map(|v| v.concat())
}

fn severity() -> impl Strategy<Value = Severity> {
    prop_oneof![
        Just(Severity::Error),
        Just(Severity::Critical),
        Just(Severity::Warning)
    ]
}

fn code() -> impl Strategy<Value = ErrorCode> {
    prop_oneof![
        prop::sample::select(ErrorCode::CANONICAL.to_vec()),
        nasty().prop_map(ErrorCode::from),
    ]
}

/// The parts an envelope is built from, kept to say what it should read back as.
#[derive(Clone, Debug)]
struct Parts {
    code: ErrorCode,
    message: String,
    recovery: Option<String>,
    available_actions: Vec<String>,
    details: Vec<(String, String)>,
    retry: Option<u64>,
    severity: Severity,
}

impl Parts {
    fn build(&self) -> ToolError {
        let mut e = error(self.code.clone(), self.message.clone())
            .available_actions(self.available_actions.clone())
            .details(self.details.clone())
            .severity(self.severity);
        if let Some(s) = &self.recovery {
            e = e.recovery(s.clone());
        }
        if let Some(r) = self.retry {
            e = e.retry_after(Duration::from_secs(r));
        }
        e
    }

    /// The recovery text, when set and non-empty (an empty one is not rendered).
    fn recovery(&self) -> Option<&str> {
        self.recovery.as_deref().filter(|s| !s.is_empty())
    }
}

prop_compose! {
    fn parts()(
        code in code(),
        message in nasty(),
        recovery in prop::option::of(nasty()),
        available_actions in prop::collection::vec(nasty(), 0..4),
        details in prop::collection::vec((nasty(), nasty()), 0..4),
        retry in prop::option::of(0u64..100_000),
        severity in severity(),
    ) -> Parts {
        Parts { code, message, recovery, available_actions, details, retry, severity }
    }
}

fn tool_error() -> impl Strategy<Value = ToolError> {
    parts().prop_map(|p| p.build())
}

/// What the envelope should read back as: every string with forbidden characters replaced.
fn replaced(p: &Parts) -> ToolError {
    let mut out = error(
        ErrorCode::parse(&replace_forbidden(p.code.as_str())),
        replace_forbidden(&p.message),
    )
    .available_actions(p.available_actions.iter().map(|a| replace_forbidden(a)))
    .details(
        p.details
            .iter()
            .map(|(k, v)| (replace_forbidden(k), replace_forbidden(v))),
    )
    .severity(p.severity);
    if let Some(s) = p.recovery() {
        out = out.recovery(replace_forbidden(s));
    }
    if let Some(d) = p.build().retry_after_duration() {
        out = out.retry_after(d);
    }
    out
}

fn read_to_end(text: &str) -> Result<usize, String> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut depth = 0i64;
    let mut elements = 0usize;
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(_) => {
                depth += 1;
                elements += 1;
            }
            Event::End(_) => depth -= 1,
            Event::Empty(_) => elements += 1,
            Event::GeneralRef(r)
                if r.is_char_ref()
                    && r.resolve_char_ref().map_err(|e| e.to_string())?.is_none() =>
            {
                return Err("bad char ref".into());
            }
            Event::Text(t) => {
                let s = t.decode().map_err(|e| e.to_string())?;
                if let Some(c) = s
                    .chars()
                    .find(|&c| !fusion_runtime::envelope::xml::is_xml_char(c))
                {
                    return Err(format!("forbidden character {c:?} in output"));
                }
                if s.contains("]]>") {
                    return Err("`]]>` in content".into());
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced: depth {depth}"));
    }
    Ok(elements)
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(512))]

    #[test]
    fn rendered_envelopes_are_well_formed(p in parts()) {
        let e = p.build();
        let text = e.render();
        let elements = read_to_end(text).map_err(TestCaseError::fail)?;
        let expected = 2
            + usize::from(p.recovery().is_some())
            + if p.available_actions.is_empty() { 0 } else { 1 + p.available_actions.len() }
            + if p.details.is_empty() { 0 } else { 1 + p.details.len() }
            + usize::from(e.retry_after_secs().is_some());
        // No input can open or close an element: the count is exactly the sections set.
        prop_assert_eq!(elements, expected);
    }

    #[test]
    fn parse_inverts_render(p in parts()) {
        let e = p.build();
        let back = parse_tool_error(e.render()).map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert_eq!(&back, &replaced(&p));
        prop_assert_eq!(back.render(), e.render());
    }

    #[test]
    fn parser_never_panics_on_arbitrary_text(s in any::<String>()) {
        let _ = parse_envelope(&s);
    }

    #[test]
    fn parser_never_panics_on_mangled_envelopes(e in tool_error(), cut in any::<prop::sample::Index>(), insert in nasty()) {
        let text = e.render();
        let mut at = cut.index(text.len() + 1);
        while !text.is_char_boundary(at) { at -= 1; }
        let mangled = format!("{}{}{}", &text[..at], insert, &text[at..]);
        let _ = parse_envelope(&mangled);
        let _ = parse_envelope(&text[..at]);
    }
}

#[test]
fn parse_envelope_dispatches_on_root() {
    let e = error(ErrorCode::RateLimited, "Slow down").retry_after(Duration::from_millis(1200));
    match parse_envelope(e.render()) {
        Ok(Envelope::Tool(back)) => assert_eq!(back.retry_after_secs(), Some(2)),
        other => panic!("unexpected {other:?}"),
    }
}
