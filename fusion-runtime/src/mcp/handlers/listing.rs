//! The lists and the content methods as the server's listing settings shape them: method
//! middleware around them ([`MethodMiddleware`](crate::server::MethodMiddleware)), a refusal
//! as the method's own JSON-RPC error, the lists cut into pages behind sealed cursors, and
//! icons for the clients whose protocol version has them.

use std::future::Future;

use rmcp::model::{
    ErrorCode, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::era::{CachedList, Era};
use super::mcp_handler::McpHandler;
use super::{catalog, tools};
use crate::auth::{Principal, Seal};
use crate::envelope::ToolError;
use crate::server::{Icon, IconTheme, Item, Method, MethodRequest, Server};

/// The longest cursor read, in bytes: longer ones are refused before anything is decoded.
pub const MAX_CURSOR_BYTES: usize = 256;

/// The first protocol version with `icons`.
const ICONS_SINCE: &str = "2025-11-25";

/// A list cursor: `pg1.`, the position in base64url, `.`, its HMAC-SHA256 (see [`Seal`]).
const CURSOR: Seal = Seal::new("pg1.", MAX_CURSOR_BYTES);

/// What a cursor says: which list, where the next page starts, and the visibility
/// generation the list was read at.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Position {
    #[serde(rename = "l")]
    list: String,
    #[serde(rename = "o")]
    offset: usize,
    #[serde(rename = "g")]
    generation: u64,
}

/// The key cursors are sealed with: the builder's `requestState` key, else the one
/// `requestState` uses (the environment's, else the process's).
pub(crate) fn key(server: &Server) -> Option<std::sync::Arc<[u8]>> {
    server
        .request_state_key()
        .or_else(|| super::request_state::key().map(std::sync::Arc::from))
}

fn bad_cursor(method: Method, why: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "Invalid cursor for {method}: {why}. Send the nextCursor of the previous page exactly as received, or list again without a cursor."
        ),
        Some(json!({ "method": method.as_str() })),
    )
}

/// Where the page `cursor` asks for starts (0 without one); `-32602` for a cursor this
/// server did not issue for this list, or issued before the last visibility change.
fn start(server: &Server, method: Method, cursor: Option<&str>) -> Result<usize, ErrorData> {
    let Some(cursor) = cursor else {
        return Ok(0);
    };
    let key = key(server).ok_or_else(|| bad_cursor(method, "this server cannot check cursors"))?;
    let payload = CURSOR.open(&key, cursor).map_err(|e| {
        let why = match e {
            crate::auth::SealError::TooLarge => "it is longer than any cursor this server issues",
            _ => "it is not a cursor this server issued",
        };
        bad_cursor(method, why)
    })?;
    let position: Position = serde_json::from_slice(&payload)
        .map_err(|_| bad_cursor(method, "it is not a cursor this server issued"))?;
    if position.list != method.as_str() {
        return Err(bad_cursor(method, "it was issued for another list"));
    }
    if position.generation != server.visibility().generation() {
        return Err(ErrorData::invalid_params(
            format!(
                "Invalid cursor for {method}: the list changed since it was issued (a tool, prompt or resource was enabled or disabled). List again without a cursor."
            ),
            Some(json!({ "method": method.as_str(), "stale": true })),
        ));
    }
    Ok(position.offset)
}

/// The page of `items` from `start`, and the cursor of the next page when there is one.
fn page<T>(
    server: &Server,
    method: Method,
    mut items: Vec<T>,
    start: usize,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let Some(size) = server.page_size() else {
        return Ok((items, None));
    };
    if start > items.len() {
        return Err(bad_cursor(method, "the list is shorter than it says"));
    }
    let end = start.saturating_add(size).min(items.len());
    let next = match end < items.len() {
        false => None,
        true => {
            let position = Position {
                list: method.as_str().to_owned(),
                offset: end,
                generation: server.visibility().generation(),
            };
            let key = key(server).ok_or_else(|| {
                ErrorData::internal_error("no key to sign the next page's cursor with", None)
            })?;
            let payload = serde_json::to_vec(&position)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            let sealed = CURSOR
                .seal(&key, &payload)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            Some(sealed)
        }
    };
    items.truncate(end);
    items.drain(..start);
    Ok((items, next))
}

