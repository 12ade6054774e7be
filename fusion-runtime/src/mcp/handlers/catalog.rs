//! Prompts, resources and completions over MCP: the catalog's answers as rmcp results, its
//! errors as JSON-RPC errors. rmcp does the version plumbing: `resultType` for 2026-07-28
//! clients (stripped for 2025 ones), cache hints, and the resource-not-found code (`-32002`
//! for 2025 clients, remapped to `-32602` for 2026-07-28 ones).

use std::sync::PoisonError;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
    ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::era::Era;
use super::mcp_handler::{Asked, McpHandler, Retry, to_block};
use super::subscriptions::MAX_SUBSCRIPTIONS;
use crate::completion::CompletionRequest;
use crate::prompt;
use crate::server::catalog::{
    CompletionRef, MAX_URI_BYTES, PromptEntry, ResourceEntry, SurfaceError, SurfaceErrorKind,
    completion_arguments,
};
use crate::server::{Item, RequestScope, Server};

/// The capabilities the catalog adds: prompts, resources and completions, each only when
/// something is registered; with `notifications`, the list-changed and resource
/// subscriptions the server's [`Notifier`](crate::Notifier) sends.
pub(super) fn add_capabilities(
    server: &Server,
    caps: &mut ServerCapabilities,
    notifications: bool,
) {
    let catalog = server.catalog();
    let changes = notifications.then_some(true);
    if !catalog.prompts().is_empty() {
        let mut prompts = rmcp::model::PromptsCapability::default();
        prompts.list_changed = changes;
        caps.prompts = Some(prompts);
    }
    if !catalog.resources().is_empty() {
        let mut resources = rmcp::model::ResourcesCapability::default();
        resources.subscribe = changes;
        resources.list_changed = changes;
        caps.resources = Some(resources);
    }
    if catalog.has_completions() {
        caps.completions = Some(Default::default());
    }
}

fn to_error(e: SurfaceError) -> ErrorData {
    let data = Some(e.data);
    match e.kind {
        SurfaceErrorKind::InvalidParams => ErrorData::invalid_params(e.message, data),
        SurfaceErrorKind::ResourceNotFound => ErrorData::resource_not_found(e.message, data),
        SurfaceErrorKind::Internal => ErrorData::internal_error(e.message, data),
    }
}

fn scope(handler: &McpHandler, context: &RequestContext<RoleServer>, era: &Era) -> RequestScope {
    super::scope::request_scope_in_session(context, era.threshold(&handler.log_threshold))
}

fn to_prompt(p: &PromptEntry) -> Prompt {
    let arguments = p
        .arguments
        .iter()
        .map(|a| {
            let arg = PromptArgument::new(a.name.clone()).with_required(a.required);
            match &a.description {
                Some(d) => arg.with_description(d.clone()),
                None => arg,
            }
        })
        .collect();
    let prompt = Prompt::new(
        p.name.clone(),
        Some(p.info.description.to_string()),
        Some(arguments),
    );
    match &p.info.title {
        Some(t) => prompt.with_title(t.to_string()),
        None => prompt,
    }
}

/// A method of a capability the server does not advertise: `Method not found`, as rmcp
/// answers it.
fn unserved(method: &'static str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("{method}: this server has no prompts, resources or completions of that kind"),
        None,
    )
}

fn has_prompts(server: &Server) -> Result<(), ErrorData> {
    match server.catalog().prompts().is_empty() {
        true => Err(unserved("prompts")),
        false => Ok(()),
    }
}

fn has_resources(server: &Server) -> Result<(), ErrorData> {
    match server.catalog().resources().is_empty() {
        true => Err(unserved("resources")),
        false => Ok(()),
    }
}

/// `prompts/list`.
pub(super) fn list_prompts(server: &Server) -> Result<ListPromptsResult, ErrorData> {
    has_prompts(server)?;
    let mut prompts: Vec<&PromptEntry> = server.catalog().prompts().iter().collect();
    server
        .visibility()
        .retain(Item::Prompt, &mut prompts, |p| &p.name);
    Ok(ListPromptsResult::with_all_items(
        prompts.into_iter().map(to_prompt).collect(),
    ))
}

