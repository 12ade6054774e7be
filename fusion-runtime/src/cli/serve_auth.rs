//! The `serve` flags for authentication (feature `auth-jwt`) and the shared rate-limit store
//! (feature `redis`).

#[cfg(feature = "auth-jwt")]
use std::path::PathBuf;
#[cfg(feature = "redis")]
use std::time::Duration;

#[cfg(feature = "auth-jwt")]
use crate::auth::{Auth, AuthMode, JwtVerifier};
#[cfg(feature = "redis")]
use crate::guard::OnStoreFailure;
#[cfg(feature = "redis")]
use crate::server::Server;

#[cfg(feature = "auth-jwt")]
/// `serve --http` authentication: any key flag turns it on. Each flag also reads the
/// environment variable named in its help.
#[derive(Debug, Default, clap::Args)]
pub struct AuthArgs {
    /// The public URL of this MCP endpoint (`https://mcp.example.com/mcp`): the audience
    /// tokens must name, and the `resource` of the metadata. Required with a key.
    #[arg(long, value_name = "URL", env = "FUSION_AUTH_RESOURCE")]
    pub auth_resource: Option<String>,
    /// The issuer tokens must name (`iss`). Required authentication needs it or
    /// `--auth-server`.
    #[arg(long, value_name = "URL", env = "FUSION_AUTH_ISSUER")]
    pub auth_issuer: Option<String>,
    /// An authorization server for the metadata (repeatable; default: the issuer).
    #[arg(long, value_name = "URL")]
    pub auth_server: Vec<String>,
    /// Verify tokens with the keys of this JWKS file.
    #[arg(long, value_name = "FILE", env = "FUSION_AUTH_JWKS")]
    pub auth_jwks: Option<PathBuf>,
    /// Verify RS256 tokens with this RSA public key (PEM file).
    #[arg(long, value_name = "FILE", env = "FUSION_AUTH_RS256_PEM")]
    pub auth_rs256_pem: Option<PathBuf>,
    /// Verify ES256 tokens with this P-256 public key (PEM file).
    #[arg(long, value_name = "FILE", env = "FUSION_AUTH_ES256_PEM")]
    pub auth_es256_pem: Option<PathBuf>,
    /// Verify HS256 tokens with this shared secret (at least 32 bytes; prefer the
    /// environment variable: a flag shows in `ps`).
    #[arg(
        long,
        value_name = "SECRET",
        env = "FUSION_AUTH_HS256_SECRET",
        hide_env_values = true
    )]
    pub auth_hs256_secret: Option<String>,
    /// Let requests without a token through: only actions with scopes refuse them
    /// (`AUTH_REQUIRED`). By default every request needs a valid token.
    #[arg(long, env = "FUSION_AUTH_OPTIONAL")]
    pub auth_optional: bool,
}

#[cfg(feature = "auth-jwt")]
impl AuthArgs {
    /// The authentication these flags configure, `None` when no key is given.
    pub fn build(&self) -> anyhow::Result<Option<Auth>> {
        let any_key = self.auth_jwks.is_some()
            || self.auth_rs256_pem.is_some()
            || self.auth_es256_pem.is_some()
            || self.auth_hs256_secret.is_some();
        if !any_key {
            if self.auth_resource.is_some() {
                anyhow::bail!(
                    "--auth-resource needs a key: --auth-jwks, --auth-rs256-pem, --auth-es256-pem or --auth-hs256-secret"
                );
            }
            return Ok(None);
        }
        let Some(resource) = &self.auth_resource else {
            anyhow::bail!(
                "authentication needs --auth-resource URL: this endpoint's public URL, the audience tokens must name"
            );
        };
        if !self.auth_optional && self.auth_issuer.is_none() && self.auth_server.is_empty() {
            // `Auth::check` refuses it too; this names the flags.
            anyhow::bail!(
                "authentication is required but names no issuer: give --auth-issuer URL (the `iss` tokens must name) or --auth-server URL (the authorization server clients get tokens from), or --auth-optional"
            );
        }
        let mut verifier = JwtVerifier::new(resource.clone());
        if let Some(iss) = &self.auth_issuer {
            verifier = verifier.issuer(iss.clone());
        }
        if let Some(path) = &self.auth_jwks {
            verifier = verifier.jwks_file(path)?;
        }
        if let Some(path) = &self.auth_rs256_pem {
            verifier = verifier.rs256_pem(&read_pem(path)?)?;
        }
        if let Some(path) = &self.auth_es256_pem {
            verifier = verifier.es256_pem(&read_pem(path)?)?;
        }
        if let Some(secret) = &self.auth_hs256_secret {
            verifier = verifier.hs256_secret(secret.as_bytes())?;
        }
        let mut auth = Auth::new(verifier, resource.clone());
        let servers = if self.auth_server.is_empty() {
            self.auth_issuer.iter().cloned().collect()
        } else {
            self.auth_server.clone()
        };
        for s in servers {
            auth = auth.authorization_server(s);
        }
        if self.auth_optional {
            auth = auth.mode(AuthMode::Optional);
        }
        Ok(Some(auth))
    }
}