/// Whether the request's protocol version lists icons (2025-11-25 and later).
fn shows_icons(context: &RequestContext<RoleServer>) -> bool {
    if let Some(v) = context.protocol_version() {
        return v.as_str() >= ICONS_SINCE;
    }
    #[cfg(feature = "server-http")]
    if let Some(v) = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.headers.get("mcp-protocol-version"))
        .and_then(|v| v.to_str().ok())
    {
        return v >= ICONS_SINCE;
    }
    false
}

fn to_rmcp_icons(icons: &[Icon]) -> Option<Vec<rmcp::model::Icon>> {
    if icons.is_empty() {
        return None;
    }
    Some(
        icons
            .iter()
            .map(|i| {
                let mut icon = rmcp::model::Icon::new(i.src.clone());
                icon.mime_type = i.mime_type.clone();
                icon.sizes = (!i.sizes.is_empty()).then(|| i.sizes.clone());
                icon.theme = i.theme.map(|t| match t {
                    IconTheme::Light => rmcp::model::IconTheme::Light,
                    IconTheme::Dark => rmcp::model::IconTheme::Dark,
                });
                icon
            })
            .collect(),
    )
}

/// Sets each item's icons from the builder's (when the client's version lists them).
fn with_icons<T>(
    server: &Server,
    context: &RequestContext<RoleServer>,
    kind: Item,
    items: &mut [T],
    parts: impl Fn(&mut T) -> (&str, &mut Option<Vec<rmcp::model::Icon>>),
) {
    if !server.has_icons() || !shows_icons(context) {
        return;
    }
    for item in items {
        let (name, icons) = parts(item);
        if let Some(set) = to_rmcp_icons(server.icons_of(kind, name)) {
            *icons = Some(set);
        }
    }
}

/// A middleware's refusal as the method's JSON-RPC error (see
/// [`listing`](crate::server::listing)).
fn refused(method: Method, target: Option<&str>, e: ToolError) -> ErrorData {
    let mut data = json!({ "method": method.as_str(), "code": e.code().as_str() });
    if let Some(t) = target {
        data["target"] = json!(t.chars().take(200).collect::<String>());
    }
    if let Some(s) = e.recovery_text() {
        data["recovery"] = json!(s);
    }
    if let Some(secs) = e.retry_after_secs() {
        data["retryAfterSeconds"] = json!(secs);
    }
    let message = match method.has_content() {
        true => e.render().to_owned(),
        false => match e.recovery_text() {
            Some(s) => format!("{}: {} {}", e.code().as_str(), e.message(), s),
            None => format!("{}: {}", e.code().as_str(), e.message()),
        },
    };
    let code = match e.code().as_str() {
        "INTERNAL_ERROR" => ErrorCode::INTERNAL_ERROR,
        "NOT_FOUND" if method == Method::ReadResource => ErrorCode::RESOURCE_NOT_FOUND,
        _ => ErrorCode::INVALID_PARAMS,
    };
    ErrorData::new(code, message, Some(data))
}

