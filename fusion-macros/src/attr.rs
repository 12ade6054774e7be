//! `#[fusion(..)]` and the `#[serde(..)]` keys that change the JSON shape, parsed into
//! rules as data. Every bad key is reported; parsing goes on with what was understood.

use proc_macro2::Span;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitFloat, LitInt, LitStr, Token};

use crate::ctxt::Ctxt;
use crate::rules::{self, RuleAttr, Takes};
use crate::symbol::*;

/// A slot for one attribute: a second occurrence is a "duplicate" error at its key.
pub struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: Symbol,
    value: Option<T>,
}

impl<'c, T> Attr<'c, T> {
    fn none(cx: &'c Ctxt, name: Symbol) -> Self {
        Attr {
            cx,
            name,
            value: None,
        }
    }

    fn set<A: ToTokens>(&mut self, obj: A, value: T) {
        if self.value.is_some() {
            self.cx.error_spanned_by(
                obj,
                format_args!("duplicate fusion attribute `{}`", self.name),
            );
        } else {
            self.value = Some(value);
        }
    }

    fn get(self) -> Option<T> {
        self.value
    }
}

/// A number written in an attribute, with the tokens to point at.
#[derive(Clone)]
pub struct NumLit {
    pub value: f64,
    pub is_int: bool,
    pub int: i64,
    pub span: Span,
}

/// A count (`length`, `items`), with the tokens to point at.
#[derive(Clone, Copy)]
pub struct Count {
    pub value: u64,
    pub span: Span,
}

/// An attribute's value and the key it was written with (for errors pointing at it).
pub struct Keyed<T> {
    pub key: Span,
    pub value: T,
}

/// A validation attribute on a field: its row, its key, its value.
pub struct RuleUse {
    pub attr: &'static RuleAttr,
    pub key: Span,
    pub value: RuleValue,
}

/// A validation attribute's value, by the kind its row takes.
pub enum RuleValue {
    Counts(Bounds<Count>),
    Bounds(RangeBounds),
    Number(NumLit),
    Regex(LitStr),
    /// A format flag: the runtime's `Format` variant it names.
    Format(&'static str),
}

pub struct Bounds<B> {
    pub min: Option<B>,
    pub max: Option<B>,
}

pub struct RangeBounds {
    pub min: Option<NumLit>,
    pub max: Option<NumLit>,
    pub exclusive_min: Option<NumLit>,
    pub exclusive_max: Option<NumLit>,
}

/// `#[fusion(..)]` on a field.
#[derive(Default)]
pub struct FieldAttrs {
    /// The validation attributes, as written (at most one of each).
    pub rules: Vec<RuleUse>,
    pub expected: Option<LitStr>,
    pub description: Option<LitStr>,
    pub validate: Option<syn::Path>,
    pub deprecated: Option<Keyed<LitStr>>,
}

/// `#[fusion(..)]` on the struct.
#[derive(Default)]
pub struct ContainerAttrs {
    pub allow_unknown_fields: bool,
    pub description: Option<LitStr>,
}

/// The serde keys of a field that matter to the JSON shape.
#[derive(Default)]
pub struct SerdeField {
    pub rename: Option<String>,
    pub default: bool,
    pub skip_deserializing: bool,
}

/// The serde keys of the struct that matter to the JSON shape.
#[derive(Default)]
pub struct SerdeContainer {
    /// `rename = ".."`, or the `deserialize` name of `rename(..)`: the schema's name.
    pub rename: Option<LitStr>,
    pub rename_all: Option<RenameRule>,
    pub default: bool,
}

fn fusion_attrs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|a| a.path() == FUSION)
}

fn serde_attrs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|a| a.path() == SERDE)
}

