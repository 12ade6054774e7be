//! The billing example as a binary of this package, so end-to-end tests can spawn it
//! (`CARGO_BIN_EXE_billing-server`) on a fresh clone under `cargo test --workspace`.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match examples::billing::server() {
        Ok(server) => fusion_runtime::cli::run(server).await,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
