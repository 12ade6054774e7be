//! The validation attributes of `#[derive(ToolInput)]`, one row each: the attribute's name,
//! the value it takes, the fields it applies to and the runtime rule it writes. The parse
//! (`attr.rs`), the misuse checks (`check.rs`) and the expansion (`expand/tool_input.rs`) read
//! this table and nothing else about a rule; they tell rules apart by the kind of value
//! ([`Takes`]) only. A new rule is one row here (plus its file in
//! `fusion_runtime::validation::rules`); a genuinely new kind of value is a [`Takes`] variant,
//! with its parse, its checks and its arguments.

/// One validation attribute.
pub struct RuleAttr {
    /// Its name: `#[fusion(multiple_of = 5)]`.
    pub name: &'static str,
    /// The value it takes.
    pub takes: Takes,
    /// The fields it applies to (a type the syntax does not name is trusted).
    pub on: On,
    /// Said after the misuse error on a field of another type: what to use there instead.
    pub instead: &'static str,
    /// The rule it writes: its module in `fusion_runtime::validation::rules`, whose
    /// `keywords(args, schema)` the field's spec calls and whose `check(value, args)` its
    /// typed check calls, with the value's arguments.
    pub rule: &'static str,
}

/// The value an attribute takes, and so the arguments it gives its rule.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// `min`, `max` or both, counts: `length(min = 1, max = 64)`; `(min, max)`, each an
    /// `Option<u64>`.
    Counts,
    /// Number bounds, inclusive or not: `range(min = 1, exclusive_max = 10)`; `(min, max,
    /// exclusive_min, exclusive_max)`, each an `Option<Num>`.
    Bounds,
    /// A number greater than 0: `multiple_of = 5`; a `Num`.
    Positive,
    /// An ECMA-262 regex, read at compile time as the validator reads it: `pattern = ".."`;
    /// the `&'static str` to its keywords, compiled once (a `static`) for its check.
    Regex,
    /// Nothing: a flag naming a string format, `email`; the runtime's `Format` variant named.
    /// A field takes one format, and a format excludes a [`Takes::Regex`].
    Format(&'static str),
}

/// The fields an attribute applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum On {
    Strings,
    Numbers,
    Arrays,
}

impl On {
    /// The fields, in the misuse error: `` `range` is only supported on numeric fields ``.
    pub fn words(self) -> &'static str {
        match self {
            On::Strings => "string fields",
            On::Numbers => "numeric fields",
            On::Arrays => "array fields",
        }
    }
}

const fn row(
    name: &'static str,
    takes: Takes,
    on: On,
    instead: &'static str,
    rule: &'static str,
) -> RuleAttr {
    RuleAttr {
        name,
        takes,
        on,
        instead,
        rule,
    }
}

const fn format(name: &'static str, variant: &'static str) -> RuleAttr {
    row(name, Takes::Format(variant), On::Strings, "", "format")
}

/// Every validation attribute, in the order the derive writes their keywords and checks.
#[rustfmt::skip]
pub const RULES: &[RuleAttr] = &[
    row("length", Takes::Counts, On::Strings, "; use `range` for numbers or `items` for arrays", "length"),
    row("range", Takes::Bounds, On::Numbers, "; use `length` for strings or `items` for arrays", "range"),
    row("items", Takes::Counts, On::Arrays, "", "items"),
    format("email", "Email"),
    format("url", "Url"),
    format("uuid", "Uuid"),
    format("date_time", "DateTime"),
    format("date", "Date"),
    format("ipv4", "Ipv4"),
    format("ipv6", "Ipv6"),
    row("pattern", Takes::Regex, On::Strings, "", "pattern"),
    row("multiple_of", Takes::Positive, On::Numbers, "", "multiple_of"),
];

/// The row of an attribute named `path`, if it is a validation attribute.
pub fn find(path: &syn::Path) -> Option<&'static RuleAttr> {
    RULES.iter().find(|r| path.is_ident(r.name))
}
