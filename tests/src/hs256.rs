//! A test issuer with an HS256 secret: the tokens it mints and the [`Auth`] that verifies
//! them, for a server on loopback.

use fusion_runtime::auth::{Auth, AuthMode, JwtVerifier};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::json;

use crate::services::{mint, now};

/// An issuer (`iss`) signing for one resource (`aud`) with a shared secret.
pub struct Issuer {
    pub secret: &'static str,
    pub issuer: &'static str,
    pub resource: &'static str,
}

impl Issuer {
    /// A token for `sub`, valid for ten minutes.
    pub fn token(&self, sub: &str) -> String {
        let key =
            EncodingKey::from_secret(self.secret.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        mint(
            Algorithm::HS256,
            &key,
            &json!({"sub": sub, "aud": self.resource, "iss": self.issuer, "exp": now() + 600}),
        )
    }

    /// The authentication that verifies this issuer's tokens, in `mode`.
    pub fn auth(&self, mode: AuthMode) -> Auth {
        let verifier = JwtVerifier::new(self.resource)
            .issuer(self.issuer)
            .hs256_secret(self.secret.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        Auth::new(verifier, self.resource)
            .authorization_server(self.issuer)
            .mode(mode)
    }
}
