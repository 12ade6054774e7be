//! `pattern = ".."`: `pattern`, an ECMA-262 regex. [`Pattern`] rebuilds what `jsonschema`'s
//! `pattern` keyword runs (`keywords/pattern.rs`) from the same public pieces of
//! `jsonschema_regex` (one version in `Cargo.lock`), so one dialect and one engine decide; a
//! match it cannot finish is left to `jsonschema`. `tests/tests/pattern_engine.rs` checks the
//! two agree.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use jsonschema_regex::{PatternAnalysis, RepeatedClass, Search, Sequence};
use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::util::{primitives::StateID, start};
use serde_json::{Map, Value};

use super::{Change, Check, Declaration, Keyword, On, Typed, reads_none};

/// The rule: its keyword. `explain` reads `jsonschema`'s error for it itself, taking the
/// pattern out of the error rather than copying it (an `invalid_format` issue, worded here).
pub(crate) const RULE: Declaration = Declaration {
    keywords: &[Keyword {
        name: "pattern",
        on: On::String,
        change: Change::WhenSet([
            "now must match a pattern",
            "must match a different pattern",
            "no longer must match a pattern",
        ]),
    }],
    reads: reads_none,
    issue: None,
    attribute,
};

/// `pattern = ".."`, when the schema's pattern is one the validation engine reads (an
/// ECMA-262 regex, as the macro checks it).
fn attribute(schema: &Value, _: bool) -> Option<String> {
    let pattern = schema.get("pattern").and_then(Value::as_str)?;
    let compiles = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&serde_json::json!({ "pattern": pattern }))
        .is_ok();
    compiles.then(|| format!("pattern = {pattern:?}"))
}

/// Its keyword.
pub fn keywords(pattern: &'static str, schema: &mut Map<String, Value>) {
    schema.insert("pattern".into(), pattern.into());
}

/// A string matched by the compiled pattern ([`Check::Engine`] when it cannot answer).
#[inline]
pub fn check(value: Typed<'_>, pattern: &'static Pattern) -> Check {
    match value {
        Typed::Str(s) => pattern.is_match(s).map_or(Check::Engine, Check::from_bool),
        Typed::Opaque => Check::Engine,
        _ => Check::Pass,
    }
}

/// A field's `pattern`, compiled on first use (the derive writes one `static` per attribute).
#[derive(Debug)]
pub struct Pattern {
    source: &'static str,
    matcher: OnceLock<Matcher>,
}

impl Pattern {
    /// The pattern `source`, not compiled yet.
    pub const fn new(source: &'static str) -> Pattern {
        Pattern {
            source,
            matcher: OnceLock::new(),
        }
    }

    /// Whether `text` matches, as `jsonschema` decides it; `None` when only `jsonschema` can
    /// answer (leading look-aheads, a pattern it does not translate, a match the engine did
    /// not finish).
    #[inline]
    pub fn is_match(&self, text: &str) -> Option<bool> {
        self.matcher
            .get_or_init(|| Matcher::new(self.source))
            .is_match(text)
    }
}

/// What `jsonschema` runs for a pattern, rebuilt from the same pieces.
// One per `pattern` attribute, in a `static`: its size costs nothing, a `Box` around the DFA
// would cost a load on every call.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Matcher {
    /// `^abc`.
    Prefix(String),
    /// `^abc$`.
    Exact(String),
    /// `^(a|b|c)$`.
    Alternation(Vec<String>),
    /// `^\S*$`.
    NoWhitespace,
    /// `^X{m,n}$` over one class: the characters counted.
    Counted(RepeatedClass),
    /// `^abcX{m,n}$`: the prefix, then the characters after it counted (by `jsonschema`'s
    /// sequence matcher when they are ASCII). Each character is checked alone, where a DFA's
    /// steps are a chain of dependent loads.
    PrefixCounted(Box<str>, Option<Sequence>, RepeatedClass),
    /// The DFA of the translation (anchored sequences).
    Dfa(Dfa),
    /// The `regex` crate on the translation (anchored sequences whose DFA is too large).
    Regex(regex::Regex),
    /// `fancy-regex` on the translation or its search form.
    Fancy(fancy_regex::Regex),
    /// Only `jsonschema` decides.
    Engine,
}

