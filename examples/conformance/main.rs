//! A Fusion server exposing the tools the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) calls, so `.ci/run` can run the suite against a real
//! Fusion server over streamable HTTP.
//!
//! ```text
//! cargo run --example conformance -- serve --http 127.0.0.1:8080
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:8080/mcp --scenario tools-list
//! ```
//!
//! Each tool is an ordinary `#[tool_action]`; what the suite checks is in its doc comment.

use std::process::ExitCode;
use std::time::Duration;

use fusion_runtime::codes::INTERNAL_ERROR;
use fusion_runtime::context::Elicited;
use fusion_runtime::{
    Content, Context, LogLevel, PromptArguments, PromptReply, ResourceContent, Server, ToolError,
    ToolInput, ToolResponse, error, prompt, resource, tool_action,
};
use serde::Deserialize;
use serde_json::json;

/// A 1×1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// One millisecond of silence: a RIFF/WAVE file, PCM, mono, 8 kHz, 8 bits, 8 samples.
const SILENCE_WAV: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

const STEP: Duration = Duration::from_millis(50);

/// No arguments.
#[derive(Deserialize, ToolInput)]
pub struct NoArgs {}

/// Returns one text block.
#[tool_action(name = "test_simple_text", read_only)]
async fn simple_text(_: NoArgs) -> Result<ToolResponse, ToolError> {
    Ok(ToolResponse::text(
        "This is a simple text response for testing.",
    ))
}

/// Returns one image block: a 1×1 red PNG.
#[tool_action(name = "test_image_content", read_only)]
async fn image_content(_: NoArgs) -> Result<ToolResponse, ToolError> {
    Ok(ToolResponse::content([Content::image(
        RED_PIXEL_PNG,
        "image/png",
    )]))
}

/// Returns one audio block: a tiny WAV file.
#[tool_action(name = "test_audio_content", read_only)]
async fn audio_content(_: NoArgs) -> Result<ToolResponse, ToolError> {
    Ok(ToolResponse::content([Content::audio(
        SILENCE_WAV,
        "audio/wav",
    )]))
}

fn embedded() -> Content {
    Content::resource(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Returns one embedded text resource.
#[tool_action(name = "test_embedded_resource", read_only)]
async fn embedded_resource(_: NoArgs) -> Result<ToolResponse, ToolError> {
    Ok(ToolResponse::content([embedded()]))
}

/// Returns text, an image and an embedded resource in one result.
#[tool_action(name = "test_multiple_content_types", read_only)]
async fn multiple_content_types(_: NoArgs) -> Result<ToolResponse, ToolError> {
    Ok(ToolResponse::content([
        Content::text("Multiple content types test:"),
        Content::image(RED_PIXEL_PNG, "image/png"),
        embedded(),
    ]))
}

/// Sends three log messages at info level, 50 ms apart, while it runs.
#[tool_action(name = "test_tool_with_logging", read_only)]
async fn tool_with_logging(_: NoArgs, cx: Context) -> Result<ToolResponse, ToolError> {
    cx.log(LogLevel::Info, "Tool execution started").await;
    tokio::time::sleep(STEP).await;
    cx.log(LogLevel::Info, "Tool processing data").await;
    tokio::time::sleep(STEP).await;
    cx.log(LogLevel::Info, "Tool execution completed").await;
    Ok(ToolResponse::text("Logging test completed"))
}

/// Reports progress 0, 50 and 100 of 100, 50 ms apart, when the client sent a progress token.
#[tool_action(name = "test_tool_with_progress", read_only)]
async fn tool_with_progress(_: NoArgs, cx: Context) -> Result<ToolResponse, ToolError> {
    for (i, message) in ["started", "halfway", "done"].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        cx.progress(i as f64 * 50.0, Some(100.0), Some(message))
            .await;
    }
    Ok(ToolResponse::text("Progress test completed"))
}

/// Always fails: an `isError: true` result carrying a `<tool_error>` envelope.
#[tool_action(name = "test_error_handling", read_only)]
async fn error_handling(_: NoArgs) -> Result<ToolResponse, ToolError> {
    Err(error(
        INTERNAL_ERROR,
        "This tool intentionally returns an error for testing",
    )
    .recovery("Do not retry: this tool always fails")
    .critical())
}

/// A postal address.
// The suite looks for `$defs.address`: the container rename names the schema.
#[derive(Deserialize, ToolInput)]
#[serde(rename = "address")]
#[fusion(allow_unknown_fields)]
pub struct Address {
    /// The street and number.
    pub street: Option<String>,
    /// The city.
    pub city: Option<String>,
}

/// The JSON Schema 2020-12 tool's arguments: its schema carries `$schema`, `$defs` and
/// `additionalProperties: false`.
#[derive(Deserialize, ToolInput)]
pub struct SchemaFeatures {
    /// A name.
    pub name: Option<String>,
    /// An address, by reference to `$defs`.
    pub address: Option<Address>,
}

/// Tool with JSON Schema 2020-12 features
#[tool_action(name = "json_schema_2020_12_tool", read_only)]
async fn json_schema_2020_12_tool(input: SchemaFeatures) -> Result<ToolResponse, ToolError> {
    let city = input.address.and_then(|a| a.city);
    Ok(ToolResponse::text(format!(
        "name: {}, city: {}",
        input.name.as_deref().unwrap_or("(none)"),
        city.as_deref().unwrap_or("(none)")
    )))
}

/// A simple prompt without arguments.
#[prompt(name = "test_simple_prompt")]
async fn simple_prompt() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("This is a simple prompt for testing."))
}

