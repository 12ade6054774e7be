//! Procedural macros for Fusion. Use them through `fusion_runtime`, which re-exports them.

use proc_macro::TokenStream;

mod expand;

/// Turns an `async fn` into an action; see `fusion_runtime::tool_action` for the reference.
#[proc_macro_attribute]
pub fn tool_action(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool_action::attribute(args.into(), item.into()).into()
}