#[cfg(feature = "auth-jwt")]
fn read_pem(path: &PathBuf) -> anyhow::Result<Vec<u8>> {
    let len = std::fs::metadata(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?
        .len();
    if len > 64 * 1024 {
        anyhow::bail!("{} is larger than 64 KiB: not a PEM key", path.display());
    }
    std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))
}

#[cfg(feature = "redis")]
/// `serve` with a shared rate-limit store.
#[derive(Debug, Default, clap::Args)]
pub struct StoreArgs {
    /// Keep rate limits, one-time ids (answered confirmations) and MCP tasks in this Redis
    /// (`redis://127.0.0.1:6379/0`), and fan change notifications out through it, shared by
    /// every instance pointed at it. Concurrency limits and sessions stay per instance.
    #[arg(long, value_name = "URL", env = "FUSION_REDIS_URL")]
    pub redis_url: Option<String>,
    /// When Redis cannot answer: `closed` (default: refuse with `RATE_LIMITED`, retry in
    /// 5 s) or `open` (admit unchecked).
    #[arg(long, value_name = "MODE", env = "FUSION_REDIS_ON_FAILURE", value_parser = parse_failure)]
    pub redis_on_failure: Option<OnStoreFailure>,
    /// The bound on one Redis check (default 500ms).
    #[arg(long, value_name = "DURATION", env = "FUSION_REDIS_TIMEOUT", value_parser = super::parse_duration)]
    pub redis_timeout: Option<Duration>,
    /// The prefix of the Redis keys (default `fusion:rl`); one per server sharing a Redis.
    #[arg(long, value_name = "PREFIX", env = "FUSION_REDIS_PREFIX")]
    pub redis_prefix: Option<String>,
    /// With `--redis-url`: how long a running task's lease lasts (default 10s, renewed every
    /// third of it); a task whose instance died reads as `failed` this long after.
    #[arg(long, value_name = "DURATION", env = "FUSION_TASK_LEASE", value_parser = super::parse_duration)]
    pub task_lease: Option<Duration>,
}

#[cfg(feature = "redis")]
fn parse_failure(text: &str) -> Result<OnStoreFailure, String> {
    match text.to_ascii_lowercase().as_str() {
        "closed" => Ok(OnStoreFailure::Closed),
        "open" => Ok(OnStoreFailure::Open),
        _ => Err(format!("`{text}` is not `closed` or `open`")),
    }
}

#[cfg(feature = "redis")]
impl StoreArgs {
    /// Attaches the Redis backend to `server` when `--redis-url` is given.
    pub fn apply(&self, server: &Server) -> anyhow::Result<()> {
        let Some(url) = &self.redis_url else {
            return Ok(());
        };
        let mut redis = crate::store::Redis::new(url);
        if let Some(t) = self.redis_timeout {
            redis = redis.timeout(t);
        }
        if let Some(p) = &self.redis_prefix {
            redis = redis.prefix(p.clone());
        }
        if let Some(lease) = self.task_lease {
            redis = redis.task_lease(lease);
        }
        // `--redis-on-failure` is the rate limits' alone: one-time ids (answered
        // confirmations) always fail closed.
        let on_failure = self.redis_on_failure.unwrap_or_default();
        let kept = server.attach_stores(redis.stores()?, on_failure);
        // A bus or a task store set by the builder stays; two rate-limit or one-time stores
        // would be a configuration mistake.
        if let Some(kind) = kept
            .iter()
            .find(|kind| ["rate limits", "one-time ids"].contains(kind))
        {
            anyhow::bail!("--redis-url: the server already has a store for {kind}");
        }
        tracing::info!(
            ?on_failure,
            "rate limits, one-time ids and tasks are kept in Redis, change notifications go through it"
        );
        Ok(())
    }
}
