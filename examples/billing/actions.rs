//! The billing actions. Each is an `async fn` as written; `#[tool_action]` adds its
//! companion struct (`fn get_invoice` → `GetInvoiceAction`).

use std::io;

use fusion_runtime::codes::{CONFLICT, NOT_FOUND};
use fusion_runtime::context::Elicited;
use fusion_runtime::{Context, ToolError, WithWarnings, error, tool_action};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::inputs::*;
use super::store::{Invoice, InvoiceList, Store};

fn not_found(id: &str) -> ToolError {
    error(NOT_FOUND, "No invoice with that ID")
        .recovery("List invoices first, then retry with a real ID")
        .available_actions(["billing.list_invoices"])
        .detail("requestedId", id)
}

/// List invoices, newest first, optionally only those with one status.
#[tool_action(name = "billing.list_invoices", read_only, idempotent)]
pub async fn list_invoices(
    input: ListInvoices,
    store: Context<Store>,
) -> Result<InvoiceList, ToolError> {
    let all = store.state().list(input.status);
    let matching = all.len();
    let limit = input.limit.unwrap_or(20) as usize;
    Ok(InvoiceList {
        invoices: all.into_iter().take(limit).collect(),
        matching,
    })
}

/// Get one invoice by its ID: customer, status, total, what is paid, lines.
#[tool_action(name = "billing.get_invoice", read_only, idempotent)]
pub async fn get_invoice(input: GetInvoice, store: Context<Store>) -> Result<Invoice, ToolError> {
    store
        .state()
        .get(&input.id)
        .ok_or_else(|| not_found(&input.id))
}

/// What a reminder did.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReminderSent {
    /// The invoice.
    pub invoice_id: String,
    /// Where it went.
    pub email: String,
    /// The text sent.
    pub message: String,
}

/// Send a payment reminder for an overdue invoice to a billing email.
#[tool_action(name = "billing.send_reminder", open_world)]
pub async fn send_reminder(
    input: SendReminder,
    store: Context<Store>,
) -> Result<ReminderSent, ToolError> {
    let invoice = store
        .state()
        .get(&input.invoice_id)
        .ok_or_else(|| not_found(&input.invoice_id))?;
    if invoice.status != Status::Open {
        return Err(error(
            CONFLICT,
            format!("Invoice {} is not open; nothing is owed", invoice.id),
        )
        .recovery("Send reminders only for open invoices; list them with status \"open\"")
        .available_actions(["billing.list_invoices"])
        .detail("status", format!("{:?}", invoice.status).to_lowercase()));
    }
    Ok(ReminderSent {
        message: format!(
            "Invoice {} for {} is {} days overdue; {:.2} is still due.",
            invoice.id,
            invoice.customer,
            input.days_overdue,
            invoice.balance_cents() as f64 / 100.0
        ),
        invoice_id: invoice.id,
        email: input.email,
    })
}

/// What a charge did.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ChargeResult {
    /// The invoice.
    pub invoice_id: String,
    /// Whether money moved.
    pub charged: bool,
    /// The amount charged, in cents.
    pub amount_cents: u64,
    /// What is left to pay, in cents.
    pub balance_cents: u64,
}

/// Why a charge did not go through.
enum Refused {
    AlreadyPaid,
    Void,
    MoreThanBalance(u64),
}

