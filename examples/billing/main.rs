//! The billing example: envelopes a billing MCP server sends to the model.
//!
//! `cargo run --example billing` prints each envelope with its `isError` flag, then the
//! `<validation_error>` a derived input (`inputs::SendReminder`) writes for bad arguments.

mod inputs;

use fusion_runtime::{ErrorCode, ToolInput, ToolResponse, error};

fn main() {
    let cases = [
        (
            "billing.get_invoice {\"id\":\"inv_2026_9999\"}",
            ToolResponse::error(
                error(ErrorCode::NotFound, "No invoice with that ID")
                    .suggest("List invoices first, then retry with a real ID")
                    .actions(["billing.list_invoices"])
                    .details([("requestedId", "inv_2026_9999")]),
            ),
        ),
        (
            "billing.charge {\"invoice_id\":\"inv_2026_0001\",\"amount_cents\":100}",
            ToolResponse::text("{\"charged\":false,\"invoice\":\"inv_2026_0001\"}").with_warning(
                error(
                    ErrorCode::Conflict,
                    "Invoice inv_2026_0001 is already paid; nothing was charged",
                )
                .suggest("Do not charge it again; call billing.get_invoice to show its status"),
            ),
        ),
        (
            "billing.charge (11th call this minute)",
            ToolResponse::error(
                error(ErrorCode::RateLimited, "Too many charges")
                    .suggest("Wait, then retry the same call")
                    .retry_after(std::time::Duration::from_millis(1500)),
            ),
        ),
    ];
    for (call, response) in cases {
        println!("→ {call}");
        println!("← isError: {}", response.is_error);
        for text in response.texts() {
            println!("{text}");
        }
        println!();
    }

    let call =
        serde_json::json!({"invoice_id": "2026-0001", "emial": "ana@example", "days_overdue": 0});
    println!("→ billing.send_reminder {call}");
    match inputs::SendReminder::from_arguments(call) {
        Ok(input) => println!("← valid: {input:?}"),
        Err(report) => {
            println!("← isError: true");
            println!("{}", report.render("billing.send_reminder"));
        }
    }
}
