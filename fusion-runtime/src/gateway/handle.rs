//! MCP 2026-07-28 has no sessions (SEP-2567): a handoff answers with a handle — a sealed,
//! expiring text naming the domain, the caller and the carry-over state — that the domain's
//! tools take as their `handoff` argument.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth::Seal;
use crate::envelope::{ToolError, codes};

/// The argument a handoff domain's tools take the handle in (2026-07-28).
pub const HANDLE_ARGUMENT: &str = "handoff";

/// How long a handle is accepted.
pub const HANDLE_TTL: Duration = Duration::from_secs(3600);

const HANDLE: Seal = Seal::new("hd1.", 12 * 1024);

/// What a handle says.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct Handle {
    /// The domain.
    pub dom: String,
    /// The caller it was minted for.
    pub sub: String,
    /// Expiry, unix seconds.
    pub exp: u64,
    /// The carry-over state.
    pub carry: Value,
}

/// Handles are sealed with the process's own key: they do not outlive the process (a
/// restarted gateway answers an old one as expired, and the model hands off again).
use crate::auth::seal::process_key as key;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A handle to `domain` for `subject`, carrying `carry`.
pub(crate) fn mint(domain: &str, subject: &str, carry: Value) -> Result<String, ToolError> {
    let failed = |why: &str| {
        ToolError::new(
            codes::INTERNAL_ERROR,
            format!("The handoff to {domain} failed: {why}"),
        )
        .recovery("Do not retry blindly: tell the user the handoff did not work")
    };
    let key = key().ok_or_else(|| failed("no randomness for the handle key"))?;
    let handle = Handle {
        dom: domain.to_owned(),
        sub: subject.to_owned(),
        exp: now() + HANDLE_TTL.as_secs(),
        carry,
    };
    let payload = serde_json::to_vec(&handle).map_err(|_| failed("the state did not serialize"))?;
    HANDLE
        .seal(key, &payload)
        .map_err(|_| failed("the carry-over state is too large"))
}

/// Why a handle was not accepted, as the envelope's message.
pub(crate) fn open(sealed: &str, domain: &str, subject: &str) -> Result<Handle, String> {
    let key = key().ok_or("no handle key")?;
    let payload = HANDLE
        .open(key, sealed)
        .map_err(|_| "it is not a handle this gateway minted".to_owned())?;
    let handle: Handle =
        serde_json::from_slice(&payload).map_err(|_| "it is not a handle".to_owned())?;
    if handle.exp <= now() {
        return Err("it has expired".to_owned());
    }
    if handle.sub != subject {
        return Err("it was minted for another caller".to_owned());
    }
    if handle.dom != domain {
        return Err(format!("it hands off to {}, not {domain}", handle.dom));
    }
    Ok(handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_opens_only_for_its_domain_and_caller_untampered() {
        let h = mint("finance", "sub:u1", serde_json::json!({"a": 1})).expect("mints");
        let opened = open(&h, "finance", "sub:u1").expect("opens");
        assert_eq!(opened.carry, serde_json::json!({"a": 1}));
        assert!(open(&h, "devops", "sub:u1").is_err());
        assert!(open(&h, "finance", "sub:u2").is_err());
        let mut tampered = h.clone();
        tampered.insert(6, if h.as_bytes()[6] == b'A' { 'B' } else { 'A' });
        assert!(open(&tampered, "finance", "sub:u1").is_err());
    }
}
