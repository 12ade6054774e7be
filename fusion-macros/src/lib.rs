//! Procedural macros for Fusion. Use them through `fusion_runtime`, which re-exports them.
#![deny(missing_docs)]

// `#[derive(ToolInput)]` (issue 3)
mod ast;
mod attr;
mod check;
mod ctxt;
mod doc;
mod expand;
mod rules;
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

// `#[prompt]`, `#[derive(PromptArguments)]`, `#[resource]` (issue 18)
/// Turns an `async fn` into a prompt; documented on its re-export in `fusion_runtime`.
#[proc_macro_attribute]
pub fn prompt(
    args: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand::prompt::attribute(args.into(), item.into()).into()
}

/// Derives `fusion_runtime::prompt::PromptArguments`; documented on its re-export.
#[proc_macro_derive(PromptArguments)]
pub fn derive_prompt_arguments(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::prompt::derive(&input).into()
}

/// Derives `fusion_runtime::context::Elicitable`; documented on its re-export.
#[proc_macro_derive(Elicitable)]
pub fn derive_elicitable(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::elicit::derive(&input).into()
}

/// Turns an `async fn` into a resource; documented on its re-export in `fusion_runtime`.
#[proc_macro_attribute]
pub fn resource(
    args: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand::resource::attribute(args.into(), item.into()).into()
}
