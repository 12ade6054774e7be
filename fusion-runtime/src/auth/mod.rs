//! Who is calling: bearer tokens verified as the MCP authorization spec asks of an OAuth 2.1
//! resource server, the [`Principal`] a valid token stands for, and per-action scopes.
//!
//! Authentication is HTTP-level, so it is the same for every MCP protocol revision a client
//! speaks (2025-06-18, 2025-11-25, 2026-07-28):
//!
//! - every request to the streamable HTTP endpoint may carry `Authorization: Bearer <token>`;
//!   the configured [`TokenVerifier`] (built in: [`JwtVerifier`]) checks it — signature,
//!   issuer, audience (this server, RFC 8707), expiry with a small leeway;
//! - a missing token where the endpoint requires one, or any invalid token, is answered
//!   `401` with `WWW-Authenticate: Bearer resource_metadata="…"` (and
//!   `error="invalid_token"` when a token was sent; a token with a blank `sub` is invalid);
//!   another scheme (`Authorization: Basic …`) counts as no token (RFC 6750 §3.1), a
//!   malformed `Bearer` header is `error="invalid_request"`;
//! - a required endpoint names who issues its tokens — the verifier's issuer or an
//!   authorization server in the metadata — or does not start ([`Auth::check`]);
//! - the Protected Resource Metadata (RFC 9728) is served at
//!   `/.well-known/oauth-protected-resource` and at the same path followed by the endpoint's
//!   path (`/.well-known/oauth-protected-resource/mcp`).
//!
//! **Whole endpoint or per action** is the operator's choice ([`AuthMode`]): with
//! [`AuthMode::Required`] (the default) nothing is reached without a valid token; with
//! [`AuthMode::Optional`] anonymous requests pass, and only actions that declare scopes
//! (`#[tool_action(scopes = ["billing:write"])]`, or
//! [`ServerBuilder::scopes`](crate::ServerBuilder::scopes)) refuse them.
//!
//! A scoped action called with no principal is answered `AUTH_REQUIRED` (the user must sign
//! in; no retry until then); a principal lacking a scope gets `FORBIDDEN` naming the missing
//! scope. Neither runs validation or the handler.
//!
//! **`tools/list` shows every action**, whoever asks: the list is the server's contract (the
//! lockfile, the diff, caches keyed by server all assume one list), an agent that can see a
//! scoped action can tell the user which permission to ask for, and the call itself is what
//! is refused, with an envelope saying why.
//!
//! **Over stdio there is no principal** unless the embedding code sets one
//! ([`StdioOptions::principal`](crate::mcp::StdioOptions::principal)): a stdio server runs as
//! its user's child process, and no token travels over a pipe. In-process calls can set one
//! with [`RequestScope::with_principal`](crate::server::RequestScope::with_principal).
//!
//! The principal reaches handlers as [`Context::principal`](crate::Context::principal) and
//! middleware as [`CallContext::principal`](crate::server::CallContext::principal). Per-client
//! rate limits count an authenticated call against its subject (`sub:<subject>`), not its
//! address.
//!
//! **Behind a gateway**, an upstream server trusts the gateway's signed, short-lived, one-time
//! [`Delegation`] tokens, checked by [`DelegationVerifier`]'s middleware: see [`delegation`]
//! for what is signed, the format, the bounds and the replay store.

pub mod delegation;
#[cfg(feature = "auth-jwt")]
mod jwt;
mod permission;
pub mod seal;

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

pub use delegation::{
    DELEGATION_META_KEY, Delegation, DelegationError, DelegationKey, DelegationVerifier,
};
#[cfg(feature = "auth-jwt")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth-jwt")))]
pub use jwt::{JwtError, JwtVerifier};
pub use permission::check_scopes;
pub use seal::{Seal, SealError};

/// Who is calling: the subject of a verified token, the scopes it grants, the OAuth client it
/// was issued to and all of its claims.
#[derive(Clone, Debug, PartialEq)]
pub struct Principal {
    subject: String,
    scopes: Vec<String>,
    client_id: Option<String>,
    claims: Map<String, Value>,
}

