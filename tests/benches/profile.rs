//! Not a timed bench: a driver for `valgrind --tool=callgrind`, which counts instructions
//! repeatably on a loaded machine. `cargo bench` runs it with no scenario and it does nothing.
//!
//! ```sh
//! cargo bench -p fusion-tests --no-run
//! valgrind --tool=callgrind --toggle-collect='*profile::counted*' \
//!     target/release/deps/profile-<hash> valid 2000
//! ```
//!
//! Scenarios: `valid` (budget 2, ours), `bare` (its serde baseline), `invalid` (budget 3),
//! `pipeline_valid`, `pipeline_invalid`, `by_hand_valid` (budget 4), `envelope` (budget 1).
//! Instructions per call = the `--toggle-collect` total / the count.

mod common;

use std::hint::black_box;

use common::{Signup, TOOL, fusion_server, invalid_args, registered, valid_args};
use fusion_runtime::server::RequestScope;
use fusion_runtime::{ErrorCode, JsonObject, ToolInput, ToolResponse, error};
use futures::executor::block_on;
use serde::Deserialize;
use serde_json::Value;

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

fn from_args(v: &Value) -> Result<Signup, fusion_runtime::validation::ValidationReport> {
    Signup::from_arguments(v)
}

fn by_hand(args: &Value) -> ToolResponse {
    match from_args(args) {
        Ok(input) => match serde_json::to_value(registered(input)) {
            Ok(v) => ToolResponse::json(v),
            Err(e) => ToolResponse::text(e.to_string()),
        },
        Err(report) => ToolResponse::text(report.render("accounts.register")),
    }
}

/// One call of `scenario`; what it returns is dropped by the caller, inside the count.
#[inline(never)]
fn run(scenario: &str, server: &fusion_runtime::Server, input: &Value) -> usize {
    match scenario {
        "valid" | "invalid" => match from_args(black_box(input)) {
            Ok(s) => s.id.len(),
            Err(r) => r.render("accounts.register").len(),
        },
        "bare" => usize::from(Signup::deserialize(black_box(input)).is_ok()),
        "pipeline_valid" | "pipeline_invalid" => {
            let args = object(input.clone());
            block_on(server.call(TOOL, Some(args), RequestScope::detached()))
                .content
                .len()
        }
        "by_hand_valid" => by_hand(black_box(input)).content.len(),
        "clone" => object(input.clone()).len(),
        "envelope" => error(ErrorCode::NotFound, "No invoice with that ID")
            .recovery("List invoices first, then retry with a real ID")
            .available_actions(["billing.list_invoices"])
            .details([("requestedId", "inv_2026_9999")])
            .retry_after(30)
            .into_rendered()
            .len(),
        other => panic!("unknown scenario {other}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(scenario) = args.first() else {
        return;
    };
    let n: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let server = fusion_server();
    let input = if scenario.contains("invalid") {
        invalid_args()
    } else {
        valid_args()
    };
    // Warm (schema compiled, caches filled) outside the counted function.
    let mut total = run(scenario, &server, &input);
    total += counted(scenario, &server, &input, n);
    println!("{scenario} x{n}: {total}");
}

/// The steady state: `n` calls (`--toggle-collect='*profile::counted*'`).
#[inline(never)]
fn counted(scenario: &str, server: &fusion_runtime::Server, input: &Value, n: usize) -> usize {
    let mut total = 0;
    for _ in 0..n {
        total += run(scenario, server, input);
    }
    total
}