/// Charge an amount (in cents) against an open invoice. At most 3 charges per minute per
/// client.
#[tool_action(
    name = "billing.charge",
    destructive,
    rate_limit(calls = 3, per = "1min", per_client)
)]
pub async fn charge(
    input: Charge,
    store: Context<Store>,
) -> Result<WithWarnings<ChargeResult>, ToolError> {
    let id = input.invoice_id.as_str();
    let outcome = store.state().update(id, |inv| match inv.status {
        Status::Paid => Err(Refused::AlreadyPaid),
        Status::Void => Err(Refused::Void),
        Status::Open if input.amount_cents > inv.balance_cents() => {
            Err(Refused::MoreThanBalance(inv.balance_cents()))
        }
        Status::Open => {
            inv.paid_cents += input.amount_cents;
            if inv.balance_cents() == 0 {
                inv.status = Status::Paid;
            }
            Ok(inv.balance_cents())
        }
    });
    match outcome {
        None => Err(not_found(id)),
        Some(Ok(balance_cents)) => {
            super::surface::invoice_changed(&store, id);
            Ok(WithWarnings::new(ChargeResult {
            invoice_id: id.to_owned(),
            charged: true,
                amount_cents: input.amount_cents,
                balance_cents,
            }))
        }
        // Guidance on the success path: nothing failed, but the model must not charge again.
        Some(Err(Refused::AlreadyPaid)) => Ok(WithWarnings::new(ChargeResult {
            invoice_id: id.to_owned(),
            charged: false,
            amount_cents: 0,
            balance_cents: 0,
        })
        .warning(
            error(CONFLICT, format!("Invoice {id} is already paid; nothing was charged"))
                .recovery("Do not charge it again. Tell the user it is paid; call billing.get_invoice to show it")
                .available_actions(["billing.get_invoice"]),
        )),
        Some(Err(Refused::Void)) => Err(error(
            CONFLICT,
            format!("Invoice {id} is void and cannot be charged"),
        )
        .recovery("Charge an open invoice instead")
        .available_actions(["billing.list_invoices"])),
        Some(Err(Refused::MoreThanBalance(balance))) => Err(error(
            "AMOUNT_EXCEEDS_BALANCE",
            "The amount is more than what is left to pay",
        )
        .recovery(format!("Charge at most {balance} cents, the remaining balance"))
        .available_actions(["billing.get_invoice"])
        .detail("invoiceId", id)
        .detail("amountCents", input.amount_cents)
        .detail("balanceCents", balance)),
    }
}

/// Find an invoice by ID.
#[tool_action(
    name = "billing.find_invoice",
    read_only,
    deprecated = "use billing.get_invoice instead"
)]
pub async fn find_invoice(input: FindInvoice, store: Context<Store>) -> Result<Invoice, ToolError> {
    store
        .state()
        .get(&input.id)
        .ok_or_else(|| not_found(&input.id))
}

/// Where an export went.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Export {
    /// The file written.
    pub path: String,
    /// How many invoices it holds.
    pub invoices: usize,
}

/// Export the ledger as CSV into the directory named by `BILLING_LEDGER_DIR`.
#[tool_action(name = "billing.export_ledger")]
pub async fn export_ledger(
    input: ExportLedger,
    store: Context<Store>,
) -> Result<Export, io::Error> {
    // A plain `io::Error`, not a `ToolError`: the model gets `INTERNAL_ERROR` with its message.
    let dir = std::env::var_os("BILLING_LEDGER_DIR").ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "ledger storage is not configured (BILLING_LEDGER_DIR is unset)",
        )
    })?;
    let invoices = store.state().list(input.status);
    let mut csv = String::from("id,customer,status,total_cents,paid_cents\n");
    for i in &invoices {
        csv.push_str(&format!(
            "{},{},{:?},{},{}\n",
            i.id, i.customer, i.status, i.total_cents, i.paid_cents
        ));
    }
    let path = std::path::Path::new(&dir).join("ledger.csv");
    std::fs::write(&path, csv)?;
    Ok(Export {
        path: path.display().to_string(),
        invoices: invoices.len(),
    })
}

/// Recompute an invoice's total from its lines.
#[tool_action(name = "billing.recalculate_totals", idempotent)]
pub async fn recalculate_totals(
    input: RecalculateTotals,
    store: Context<Store>,
) -> Result<Invoice, ToolError> {
    let invoice = store
        .state()
        .get(&input.invoice_id)
        .ok_or_else(|| not_found(&input.invoice_id))?;
    // A bug kept on purpose, to show a panic answered as INTERNAL_ERROR while the server keeps
    // serving: it reads the first line, and a void invoice has none.
    let first = &invoice.lines[0];
    let total = first.amount_cents
        + invoice.lines[1..]
            .iter()
            .map(|l| l.amount_cents)
            .sum::<u64>();
    Ok(store
        .state()
        .update(&input.invoice_id, |inv| {
            inv.total_cents = total;
            inv.clone()
        })
        .unwrap_or(invoice))
}