/// `prompts/get`.
pub(super) async fn get_prompt(
    handler: &McpHandler,
    request: GetPromptRequestParams,
    context: RequestContext<RoleServer>,
    era: &Era,
) -> Result<GetPromptResponse, ErrorData> {
    has_prompts(&handler.server)?;
    let bound_to = format!("prompts/get {}", request.name);
    let asked = handler
        .elicitable(
            &context,
            era,
            scope(handler, &context, era),
            Retry {
                bound_to: (&bound_to, request.arguments.as_ref()),
                state: request.request_state.as_deref(),
                responses: request.input_responses.as_ref(),
            },
            |scope| {
                handler
                    .server
                    .get_prompt(&request.name, request.arguments.clone(), scope)
            },
        )
        .await?;
    let reply = match asked {
        Asked::Done(reply) => reply.map_err(to_error)?,
        Asked::InputRequired(input) => return Ok(GetPromptResponse::InputRequired(input)),
    };
    let (description, messages) = reply.into_parts();
    let messages = messages
        .into_iter()
        .map(|(role, content)| {
            let role = match role {
                prompt::Role::User => Role::User,
                prompt::Role::Assistant => Role::Assistant,
            };
            PromptMessage::new(role, to_block(content))
        })
        .collect();
    let result = GetPromptResult::new(messages);
    Ok(match description {
        Some(d) => result.with_description(d),
        None => result,
    }
    .into())
}

fn described<T>(
    r: &ResourceEntry,
    item: T,
    title: fn(T, String) -> T,
    description: fn(T, String) -> T,
    mime: fn(T, String) -> T,
) -> T {
    let mut item = description(item, r.info.description.to_string());
    if let Some(t) = &r.info.title {
        item = title(item, t.to_string());
    }
    if let Some(m) = &r.info.mime_type {
        item = mime(item, m.to_string());
    }
    item
}

/// `resources/list`: the static resources.
pub(super) fn list_resources(server: &Server) -> Result<ListResourcesResult, ErrorData> {
    has_resources(server)?;
    Ok(ListResourcesResult::with_all_items(
        server
            .catalog()
            .static_resources()
            .filter(|r| server.visibility().is_enabled(Item::Resource, r.info.uri))
            .map(|r| {
                described(
                    r,
                    Resource::new(r.info.uri, r.info.name.to_string()),
                    Resource::with_title,
                    Resource::with_description,
                    Resource::with_mime_type,
                )
            })
            .collect(),
    ))
}

/// `resources/templates/list`.
pub(super) fn list_resource_templates(
    server: &Server,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    has_resources(server)?;
    Ok(ListResourceTemplatesResult::with_all_items(
        server
            .catalog()
            .templates()
            .filter(|r| server.visibility().is_enabled(Item::Resource, r.info.uri))
            .map(|r| {
                described(
                    r,
                    ResourceTemplate::new(r.info.uri, r.info.name.to_string()),
                    ResourceTemplate::with_title,
                    ResourceTemplate::with_description,
                    ResourceTemplate::with_mime_type,
                )
            })
            .collect(),
    ))
}

/// `resources/read`.
pub(super) async fn read_resource(
    handler: &McpHandler,
    request: ReadResourceRequestParams,
    context: RequestContext<RoleServer>,
    era: &Era,
) -> Result<ReadResourceResponse, ErrorData> {
    has_resources(&handler.server)?;
    let bound_to = format!("resources/read {}", request.uri);
    let asked = handler
        .elicitable(
            &context,
            era,
            scope(handler, &context, era),
            Retry {
                bound_to: (&bound_to, None),
                state: request.request_state.as_deref(),
                responses: request.input_responses.as_ref(),
            },
            |scope| handler.server.read_resource(&request.uri, scope),
        )
        .await?;
    let read = match asked {
        Asked::Done(read) => read.map_err(to_error)?,
        Asked::InputRequired(input) => return Ok(ReadResourceResponse::InputRequired(input)),
    };
    let contents = match (read.content.as_text(), read.content.as_base64()) {
        (Some(text), _) => ResourceContents::TextResourceContents {
            uri: read.uri,
            mime_type: read.mime_type,
            text: text.to_owned(),
            meta: None,
        },
        (None, blob) => ResourceContents::BlobResourceContents {
            uri: read.uri,
            mime_type: read.mime_type,
            blob: blob.unwrap_or_default().to_owned(),
            meta: None,
        },
    };
    let mut result = ReadResourceResult::new(vec![contents]);
    if era.is_modern() {
        let cache = handler.server.read_cache(read.resource);
        result.ttl_ms = Some(super::era::ttl_ms(cache));
        result.cache_scope = Some(super::era::to_rmcp_scope(cache.scope));
    }
    Ok(result.into())
}

