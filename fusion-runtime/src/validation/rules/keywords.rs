//! Every keyword the rules write, each declared in its rule's file: what reads "the rules'
//! keywords" reads this list, never a copy of its own.

use super::{Keyword, On, enum_const, format, items, length, multiple_of, pattern, range};

/// Each rule's keywords, the rules in their files' order.
pub(crate) const ALL: &[&[Keyword]] = &[
    enum_const::KEYWORDS,
    format::KEYWORDS,
    items::KEYWORDS,
    length::KEYWORDS,
    multiple_of::KEYWORDS,
    pattern::KEYWORDS,
    range::KEYWORDS,
];

/// Every rule keyword, with what it constrains.
pub(crate) fn all() -> impl Iterator<Item = Keyword> {
    ALL.iter().flat_map(|rule| rule.iter().copied())
}

/// The keywords that constrain a string or a number beyond its type (`enum` too): the
/// healing generator's.
#[cfg_attr(not(feature = "healing"), allow(dead_code))]
pub(crate) fn on_scalars() -> impl Iterator<Item = &'static str> {
    all()
        .filter(|k| matches!(k.on, On::String | On::Number | On::Any))
        .map(|k| k.name)
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::super::num::Num;
    use super::*;
    use crate::validation::Format;

    /// What each rule's `keywords` writes, given every argument it takes.
    fn written() -> Vec<(&'static str, Map<String, Value>)> {
        let mut out = Vec::new();
        let mut one = |name, write: &dyn Fn(&mut Map<String, Value>)| {
            let mut schema = Map::new();
            write(&mut schema);
            out.push((name, schema));
        };
        one("length", &|s| length::keywords(Some(1), Some(2), s));
        one("range", &|s| {
            let n = Some(Num::Int(1));
            range::keywords(n, n, n, n, s)
        });
        one("items", &|s| items::keywords(Some(1), Some(2), s));
        one("format", &|s| format::keywords(&Format::Email, s));
        one("pattern", &|s| pattern::keywords("^a$", s));
        one("multiple_of", &|s| multiple_of::keywords(Num::Int(5), s));
        out
    }

    #[test]
    fn every_keyword_a_rule_writes_is_declared() {
        let declared: Vec<&str> = all().map(|k| k.name).collect();
        for (rule, schema) in written() {
            assert!(!schema.is_empty(), "{rule} wrote nothing");
            for keyword in schema.keys() {
                assert!(
                    declared.contains(&keyword.as_str()),
                    "rule {rule} writes `{keyword}`, which no rule's KEYWORDS declares"
                );
            }
        }
        let _ = json!(null);
    }

    #[test]
    fn the_scalar_keywords_leave_arrays_out() {
        let scalars: Vec<&str> = on_scalars().collect();
        assert!(scalars.contains(&"multipleOf") && scalars.contains(&"enum"));
        assert!(!scalars.contains(&"minItems"), "{scalars:?}");
    }
}
