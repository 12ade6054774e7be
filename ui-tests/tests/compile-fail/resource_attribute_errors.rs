use fusion_runtime::{ResourceContent, ToolError, resource};

/// Both a URI and a template.
#[resource(uri = "x://a", template = "x://{id}")]
async fn both() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(""))
}

/// A static URI with a variable.
#[resource(uri = "x://{id}")]
async fn braces() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(""))
}

/// Neither.
#[resource(name = "nothing")]
async fn neither() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(""))
}

#[resource(uri = "x://undocumented")]
async fn undocumented() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(""))
}

/// A template without its parameters.
#[resource(template = "x://{id}", mime = "text/plain")]
async fn no_params() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(""))
}

/// An unknown key.
#[resource(uri = "x://b", mimetype = "text/plain")]
async fn unknown_key() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(""))
}

fn main() {}
