//! The in-memory invoice store.

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::inputs::Status;

/// One invoice line.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    /// What was sold.
    pub description: String,
    /// Its price, in cents.
    pub amount_cents: u64,
}

/// An invoice.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Invoice {
    /// `inv_YYYY_NNNN`.
    pub id: String,
    /// The customer's name.
    pub customer: String,
    /// The billing email.
    pub email: String,
    /// Open, paid or void.
    pub status: Status,
    /// The total, in cents.
    pub total_cents: u64,
    /// Paid so far, in cents.
    pub paid_cents: u64,
    /// The due date (ISO 8601).
    pub due_date: String,
    /// The lines (a void invoice has none).
    pub lines: Vec<Line>,
}

impl Invoice {
    /// What is left to pay, in cents.
    pub fn balance_cents(&self) -> u64 {
        self.total_cents.saturating_sub(self.paid_cents)
    }
}

/// A page of invoices.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct InvoiceList {
    /// The invoices, newest first.
    pub invoices: Vec<Invoice>,
    /// How many invoices matched, before the limit.
    pub matching: usize,
}

/// The store: invoices behind a mutex.
#[derive(Debug)]
pub struct Store {
    invoices: Mutex<Vec<Invoice>>,
}

fn invoice(n: u32, customer: &str, status: Status, lines: &[(&str, u64)], paid: u64) -> Invoice {
    let lines: Vec<Line> = lines
        .iter()
        .map(|(d, a)| Line {
            description: (*d).to_owned(),
            amount_cents: *a,
        })
        .collect();
    let total = lines.iter().map(|l| l.amount_cents).sum();
    Invoice {
        id: format!("inv_2026_{n:04}"),
        customer: customer.to_owned(),
        email: format!(
            "billing@{}.example",
            customer.to_lowercase().replace(' ', "-")
        ),
        status,
        total_cents: total,
        paid_cents: if status == Status::Paid { total } else { paid },
        due_date: format!("2026-{:02}-15", n.min(12)),
        lines,
    }
}

impl Store {
    /// The seeded store: `inv_2026_0001` … `inv_2026_0005`.
    pub fn seeded() -> Self {
        let invoices = vec![
            invoice(
                1,
                "Acme",
                Status::Open,
                &[("Consulting, March", 120_000), ("Travel", 5_000)],
                0,
            ),
            invoice(2, "Globex", Status::Paid, &[("Annual licence", 480_000)], 0),
            invoice(
                3,
                "Initech",
                Status::Open,
                &[("Support plan", 30_000)],
                10_000,
            ),
            invoice(4, "Umbrella", Status::Void, &[], 0),
            invoice(
                5,
                "Hooli",
                Status::Open,
                &[("Workshop", 75_000), ("Materials", 2_500)],
                0,
            ),
        ];
        Store {
            invoices: Mutex::new(invoices),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Vec<Invoice>) -> R) -> R {
        let mut guard = match self.invoices.lock() {
            Ok(g) => g,
            // A handler that panicked while holding the lock left the data as it was.
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    /// One invoice.
    pub fn get(&self, id: &str) -> Option<Invoice> {
        self.with(|v| v.iter().find(|i| i.id == id).cloned())
    }

    /// Invoices, newest first, filtered by status.
    pub fn list(&self, status: Option<Status>) -> Vec<Invoice> {
        self.with(|v| {
            v.iter()
                .rev()
                .filter(|i| status.is_none_or(|s| i.status == s))
                .cloned()
                .collect()
        })
    }

    /// Applies `f` to one invoice.
    pub fn update<R>(&self, id: &str, f: impl FnOnce(&mut Invoice) -> R) -> Option<R> {
        self.with(|v| v.iter_mut().find(|i| i.id == id).map(f))
    }
}
