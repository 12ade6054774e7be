//! The input struct as the derive sees it: fields with their JSON names, types and rules.

use syn::{Data, DeriveInput, Fields, GenericArgument, LitStr, PathArguments, Type};

use crate::attr::{ContainerAttrs, FieldAttrs, SerdeContainer, SerdeField};
use crate::ctxt::Ctxt;

pub struct Container<'a> {
    pub original: &'a DeriveInput,
    pub attrs: ContainerAttrs,
    /// The container's serde `rename` (deserialize side): the schema's name in `$defs`.
    /// `rename_all` applies to the fields only.
    pub rename: Option<LitStr>,
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    pub original: &'a syn::Field,
    pub ident: &'a syn::Ident,
    /// The JSON key, after serde's `rename` / `rename_all`.
    pub name: String,
    pub attrs: FieldAttrs,
    /// Left out of the JSON by `#[serde(skip)]` / `skip_deserializing`.
    pub skipped: bool,
    /// May be absent: an `Option`, or a serde default.
    pub optional: bool,
    /// The type is `Option<T>`: validators receive `&T`, and run only on `Some`.
    pub is_option: bool,
    /// A serde default fills the field when absent (on the field or the struct).
    pub serde_default: bool,
    pub class: TypeClass,
}

/// What JSON a field's type takes, as far as its syntax tells (`Option` peeled off).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TypeClass {
    String,
    Integer,
    Float,
    Array,
    Bool,
    Other,
}

impl TypeClass {
    pub fn words(self) -> &'static str {
        match self {
            TypeClass::String => "a string",
            TypeClass::Integer => "an integer",
            TypeClass::Float => "a number",
            TypeClass::Array => "an array",
            TypeClass::Bool => "a boolean",
            TypeClass::Other => "this type",
        }
    }
}

impl<'a> Container<'a> {
    /// `None` (with the error recorded) when the input is not a struct with named fields.
    pub fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Option<Container<'a>> {
        let attrs = ContainerAttrs::from_ast(cx, &input.attrs);
        let serde = SerdeContainer::from_ast(cx, &input.attrs);
        if input.generics.lt_token.is_some() {
            cx.error_spanned_by(
                &input.generics,
                "`#[derive(ToolInput)]` does not support generic parameters",
            );
        }
        let named = match &input.data {
            Data::Struct(s) => match &s.fields {
                Fields::Named(named) => named,
                Fields::Unnamed(unnamed) => {
                    cx.error_spanned_by(
                        unnamed,
                        "`#[derive(ToolInput)]` needs named fields: a tool's arguments are a JSON object",
                    );
                    return None;
                }
                Fields::Unit => {
                    cx.error_spanned_by(
                        &input.ident,
                        "`#[derive(ToolInput)]` needs named fields: add `{}` for an input without arguments",
                    );
                    return None;
                }
            },
            Data::Enum(e) => {
                cx.syn_error(syn::Error::new(
                    e.enum_token.span,
                    "`#[derive(ToolInput)]` supports structs with named fields; for a string enum field, derive `Deserialize` and `JsonSchema` on the enum",
                ));
                return None;
            }
            Data::Union(u) => {
                cx.syn_error(syn::Error::new(
                    u.union_token.span,
                    "`#[derive(ToolInput)]` supports structs with named fields",
                ));
                return None;
            }
        };
        let fields = named
            .named
            .iter()
            .filter_map(|f| {
                let ident = f.ident.as_ref()?;
                let sf = SerdeField::from_ast(cx, &f.attrs);
                let raw = ident.to_string();
                let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_owned();
                let name = match (sf.rename, serde.rename_all) {
                    (Some(n), _) => n,
                    (None, Some(rule)) => rule.apply_to_field(&raw),
                    (None, None) => raw,
                };
                let (is_option, inner) = peel_option(&f.ty);
                Some(Field {
                    original: f,
                    ident,
                    name,
                    attrs: FieldAttrs::from_ast(cx, &f.attrs),
                    skipped: sf.skip_deserializing,
                    optional: is_option || sf.default || serde.default,
                    is_option,
                    serde_default: sf.default || serde.default,
                    class: classify(inner),
                })
            })
            .collect();
        Some(Container {
            original: input,
            attrs,
            rename: serde.rename,
            fields,
        })
    }
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    }
}

/// `(true, T)` for `Option<T>`.
fn peel_option(ty: &Type) -> (bool, &Type) {
    if let Some(seg) = last_segment(ty)
        && seg.ident == "Option"
        && let PathArguments::AngleBracketed(args) = &seg.arguments
        && let Some(GenericArgument::Type(inner)) = args.args.first()
    {
        return (true, inner);
    }
    (false, ty)
}

fn classify(ty: &Type) -> TypeClass {
    match ty {
        Type::Array(_) | Type::Slice(_) => return TypeClass::Array,
        Type::Reference(r) => return classify(&r.elem),
        Type::Paren(p) => return classify(&p.elem),
        Type::Group(g) => return classify(&g.elem),
        _ => {}
    }
    let Some(seg) = last_segment(ty) else {
        return TypeClass::Other;
    };
    match seg.ident.to_string().as_str() {
        "String" | "str" => TypeClass::String,
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => TypeClass::Integer,
        "f32" | "f64" => TypeClass::Float,
        "bool" => TypeClass::Bool,
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "LinkedList" => TypeClass::Array,
        "Box" => match &seg.arguments {
            PathArguments::AngleBracketed(args) => match args.args.first() {
                Some(GenericArgument::Type(inner)) => classify(inner),
                _ => TypeClass::Other,
            },
            _ => TypeClass::Other,
        },
        _ => TypeClass::Other,
    }
}
