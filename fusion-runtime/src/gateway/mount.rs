//! One mounted upstream: its connection's state, the tools it lists, and the forwarding of
//! calls, as a [`ToolSource`] of the server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio::time::Instant;

use super::answers;
use super::handle::{self, HANDLE_ARGUMENT};
use super::handoff::caller;
use super::{Connection, MountOptions, Upstream, UpstreamEvents, UpstreamFailure, UpstreamTool};
use crate::auth::DELEGATION_META_KEY;
use crate::context::{ClientKey, RequestScope};
use crate::envelope::{Content, ToolError, ToolResponse, codes};
use crate::guard::{ConcurrencyGuard, RateLimiterGuard};
use crate::input::JsonObject;
use crate::server::{ServerBuilder, ToolSource, ToolSpec, valid_tool_name};

/// A mounted upstream, as the server's tool source.
pub(super) struct Mount {
    shared: Arc<Shared>,
    /// The prefix, for the calls' contexts: leaked once per mount (a mount is configuration,
    /// built once per server).
    name: &'static str,
}

struct Shared {
    prefix: String,
    upstream: Upstream,
    options: MountOptions,
    separator: OnceLock<String>,
    link: Mutex<Link>,
    /// Bumped on every change of `link`: what a waiting `tools/list` watches.
    link_changed: watch::Sender<u64>,
    tools: Mutex<Arc<Listed>>,
    /// Bumped when the listed tools change.
    tools_changed: watch::Sender<u64>,
    /// The server's change notifier (set by `bind`): told when the listed tools change.
    notifier: OnceLock<crate::Notifier>,
    pending: ConcurrencyGuard,
    rate: Option<RateLimiterGuard>,
}

struct Link {
    state: State,
    /// Consecutive failures (connecting or calling); 0 once a connection works.
    failures: u32,
    /// Whether the first connection attempt has ended (first calls and lists wait for it).
    tried: bool,
}

enum State {
    /// Never tried.
    Idle,
    Connecting,
    Up(Arc<dyn Connection>),
    /// The circuit is open until `until`; then the next call probes.
    Down {
        until: Instant,
        why: String,
    },
}

/// The tools listed now: specs, and exposed name → upstream name.
#[derive(Default)]
struct Listed {
    specs: Vec<ToolSpec>,
    names: HashMap<String, String>,
    /// Upstream name, then its [`name_key`] (unless two share it) → exposed name: how the
    /// names in an upstream's envelopes are written for the model.
    exposed: HashMap<String, String>,
    by_key: HashMap<String, Option<String>>,
}

impl Listed {
    /// The gateway's name for a tool an upstream envelope names: its tool name, or its
    /// action name (`billing.get_invoice` for the tool `billing_get_invoice`).
    fn gateway_name(&self, upstream: &str) -> Option<&str> {
        self.exposed
            .get(upstream)
            .or_else(|| self.by_key.get(&name_key(upstream))?.as_ref())
            .map(String::as_str)
    }
}

/// A name with every separator (`.`, `-`, `_`) made `_`: an action name and the tool name a
/// Fusion upstream exposes it as have the same key.
fn name_key(name: &str) -> String {
    name.replace(['.', '-'], "_")
}

/// What a call does, decided under the lock.
enum Step {
    Forward(Arc<dyn Connection>),
    Answer(ToolResponse),
    WaitFirst,
}

impl Mount {
    pub(super) fn new(prefix: String, upstream: Upstream, options: MountOptions) -> Self {
        let pending = ConcurrencyGuard::new(format!("the {prefix} service"), options.pending);
        let rate = options
            .rate_limit
            .map(|l| RateLimiterGuard::new(format!("the {prefix} service"), l));
        Mount {
            name: Box::leak(prefix.clone().into_boxed_str()),
            shared: Arc::new(Shared {
                prefix,
                upstream,
                options,
                separator: OnceLock::new(),
                link: Mutex::new(Link {
                    state: State::Idle,
                    failures: 0,
                    tried: false,
                }),
                link_changed: watch::channel(0).0,
                tools: Mutex::new(Arc::new(Listed::default())),
                tools_changed: watch::channel(0).0,
                notifier: OnceLock::new(),
                pending,
                rate,
            }),
        }
    }
}

