//! `#[tool_action]`: leaves the `async fn` as written and emits its companion struct
//! (`GetInvoiceAction` for `fn get_invoice`) implementing `::fusion_runtime::ToolAction`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, ItemFn, LitBool, LitInt, LitStr, ReturnType, Type};

/// The arguments of `#[tool_action(..)]`, as written.
#[derive(Default)]
pub struct Args {
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    read_only: Option<LitBool>,
    destructive: Option<LitBool>,
    idempotent: Option<LitBool>,
    open_world: Option<LitBool>,
    deprecated: Option<LitStr>,
    max_active: Option<usize>,
    max_queue: Option<(usize, proc_macro2::Span)>,
    rate_limit: Option<Rate>,
    timeout: Option<u64>,
    max_result_bytes: Option<usize>,
    scopes: Option<Vec<LitStr>>,
    task: Option<syn::Ident>,
    icons: Vec<super::icon::Icon>,
}

/// A rate limit as written: `calls` per `per_ms` milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    calls: u32,
    per_ms: u64,
    burst: Option<u32>,
    per_client: bool,
}

fn set<T>(slot: &mut Option<T>, value: T, meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format_args!(
            "duplicate `tool_action` key `{}`",
            path_str(&meta.path)
        )));
    }
    *slot = Some(value);
    Ok(())
}

fn path_str(path: &syn::Path) -> String {
    quote!(#path).to_string().replace(' ', "")
}

/// A hint: bare (`read_only`) is true; `read_only = false` sets it false.
fn hint(meta: &syn::meta::ParseNestedMeta) -> syn::Result<LitBool> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse()
    } else {
        Ok(LitBool::new(true, meta.path.span()))
    }
}

