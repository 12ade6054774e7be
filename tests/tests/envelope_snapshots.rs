//! Snapshots of rendered envelopes: the SPEC §1 example, every combination of optional
//! sections, each severity, and a custom code.

use fusion_runtime::{ErrorCode, Severity, ToolError, error};

fn seed() -> ToolError {
    error(ErrorCode::NotFound, "No invoice with that ID")
        .recovery("List invoices first, then retry with a real ID")
        .available_actions(["billing.list_invoices"])
        .details([("requestedId", "inv_2026_9999")])
        .retry_after(30)
}

#[test]
fn spec_example_byte_for_byte() {
    assert_eq!(seed().render(), fusion_tests::SEED_NOT_FOUND);
    insta::assert_snapshot!("spec_example", seed().render());
}

#[test]
fn every_combination_of_optional_sections() {
    for mask in 0u8..16 {
        let mut e = error(ErrorCode::Conflict, "Invoice is locked");
        let mut name = String::from("sections");
        if mask & 1 != 0 {
            e = e.recovery("Wait for the running charge to finish");
            name.push_str("_recovery");
        }
        if mask & 2 != 0 {
            e = e.available_actions(["billing.get_invoice", "billing.list_invoices"]);
            name.push_str("_actions");
        }
        if mask & 4 != 0 {
            e = e.details([("invoiceId", "inv_2026_0002"), ("lockedBy", "charge#17")]);
            name.push_str("_details");
        }
        if mask & 8 != 0 {
            e = e.retry_after(5);
            name.push_str("_retry");
        }
        if mask == 0 {
            name.push_str("_none");
        }
        insta::assert_snapshot!(name, e.render());
    }
}

#[test]
fn each_severity() {
    for severity in [Severity::Error, Severity::Critical, Severity::Warning] {
        let e = error(ErrorCode::Deprecated, "billing.invoices is deprecated")
            .recovery("Use billing.list_invoices instead")
            .severity(severity);
        insta::assert_snapshot!(format!("severity_{severity}"), e.render());
    }
}

#[test]
fn custom_code() {
    let e = error("InvoiceNotFound", "Invoice \"x\" does not exist.")
        .recovery("Call billing.list_invoices first to find valid IDs.")
        .available_actions(["billing.list_invoices"]);
    assert_eq!(e.code(), &ErrorCode::Custom("InvoiceNotFound".into()));
    insta::assert_snapshot!("custom_code", e.render());
}
