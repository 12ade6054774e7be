//! The `icon` key shared by `#[tool_action]`, `#[prompt]` and `#[resource]`: an MCP
//! 2025-11-25 `Icon`, checked here and emitted as a `StaticIcon`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;
use syn::spanned::Spanned;

use super::{path_str, set};

/// One `icon`, as written.
pub struct Icon {
    src: LitStr,
    mime_type: Option<LitStr>,
    sizes: Vec<String>,
    theme: Option<syn::Ident>,
}

/// `icon = "https://.."` or `icon(src = "..", mime_type = "..", sizes = "48x48 96x96",
/// theme = "dark")`, in the attribute `attr`.
pub fn parse(meta: &syn::meta::ParseNestedMeta, attr: &str) -> syn::Result<Icon> {
    if meta.input.peek(syn::Token![=]) {
        // icon = "https://example.com/icon.png"
        let src: LitStr = meta.value()?.parse()?;
        check_src(&src)?;
        return Ok(Icon {
            src,
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        });
    }
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format_args!(
            "write `#[{attr}(icon = \"https://example.com/icon.png\")]` or `icon(src = \"..\", mime_type = \"..\", sizes = \"..\", theme = \"..\")`"
        )));
    }
    let mut src: Option<LitStr> = None;
    let mut mime_type: Option<LitStr> = None;
    let mut sizes: Option<Vec<String>> = None;
    let mut theme: Option<syn::Ident> = None;
    let span = meta.path.span();
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("src") {
            // src = "https://example.com/icon.png"
            let lit: LitStr = inner.value()?.parse()?;
            check_src(&lit)?;
            set(&mut src, lit, &inner, "icon")
        } else if inner.path.is_ident("mime_type") {
            // mime_type = "image/png"
            let lit: LitStr = inner.value()?.parse()?;
            check_mime_type(&lit.value()).map_err(|m| syn::Error::new(lit.span(), m))?;
            set(&mut mime_type, lit, &inner, "icon")
        } else if inner.path.is_ident("sizes") {
            // sizes = "48x48 96x96"
            let lit: LitStr = inner.value()?.parse()?;
            let parsed = parse_sizes(&lit.value()).map_err(|m| syn::Error::new(lit.span(), m))?;
            set(&mut sizes, parsed, &inner, "icon")
        } else if inner.path.is_ident("theme") {
            // theme = "light" | "dark"
            let lit: LitStr = inner.value()?.parse()?;
            let variant = match lit.value().as_str() {
                "light" => "Light",
                "dark" => "Dark",
                other => {
                    return Err(syn::Error::new(
                        lit.span(),
                        format_args!(
                            "unknown icon theme `{other}`; expected `theme = \"light\"` or `theme = \"dark\"`"
                        ),
                    ));
                }
            };
            set(&mut theme, syn::Ident::new(variant, lit.span()), &inner, "icon")
        } else {
            Err(inner.error(format_args!(
                "unknown `icon` key `{}`; expected `src`, `mime_type`, `sizes` or `theme`",
                path_str(&inner.path)
            )))
        }
    })?;
    let Some(src) = src else {
        return Err(syn::Error::new(
            span,
            format_args!(
                "`icon(..)` needs `src`: `#[{attr}(icon(src = \"https://example.com/icon.png\"))]`"
            ),
        ));
    };
    Ok(Icon {
        src,
        mime_type,
        sizes: sizes.unwrap_or_default(),
        theme,
    })
}