fn path_str(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

impl ContainerAttrs {
    pub fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut allow_unknown = Attr::none(cx, ALLOW_UNKNOWN_FIELDS);
        let mut description = Attr::none(cx, DESCRIPTION);
        for attr in fusion_attrs(attrs) {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path == ALLOW_UNKNOWN_FIELDS {
                    // #[fusion(allow_unknown_fields)]
                    allow_unknown.set(&meta.path, ());
                } else if meta.path == DESCRIPTION {
                    // #[fusion(description = "...")]
                    let s: LitStr = meta.value()?.parse()?;
                    description.set(&meta.path, s);
                } else if meta.path == DEPRECATED {
                    // #[fusion(deprecated = "...")] belongs on a field
                    cx.error_spanned_by(
                        &meta.path,
                        "`#[fusion(deprecated = \"..\")]` goes on a field; to deprecate the whole action, use `#[tool_action(deprecated = \"..\")]`",
                    );
                    skip_value(&meta)?;
                } else {
                    cx.error_spanned_by(
                        &meta.path,
                        format_args!(
                            "unknown fusion container attribute `{}`",
                            path_str(&meta.path)
                        ),
                    );
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
        ContainerAttrs {
            allow_unknown_fields: allow_unknown.get().is_some(),
            description: description.get(),
        }
    }
}

impl FieldAttrs {
    pub fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut used: Vec<RuleUse> = Vec::new();
        let mut expected = Attr::none(cx, EXPECTED);
        let mut description = Attr::none(cx, DESCRIPTION);
        let mut validate = Attr::none(cx, VALIDATE);
        let mut deprecated = Attr::none(cx, DEPRECATED);
        for attr in fusion_attrs(attrs) {
            let result = attr.parse_nested_meta(|meta| {
                if let Some(row) = rules::find(&meta.path) {
                    // #[fusion(length(min = 1))], #[fusion(email)], #[fusion(multiple_of = 5)], ..
                    let value = parse_rule_value(cx, &meta, row)?;
                    if used.iter().any(|r| r.attr.name == row.name) {
                        cx.error_spanned_by(
                            &meta.path,
                            format_args!("duplicate fusion attribute `{}`", row.name),
                        );
                    } else {
                        used.push(RuleUse {
                            attr: row,
                            key: meta.path.span(),
                            value,
                        });
                    }
                } else if meta.path == EXPECTED {
                    // #[fusion(expected = "an invoice ID like inv_2026_0001")]
                    let s: LitStr = meta.value()?.parse()?;
                    expected.set(&meta.path, s);
                } else if meta.path == DESCRIPTION {
                    // #[fusion(description = "...")]
                    let s: LitStr = meta.value()?.parse()?;
                    description.set(&meta.path, s);
                } else if meta.path == VALIDATE {
                    // #[fusion(validate = path::to_fn)]
                    let p: syn::Path = meta.value()?.parse()?;
                    validate.set(&meta.path, p);
                } else if meta.path == DEPRECATED {
                    // #[fusion(deprecated = "use `due_date`")]
                    let note = parse_note(&meta)?;
                    deprecated.set(
                        &meta.path,
                        Keyed {
                            key: meta.path.span(),
                            value: note,
                        },
                    );
                } else {
                    cx.error_spanned_by(
                        &meta.path,
                        format_args!("unknown fusion field attribute `{}`", path_str(&meta.path)),
                    );
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
        FieldAttrs {
            rules: used,
            expected: expected.get(),
            description: description.get(),
            validate: validate.get(),
            deprecated: deprecated.get(),
        }
    }
}

/// The value of a validation attribute, by the kind its row takes.
fn parse_rule_value(cx: &Ctxt, meta: &ParseNestedMeta, row: &RuleAttr) -> syn::Result<RuleValue> {
    Ok(match row.takes {
        // length(min = 1, max = 64)
        Takes::Counts => RuleValue::Counts(parse_counts(cx, meta, Symbol(row.name))?),
        // range(min = 1, max = 10), range(exclusive_min = 0)
        Takes::Bounds => RuleValue::Bounds(parse_range(cx, meta)?),
        // multiple_of = 5
        Takes::Positive => RuleValue::Number(parse_num(meta)?),
        // pattern = "^inv_[0-9]{4}$"
        Takes::Regex => RuleValue::Regex(meta.value()?.parse()?),
        // email
        Takes::Format(variant) => RuleValue::Format(variant),
    })
}

/// The note of `deprecated = ".."`: a non-empty string saying what to use instead, which the
/// model reads in the schema and in the warning.
fn parse_note(meta: &ParseNestedMeta) -> syn::Result<LitStr> {
    const SYNTAX: &str =
        "`deprecated` needs a note saying what to use instead: `deprecated = \"use `due_date`\"`";
    if !meta.input.peek(Token![=]) {
        return Err(syn::Error::new(meta.path.span(), SYNTAX));
    }
    let value = meta.value()?;
    let note: LitStr = value
        .parse()
        .map_err(|e| syn::Error::new(e.span(), SYNTAX))?;
    if note.value().trim().is_empty() {
        return Err(syn::Error::new(note.span(), SYNTAX));
    }
    Ok(note)
}

fn parse_counts(cx: &Ctxt, meta: &ParseNestedMeta, key: Symbol) -> syn::Result<Bounds<Count>> {
    let mut min = Attr::none(cx, MIN);
    let mut max = Attr::none(cx, MAX);
    meta.parse_nested_meta(|inner| {
        if inner.path == MIN {
            // min = 1
            let n = parse_count(&inner)?;
            min.set(&inner.path, n);
        } else if inner.path == MAX {
            // max = 64
            let n = parse_count(&inner)?;
            max.set(&inner.path, n);
        } else {
            return Err(inner.error(format_args!(
                "unknown key `{}` in `{key}`, expected `min` or `max`",
                path_str(&inner.path)
            )));
        }
        Ok(())
    })?;
    let b = Bounds {
        min: min.get(),
        max: max.get(),
    };
    if b.min.is_none() && b.max.is_none() {
        cx.error_spanned_by(
            &meta.path,
            format_args!("`{key}` needs `min`, `max` or both, e.g. `{key}(min = 1, max = 64)`"),
        );
    }
    Ok(b)
}

fn parse_count(meta: &ParseNestedMeta) -> syn::Result<Count> {
    let input = meta.value()?;
    if input.peek(Token![-]) {
        let minus: Token![-] = input.parse()?;
        return Err(syn::Error::new(
            minus.span,
            "expected a count (a non-negative integer)",
        ));
    }
    let lit: LitInt = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), "expected a count (a non-negative integer)"))?;
    let value = lit.base10_parse::<u64>()?;
    Ok(Count {
        value,
        span: lit.span(),
    })
}

fn parse_num(meta: &ParseNestedMeta) -> syn::Result<NumLit> {
    let input = meta.value()?;
    let neg = if input.peek(Token![-]) {
        input.parse::<Token![-]>()?;
        true
    } else {
        false
    };
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        let v = lit.base10_parse::<i64>()?;
        let int = if neg { -v } else { v };
        Ok(NumLit {
            value: int as f64,
            is_int: true,
            int,
            span: lit.span(),
        })
    } else if input.peek(LitFloat) {
        let lit: LitFloat = input.parse()?;
        let v = lit.base10_parse::<f64>()?;
        Ok(NumLit {
            value: if neg { -v } else { v },
            is_int: false,
            int: 0,
            span: lit.span(),
        })
    } else {
        Err(input.error("expected a number literal"))
    }
}

fn parse_range(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<RangeBounds> {
    let mut min = Attr::none(cx, MIN);
    let mut max = Attr::none(cx, MAX);
    let mut emin = Attr::none(cx, EXCLUSIVE_MIN);
    let mut emax = Attr::none(cx, EXCLUSIVE_MAX);
    meta.parse_nested_meta(|inner| {
        if inner.path == MIN {
            // min = 1 (inclusive)
            min.set(&inner.path, parse_num(&inner)?);
        } else if inner.path == MAX {
            // max = 10 (inclusive)
            max.set(&inner.path, parse_num(&inner)?);
        } else if inner.path == EXCLUSIVE_MIN {
            // exclusive_min = 0
            emin.set(&inner.path, parse_num(&inner)?);
        } else if inner.path == EXCLUSIVE_MAX {
            // exclusive_max = 100
            emax.set(&inner.path, parse_num(&inner)?);
        } else {
            return Err(inner.error(format_args!(
                "unknown key `{}` in `range`, expected `min`, `max`, `exclusive_min` or `exclusive_max`",
                path_str(&inner.path)
            )));
        }
        Ok(())
    })?;
    let b = RangeBounds {
        min: min.get(),
        max: max.get(),
        exclusive_min: emin.get(),
        exclusive_max: emax.get(),
    };
    if b.min.is_none() && b.max.is_none() && b.exclusive_min.is_none() && b.exclusive_max.is_none()
    {
        cx.error_spanned_by(
            &meta.path,
            "`range` needs a bound, e.g. `range(min = 1, max = 10)` or `range(exclusive_min = 0)`",
        );
    }
    Ok(b)
}

/// serde's `rename_all` conventions.
#[derive(Clone, Copy)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    fn from_str(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// A snake_case field name under this rule (serde's `apply_to_field`).
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => pascal,
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

/// Consumes the value of a serde key we do not interpret (`= expr` or `(..)`).
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

fn unsupported_serde(cx: &Ctxt, meta: &ParseNestedMeta, why: &str) -> syn::Result<()> {
    cx.error_spanned_by(
        &meta.path,
        format_args!(
            "`#[serde({})]` is not supported by `#[derive(ToolInput)]`: {why}",
            path_str(&meta.path)
        ),
    );
    skip_value(meta)
}

impl SerdeContainer {
    pub fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = SerdeContainer::default();
        for attr in serde_attrs(attrs) {
            let result = attr.parse_nested_meta(|meta| {
                let key = path_str(&meta.path);
                match key.as_str() {
                    // #[serde(rename_all = "camelCase")]
                    "rename_all" => {
                        if meta.input.peek(Token![=]) {
                            let s: LitStr = meta.value()?.parse()?;
                            match RenameRule::from_str(&s.value()) {
                                Some(r) => out.rename_all = Some(r),
                                None => cx.error_spanned_by(&s, "unknown `rename_all` rule"),
                            }
                        } else {
                            // rename_all(deserialize = "..", serialize = "..")
                            meta.parse_nested_meta(|inner| {
                                if inner.path == DESERIALIZE {
                                    let s: LitStr = inner.value()?.parse()?;
                                    match RenameRule::from_str(&s.value()) {
                                        Some(r) => out.rename_all = Some(r),
                                        None => {
                                            cx.error_spanned_by(&s, "unknown `rename_all` rule")
                                        }
                                    }
                                    Ok(())
                                } else {
                                    skip_value(&inner)
                                }
                            })?;
                        }
                    }
                    // #[serde(default)], #[serde(default = "path")]
                    "default" => {
                        skip_value(&meta)?;
                        out.default = true;
                    }
                    "rename" => {
                        if meta.input.peek(Token![=]) {
                            // #[serde(rename = "name")]
                            out.rename = Some(meta.value()?.parse()?);
                        } else {
                            // #[serde(rename(deserialize = "name", serialize = "name"))]
                            meta.parse_nested_meta(|inner| {
                                if inner.path == DESERIALIZE {
                                    out.rename = Some(inner.value()?.parse()?);
                                    Ok(())
                                } else {
                                    skip_value(&inner)
                                }
                            })?;
                        }
                    }
                    // shape-neutral keys
                    "deny_unknown_fields" | "bound" | "crate" | "expecting" | "into"
                    | "remote" => skip_value(&meta)?,
                    "tag" | "content" | "untagged" => {
                        unsupported_serde(
                            cx,
                            &meta,
                            "an input is a plain JSON object of its fields",
                        )?;
                    }
                    "transparent" | "from" | "try_from" => {
                        unsupported_serde(
                            cx,
                            &meta,
                            "the schema is built from the struct's fields, so deserialization must read them as they are",
                        )?;
                    }
                    _ => skip_value(&meta)?,
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
        out
    }
}

impl SerdeField {
    pub fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = SerdeField::default();
        for attr in serde_attrs(attrs) {
            let result = attr.parse_nested_meta(|meta| {
                let key = path_str(&meta.path);
                match key.as_str() {
                    "rename" => {
                        if meta.input.peek(Token![=]) {
                            // #[serde(rename = "name")]
                            let s: LitStr = meta.value()?.parse()?;
                            out.rename = Some(s.value());
                        } else {
                            // #[serde(rename(deserialize = "name"))]
                            meta.parse_nested_meta(|inner| {
                                if inner.path == DESERIALIZE {
                                    let s: LitStr = inner.value()?.parse()?;
                                    out.rename = Some(s.value());
                                    Ok(())
                                } else if inner.path == SERIALIZE {
                                    skip_value(&inner)
                                } else {
                                    Err(inner.error("expected `deserialize` or `serialize`"))
                                }
                            })?;
                        }
                    }
                    // #[serde(default)], #[serde(default = "path")]
                    "default" => {
                        skip_value(&meta)?;
                        out.default = true;
                    }
                    // #[serde(skip)], #[serde(skip_deserializing)]
                    "skip" | "skip_deserializing" => out.skip_deserializing = true,
                    "skip_serializing" | "skip_serializing_if" | "serialize_with" | "getter"
                    | "bound" => skip_value(&meta)?,
                    "alias" => {
                        unsupported_serde(
                            cx,
                            &meta,
                            "the schema gives each field one name; use `rename` instead",
                        )?;
                    }
                    "flatten" => {
                        unsupported_serde(
                            cx,
                            &meta,
                            "nest the inner input as a field instead",
                        )?;
                    }
                    "with" | "deserialize_with" | "borrow" => {
                        unsupported_serde(
                            cx,
                            &meta,
                            "the schema would no longer describe what deserialization accepts; use a field type that implements `JsonSchema` and `Deserialize` instead",
                        )?;
                    }
                    _ => skip_value(&meta)?,
                }
                Ok(())
            });
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
        out
    }
}