fn unknown_uri(uri: &str) -> ErrorData {
    let mut shown: String = uri.chars().take(200).collect();
    if shown.len() < uri.len() {
        shown.push_str("...");
    }
    ErrorData::resource_not_found(
        format!(
            "Resource not found: '{shown}'. {}.",
            crate::server::catalog::RESOURCE_NOT_FOUND_RECOVERY
        ),
        Some(serde_json::json!({
            "uri": shown,
            "recovery": crate::server::catalog::RESOURCE_NOT_FOUND_RECOVERY,
        })),
    )
}

/// `resources/subscribe` (2025 clients): remembers the URI for the session; a URI no resource
/// answers is not found. A stateless server has no session to send updates on.
pub(super) fn subscribe(handler: &McpHandler, uri: String) -> Result<(), ErrorData> {
    has_resources(&handler.server)?;
    if handler.sessionless {
        return Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            "Method not found: resources/subscribe needs a session to send notifications/resources/updated on, and this server runs stateless (2026-07-28 clients use subscriptions/listen)",
            None,
        ));
    }
    if uri.len() > MAX_URI_BYTES || !handler.server.catalog().knows_uri(&uri) {
        return Err(unknown_uri(&uri));
    }
    let mut set = handler
        .subscriptions
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if set.len() >= MAX_SUBSCRIPTIONS && !set.contains(&uri) {
        return Err(ErrorData::invalid_params(
            format!(
                "This session already subscribed to {MAX_SUBSCRIPTIONS} resources: unsubscribe from one first"
            ),
            Some(serde_json::json!({ "limit": MAX_SUBSCRIPTIONS })),
        ));
    }
    set.insert(uri);
    Ok(())
}

/// `resources/unsubscribe` (2025 clients): forgets the URI; unsubscribing twice is fine.
pub(super) fn unsubscribe(handler: &McpHandler, uri: &str) -> Result<(), ErrorData> {
    has_resources(&handler.server)?;
    handler
        .subscriptions
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(uri);
    Ok(())
}

/// `completion/complete`.
pub(super) async fn complete(
    handler: &McpHandler,
    request: CompleteRequestParams,
    context: RequestContext<RoleServer>,
    era: &Era,
) -> Result<CompleteResult, ErrorData> {
    if !handler.server.catalog().has_completions() {
        return Err(unserved("completion"));
    }
    let reference = match (
        request.r#ref.as_prompt_name(),
        request.r#ref.as_resource_uri(),
    ) {
        (Some(name), _) => CompletionRef::Prompt(name.to_owned()),
        (None, Some(uri)) => CompletionRef::Resource(uri.to_owned()),
        (None, None) => {
            return Err(ErrorData::invalid_params(
                "Unknown completion reference: use ref/prompt or ref/resource",
                None,
            ));
        }
    };
    let arguments =
        completion_arguments(request.context.as_ref().and_then(|c| c.arguments.as_ref()));
    let completion =
        CompletionRequest::new(request.argument.name, request.argument.value, arguments);
    let found = handler
        .server
        .complete(&reference, completion, scope(handler, &context, era))
        .await
        .map_err(to_error)?;
    let total = u32::try_from(found.total).unwrap_or(u32::MAX);
    let info = CompletionInfo::with_pagination(found.values, Some(total), found.has_more)
        .map_err(|e| ErrorData::internal_error(e, None))?;
    Ok(CompleteResult::new(info))
}
