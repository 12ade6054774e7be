//! The pattern rule decides as `jsonschema` does: for every pattern of the test fixtures and
//! examples (and one of each form the rule builds), [`Pattern::is_match`] on random strings
//! equals the `jsonschema` validator of `{"type": "string", "pattern": ..}` wherever the
//! rule answers, and it answers for every pattern but those it leaves to the engine.

use std::sync::LazyLock;

use fusion_runtime::validation::rules::pattern::{Pattern, check};
use fusion_runtime::validation::rules::{Check, Typed};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Every `#[fusion(pattern = ..)]` of the tests and examples, then one pattern per form the
/// rule builds (literal forms, anchored sequence, counted class, collapsed counts, the
/// `fancy-regex` translation, look-ahead, back-reference).
const PATTERNS: &[&str] = &[
    "^acc_[a-z0-9]{6,12}$",
    "^SKU-\\d{1,3}$",
    "^SKU-[0-9]+$",
    "^SKU-[0-9]{1,3}$",
    "^inv_[0-9]{4}_[0-9]{4}$",
    "^[A-Z]{3}$",
    "@example\\.com$",
    "^(?=.*[0-9]).+$",
    "^(\\w)\\1$",
    // literal forms
    "^acc",
    "^acc_$",
    "^(free|pro|team)$",
    "^\\S*$",
    // sequences, counts, translations
    "^[a-z]{1,300}$",
    "^\\w+$",
    "^.+$",
    "^[\\s\\S]{2,5}$",
    "^(ab)+$",
    "colou?r",
    "[0-9]{2,}",
    "^[^@\\s]+@[^@\\s]+$",
    "\\bacc\\b",
    "^\\d+(\\.\\d{1,2})?$",
    "^[A-Za-z]{2}-\\d{3,}$|^x$",
];

/// Each pattern with its matcher and the `jsonschema` validator of its string schema.
static ENGINES: LazyLock<Vec<(&'static str, Pattern, jsonschema::Validator)>> =
    LazyLock::new(|| {
        PATTERNS
            .iter()
            .map(|p| {
                let schema = json!({"type": "string", "pattern": p});
                let validator = jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(&schema)
                    .unwrap_or_else(|e| panic!("{p} compiles: {e}"));
                (*p, Pattern::new(p), validator)
            })
            .collect()
    });

/// Strings near the fixtures' patterns and far from them: prefixes and lengths at the
/// bounds, digits of other scripts, ECMA-262 whitespace and line terminators, any `char`.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "(acc_|SKU-|inv_|colo|ab|x|@example)?[a-zA-Z0-9_.@ ]{0,14}",
        2 => "[a-z0-9_\\-.@\\s\u{a0}\u{2028}\u{661}\u{e9}]{0,16}",
        1 => "acc_[a-z0-9]{5,13}",
        1 => "inv_[0-9]{3,5}_[0-9]{3,5}",
        1 => "(ab){0,4}a?",
        1 => any::<String>(),
    ]
}

proptest! {
    #![proptest_config(fusion_tests::proptest_config(2048))]

    #[test]
    fn the_rule_matches_as_the_engine_does(s in text()) {
        for (p, pattern, validator) in ENGINES.iter() {
            if let Some(matched) = pattern.is_match(&s) {
                prop_assert_eq!(
                    matched,
                    validator.is_valid(&Value::from(s.as_str())),
                    "{} on {:?}",
                    p,
                    s
                );
            }
        }
    }
}

#[test]
fn the_rule_answers_for_all_but_leading_look_aheads() {
    for (p, pattern, _) in ENGINES.iter() {
        let answers = pattern.is_match("acc_7f3k9q2m").is_some();
        assert_eq!(answers, *p != "^(?=.*[0-9]).+$", "{p}");
    }
}

#[test]
fn each_form_is_built_and_decides() {
    const CASES: &[(&str, &str, Option<bool>)] = &[
        ("^abc", "abcd", Some(true)),
        ("^abc$", "abcd", Some(false)),
        ("^(a|b)$", "b", Some(true)),
        ("^\\S*$", "a\u{a0}b", Some(false)),
        ("^[a-z]{2,4}$", "abcde", Some(false)),
        ("^acc_[a-z0-9]{6,12}$", "acc_7f3k9q2m", Some(true)),
        ("^acc_[a-z0-9]{6,12}$", "acc_7f3k9q2m_", Some(false)),
        ("^SKU-\\d{1,3}$", "SKU-\u{661}", Some(false)),
        ("^(ab)+$", "abab", Some(true)),
        ("^(ab)+$", "aba", Some(false)),
        ("^(?=.*[0-9]).+$", "a1", None),
        ("^(\\w)\\1$", "aa", Some(true)),
        ("^(\\w)\\1$", "ab", Some(false)),
        ("^ab_[a-zé]{2,3}$", "ab_éé", Some(true)),
        ("^ab_[a-zé]{2,3}$", "ab_éééé", Some(false)),
        ("^ab_[a-zé]{2,3}$", "ac_éé", Some(false)),
        ("^ab*[0-9]{1,2}$", "abb1", Some(true)),
        ("^ab*[0-9]{1,2}$", "a1", Some(true)),
    ];
    for (pattern, text, expected) in CASES {
        let p = Pattern::new(pattern);
        assert_eq!(p.is_match(text), *expected, "{pattern} on {text:?}");
    }
}

#[test]
fn the_check_asks_the_matcher_for_strings_only() {
    static P: Pattern = Pattern::new("^a$");
    assert_eq!(check(Typed::Str("a"), &P), Check::Pass);
    assert_eq!(check(Typed::Str("b"), &P), Check::Fail);
    assert_eq!(check(Typed::Int(1), &P), Check::Pass);
    assert_eq!(check(Typed::Opaque, &P), Check::Engine);
}