/// The two arguments of `test_prompt_with_arguments`.
#[derive(Deserialize, ToolInput, PromptArguments)]
pub struct TwoArgs {
    /// First test argument.
    pub arg1: String,
    /// Second test argument.
    pub arg2: String,
}

/// A prompt with two required arguments.
#[prompt(name = "test_prompt_with_arguments")]
async fn prompt_with_arguments(args: TwoArgs) -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user(format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        args.arg1, args.arg2
    )))
}

/// The argument of `test_prompt_with_embedded_resource`.
#[derive(Deserialize, ToolInput, PromptArguments)]
pub struct ResourceArg {
    /// URI of the resource to embed.
    #[serde(rename = "resourceUri")]
    pub resource_uri: String,
}

/// A prompt that embeds a resource.
#[prompt(name = "test_prompt_with_embedded_resource")]
async fn prompt_with_embedded_resource(args: ResourceArg) -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new()
        .user(Content::resource(
            args.resource_uri,
            "text/plain",
            "Embedded resource content for testing.",
        ))
        .user("Please process the embedded resource above."))
}

/// A prompt with an image.
#[prompt(name = "test_prompt_with_image")]
async fn prompt_with_image() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new()
        .user(Content::image(RED_PIXEL_PNG, "image/png"))
        .user("Please analyze the image above."))
}

/// A static text resource.
#[resource(uri = "test://static-text", name = "static-text", mime = "text/plain")]
async fn static_text() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(
        "This is the content of the static text resource.",
    ))
}

/// A static binary resource: a 1×1 red PNG.
#[resource(
    uri = "test://static-binary",
    name = "static-binary",
    mime = "image/png"
)]
async fn static_binary() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::blob_base64(RED_PIXEL_PNG))
}

/// Changes test://watched-resource: clients that subscribed to it (`resources/subscribe`,
/// `subscriptions/listen`) are told so.
#[tool_action(name = "test_update_watched_resource")]
async fn update_watched_resource(_: NoArgs, cx: Context) -> Result<String, ToolError> {
    let listeners = cx.notifier().resource_updated("test://watched-resource");
    Ok(format!(
        "Updated test://watched-resource ({listeners} listening)"
    ))
}

/// A resource clients subscribe to.
#[resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    mime = "text/plain"
)]
async fn watched_resource() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("Watched resource content."))
}

/// The parameter of the template resource.
#[derive(Deserialize, ToolInput)]
pub struct TemplateId {
    /// The ID substituted into the URI.
    pub id: String,
}

/// A resource template: its JSON names the ID it was read with.
#[resource(
    template = "test://template/{id}/data",
    name = "template-data",
    mime = "application/json"
)]
async fn template_data(p: TemplateId) -> Result<ResourceContent, ToolError> {
    ResourceContent::json(&serde_json::json!({
        "id": p.id,
        "templateTest": true,
        "data": format!("Data for ID: {}", p.id),
    }))
}

/// A message to show.
#[derive(Deserialize, ToolInput)]
pub struct Ask {
    /// The text of the form.
    #[fusion(length(max = 500))]
    pub message: String,
}

/// The user's answer as the tools below report it.
fn reported(answer: Elicited<serde_json::Value>) -> String {
    match answer {
        Elicited::Accept(content) => format!("User response: action=accept, content={content}"),
        Elicited::Decline => "User response: action=decline".to_owned(),
        Elicited::Cancel => "User response: action=cancel".to_owned(),
    }
}

fn object(v: serde_json::Value) -> fusion_runtime::input::JsonObject {
    match v {
        serde_json::Value::Object(m) => m,
        _ => Default::default(),
    }
}