impl super::AttrArgs for Args {
    fn parse(&mut self, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
        if meta.path.is_ident("name") {
            // #[tool_action(name = "billing.get_invoice")]
            let lit: LitStr = meta.value()?.parse()?;
            check_name(&lit)?;
            set(&mut self.name, lit, &meta)
        } else if meta.path.is_ident("title") {
            // #[tool_action(title = "Get an invoice")]
            let lit = meta.value()?.parse()?;
            set(&mut self.title, lit, &meta)
        } else if meta.path.is_ident("description") {
            // #[tool_action(description = "…")]
            let lit = meta.value()?.parse()?;
            set(&mut self.description, lit, &meta)
        } else if meta.path.is_ident("read_only") {
            // #[tool_action(read_only)] or #[tool_action(read_only = false)]
            let v = hint(&meta)?;
            set(&mut self.read_only, v, &meta)
        } else if meta.path.is_ident("destructive") {
            // #[tool_action(destructive)]
            let v = hint(&meta)?;
            set(&mut self.destructive, v, &meta)
        } else if meta.path.is_ident("idempotent") {
            // #[tool_action(idempotent)]
            let v = hint(&meta)?;
            set(&mut self.idempotent, v, &meta)
        } else if meta.path.is_ident("open_world") {
            // #[tool_action(open_world)]
            let v = hint(&meta)?;
            set(&mut self.open_world, v, &meta)
        } else if meta.path.is_ident("deprecated") {
            // #[tool_action(deprecated)] or #[tool_action(deprecated = "use … instead")]
            let lit = if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse()?
            } else {
                LitStr::new("it will be removed", meta.path.span())
            };
            set(&mut self.deprecated, lit, &meta)
        } else if meta.path.is_ident("max_active") {
            // #[tool_action(max_active = 4)]
            let lit: LitInt = meta.value()?.parse()?;
            let n: usize = lit.base10_parse()?;
            if n == 0 {
                return Err(syn::Error::new(
                    lit.span(),
                    "`max_active` must be at least 1: it is how many calls run at once",
                ));
            }
            set(&mut self.max_active, n, &meta)
        } else if meta.path.is_ident("max_queue") {
            // #[tool_action(max_active = 4, max_queue = 16)]
            let lit: LitInt = meta.value()?.parse()?;
            let n: usize = lit.base10_parse()?;
            set(&mut self.max_queue, (n, meta.path.span()), &meta)
        } else if meta.path.is_ident("rate_limit") {
            // #[tool_action(rate_limit = "10/min")]
            // #[tool_action(rate_limit(calls = 10, per = "1min", burst = 20, per_client))]
            let rate = if meta.input.peek(syn::Token![=]) {
                let lit: LitStr = meta.value()?.parse()?;
                parse_rate(&lit.value()).map_err(|m| syn::Error::new(lit.span(), m))?
            } else {
                parse_rate_list(&meta)?
            };
            set(&mut self.rate_limit, rate, &meta)
        } else if meta.path.is_ident("timeout") {
            // #[tool_action(timeout = "30s")]
            let value = meta.value()?;
            if value.peek(LitInt) {
                let int: LitInt = value.parse()?;
                return Err(syn::Error::new(
                    int.span(),
                    format_args!("write the unit: `timeout = \"{}s\"`", int.base10_digits()),
                ));
            }
            let lit: LitStr = value.parse()?;
            let ms = parse_duration_ms(&lit.value()).map_err(|m| syn::Error::new(lit.span(), m))?;
            set(&mut self.timeout, ms, &meta)
        } else if meta.path.is_ident("max_result_bytes") {
            // #[tool_action(max_result_bytes = 65536)]
            let value = meta.value()?;
            let lit: LitInt = value.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected a byte count: `max_result_bytes = 65536`",
                )
            })?;
            let n: usize = lit.base10_parse()?;
            if n == 0 {
                return Err(syn::Error::new(
                    lit.span(),
                    "`max_result_bytes` must be at least 1: it is how many bytes of text a result may carry",
                ));
            }
            set(&mut self.max_result_bytes, n, &meta)
        } else if meta.path.is_ident("task") {
            // #[tool_action(task)] or #[tool_action(task = "optional" | "required")]
            let (word, span) = if meta.input.peek(syn::Token![=]) {
                let lit: LitStr = meta.value()?.parse()?;
                (lit.value(), lit.span())
            } else {
                ("optional".to_owned(), meta.path.span())
            };
            let variant = match word.as_str() {
                "optional" => "Optional",
                "required" => "Required",
                other => {
                    return Err(syn::Error::new(
                        span,
                        format_args!(
                            "unknown task support `{other}`; expected `task`, `task = \"optional\"` or `task = \"required\"` (the spec's `execution.taskSupport` words)"
                        ),
                    ));
                }
            };
            set(&mut self.task, syn::Ident::new(variant, span), &meta)
        } else if meta.path.is_ident("scopes") {
            // #[tool_action(scopes = ["billing:write"])]
            let scopes = parse_scopes(&meta)?;
            set(&mut self.scopes, scopes, &meta)
        } else if meta.path.is_ident("icon") {
            // #[tool_action(icon = "https://example.com/invoice.png")], repeatable
            // #[tool_action(icon(src = "..", mime_type = "image/png", sizes = "48x48", theme = "dark"))]
            self.icons.push(super::icon::parse(&meta, "tool_action")?);
            Ok(())
        } else {
            Err(meta.error(format_args!(
                "unknown `tool_action` key `{}`; expected one of `name`, `title`, `description`, `read_only`, `destructive`, `idempotent`, `open_world`, `deprecated`, `max_active`, `max_queue`, `rate_limit`, `timeout`, `max_result_bytes`, `scopes`, `task`, `icon`",
                path_str(&meta.path)
            )))
        }
    }
}

/// `scopes = ["billing:read", "billing:write"]`: string literals, each an OAuth scope token
/// (RFC 6749 §3.3: printable ASCII, no space, `"` or `\\`).
fn parse_scopes(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Vec<LitStr>> {
    let value = meta.value()?;
    let content;
    let brackets = syn::bracketed!(content in value);
    let items = content.parse_terminated(<Expr as syn::parse::Parse>::parse, syn::Token![,])?;
    let mut scopes = Vec::new();
    for item in items {
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) = item
        else {
            return Err(syn::Error::new(
                item.span(),
                "a scope must be a string literal: `scopes = [\"billing:write\"]`",
            ));
        };
        let text = lit.value();
        if text.is_empty()
            || !text
                .bytes()
                .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
        {
            return Err(syn::Error::new(
                lit.span(),
                "a scope is printable ASCII without spaces, `\"` or `\\` (RFC 6749 §3.3)",
            ));
        }
        scopes.push(lit);
    }
    if scopes.is_empty() {
        return Err(syn::Error::new(
            brackets.span.join(),
            "`scopes` needs at least one scope; leave the key out for an action anyone may call",
        ));
    }
    Ok(scopes)
}