/// Void an invoice (admin only: needs the server's operator token).
#[tool_action(name = "billing.void_invoice", destructive, idempotent)]
pub async fn void_invoice(input: VoidInvoice, store: Context<Store>) -> Result<Invoice, ToolError> {
    let invoice = store
        .state()
        .update(&input.invoice_id, |inv| {
            inv.status = super::inputs::Status::Void;
            inv.clone()
        })
        .ok_or_else(|| not_found(&input.invoice_id))?;
    super::surface::invoice_changed(&store, &invoice.id);
    Ok(invoice)
}

/// What a reconciliation found.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Reconciled {
    /// Invoices compared with the payment processor.
    pub invoices_checked: usize,
    /// Open invoices with money still due.
    pub open_balance_cents: u64,
    /// How long it took, in milliseconds.
    pub took_ms: u64,
}

/// Reconcile the ledger against the payment processor. Slow (about 2 seconds) and exclusive:
/// one reconciliation at a time, none waiting.
//
// `task`: a 2026-07-28 client that declared the tasks extension gets a task and polls it, so
// a run longer than the 5-second timeout completes; other clients get the synchronous call.
#[tool_action(
    name = "billing.reconcile",
    read_only,
    idempotent,
    max_active = 1,
    max_queue = 0,
    timeout = "5s",
    task
)]
pub async fn reconcile(input: Reconcile, store: Context<Store>) -> Result<Reconciled, ToolError> {
    let took_ms = input.duration_ms.unwrap_or(2000);
    tokio::time::sleep(std::time::Duration::from_millis(took_ms)).await;
    let invoices = store.state().list(None);
    Ok(Reconciled {
        invoices_checked: invoices.len(),
        open_balance_cents: invoices
            .iter()
            .filter(|i| i.status == Status::Open)
            .map(Invoice::balance_cents)
            .sum(),
        took_ms,
    })
}

/// What a refund did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Refunded {
    /// The invoice.
    pub invoice_id: String,
    /// The amount given back, in cents.
    pub amount_cents: u64,
    /// Why, as the user confirmed it.
    pub reason: RefundReason,
    /// What is left to pay now, in cents.
    pub balance_cents: u64,
}

/// Refund part of what was paid on an invoice. The user confirms first (a form asking for
/// the invoice ID again and the reason), on every MCP version; nothing moves without it.
#[tool_action(name = "billing.refund", destructive)]
pub async fn refund(input: Refund, store: Context<Store>) -> Result<Refunded, ToolError> {
    let id = input.invoice_id.as_str();
    let invoice = store.state().get(id).ok_or_else(|| not_found(id))?;
    if input.amount_cents > invoice.paid_cents {
        return Err(error(
            "AMOUNT_EXCEEDS_PAID",
            "The refund is more than what was paid",
        )
        .recovery(format!("Refund at most {} cents", invoice.paid_cents))
        .detail("paidCents", invoice.paid_cents));
    }
    // Everything before this line runs again when a 2026-07-28 client answers: only reads.
    let message = format!(
        "Refund {} cents on {id}? Type the invoice ID again and pick a reason.",
        input.amount_cents
    );
    let confirmation = match store.elicit::<RefundConfirmation>(message).await? {
        Elicited::Accept(c) => c,
        Elicited::Decline | Elicited::Cancel => {
            return Err(error(
                "REFUND_NOT_CONFIRMED",
                "The user did not confirm the refund; no money moved",
            )
            .recovery("Ask the user whether to refund before calling again"));
        }
    };
    if confirmation.invoice_id != id {
        return Err(error(
            CONFLICT,
            "The confirmation names another invoice; no money moved",
        )
        .recovery("Call again and have the user type the same invoice ID")
        .detail("invoiceId", id)
        .detail("confirmedId", &confirmation.invoice_id));
    }
    let balance = store.state().update(id, |inv| {
        inv.paid_cents = inv.paid_cents.saturating_sub(input.amount_cents);
        if inv.status == Status::Paid && inv.balance_cents() > 0 {
            inv.status = Status::Open;
        }
        inv.balance_cents()
    });
    let balance_cents = balance.ok_or_else(|| not_found(id))?;
    // Clients that subscribed to billing://invoices/{id} read it again.
    super::surface::invoice_changed(&store, id);
    Ok(Refunded {
        invoice_id: id.to_owned(),
        amount_cents: input.amount_cents,
        reason: confirmation.reason,
        balance_cents,
    })
}