impl Principal {
    /// A principal with no scopes, client id or claims.
    pub fn new(subject: impl Into<String>) -> Self {
        Principal {
            subject: subject.into(),
            scopes: Vec::new(),
            client_id: None,
            claims: Map::new(),
        }
    }

    /// The principal of a token's claims: `sub` (required), the scopes from `scope` (a
    /// space-separated string, RFC 9068) or `scp` (a string or an array), the client from
    /// `client_id` or `azp`. `None` without a string `sub`, or with a blank one (every such
    /// token would be one client to rate limits and sessions).
    pub fn from_claims(claims: Map<String, Value>) -> Option<Self> {
        let subject = claims.get("sub")?.as_str()?;
        if subject.trim().is_empty() {
            return None;
        }
        let subject = subject.to_owned();
        let mut scopes: Vec<String> = Vec::new();
        for key in ["scope", "scp"] {
            match claims.get(key) {
                Some(Value::String(s)) => scopes.extend(s.split_whitespace().map(str::to_owned)),
                Some(Value::Array(items)) => {
                    scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned))
                }
                _ => {}
            }
        }
        scopes.sort();
        scopes.dedup();
        let client_id = ["client_id", "azp"]
            .iter()
            .find_map(|k| claims.get(*k)?.as_str().map(str::to_owned));
        Some(Principal {
            subject,
            scopes,
            client_id,
            claims,
        })
    }

    /// Adds scopes.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self.scopes.sort();
        self.scopes.dedup();
        self
    }

    /// Sets the OAuth client id.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the token's claims.
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// The subject (`sub`): who the token speaks for.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The scopes granted, sorted.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether `scope` is granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The OAuth client the token was issued to (`client_id` or `azp`), if it says.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// Every claim of the token (empty for a principal set by embedding code).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// The key per-client rate limits count this principal's calls against.
    pub fn client_key(&self) -> String {
        format!("sub:{}", self.subject)
    }
}

/// Why a token was refused. Its message goes to the client in `error_description`: it names
/// what failed (expired, wrong audience, …), never key material.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidToken(pub String);

/// Verifies a bearer token and says whom it stands for.
///
/// Implement it for tokens that are not JWTs (introspection, RFC 7662; a session store).
/// It must check that the token was issued for this server (its audience), and it must be
/// bounded in time: the HTTP layer waits for it while the request holds a connection.
pub trait TokenVerifier: Send + Sync + 'static {
    /// The principal of `token`, or why it is refused.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, InvalidToken>>;

    /// The one issuer whose tokens this verifier accepts, if it is pinned to one. `None` (the
    /// default) says nothing is known: [`Auth::check`] then wants an authorization server.
    fn pinned_issuer(&self) -> Option<&str> {
        None
    }
}

/// Why an [`Auth`] cannot be served.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthConfigError {
    /// Every request needs a token, yet nothing says who issues them: the verifier is pinned
    /// to no issuer and no authorization server is named. Tokens of any issuer the keys
    /// verify would pass, and the metadata would send clients nowhere to get one.
    #[error(
        "authentication is required but names no issuer: pin the verifier to the issuer tokens \
         must name (`JwtVerifier::issuer`, `serve --auth-issuer URL`) or name the authorization \
         server clients get tokens from (`Auth::authorization_server`, `serve --auth-server URL`)"
    )]
    NoIssuer,
}

/// Whether the endpoint needs a token for every request, or only scoped actions need a
/// principal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthMode {
    /// Every request needs a valid token; without one: `401`.
    #[default]
    Required,
    /// Requests without a token pass as anonymous; scoped actions answer them
    /// `AUTH_REQUIRED`. A token that is sent must still be valid (`401` otherwise).
    Optional,
}

