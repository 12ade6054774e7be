//! Credentials: the security schemes a document declares (HTTP bearer and basic, API keys in a
//! header, the query or a cookie; OAuth2 and OpenID Connect as bearer tokens), and the
//! credential the mount configured for each — a fixed secret, or one found for the caller.
//! Never from the model's arguments: a parameter a scheme fills is not in the input schema,
//! and an argument cannot name it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::Value;

use super::document::{Document, Place};
use super::schema::Dialect;
use super::{OpenApiError, ParamLocation};
use crate::context::CallContext;

/// A declared security scheme, as the loader applies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `Authorization: Bearer …` (HTTP bearer, OAuth2, OpenID Connect).
    Bearer,
    /// `Authorization: Basic …`.
    Basic,
    /// An API key in a header, the query or a cookie, under `name`.
    ApiKey {
        location: ParamLocation,
        name: String,
    },
    /// Another HTTP scheme (`digest`, …): sent as `Authorization: {scheme} {secret}`.
    Http(String),
}

/// A secret for one security scheme. Its `Debug` never shows the secret.
#[derive(Clone)]
pub enum Credential {
    /// A token, key or password sent as the scheme says (bearer token, API key).
    Secret(String),
    /// HTTP basic: a user and a password.
    Basic {
        /// The user.
        user: String,
        /// The password.
        password: String,
    },
    /// Found for each call from its caller (the [`CallContext`]: its principal, its states);
    /// `None` sends the request without this scheme. Use it to send each user's own upstream
    /// token (held by your server, or a claim of the user's token), never the model's.
    #[allow(
        clippy::type_complexity,
        reason = "the closure's type is the API: a named alias would be one more name to learn"
    )]
    PerCaller(Arc<dyn Fn(&CallContext) -> Option<Credential> + Send + Sync>),
}

impl Credential {
    /// A bearer token.
    pub fn bearer(token: impl Into<String>) -> Self {
        Credential::Secret(token.into())
    }

    /// An API key.
    pub fn api_key(key: impl Into<String>) -> Self {
        Credential::Secret(key.into())
    }

    /// HTTP basic.
    pub fn basic(user: impl Into<String>, password: impl Into<String>) -> Self {
        Credential::Basic {
            user: user.into(),
            password: password.into(),
        }
    }

    /// A credential found for each call (see [`Credential::PerCaller`]).
    pub fn per_caller(
        find: impl Fn(&CallContext) -> Option<Credential> + Send + Sync + 'static,
    ) -> Self {
        Credential::PerCaller(Arc::new(find))
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::Secret(_) => f.write_str("Credential::Secret(..)"),
            Credential::Basic { user, .. } => {
                write!(f, "Credential::Basic {{ user: {user:?}, .. }}")
            }
            Credential::PerCaller(_) => f.write_str("Credential::PerCaller(..)"),
        }
    }
}

/// Where `components.securitySchemes` (or 2.0's `securityDefinitions`) is.
pub(crate) fn schemes_pointer(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::V2 => "#/securityDefinitions",
        _ => "#/components/securitySchemes",
    }
}

/// The document's security schemes, by name.
pub(crate) fn schemes(
    doc: &mut Document,
    dialect: Dialect,
) -> Result<BTreeMap<String, Scheme>, OpenApiError> {
    let at = match dialect {
        Dialect::V2 => Place::root("/securityDefinitions"),
        _ => Place::root("/components/securitySchemes"),
    };
    let Some(Value::Object(declared)) = doc.at(&at).cloned() else {
        return Ok(BTreeMap::new());
    };
    let mut out = BTreeMap::new();
    for name in declared.keys() {
        let place = doc.follow(&at.join(name))?;
        let s = doc.at(&place).cloned().unwrap_or(Value::Null);
        let field = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or("");
        let scheme = match field("type") {
            "http" => match field("scheme").to_ascii_lowercase().as_str() {
                "bearer" => Scheme::Bearer,
                "basic" => Scheme::Basic,
                other => Scheme::Http(other.to_owned()),
            },
            "basic" => Scheme::Basic,
            "oauth2" | "openIdConnect" => Scheme::Bearer,
            "apiKey" => {
                let location = match field("in") {
                    "header" => ParamLocation::Header,
                    "query" => ParamLocation::Query,
                    "cookie" => ParamLocation::Cookie,
                    other => {
                        return Err(OpenApiError::document(
                            &doc.describe(&place),
                            format!(
                                "the API key scheme `{name}` is `in: {other}`, not header, query or cookie"
                            ),
                        ));
                    }
                };
                Scheme::ApiKey {
                    location,
                    name: field("name").to_owned(),
                }
            }
            // mutualTLS and unknown types: applied by the transport, or not at all.
            _ => continue,
        };
        out.insert(name.clone(), scheme);
    }
    Ok(out)
}

