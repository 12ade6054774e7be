//! The prompt and resource registry in process: what `build()` refuses, how handler failures
//! and panics come out, typed template parameters, and the bounds on what a client sends.

use fusion_runtime::catalog::{CatalogBuildError, CompletionRef, SurfaceErrorKind};
use fusion_runtime::codes::CONFLICT;
use fusion_runtime::prompt::PromptArguments;
use fusion_runtime::server::{BuildError, RequestScope};
use fusion_runtime::{
    CompletionRequest, Context, PromptReply, ResourceContent, Server, ToolError, ToolInput, error,
    prompt, resource,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// A count, typed.
#[derive(Deserialize, ToolInput)]
pub struct Page {
    /// Which page.
    #[fusion(range(min = 1, max = 9))]
    pub n: u32,
}

/// One page of a book.
#[resource(template = "book://pages/{n}", name = "page", mime = "text/plain")]
async fn page(p: Page) -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(format!("page {}", p.n)))
}

/// Always panics.
#[resource(uri = "book://broken", name = "broken")]
async fn broken() -> Result<ResourceContent, ToolError> {
    panic!("a bug kept on purpose")
}

/// A plain error from the author's code.
#[resource(uri = "book://io", name = "io")]
async fn io_failure() -> Result<ResourceContent, std::io::Error> {
    Err(std::io::Error::other("disk on fire"))
}

/// JSON without a declared MIME type.
#[resource(uri = "book://meta", name = "meta")]
async fn meta() -> Result<ResourceContent, ToolError> {
    ResourceContent::json(&json!({"pages": 9}))
}

/// Bytes.
#[resource(uri = "book://cover", name = "cover", mime = "image/png")]
async fn cover() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::blob([0x89, b'P', b'N', b'G']))
}

/// No arguments, a conflict.
#[prompt]
async fn busy() -> Result<PromptReply, ToolError> {
    Err(error(CONFLICT, "Someone else is drafting"))
}

/// Panics.
#[prompt]
async fn panicky() -> Result<PromptReply, ToolError> {
    panic!("boom")
}

/// A state the prompt needs.
pub struct Greeting(&'static str);

/// Greets.
#[prompt]
async fn greet(
    _: fusion_runtime::prompt::NoArguments,
    g: Context<Greeting>,
) -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().assistant(g.state().0))
}

/// What to outline.
#[derive(Deserialize, ToolInput, fusion_runtime::PromptArguments)]
pub struct Topic {
    /// The topic.
    pub topic: String,
}

/// Outlines a topic.
#[prompt]
async fn outline(t: Topic) -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new().user(format!("Outline {}", t.topic)))
}

