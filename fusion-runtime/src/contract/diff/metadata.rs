//! What an agent reads about an action besides its input: tool name, description,
//! deprecation, hints and required scopes, each one row of a table with the words for its
//! changes.

use super::delta::{Delta, DeltaSeverity, fill, json_str};
use crate::contract::{Hints, ToolContract};

use DeltaSeverity::{Breaking, Cosmetic, Risky, Safe};

/// A text of the action. In the sentences, `{name}` is the action, `{before}` and `{after}`
/// the two texts.
struct Text {
    /// The path segment after `actions.<action>.`.
    key: &'static str,
    value: fn(&ToolContract) -> Option<&str>,
    /// When the text is written on both sides and differs.
    changed: (DeltaSeverity, &'static str),
    /// When it appears (`None`: it is always written).
    set: Option<(DeltaSeverity, &'static str)>,
    /// When it goes.
    unset: Option<(DeltaSeverity, &'static str)>,
    /// Compared for a renamed action too (the rename already says the tool name changed).
    when_renamed: bool,
}

const TEXTS: &[Text] = &[
    Text {
        key: "tool",
        value: |c| Some(&c.tool),
        changed: (
            Breaking,
            "The MCP tool of '{name}' was renamed from '{before}' to '{after}'; call '{after}' instead.",
        ),
        set: None,
        unset: None,
        when_renamed: false,
    },
    Text {
        key: "description",
        value: |c| Some(&c.description),
        changed: (Cosmetic, "The description of '{name}' was reworded."),
        set: None,
        unset: None,
        when_renamed: true,
    },
    Text {
        key: "deprecated",
        value: |c| c.deprecated.as_deref(),
        changed: (Cosmetic, "The deprecation note of '{name}' was reworded."),
        set: Some((Risky, "Action '{name}' is now deprecated: {after}")),
        unset: Some((Safe, "Action '{name}' is no longer deprecated.")),
        when_renamed: true,
    },
];

/// An MCP hint, compared by its effective value (MCP's default when absent).
struct Hint {
    key: &'static str,
    written: fn(&Hints) -> Option<bool>,
    effective: fn(&Hints) -> bool,
    /// The value that lets the action do more to its environment.
    riskier: bool,
    /// After "Action '<name>'", when the effective value became the riskier one.
    worse: &'static str,
    /// When it became the safer one.
    better: &'static str,
}

const HINTS: &[Hint] = &[
    Hint {
        key: "readOnlyHint",
        written: |a| a.read_only,
        effective: Hints::effective_read_only,
        riskier: false,
        worse: "is no longer read-only: it may now modify its environment",
        better: "is now read-only",
    },
    Hint {
        key: "destructiveHint",
        written: |a| a.destructive,
        effective: Hints::effective_destructive,
        riskier: true,
        worse: "may now perform destructive updates",
        better: "no longer performs destructive updates",
    },
    Hint {
        key: "idempotentHint",
        written: |a| a.idempotent,
        effective: Hints::effective_idempotent,
        riskier: false,
        worse: "is no longer idempotent: repeating a call may have further effects",
        better: "is now idempotent",
    },
    Hint {
        key: "openWorldHint",
        written: |a| a.open_world,
        effective: Hints::effective_open_world,
        riskier: true,
        worse: "now interacts with external systems (open world)",
        better: "no longer interacts with external systems",
    },
];

/// The deltas of everything but the input schema.
pub(super) fn compare(old: &ToolContract, new: &ToolContract, renamed: bool, out: &mut Vec<Delta>) {
    let name = new.action.as_str();
    let mut push = |path: String, severity, description: String, before, after| {
        out.push(Delta {
            path,
            severity,
            action: Some(name.to_owned()),
            description,
            before,
            after,
        });
    };
    for t in TEXTS {
        if renamed && !t.when_renamed {
            continue;
        }
        let (b, a) = ((t.value)(old), (t.value)(new));
        let row = match (b, a) {
            (Some(x), Some(y)) if x != y => Some(t.changed),
            (None, Some(_)) => t.set,
            (Some(_), None) => t.unset,
            _ => None,
        };
        let Some((severity, sentence)) = row else {
            continue;
        };
        let vars = [
            ("name", name),
            ("before", b.unwrap_or_default()),
            ("after", a.unwrap_or_default()),
        ];
        push(
            format!("actions.{name}.{}", t.key),
            severity,
            fill(sentence, &vars),
            b.map(json_str),
            a.map(json_str),
        );
    }
    let (oa, na) = (&old.annotations, &new.annotations);
    for h in HINTS {
        let path = format!("actions.{name}.annotations.{}", h.key);
        let (eb, ea) = ((h.effective)(oa), (h.effective)(na));
        let (wb, wa) = ((h.written)(oa), (h.written)(na));
        let key = h.key;
        if eb != ea {
            let (severity, words) = if ea == h.riskier {
                (Risky, h.worse)
            } else {
                (Safe, h.better)
            };
            push(
                path,
                severity,
                format!("Action '{name}' {words} ({key} {eb} -> {ea})."),
                Some(eb.to_string()),
                Some(ea.to_string()),
            );
        } else if wb != wa {
            push(
                path,
                Cosmetic,
                format!(
                    "{key} of '{name}' is now written differently; its effective value stays {ea}."
                ),
                wb.map(|b| b.to_string()),
                wa.map(|b| b.to_string()),
            );
        }
    }
    for scope in new.scopes.iter().filter(|s| !old.scopes.contains(s)) {
        push(
            format!("actions.{name}.scopes.{scope}"),
            Breaking,
            format!(
                "Action '{name}' now requires the scope '{scope}': callers whose token lacks it are refused (FORBIDDEN), anonymous callers must sign in (AUTH_REQUIRED)."
            ),
            None,
            Some(json_str(scope)),
        );
    }
    for scope in old.scopes.iter().filter(|s| !new.scopes.contains(s)) {
        push(
            format!("actions.{name}.scopes.{scope}"),
            Safe,
            format!("Action '{name}' no longer requires the scope '{scope}'."),
            Some(json_str(scope)),
            None,
        );
    }
}
