//! Checks across attributes: what one key cannot know alone.

use proc_macro2::Span;

use crate::ast::{Container, Field, TypeClass};
use crate::attr::{Bounds, Count, NumLit, RangeBounds, RuleValue};
use crate::ctxt::Ctxt;
use crate::rules::{On, Takes};

pub fn check(cx: &Ctxt, cont: &Container) {
    check_schema_name(cx, cont);
    for field in &cont.fields {
        check_applies_to_type(cx, field);
        check_bounds(cx, field);
        check_formats(cx, field);
        check_pattern(cx, field);
        check_deprecated(cx, field);
    }
}

/// A caller cannot stop sending a required field, so deprecating one would warn on every
/// call with no way to comply: a deprecated field must be optional.
fn check_deprecated(cx: &Ctxt, field: &Field) {
    if let Some(d) = &field.attrs.deprecated
        && !field.optional
        && !field.skipped
    {
        err(
            cx,
            d.key,
            "a deprecated field must be optional (an `Option` or `#[serde(default)]`): callers cannot stop sending a required field",
        );
    }
}

fn err(cx: &Ctxt, span: Span, msg: impl std::fmt::Display) {
    cx.syn_error(syn::Error::new(span, msg));
}

/// The container `rename` names the schema in `$defs`, and `$ref`s point at it. schemars
/// writes a `$ref` to a name with spaces, `%`, non-ASCII, `/` or `~` percent-encoded or
/// escaped, but the runtime's issue wording and contract diff read `$ref`s as plain JSON
/// pointers: they would miss the schema the validator checks. Plain names need no encoding.
fn check_schema_name(cx: &Ctxt, cont: &Container) {
    if let Some(rename) = &cont.rename {
        let name = rename.value();
        let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        if name.is_empty() || !name.chars().all(plain) {
            err(
                cx,
                rename.span(),
                format_args!(
                    "`#[serde(rename)]` on the struct names its schema in `$defs`, and every `$ref` to {:?} would need escaping; use only ASCII letters, digits, `_`, `-` and `.`",
                    name
                ),
            );
        }
    }
}

/// A rule on a type it cannot apply to would be a keyword the validator silently ignores:
/// the agent would read a constraint that is never enforced. Only types the syntax names
/// for sure are checked; other types (newtypes, aliases) are trusted.
fn check_applies_to_type(cx: &Ctxt, field: &Field) {
    let class = field.class;
    if class == TypeClass::Other {
        return;
    }
    for r in &field.attrs.rules {
        let applies = match r.attr.on {
            On::Strings => class == TypeClass::String,
            On::Numbers => matches!(class, TypeClass::Integer | TypeClass::Float),
            On::Arrays => class == TypeClass::Array,
        };
        if !applies {
            err(
                cx,
                r.key,
                format_args!(
                    "`{}` is only supported on {}, and `{}` is {}{}",
                    r.attr.name,
                    r.attr.on.words(),
                    field.ident,
                    class.words(),
                    r.attr.instead
                ),
            );
        }
    }
}

/// Bounds that no value can meet are a schema no agent can satisfy.
fn check_bounds(cx: &Ctxt, field: &Field) {
    let counts = |b: &Bounds<Count>| {
        if let (Some(min), Some(max)) = (b.min, b.max)
            && min.value > max.value
        {
            err(
                cx,
                min.span,
                format_args!(
                    "`min` ({}) is greater than `max` ({})",
                    min.value, max.value
                ),
            );
        }
    };
    for rule in &field.attrs.rules {
        match &rule.value {
            RuleValue::Counts(b) => counts(b),
            RuleValue::Bounds(r) => check_range(cx, field, r),
            // Positive: a multiple of 0 or less is no rule
            RuleValue::Number(n) if n.value <= 0.0 => {
                err(
                    cx,
                    n.span,
                    format_args!("`{}` must be greater than 0", rule.attr.name),
                );
            }
            _ => {}
        }
    }
}

