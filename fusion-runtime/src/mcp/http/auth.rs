//! The HTTP side of [`auth`](crate::auth): bearer tokens checked before anything else reads
//! the request, `401` with `WWW-Authenticate`, and the Protected Resource Metadata document.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;

use crate::auth::{Auth, AuthMode, METADATA_PATH};
use crate::server::ClientKey;

/// What the layer needs, worked out once.
pub(crate) struct AuthLayer {
    auth: Arc<Auth>,
    /// The metadata document, serialized.
    metadata: Arc<str>,
    /// Where it is served: the root well-known path and the one with the endpoint's path.
    metadata_paths: [String; 2],
    /// `Bearer resource_metadata="…"`, the start of every challenge.
    challenge: String,
}

impl AuthLayer {
    pub(crate) fn new(auth: Arc<Auth>, endpoint_path: &str, declared_scopes: &[String]) -> Self {
        let metadata = auth.metadata(declared_scopes).to_string();
        let challenge = format!(
            "Bearer resource_metadata=\"{}\"",
            quoted(&auth.metadata_url())
        );
        let endpoint_path = endpoint_path.trim_end_matches('/');
        AuthLayer {
            metadata: metadata.into(),
            metadata_paths: [
                METADATA_PATH.to_owned(),
                format!("{METADATA_PATH}{endpoint_path}"),
            ],
            challenge,
            auth,
        }
    }
}

/// Characters a quoted-string cannot hold as they are.
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

/// What the `Authorization` header holds.
enum Credentials<'a> {
    /// No header, or another authentication scheme (`Basic …`): RFC 6750 §3.1 answers a
    /// request that uses a method this server does not support as one without credentials.
    None,
    Bearer(&'a str),
    /// A header that is not a usable bearer token: a `Bearer` without a token or with more
    /// than one, two `Authorization` headers, an empty or non-text value.
    Malformed,
}

fn credentials(headers: &HeaderMap) -> Credentials<'_> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Credentials::None;
    };
    if values.next().is_some() {
        return Credentials::Malformed;
    }
    let Ok(text) = value.to_str() else {
        return Credentials::Malformed;
    };
    let text = text.trim();
    let (scheme, token) = text
        .split_once(char::is_whitespace)
        .map_or((text, ""), |(scheme, token)| (scheme, token.trim()));
    if scheme.is_empty() {
        return Credentials::Malformed;
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Credentials::None;
    }
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Credentials::Malformed;
    }
    Credentials::Bearer(token)
}

impl AuthLayer {
    /// Whether `path` is one of the resource-metadata document's.
    pub(crate) fn serves_metadata(&self, path: &str) -> bool {
        self.metadata_paths.iter().any(|p| p == path)
    }

    /// The metadata document, as a request with `method` gets it.
    pub(crate) fn metadata(&self, method: &Method) -> Response {
        metadata(self, method)
    }

    /// Refuses a request the endpoint may not take (`401`), or puts the principal of its
    /// valid token (and its client key) into its extensions.
    pub(crate) async fn authenticate(&self, request: &mut Request) -> Result<(), Response> {
        match credentials(request.headers()) {
            Credentials::None if self.auth.auth_mode() == AuthMode::Optional => Ok(()),
            Credentials::None => Err(unauthorized(self, None)),
            Credentials::Malformed => Err(unauthorized(
                self,
                Some((
                    "invalid_request",
                    "the Authorization header must be `Bearer <token>`",
                )),
            )),
            Credentials::Bearer(token) => match self.auth.verifier().verify(token).await {
                // Whatever the verifier: a blank subject would make its tokens one client.
                Ok(principal) if principal.subject().trim().is_empty() => Err(unauthorized(
                    self,
                    Some(("invalid_token", "the token's subject (`sub`) is empty")),
                )),
                Ok(principal) => {
                    tracing::debug!(subject = principal.subject(), "authenticated");
                    request
                        .extensions_mut()
                        .insert(ClientKey::new(principal.client_key()));
                    request.extensions_mut().insert(principal);
                    Ok(())
                }
                Err(e) => {
                    tracing::info!(reason = %e, "refused a bearer token");
                    Err(unauthorized(self, Some(("invalid_token", &e.0))))
                }
            },
        }
    }
}

fn metadata(layer: &AuthLayer, method: &Method) -> Response {
    if method != Method::GET && method != Method::HEAD && method != Method::OPTIONS {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        r.headers_mut().insert(
            header::ALLOW,
            HeaderValue::from_static("GET, HEAD, OPTIONS"),
        );
        return r;
    }
    let mut r = Response::new(Body::from(layer.metadata.to_string()));
    let headers = r.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // Public, and read by browser-based clients from other origins.
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    r
}

/// `401` with the challenge; `error` is the RFC 6750 code and description when a token (or
/// a malformed header) was sent.
fn unauthorized(layer: &AuthLayer, error: Option<(&str, &str)>) -> Response {
    let mut challenge = layer.challenge.clone();
    let body = match error {
        Some((code, description)) => {
            challenge.push_str(&format!(
                ", error=\"{code}\", error_description=\"{}\"",
                quoted(description)
            ));
            serde_json::json!({ "error": code, "error_description": description })
        }
        None => serde_json::json!({
            "error": "unauthorized",
            "error_description": "this MCP endpoint needs an OAuth access token: see the resource metadata",
        }),
    };
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = r.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    match HeaderValue::from_str(&challenge) {
        Ok(v) => {
            headers.insert(header::WWW_AUTHENTICATE, v);
        }
        Err(_) => {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_read_from_one_bearer_header() {
        let read = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(
                    header::AUTHORIZATION,
                    HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("x")),
                );
            }
            match credentials(&h) {
                Credentials::None => "none".to_owned(),
                Credentials::Bearer(t) => format!("bearer {t}"),
                Credentials::Malformed => "malformed".to_owned(),
            }
        };
        assert_eq!(read(&[]), "none");
        assert_eq!(read(&["Bearer abc"]), "bearer abc");
        assert_eq!(read(&["bearer  abc "]), "bearer abc");
        assert_eq!(read(&["Basic dXNlcjpwYXNz"]), "none", "another scheme");
        assert_eq!(read(&["Negotiate"]), "none", "another scheme");
        assert_eq!(read(&["Bearer"]), "malformed");
        assert_eq!(read(&["Bearer a b"]), "malformed", "two tokens");
        assert_eq!(read(&[""]), "malformed");
        assert_eq!(read(&["Bearer a", "Bearer b"]), "malformed");
    }

    #[test]
    fn quoted_strings_escape_quotes_and_drop_controls() {
        assert_eq!(quoted("a\"b\\c\nd"), "a\\\"b\\\\cd");
    }
}
