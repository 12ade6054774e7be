//! A triage gateway for the stdio handoff tests: `triage.escalate` hands the session off to
//! the `finance` domain, the `delegated-server` next to this program (or the program in
//! `FUSION_UPSTREAM_BIN`), behind delegation (key from `FUSION_DELEGATION_KEY`, issuer
//! `triage`, audience `billing`). Spawned as `CARGO_BIN_EXE_handoff-gateway serve`.

use std::path::PathBuf;
use std::process::ExitCode;

use fusion_runtime::auth::DelegationKey;

/// The environment variable holding the shared key.
const KEY_ENV: &str = "FUSION_DELEGATION_KEY";

fn upstream_program() -> PathBuf {
    if let Some(p) = std::env::var_os("FUSION_UPSTREAM_BIN") {
        return PathBuf::from(p);
    }
    let mut p = std::env::current_exe().unwrap_or_default();
    p.set_file_name(format!("delegated-server{}", std::env::consts::EXE_SUFFIX));
    p
}

#[tokio::main]
async fn main() -> ExitCode {
    let key = match DelegationKey::from_env(KEY_ENV) {
        Ok(key) => key,
        Err(e) => {
            eprintln!("error: {KEY_ENV}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut upstream = tokio::process::Command::new(upstream_program());
    upstream.arg("serve").env("RUST_LOG", "off");
    let server = fusion_tests::triage::gateway(upstream, key);
    match server {
        Ok(server) => fusion_runtime::cli::run(server).await,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
