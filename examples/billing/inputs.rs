//! The billing tools' inputs: one `#[derive(ToolInput)]` struct per action.

use fusion_runtime::ToolInput;
use serde::Deserialize;

/// Send a payment reminder for an overdue invoice.
#[derive(Debug, Deserialize, ToolInput)]
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
