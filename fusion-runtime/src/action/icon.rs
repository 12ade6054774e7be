//! Icons declared where their tool, prompt or resource is: [`StaticIcon`] and its
//! [`IconTheme`], data the attributes emit and the lists show (the builder's owned icons,
//! `server::Icon`, are made from them).

/// The theme an icon is drawn for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IconTheme {
    /// For a light background.
    Light,
    /// For a dark background.
    Dark,
}

/// An icon declared where its tool, prompt or resource is (`icon = ".."` or `icon(..)` in
/// `#[tool_action]`, `#[prompt]`, `#[resource]`): known, and checked, at compile time — an
/// `https:` URL or a base64 `data:` URI, sizes `WxH` or `any`, a `light` or `dark` theme. The
/// lists show it unless [`ServerBuilder::icons`](crate::ServerBuilder::icons) sets icons for
/// the same name, and not on a grouped tool (see that method).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StaticIcon {
    /// Where the icon is: an `https:` URL or a `data:` URI.
    pub src: &'static str,
    /// Its MIME type (`image/png`), when declared.
    pub mime_type: Option<&'static str>,
    /// The sizes it fits, each `WxH` (`48x48`) or `any`; empty: any size.
    pub sizes: &'static [&'static str],
    /// The theme it is drawn for; `None` for any.
    pub theme: Option<IconTheme>,
}
