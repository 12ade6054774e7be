//! Procedural macros for Fusion. Use them through `fusion_runtime`, which re-exports them.

// `#[derive(ToolInput)]` (issue 3)
mod ast;
mod attr;
mod check;
mod ctxt;
mod doc;
mod expand;
mod symbol;

/// Derives `fusion_runtime::ToolInput`; documented on its re-export in `fusion_runtime`.
#[proc_macro_derive(ToolInput, attributes(fusion))]
pub fn derive_tool_input(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::tool_input::derive(&input).into()
}

// `#[tool_action]` (issue 4)
/// Turns an `async fn` into an action; documented on its re-export in `fusion_runtime`.
#[proc_macro_attribute]
pub fn tool_action(
    args: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand::tool_action::attribute(args.into(), item.into()).into()
}