/// How the HTTP endpoint authenticates: the verifier, the protected resource's identity and
/// the metadata it publishes.
///
/// ```
/// use fusion_runtime::auth::{Auth, AuthMode, JwtVerifier};
///
/// let verifier = JwtVerifier::new("https://billing.example.com/mcp")
///     .issuer("https://auth.example.com")
///     .hs256_secret(b"a secret of at least 32 bytes, really")?;
/// let auth = Auth::new(verifier, "https://billing.example.com/mcp")
///     .authorization_server("https://auth.example.com")
///     .mode(AuthMode::Optional);
/// assert_eq!(
///     auth.metadata_url(),
///     "https://billing.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// # Ok::<(), fusion_runtime::auth::JwtError>(())
/// ```
#[derive(Clone)]
pub struct Auth {
    verifier: Arc<dyn TokenVerifier>,
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    mode: AuthMode,
    resource_name: Option<String>,
}

/// The well-known path of Protected Resource Metadata (RFC 9728).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

impl Auth {
    /// Authentication with `verifier`, for the protected resource `resource`: the MCP
    /// endpoint's public URL (`https://billing.example.com/mcp`), which tokens must name as
    /// their audience.
    pub fn new(verifier: impl TokenVerifier, resource: impl Into<String>) -> Self {
        Auth::with_verifier(Arc::new(verifier), resource)
    }

    /// [`Auth::new`] with a shared verifier.
    pub fn with_verifier(verifier: Arc<dyn TokenVerifier>, resource: impl Into<String>) -> Self {
        Auth {
            verifier,
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: None,
            mode: AuthMode::default(),
            resource_name: None,
        }
    }

    /// Adds an authorization server (its issuer URL) clients can get tokens from.
    pub fn authorization_server(mut self, url: impl Into<String>) -> Self {
        self.authorization_servers.push(url.into());
        self
    }

    /// The scopes the metadata lists; by default every scope an action declares.
    pub fn scopes_supported(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Whole endpoint ([`AuthMode::Required`], the default) or per action.
    pub fn mode(mut self, mode: AuthMode) -> Self {
        self.mode = mode;
        self
    }

    /// A human-readable name for the metadata's `resource_name`.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The verifier.
    pub fn verifier(&self) -> &Arc<dyn TokenVerifier> {
        &self.verifier
    }

    /// The protected resource's URL.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The mode.
    pub fn auth_mode(&self) -> AuthMode {
        self.mode
    }

    /// Checks that this can be served: in [`AuthMode::Required`], the verifier must be pinned
    /// to an issuer ([`TokenVerifier::pinned_issuer`]) or an authorization server be named
    /// ([`AuthConfigError::NoIssuer`] otherwise). [`AuthMode::Optional`] without either is
    /// served, with a warning logged. [`ServerBuilder::build`](crate::ServerBuilder::build) and
    /// [`spawn_http`](crate::mcp::spawn_http) call it.
    pub fn check(&self) -> Result<(), AuthConfigError> {
        if !self.authorization_servers.is_empty() || self.verifier.pinned_issuer().is_some() {
            return Ok(());
        }
        match self.mode {
            AuthMode::Required => Err(AuthConfigError::NoIssuer),
            AuthMode::Optional => {
                tracing::warn!(
                    resource = %self.resource,
                    "optional authentication names no issuer and no authorization server: tokens of any issuer are accepted (set `JwtVerifier::issuer` / `--auth-issuer`, or `Auth::authorization_server` / `--auth-server`)"
                );
                Ok(())
            }
        }
    }

    /// The URL of the metadata document, as `WWW-Authenticate` names it: the well-known path
    /// inserted between the resource's origin and its path (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        let (origin, path) = split_origin(&self.resource);
        let path = path.trim_end_matches('/');
        format!("{origin}{METADATA_PATH}{path}")
    }

