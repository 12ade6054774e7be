//! `#[prompt]`: leaves the `async fn` as written and emits its companion struct
//! (`PaymentReminderPrompt` for `fn payment_reminder`) implementing
//! `::fusion_runtime::PromptAction`; and `#[derive(PromptArguments)]`, which checks at compile
//! time that every field is something MCP can carry as a prompt argument (a string).
//!
//! The signature and attribute helpers here are shared with `#[resource]`.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, ItemFn, LitStr, Path, ReturnType, Type};

use super::{path_str, set};

/// `complete(argument = path::to_fn, ..)`: the argument names, as written, with their
/// completers.
pub(crate) fn parse_completers(
    meta: &syn::meta::ParseNestedMeta,
    out: &mut Vec<(String, Path)>,
) -> syn::Result<()> {
    meta.parse_nested_meta(|inner| {
        // complete(invoice_id = complete_invoice_ids)
        let Some(ident) = inner.path.get_ident() else {
            return Err(inner.error("write `complete(argument = path::to_fn)`"));
        };
        let name = ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
        if out.iter().any(|(n, _)| *n == name) {
            return Err(inner.error(format_args!("duplicate completer for `{name}`")));
        }
        let path: Path = inner.value()?.parse()?;
        out.push((name, path));
        Ok(())
    })
}

/// The `completer` and `completed_*` items of a companion impl.
pub(crate) fn completer_items(completers: &[(String, Path)], list_fn: &str) -> TokenStream {
    if completers.is_empty() {
        return quote!();
    }
    let list_fn = format_ident!("{}", list_fn);
    let names: Vec<&String> = completers.iter().map(|(n, _)| n).collect();
    let arms = completers.iter().map(|(name, path)| {
        quote_spanned! {path.span()=>
            #name => ::core::option::Option::Some(
                |__fusion_r, __fusion_c| ::fusion_runtime::completion::CompleterFn::run(#path, __fusion_r, __fusion_c)
            ),
        }
    });
    quote! {
        fn completer(__fusion_argument: &str) -> ::core::option::Option<::fusion_runtime::completion::Completer> {
            match __fusion_argument {
                #( #arms )*
                _ => ::core::option::Option::None,
            }
        }

        fn #list_fn() -> &'static [&'static str] {
            &[#( #names ),*]
        }
    }
}

pub(crate) fn pascal(ident: &Ident) -> String {
    let s = ident.to_string();
    let s = s.strip_prefix("r#").unwrap_or(&s);
    s.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(f) => f.to_uppercase().chain(c).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

pub(crate) struct Signature<'a> {
    pub params: Vec<&'a Type>,
    pub output: Option<&'a Type>,
}

/// Checks an `async fn` for `#[prompt]` / `#[resource]`: free, not generic, at most
/// `max_params` parameters, with a return type.
pub(crate) fn check_signature<'a>(
    item: &'a ItemFn,
    attr: &str,
    max_params: usize,
    params_usage: &str,
    errors: &mut Vec<syn::Error>,
) -> Signature<'a> {
    let sig = &item.sig;
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span,
            format_args!("`#[{attr}]` requires an `async fn`"),
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            format_args!("`#[{attr}]` functions cannot be generic"),
        ));
    }
    let mut params = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => errors.push(syn::Error::new_spanned(
                r,
                format_args!(
                    "`#[{attr}]` cannot take `self`: write a free function and reach shared state through `Context<S>`"
                ),
            )),
            FnArg::Typed(t) => params.push(&*t.ty),
        }
    }
    for extra in params.iter().skip(max_params) {
        errors.push(syn::Error::new_spanned(
            extra,
            format_args!("`#[{attr}]` takes at most {max_params} parameters: {params_usage}"),
        ));
    }
    params.truncate(max_params);
    let output = match &sig.output {
        ReturnType::Type(_, ty) => Some(&**ty),
        ReturnType::Default => {
            errors.push(syn::Error::new(
                sig.ident.span(),
                format_args!("`#[{attr}]` functions return `Result<T, E>`: add a return type"),
            ));
            None
        }
    };
    Signature { params, output }
}