/// Runs `work` (given its own clones of the handler, request context and era, and the
/// request as the middleware saw it) behind the server's method middleware.
pub(super) async fn guarded<T, F>(
    handler: &McpHandler,
    context: &RequestContext<RoleServer>,
    era: &Era,
    method: Method,
    target: Option<String>,
    work: impl FnOnce(McpHandler, RequestContext<RoleServer>, Era, MethodRequest) -> F + Send + 'static,
) -> Result<T, ErrorData>
where
    T: Send + 'static,
    F: Future<Output = Result<T, ErrorData>> + Send + 'static,
{
    let mut scope =
        super::scope::request_scope_in_session(context, era.threshold(&handler.log_threshold));
    if scope.principal.is_none() {
        scope.principal = handler.principal.clone();
    }
    let req = MethodRequest::new(method, target.clone(), scope);
    let (h, cx, e) = (handler.clone(), context.clone(), era.clone());
    let endpoint = move |req: MethodRequest| work(h, cx, e, req);
    match handler
        .server
        .through_method_middleware(req, endpoint)
        .await
    {
        Ok(answer) => answer,
        Err(e) => Err(refused(method, target.as_deref(), e)),
    }
}

fn cursor_of(request: Option<PaginatedRequestParams>) -> Option<String> {
    request.and_then(|r| r.cursor)
}

/// Marks a list request whose `params.cursor` is there but not a string (`5`, `null`, `{}`),
/// in its extensions (stdio) or its HTTP request's: rmcp's parse drops such params whole, so
/// the handler would see no cursor and answer the first page; it answers `-32602` instead,
/// after every other check of the request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CursorNotAString;

/// `-32602` for a request marked [`CursorNotAString`], rather than the first page.
fn string_cursor(context: &RequestContext<RoleServer>, method: Method) -> Result<(), ErrorData> {
    let marked = context.extensions.get::<CursorNotAString>().is_some();
    #[cfg(feature = "server-http")]
    let marked = marked
        || context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some_and(|p| p.extensions.get::<CursorNotAString>().is_some());
    match marked {
        true => Err(bad_cursor(method, "it is not a string")),
        false => Ok(()),
    }
}

/// `tools/list`.
pub(super) async fn list_tools(
    handler: &McpHandler,
    request: Option<PaginatedRequestParams>,
    context: RequestContext<RoleServer>,
) -> Result<ListToolsResult, ErrorData> {
    let era = Era::of(&context)?;
    let method = Method::ListTools;
    string_cursor(&context, method)?;
    let from = start(&handler.server, method, cursor_of(request).as_deref())?;
    let mut tools = guarded(
        handler,
        &context,
        &era,
        method,
        None,
        |h, _, era, req| async move { Ok(Box::pin(h.all_tools(&era, req.principal())).await) },
    )
    .await?;
    let server = &handler.server;
    with_icons(server, &context, Item::Tool, &mut tools, |t| {
        (&*t.name, &mut t.icons)
    });
    let (tools, next) = page(server, method, tools, from)?;
    let mut result = ListToolsResult::with_all_items(tools);
    result.next_cursor = next;
    Ok(era.finish_list(result, server))
}

impl McpHandler {
    /// Every tool this client may see: enabled ones, and with
    /// [`hide_forbidden`](crate::ServerBuilder::hide_forbidden) only those `principal` may call.
    async fn all_tools(&self, era: &Era, principal: Option<&Principal>) -> Vec<rmcp::model::Tool> {
        let mut tools = if self.server.tool_sources().is_empty() {
            self.server.tools()
        } else {
            // No session (2026-07-28, or stateless HTTP): one list for everyone.
            let specs = if era.is_modern() || self.sessionless {
                self.server.listed_tool_specs_stateless().await
            } else {
                let domain = self.handoff.get().map(|h| h.domain);
                self.server.listed_tool_specs_in(domain.as_deref()).await
            };
            specs.iter().map(tools::to_rmcp_tool).collect()
        };
        (self.server.visibility()).retain(Item::Tool, &mut tools, |t| &t.name);
        if self.server.hides_forbidden() {
            tools.retain(|t| self.server.may_call(&t.name, principal));
        }
        tools
    }
}