impl ToolSource for Mount {
    fn name(&self) -> &'static str {
        self.name
    }

    fn bind(&self, separator: &str, changes: &crate::Notifier) {
        let _ = self.shared.separator.set(separator.to_owned());
        let _ = self.shared.notifier.set(changes.clone());
    }

    fn owns(&self, tool: &str) -> bool {
        tool.strip_prefix(self.shared.prefix.as_str())
            .is_some_and(|rest| rest.starts_with(self.shared.separator()))
    }

    fn tools(&self) -> BoxFuture<'_, Vec<ToolSpec>> {
        Box::pin(async move {
            self.shared.ensure_first_connection().await;
            self.shared.listed().specs.clone()
        })
    }

    fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        scope: RequestScope,
    ) -> BoxFuture<'static, ToolResponse> {
        let shared = Arc::clone(&self.shared);
        let tool = tool.to_owned();
        Box::pin(async move { shared.call(tool, arguments, scope).await })
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.shared.tools_changed.subscribe()
    }

    fn stateless_tools(&self) -> BoxFuture<'_, Vec<ToolSpec>> {
        Box::pin(async move {
            let mut tools = self.tools().await;
            if self.shared.options.handoff_only {
                for t in &mut tools {
                    t.input_schema = Arc::new(with_handle(&t.input_schema, &self.shared.prefix));
                }
            }
            tools
        })
    }

    fn tool_names(&self) -> Vec<String> {
        let listed = self.shared.listed();
        listed.specs.iter().map(|s| s.name.clone()).collect()
    }

    fn describe(&self) -> String {
        self.shared.describe()
    }

    fn reachable(&self) -> Result<(), String> {
        match &self.shared.lock().state {
            State::Up(c) if !c.is_closed() => Ok(()),
            State::Up(_) => Err("the connection closed".to_owned()),
            State::Idle => Err("not connected yet".to_owned()),
            State::Connecting => Err("still connecting".to_owned()),
            State::Down { why, .. } => Err(why.clone()),
        }
    }

    fn scopes(&self) -> Vec<String> {
        let scopes = &self.shared.options.scopes;
        scopes.iter().map(|s| s.to_string()).collect()
    }

    fn handoff_domain(&self) -> Option<&str> {
        self.shared
            .options
            .handoff_only
            .then_some(self.shared.prefix.as_str())
    }
}

/// Tells the mount what its upstream announces; weak, so a connection never keeps its
/// mount alive.
struct Events(Weak<Shared>);

impl UpstreamEvents for Events {
    fn tools_changed(&self) {
        if let Some(shared) = self.0.upgrade() {
            tokio::spawn(async move { shared.refresh().await });
        }
    }
}

