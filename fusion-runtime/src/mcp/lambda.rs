//! AWS Lambda: one event in, one answer out, through [`HttpHandler`], the stateless streamable
//! HTTP endpoint with no listener (Host and Origin, the body cap, auth, limits, the room,
//! envelopes: what `serve --http --stateless` does) — no session.
//!
//! Reads: each invocation's event as `lambda_http` turns it into an HTTP request (API Gateway
//! REST and HTTP APIs, ALB, function URLs), the source IP of its request context, the
//! invocation's deadline. Writes: the request's [`ClientKey`]; the answer, buffered or streamed
//! ([`InvokeMode`]); after the answer, it holds the invocation open while MCP tasks this
//! process runs are still working (Lambda freezes a process whose invocation ended).

use std::convert::Infallible;
use std::net::IpAddr;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode, header};
use futures::future::{BoxFuture, LocalBoxFuture};
use http_body_util::BodyExt as _;
use lambda_http::request::RequestContext;
use lambda_http::{RequestExt as _, lambda_runtime};

use super::http::{HttpHandler, HttpOptions};
use crate::context::ClientKey;
use crate::http::identity::ip_key;
use crate::server::Server;

pub use lambda_http::Error;

/// How answers leave the function: as the function URL's (or API's) invoke mode says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvokeMode {
    /// `BUFFERED` (Lambda's default): every answer is sent whole when it is complete — JSON,
    /// or the SSE stream of a call that sent progress or logs before its result, all its
    /// events at once. A stream that outlives the invocation (`subscriptions/listen`) is cut
    /// shortly before its deadline, with the events it had.
    #[default]
    Buffered,
    /// `RESPONSE_STREAM` (a function URL or API set to stream): answers flow as they are
    /// written — SSE events as the call sends them; a JSON answer in one piece.
    ResponseStream,
}

impl InvokeMode {
    /// `buffered` or `response_stream` (any case; `-` for `_`), as
    /// `FUSION_LAMBDA_INVOKE_MODE` holds it.
    pub fn parse(text: &str) -> Option<InvokeMode> {
        match text.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "buffered" => Some(InvokeMode::Buffered),
            "response_stream" | "streaming" => Some(InvokeMode::ResponseStream),
            _ => None,
        }
    }
}

/// How the function serves: the endpoint's options (always stateless) and the invoke mode.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LambdaOptions {
    /// The endpoint's options. [`LambdaOptions::default`] accepts any `Host` (the function
    /// URL's or the API's domain, which Lambda's front end routes by: a name another site
    /// points at this function's addresses never reaches it) and keeps the loopback origins;
    /// add a browser client's origin with [`HttpOptions::allow_origins`]. `stateless` is set
    /// whatever it holds: an instance keeps no session between invocations.
    pub http: HttpOptions,
    /// Buffered or streamed answers.
    pub invoke_mode: InvokeMode,
    /// How long before the invocation's deadline a buffered stream is cut and a task's work
    /// stops holding the invocation open (1 s).
    pub deadline_margin: Duration,
}

impl Default for LambdaOptions {
    fn default() -> Self {
        let mut http = HttpOptions::default().stateless(true);
        http.allowed_hosts.clear();
        LambdaOptions {
            http,
            invoke_mode: InvokeMode::Buffered,
            deadline_margin: Duration::from_secs(1),
        }
    }
}