/// A list method's answer, paged: run the method middleware around `fetch`, add the icons the
/// client's version shows, cut the page `request`'s cursor asks for, and stamp the list as
/// its era wants. `items` takes the entries out of what `fetch` gave, `parts` names one entry
/// and reaches its icons, `build` makes the answer from a page and the next cursor.
#[allow(
    clippy::too_many_arguments,
    reason = "one call site per list method, each a table row"
)]
async fn paged<L, T, R>(
    handler: &McpHandler,
    request: Option<PaginatedRequestParams>,
    context: RequestContext<RoleServer>,
    method: Method,
    kind: Item,
    fetch: fn(&Server) -> Result<L, ErrorData>,
    items: fn(L) -> Vec<T>,
    parts: fn(&mut T) -> (&str, &mut Option<Vec<rmcp::model::Icon>>),
    build: fn(Vec<T>, Option<String>) -> R,
) -> Result<R, ErrorData>
where
    L: Send + 'static,
    R: CachedList,
{
    let era = Era::of(&context)?;
    string_cursor(&context, method)?;
    let from = start(&handler.server, method, cursor_of(request).as_deref())?;
    let list = guarded(
        handler,
        &context,
        &era,
        method,
        None,
        move |h, _, _, _| async move { fetch(&h.server) },
    )
    .await?;
    let server = &handler.server;
    let mut list = items(list);
    with_icons(server, &context, kind, &mut list, parts);
    let (page, next) = page(server, method, list, from)?;
    Ok(era.finish_list(build(page, next), server))
}

/// `prompts/list`.
pub(super) async fn list_prompts(
    handler: &McpHandler,
    request: Option<PaginatedRequestParams>,
    context: RequestContext<RoleServer>,
) -> Result<ListPromptsResult, ErrorData> {
    paged(
        handler,
        request,
        context,
        Method::ListPrompts,
        Item::Prompt,
        catalog::list_prompts,
        |l| l.prompts,
        |p| (&*p.name, &mut p.icons),
        |page, next| {
            let mut result = ListPromptsResult::with_all_items(page);
            result.next_cursor = next;
            result
        },
    )
    .await
}

/// `resources/list`.
pub(super) async fn list_resources(
    handler: &McpHandler,
    request: Option<PaginatedRequestParams>,
    context: RequestContext<RoleServer>,
) -> Result<ListResourcesResult, ErrorData> {
    paged(
        handler,
        request,
        context,
        Method::ListResources,
        Item::Resource,
        catalog::list_resources,
        |l| l.resources,
        |r| (&*r.uri, &mut r.icons),
        |page, next| {
            let mut result = ListResourcesResult::with_all_items(page);
            result.next_cursor = next;
            result
        },
    )
    .await
}

/// `resources/templates/list`.
pub(super) async fn list_resource_templates(
    handler: &McpHandler,
    request: Option<PaginatedRequestParams>,
    context: RequestContext<RoleServer>,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    paged(
        handler,
        request,
        context,
        Method::ListResourceTemplates,
        Item::Resource,
        catalog::list_resource_templates,
        |l| l.resource_templates,
        |r| (&*r.uri_template, &mut r.icons),
        |page, next| {
            let mut result = ListResourceTemplatesResult::with_all_items(page);
            result.next_cursor = next;
            result
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_an_envelope_where_the_method_has_content_and_text_where_it_has_none() {
        let e = crate::envelope::error(crate::codes::FORBIDDEN, "Not for you")
            .recovery("Ask an operator");
        let read = refused(Method::ReadResource, Some("internal://x"), e.clone());
        assert_eq!(read.code, ErrorCode::INVALID_PARAMS);
        assert!(read.message.starts_with("<tool_error code=\"FORBIDDEN\""));
        let list = refused(Method::ListTools, None, e);
        assert_eq!(list.message, "FORBIDDEN: Not for you Ask an operator");
        let data = list.data.unwrap_or_default();
        assert_eq!(data["code"], "FORBIDDEN");
        assert_eq!(data["recovery"], "Ask an operator");
    }
}
