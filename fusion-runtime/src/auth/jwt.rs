//! The built-in [`TokenVerifier`](super::TokenVerifier): JWT access tokens on `jsonwebtoken`.

use std::path::Path;
use std::time::Duration;

use futures::future::BoxFuture;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};

use super::{InvalidToken, Principal, TokenVerifier};

/// The longest token read; longer ones are refused unread (a bound on what one request
/// makes the verifier do).
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The largest JWKS file read.
const MAX_JWKS_BYTES: u64 = 1024 * 1024;

/// Why a JWT verifier could not be configured, or a token was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// A key could not be read (bad PEM, unsupported JWK).
    #[error("unusable key: {0}")]
    Key(String),
    /// The JWKS file could not be read.
    #[error("cannot read the JWKS file {path}: {reason}")]
    Jwks {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The token was refused; the text says why (for `error_description`).
    #[error("{0}")]
    Refused(String),
}

/// One verification key and the one algorithm it accepts (never chosen by the token: an
/// `RS256` key cannot be used as an `HS256` secret).
#[derive(Clone)]
struct Key {
    id: Option<String>,
    algorithm: Algorithm,
    key: DecodingKey,
}

/// Verifies JWT access tokens: the signature with a configured key (HS256 secrets, RS256 or
/// ES256 public keys in PEM, or the keys of a local JWKS file), then the claims: `aud` must
/// name this server (RFC 8707), `iss` the configured issuer, `exp` must be in the future and
/// `nbf` (when present) in the past, both with a small leeway (30 s by default); `sub` must
/// be present and not blank (tokens with an empty subject would all be one client).
///
/// ```
/// use fusion_runtime::auth::JwtVerifier;
///
/// let v = JwtVerifier::new("https://billing.example.com/mcp")
///     .issuer("https://auth.example.com")
///     .hs256_secret(b"a secret of at least 32 bytes, really")?;
/// assert!(v.verify_token("not.a.jwt").is_err());
/// # Ok::<(), fusion_runtime::auth::JwtError>(())
/// ```
#[derive(Clone)]
pub struct JwtVerifier {
    audience: String,
    issuer: Option<String>,
    leeway: Duration,
    keys: Vec<Key>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("audience", &self.audience)
            .field("issuer", &self.issuer)
            .field("leeway", &self.leeway)
            .field("keys", &self.keys.len())
            .finish()
    }
}

impl JwtVerifier {
    /// A verifier for tokens whose audience is `audience` (this server's resource URL), with
    /// no key yet: add one or more.
    pub fn new(audience: impl Into<String>) -> Self {
        JwtVerifier {
            audience: audience.into(),
            issuer: None,
            leeway: Duration::from_secs(30),
            keys: Vec::new(),
        }
    }

    /// The issuer tokens must name (`iss`, required when set).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Clock skew tolerated on `exp` and `nbf` (30 s by default).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Accepts HS256 tokens signed with `secret` (shared with the authorization server).
    pub fn hs256_secret(mut self, secret: &[u8]) -> Result<Self, JwtError> {
        if secret.len() < 32 {
            return Err(JwtError::Key(
                "an HS256 secret must be at least 32 bytes".into(),
            ));
        }
        let key = DecodingKey::from_secret(secret).map_err(|e| JwtError::Key(e.to_string()))?;
        self.keys.push(Key {
            id: None,
            algorithm: Algorithm::HS256,
            key,
        });
        Ok(self)
    }

    /// Accepts RS256 tokens signed by the private half of this RSA public key (PEM).
    pub fn rs256_pem(mut self, pem: &[u8]) -> Result<Self, JwtError> {
        let key = DecodingKey::from_rsa_pem(pem).map_err(|e| JwtError::Key(e.to_string()))?;
        self.keys.push(Key {
            id: None,
            algorithm: Algorithm::RS256,
            key,
        });
        Ok(self)
    }

    /// Accepts ES256 tokens signed by the private half of this P-256 public key (PEM).
    pub fn es256_pem(mut self, pem: &[u8]) -> Result<Self, JwtError> {
        let key = DecodingKey::from_ec_pem(pem).map_err(|e| JwtError::Key(e.to_string()))?;
        self.keys.push(Key {
            id: None,
            algorithm: Algorithm::ES256,
            key,
        });
        Ok(self)
    }