impl LambdaOptions {
    /// The defaults, with what the function's environment sets:
    ///
    /// | variable | what | unset |
    /// |---|---|---|
    /// | `FUSION_LAMBDA_INVOKE_MODE` | `buffered` or `response_stream`, as the function URL's invoke mode | `buffered` |
    /// | `FUSION_ALLOWED_HOSTS` | the `Host` names accepted, comma-separated (`abc.lambda-url.eu-west-1.on.aws,mcp.example.com`) | any |
    /// | `FUSION_ALLOWED_ORIGINS` | browser origins accepted beyond loopback ones, comma-separated (`https://app.example.com:443`) | none more |
    ///
    /// An unknown invoke mode is an error: a function that buffered what its URL expects
    /// streamed would answer nothing a client reads.
    pub fn from_env() -> Result<LambdaOptions, Error> {
        let mut options = LambdaOptions::default();
        if let Ok(mode) = std::env::var(INVOKE_MODE_VAR) {
            options.invoke_mode = InvokeMode::parse(&mode).ok_or_else(|| {
                format!("{INVOKE_MODE_VAR}={mode:?}: expected `buffered` or `response_stream`")
            })?;
        }
        if let Ok(hosts) = std::env::var(ALLOWED_HOSTS_VAR) {
            options.http.allowed_hosts = list(&hosts);
        }
        if let Ok(origins) = std::env::var(ALLOWED_ORIGINS_VAR) {
            options.http = options.http.allow_origins(list(&origins));
        }
        Ok(options)
    }

    /// These options with `http` as the endpoint's (made stateless).
    pub fn http(mut self, http: HttpOptions) -> Self {
        self.http = http.stateless(true);
        self
    }

    /// These options with `mode`.
    pub fn invoke_mode(mut self, mode: InvokeMode) -> Self {
        self.invoke_mode = mode;
        self
    }
}

/// The environment variable [`LambdaOptions::from_env`] reads the invoke mode from.
pub const INVOKE_MODE_VAR: &str = "FUSION_LAMBDA_INVOKE_MODE";
/// The environment variable [`LambdaOptions::from_env`] reads the accepted hosts from.
pub const ALLOWED_HOSTS_VAR: &str = "FUSION_ALLOWED_HOSTS";
/// The environment variable [`LambdaOptions::from_env`] reads more accepted origins from.
pub const ALLOWED_ORIGINS_VAR: &str = "FUSION_ALLOWED_ORIGINS";

/// A comma-separated list, its entries trimmed, empty ones left out.
fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Serves `server` as this Lambda function until the runtime stops it, with
/// [`LambdaOptions::from_env`]. Only inside Lambda (or its emulator, `cargo lambda watch`):
/// the runtime's address comes from `AWS_LAMBDA_RUNTIME_API`.
pub async fn run(server: Server) -> Result<(), Error> {
    run_with(server, LambdaOptions::from_env()?).await
}

/// [`run`] with `options`.
pub async fn run_with(server: Server, options: LambdaOptions) -> Result<(), Error> {
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_none() {
        return Err("not inside AWS Lambda: AWS_LAMBDA_RUNTIME_API is not set (run it under `cargo lambda watch` to try it locally)".into());
    }
    warn_when_tasks_stay_here(&server);
    let handler = LambdaHandler::new(server.clone(), &options)?;
    let hold = HoldForTasks {
        server,
        margin: options.deadline_margin,
    };
    match options.invoke_mode {
        InvokeMode::Buffered => {
            let buffered = Buffered {
                handler,
                margin: options.deadline_margin,
            };
            lambda_http::runtime(buffered).layer(hold).run().await
        }
        InvokeMode::ResponseStream => {
            lambda_http::streaming_runtime(handler)
                .layer(hold)
                .run()
                .await
        }
    }
}

/// A server with task actions whose tasks live in this process's memory: another instance
/// cannot answer their `tasks/get`, and an instance Lambda retires takes them with it.
fn warn_when_tasks_stay_here(server: &Server) {
    if !server.has_tasks() || server.task_store().lease().is_some() {
        return;
    }
    let warning = "this server's MCP tasks are kept in this instance's memory: on Lambda, a `tasks/get` that reaches another instance is answered as an unknown task; keep them in Redis (`ServerBuilder::task_store(RedisTasks::new(url)?)`, or `FUSION_REDIS_URL` with `cli::run`)";
    // Said on stderr (the function's log) even when no `tracing` subscriber is installed.
    if tracing::dispatcher::has_been_set() {
        tracing::warn!(store = server.task_store().name(), "{warning}");
    } else {
        eprintln!("warning: {warning}");
    }
}

