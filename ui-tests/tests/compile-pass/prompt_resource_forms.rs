use fusion_runtime::prompt::NoArguments;
use fusion_runtime::{
    CompletionRequest, Content, Context, PromptArguments, PromptReply, ResourceContent, Server,
    ToolError, ToolInput, prompt, resource,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// A tone.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Tone {
    /// Firm.
    Firm,
    /// Kind.
    Kind,
}

/// Strings, optional strings and string enums are prompt arguments.
#[derive(Deserialize, ToolInput, PromptArguments)]
struct Args {
    /// An ID.
    id: String,
    /// A note.
    note: Option<String>,
    /// A tone.
    tone: Option<Tone>,
    /// Left out of the arguments.
    #[serde(skip)]
    #[allow(dead_code)]
    cache: Vec<u32>,
}

struct Store;

async fn ids(req: CompletionRequest) -> Vec<String> {
    vec![req.value().to_owned()]
}

async fn ids_from_store(_: CompletionRequest, _: Context<Store>) -> Vec<String> {
    Vec::new()
}

/// No arguments.
#[prompt]
async fn plain() -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user("hi"))
}

/// Arguments and state, with completers.
#[prompt(name = "x.full", title = "Full", complete(id = ids, note = ids_from_store))]
async fn full(a: Args, _s: Context<Store>) -> Result<PromptReply, anyhow::Error> {
    let _ = (a.note, a.tone.map(|t| matches!(t, Tone::Firm | Tone::Kind)));
    Ok(PromptReply::new()
        .user(a.id)
        .assistant(Content::image("AA==", "image/png")))
}

/// State only.
#[prompt]
async fn stateful(_: NoArguments, _s: Context<Store>) -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new())
}

/// Static.
#[resource(uri = "x://static", mime = "text/plain")]
async fn fixed() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text("x"))
}

/// Static with state.
#[resource(uri = "x://state", name = "state", description = "The state.")]
async fn from_state(_s: Context<Store>) -> Result<ResourceContent, std::io::Error> {
    Ok(ResourceContent::blob([1, 2, 3]))
}

/// Parameters.
#[derive(Deserialize, ToolInput)]
struct Id {
    /// An ID.
    id: String,
}

/// Template with state and a completer.
#[resource(template = "x://items/{id}", complete(id = ids))]
async fn item(p: Id, _s: Context<Store>) -> Result<ResourceContent, ToolError> {
    ResourceContent::json(&p.id)
}

fn main() {
    // Accepted by the macros is not enough: the builder must take every form too.
    let server = Server::builder()
        .state(Store)
        .prompt::<PlainPrompt>()
        .prompt::<FullPrompt>()
        .prompt::<StatefulPrompt>()
        .resource::<FixedResource>()
        .resource::<FromStateResource>()
        .resource::<ItemResource>()
        .build()
        .unwrap_or_else(|e| panic!("the builder refuses a form the macros accept: {e}"));
    assert_eq!(server.catalog().prompts().len(), 3);
    assert_eq!(server.catalog().resources().len(), 3);
}
