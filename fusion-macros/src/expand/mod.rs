pub mod elicit;
pub mod fallback;
pub mod icon;
pub mod prompt;
pub mod resource;
pub mod tool_action;
pub mod tool_input;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

/// A path as written, without spaces (`a::b`): how error messages name a key.
pub(crate) fn path_str(path: &syn::Path) -> String {
    quote!(#path).to_string().replace(' ', "")
}

/// Fills `slot` with `value` once: a second `attr` key of the same name is an error.
pub(crate) fn set<T>(
    slot: &mut Option<T>,
    value: T,
    meta: &syn::meta::ParseNestedMeta,
    attr: &str,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format_args!(
            "duplicate `{attr}` key `{}`",
            path_str(&meta.path)
        )));
    }
    *slot = Some(value);
    Ok(())
}

/// An attribute's arguments, read key by key.
pub trait AttrArgs: Default {
    /// Reads one `key = value` (or flag) of the attribute.
    fn parse(&mut self, meta: syn::meta::ParseNestedMeta) -> syn::Result<()>;
}

/// The entry of an attribute macro on an `async fn` (`#[name(args)]`): the function (else the
/// unchanged tokens and one error saying where the attribute goes), the arguments read by `A`
/// with their errors collected, then `expand`. Never panics.
pub fn on_async_fn<A: AttrArgs>(
    name: &str,
    args: TokenStream,
    item: TokenStream,
    expand: fn(A, ItemFn, Vec<syn::Error>) -> TokenStream,
) -> TokenStream {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(e) => {
            let e = syn::Error::new(e.span(), format!("`#[{name}]` goes on an `async fn`"))
                .to_compile_error();
            return quote!(#item #e);
        }
    };
    let mut parsed = A::default();
    let parser = syn::meta::parser(|meta| parsed.parse(meta));
    let mut errors = Vec::new();
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        errors.push(e);
    }
    expand(parsed, function, errors)
}