/// The endpoint as a service of Lambda's HTTP requests: each request gets the
/// [`ClientKey`] of the address its event names, then [`HttpHandler`] — the stateless
/// endpoint `serve --http --stateless` serves, with no listener — answers it. Answers are the
/// endpoint's own, unbuffered; [`run`] buffers or streams them.
#[derive(Clone, Debug)]
pub struct LambdaHandler {
    handler: HttpHandler,
}

impl LambdaHandler {
    /// The handler of `server` with `options` (the endpoint is stateless whatever
    /// `options.http` says). Fails when the options' authentication does not pass
    /// [`Auth::check`](crate::auth::Auth::check).
    pub fn new(server: Server, options: &LambdaOptions) -> Result<LambdaHandler, Error> {
        let http = options.http.clone().stateless(true);
        Ok(LambdaHandler {
            handler: HttpHandler::new(server, &http)?,
        })
    }
}

impl tower_service::Service<lambda_http::Request> for LambdaHandler {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: lambda_http::Request) -> Self::Future {
        if let Some(key) = client_key(&request) {
            request.extensions_mut().insert(key);
        }
        let handler = self.handler.clone();
        Box::pin(async move { Ok(handler.handle(request).await) })
    }
}

/// The client's address as the event's request context names it (the TCP peer Lambda's
/// front end saw, which the client cannot choose): API Gateway's HTTP APIs and function URLs
/// (`requestContext.http.sourceIp`), REST APIs (`requestContext.identity.sourceIp`); behind
/// an ALB, the right-most `X-Forwarded-For` address (the one the ALB appended). `None` when
/// the event names none: every such request then counts as one client.
pub fn client_key(request: &lambda_http::Request) -> Option<ClientKey> {
    let ip: IpAddr = match request.request_context_ref()? {
        RequestContext::ApiGatewayV2(context) => context.http.source_ip.as_deref()?.parse().ok()?,
        RequestContext::ApiGatewayV1(context) => {
            context.identity.source_ip.as_deref()?.parse().ok()?
        }
        RequestContext::Alb(_) => request
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .next_back()?
            .to_str()
            .ok()?
            .rsplit(',')
            .next()?
            .trim()
            .parse()
            .ok()?,
        _ => return None,
    };
    Some(ip_key(ip))
}

/// [`LambdaHandler`] with each answer read whole, for the buffered invoke mode.
#[derive(Clone)]
struct Buffered {
    handler: LambdaHandler,
    margin: Duration,
}

impl tower_service::Service<lambda_http::Request> for Buffered {
    type Response = Response<lambda_http::Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<lambda_http::Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: lambda_http::Request) -> Self::Future {
        let until = request
            .lambda_context_ref()
            .and_then(|context| time_left(context.deadline))
            .map(|left| left.saturating_sub(self.margin));
        let answer = tower_service::Service::call(&mut self.handler, request);
        Box::pin(async move {
            let Ok(response) = answer.await;
            Ok(buffer(response, until).await)
        })
    }
}