impl Matcher {
    fn new(pattern: &str) -> Matcher {
        if let Some(literal) = jsonschema_regex::analyze_pattern(pattern) {
            return match literal {
                PatternAnalysis::Prefix(p) => Matcher::Prefix(p.into_owned()),
                PatternAnalysis::Exact(e) => Matcher::Exact(e.into_owned()),
                PatternAnalysis::Alternation(a) => Matcher::Alternation(a),
                PatternAnalysis::NoWhitespace => Matcher::NoWhitespace,
            };
        }
        let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
            return Matcher::Engine;
        };
        if jsonschema_regex::Sequence::compile(&translated).is_some() {
            if let Some(split) = split_prefix(&translated) {
                return split;
            }
            if let Some(dfa) = Dfa::new(&translated) {
                return Matcher::Dfa(dfa);
            }
            return regex::Regex::new(&translated).map_or(Matcher::Engine, Matcher::Regex);
        }
        if jsonschema_regex::split_leading_lookaheads(pattern).is_some() {
            return Matcher::Engine;
        }
        let fancy = |p: &str| fancy_regex::Regex::new(p).map_or(Matcher::Engine, Matcher::Fancy);
        match jsonschema_regex::search_form(pattern, &translated) {
            Some(Search::RepeatedClass(class)) => Matcher::Counted(class),
            Some(Search::Collapsed(collapsed)) => fancy(&collapsed),
            None => fancy(&translated),
        }
    }

    #[inline]
    fn is_match(&self, text: &str) -> Option<bool> {
        match self {
            Matcher::Prefix(p) => Some(text.starts_with(p.as_str())),
            Matcher::Exact(e) => Some(text == e),
            Matcher::Alternation(a) => Some(a.iter().any(|a| a == text)),
            Matcher::NoWhitespace => Some(!jsonschema_regex::contains_ecma_whitespace(text)),
            Matcher::Counted(class) => Some(class.is_match(text)),
            Matcher::PrefixCounted(prefix, ascii, rest) => {
                Some(text.strip_prefix(&**prefix).is_some_and(|after| {
                    ascii
                        .as_ref()
                        .and_then(|a| a.is_match(after.as_bytes()))
                        .unwrap_or_else(|| rest.is_match(after))
                }))
            }
            Matcher::Dfa(dfa) => dfa.is_match(text),
            // `regex-automata` 0.4 can panic on some patterns (rust-lang/regex#1344), as
            // `jsonschema` notes where it catches it: the engine answers instead.
            Matcher::Regex(r) => catch_unwind(AssertUnwindSafe(|| r.is_match(text))).ok(),
            Matcher::Fancy(r) => catch_unwind(AssertUnwindSafe(|| r.is_match(text)))
                .ok()
                .and_then(Result::ok),
            Matcher::Engine => None,
        }
    }
}

/// The largest DFA built for a pattern, in bytes of transitions (`regex` decides beyond it).
pub const MAX_DFA_BYTES: usize = 1 << 16;

/// A pattern's dense DFA, unanchored as `regex`'s `is_match` searches, and its start state.
#[derive(Debug)]
struct Dfa {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
}

/// `^abcX{m,n}$` as its literal prefix (the letters, digits and `_` after the `^`, the last
/// one left to the rest when a quantifier follows it) and `^X{m,n}$` counted.
fn split_prefix(translated: &str) -> Option<Matcher> {
    let body = translated.strip_prefix('^')?;
    let mut end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    if body[end..].starts_with(['*', '+', '?', '{']) {
        end = end.checked_sub(1)?;
    }
    let rest = format!("^{}", &body[end..]);
    let counted = RepeatedClass::from_translated(&rest)?;
    let prefix = Box::from(&body[..end]);
    (end > 0).then(|| Matcher::PrefixCounted(prefix, Sequence::compile(&rest), counted))
}

impl Dfa {
    /// `None` when the pattern has no DFA within [`MAX_DFA_BYTES`] (a Unicode word boundary,
    /// a large class or counter): `regex` decides it then.
    fn new(translated: &str) -> Option<Dfa> {
        let config = dense::Config::new()
            .start_kind(StartKind::Unanchored)
            .accelerate(false)
            .dfa_size_limit(Some(MAX_DFA_BYTES))
            .determinize_size_limit(Some(4 * MAX_DFA_BYTES));
        let build = || {
            dense::Builder::new()
                .configure(config)
                .build(translated)
                .ok()
        };
        let dfa = catch_unwind(AssertUnwindSafe(build)).ok().flatten()?;
        let start = dfa.start_state(&start::Config::new()).ok()?;
        Some(Dfa { dfa, start })
    }

    /// Whether the DFA finds a match in `text`: a match state is reached (a DFA reports a
    /// match one byte late, at the end on the end-of-input transition). `None` at a quit
    /// state, which this configuration does not make.
    #[inline]
    fn is_match(&self, text: &str) -> Option<bool> {
        let dfa = &self.dfa;
        let mut sid = self.start;
        for &b in text.as_bytes() {
            sid = dfa.next_state(sid, b);
            if dfa.is_special_state(sid) {
                if dfa.is_match_state(sid) {
                    return Some(true);
                }
                if dfa.is_dead_state(sid) {
                    return Some(false);
                }
                if dfa.is_quit_state(sid) {
                    return None;
                }
            }
        }
        Some(dfa.is_match_state(dfa.next_eoi_state(sid)))
    }
}

/// The problem of a string the pattern does not match.
pub const PROBLEM: &str = "Invalid format";

/// The expected text: `a string matching ^inv_[0-9]{4}$`.
pub fn push_expected(out: &mut String, pattern: &str) {
    out.push_str("a string matching ");
    out.push_str(pattern);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_prefix_then_a_counted_class_is_split() {
        let split = |p| matches!(Matcher::new(p), Matcher::PrefixCounted(..));
        assert!(split("^acc_[a-z0-9]{6,12}$"));
        assert!(!split("^ab*[0-9]{1,2}$"), "a quantified last letter");
        assert!(!split("^ab[0-9]{1,2}x$"), "more after the class");
    }

    #[test]
    fn a_pattern_too_large_for_a_dfa_gets_none_and_still_decides() {
        assert!(Dfa::new("^acc_[a-z0-9]{6,12}$").is_some());
        let large = "^[^a]{1,900}$";
        assert!(Dfa::new(large).is_none());
        let m = Matcher::new(large);
        assert!(!matches!(m, Matcher::Dfa(_)));
        assert_eq!(m.is_match(&"é".repeat(900)), Some(true));
        assert_eq!(m.is_match(&"é".repeat(901)), Some(false));
    }
}
