//! `#[derive(Elicitable)]`: a form MCP elicitation can show is a flat object; one type check
//! per field refuses a nested object, a list of objects or a map at compile time.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::prompt::{named_fields, serde_skipped};

/// The marker impl and one probe per field.
pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let fields = match named_fields(input, "Elicitable", "one form field") {
        Ok(fields) => fields,
        Err(e) => return e,
    };
    let checks = fields.iter().filter(|f| !serde_skipped(f)).map(|f| {
        let ty = &f.ty;
        quote_spanned! {ty.span()=>
            let _: ::fusion_runtime::context::__private::ElicitFieldOk =
                (&&::fusion_runtime::context::__private::ElicitProbe::<#ty>::new()).elicit_shape();
        }
    });
    quote! {
        const _: () = {
            #[automatically_derived]
            impl ::fusion_runtime::context::Elicitable for #ident {}

            #[allow(dead_code, clippy::no_effect_underscore_binding)]
            fn __fusion_elicit_fields() {
                #[allow(unused_imports)]
                use ::fusion_runtime::context::__private::{ProbeFlat as _, ProbeNestedObject as _};
                #( #checks )*
            }
        };
    }
}
