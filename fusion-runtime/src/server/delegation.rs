//! The upstream side of a handoff: a middleware that lets through only calls carrying a valid
//! delegation token (see [`auth::delegation`](crate::auth::delegation)).

use futures::future::BoxFuture;
use serde_json::Value;

use super::middleware::{CallRequest, Middleware, Next};
use crate::action::HandlerFailure;
use crate::auth::{DELEGATION_META_KEY, DelegationError, DelegationVerifier};
use crate::envelope::ToolResponse;

/// The middleware of [`DelegationVerifier::middleware`].
#[derive(Clone, Debug)]
pub struct DelegationMiddleware {
    verifier: std::sync::Arc<DelegationVerifier>,
}

impl DelegationVerifier {
    /// A middleware that verifies the token in each call's `_meta`
    /// ([`DELEGATION_META_KEY`]) before the handler runs: a missing, malformed, tampered,
    /// expired, replayed or wrong-audience token is answered with an `UNAUTHORIZED` envelope
    /// (a full replay store with `SERVER_BUSY`), and a valid one reaches the handler as
    /// [`CallContext::delegation`](super::CallContext::delegation).
    ///
    /// ```
    /// use fusion_runtime::auth::{DelegationKey, DelegationVerifier};
    /// use fusion_runtime::Server;
    ///
    /// let key = DelegationKey::new("a shared secret of at least 32 bytes")?;
    /// let server = Server::builder()
    ///     .middleware(DelegationVerifier::new(key, "billing").issuers(["triage"]).middleware())
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn middleware(self) -> DelegationMiddleware {
        DelegationMiddleware {
            verifier: std::sync::Arc::new(self),
        }
    }
}

impl DelegationMiddleware {
    /// The verifier it checks with.
    pub fn verifier(&self) -> &DelegationVerifier {
        &self.verifier
    }
}

impl Middleware for DelegationMiddleware {
    fn handle(
        &self,
        req: CallRequest,
        next: Next,
    ) -> BoxFuture<'static, Result<ToolResponse, HandlerFailure>> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let token = match req
            .context()
            .meta()
            .and_then(|m| m.get(DELEGATION_META_KEY))
        {
            None | Some(Value::Null) => Err(DelegationError::Missing),
            Some(Value::String(token)) => Ok(token.clone()),
            Some(_) => Err(DelegationError::Malformed),
        };
        let verifier = std::sync::Arc::clone(&self.verifier);
        Box::pin(async move {
            let verdict = match token {
                Ok(token) => verifier.verify_shared_at(&token, now).await,
                Err(e) => Err(e),
            };
            match verdict {
                Ok(delegation) => {
                    req.context().set_delegation(delegation);
                    Ok(next.run(req).await)
                }
                Err(e) => {
                    tracing::info!(action = req.action(), reason = %e, "call refused: delegation");
                    let mut refusal = e.to_tool_error();
                    if e == DelegationError::ReplayStoreFull
                        && let Some(wait) = verifier.replay_store_frees_in(now)
                    {
                        refusal = refusal.retry_after(wait);
                    }
                    Err(HandlerFailure::Tool(refusal))
                }
            }
        })
    }
}