    /// The Protected Resource Metadata document (RFC 9728 §2). `declared` is the scopes the
    /// server's actions declare, listed when [`Auth::scopes_supported`] was not set.
    pub fn metadata(&self, declared: &[String]) -> Value {
        let mut m = Map::new();
        m.insert("resource".into(), Value::String(self.resource.clone()));
        m.insert(
            "authorization_servers".into(),
            Value::from(self.authorization_servers.clone()),
        );
        let scopes = self.scopes_supported.as_deref().unwrap_or(declared);
        m.insert("scopes_supported".into(), Value::from(scopes.to_vec()));
        m.insert(
            "bearer_methods_supported".into(),
            Value::from(vec!["header".to_owned()]),
        );
        if let Some(name) = &self.resource_name {
            m.insert("resource_name".into(), Value::String(name.clone()));
        }
        Value::Object(m)
    }
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// `https://host:port` and `/path` of a URL (the whole text and `""` when it has no scheme).
fn split_origin(url: &str) -> (&str, &str) {
    let Some(scheme_end) = url.find("://") else {
        return (url, "");
    };
    let rest = &url[scheme_end + 3..];
    match rest.find(['/', '?', '#']) {
        Some(i) => {
            let cut = scheme_end + 3 + i;
            let path = &url[cut..];
            let path = path.split(['?', '#']).next().unwrap_or("");
            (&url[..cut], path)
        }
        None => (url, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Refuses every token: the metadata does not depend on the verifier.
    struct RefuseAll;

    impl TokenVerifier for RefuseAll {
        fn verify<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Principal, InvalidToken>> {
            Box::pin(std::future::ready(Err(InvalidToken("refused".to_owned()))))
        }
    }

    #[test]
    fn metadata_url_inserts_the_well_known_path() {
        let auth = |r: &str| Auth::new(RefuseAll, r).metadata_url();
        assert_eq!(
            auth("https://a.example/mcp"),
            "https://a.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            auth("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            auth("https://a.example/"),
            "https://a.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            auth("https://a.example/x/mcp?q=1"),
            "https://a.example/.well-known/oauth-protected-resource/x/mcp"
        );
    }

    /// Pinned to one issuer.
    struct Pinned;

    impl TokenVerifier for Pinned {
        fn verify<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Principal, InvalidToken>> {
            Box::pin(std::future::ready(Err(InvalidToken("refused".to_owned()))))
        }

        fn pinned_issuer(&self) -> Option<&str> {
            Some("https://auth.example")
        }
    }

    #[test]
    fn required_auth_needs_an_issuer_or_an_authorization_server() {
        let r = "https://a.example/mcp";
        assert_eq!(
            Auth::new(RefuseAll, r).check(),
            Err(AuthConfigError::NoIssuer)
        );
        assert_eq!(Auth::new(Pinned, r).check(), Ok(()));
        let with_server = Auth::new(RefuseAll, r).authorization_server("https://auth.example");
        assert_eq!(with_server.check(), Ok(()));
        let optional = Auth::new(RefuseAll, r).mode(AuthMode::Optional);
        assert_eq!(optional.check(), Ok(()), "served, with a warning");
    }

    #[test]
    fn principal_reads_scope_and_scp_and_client() {
        let claims = serde_json::json!({
            "sub": "user-1", "scope": "b:write a:read", "scp": ["c"], "azp": "app"
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        let p = Principal::from_claims(claims).unwrap_or_else(|| Principal::new("?"));
        assert_eq!(p.subject(), "user-1");
        assert_eq!(p.scopes(), ["a:read", "b:write", "c"]);
        assert_eq!(p.client_id(), Some("app"));
        assert!(p.has_scope("b:write") && !p.has_scope("b"));
        assert_eq!(p.client_key(), "sub:user-1");
        assert!(Principal::from_claims(Map::new()).is_none());
        for blank in ["", "  \t"] {
            let claims = serde_json::json!({ "sub": blank }).as_object().cloned();
            assert!(
                Principal::from_claims(claims.unwrap_or_default()).is_none(),
                "sub {blank:?}"
            );
        }
    }
}