fn book() -> Server {
    Server::builder()
        .state(Greeting("hello"))
        .resource::<PageResource>()
        .resource::<BrokenResource>()
        .resource::<IoFailureResource>()
        .resource::<CoverResource>()
        .resource::<MetaResource>()
        .prompt::<BusyPrompt>()
        .prompt::<PanickyPrompt>()
        .prompt::<GreetPrompt>()
        .prompt::<OutlinePrompt>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn template_parameters_are_typed_from_their_text() {
    let server = book();
    let read = server
        .read_resource("book://pages/3", RequestScope::detached())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(read.content.as_text(), Some("page 3"));
    assert_eq!(read.mime_type.as_deref(), Some("text/plain"));

    let e = server
        .read_resource("book://pages/12", RequestScope::detached())
        .await
        .expect_err("out of range");
    assert_eq!(e.kind, SurfaceErrorKind::InvalidParams);
    assert!(
        e.message.contains(
            "<field name=\"n\">Too large. You sent: 12. Expected a number &lt;= 9.</field>"
        ),
        "{}",
        e.message
    );
    let e = server
        .read_resource("book://pages/three", RequestScope::detached())
        .await
        .expect_err("not a number");
    assert!(
        e.message.contains("Invalid type. You sent: 'three'."),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn failures_and_panics_come_out_as_errors_and_the_server_keeps_serving() {
    let server = book();
    let e = server
        .read_resource("book://broken", RequestScope::detached())
        .await
        .expect_err("panics");
    assert_eq!(e.kind, SurfaceErrorKind::Internal);
    assert!(e.message.contains("panicked"), "{}", e.message);
    let e = server
        .read_resource("book://io", RequestScope::detached())
        .await
        .expect_err("fails");
    assert_eq!(e.kind, SurfaceErrorKind::Internal);
    assert!(
        e.message.contains("book://io failed: disk on fire"),
        "{}",
        e.message
    );
    let e = server
        .get_prompt("panicky", None, RequestScope::detached())
        .await
        .expect_err("panics");
    assert_eq!(e.kind, SurfaceErrorKind::Internal);
    let e = server
        .get_prompt("busy", None, RequestScope::detached())
        .await
        .expect_err("conflict");
    assert_eq!(e.kind, SurfaceErrorKind::Internal);
    assert!(e.message.starts_with("<tool_error code=\"CONFLICT\""));
    let reply = server
        .get_prompt("greet", None, RequestScope::detached())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(reply.messages().len(), 1);

    let cover = server
        .read_resource("book://cover", RequestScope::detached())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(cover.content.as_base64(), Some("iVBORw=="));
    assert_eq!(cover.mime_type.as_deref(), Some("image/png"));
    let meta = server
        .read_resource("book://meta", RequestScope::detached())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(meta.mime_type.as_deref(), Some("application/json"));
    assert!(
        meta.content
            .as_text()
            .is_some_and(|t| t.contains("\"pages\": 9"))
    );
}

#[tokio::test]
async fn a_cancelled_request_stops_the_handler() {
    let server = book();
    let token = fusion_runtime::context::CancellationToken::new();
    token.cancel();
    let scope = RequestScope::detached().with_cancellation(token);
    let e = server
        .read_resource("book://pages/1", scope)
        .await
        .expect_err("cancelled");
    assert_eq!(e.kind, SurfaceErrorKind::Internal);
}

#[tokio::test]
async fn what_a_client_sends_is_bounded() {
    let server = book();
    let long = format!("book://pages/{}", "9".repeat(10_000));
    let e = server
        .read_resource(&long, RequestScope::detached())
        .await
        .expect_err("too long");
    assert_eq!(e.kind, SurfaceErrorKind::ResourceNotFound);
    assert!(e.message.len() < 300, "{}", e.message);
    assert!(e.data.to_string().len() < 600, "{}", e.data);

    let huge_name = "x".repeat(100_000);
    let e = server
        .get_prompt(&huge_name, None, RequestScope::detached())
        .await
        .expect_err("unknown");
    assert_eq!(e.kind, SurfaceErrorKind::InvalidParams);
    assert!(e.message.len() < 200, "{}", e.message);
    assert!(e.data.to_string().len() < 600);

    let many: serde_json::Map<String, Value> =
        (0..5_000).map(|i| (format!("k{i}"), json!("v"))).collect();
    let e = server
        .get_prompt("outline", Some(many), RequestScope::detached())
        .await
        .expect_err("5000 unknown keys");
    assert!(e.message.len() <= fusion_runtime::envelope::MAX_ENVELOPE_BYTES);
    assert!(e.message.contains("<omitted count="), "{}", e.message);
    assert!(e.data["issues"].as_array().is_some_and(|i| i.len() <= 20));

    let c = server
        .complete(
            &CompletionRef::Resource("book://pages/{n}".into()),
            CompletionRequest::new("n", "x".repeat(100_000), Default::default()),
            RequestScope::detached(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(c.values.is_empty());
}

/// Arguments MCP cannot carry, with the marker implemented by hand (the derive refuses them
/// at compile time).
#[derive(Deserialize, ToolInput)]
pub struct Numeric {
    /// A number.
    pub count: u32,
}
impl PromptArguments for Numeric {}

/// Numeric arguments.
#[prompt]
async fn numeric(_: Numeric) -> Result<PromptReply, ToolError> {
    Ok(PromptReply::new())
}

/// Parameters that do not match the template.
#[derive(Deserialize, ToolInput)]
pub struct WrongParams {
    /// Not in the template.
    pub other: String,
}

/// Mismatched.
#[resource(template = "x://{id}", name = "mismatched")]
async fn mismatched(_: WrongParams) -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(""))
}

/// A bad template.
#[derive(Deserialize, ToolInput)]
pub struct Two {
    /// A.
    pub a: String,
    /// B.
    pub b: String,
}

/// Two variables side by side.
#[resource(template = "x://{a}{b}", name = "adjacent")]
async fn adjacent(_: Two) -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(""))
}

fn build_error(b: fusion_runtime::ServerBuilder) -> CatalogBuildError {
    match b.build() {
        Err(BuildError::Catalog(e)) => e,
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("built"),
    }
}

#[test]
fn build_refuses_what_cannot_be_served() {
    let e = build_error(Server::builder().prompt::<NumericPrompt>());
    assert!(
        matches!(&e, CatalogBuildError::PromptArgument { field, .. } if field == "count"),
        "{e}"
    );
    let e = build_error(Server::builder().resource::<MismatchedResource>());
    assert!(
        matches!(e, CatalogBuildError::TemplateVariables { .. }),
        "{e}"
    );
    let e = build_error(Server::builder().resource::<AdjacentResource>());
    assert!(matches!(e, CatalogBuildError::Template { .. }), "{e}");
    let e = build_error(
        Server::builder()
            .prompt::<BusyPrompt>()
            .prompt::<BusyPrompt>(),
    );
    assert!(matches!(e, CatalogBuildError::DuplicatePrompt(_)), "{e}");
    let e = build_error(Server::builder().prompt::<GreetPrompt>());
    assert!(matches!(e, CatalogBuildError::MissingState { .. }), "{e}");
    assert!(e.to_string().contains("Greeting"), "{e}");
}

#[test]
fn prompt_names_follow_the_exposure_separator() {
    /// Dotted.
    #[prompt(name = "book.summary")]
    async fn summary() -> Result<PromptReply, ToolError> {
        Ok(PromptReply::new())
    }
    let flat = Server::builder()
        .prompt::<SummaryPrompt>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(flat.catalog().prompts()[0].name, "book_summary");
    let dashed = Server::builder()
        .separator("-")
        .prompt::<SummaryPrompt>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dashed.catalog().prompts()[0].name, "book-summary");
}