/// `rate_limit(calls = 10, per = "1min", burst = 20, per_client)`.
fn parse_rate_list(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Rate> {
    let mut calls: Option<u32> = None;
    let mut per: Option<u64> = None;
    let mut burst: Option<u32> = None;
    let mut per_client = false;
    let span = meta.path.span();
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("calls") {
            // calls = 10
            let lit: LitInt = inner.value()?.parse()?;
            let n: u32 = lit.base10_parse()?;
            if n == 0 {
                return Err(syn::Error::new(lit.span(), "`calls` must be at least 1"));
            }
            set(&mut calls, n, &inner)
        } else if inner.path.is_ident("per") {
            // per = "1min"
            let lit: LitStr = inner.value()?.parse()?;
            let ms = parse_duration_ms(&lit.value()).map_err(|m| syn::Error::new(lit.span(), m))?;
            set(&mut per, ms, &inner)
        } else if inner.path.is_ident("burst") {
            // burst = 20
            let lit: LitInt = inner.value()?.parse()?;
            let n: u32 = lit.base10_parse()?;
            if n == 0 {
                return Err(syn::Error::new(lit.span(), "`burst` must be at least 1"));
            }
            set(&mut burst, n, &inner)
        } else if inner.path.is_ident("per_client") {
            // per_client
            per_client = true;
            Ok(())
        } else {
            Err(inner.error(format_args!(
                "unknown `rate_limit` key `{}`; expected `calls`, `per`, `burst` or `per_client`",
                path_str(&inner.path)
            )))
        }
    })?;
    match (calls, per) {
        (Some(calls), Some(per_ms)) => Ok(Rate {
            calls,
            per_ms,
            burst,
            per_client,
        }),
        _ => Err(syn::Error::new(
            span,
            "`rate_limit(..)` needs `calls` and `per`: `rate_limit(calls = 10, per = \"1min\")`",
        )),
    }
}

/// `"10/min"`, `"5/s"`, `"100/h"`, `"3/30s"`: calls, a slash, then a unit or a duration.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let usage = "write a rate limit as `\"CALLS/PERIOD\"`: `\"10/min\"`, `\"5/s\"`, `\"100/h\"` or `\"3/30s\"`";
    let Some((calls, per)) = text.split_once('/') else {
        return Err(usage.to_owned());
    };
    let calls: u32 = calls.trim().parse().map_err(|_| usage.to_owned())?;
    if calls == 0 {
        return Err("a rate limit must allow at least 1 call".to_owned());
    }
    let per = per.trim();
    let per_ms = match unit_ms(per) {
        Some(ms) => ms,
        None => parse_duration_ms(per).map_err(|_| usage.to_owned())?,
    };
    Ok(Rate {
        calls,
        per_ms,
        burst: None,
        per_client: false,
    })
}

fn unit_ms(unit: &str) -> Option<u64> {
    match unit {
        "ms" => Some(1),
        "s" | "sec" | "second" => Some(1_000),
        "m" | "min" | "minute" => Some(60_000),
        "h" | "hour" => Some(3_600_000),
        "d" | "day" => Some(86_400_000),
        _ => None,
    }
}

/// `"500ms"`, `"30s"`, `"2min"`, `"1h"` → milliseconds (more than zero).
pub fn parse_duration_ms(text: &str) -> Result<u64, String> {
    let usage = format!(
        "`{text}` is not a duration: write a whole number and a unit (`ms`, `s`, `min`, `h`), e.g. `\"30s\"`"
    );
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().map_err(|_| usage.clone())?;
    let ms = unit_ms(unit.trim())
        .and_then(|u| n.checked_mul(u))
        .ok_or_else(|| usage.clone())?;
    if ms == 0 {
        return Err("the duration must be more than zero".to_owned());
    }
    Ok(ms)
}

