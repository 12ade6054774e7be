//! The one spelling of every action name the server writes: [`Names`] (an action's registered
//! name → how clients call it in the exposure in force) and [`for_the_wire`], which a
//! handler's or a middleware's envelope goes through. Read by the pipeline, the middleware
//! chain and the build (guards, `tools/list` descriptions, contract deltas).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use super::source::ToolSource;
use crate::envelope::ToolError;

/// Every name an envelope may show, as the server's clients call it: an action's name (or
/// its callable spelling) → its callable spelling — the tool name in flat exposure
/// (`billing_list_invoices`), `tool.action` in a grouped one (`billing.list_invoices`, which
/// routing also takes as a tool name) — and a mounted tool's name → itself.
#[derive(Default)]
pub(crate) struct Names {
    callable: HashMap<String, Arc<str>>,
    sources: Vec<Arc<dyn ToolSource>>,
}

impl Names {
    /// The names of `actions`, each an action's registered name and its callable spelling.
    pub(crate) fn new<'a>(
        actions: impl IntoIterator<Item = (&'a str, &'a Arc<str>)>,
        sources: &[Arc<dyn ToolSource>],
    ) -> Self {
        let mut callable = HashMap::new();
        for (name, spelled) in actions {
            callable.insert(name.to_owned(), Arc::clone(spelled));
            callable.insert(spelled.to_string(), Arc::clone(spelled));
        }
        Names {
            callable,
            sources: sources.to_vec(),
        }
    }

    /// How clients call the action `name` (registered), or `name` itself when it names no
    /// action (a mounted tool's name): the spelling every framework-written sentence uses
    /// (`SERVER_BUSY`, `TIMEOUT`, `RATE_LIMITED`, `DEPRECATED`, `INTERNAL_ERROR`, …).
    pub(crate) fn spelled<'a>(&'a self, name: &'a str) -> &'a str {
        self.callable.get(name).map_or(name, |c| c)
    }

    /// `text` with every action name in it written as clients call it: a word (letters,
    /// digits, `_`, `-`, `.`; a sentence's closing dots are not part of it) that is an
    /// action's registered name or callable spelling. Other words, a mounted tool's name
    /// included, are left as they are. For what names actions inside a sentence of the
    /// framework's or a declaration's (a deprecation's note, a contract delta), never for
    /// a handler's free text.
    pub(crate) fn spell_in<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
        let mut out = String::new();
        let mut done = 0;
        let mut rest = text.char_indices().peekable();
        while let Some((start, c)) = rest.next() {
            if !word(c) {
                continue;
            }
            let mut end = start + c.len_utf8();
            while let Some(&(i, c)) = rest.peek().filter(|(_, c)| word(*c)) {
                end = i + c.len_utf8();
                rest.next();
            }
            let token = text[start..end].trim_end_matches('.');
            // Only a dotted name is ever spelled otherwise (`place` keeps an undotted one):
            // the other words are not looked up.
            if let Some(spelled) = token
                .contains('.')
                .then(|| self.callable.get(token))
                .flatten()
                && **spelled != *token
            {
                out.push_str(&text[done..start]);
                out.push_str(spelled);
                done = start + token.len();
            }
        }
        if done == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[done..]);
        Cow::Owned(out)
    }

    /// How clients call `name`, or `None` when no action or mounted tool goes by it.
    pub(crate) fn callable(&self, name: &str) -> Option<String> {
        if let Some(c) = self.callable.get(name) {
            return Some(c.to_string());
        }
        if self.sources.iter().any(|s| s.owns(name)) {
            return Some(name.to_owned());
        }
        tracing::warn!(
            name = super::routing::loggable(name),
            "an envelope named an action this server does not have: left out"
        );
        None
    }

    /// The action `name` calls when it is an action's name or callable spelling that is not
    /// itself a tool (`billing.list_invoices` in flat exposure).
    pub(crate) fn action_of(&self, name: &str) -> Option<&Arc<str>> {
        self.callable.get(name)
    }
}

/// A handler's or middleware's envelope as it reaches the wire: each available action named
/// as clients call it, once (one that names no action or mounted tool is left out), an
/// action's registered name in its message and recovery written as clients call it too
/// (`billing.get_invoice` → `billing_get_invoice` in flat exposure), and an empty message
/// replaced by the code's default text — `ToolError::render` writes what it is given (SPEC's
/// vectors), the server never sends an empty `<message>`.
pub(super) fn for_the_wire(names: &Names, mut e: ToolError) -> ToolError {
    if let Cow::Owned(message) = names.spell_in(e.message()) {
        e = e.with_message(message);
    }
    if let Some(Cow::Owned(recovery)) = e.recovery_text().map(|r| names.spell_in(r)) {
        e = e.recovery(recovery);
    }
    let e = if e.action_list().is_empty() {
        e
    } else {
        let mut seen: Vec<String> = Vec::new();
        e.map_actions(|a| {
            let c = names.callable(a).filter(|c| !seen.contains(c))?;
            seen.push(c.clone());
            Some(c)
        })
    };
    if e.message().trim().is_empty() {
        let text = default_message(e.code().as_str(), e.is_error());
        return e.with_message(text);
    }
    e
}

/// The text an envelope without a message gets on the wire.
fn default_message(code: &str, is_error: bool) -> String {
    match is_error {
        true => format!("The call failed with {code}; the server gave no further detail"),
        false => format!("The call succeeded with a {code} warning"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pairs: &[(&str, &str)]) -> Names {
        let spelled: Vec<(&str, Arc<str>)> =
            pairs.iter().map(|(n, c)| (*n, Arc::from(*c))).collect();
        Names::new(spelled.iter().map(|(n, c)| (*n, c)), &[])
    }

    #[test]
    fn spell_in_rewrites_whole_action_names_only() {
        let n = names(&[
            ("billing.get_invoice", "billing_get_invoice"),
            ("ping", "ping"),
        ]);
        let spelled = |t: &str| n.spell_in(t).into_owned();
        assert_eq!(
            spelled("use billing.get_invoice instead."),
            "use billing_get_invoice instead."
        );
        assert_eq!(spelled("billing.get_invoice."), "billing_get_invoice.");
        assert_eq!(
            spelled("'billing.get_invoice' (billing.get_invoice)"),
            "'billing_get_invoice' (billing_get_invoice)"
        );
        // A longer word, another action's, a callable spelling and free words stay.
        for kept in [
            "billing.get_invoices",
            "xbilling.get_invoice",
            "billing.get_invoice_v2",
            "billing_get_invoice",
            "ping me",
            "No invoice inv_2026_0001",
            "",
        ] {
            assert!(
                matches!(n.spell_in(kept), std::borrow::Cow::Borrowed(_)),
                "{kept}"
            );
        }
        assert_eq!(n.spelled("billing.get_invoice"), "billing_get_invoice");
        assert_eq!(n.spelled("finance_get_invoice"), "finance_get_invoice");
    }
}
