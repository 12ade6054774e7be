use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::DeriveInput;
use syn::spanned::Spanned;

use crate::ast::{Container, Field};
use crate::attr::{Bounds, Count, FieldAttrs, NumLit, RuleValue};
use crate::ctxt::Ctxt;
use crate::rules::{RULES, Takes};
use crate::{check, doc};

pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    if let Some(cont) = &cont {
        check::check(&cx, cont);
    }
    match (cx.check(), cont) {
        (Ok(()), Some(cont)) => expand(&cont),
        (Err(e), _) => super::fallback::expand(input, e),
        (Ok(()), None) => super::fallback::expand(
            input,
            syn::Error::new_spanned(input, "`#[derive(ToolInput)]` could not read this item"),
        ),
    }
}

fn expand(cont: &Container) -> TokenStream {
    let ident = &cont.original.ident;
    let name = ident.to_string();
    let schema_name = cont
        .rename
        .as_ref()
        .map_or_else(|| name.clone(), |r| r.value());
    let description = option_str(
        cont.attrs
            .description
            .as_ref()
            .map(|d| quote!(#d))
            .or_else(|| doc::doc_expr(&cont.original.attrs)),
    );
    let allow_unknown = cont.attrs.allow_unknown_fields;
    let fields: Vec<&Field> = cont.fields.iter().filter(|f| !f.skipped).collect();
    let specs = fields.iter().map(|f| field_spec(f));
    let validators = cont.fields.iter().map(validator_calls);
    let typed_checks = fields.iter().enumerate().map(|(i, f)| {
        let ident = f.ident;
        let p = quote!(::fusion_runtime::__private);
        let checks = rule_uses(&f.attrs).into_iter().map(|u| {
            let (m, args) = (u.module, u.check_args);
            quote!(.and(#p::rules::#m::check(__fusion_v, #args)))
        });
        quote! {
            __fusion_plan.field(
                #i,
                (&#p::Probe(&self.#ident)).typed(),
                |__fusion_v| #p::Check::Pass #(#checks)*,
                __fusion_obj,
                &mut __fusion_present,
            )
        }
    });

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            const __FUSION_SPEC: ::fusion_runtime::__private::ContainerSpec =
                ::fusion_runtime::__private::ContainerSpec {
                    name: #name,
                    description: #description,
                    fields: &[#(#specs),*],
                    allow_unknown_fields: #allow_unknown,
                };

            fn __fusion_compiled() -> &'static ::fusion_runtime::__private::Compiled {
                static __FUSION_COMPILED: ::std::sync::OnceLock<::fusion_runtime::__private::Compiled> =
                    ::std::sync::OnceLock::new();
                __FUSION_COMPILED.get_or_init(|| {
                    ::fusion_runtime::__private::compile_derived::<#ident>(&__FUSION_SPEC)
                })
            }

            #[automatically_derived]
            impl ::fusion_runtime::__private::Derived for #ident {
                fn compiled() -> &'static ::fusion_runtime::__private::Compiled {
                    __fusion_compiled()
                }
                fn typed_check(
                    &self,
                    __fusion_plan: &::fusion_runtime::__private::Plan,
                    __fusion_obj: &::fusion_runtime::JsonObject,
                ) -> bool {
                    #[allow(unused_imports)]
                    use ::fusion_runtime::__private::{ProbeOpaque as _, ProbeTrusted as _};
                    let mut __fusion_present = 0usize;
                    #(#typed_checks &&)* __fusion_plan.done(__fusion_present, __fusion_obj)
                }
            }

            #[automatically_derived]
            impl ::fusion_runtime::__private::JsonSchema for #ident {
                fn schema_name() -> ::std::borrow::Cow<'static, str> {
                    ::std::borrow::Cow::Borrowed(#schema_name)
                }
                fn schema_id() -> ::std::borrow::Cow<'static, str> {
                    ::std::borrow::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", #name))
                }
                fn json_schema(
                    __fusion_gen: &mut ::fusion_runtime::__private::SchemaGenerator,
                ) -> ::fusion_runtime::__private::Schema {
                    ::fusion_runtime::__private::object_schema(__fusion_gen, &__FUSION_SPEC)
                }
            }

            #[automatically_derived]
            impl ::fusion_runtime::__private::Validate for #ident {
                fn validate(
                    &self,
                    __fusion_args: &::fusion_runtime::__private::serde_json::Value,
                    __fusion_path: &::fusion_runtime::__private::Path<'_>,
                    __fusion_issues: &mut ::std::vec::Vec<::fusion_runtime::Issue>,
                ) {
                    #[allow(unused_imports)]
                    use ::fusion_runtime::__private::{DiveNone as _, DiveValidate as _};
                    #(#validators)*
                }
            }

            #[automatically_derived]
            impl ::fusion_runtime::ToolInput for #ident {
                fn input_schema() -> ::std::sync::Arc<::fusion_runtime::JsonObject> {
                    __fusion_compiled().schema()
                }
                fn from_arguments(
                    __fusion_args: &::fusion_runtime::__private::serde_json::Value,
                ) -> ::core::result::Result<Self, ::fusion_runtime::ValidationReport> {
                    ::fusion_runtime::__private::from_arguments::<Self>(__fusion_args)
                }
                fn deprecated_fields() -> ::std::sync::Arc<[::fusion_runtime::__private::DeprecatedField]> {
                    __fusion_compiled().deprecated_fields()
                }
            }
        };
    }
}

