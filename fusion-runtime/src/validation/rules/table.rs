//! Every rule, each declared in its file as its `RULE`: what reads "the rules" (their
//! keywords, how an engine error reads as an issue, an issue kind's code and words) reads
//! this list, never a copy of its own.

use jsonschema::error::ValidationErrorKind;

use super::{
    Declaration, Keyword, On, OwnIssue, enum_const, format, items, length, multiple_of, pattern,
    properties, range,
};
use crate::validation::IssueKind;

/// Each rule's declaration, in the order `openapi gen` writes their attributes on a field
/// (`length`, then `pattern`, then a format; `range`, then `multiple_of`).
pub(crate) const ALL: &[&Declaration] = &[
    &length::RULE,
    &pattern::RULE,
    &format::RULE,
    &range::RULE,
    &multiple_of::RULE,
    &items::RULE,
    &enum_const::RULE,
    &properties::RULE,
];

/// Every rule keyword, with what it constrains.
pub(crate) fn keywords() -> impl Iterator<Item = Keyword> {
    ALL.iter().flat_map(|rule| rule.keywords.iter().copied())
}

/// The keywords that constrain a string or a number beyond its type (`enum` too): the
/// healing generator's.
#[cfg_attr(not(feature = "healing"), allow(dead_code))]
pub(crate) fn on_scalars() -> impl Iterator<Item = &'static str> {
    keywords()
        .filter(|k| matches!(k.on, On::String | On::Number | On::Any))
        .map(|k| k.name)
}

/// `jsonschema`'s error as the issue of the rule whose keyword it is about, if one reads it.
pub(crate) fn read(error: &ValidationErrorKind) -> Option<IssueKind> {
    ALL.iter().find_map(|rule| (rule.reads)(error))
}

/// The rule's own issue kind `kind` is, if a rule owns it.
pub(crate) fn own_issue(kind: &IssueKind) -> Option<&'static OwnIssue> {
    ALL.iter()
        .filter_map(|rule| rule.issue.as_ref())
        .find(|own| (own.is)(kind))
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    use super::super::num::Num;
    use super::*;
    use crate::validation::Format;

    /// What each rule's `keywords` writes, given every argument it takes.
    fn written() -> Vec<(&'static str, &'static Declaration, Map<String, Value>)> {
        let mut out = Vec::new();
        let mut one = |name, rule, write: &dyn Fn(&mut Map<String, Value>)| {
            let mut schema = Map::new();
            write(&mut schema);
            out.push((name, rule, schema));
        };
        one("length", &length::RULE, &|s| {
            length::keywords(Some(1), Some(2), s)
        });
        one("range", &range::RULE, &|s| {
            let n = Some(Num::Int(1));
            range::keywords(n, n, n, n, s)
        });
        one("items", &items::RULE, &|s| {
            items::keywords(Some(1), Some(2), s)
        });
        one("format", &format::RULE, &|s| {
            format::keywords(Format::Email, s)
        });
        one("pattern", &pattern::RULE, &|s| pattern::keywords("^a$", s));
        one("multiple_of", &multiple_of::RULE, &|s| {
            multiple_of::keywords(Num::Int(5), s)
        });
        out
    }

    #[test]
    fn every_keyword_a_rule_writes_is_declared_by_it() {
        for (name, rule, schema) in written() {
            assert!(!schema.is_empty(), "{name} wrote nothing");
            for keyword in schema.keys() {
                assert!(
                    rule.keywords.iter().any(|k| k.name == keyword),
                    "rule {name} writes `{keyword}`, which its RULE does not declare"
                );
            }
        }
    }

    #[test]
    fn the_scalar_keywords_leave_arrays_out() {
        let scalars: Vec<&str> = on_scalars().collect();
        assert!(scalars.contains(&"multipleOf") && scalars.contains(&"enum"));
        assert!(!scalars.contains(&"minItems"), "{scalars:?}");
    }
}
