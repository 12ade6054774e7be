//! `#[resource]`: leaves the `async fn` as written and emits its companion struct
//! (`InvoiceResource` for `fn invoice`) implementing `::fusion_runtime::ResourceAction`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr, Path};

use super::prompt::{
    check_signature, combine, completer_items, context, description, opt_str, parse_completers,
    pascal,
};
use super::{path_str, set};

/// The arguments of `#[resource(..)]`, as written.
#[derive(Default)]
struct Args {
    uri: Option<LitStr>,
    template: Option<LitStr>,
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    mime: Option<LitStr>,
    completers: Vec<(String, Path)>,
    icons: Vec<super::icon::Icon>,
}

impl super::AttrArgs for Args {
    fn parse(&mut self, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
        if meta.path.is_ident("uri") {
            // #[resource(uri = "billing://policy")]
            let lit: LitStr = meta.value()?.parse()?;
            if lit.value().contains(['{', '}']) {
                return Err(syn::Error::new(
                    lit.span(),
                    "a static `uri` has no `{variables}`: write `template = \"..\"` for a URI template",
                ));
            }
            set(&mut self.uri, lit, &meta, "resource")
        } else if meta.path.is_ident("template") {
            // #[resource(template = "billing://invoices/{id}")]
            let lit: LitStr = meta.value()?.parse()?;
            if !lit.value().contains('{') {
                return Err(syn::Error::new(
                    lit.span(),
                    "a `template` has at least one `{variable}`: write `uri = \"..\"` for a static resource",
                ));
            }
            set(&mut self.template, lit, &meta, "resource")
        } else if meta.path.is_ident("name") {
            // #[resource(name = "invoice")]
            let lit = meta.value()?.parse()?;
            set(&mut self.name, lit, &meta, "resource")
        } else if meta.path.is_ident("title") {
            // #[resource(title = "Invoice")]
            let lit = meta.value()?.parse()?;
            set(&mut self.title, lit, &meta, "resource")
        } else if meta.path.is_ident("description") {
            // #[resource(description = "…")]
            let lit = meta.value()?.parse()?;
            set(&mut self.description, lit, &meta, "resource")
        } else if meta.path.is_ident("mime") {
            // #[resource(mime = "application/json")]
            let lit = meta.value()?.parse()?;
            set(&mut self.mime, lit, &meta, "resource")
        } else if meta.path.is_ident("complete") {
            // #[resource(complete(id = complete_invoice_ids))]
            parse_completers(&meta, &mut self.completers)
        } else if meta.path.is_ident("icon") {
            // #[resource(icon = "https://example.com/invoice.png")], repeatable; or `icon(..)`
            self.icons.push(super::icon::parse(&meta, "resource")?);
            Ok(())
        } else {
            Err(meta.error(format_args!(
                "unknown `resource` key `{}`; expected one of `uri`, `template`, `name`, `title`, `description`, `mime`, `complete`, `icon`",
                path_str(&meta.path)
            )))
        }
    }
}

/// The attribute: parses its arguments and the function, then expands. Never panics.
pub fn attribute(args: TokenStream, item: TokenStream) -> TokenStream {
    super::on_async_fn::<Args>("resource", args, item, expand)
}