/// Action names become MCP tool names (dots replaced by a separator, or split into group and
/// action), which clients accept only as 1 to 64 of `A-Z a-z 0-9 _ - .`.
fn check_name(lit: &LitStr) -> syn::Result<()> {
    let name = lit.value();
    let bad = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')));
    let msg = if name.is_empty() {
        "the action name is empty".to_owned()
    } else if let Some(c) = bad {
        format!(
            "MCP clients reject tool names containing {c:?}: use only `A-Z a-z 0-9 _ - .` (e.g. `billing.get_invoice`)"
        )
    } else if name.len() > 64 {
        format!(
            "MCP clients reject tool names longer than 64 characters; this one has {}",
            name.len()
        )
    } else if name.starts_with('.') || name.ends_with('.') || name.contains("..") {
        "each dot-separated segment of an action name must be non-empty (e.g. `billing.get_invoice`)"
            .to_owned()
    } else {
        return Ok(());
    };
    Err(syn::Error::new(lit.span(), msg))
}

fn pascal(ident: &Ident) -> String {
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

/// The companion struct's name: `get_invoice` → `GetInvoiceAction`.
pub fn companion_ident(ident: &Ident) -> Ident {
    format_ident!("{}Action", pascal(ident), span = ident.span())
}

struct Signature<'a> {
    input: Option<&'a Type>,
    context: Option<&'a Type>,
    output: Option<&'a Type>,
}

fn check_signature<'a>(item: &'a ItemFn, errors: &mut Vec<syn::Error>) -> Signature<'a> {
    let sig = &item.sig;
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span,
            "`#[tool_action]` requires an `async fn`",
        ));
    }
    if let Some(c) = &sig.constness {
        errors.push(syn::Error::new(
            c.span,
            "`#[tool_action]` functions cannot be `const`",
        ));
    }
    if let Some(u) = &sig.unsafety {
        errors.push(syn::Error::new(
            u.span,
            "`#[tool_action]` functions cannot be `unsafe`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "`#[tool_action]` functions cannot be generic: name the input type and the state type",
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            v,
            "`#[tool_action]` functions cannot be variadic",
        ));
    }
    let mut typed = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => errors.push(syn::Error::new_spanned(
                r,
                "`#[tool_action]` cannot take `self`: write a free function and reach shared state through `Context<S>`",
            )),
            FnArg::Typed(t) => typed.push(t),
        }
    }
    // No input: `async fn ping()`, or one parameter that is the context (`Context<S>`,
    // `CallContext`, read from its type's last segment): the action's input is `NoInput`.
    let context_only = typed.len() == 1 && is_context(&typed[0].ty);
    let (input, context) = if context_only {
        (None, typed.first())
    } else {
        (typed.first(), typed.get(1))
    };
    for extra in typed.iter().skip(2) {
        errors.push(syn::Error::new_spanned(
            extra,
            "`#[tool_action]` takes at most two parameters: the input, then `Context<S>`",
        ));
    }
    let output = match &sig.output {
        ReturnType::Type(_, ty) => Some(&**ty),
        ReturnType::Default => {
            errors.push(syn::Error::new(
                sig.ident.span(),
                "`#[tool_action]` functions return `Result<T, E>`: add a return type",
            ));
            None
        }
    };
    Signature {
        input: input.map(|t| &*t.ty),
        context: context.map(|t| &*t.ty),
        output,
    }
}

/// Whether a parameter's type is a context (`Context<S>`, `CallContext`, by any path), not an
/// input: what lets a handler take only its context.
fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Context" || s.ident == "CallContext"),
        Type::Paren(p) => is_context(&p.elem),
        Type::Group(g) => is_context(&g.elem),
        _ => false,
    }
}

