//! An upstream server behind a gateway, for the delegation tests: one action that tells who
//! delegated the call and what carry-over state came with it, behind
//! `DelegationVerifier::middleware` (audience `billing`, issuer `triage`, key from
//! `FUSION_DELEGATION_KEY`). Spawned over stdio as `CARGO_BIN_EXE_delegated-server`.

use std::process::ExitCode;

use fusion_runtime::auth::{DelegationKey, DelegationVerifier};
use fusion_runtime::{Context, Server, ToolError, ToolInput, codes, error, tool_action};
use serde::Deserialize;
use serde_json::{Value, json};

/// The environment variable holding the shared key.
const KEY_ENV: &str = "FUSION_DELEGATION_KEY";

/// What to look up.
#[derive(Deserialize, ToolInput)]
struct Lookup {
    /// An invoice id.
    #[fusion(length(min = 1, max = 40))]
    invoice: String,
}

/// Looks an invoice up on behalf of the delegated user.
#[tool_action(name = "billing.lookup")]
async fn lookup(input: Lookup, cx: Context) -> Result<Value, ToolError> {
    let Some(d) = cx.delegation() else {
        return Err(error(
            codes::INTERNAL_ERROR,
            "no delegation reached the handler",
        ));
    };
    Ok(json!({
        "invoice": input.invoice,
        "subject": d.subject,
        "issuer": d.issuer,
        "carry": d.carry,
    }))
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
    let verifier = DelegationVerifier::new(key, "billing").issuers(["triage"]);
    match Server::builder()
        .action::<LookupAction>()
        .middleware(verifier.middleware())
        .build()
    {
        Ok(server) => fusion_runtime::cli::run(server).await,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
