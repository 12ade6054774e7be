//! The walk before the check (`steps.rs`, `door.rs`, `identity.rs`): the client's key, the
//! request's facts, session ownership, session admission and the body's deadline, through
//! [`Steps::serve`] with a recording route.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::super::check::{JsonRpcStep, Route};
use super::super::door::{AllowedHosts, AllowedOrigins, Door};
use super::super::sessions::{self, Admission, CappedSessions};
use super::super::steps::Steps;
use super::{Seen, after_door, canned, header_text, read, read_json, stalling_body};
use crate::context::ClientKey;
use crate::http::ForwardedHeader;
use crate::http::forwarded::Forwarded;
use crate::http::identity::Identity;
use crate::mcp::facts::Calls;

const A: &str = "198.51.100.1:4000";
const B: &str = "198.51.100.2:4000";

type Guard = Steps;

fn guard(sessions: Option<Arc<CappedSessions>>) -> Guard {
    let server = crate::Server::builder()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let identity = Identity::new(&[], ForwardedHeader::default());
    Steps {
        auth: None,
        forwarded: Forwarded::new(identity.clone(), 1024),
        identity,
        body_timeout: Duration::from_secs(30),
        calls: Arc::new(Calls::default()),
        check: JsonRpcStep {
            server: server.clone(),
            max_body_bytes: 1024,
            room: super::super::room::RoomRoute {
                on: false,
                sessions: sessions.is_some(),
                live: None,
            },
            tasks: false,
        },
        door: Door {
            server,
            hosts: AllowedHosts::new(&["localhost".to_owned()]),
            origins: AllowedOrigins::new(&["http://localhost:*".to_owned()]),
            sessions,
            max_body_bytes: 1024,
            body_timeout: Duration::from_secs(30),
        },
    }
}

/// The walk with `next` as its route.
async fn guard_request<F, Fut>(steps: &Steps, request: Request, next: F) -> Response
where
    F: FnOnce(Request, Route) -> Fut + Send,
    Fut: Future<Output = Response> + Send + 'static,
{
    steps
        .serve(request, &Next(std::sync::Mutex::new(Some(next))))
        .await
}

/// A route of the test's own: `next`, taken once.
struct Next<F>(std::sync::Mutex<Option<F>>);

impl<F, Fut> super::super::steps::Routes for Next<F>
where
    F: FnOnce(Request, Route) -> Fut + Send,
    Fut: Future<Output = Response> + Send + 'static,
{
    fn route(
        &self,
        request: Request,
        route: Route,
    ) -> impl Future<Output = Response> + Send + use<F, Fut> {
        let next = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        async move {
            match next {
                Some(next) => next(request, route).await,
                None => panic!("the steps called the route twice"),
            }
        }
    }
}

fn capped(total: usize, per_client: usize) -> Arc<CappedSessions> {
    Arc::new(CappedSessions::new(
        LocalSessionManager::default(),
        total,
        per_client,
    ))
}

/// A request from `peer` (its `ConnectInfo`), naming `session` if any.
fn request(method: Method, peer: &str, session: Option<&str>) -> anyhow::Result<Request> {
    let mut builder = Request::builder()
        .method(method)
        .uri("/mcp")
        .header(header::HOST, "localhost");
    if let Some(session) = session {
        builder = builder.header("mcp-session-id", session);
    }
    let mut request = builder.body(Body::from("{}"))?;
    request
        .extensions_mut()
        .insert(ConnectInfo(peer.parse::<SocketAddr>()?));
    Ok(request)
}

/// Opens a session of `client` (as a request admitted for it would).
async fn open_session(sessions: &CappedSessions, client: &str) -> anyhow::Result<String> {
    let admission = Admission::new(client.to_owned());
    let (id, _transport) = sessions::admit(Some(admission), sessions.create_session()).await?;
    Ok(id.to_string())
}

/// A `next` that asks the session manager for a new session (as rmcp does for a POST
/// without a session id) and answers what rmcp answers when that fails.
fn creating_next(
    sessions: Arc<CappedSessions>,
) -> impl FnOnce(Request) -> futures::future::BoxFuture<'static, Response> {
    move |_request| {
        Box::pin(async move {
            match sessions.create_session().await {
                Ok(_) => canned(StatusCode::OK, "created"),
                Err(_) => canned(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error"),
            }
        })
    }
}

