use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, Meta};

use crate::symbol::DOC;

/// The `#[doc = ..]` attributes as one `concat!(..)` expression, lines joined by `\n`, so
/// `#[doc = include_str!(..)]` keeps working. `None` without doc comments.
pub fn doc_expr(attrs: &[Attribute]) -> Option<TokenStream> {
    let parts: Vec<&Expr> = attrs
        .iter()
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) if nv.path == DOC => Some(&nv.value),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    let mut tokens = Vec::with_capacity(parts.len() * 2);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            tokens.push(quote!("\n"));
        }
        tokens.push(quote!(#p));
    }
    Some(quote!(::core::concat!(#(#tokens),*)))
}
