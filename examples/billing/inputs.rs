//! The billing actions' inputs: one `#[derive(ToolInput)]` each. Their JSON Schemas are what
//! `tools/list` shows, and what every call is validated against.

use fusion_runtime::{Elicitable, ToolInput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An invoice's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Waiting for payment.
    Open,
    /// Paid in full.
    Paid,
    /// Cancelled.
    Void,
}

/// List invoices, newest first.
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct ListInvoices {
    /// Only invoices with this status.
    pub status: Option<Status>,
    /// At most this many invoices (20 when omitted).
    #[fusion(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// Get one invoice.
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct GetInvoice {
    /// The invoice ID, e.g. `inv_2026_0001`.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    pub id: String,
}

/// Send a payment reminder for an overdue invoice.
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct SendReminder {
    /// The invoice to remind about, e.g. inv_2026_0001.
    #[fusion(
        pattern = "^inv_[0-9]{4}_[0-9]{4}$",
        expected = "an invoice ID like inv_2026_0001 (list invoices to find one)"
    )]
    pub invoice_id: String,
    /// Where the reminder goes.
    #[fusion(email)]
    pub email: String,
    /// Days since the due date.
    #[fusion(range(min = 1))]
    pub days_overdue: u32,
}

/// Charge an amount against an invoice.
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct Charge {
    /// The invoice to charge.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    pub invoice_id: String,
    /// The amount, in cents.
    #[fusion(range(min = 1))]
    pub amount_cents: u64,
}

/// One invoice, by ID (deprecated form).
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct FindInvoice {
    /// The invoice ID.
    pub id: String,
}

/// Export the ledger.
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct ExportLedger {
    /// Only invoices with this status.
    pub status: Option<Status>,
}

/// Recompute an invoice's total from its lines.
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct RecalculateTotals {
    /// The invoice.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    pub invoice_id: String,
}

/// Void an invoice.
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct VoidInvoice {
    /// The invoice.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    pub invoice_id: String,
    /// Why it is voided, for the audit log.
    #[fusion(length(min = 3, max = 200))]
    pub reason: String,
}

/// Reconcile the ledger against the payment processor (slow).
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct Reconcile {
    /// How long the reconciliation takes, in milliseconds (2000 when omitted). The action is
    /// stopped with `TIMEOUT` after 5 seconds.
    #[fusion(range(min = 0, max = 10000))]
    pub duration_ms: Option<u64>,
}

/// Refund part of what was paid on an invoice.
#[derive(Debug, Deserialize, Serialize, ToolInput)]
pub struct Refund {
    /// The invoice to refund.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    pub invoice_id: String,
    /// The amount to give back, in cents.
    #[fusion(range(min = 1))]
    pub amount_cents: u64,
}

/// Why money goes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefundReason {
    /// The customer was charged twice.
    Duplicate,
    /// The customer did not make the payment.
    Fraud,
    /// The customer asked for their money back.
    RequestedByCustomer,
}

/// What the user confirms before a refund moves money.
#[derive(Debug, Deserialize, Serialize, ToolInput, Elicitable)]
pub struct RefundConfirmation {
    /// Type the invoice ID again to confirm.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    pub invoice_id: String,
    /// Why the money goes back.
    pub reason: RefundReason,
}