pub(crate) fn description(explicit: &Option<LitStr>, item: &ItemFn) -> Option<TokenStream> {
    if let Some(d) = explicit {
        return Some(quote!(#d));
    }
    let docs: Vec<&Expr> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        })
        .collect();
    if docs.is_empty() {
        return None;
    }
    let parts = docs
        .iter()
        .enumerate()
        .map(|(i, d)| if i == 0 { quote!(#d) } else { quote!("\n", #d) });
    Some(quote!(::core::concat!(#(#parts),*)))
}

pub(crate) fn opt_str(s: &Option<LitStr>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// The context parameter: its state requirement, the statement that builds it (returning
/// `fails_now` on error) and the name to pass.
pub(crate) fn context(ctx: Option<&Type>, fails_now: TokenStream) -> (TokenStream, TokenStream) {
    match ctx {
        Some(ctx) => {
            let ctx_ty = quote_spanned!(ctx.span()=> #ctx);
            (
                quote!(<#ctx_ty as ::fusion_runtime::__private::FromCallContext>::requirement()),
                quote! {
                    let __fusion_context = match <#ctx_ty as ::fusion_runtime::__private::FromCallContext>::from_call_context(__fusion_cx) {
                        ::core::result::Result::Ok(__fusion_c) => __fusion_c,
                        ::core::result::Result::Err(__fusion_e) => return #fails_now(__fusion_e),
                    };
                },
            )
        }
        None => (quote!(::core::option::Option::None), quote!()),
    }
}

pub(crate) fn combine(mut errors: Vec<syn::Error>) -> Option<TokenStream> {
    if errors.is_empty() {
        return None;
    }
    let mut combined = errors.remove(0);
    for e in errors {
        combined.combine(e);
    }
    Some(combined.to_compile_error())
}

/// The arguments of `#[prompt(..)]`, as written.
#[derive(Default)]
struct Args {
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    completers: Vec<(String, Path)>,
    icons: Vec<super::icon::Icon>,
}

impl super::AttrArgs for Args {
    fn parse(&mut self, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
        if meta.path.is_ident("name") {
            // #[prompt(name = "billing.payment_reminder")]
            let lit: LitStr = meta.value()?.parse()?;
            check_name(&lit)?;
            set(&mut self.name, lit, &meta, "prompt")
        } else if meta.path.is_ident("title") {
            // #[prompt(title = "Payment reminder")]
            let lit = meta.value()?.parse()?;
            set(&mut self.title, lit, &meta, "prompt")
        } else if meta.path.is_ident("description") {
            // #[prompt(description = "…")]
            let lit = meta.value()?.parse()?;
            set(&mut self.description, lit, &meta, "prompt")
        } else if meta.path.is_ident("complete") {
            // #[prompt(complete(invoice_id = complete_invoice_ids))]
            parse_completers(&meta, &mut self.completers)
        } else if meta.path.is_ident("icon") {
            // #[prompt(icon = "https://example.com/reminder.png")], repeatable; or `icon(..)`
            self.icons.push(super::icon::parse(&meta, "prompt")?);
            Ok(())
        } else {
            Err(meta.error(format_args!(
                "unknown `prompt` key `{}`; expected one of `name`, `title`, `description`, `complete`, `icon`",
                path_str(&meta.path)
            )))
        }
    }
}

/// Prompt names follow action names: clients see them with the server's separator.
fn check_name(lit: &LitStr) -> syn::Result<()> {
    let name = lit.value();
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..");
    if ok {
        Ok(())
    } else {
        Err(syn::Error::new(
            lit.span(),
            "a prompt name is dot-separated segments of `A-Z a-z 0-9 _ -` (e.g. `billing.payment_reminder`)",
        ))
    }
}

/// The attribute: parses its arguments and the function, then expands. Never panics.
pub fn attribute(args: TokenStream, item: TokenStream) -> TokenStream {
    super::on_async_fn::<Args>("prompt", args, item, expand)
}

fn expand(args: Args, item: ItemFn, mut errors: Vec<syn::Error>) -> TokenStream {
    let sig = check_signature(
        &item,
        "prompt",
        2,
        "the arguments (a `PromptArguments` struct), then `Context<S>`",
        &mut errors,
    );
    let description = description(&args.description, &item);
    if description.is_none() {
        errors.push(syn::Error::new(
            item.sig.ident.span(),
            "`#[prompt]` needs a description: add a doc comment or `description = \"..\"`",
        ));
    }
    let fn_ident = &item.sig.ident;
    let vis = &item.vis;
    let companion = format_ident!("{}Prompt", pascal(fn_ident), span = fn_ident.span());
    let name = match &args.name {
        Some(n) => n.clone(),
        None => {
            let n = fn_ident.to_string();
            LitStr::new(n.strip_prefix("r#").unwrap_or(&n), fn_ident.span())
        }
    };
    let struct_doc = format!(
        "The `{}` prompt: `#[prompt]` generated this from `fn {fn_ident}`. Register it with `ServerBuilder::prompt::<{companion}>()`.",
        name.value()
    );
    let companion_struct = quote! {
        #[doc = #struct_doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #companion;
    };
    if let Some(compile_errors) = combine(errors) {
        return quote!(#item #companion_struct #compile_errors);
    }
    let (Some(output), Some(description)) = (sig.output, description) else {
        return quote!(#item);
    };
    let args_ty = match sig.params.first() {
        Some(t) => quote_spanned!(t.span()=> #t),
        None => quote!(::fusion_runtime::prompt::NoArguments),
    };
    let (state, context_arg) = context(
        sig.params.get(1).copied(),
        quote!(::fusion_runtime::prompt::__private::prompt_fails_now),
    );
    let call_args = match sig.params.len() {
        0 => quote!(),
        1 => quote!(__fusion_args),
        _ => quote!(__fusion_args, __fusion_context),
    };
    let ignore_args = if sig.params.is_empty() {
        quote!(let _ = __fusion_args;)
    } else {
        quote!()
    };
    let title = opt_str(&args.title);
    let ret = quote_spanned!(output.span()=> #output);
    let outcome = quote_spanned! {output.span()=>
        ::fusion_runtime::prompt::__private::prompt_outcome::<#ret>(#fn_ident(#call_args).await)
    };
    let completers = completer_items(&args.completers, "completed_arguments");
    let info = quote! {
        ::fusion_runtime::prompt::__private::prompt_info(
            Self::NAME,
            #title,
            #description,
            <#args_ty as ::fusion_runtime::ToolInput>::input_schema(),
            #state,
        )
    };
    let info = if args.icons.is_empty() {
        info
    } else {
        let icons = super::icon::tokens(&args.icons);
        quote!(::fusion_runtime::prompt::__private::prompt_with_icons(#info, #icons))
    };
    quote! {
        #item
        #companion_struct
        const _: () = {
            #[automatically_derived]
            #[allow(unused_qualifications)]
            impl ::fusion_runtime::prompt::PromptAction for #companion {
                const NAME: &'static str = #name;
                type Args = #args_ty;

                fn info() -> ::fusion_runtime::prompt::PromptInfo {
                    #info
                }

                fn get(
                    __fusion_args: Self::Args,
                    __fusion_cx: &::fusion_runtime::__private::CallContext,
                ) -> ::fusion_runtime::__private::BoxFuture<'static, ::fusion_runtime::prompt::PromptOutcome> {
                    #ignore_args
                    #context_arg
                    ::std::boxed::Box::pin(async move { #outcome })
                }

                #completers
            }
        };
    }
}

/// Whether a field's `#[serde(..)]` attributes take it out of deserialization.
pub(crate) fn serde_skipped(field: &syn::Field) -> bool {
    field
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .filter_map(|a| match &a.meta {
            syn::Meta::List(l) => Some(l.tokens.clone()),
            _ => None,
        })
        .any(|tokens| {
            tokens.into_iter().any(
                |t| matches!(&t, TokenTree::Ident(i) if i == "skip" || i == "skip_deserializing"),
            )
        })
}

/// The named fields a marker derive checks one by one, or the compile error for a type it
/// cannot derive on (not a struct with named fields, or generic). `each` says what one field
/// stands for.
pub(crate) fn named_fields<'a>(
    input: &'a syn::DeriveInput,
    derive: &str,
    each: &str,
) -> Result<&'a syn::punctuated::Punctuated<syn::Field, syn::token::Comma>, TokenStream> {
    let fields = match &input.data {
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Named(named),
            ..
        }) => &named.named,
        _ => {
            return Err(syn::Error::new(
                Span::call_site(),
                format!("`{derive}` derives on a struct with named fields: each field is {each}"),
            )
            .to_compile_error());
        }
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            format!("`{derive}` cannot be derived on a generic struct"),
        )
        .to_compile_error());
    }
    Ok(fields)
}

/// `#[derive(PromptArguments)]`: one type check per field, and the marker impl.
pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let fields = match named_fields(input, "PromptArguments", "one prompt argument") {
        Ok(fields) => fields,
        Err(e) => return e,
    };
    let checks = fields.iter().filter(|f| !serde_skipped(f)).map(|f| {
        let ty = &f.ty;
        quote_spanned! {ty.span()=>
            let _: ::fusion_runtime::prompt::__private::PromptFieldOk =
                (&&&::fusion_runtime::prompt::__private::FieldProbe::<#ty>::new()).prompt_shape();
        }
    });
    quote! {
        const _: () = {
            #[automatically_derived]
            impl ::fusion_runtime::prompt::PromptArguments for #ident {}

            #[allow(dead_code, clippy::no_effect_underscore_binding)]
            fn __fusion_prompt_fields() {
                #[allow(unused_imports)]
                use ::fusion_runtime::prompt::__private::{ProbeNested as _, ProbeNotString as _, ProbeOk as _};
                #( #checks )*
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn companion_names_and_prompt_names() {
        let f: Ident = syn::parse_quote!(payment_reminder);
        assert_eq!(pascal(&f), "PaymentReminder");
        for bad in ["", "a b", ".a", "a..b", "a/b"] {
            assert!(
                check_name(&LitStr::new(bad, Span::call_site())).is_err(),
                "{bad}"
            );
        }
        assert!(check_name(&LitStr::new("billing.payment_reminder", Span::call_site())).is_ok());
    }

    #[test]
    fn serde_skip_is_found() {
        let f: syn::FieldsNamed = syn::parse_quote!({
            #[serde(skip)] a: u32,
            #[serde(rename = "x")] b: String,
            #[serde(default, skip_deserializing)] c: u8,
        });
        let skipped: Vec<bool> = f.named.iter().map(serde_skipped).collect();
        assert_eq!(skipped, [true, false, true]);
    }
}