#[tokio::test]
async fn a_client_key_is_made_from_the_peer_address_when_absent() -> anyhow::Result<()> {
    let seen = Seen::default();
    let response = guard_request(
        &guard(None),
        request(Method::POST, "203.0.113.7:4711", None)?,
        after_door(seen.next(canned(StatusCode::OK, "fine"))),
    )
    .await;
    let (status, _, body) = read(response).await?;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"fine"[..]));
    let saw = seen.take()?;
    let key = saw.parts.extensions.get::<ClientKey>();
    assert_eq!(key, Some(&ClientKey::new("ip:203.0.113.7")));
    let facts = saw.facts()?;
    assert_eq!(facts.client, ClientKey::new("ip:203.0.113.7"));
    assert!(facts.post);
    assert!(facts.session.is_none());
    assert!(facts.principal.is_none());
    assert!(
        facts.exchange.is_some(),
        "the guard makes the request's exchange"
    );
    assert_eq!(saw.body.map_err(anyhow::Error::msg)?, "{}");
    Ok(())
}

#[tokio::test]
async fn a_client_key_already_there_is_kept() -> anyhow::Result<()> {
    let seen = Seen::default();
    let mut request = request(Method::GET, A, Some("s-1"))?;
    request
        .extensions_mut()
        .insert(ClientKey::new("principal:alice"));
    guard_request(
        &guard(None),
        request,
        after_door(seen.next(canned(StatusCode::OK, ""))),
    )
    .await;
    let saw = seen.take()?;
    let key = saw.parts.extensions.get::<ClientKey>();
    assert_eq!(key, Some(&ClientKey::new("principal:alice")));
    let facts = saw.facts()?;
    assert_eq!(facts.client, ClientKey::new("principal:alice"));
    assert_eq!(facts.session, None, "a stateless endpoint has no session");
    assert!(!facts.post);
    Ok(())
}

#[tokio::test]
async fn without_a_peer_address_or_key_the_client_is_the_shared_http_key() -> anyhow::Result<()> {
    let seen = Seen::default();
    let request = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header(header::HOST, "localhost")
        .body(Body::empty())?;
    guard_request(
        &guard(None),
        request,
        after_door(seen.next(canned(StatusCode::OK, ""))),
    )
    .await;
    let saw = seen.take()?;
    assert_eq!(
        saw.parts.extensions.get::<ClientKey>(),
        Some(&ClientKey::new("http"))
    );
    Ok(())
}

/// A stateful guard whose sessions (at most 10, 10 a client) hold one, `ip:198.51.100.1`'s.
async fn one_session() -> anyhow::Result<(Arc<CappedSessions>, String, Guard)> {
    let sessions = capped(10, 10);
    let id = open_session(&sessions, "ip:198.51.100.1").await?;
    let guard = guard(Some(Arc::clone(&sessions)));
    Ok((sessions, id, guard))
}

/// A `POST` from `peer` on `session`, with a JSON-RPC body of id `7`.
fn post_on(peer: &str, session: &str) -> anyhow::Result<Request> {
    let mut request = request(Method::POST, peer, Some(session))?;
    request
        .headers_mut()
        .insert(header::CONTENT_TYPE, "application/json".parse()?);
    *request.body_mut() = Body::from(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    Ok(request)
}

/// The door's answer to a session that is not the caller's: rmcp's unknown session as
/// JSON-RPC, with the request's id when its body is a message.
fn session_not_found(id: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "Not Found: Session not found"}})
}

#[tokio::test]
async fn a_session_not_the_callers_own_is_refused_at_the_door() -> anyhow::Result<()> {
    let (_, id, guard) = one_session().await?;
    // Another client's, a made-up one, for each method: 404, and nothing after the door runs.
    for (method, session) in [
        (Method::POST, id.as_str()),
        (Method::POST, "no-such-session"),
        (Method::GET, id.as_str()),
        (Method::DELETE, "no-such-session"),
    ] {
        let seen = Seen::default();
        let request = match method {
            Method::POST => post_on(B, session)?,
            _ => request(method.clone(), B, Some(session))?,
        };
        let response = guard_request(
            &guard,
            request,
            after_door(seen.next(canned(StatusCode::OK, ""))),
        )
        .await;
        let (status, headers, json) = read_json(response).await?;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {session}");
        assert_eq!(header_text(&headers, "content-type"), "application/json");
        let id = match method {
            Method::POST => serde_json::json!(7),
            _ => serde_json::Value::Null,
        };
        assert_eq!(json, session_not_found(id), "{method} {session}");
        assert!(!seen.called(), "next was called for {method} {session}");
    }

    // The owner: on, with the session in its facts.
    let seen = Seen::default();
    guard_request(
        &guard,
        post_on(A, &id)?,
        after_door(seen.next(canned(StatusCode::OK, ""))),
    )
    .await;
    let saw = seen.take()?;
    assert_eq!(header_text(&saw.parts.headers, "mcp-session-id"), id);
    assert_eq!(saw.facts()?.session.as_deref(), Some(id.as_str()));
    Ok(())
}

