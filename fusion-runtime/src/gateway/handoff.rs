//! Handing a caller's session off to a handoff domain: who the caller is, and the handoff
//! itself (a session moved to the domain, or a handle when there is no session).

use super::handle::{self, HANDLE_ARGUMENT};
use crate::context::{ActiveHandoff, CallContext, ClientKey, RequestScope};
use crate::envelope::{ToolResponse, codes, error};
use crate::server::RETURN_TOOL;

/// Who a handoff or a delegation is for: the principal's subject, else the client key.
pub(crate) fn caller(scope: &RequestScope) -> String {
    match scope.principal() {
        Some(p) => p.subject().to_owned(),
        None => ClientKey::of(scope).0,
    }
}

impl CallContext {
    /// Hands the caller's session off to `domain` (a [`ServerBuilder::handoff_domain`]) for
    /// `reason`, with `carry` (carried to the upstream in every call's delegation token):
    /// from the next `tools/list` on, the session sees the domain's tools and
    /// [`RETURN_TOOL`], and is sent `notifications/tools/list_changed`. Return the response
    /// from the handler. A request with no session (2026-07-28, or any over stateless HTTP):
    /// the response carries a handle (text and `structuredContent.handoff`) that the domain's
    /// tools take as their [`HANDLE_ARGUMENT`]. Without any connection (an in-process call)
    /// nothing is handed off and the response is an error saying so.
    ///
    /// [`ServerBuilder::handoff_domain`]: crate::server::ServerBuilder::handoff_domain
    pub fn handoff(
        &self,
        domain: &str,
        reason: impl Into<String>,
        carry: serde_json::Value,
    ) -> ToolResponse {
        let Some(slot) = &self.scope().handoff else {
            return ToolResponse::error(
                error(
                    codes::HANDOFF_UPSTREAM_UNAVAILABLE,
                    format!("{domain} cannot take over: this request has no session to hand off"),
                )
                .recovery(format!("Call the {domain} tools directly instead")),
            );
        };
        let reason = reason.into();
        if slot.is_stateless() {
            let subject = caller(self.scope());
            let handle = match handle::mint(domain, &subject, carry) {
                Ok(h) => h,
                Err(e) => return ToolResponse::error(e),
            };
            let mut response = ToolResponse::text(format!(
                "Handed off to {domain}: {reason}. Call {domain}'s tools ({domain}_…) with \"{HANDLE_ARGUMENT}\": \"{handle}\"."
            ));
            response.structured_content = Some(serde_json::json!({
                "domain": domain,
                HANDLE_ARGUMENT: handle,
            }));
            return response;
        }
        let text = format!(
            "Handed off to {domain}: {reason}. Its tools are listed now; call {RETURN_TOOL} to come back."
        );
        slot.set(Some(ActiveHandoff {
            domain: domain.to_owned(),
            reason,
            carry,
        }));
        ToolResponse::text(text)
    }
}