fn option_str(s: Option<TokenStream>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

fn num(n: &NumLit) -> TokenStream {
    if n.is_int {
        let v = n.int;
        quote!(::fusion_runtime::__private::Num::Int(#v))
    } else {
        let v = n.value;
        quote!(::fusion_runtime::__private::Num::Float(#v))
    }
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> TokenStream) -> TokenStream {
    match v {
        Some(v) => {
            let t = f(v);
            quote!(::core::option::Option::Some(#t))
        }
        None => quote!(::core::option::Option::None),
    }
}

fn field_spec(field: &Field) -> TokenStream {
    let name = &field.name;
    let ty = &field.original.ty;
    let a = &field.attrs;
    let description = option_str(
        a.description
            .as_ref()
            .map(|d| quote!(#d))
            .or_else(|| doc::doc_expr(&field.original.attrs)),
    );
    let expected = opt(a.expected.as_ref(), |e| quote!(#e));
    let deprecated = opt(a.deprecated.as_ref(), |d| {
        let note = &d.value;
        quote!(#note)
    });
    let required = !field.optional;
    let default = field.serde_default;
    let p = quote!(::fusion_runtime::__private);
    let rules = rule_uses(a).into_iter().map(|u| {
        let (m, args) = (u.module, u.args);
        quote!(#p::Rule(|__fusion_schema| #p::rules::#m::keywords(#args, __fusion_schema)))
    });
    quote! {
        #p::FieldSpec {
            name: #name,
            description: #description,
            expected: #expected,
            required: #required,
            default: #default,
            deprecated: #deprecated,
            rules: &[#(#rules),*],
            schema: #p::schema_for::<#ty>,
        }
    }
}

/// One use of a rule on a field: its module in `fusion_runtime::validation::rules`, the
/// arguments of its `keywords` and of its `check`.
struct RuleUse {
    module: syn::Ident,
    args: TokenStream,
    check_args: TokenStream,
}

/// Each rule on a field, in the table's order: the field's spec gets
/// `Rule(|schema| rules::<rule>::keywords(args, schema))` (its schema keywords) and its typed
/// check `rules::<rule>::check(value, check_args)`.
fn rule_uses(a: &FieldAttrs) -> Vec<RuleUse> {
    RULES
        .iter()
        .flat_map(|row| a.rules.iter().filter(move |r| r.attr.name == row.name))
        .map(|r| {
            let args = match &r.value {
                RuleValue::Counts(b) => count_bounds(b),
                RuleValue::Bounds(b) => {
                    let min = opt(b.min.as_ref(), num);
                    let max = opt(b.max.as_ref(), num);
                    let emin = opt(b.exclusive_min.as_ref(), num);
                    let emax = opt(b.exclusive_max.as_ref(), num);
                    quote!(#min, #max, #emin, #emax)
                }
                RuleValue::Number(n) => num(n),
                RuleValue::Regex(s) => quote!(#s),
                RuleValue::Format(variant) => {
                    let v = syn::Ident::new(variant, proc_macro2::Span::call_site());
                    quote!(::fusion_runtime::__private::Format::#v)
                }
            };
            // The pattern's check takes it compiled, once, in a `static` of its own.
            let check_args = match r.attr.takes {
                Takes::Regex => compiled_pattern(&args),
                _ => args.clone(),
            };
            RuleUse {
                module: syn::Ident::new(r.attr.rule, proc_macro2::Span::call_site()),
                args,
                check_args,
            }
        })
        .collect()
}

/// The arguments of a count rule (`length`, `items`): its optional `min` and `max`.
fn count_bounds(b: &Bounds<Count>) -> TokenStream {
    let min = opt(b.min, |c| count(c.value));
    let max = opt(b.max, |c| count(c.value));
    quote!(#min, #max)
}

/// The pattern's check takes it compiled, once, in a `static` of its own.
fn compiled_pattern(pattern: &TokenStream) -> TokenStream {
    let p = quote!(::fusion_runtime::__private::rules::pattern::Pattern);
    quote!({
        static __FUSION_PATTERN: #p = #p::new(#pattern);
        &__FUSION_PATTERN
    })
}

fn count(v: u64) -> TokenStream {
    quote!(#v)
}

fn validator_calls(field: &Field) -> TokenStream {
    if field.skipped {
        return TokenStream::new();
    }
    let ident = field.ident;
    let name = &field.name;
    let expected = opt(field.attrs.expected.as_ref(), |e| quote!(#e));
    let custom = field.attrs.validate.as_ref().map(|f| {
        // Spanned at the user's path: a wrong signature is reported there.
        let f = quote_spanned!(f.span()=> #f);
        let call = quote! {
            ::fusion_runtime::__private::run_validator(
                __fusion_value,
                #f,
                __fusion_args,
                &::fusion_runtime::__private::Path::Key(__fusion_path, #name),
                #expected,
                __fusion_issues,
            );
        };
        if field.is_option {
            quote! {
                if let ::core::option::Option::Some(__fusion_value) = &self.#ident {
                    #call
                }
            }
        } else {
            quote! {
                {
                    let __fusion_value = &self.#ident;
                    #call
                }
            }
        }
    });
    quote! {
        #custom
        (&::fusion_runtime::__private::Dive(&self.#ident)).dive(
            __fusion_args,
            &::fusion_runtime::__private::Path::Key(__fusion_path, #name),
            __fusion_issues,
        );
    }
}