#[tokio::test]
async fn a_2026_request_and_a_stateless_endpoint_act_in_no_session() -> anyhow::Result<()> {
    let (_, id, stateful) = one_session().await?;
    // 2026-07-28 has no sessions: a made-up id is not honoured, nor refused.
    let seen = Seen::default();
    let mut modern = post_on(B, "no-such-session")?;
    modern
        .headers_mut()
        .insert("mcp-protocol-version", "2026-07-28".parse()?);
    guard_request(
        &stateful,
        modern,
        after_door(seen.next(canned(StatusCode::OK, ""))),
    )
    .await;
    assert_eq!(seen.take()?.facts()?.session, None);

    // A stateless endpoint: any id is ignored.
    let seen = Seen::default();
    guard_request(
        &guard(None),
        post_on(A, &id)?,
        after_door(seen.next(canned(StatusCode::OK, ""))),
    )
    .await;
    assert_eq!(seen.take()?.facts()?.session, None);
    Ok(())
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused_at_the_door_as_rmcp_refuses_it() -> anyhow::Result<()>
{
    let (_, id, guard) = one_session().await?;
    let cases: [(&str, &str, StatusCode, &str); 5] = [
        (
            "host",
            "evil.example",
            StatusCode::FORBIDDEN,
            "Forbidden: Host header is not allowed",
        ),
        (
            "host",
            "not a host",
            StatusCode::BAD_REQUEST,
            "Bad Request: Invalid Host header",
        ),
        (
            "origin",
            "http://evil.example",
            StatusCode::FORBIDDEN,
            "Forbidden: Origin header is not allowed",
        ),
        (
            "origin",
            "null",
            StatusCode::FORBIDDEN,
            "Forbidden: Origin header is not allowed",
        ),
        (
            "origin",
            "::",
            StatusCode::FORBIDDEN,
            "Forbidden: Invalid Origin header",
        ),
    ];
    for (name, value, status, message) in cases {
        // Even the session's owner, with its own live session.
        let mut request = post_on(A, &id)?;
        request.headers_mut().insert(name, value.parse()?);
        let seen = Seen::default();
        let response = guard_request(
            &guard,
            request,
            after_door(seen.next(canned(StatusCode::OK, ""))),
        )
        .await;
        let (got, _, json) = read_json(response).await?;
        assert_eq!(got, status, "{name}: {value}");
        assert_eq!(json["error"]["message"], message, "{name}: {value}");
        assert_eq!(json["id"], serde_json::Value::Null, "read before the body");
        assert!(!seen.called(), "next was called for {name}: {value}");
    }
    // An allowed origin (any port of `http://localhost`) passes.
    let mut request = post_on(A, &id)?;
    request
        .headers_mut()
        .insert("origin", "http://localhost:6274".parse()?);
    let seen = Seen::default();
    guard_request(
        &guard,
        request,
        after_door(seen.next(canned(StatusCode::OK, ""))),
    )
    .await;
    assert!(seen.called());
    Ok(())
}

#[tokio::test]
async fn a_delete_answered_202_becomes_200_and_other_answers_stay() -> anyhow::Result<()> {
    let (_, id, guard) = one_session().await?;

    let seen = Seen::default();
    let response = guard_request(
        &guard,
        request(Method::DELETE, A, Some(&id))?,
        after_door(seen.next(canned(StatusCode::ACCEPTED, ""))),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        header_text(&seen.take()?.parts.headers, "mcp-session-id"),
        id
    );

    // A DELETE answered otherwise keeps its status.
    let response = guard_request(
        &guard,
        request(Method::DELETE, A, Some(&id))?,
        after_door(Seen::default().next(canned(StatusCode::METHOD_NOT_ALLOWED, ""))),
    )
    .await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);

    // A POST answered 202 (a notification) stays 202.
    let response = guard_request(
        &guard,
        request(Method::POST, A, Some(&id))?,
        after_door(Seen::default().next(canned(StatusCode::ACCEPTED, ""))),
    )
    .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    Ok(())
}

/// `peer`'s POST without a session: one `sessions` opens, if the guard admits it.
async fn new_session(
    guard: &Guard,
    sessions: &Arc<CappedSessions>,
    peer: &str,
) -> anyhow::Result<Response> {
    let next = creating_next(Arc::clone(sessions));
    Ok(guard_request(guard, request(Method::POST, peer, None)?, after_door(next)).await)
}

