//! The rules: each file is one rule, and owns its JSON Schema keyword(s), its check on the
//! typed value serde has read, its SPEC §4 wording (the text of its `<field>` line), and its
//! declaration, `RULE`: the keywords it writes and what a change of each means to a caller,
//! how `jsonschema`'s error for them reads as an issue, an issue kind of its own with its code
//! and words, and the attribute `openapi gen` writes for them. What reads "the rules" reads
//! `ALL`, the table below, never a list of its own: the derive's typed path, the healing
//! generator, the contract diff, the issue reader (`explain`), the report's lines, OpenAPI's
//! generator.
//!
//! A rule the derive writes (`length`, `range`, `items`, `format`, `pattern`, `multiple_of`)
//! has `fn keywords(args, schema)`, which the field's [`Rule`] calls, and
//! `fn check(value: Typed<'_>, args) -> Check`, whose [`Check::Engine`] says a typed value
//! cannot decide: `jsonschema` then checks the value sent on the field's sub-schema. The other
//! rules have no attribute: serde, the key count or `jsonschema` decide them (the typed path
//! looks a string sent up among an enum field's options, `enum_const::check`).
//!
//! # How to add a rule
//!
//! 1. `rules/<name>.rs`, with its `RULE`, `keywords`, `check` and the wording of its issue;
//!    its `mod` line and its row in `ALL`, both below (a test fails when a rule file is
//!    missing from the table). A new issue kind is one [`IssueKind`] variant, its code and
//!    words in the rule's `RULE`.
//! 2. One row in fusion-macros' attribute table (`fusion-macros/src/rules.rs`): the
//!    attribute's name, the value it takes, the fields it applies to and the rule it writes.
//!    The derive writes `Rule(|schema| rules::<name>::keywords(args, schema))` and
//!    `rules::<name>::check(value, args)`. A test fails when a row names no rule of the
//!    table, or a rule with `keywords` has no row.
//!
//! A new `format` is one [`Format`](crate::validation::Format) variant, its row in
//! [`format::FORMATS`] (and its name in the attribute `openapi gen` writes, beside it) and
//! its row in the macro's attribute table.
//!
//! [`Rule`]: crate::validation::spec::Rule
//! [`IssueKind`]: super::IssueKind

use jsonschema::error::ValidationErrorKind;

use crate::validation::IssueKind;

mod check;
pub mod custom;
mod declaration;
pub mod enum_const;
pub mod format;
pub mod items;
pub mod length;
pub mod multiple_of;
pub mod num;
pub mod pattern;
pub mod properties;
pub mod range;
pub mod required;
pub mod types;
pub mod union;
pub mod unknown_keys;

pub use check::{Check, Probe, ProbeOpaque, ProbeTrusted, Trusted, Typed};
pub(crate) use declaration::{
    Change, Declaration, Keyword, On, OwnIssue, no_attribute, reads_none,
};

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

    use super::num::Num;
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