fn doc_exprs(item: &ItemFn) -> Vec<&Expr> {
    item.attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        })
        .collect()
}

fn opt_bool(b: &Option<LitBool>) -> TokenStream {
    match b {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    }
}

fn opt_str(s: &Option<LitStr>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// The tail of `info()`: the declared scopes, task support, icons and guards set on
/// `__fusion_info`, or it as is.
fn limits(args: &Args) -> TokenStream {
    let scoped = match &args.scopes {
        Some(scopes) => quote! {
            let __fusion_info = ::fusion_runtime::__private::with_scopes(__fusion_info, &[#(#scopes),*]);
        },
        None => quote!(),
    };
    let tasked = match &args.task {
        Some(variant) => quote! {
            let __fusion_info = ::fusion_runtime::__private::with_task(
                __fusion_info,
                ::fusion_runtime::__private::TaskSupport::#variant,
            );
        },
        None => quote!(),
    };
    let iconed = if args.icons.is_empty() {
        quote!()
    } else {
        let icons = super::icon::tokens(&args.icons);
        quote! {
            let __fusion_info = ::fusion_runtime::__private::with_icons(__fusion_info, #icons);
        }
    };
    let guards = guards(args);
    quote! {
        #scoped
        #tasked
        #iconed
        #guards
    }
}

/// The declared guards set on `__fusion_info`, or it as is.
fn guards(args: &Args) -> TokenStream {
    if args.max_active.is_none()
        && args.rate_limit.is_none()
        && args.timeout.is_none()
        && args.max_result_bytes.is_none()
    {
        return quote!(__fusion_info);
    }
    let none = quote!(::core::option::Option::None);
    let concurrency = match args.max_active {
        Some(active) => {
            let queue = args.max_queue.map_or(0, |(q, _)| q);
            quote!(::core::option::Option::Some(::fusion_runtime::__private::concurrency_limit(#active, #queue)))
        }
        None => none.clone(),
    };
    let rate_limit = match args.rate_limit {
        Some(Rate {
            calls,
            per_ms,
            burst,
            per_client,
        }) => {
            let burst = match burst {
                Some(b) => quote!(::core::option::Option::Some(#b)),
                None => none.clone(),
            };
            quote!(::core::option::Option::Some(::fusion_runtime::__private::rate_limit(#calls, #per_ms, #burst, #per_client)))
        }
        None => none.clone(),
    };
    let timeout = match args.timeout {
        Some(ms) => quote!(::core::option::Option::Some(::fusion_runtime::__private::millis(#ms))),
        None => none.clone(),
    };
    let max_result_bytes = match args.max_result_bytes {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => none,
    };
    quote! {
        ::fusion_runtime::__private::with_limits(
            __fusion_info,
            ::fusion_runtime::__private::ActionLimits {
                concurrency: #concurrency,
                rate_limit: #rate_limit,
                timeout: #timeout,
                max_result_bytes: #max_result_bytes,
            },
        )
    }
}

/// The attribute: parses its arguments and the function, then expands. Never panics; every
/// problem becomes a `compile_error!` next to the unchanged function.
pub fn attribute(args: TokenStream, item: TokenStream) -> TokenStream {
    super::on_async_fn::<Args>("tool_action", args, item, expand)
}

fn expand(args: Args, item: ItemFn, mut errors: Vec<syn::Error>) -> TokenStream {
    let sig = check_signature(&item, &mut errors);
    if let (Some((_, span)), None) = (args.max_queue, args.max_active) {
        errors.push(syn::Error::new(
            span,
            "`max_queue` needs `max_active`: how many calls run at once before others wait",
        ));
    }
    let docs = doc_exprs(&item);
    if args.description.is_none() && docs.is_empty() {
        errors.push(syn::Error::new(
            item.sig.ident.span(),
            "`#[tool_action]` needs a description for the model: add a doc comment or `description = \"..\"`",
        ));
    }
    let fn_ident = &item.sig.ident;
    let vis = &item.vis;
    let action = companion_ident(fn_ident);
    let name = match &args.name {
        Some(n) => LitStr::new(&n.value(), n.span()),
        None => {
            let n = LitStr::new(&fn_ident.to_string(), fn_ident.span());
            if let Err(e) = check_name(&n) {
                errors.push(e);
            }
            n
        }
    };
    let struct_doc = format!(
        "The `{}` action: `#[tool_action]` generated this from `fn {fn_ident}`. Register it with `ServerBuilder::action::<{action}>()`.",
        name.value()
    );
    let companion = quote! {
        #[doc = #struct_doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #action;
    };

    if !errors.is_empty() {
        let mut combined = errors.remove(0);
        for e in errors {
            combined.combine(e);
        }
        let compile_errors = combined.to_compile_error();
        if item.sig.receiver().is_some() {
            // A method sits in an `impl` block, where no companion item can be declared.
            return quote!(#item #compile_errors);
        }
        let input = match sig.input {
            Some(t) => quote!(#t),
            None => quote!(::fusion_runtime::__private::NoInput),
        };
        return quote! {
            #item
            #companion
            #compile_errors
            const _: () = {
                #[automatically_derived]
                impl ::fusion_runtime::ToolAction for #action {
                    const NAME: &'static str = #name;
                    type Input = #input;
                    type Output = ();
                    fn info() -> ::fusion_runtime::__private::ActionInfo {
                        ::core::unreachable!()
                    }
                    fn call(
                        _: Self::Input,
                        _: &::fusion_runtime::__private::CallContext,
                    ) -> ::fusion_runtime::__private::BoxFuture<'static, ::fusion_runtime::__private::HandlerOutcome> {
                        ::core::unreachable!()
                    }
                }
            };
        };
    }

    // Checked above: a return type exists when there is no error.
    let Some(output) = sig.output else {
        return quote!(#item);
    };
    let description = match &args.description {
        Some(d) => quote!(#d),
        None => {
            let parts = docs
                .iter()
                .enumerate()
                .map(|(i, d)| if i == 0 { quote!(#d) } else { quote!("\n", #d) });
            quote!(::core::concat!(#(#parts),*))
        }
    };
    let title = opt_str(&args.title);
    let deprecated = opt_str(&args.deprecated);
    let read_only = opt_bool(&args.read_only);
    let destructive = opt_bool(&args.destructive);
    let idempotent = opt_bool(&args.idempotent);
    let open_world = opt_bool(&args.open_world);
    let limits = limits(&args);

    // Without an input parameter the action's input is `NoInput`, validated like any input
    // and not passed to the function.
    let (input_ty, input_arg, input_span) = match sig.input {
        Some(input) => (
            quote_spanned!(input.span()=> #input),
            quote!(__fusion_input),
            input.span(),
        ),
        None => (
            quote!(::fusion_runtime::__private::NoInput),
            quote!(),
            item.sig.paren_token.span.join(),
        ),
    };
    let input_param = if sig.input.is_some() {
        quote!(__fusion_input)
    } else {
        quote!(_)
    };
    let ret = quote_spanned!(output.span()=> #output);
    let (state, context_arg, call_args) = match sig.context {
        Some(ctx) => {
            let ctx_ty = quote_spanned!(ctx.span()=> #ctx);
            (
                quote!(<#ctx_ty as ::fusion_runtime::__private::FromCallContext>::requirement()),
                quote! {
                    let __fusion_context = match <#ctx_ty as ::fusion_runtime::__private::FromCallContext>::from_call_context(__fusion_cx) {
                        ::core::result::Result::Ok(__fusion_c) => __fusion_c,
                        ::core::result::Result::Err(__fusion_e) => return ::fusion_runtime::__private::fail_now(__fusion_e),
                    };
                },
                if sig.input.is_some() {
                    quote!(__fusion_input, __fusion_context)
                } else {
                    quote!(__fusion_context)
                },
            )
        }
        None => (quote!(::core::option::Option::None), quote!(), input_arg),
    };
    // Every use of the input and output types carries their spans, so a type that does not
    // fit is reported at the user's token, not at the attribute.
    let self_input = quote_spanned!(input_span=> Self::Input);
    let self_output = quote_spanned!(output.span()=> Self::Output);
    let output_assoc = quote_spanned! {output.span()=>
        type Output = <<#ret as ::fusion_runtime::__private::HandlerReturn>::Ok as ::fusion_runtime::__private::IntoActionOutput>::Value;
    };
    let outcome = quote_spanned! {output.span()=>
        ::fusion_runtime::__private::handler_outcome::<#ret>(#fn_ident(#call_args).await)
    };

    quote! {
        #item
        #companion
        const _: () = {
            #[automatically_derived]
            #[allow(unused_qualifications)]
            impl ::fusion_runtime::ToolAction for #action {
                const NAME: &'static str = #name;
                type Input = #input_ty;
                #output_assoc

                fn info() -> ::fusion_runtime::__private::ActionInfo {
                    #[allow(unused_imports)]
                    use ::fusion_runtime::__private::{ViaJsonSchema as _, ViaNothing as _};
                    let __fusion_info = ::fusion_runtime::__private::action_info(
                        Self::NAME,
                        #title,
                        #description,
                        ::fusion_runtime::__private::Hints {
                            read_only: #read_only,
                            destructive: #destructive,
                            idempotent: #idempotent,
                            open_world: #open_world,
                        },
                        #deprecated,
                        <#self_input as ::fusion_runtime::ToolInput>::input_schema(),
                        <#self_input as ::fusion_runtime::ToolInput>::deprecated_fields(),
                        (&::fusion_runtime::__private::OutputProbe::<#self_output>::new()).output_schema(),
                        #state,
                    );
                    #limits
                }

                fn call(
                    #input_param: #self_input,
                    __fusion_cx: &::fusion_runtime::__private::CallContext,
                ) -> ::fusion_runtime::__private::BoxFuture<'static, ::fusion_runtime::__private::HandlerOutcome> {
                    #context_arg
                    ::std::boxed::Box::pin(async move { #outcome })
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;

    #[test]
    fn companion_names_are_pascal_case_plus_action() {
        let f: Ident = syn::parse_quote!(get_invoice);
        assert_eq!(companion_ident(&f).to_string(), "GetInvoiceAction");
        let f: Ident = syn::parse_quote!(r#list);
        assert_eq!(companion_ident(&f).to_string(), "ListAction");
    }

    #[test]
    fn rates_and_durations_parse() {
        let r = parse_rate("10/min").expect("valid");
        assert_eq!((r.calls, r.per_ms), (10, 60_000));
        assert_eq!(parse_rate("5/s").map(|r| r.per_ms), Ok(1_000));
        assert_eq!(
            parse_rate(" 3 / 30s ").map(|r| (r.calls, r.per_ms)),
            Ok((3, 30_000))
        );
        assert_eq!(parse_rate("100/hour").map(|r| r.per_ms), Ok(3_600_000));
        for bad in [
            "10",
            "0/min",
            "x/min",
            "10/fortnight",
            "10/0s",
            "-1/s",
            "10/",
        ] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_duration_ms("30s"), Ok(30_000));
        assert_eq!(parse_duration_ms("500ms"), Ok(500));
        assert_eq!(parse_duration_ms("2min"), Ok(120_000));
        assert_eq!(parse_duration_ms("1h"), Ok(3_600_000));
        for bad in [
            "",
            "30",
            "s",
            "0s",
            "1.5s",
            "30 sec onds",
            "-3s",
            "99999999999999999999h",
        ] {
            assert!(parse_duration_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_mcp_clients_reject_are_refused() {
        for bad in ["", "billing get", "billing/get", ".a", "a..b", "a.", "é"] {
            assert!(
                check_name(&LitStr::new(bad, Span::call_site())).is_err(),
                "{bad}"
            );
        }
        let long = "a".repeat(65);
        assert!(check_name(&LitStr::new(&long, Span::call_site())).is_err());
        for good in ["billing.get_invoice", "a", "a-b.c_d", &"a".repeat(64)] {
            assert!(
                check_name(&LitStr::new(good, Span::call_site())).is_ok(),
                "{good}"
            );
        }
    }
}
