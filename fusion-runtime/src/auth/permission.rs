//! Per-action scopes: the `AUTH_REQUIRED` and `FORBIDDEN` answers.

use std::borrow::Cow;

use super::Principal;
use crate::envelope::{ToolError, codes, error};

/// Whether `principal` may call `action`, which requires every scope of `required`.
///
/// - nothing required: `Ok`, principal or not;
/// - no principal: `AUTH_REQUIRED` — the user must sign in (connect the account) first, so
///   retrying without that is pointless;
/// - a principal missing scopes: `FORBIDDEN`, naming each missing scope — the user must be
///   granted them; the model should not retry but tell the user.
pub fn check_scopes(
    action: &str,
    required: &[Cow<'static, str>],
    principal: Option<&Principal>,
) -> Result<(), ToolError> {
    if required.is_empty() {
        return Ok(());
    }
    let list = |scopes: &[&str]| {
        scopes
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(principal) = principal else {
        let all: Vec<&str> = required.iter().map(|s| s.as_ref()).collect();
        return Err(error(
            codes::AUTH_REQUIRED,
            format!(
                "{action} needs a signed-in user (scope{} {}), and this call came without credentials. It was not run.",
                plural(all.len()),
                list(&all)
            ),
        )
        .recovery(
            "Do not retry yet. Ask the user to sign in to this server (connect their account), then call again.",
        )
        .detail("requiredScopes", all.join(" ")));
    };
    let missing: Vec<&str> = required
        .iter()
        .map(|s| s.as_ref())
        .filter(|s| !principal.has_scope(s))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(error(
        codes::FORBIDDEN,
        format!(
            "{action} needs the permission{} {}, which the caller's access token does not grant. It was not run.",
            plural(missing.len()),
            list(&missing)
        ),
    )
    .recovery(format!(
        "Do not retry. Tell the user their account lacks the permission{} {}; they must be granted it (or sign in with an account that has it).",
        plural(missing.len()),
        list(&missing)
    ))
    .detail("missingScopes", missing.join(" ")))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scopes(s: &[&'static str]) -> Vec<Cow<'static, str>> {
        s.iter().map(|s| Cow::Borrowed(*s)).collect()
    }

    #[test]
    fn unscoped_actions_admit_anyone() {
        assert!(check_scopes("a.b", &[], None).is_ok());
    }

    #[test]
    fn anonymous_is_auth_required_and_a_missing_scope_is_forbidden() {
        let required = scopes(&["billing:read", "billing:write"]);
        let e = check_scopes("billing.charge", &required, None).err();
        assert_eq!(e.as_ref().map(|e| e.code()), Some(&codes::AUTH_REQUIRED));
        let p = Principal::new("u").with_scopes(["billing:read"]);
        let e = check_scopes("billing.charge", &required, Some(&p)).err();
        assert_eq!(e.as_ref().map(|e| e.code()), Some(&codes::FORBIDDEN));
        let text = e.map(|e| e.render().to_string()).unwrap_or_default();
        assert!(text.contains("'billing:write'"), "{text}");
        assert!(!text.contains("'billing:read'"), "{text}");
        let p = p.with_scopes(["billing:write"]);
        assert!(check_scopes("billing.charge", &required, Some(&p)).is_ok());
    }
}