impl Shared {
    fn separator(&self) -> &str {
        self.separator.get().map_or("_", String::as_str)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn listed(&self) -> Arc<Listed> {
        Arc::clone(&self.tools.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn describe(&self) -> String {
        self.upstream.describe()
    }

    /// Starts connecting unless a connection is up or coming; `true` when it started one.
    fn start_connecting(self: &Arc<Self>, link: &mut Link) -> bool {
        if matches!(link.state, State::Connecting | State::Up(_)) {
            return false;
        }
        link.state = State::Connecting;
        self.link_changed.send_modify(|n| *n += 1);
        let shared = Arc::clone(self);
        tokio::spawn(async move { shared.connect().await });
        true
    }

    async fn connect(self: Arc<Self>) {
        let events: Arc<dyn UpstreamEvents> = Arc::new(Events(Arc::downgrade(&self)));
        let limit = self.options.connect_timeout;
        let opened = tokio::time::timeout(limit, self.upstream.connector.connect(events)).await;
        let connection = match opened {
            Ok(Ok(c)) => c,
            Ok(Err(why)) => return self.failed(&format!("cannot connect: {why}")),
            Err(_) => {
                return self.failed(&format!(
                    "no connection after {} seconds",
                    limit.as_secs_f64()
                ));
            }
        };
        match tokio::time::timeout(limit, connection.list_tools()).await {
            Ok(Ok(tools)) => self.set_tools(tools),
            Ok(Err(f)) => return self.failed(&format!("tools/list failed: {}", failure_text(&f))),
            Err(_) => return self.failed("tools/list did not answer in time"),
        }
        let mut link = self.lock();
        link.state = State::Up(connection);
        link.failures = 0;
        link.tried = true;
        drop(link);
        self.link_changed.send_modify(|n| *n += 1);
        crate::metrics::upstream(&self.prefix, true);
        tracing::info!(mount = %self.prefix, upstream = %self.describe(), "upstream connected");
    }

    /// One more consecutive failure: the circuit opens for the backoff's next wait.
    fn failed(&self, why: &str) {
        let mut link = self.lock();
        link.failures = link.failures.saturating_add(1);
        link.tried = true;
        let wait = self.options.backoff.delay(link.failures);
        link.state = State::Down {
            until: Instant::now() + wait,
            why: why.to_owned(),
        };
        let failures = link.failures;
        drop(link);
        self.link_changed.send_modify(|n| *n += 1);
        crate::metrics::upstream(&self.prefix, false);
        tracing::warn!(mount = %self.prefix, why, failures, ?wait, "upstream down");
    }

    /// [`Shared::failed`] for a connection `seen` that broke, unless another call already
    /// noticed; then the answer for the call that saw it.
    fn lost(&self, seen: &Arc<dyn Connection>, why: &str) -> ToolResponse {
        let up = matches!(&self.lock().state, State::Up(current) if Arc::ptr_eq(current, seen));
        if up {
            self.failed(why);
        }
        let link = self.lock();
        self.down_answer(&link)
    }

    /// Starts the first connection if nothing did yet, and waits (bounded by `list_wait`)
    /// until it is up or failed. Later, never waits: a reconnection is answered
    /// `HANDOFF_CONNECTING`.
    async fn ensure_first_connection(self: &Arc<Self>) {
        let mut changes = self.link_changed.subscribe();
        {
            let mut link = self.lock();
            if link.tried {
                return;
            }
            self.start_connecting(&mut link);
        }
        let wait = async {
            loop {
                if self.lock().tried {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(self.options.list_wait, wait).await;
    }

    fn set_tools(&self, tools: Vec<UpstreamTool>) {
        let separator = self.separator().to_owned();
        let mut listed = Listed::default();
        let total = tools.len();
        for tool in tools {
            if listed.specs.len() >= self.options.max_tools {
                tracing::warn!(mount = %self.prefix, total, kept = self.options.max_tools, "upstream lists more tools than the mount keeps");
                break;
            }
            let exposed = format!(
                "{}{separator}{}",
                self.prefix,
                tool.name.replace('.', &separator)
            );
            if tool.name.chars().count() > self.options.max_name_chars || !valid_tool_name(&exposed)
            {
                tracing::warn!(mount = %self.prefix, tool = %tool.name.chars().take(64).collect::<String>(), "upstream tool left out: its name is too long or not a valid tool name");
                continue;
            }
            if listed.names.contains_key(&exposed) {
                continue;
            }
            listed.names.insert(exposed.clone(), tool.name.clone());
            listed.exposed.insert(tool.name.clone(), exposed.clone());
            listed
                .by_key
                .entry(name_key(&tool.name))
                .and_modify(|e| *e = None)
                .or_insert_with(|| Some(exposed.clone()));
            listed.specs.push(ToolSpec {
                name: exposed,
                title: tool.title,
                description: tool.description,
                input_schema: Arc::new(tool.input_schema),
                output_schema: tool.output_schema.map(Arc::new),
                hints: tool.hints,
            });
        }
        let mut slot = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        let changed = slot.specs != listed.specs;
        *slot = Arc::new(listed);
        drop(slot);
        if changed {
            self.tools_changed.send_modify(|n| *n += 1);
            if let Some(notifier) = self.notifier.get() {
                notifier.tools_list_changed();
            }
        }
    }

    /// The upstream said its tools changed: list them again.
    async fn refresh(self: Arc<Self>) {
        let connection = match &self.lock().state {
            State::Up(c) => Arc::clone(c),
            _ => return,
        };
        match tokio::time::timeout(self.options.connect_timeout, connection.list_tools()).await {
            Ok(Ok(tools)) => self.set_tools(tools),
            Ok(Err(f)) => {
                tracing::warn!(mount = %self.prefix, error = %failure_text(&f), "tools/list after list_changed failed")
            }
            Err(_) => {
                tracing::warn!(mount = %self.prefix, "tools/list after list_changed timed out")
            }
        }
    }

    /// Decides what a call does now.
    fn step(self: &Arc<Self>) -> Step {
        let mut link = self.lock();
        match &link.state {
            State::Idle => Step::WaitFirst,
            _ if !link.tried => Step::WaitFirst,
            State::Connecting => Step::Answer(self.connecting()),
            State::Up(c) if !c.is_closed() => Step::Forward(Arc::clone(c)),
            State::Up(_) => {
                drop(link);
                self.failed("the connection closed");
                let link = self.lock();
                Step::Answer(self.down_answer(&link))
            }
            State::Down { until, .. } if *until > Instant::now() => {
                Step::Answer(self.down_answer(&link))
            }
            State::Down { .. } => {
                // Half-open: this call probes with a new connection.
                self.start_connecting(&mut link);
                Step::Answer(self.connecting())
            }
        }
    }

    /// A fresh delegation token for one forwarded call, as `_meta`, when the mount signs.
    fn delegation_meta(
        &self,
        scope: &RequestScope,
        carry: Option<serde_json::Value>,
    ) -> Result<Option<JsonObject>, ToolError> {
        let Some(d) = &self.options.delegation else {
            return Ok(None);
        };
        let subject = caller(scope);
        let carry = match carry {
            Some(c) => c,
            None => scope
                .handoff
                .as_ref()
                .and_then(|slot| slot.get())
                .filter(|h| h.domain == self.prefix)
                .map_or_else(|| serde_json::Value::Object(JsonObject::new()), |h| h.carry),
        };
        let token = d
            .key
            .mint(&d.issuer, &subject, &d.audience, d.ttl, carry)
            .map_err(|e| e.to_tool_error())?;
        let mut meta = JsonObject::new();
        meta.insert(
            DELEGATION_META_KEY.to_owned(),
            serde_json::Value::String(token),
        );
        Ok(Some(meta))
    }

    /// A 2026-07-28 call of a handoff domain's tool: its handle, checked and taken out of
    /// the arguments; its carry-over state. `Ok(None)` for every other call.
    fn take_handle(
        &self,
        tool: &str,
        arguments: &mut Option<JsonObject>,
        scope: &RequestScope,
    ) -> Result<Option<serde_json::Value>, ToolError> {
        let stateless = scope.handoff.as_ref().is_some_and(|s| s.is_stateless());
        if !self.options.handoff_only || !stateless {
            return Ok(None);
        }
        let sent = arguments.as_mut().and_then(|a| a.remove(HANDLE_ARGUMENT));
        let why = match &sent {
            Some(serde_json::Value::String(h)) => {
                match handle::open(h, &self.prefix, &caller(scope)) {
                    Ok(handle) => return Ok(Some(handle.carry)),
                    Err(why) => format!("the {HANDLE_ARGUMENT} argument was refused: {why}"),
                }
            }
            Some(_) => format!("the {HANDLE_ARGUMENT} argument must be the handle string"),
            None => format!("it was called without the {HANDLE_ARGUMENT} handle"),
        };
        Err(ToolError::new(
            codes::HANDOFF_NAMESPACE_MISMATCH,
            format!("{tool} belongs to the {} domain, and {why}", self.prefix),
        )
        .recovery(format!(
            "Use the tool that hands off to {} first, then pass the handle it returns as \"{HANDLE_ARGUMENT}\"",
            self.prefix
        ))
        .detail("domain", &self.prefix)
        .detail("requested", tool))
    }

    fn connecting(&self) -> ToolResponse {
        ToolResponse::error(answers::connecting(&self.prefix, &self.describe()))
    }

    fn down_answer(&self, link: &Link) -> ToolResponse {
        let (wait, why) = match &link.state {
            State::Down { until, why } => (
                until.saturating_duration_since(Instant::now()),
                why.as_str(),
            ),
            _ => (self.options.backoff.ceiling(1), "it is not connected"),
        };
        ToolResponse::error(answers::unavailable(&self.prefix, why, round_up(wait)))
    }

    async fn call(
        self: Arc<Self>,
        tool: String,
        arguments: Option<JsonObject>,
        scope: RequestScope,
    ) -> ToolResponse {
        if !self.options.scopes.is_empty()
            && let Err(e) =
                crate::auth::check_scopes(&tool, &self.options.scopes, scope.principal())
        {
            tracing::info!(tool, code = %e.code(), "mounted call refused: scopes");
            return ToolResponse::error(e);
        }
        if let Some(rate) = &self.rate
            && let Err(e) = rate.check(&ClientKey::of(&scope).0)
        {
            return ToolResponse::error(e);
        }
        let mut step = self.step();
        if let Step::WaitFirst = step {
            self.ensure_first_connection().await;
            step = self.step();
        }
        let connection = match step {
            Step::Forward(c) => c,
            Step::Answer(r) => return r,
            Step::WaitFirst => return self.connecting(),
        };
        let listed = self.listed();
        let Some(upstream_name) = listed.names.get(&tool).cloned() else {
            let names: Vec<String> = listed.specs.iter().map(|s| s.name.clone()).collect();
            return ToolResponse::error(answers::unknown_tool(&tool, &self.prefix, &names));
        };
        let _slot = match self.pending.acquire().await {
            Ok(slot) => slot,
            Err(e) => return ToolResponse::error(e),
        };
        let mut arguments = arguments;
        let carry = match self.take_handle(&tool, &mut arguments, &scope) {
            Ok(carry) => carry,
            Err(e) => return ToolResponse::error(e),
        };
        let meta = match self.delegation_meta(&scope, carry) {
            Ok(meta) => meta,
            Err(e) => return ToolResponse::error(e),
        };
        let limit = self.options.call_timeout;
        let forwarded = connection.call(upstream_name, arguments, meta, scope);
        let reply = match tokio::time::timeout(limit, forwarded).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(UpstreamFailure::Closed(why))) => {
                let why = format!("the connection was lost during the call ({why})");
                return self.lost(&connection, &why);
            }
            Ok(Err(f)) => {
                return ToolResponse::error(answers::rpc_failed(&tool, &self.prefix, &f));
            }
            Err(_) => {
                let why = format!("{tool} did not answer within {} seconds", limit.as_secs());
                return self.lost(&connection, &why);
            }
        };
        let bytes: usize = reply
            .content
            .iter()
            .map(|c| c.as_text().map_or(0, str::len))
            .sum::<usize>()
            + reply
                .structured_content
                .as_ref()
                .map_or(0, |v| v.to_string().len());
        if bytes > self.options.max_response_bytes {
            return ToolResponse::error(answers::too_large(
                &tool,
                bytes,
                self.options.max_response_bytes,
            ));
        }
        let mut response = if reply.is_error {
            answers::error_reply(&tool, &self.prefix, reply.content)
        } else {
            ToolResponse {
                content: reply.content,
                is_error: false,
                structured_content: reply.structured_content,
            }
        };
        let listed = self.listed();
        for block in &mut response.content {
            if let Content::Text(text) = block
                && text.starts_with("<tool_error")
                && crate::client::parse_envelope(text).is_ok()
                && let Some(renamed) = answers::rename_tools(text, |n| listed.gateway_name(n))
            {
                *text = renamed;
            }
        }
        response
    }
}

/// `schema` with the required `handoff` string property a 2026-07-28 call passes its handle in.
fn with_handle(schema: &JsonObject, domain: &str) -> JsonObject {
    let mut schema = schema.clone();
    let property = serde_json::json!({
        "type": "string",
        "description": format!("The handle the handoff to {domain} returned."),
    });
    if let Some(serde_json::Value::Object(props)) = schema.get_mut("properties") {
        props.insert(HANDLE_ARGUMENT.to_owned(), property);
    } else {
        let mut props = JsonObject::new();
        props.insert(HANDLE_ARGUMENT.to_owned(), property);
        schema.insert("properties".to_owned(), props.into());
    }
    match schema.get_mut("required") {
        Some(serde_json::Value::Array(required)) => required.push(HANDLE_ARGUMENT.into()),
        _ => {
            schema.insert("required".to_owned(), serde_json::json!([HANDLE_ARGUMENT]));
        }
    }
    schema
}

/// Whole seconds, rounded up (what `retry_after` shows), at least one.
fn round_up(d: Duration) -> Duration {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    Duration::from_secs(secs.max(1))
}

fn failure_text(f: &UpstreamFailure) -> String {
    match f {
        UpstreamFailure::Closed(why) | UpstreamFailure::Other(why) => why.clone(),
        UpstreamFailure::Rpc { code, message } => format!("JSON-RPC error {code}: {message}"),
    }
}

impl ServerBuilder {
    /// Mounts an upstream MCP server under `prefix` with the default [`MountOptions`]: its
    /// tools are listed as `prefix` + separator + their name, and their calls forwarded (see
    /// [`gateway`](crate::gateway)).
    pub fn mount(self, prefix: impl Into<String>, upstream: Upstream) -> Self {
        self.mount_with(prefix, upstream, MountOptions::default())
    }

    /// [`ServerBuilder::mount`] with other bounds.
    pub fn mount_with(
        self,
        prefix: impl Into<String>,
        upstream: Upstream,
        options: MountOptions,
    ) -> Self {
        self.tool_source(Mount::new(prefix.into(), upstream, options))
    }

    /// Mounts an upstream as a domain a handler hands a 2025 session off to
    /// ([`CallContext::handoff`](crate::context::CallContext::handoff)): its tools are listed only to sessions handed off to it,
    /// next to [`RETURN_TOOL`](crate::server::RETURN_TOOL), and while a session is there, calls of other tools are
    /// answered `HANDOFF_NAMESPACE_MISMATCH`.
    pub fn handoff_domain(self, domain: impl Into<String>, upstream: Upstream) -> Self {
        let options = MountOptions {
            handoff_only: true,
            ..MountOptions::default()
        };
        self.mount_with(domain, upstream, options)
    }
}