/// Whether a parameter (`location`, `name`) is one an API key scheme of `security` fills:
/// it is left out of the input, so the model can neither see nor set it.
pub(crate) fn supplied(
    schemes: &BTreeMap<String, Scheme>,
    security: &[Vec<String>],
    location: ParamLocation,
    name: &str,
) -> bool {
    security.iter().flatten().any(|s| {
        matches!(schemes.get(s), Some(Scheme::ApiKey { location: l, name: n })
            if *l == location && n.eq_ignore_ascii_case(name))
    })
}

/// What a request gets from its security: headers, query pairs and cookies.
#[derive(Default, Debug)]
pub(crate) struct Applied {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) cookies: Vec<(String, String)>,
}

/// The first alternative of `security` whose every scheme has a credential (configured, or
/// found for this caller), applied. None that does: nothing applied, and the API decides
/// (a `401` is answered `AUTH_REQUIRED`). An empty alternative (`{}`: the credential is
/// optional) applies nothing, which is also what happens when no alternative applies: it is
/// passed over, so `[{}, {"key": []}]` sends the key when one is configured.
pub(crate) fn apply(
    schemes: &BTreeMap<String, Scheme>,
    security: &[Vec<String>],
    configured: &BTreeMap<String, Credential>,
    cx: &CallContext,
) -> Applied {
    'alternatives: for alternative in security.iter().filter(|a| !a.is_empty()) {
        let mut applied = Applied::default();
        for name in alternative {
            let (Some(scheme), Some(credential)) = (schemes.get(name), configured.get(name)) else {
                continue 'alternatives;
            };
            let credential = match credential {
                Credential::PerCaller(find) => match find(cx) {
                    Some(Credential::PerCaller(_)) | None => continue 'alternatives,
                    Some(c) => c,
                },
                c => c.clone(),
            };
            put(&mut applied, scheme, &credential);
        }
        return applied;
    }
    Applied::default()
}

fn put(applied: &mut Applied, scheme: &Scheme, credential: &Credential) {
    let secret = match credential {
        Credential::Secret(s) => s.clone(),
        Credential::Basic { user, password } => {
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        }
        Credential::PerCaller(_) => return,
    };
    match scheme {
        Scheme::Bearer => applied
            .headers
            .push(("authorization".into(), format!("Bearer {secret}"))),
        Scheme::Basic => {
            let value = match credential {
                Credential::Basic { .. } => secret,
                _ => base64::engine::general_purpose::STANDARD.encode(&secret),
            };
            applied
                .headers
                .push(("authorization".into(), format!("Basic {value}")));
        }
        Scheme::Http(kind) => applied
            .headers
            .push(("authorization".into(), format!("{kind} {secret}"))),
        Scheme::ApiKey { location, name } => {
            let pair = (name.clone(), secret);
            match location {
                ParamLocation::Header => applied.headers.push(pair),
                ParamLocation::Query => applied.query.push(pair),
                ParamLocation::Cookie | ParamLocation::Path => applied.cookies.push(pair),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{RequestScope, States};

    fn cx() -> CallContext {
        CallContext::new(
            "a.b",
            "a_b".into(),
            Arc::new(States::default()),
            RequestScope::detached(),
        )
    }

    #[test]
    fn an_optional_credential_is_sent_when_configured() {
        let schemes = BTreeMap::from([(
            "key".to_owned(),
            Scheme::ApiKey {
                location: ParamLocation::Header,
                name: "X-Key".into(),
            },
        )]);
        let configured = BTreeMap::from([("key".to_owned(), Credential::api_key("k1"))]);
        // `security: [{}, {key: []}]`: anonymous or with the key.
        let optional = [Vec::new(), vec!["key".to_owned()]];
        let applied = apply(&schemes, &optional, &configured, &cx());
        assert_eq!(applied.headers, [("X-Key".to_owned(), "k1".to_owned())]);
        // Without a credential for it, nothing is sent.
        let applied = apply(&schemes, &optional, &BTreeMap::new(), &cx());
        assert!(applied.headers.is_empty() && applied.query.is_empty());
    }
}
