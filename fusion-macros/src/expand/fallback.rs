use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

/// A stub impl emitted next to `compile_error!`, so uses of the type do not add errors of
/// their own (thiserror's fallback).
pub fn expand(input: &DeriveInput, error: syn::Error) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let error = error.to_compile_error();
    quote! {
        #error
        #[allow(unused_qualifications)]
        #[automatically_derived]
        impl #impl_generics ::fusion_runtime::ToolInput for #ident #ty_generics #where_clause {
            fn input_schema() -> ::std::sync::Arc<::fusion_runtime::JsonObject> {
                ::core::unreachable!()
            }
            fn from_arguments(
                _: &::fusion_runtime::__private::serde_json::Value,
            ) -> ::core::result::Result<Self, ::fusion_runtime::ValidationReport> {
                ::core::unreachable!()
            }
        }
    }
}