/// The icons as a `&'static [StaticIcon]` expression (a constant).
pub fn tokens(icons: &[Icon]) -> TokenStream {
    let none = quote!(::core::option::Option::None);
    let items = icons.iter().map(|i| {
        let src = &i.src;
        let mime_type = match &i.mime_type {
            Some(m) => quote!(::core::option::Option::Some(#m)),
            None => none.clone(),
        };
        let sizes = &i.sizes;
        let theme = match &i.theme {
            Some(t) => {
                quote!(::core::option::Option::Some(::fusion_runtime::__private::IconTheme::#t))
            }
            None => none.clone(),
        };
        quote! {
            ::fusion_runtime::__private::StaticIcon {
                src: #src,
                mime_type: #mime_type,
                sizes: &[#(#sizes),*],
                theme: #theme,
            }
        }
    });
    quote!({
        const __FUSION_ICONS: &[::fusion_runtime::__private::StaticIcon] = &[#(#items),*];
        __FUSION_ICONS
    })
}

/// [`check_src_text`], its error at the literal.
fn check_src(lit: &LitStr) -> syn::Result<()> {
    check_src_text(&lit.value()).map_err(|m| syn::Error::new(lit.span(), m))
}

/// An icon's `src` is an `https:` URL or a `data:` URI with base64 image data (MCP
/// 2025-11-25 `Icon.src`; plain `http:` is refused, as clients fetch it without TLS).
pub fn check_src_text(src: &str) -> Result<(), String> {
    if src.is_empty() {
        return Err(
            "the icon `src` is empty: write an `https:` URL or a `data:` URI (e.g. `\"https://example.com/icon.png\"`)"
                .to_owned(),
        );
    }
    if src.chars().any(char::is_whitespace) {
        return Err("an icon `src` is a URI: it has no spaces".to_owned());
    }
    let scheme = src.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("https") => {
            let host = src["https:".len()..]
                .strip_prefix("//")
                .and_then(|rest| rest.split(['/', '?', '#']).next())
                .unwrap_or_default();
            if host.is_empty() {
                return Err(
                    "an `https:` icon `src` names a host: `\"https://example.com/icon.png\"`"
                        .to_owned(),
                );
            }
            Ok(())
        }
        Some("data") => {
            let Some((head, data)) = src.split_once(',') else {
                return Err("a `data:` icon `src` is `data:<mime type>;base64,<data>`".to_owned());
            };
            if !head.ends_with(";base64") || data.is_empty() {
                return Err(
                    "a `data:` icon `src` carries base64 image data: `data:<mime type>;base64,<data>`"
                        .to_owned(),
                );
            }
            Ok(())
        }
        Some("http") => Err(
            "an icon `src` is an `https:` URL or a `data:` URI; write `https:` instead of `http:`"
                .to_owned(),
        ),
        Some(other) => Err(format!(
            "an icon `src` is an `https:` URL or a `data:` URI, not `{other}:`"
        )),
        None => Err(
            "an icon `src` is an `https:` URL or a `data:` URI (e.g. `\"https://example.com/icon.png\"`), not a relative path"
                .to_owned(),
        ),
    }
}

/// `image/png`: a type, a slash and a subtype.
fn check_mime_type(mime: &str) -> Result<(), String> {
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    match mime.split_once('/') {
        Some((t, sub)) if token(t) && token(sub) => Ok(()),
        _ => Err(format!(
            "`{mime}` is not a MIME type: write `type/subtype` (e.g. `\"image/png\"`)"
        )),
    }
}

/// `"48x48 96x96"`, `"any"`: sizes separated by spaces, each `WxH` (whole numbers from 1) or
/// `any`.
pub fn parse_sizes(text: &str) -> Result<Vec<String>, String> {
    let sizes: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    if sizes.is_empty() {
        return Err(
            "`sizes` is empty: write `WxH` sizes separated by spaces (`\"48x48 96x96\"`), or `\"any\"`; leave the key out for any size"
                .to_owned(),
        );
    }
    let dimension = |d: &str| {
        !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && d.bytes().any(|b| b != b'0')
    };
    for size in &sizes {
        let ok = size == "any"
            || size
                .split_once('x')
                .is_some_and(|(w, h)| dimension(w) && dimension(h));
        if !ok {
            return Err(format!(
                "malformed icon size `{size}`: write `WxH` (`\"48x48\"`) or `any`, several separated by spaces"
            ));
        }
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srcs_are_https_or_base64_data() {
        for good in [
            "https://example.com/i.png",
            "HTTPS://example.com",
            "https://cdn.example.com:8443/a/b.svg?v=2",
            "data:image/png;base64,iVBORw0KGgo=",
        ] {
            assert_eq!(check_src_text(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "http://example.com/i.png",
            "https:///i.png",
            "https:example.com",
            "ftp://example.com/i.png",
            "javascript:alert(1)",
            "/static/i.png",
            "data:image/png,raw",
            "data:image/png;base64,",
            "https://example.com/a b.png",
        ] {
            assert!(check_src_text(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_are_w_x_h_or_any() {
        assert_eq!(
            parse_sizes("48x48  96x96"),
            Ok(vec!["48x48".to_owned(), "96x96".to_owned()])
        );
        assert_eq!(parse_sizes("any"), Ok(vec!["any".to_owned()]));
        for bad in [
            "",
            "48",
            "48x",
            "x48",
            "0x0",
            "48X48",
            "48x48,96x96",
            "-1x2",
        ] {
            assert!(parse_sizes(bad).is_err(), "{bad}");
        }
    }

    /// The icons in `args` (the inside of `#[tool_action(..)]`), or the first error's message.
    fn icons(args: proc_macro2::TokenStream) -> Result<Vec<Icon>, String> {
        let mut out = Vec::new();
        let parser = syn::meta::parser(|meta| {
            out.push(parse(&meta, "tool_action")?);
            Ok(())
        });
        syn::parse::Parser::parse2(parser, args).map_err(|e| e.to_string())?;
        Ok(out)
    }

    #[test]
    fn both_forms_parse_and_each_mistake_is_named() {
        let parsed = icons(quote!(
            icon = "https://example.com/a.png",
            icon(
                src = "https://example.com/b.svg",
                mime_type = "image/svg+xml",
                sizes = "any",
                theme = "dark"
            )
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].src.value(), "https://example.com/a.png");
        assert!(parsed[0].theme.is_none() && parsed[0].sizes.is_empty());
        assert_eq!(parsed[1].sizes, ["any"]);
        assert_eq!(
            parsed[1].mime_type.as_ref().map(LitStr::value).as_deref(),
            Some("image/svg+xml")
        );
        assert_eq!(
            parsed[1].theme.as_ref().map(ToString::to_string).as_deref(),
            Some("Dark")
        );
        for (args, says) in [
            (quote!(icon), "write `#[tool_action(icon = "),
            (quote!(icon(theme = "dark")), "`icon(..)` needs `src`"),
            (
                quote!(icon(src = "https://a.example", src = "https://b.example")),
                "duplicate `icon` key `src`",
            ),
            (
                quote!(icon(src = "https://a.example", size = "48x48")),
                "unknown `icon` key `size`",
            ),
            (
                quote!(icon(src = "https://a.example", theme = "sepia")),
                "unknown icon theme `sepia`",
            ),
            (
                quote!(icon(src = "https://a.example", mime_type = "png")),
                "is not a MIME type",
            ),
            (
                quote!(icon = "http://a.example/i.png"),
                "instead of `http:`",
            ),
        ] {
            let err = icons(args.clone()).err().unwrap_or_default();
            assert!(err.contains(says), "{args}: {err}");
        }
    }

    #[test]
    fn mime_types_are_type_slash_subtype() {
        assert!(check_mime_type("image/png").is_ok());
        assert!(check_mime_type("image/svg+xml").is_ok());
        for bad in ["", "png", "image/", "/png", "image/png; x=1"] {
            assert!(check_mime_type(bad).is_err(), "{bad}");
        }
    }
}