    /// Accepts tokens signed by the keys of a JWKS document (RFC 7517, `{"keys": [..]}`), each
    /// with its `kid` and its `alg` (RS256 for an RSA key, ES256 for a P-256 key, HS256 for an
    /// `oct` key when the JWK names none).
    pub fn jwks(mut self, json: &str) -> Result<Self, JwtError> {
        let set: JwkSet = serde_json::from_str(json).map_err(|e| JwtError::Key(e.to_string()))?;
        for jwk in &set.keys {
            let algorithm = match jwk
                .common
                .key_algorithm
                .map(|a| a.to_string().parse::<Algorithm>())
            {
                Some(Ok(alg)) => alg,
                Some(Err(e)) => return Err(JwtError::Key(e.to_string())),
                None => match &jwk.algorithm {
                    AlgorithmParameters::RSA(_) => Algorithm::RS256,
                    AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => {
                        Algorithm::ES256
                    }
                    AlgorithmParameters::OctetKey(_) => Algorithm::HS256,
                    _ => {
                        return Err(JwtError::Key(
                            "a JWK without `alg` must be an RSA, P-256 or oct key".into(),
                        ));
                    }
                },
            };
            let key = DecodingKey::from_jwk(jwk).map_err(|e| JwtError::Key(e.to_string()))?;
            self.keys.push(Key {
                id: jwk.common.key_id.clone(),
                algorithm,
                key,
            });
        }
        Ok(self)
    }

    /// [`JwtVerifier::jwks`] from a local file (at most 1 MiB), read once.
    pub fn jwks_file(self, path: impl AsRef<Path>) -> Result<Self, JwtError> {
        let path = path.as_ref();
        let fail = |reason: String| JwtError::Jwks {
            path: path.display().to_string(),
            reason,
        };
        let len = std::fs::metadata(path)
            .map_err(|e| fail(e.to_string()))?
            .len();
        if len > MAX_JWKS_BYTES {
            return Err(fail(format!("larger than {MAX_JWKS_BYTES} bytes")));
        }
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        self.jwks(&text)
    }

    /// The audience tokens must name.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The issuer tokens must name, when one was set ([`JwtVerifier::issuer`]).
    pub fn pinned_issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// Checks `token` and returns its principal.
    pub fn verify_token(&self, token: &str) -> Result<Principal, JwtError> {
        let refuse = |why: &str| Err(JwtError::Refused(why.to_owned()));
        if token.len() > MAX_TOKEN_BYTES {
            return refuse("the token is too long");
        }
        let Ok(header) = decode_header(token) else {
            return refuse("the token is not a well-formed JWT");
        };
        let candidates = self.keys.iter().filter(|k| {
            k.algorithm == header.alg
                && match (&header.kid, &k.id) {
                    (Some(want), Some(have)) => want == have,
                    _ => true,
                }
        });
        let mut last = None;
        for key in candidates {
            match decode::<Map<String, Value>>(token, &key.key, &self.validation(key.algorithm)) {
                Ok(data) => {
                    if data
                        .claims
                        .get("sub")
                        .and_then(Value::as_str)
                        .map(str::trim)
                        == Some("")
                    {
                        return refuse("the token's subject (`sub`) is empty");
                    }
                    return Principal::from_claims(data.claims).ok_or_else(|| {
                        JwtError::Refused("the token has no subject (`sub`)".into())
                    });
                }
                Err(e) => last = Some(e),
            }
        }
        match last {
            None => {
                refuse("the token is signed with a key or algorithm this server does not accept")
            }
            Some(e) => refuse(describe(e.kind())),
        }
    }

    fn validation(&self, algorithm: Algorithm) -> Validation {
        let mut v = Validation::new(algorithm);
        v.leeway = self.leeway.as_secs();
        v.validate_nbf = true;
        v.set_audience(&[&self.audience]);
        let mut required = vec!["exp", "aud", "sub"];
        if let Some(iss) = &self.issuer {
            v.set_issuer(&[iss]);
            required.push("iss");
        }
        v.set_required_spec_claims(&required);
        v
    }
}

fn describe(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::ExpiredSignature => "the token has expired",
        K::ImmatureSignature => "the token is not valid yet (`nbf`)",
        K::InvalidAudience => "the token was issued for another resource (audience)",
        K::InvalidIssuer => "the token was issued by an untrusted issuer",
        K::InvalidSignature => "the token's signature does not verify",
        K::MissingRequiredClaim(c) if c == "aud" => "the token names no audience (`aud`)",
        K::MissingRequiredClaim(c) if c == "iss" => "the token names no issuer (`iss`)",
        K::MissingRequiredClaim(c) if c == "exp" => "the token has no expiry (`exp`)",
        K::MissingRequiredClaim(_) => "the token lacks a required claim",
        K::InvalidAlgorithm => "the token's algorithm is not accepted",
        _ => "the token is malformed",
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, InvalidToken>> {
        let verdict = self
            .verify_token(token)
            .map_err(|e| InvalidToken(e.to_string()));
        Box::pin(std::future::ready(verdict))
    }

    fn pinned_issuer(&self) -> Option<&str> {
        JwtVerifier::pinned_issuer(self)
    }
}