fn expand(args: Args, item: ItemFn, mut errors: Vec<syn::Error>) -> TokenStream {
    // A key that did not parse may be the `uri` or `template`: say nothing more about them.
    let attr_failed = !errors.is_empty();
    let is_template = args.template.is_some();
    let uri = match (&args.uri, &args.template) {
        (Some(u), None) | (None, Some(u)) => Some(u.clone()),
        (Some(u), Some(_)) => {
            errors.push(syn::Error::new(
                u.span(),
                "`#[resource]` takes `uri` (a static resource) or `template`, not both",
            ));
            None
        }
        (None, None) if attr_failed => None,
        (None, None) => {
            errors.push(syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[resource]` needs `uri = \"..\"` (a static resource) or `template = \"..\"` (e.g. `\"billing://invoices/{id}\"`)",
            ));
            None
        }
    };
    let (max, usage) = if is_template {
        (
            2,
            "the template's parameters (a `ToolInput` struct), then `Context<S>`",
        )
    } else {
        (
            1,
            "a static resource takes only `Context<S>`; use `template = \"..\"` for parameters",
        )
    };
    let sig = check_signature(&item, "resource", max, usage, &mut errors);
    if is_template && uri.is_some() && sig.params.is_empty() {
        errors.push(syn::Error::new(
            item.sig.paren_token.span.join(),
            "a resource template needs its parameters: `async fn name(params: MyParams)` where `MyParams` derives `ToolInput`",
        ));
    }
    let description = description(&args.description, &item);
    if description.is_none() {
        errors.push(syn::Error::new(
            item.sig.ident.span(),
            "`#[resource]` needs a description: add a doc comment or `description = \"..\"`",
        ));
    }
    let fn_ident = &item.sig.ident;
    let vis = &item.vis;
    let companion = format_ident!("{}Resource", pascal(fn_ident), span = fn_ident.span());
    let struct_doc = format!(
        "The resource `{}`: `#[resource]` generated this from `fn {fn_ident}`. Register it with `ServerBuilder::resource::<{companion}>()`.",
        uri.as_ref().map(LitStr::value).unwrap_or_default()
    );
    let companion_struct = quote! {
        #[doc = #struct_doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #companion;
    };
    if let Some(compile_errors) = combine(errors) {
        return quote!(#item #companion_struct #compile_errors);
    }
    let (Some(uri), Some(output), Some(description)) = (uri, sig.output, description) else {
        return quote!(#item);
    };
    let name = match &args.name {
        Some(n) => n.clone(),
        None => {
            let n = fn_ident.to_string();
            LitStr::new(n.strip_prefix("r#").unwrap_or(&n), fn_ident.span())
        }
    };
    let (params_ty, ctx) = if is_template {
        let t = sig.params[0];
        (quote_spanned!(t.span()=> #t), sig.params.get(1).copied())
    } else {
        (
            quote!(::fusion_runtime::resource::NoParams),
            sig.params.first().copied(),
        )
    };
    let (state, context_arg) = context(
        ctx,
        quote!(::fusion_runtime::resource::__private::resource_fails_now),
    );
    let call_args = match (is_template, ctx.is_some()) {
        (true, true) => quote!(__fusion_params, __fusion_context),
        (true, false) => quote!(__fusion_params),
        (false, true) => quote!(__fusion_context),
        (false, false) => quote!(),
    };
    let ignore_params = if is_template {
        quote!()
    } else {
        quote!(let _ = __fusion_params;)
    };
    let title = opt_str(&args.title);
    let mime = opt_str(&args.mime);
    let ret = quote_spanned!(output.span()=> #output);
    let outcome = quote_spanned! {output.span()=>
        ::fusion_runtime::resource::__private::resource_outcome::<#ret>(#fn_ident(#call_args).await)
    };
    let completers = completer_items(&args.completers, "completed_parameters");
    let info = quote! {
        ::fusion_runtime::resource::__private::resource_info(
            Self::URI,
            #is_template,
            #name,
            #title,
            #description,
            #mime,
            <#params_ty as ::fusion_runtime::ToolInput>::input_schema(),
            #state,
        )
    };
    let info = if args.icons.is_empty() {
        info
    } else {
        let icons = super::icon::tokens(&args.icons);
        quote!(::fusion_runtime::resource::__private::resource_with_icons(#info, #icons))
    };
    quote! {
        #item
        #companion_struct
        const _: () = {
            #[automatically_derived]
            #[allow(unused_qualifications)]
            impl ::fusion_runtime::resource::ResourceAction for #companion {
                const URI: &'static str = #uri;
                type Params = #params_ty;

                fn info() -> ::fusion_runtime::resource::ResourceInfo {
                    #info
                }

                fn read(
                    __fusion_params: Self::Params,
                    __fusion_cx: &::fusion_runtime::__private::CallContext,
                ) -> ::fusion_runtime::__private::BoxFuture<'static, ::fusion_runtime::resource::ResourceOutcome> {
                    #ignore_params
                    #context_arg
                    ::std::boxed::Box::pin(async move { #outcome })
                }

                #completers
            }
        };
    }
}
