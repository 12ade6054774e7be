//! What the billing server offers beside its tools: the invoice resources and the
//! payment-reminder prompt.
//!
//! | item | shows |
//! |---|---|
//! | `billing://policy` | a static resource (Markdown) |
//! | `billing://invoices/{id}` | a resource template whose `id` is validated like a tool input; an unknown invoice is the protocol's resource-not-found |
//! | `billing_payment_reminder` | a prompt with typed arguments: `status` completes from its enum, `invoice_id` from the store (a custom completer); the invoice goes along as an embedded resource |
//!
//! When `billing_charge`, `billing_refund` or `billing_void_invoice` changes an invoice, the
//! clients that subscribed to its `billing://invoices/{id}` (`resources/subscribe` on 2025,
//! `subscriptions/listen` on 2026-07-28) get `notifications/resources/updated`
//! ([`invoice_changed`]).

use fusion_runtime::codes::NOT_FOUND;
use fusion_runtime::{
    CompletionRequest, Content, Context, PromptArguments, PromptReply, ResourceContent, ToolError,
    ToolInput, error, prompt, resource,
};
use serde::Deserialize;

use super::inputs::Status;
use super::store::{Invoice, Store};

/// The payment terms every reminder quotes.
pub const POLICY: &str = "# Payment terms\n\nInvoices are due 30 days after issue. A first reminder goes out 7 days after the due date, a second one 14 days later. Void invoices are never reminded.\n";

/// The billing policy every reminder quotes.
#[resource(
    uri = "billing://policy",
    name = "policy",
    title = "Payment terms",
    mime = "text/markdown"
)]
pub async fn policy() -> Result<ResourceContent, ToolError> {
    Ok(ResourceContent::text(POLICY))
}

/// The invoice a `billing://invoices/{id}` URI names.
#[derive(Debug, Deserialize, ToolInput)]
pub struct InvoiceUri {
    /// The invoice ID, e.g. `inv_2026_0001`.
    #[fusion(
        pattern = "^inv_[0-9]{4}_[0-9]{4}$",
        expected = "an invoice ID like inv_2026_0001 (list invoices to find one)"
    )]
    pub id: String,
}

/// Tells subscribed clients that the invoice `id` changed (see [`fusion_runtime::Notifier`]).
pub fn invoice_changed<S>(cx: &Context<S>, id: &str) {
    cx.notifier()
        .resource_updated(format!("billing://invoices/{id}"));
}

fn not_found(id: &str) -> ToolError {
    error(NOT_FOUND, format!("No invoice with ID {id}"))
        .recovery("List invoices with billing_list_invoices, then read billing://invoices/<id> with a real ID")
        .available_actions(["billing.list_invoices"])
}

/// One invoice, as JSON: customer, status, amounts, due date and lines.
#[resource(
    template = "billing://invoices/{id}",
    name = "invoice",
    title = "Invoice",
    mime = "application/json",
    complete(id = complete_invoice_ids)
)]
pub async fn invoice(p: InvoiceUri, store: Context<Store>) -> Result<ResourceContent, ToolError> {
    let invoice = store.state().get(&p.id).ok_or_else(|| not_found(&p.id))?;
    ResourceContent::json(&invoice)
}

/// Invoice IDs in the store that start with what the user typed.
pub async fn complete_invoice_ids(req: CompletionRequest, store: Context<Store>) -> Vec<String> {
    store
        .state()
        .list(None)
        .into_iter()
        .map(|i| i.id)
        .filter(|id| id.starts_with(req.value()))
        .collect()
}

/// The arguments of the payment-reminder prompt.
#[derive(Debug, Deserialize, ToolInput, PromptArguments)]
pub struct ReminderArgs {
    /// The invoice to remind about, e.g. `inv_2026_0001`.
    #[fusion(
        pattern = "^inv_[0-9]{4}_[0-9]{4}$",
        expected = "an invoice ID like inv_2026_0001 (list invoices to find one)"
    )]
    pub invoice_id: String,
    /// The status to write for (the invoice's own when omitted): open invoices get a
    /// reminder, paid ones a thank-you, void ones nothing to pay.
    pub status: Option<Status>,
}

fn tone(status: Status) -> &'static str {
    match status {
        Status::Open => {
            "a polite but firm payment reminder: quote the balance and the due date, and link the payment terms"
        }
        Status::Paid => "a short thank-you confirming the invoice is paid in full; ask for nothing",
        Status::Void => {
            "a note that the invoice was cancelled and nothing is owed; do not ask for payment"
        }
    }
}

fn invoice_json(invoice: &Invoice) -> String {
    serde_json::to_string_pretty(invoice).unwrap_or_else(|e| format!("(unreadable: {e})"))
}

/// Draft a payment reminder e-mail for one invoice, in the tone its status calls for.
#[prompt(
    name = "billing.payment_reminder",
    title = "Draft a payment reminder",
    complete(invoice_id = complete_invoice_ids)
)]
pub async fn payment_reminder(
    args: ReminderArgs,
    store: Context<Store>,
) -> Result<PromptReply, ToolError> {
    let invoice = store
        .state()
        .get(&args.invoice_id)
        .ok_or_else(|| not_found(&args.invoice_id))?;
    let status = args.status.unwrap_or(invoice.status);
    let balance = invoice.balance_cents();
    Ok(PromptReply::new()
        .description(format!("Reminder for {}", invoice.id))
        .user(format!(
            "Write {} to {} <{}> about invoice {}. Balance: {}.{:02}, due {}.",
            tone(status),
            invoice.customer,
            invoice.email,
            invoice.id,
            balance / 100,
            balance % 100,
            invoice.due_date
        ))
        .user(Content::resource(
            format!("billing://invoices/{}", invoice.id),
            "application/json",
            invoice_json(&invoice),
        ))
        .user(Content::resource(
            "billing://policy",
            "text/markdown",
            POLICY,
        )))
}
