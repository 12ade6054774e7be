//! Icons in `#[tool_action]`, `#[prompt]` and `#[resource]`: the short form, the full form,
//! several of them, and each field; `main` checks what the descriptors carry.

use fusion_runtime::server::{IconTheme, StaticIcon};
use fusion_runtime::{
    PromptAction, PromptReply, ResourceAction, ResourceContent, ToolAction, ToolError, ToolInput,
    prompt, resource, tool_action,
};

#[derive(serde::Deserialize, ToolInput)]
struct Id {
    id: String,
}

/// One icon, short form.
#[tool_action(name = "billing.get", icon = "https://example.com/get.png")]
async fn get(input: Id) -> Result<String, ToolError> {
    Ok(input.id)
}

/// Two icons: the short form and the full one, with every field.
#[tool_action(
    name = "billing.refund",
    destructive,
    icon = "https://example.com/refund.png",
    icon(
        src = "data:image/svg+xml;base64,PHN2Zy8+",
        mime_type = "image/svg+xml",
        sizes = "any",
        theme = "dark"
    ),
    scopes = ["billing:write"]
)]
async fn refund(input: Id) -> Result<String, ToolError> {
    Ok(input.id)
}

/// No icon.
#[tool_action(name = "billing.plain")]
async fn plain(input: Id) -> Result<String, ToolError> {
    Ok(input.id)
}

/// A prompt with a light-theme icon in two sizes.
#[prompt(icon(
    src = "https://example.com/remind.png",
    sizes = "48x48 96x96",
    theme = "light"
))]
async fn remind() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("pay"))
}

/// A static resource with an icon.
#[resource(uri = "billing://policy", icon = "https://example.com/policy.png")]
async fn policy() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("net 30"))
}

/// A template with an icon.
#[resource(
    template = "billing://invoices/{id}",
    icon(src = "https://example.com/i.png", mime_type = "image/png")
)]
async fn invoice(p: Id) -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(p.id))
}

fn main() {
    assert_eq!(
        GetAction::info().icons,
        [StaticIcon {
            src: "https://example.com/get.png",
            mime_type: None,
            sizes: &[],
            theme: None,
        }]
    );
    assert_eq!(
        RefundAction::info().icons[1],
        StaticIcon {
            src: "data:image/svg+xml;base64,PHN2Zy8+",
            mime_type: Some("image/svg+xml"),
            sizes: &["any"],
            theme: Some(IconTheme::Dark),
        }
    );
    assert!(PlainAction::info().icons.is_empty());
    assert_eq!(RemindPrompt::info().icons[0].sizes, ["48x48", "96x96"]);
    assert_eq!(RemindPrompt::info().icons[0].theme, Some(IconTheme::Light));
    assert_eq!(PolicyResource::info().icons.len(), 1);
    assert_eq!(
        InvoiceResource::info().icons[0].mime_type,
        Some("image/png")
    );
}
