//! The billing example server: an in-memory invoice store behind nine actions, each
//! showing one way an answer reaches the model.
//!
//! | action | shows |
//! |---|---|
//! | `billing.list_invoices` | a success with `structuredContent` and an `outputSchema` |
//! | `billing.get_invoice` | `NOT_FOUND` for an unknown ID, with the action to call instead |
//! | `billing.send_reminder` | a `<validation_error>` for a bad email or `days_overdue` < 1 |
//! | `billing.charge` | a warning on success (already paid), an error with details (too much), and `RATE_LIMITED` past 3 charges a minute per client |
//! | `billing.find_invoice` | a deprecated action: the result plus a `DEPRECATED` warning |
//! | `billing.export_ledger` | a plain `std::io::Error` becoming `INTERNAL_ERROR` |
//! | `billing.recalculate_totals` | a panic (a bug kept on purpose) answered as `INTERNAL_ERROR` |
//! | `billing.void_invoice` | middleware answering `UNAUTHORIZED` without an operator token |
//! | `billing.reconcile` | a slow action, one at a time (`max_active = 1, max_queue = 0`): `SERVER_BUSY` for a second call while one runs; `TIMEOUT` past 5 seconds |
//!
//! Beside the tools (see [`surface`]): the resources `billing://policy` and
//! `billing://invoices/{id}`, and the prompt `billing_payment_reminder`.

mod actions;
pub mod demo;
mod inputs;
mod store;
pub mod surface;

pub use actions::*;
pub use inputs::*;
pub use store::{Invoice, InvoiceList, Line, Store};

use fusion_runtime::codes::UNAUTHORIZED;
use fusion_runtime::server::{BuildError, CallRequest, Next, middleware_fn};
use fusion_runtime::{Server, ServerBuilder, ToolError, error};

/// The operator token that admin actions need (from `BILLING_OPERATOR_TOKEN`).
#[derive(Clone, Debug, Default)]
pub struct Operator {
    /// The token; `None` when the server was started without one.
    pub token: Option<String>,
}

/// Actions that need an operator token.
pub const ADMIN_ACTIONS: &[&str] = &["billing.void_invoice"];

/// The billing server's builder: every action, the seeded store, the auth middleware.
/// Flat exposure; call `.grouped()` on it for one `billing` tool.
pub fn builder() -> ServerBuilder {
    let operator = Operator {
        token: std::env::var("BILLING_OPERATOR_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
    };
    Server::builder()
        .name("billing")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("An invoice store. List invoices before acting on one; amounts are in cents.")
        .state(Store::seeded())
        .state(operator)
        .action::<ListInvoicesAction>()
        .action::<GetInvoiceAction>()
        .action::<SendReminderAction>()
        .action::<ChargeAction>()
        .action::<FindInvoiceAction>()
        .action::<ExportLedgerAction>()
        .action::<RecalculateTotalsAction>()
        .action::<VoidInvoiceAction>()
        .action::<ReconcileAction>()
        .action::<RefundAction>()
        .resource::<surface::PolicyResource>()
        .resource::<surface::InvoiceResource>()
        .prompt::<surface::PaymentReminderPrompt>()
        .middleware(middleware_fn(require_operator))
}

/// The billing example's committed contract lockfile (`lock` writes it, `lock --check`
/// gates it in CI).
pub const LOCKFILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/billing/fusion.lock");

/// The billing server, flat exposure, with self-healing against [`LOCKFILE`].
pub fn server() -> Result<Server, BuildError> {
    builder().self_healing(LOCKFILE).build()
}

/// Admin actions pass only when the server has an operator token.
async fn require_operator(
    req: CallRequest,
    next: Next,
) -> Result<fusion_runtime::ToolResponse, ToolError> {
    if ADMIN_ACTIONS.contains(&req.action()) {
        let has_token = req
            .context()
            .state::<Operator>()
            .is_some_and(|o| o.token.is_some());
        if !has_token {
            return Err(error(
                UNAUTHORIZED,
                format!(
                    "{} needs an operator token, and this server was started without one",
                    req.action()
                ),
            )
            .recovery("Do not retry. Tell the user an operator must restart the server with BILLING_OPERATOR_TOKEN set")
            .available_actions(["billing.send_reminder"]));
        }
    }
    Ok(next.run(req).await)
}