/// `response` read whole, for at most `until` (then what came so far: whole SSE events, the
/// stream ending there).
async fn buffer(response: Response<Body>, until: Option<Duration>) -> Response<lambda_http::Body> {
    let (parts, mut body) = response.into_parts();
    let mut bytes = Vec::new();
    let read = async {
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => {
                    if let Ok(data) = frame.into_data() {
                        bytes.extend_from_slice(&data);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    };
    let outcome = match until {
        Some(until) => tokio::time::timeout(until, read).await.unwrap_or(Ok(())),
        None => read.await,
    };
    if let Err(e) = outcome {
        tracing::error!(error = %e, "an answer's body failed while it was read");
        let mut failed = Response::new(lambda_http::Body::from(
            "Internal Server Error: the answer could not be read",
        ));
        *failed.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        failed.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        return failed;
    }
    let body = match String::from_utf8(bytes) {
        Ok(text) if text.is_empty() => lambda_http::Body::Empty,
        Ok(text) => lambda_http::Body::Text(text),
        Err(e) => lambda_http::Body::Binary(e.into_bytes()),
    };
    Response::from_parts(parts, body)
}

/// How long until `deadline` (milliseconds since the epoch, as Lambda gives it); `None` when
/// it is not ahead of now — no deadline a running invocation could have (a local emulator
/// may send its timeout instead: `cargo lambda watch` sends 600000).
fn time_left(deadline_ms: u64) -> Option<Duration> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Duration::from_millis(deadline_ms)
        .checked_sub(now)
        .filter(|left| !left.is_zero())
}

/// Lambda's longest invocation: how long tasks may hold one open when its deadline is unknown.
const LONGEST_INVOCATION: Duration = Duration::from_secs(15 * 60);

/// A runtime layer: after an invocation's answer is sent, keeps the invocation open while
/// tasks this process started are still working, up to shortly before its deadline. Lambda
/// freezes the process once the runtime asks for the next event: a task's work would stop
/// there, its lease lapse, and another instance would read it as failed.
#[derive(Clone)]
struct HoldForTasks {
    server: Server,
    margin: Duration,
}

impl<S> lambda_http::tower::Layer<S> for HoldForTasks {
    type Service = Holding<S>;

    fn layer(&self, inner: S) -> Holding<S> {
        Holding {
            inner,
            hold: self.clone(),
        }
    }
}

/// The runtime's invocation service, then the wait [`HoldForTasks`] describes.
#[derive(Clone)]
struct Holding<S> {
    inner: S,
    hold: HoldForTasks,
}

impl<S> tower_service::Service<lambda_runtime::LambdaInvocation> for Holding<S>
where
    S: tower_service::Service<
            lambda_runtime::LambdaInvocation,
            Response = (),
            Error = lambda_runtime::Error,
        >,
    S::Future: 'static,
{
    type Response = ();
    type Error = lambda_runtime::Error;
    // The runtime's own invocation future is not `Send`: it runs on the runtime's task.
    type Future = LocalBoxFuture<'static, Result<(), lambda_runtime::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, invocation: lambda_runtime::LambdaInvocation) -> Self::Future {
        let left = time_left(invocation.context.deadline).map_or(LONGEST_INVOCATION, |left| {
            left.saturating_sub(self.hold.margin)
        });
        let answered = self.inner.call(invocation);
        let server = self.hold.server.clone();
        Box::pin(async move {
            let outcome = answered.await;
            let running = server.running_tasks();
            if running.count() > 0 && tokio::time::timeout(left, running.idle()).await.is_err() {
                tracing::warn!(
                    running = running.count(),
                    "the invocation's deadline is near and tasks still run: Lambda freezes them until its next invocation"
                );
            }
            outcome
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_not_ahead_is_unknown() {
        assert_eq!(
            time_left(600_000),
            None,
            "an emulator's timeout, not a time"
        );
        assert_eq!(time_left(0), None);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default();
        let left = time_left(now + 60_000).unwrap_or_default();
        assert!(
            left > Duration::from_secs(50) && left <= Duration::from_secs(60),
            "{left:?}"
        );
    }

    #[test]
    fn invoke_modes_read_as_written() {
        assert_eq!(InvokeMode::parse("buffered"), Some(InvokeMode::Buffered));
        assert_eq!(
            InvokeMode::parse("RESPONSE_STREAM"),
            Some(InvokeMode::ResponseStream)
        );
        assert_eq!(
            InvokeMode::parse("response-stream"),
            Some(InvokeMode::ResponseStream)
        );
        assert_eq!(InvokeMode::parse("stream it"), None);
    }
}