/// Asks the user for a username and an e-mail address (`elicitation/create`).
#[tool_action(name = "test_elicitation")]
async fn elicitation(input: Ask, cx: Context) -> Result<ToolResponse, ToolError> {
    let schema = object(json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    }));
    let answer = cx.elicit_with_schema(input.message, schema).await?;
    Ok(ToolResponse::text(reported(answer)))
}

/// Asks with a form whose every field has a default (SEP-1034).
#[tool_action(name = "test_elicitation_sep1034_defaults")]
async fn elicitation_sep1034_defaults(_: NoArgs, cx: Context) -> Result<ToolResponse, ToolError> {
    let schema = object(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    }));
    let answer = cx
        .elicit_with_schema(
            "Please review and update the form fields with defaults",
            schema,
        )
        .await?;
    Ok(ToolResponse::text(reported(answer)))
}

/// Asks with every enum form (SEP-1330): untitled and titled single-select, the legacy
/// `enumNames`, untitled and titled multi-select.
#[tool_action(name = "test_elicitation_sep1330_enums")]
async fn elicitation_sep1330_enums(_: NoArgs, cx: Context) -> Result<ToolResponse, ToolError> {
    let schema = object(json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Choose an option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Choose a titled option",
                             "oneOf": [{"const": "value1", "title": "First Option"},
                                       {"const": "value2", "title": "Second Option"},
                                       {"const": "value3", "title": "Third Option"}]},
            "legacyEnum": {"type": "string", "description": "Choose a legacy option",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Choose multiple options",
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Choose multiple titled options",
                            "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                {"const": "value2", "title": "Second Choice"},
                                                {"const": "value3", "title": "Third Choice"}]}}
        }
    }));
    let answer = cx
        .elicit_with_schema("Please select options from the enum fields", schema)
        .await?;
    Ok(ToolResponse::text(reported(answer)))
}

/// A prompt for the client's model.
#[derive(Deserialize, ToolInput)]
pub struct SamplingPrompt {
    /// What to ask the model.
    #[fusion(length(max = 2000))]
    pub prompt: String,
}

/// Asks the client's model (`sampling/createMessage`; deprecated by MCP, SEP-2577).
#[tool_action(name = "test_sampling")]
async fn sampling(input: SamplingPrompt, cx: Context) -> Result<ToolResponse, ToolError> {
    let result = cx
        .sample(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": input.prompt}}],
            "maxTokens": 100
        }))
        .await?;
    let text = result["content"]["text"].as_str().unwrap_or("(no text)");
    Ok(ToolResponse::text(format!("LLM response: {text}")))
}

/// The page size of the lists when `CONFORMANCE_PAGE_SIZE` sets one (the official clients'
/// pagination tests); unpaginated otherwise, as the conformance suite expects.
pub const PAGE_SIZE_ENV: &str = "CONFORMANCE_PAGE_SIZE";

/// The conformance server, built.
pub fn server() -> Result<Server, fusion_runtime::server::BuildError> {
    builder().build()
}

/// The conformance server's builder: every tool, prompt and resource the suite calls (the
/// Lambda example adds its own to it).
pub fn builder() -> fusion_runtime::ServerBuilder {
    let builder = Server::builder();
    let builder = match std::env::var(PAGE_SIZE_ENV)
        .ok()
        .map(|s| s.parse::<usize>())
    {
        Some(Ok(size)) => builder.page_size(size),
        Some(Err(_)) | None => builder,
    };
    builder
        .name("fusion-conformance")
        .action::<SimpleTextAction>()
        .action::<ImageContentAction>()
        .action::<AudioContentAction>()
        .action::<EmbeddedResourceAction>()
        .action::<MultipleContentTypesAction>()
        .action::<ToolWithLoggingAction>()
        .action::<ToolWithProgressAction>()
        .action::<ErrorHandlingAction>()
        .action::<JsonSchema202012ToolAction>()
        .action::<ElicitationAction>()
        .action::<ElicitationSep1034DefaultsAction>()
        .action::<ElicitationSep1330EnumsAction>()
        .action::<SamplingAction>()
        .action::<UpdateWatchedResourceAction>()
        .prompt::<SimplePromptPrompt>()
        .prompt::<PromptWithArgumentsPrompt>()
        .prompt::<PromptWithEmbeddedResourcePrompt>()
        .prompt::<PromptWithImagePrompt>()
        .resource::<StaticTextResource>()
        .resource::<StaticBinaryResource>()
        .resource::<WatchedResourceResource>()
        .resource::<TemplateDataResource>()
}

#[tokio::main]
async fn main() -> ExitCode {
    match server() {
        Ok(server) => fusion_runtime::cli::run(server).await,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