#[tokio::test]
async fn a_new_session_on_a_full_server_is_503_with_retry_after() -> anyhow::Result<()> {
    let sessions = capped(1, 1);
    open_session(&sessions, "ip:198.51.100.1").await?;
    let guard = guard(Some(Arc::clone(&sessions)));
    let (status, headers, body) = read_json(new_session(&guard, &sessions, B).await?).await?;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(header_text(&headers, "retry-after"), "30");
    assert_eq!(header_text(&headers, "content-type"), "application/json");
    assert_eq!(
        body,
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": -32000,
                "message": "The server holds its maximum of 1 live MCP sessions; retry later, or \
                            close sessions you no longer use (HTTP DELETE with their mcp-session-id)",
            },
        })
    );
    Ok(())
}

#[tokio::test]
async fn a_new_session_of_a_client_at_its_cap_is_429() -> anyhow::Result<()> {
    let sessions = capped(10, 1);
    open_session(&sessions, "ip:198.51.100.1").await?;
    let guard = guard(Some(Arc::clone(&sessions)));
    let (status, headers, body) = read_json(new_session(&guard, &sessions, A).await?).await?;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(header_text(&headers, "retry-after"), "30");
    assert_eq!(body["error"]["code"], -32000);
    assert_eq!(
        body["error"]["message"],
        "This client already holds 1 live MCP sessions, the most one client may; reuse one, \
         or close one you no longer use (HTTP DELETE with its mcp-session-id)"
    );

    // Another client still gets its session: `next`'s own answer.
    let (status, _, body) = read(new_session(&guard, &sessions, B).await?).await?;
    assert_eq!((status, &body[..]), (StatusCode::OK, &b"created"[..]));
    Ok(())
}

#[tokio::test]
async fn stateless_requests_are_not_admitted() -> anyhow::Result<()> {
    // Without sessions (stateless), a POST runs with no admission: a session made anyway
    // belongs to the shared `http` key, and nothing is refused.
    let sessions = capped(10, 10);
    let made = Arc::new(std::sync::Mutex::new(None));
    let into = Arc::clone(&made);
    let manager = Arc::clone(&sessions);
    let response = guard_request(
        &guard(None),
        request(Method::POST, A, None)?,
        after_door(move |_| {
            Box::pin(async move {
                let id = manager.create_session().await.ok().map(|(id, _)| id);
                *into
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = id;
                canned(StatusCode::OK, "")
            }) as futures::future::BoxFuture<'static, Response>
        }),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let id = made
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
        .ok_or_else(|| anyhow::anyhow!("no session made"))?;
    assert!(sessions.owned_by(id.as_bytes(), "http"));
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_body_slower_than_body_timeout_is_408() -> anyhow::Result<()> {
    let guard = Guard {
        body_timeout: Duration::from_secs(2),
        ..guard(None)
    };
    let mut request = request(Method::POST, A, None)?;
    *request.body_mut() = stalling_body(&["{\"jsonrpc\":"]);
    let started = tokio::time::Instant::now();
    let seen = Seen::default();
    let response = guard_request(
        &guard,
        request,
        after_door(seen.next(canned(StatusCode::BAD_REQUEST, "the body failed"))),
    )
    .await;
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    let saw = seen.take()?;
    assert!(saw.body.is_err(), "next's read of the body failed");
    let (status, headers, body) = read(response).await?;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    assert_eq!(
        &body[..],
        b"Request Timeout: the body was not received in time"
    );
    assert_eq!(
        header_text(&headers, "content-type"),
        "text/plain; charset=utf-8"
    );
    assert_eq!(header_text(&headers, "connection"), "close");
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_body_within_body_timeout_reaches_next_whole() -> anyhow::Result<()> {
    let guard = Guard {
        body_timeout: Duration::from_secs(2),
        ..guard(None)
    };
    let mut request = request(Method::POST, A, None)?;
    // Chunks that take a second in all: in time.
    let chunks = futures::stream::unfold(0, |n| async move {
        if n == 2 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        Some((
            Ok::<_, std::io::Error>(axum::body::Bytes::from("ab")),
            n + 1,
        ))
    });
    *request.body_mut() = Body::from_stream(chunks);
    let seen = Seen::default();
    let response = guard_request(
        &guard,
        request,
        after_door(seen.next(canned(StatusCode::OK, "ok"))),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(seen.take()?.body.map_err(anyhow::Error::msg)?, "abab");
    Ok(())
}