/// `range`'s bounds: one of each side, an interval some number is in, integers for an
/// integer field.
fn check_range(cx: &Ctxt, field: &Field, r: &RangeBounds) {
    if let (Some(_), Some(emin)) = (&r.min, &r.exclusive_min) {
        err(
            cx,
            emin.span,
            "`range` takes `min` or `exclusive_min`, not both",
        );
    }
    if let (Some(_), Some(emax)) = (&r.max, &r.exclusive_max) {
        err(
            cx,
            emax.span,
            "`range` takes `max` or `exclusive_max`, not both",
        );
    }
    let lower = r
        .min
        .as_ref()
        .map(|n| (n, true))
        .or(r.exclusive_min.as_ref().map(|n| (n, false)));
    let upper = r
        .max
        .as_ref()
        .map(|n| (n, true))
        .or(r.exclusive_max.as_ref().map(|n| (n, false)));
    if let (Some((lo, lo_incl)), Some((hi, hi_incl))) = (lower, upper) {
        let empty = if lo_incl && hi_incl {
            lo.value > hi.value
        } else {
            lo.value >= hi.value
        };
        if empty {
            err(
                cx,
                lo.span,
                format_args!(
                    "the lower bound ({}) is not below the upper bound ({}): no number fits",
                    show(lo),
                    show(hi)
                ),
            );
        }
    }
    if field.class == TypeClass::Integer {
        for n in [&r.min, &r.max, &r.exclusive_min, &r.exclusive_max]
            .into_iter()
            .flatten()
        {
            if !n.is_int {
                err(
                    cx,
                    n.span,
                    "this field is an integer: write the bound as an integer",
                );
            }
        }
    }
}

fn show(n: &NumLit) -> String {
    if n.is_int {
        n.int.to_string()
    } else {
        n.value.to_string()
    }
}

/// Two formats (or a format and a pattern) on one field: a value can rarely satisfy both,
/// and the issue could only name one of them.
fn check_formats(cx: &Ctxt, field: &Field) {
    let rules = &field.attrs.rules;
    let mut formats = rules
        .iter()
        .filter(|r| matches!(r.attr.takes, Takes::Format(_)));
    if let Some(first) = formats.next() {
        for other in formats {
            err(
                cx,
                other.key,
                format_args!(
                    "`#[fusion({})]` cannot be combined with `{}`",
                    first.attr.name, other.attr.name
                ),
            );
        }
        for regex in rules.iter().filter(|r| r.attr.takes == Takes::Regex) {
            err(
                cx,
                regex.key,
                format_args!(
                    "`#[fusion({})]` cannot be combined with `{}`",
                    first.attr.name, regex.attr.name
                ),
            );
        }
    }
}

/// The pattern is read now as the engine that checks it at run time reads it: `jsonschema`
/// takes `pattern` as an ECMA-262 regex and translates it (`jsonschema-regex`) for its engine,
/// `fancy-regex`, which hands everything but look-around and back-references to the `regex`
/// crate's parser (`regex-syntax`). A pattern whose translation fails, or that has neither of
/// those and that parser rejects, fails the build at the literal instead of every call, with
/// the parser's words. One with look-around or back-references is left to the run-time
/// engine's own parser: building `fancy-regex` into the macro would build it, and the whole
/// `regex-automata` under it, a second time for the host (a proc-macro's dependencies are),
/// for every server's first build.
fn check_pattern(cx: &Ctxt, field: &Field) {
    for rule in &field.attrs.rules {
        let RuleValue::Regex(lit) = &rule.value else {
            continue;
        };
        let pattern = lit.value();
        if accepted(&pattern) {
            continue;
        }
        let msg = match regex_syntax::Parser::new().parse(&pattern) {
            Err(e) => e.to_string(),
            Ok(_) => format!(
                "the run-time validator (jsonschema) reads `{}` as an ECMA-262 regex, and this is not one",
                rule.attr.name
            ),
        };
        err(
            cx,
            lit.span(),
            format_args!("invalid regex in `{}`:\n{msg}", rule.attr.name),
        );
    }
}

/// Whether `pattern` reads as `jsonschema` reads it: its translation succeeds, and then
/// `regex-syntax` parses it unless it has look-around or back-references.
fn accepted(pattern: &str) -> bool {
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        return false;
    };
    fancy(&translated) || regex_syntax::Parser::new().parse(&translated).is_ok()
}

/// Whether a translated pattern has what only `fancy-regex` parses: look-around
/// (`(?=`, `(?!`, `(?<=`, `(?<!`) or a back-reference (`\1`..`\9`, `\k<name>`).
fn fancy(translated: &str) -> bool {
    let look_around = ["(?=", "(?!", "(?<=", "(?<!"]
        .iter()
        .any(|open| translated.contains(open));
    let back_reference = translated
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'\\' && (w[1].is_ascii_digit() && w[1] != b'0' || w[1] == b'k'));
    look_around || back_reference
}

#[cfg(test)]
mod tests {
    use super::accepted;

    #[test]
    fn patterns_read_as_the_validator_reads_them() {
        for ok in [
            "^inv_[0-9]{4}_[0-9]{4}$",
            "^\\d+$",
            "^(?=.*[a-z])(?=.*[0-9]).{8,}$",
            "^(a)\\1$",
            "(?<!x)y",
        ] {
            assert!(accepted(ok), "{ok}");
        }
        for bad in ["^inv_[0-9{4}$", "(unclosed", "a{2,1}", "[z-a]"] {
            assert!(!accepted(bad), "{bad}");
        }
    }
}
