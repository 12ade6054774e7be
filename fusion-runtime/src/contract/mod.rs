//! Tool contracts, the `fusion.lock` lockfile, the diff engine and `<contract_awareness>`
//! (SPEC §5).
//!
//! A [`ToolContract`] is what an agent learns about one action: its names, description, hints,
//! deprecation and input schema. A [`Lockfile`] freezes the contracts of a server in a
//! deterministic, reviewable file. [`diff`] classifies every change between two sets of
//! contracts into [`Delta`]s ([`DeltaSeverity::Breaking`], `Risky`, `Safe`, `Cosmetic`), and
//! [`ContractAwareness`] turns the deltas, once, into the `<contract_awareness>` section a
//! `<validation_error>` carries, so that an agent which learned the old contract is told what
//! changed in the same error round.
//!
//! ```
//! use fusion_runtime::contract::{ContractAwareness, Lockfile, ToolContract};
//! use serde_json::json;
//!
//! let old = ToolContract::new(
//!     "billing.get_invoice",
//!     "billing_get_invoice",
//!     "Fetch one invoice",
//!     json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
//! );
//! let lock = Lockfile::from_contracts(&[old.clone()])?;
//!
//! let mut new = old;
//! new.input_schema = json!({
//!     "type": "object",
//!     "properties": {"invoice_id": {"type": "string"}},
//!     "required": ["invoice_id"],
//! });
//! let deltas = lock.check(&[new]);
//! assert_eq!(deltas.len(), 1);
//! assert!(deltas[0].description.contains("renamed"));
//!
//! let awareness = ContractAwareness::new(deltas, ContractAwareness::DEFAULT_CAP);
//! assert!(awareness.section_for("billing.get_invoice").is_some());
//! # Ok::<(), fusion_runtime::contract::LockError>(())
//! ```

mod awareness;
pub mod canonical;
mod diff;
mod lockfile;

pub use awareness::ContractAwareness;
pub use diff::{Delta, DeltaSeverity, diff};
pub use lockfile::{LOCK_FORMAT, LOCK_VERSION, LockError, Lockfile};

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

/// The MCP tool annotations of an action, as written by the author: the crate's one hints
/// type, [`action::Hints`](crate::action::Hints).
///
/// Each hint is `None` when the author did not set it. MCP gives absent hints a default, and
/// the diff engine compares the *effective* values ([`Hints::effective_read_only`], …),
/// so writing a default down explicitly is not a behavioural change (it is still a change of
/// the contract, reported as cosmetic). The defaults are MCP's: not read-only, destructive,
/// not idempotent, open world.
pub use crate::action::Hints;

/// The contract's old name for [`Hints`].
#[deprecated(since = "0.1.0", note = "use `Hints`; removed in 0.2.0")]
pub type Annotations = Hints;

/// The contract of one action: everything an agent learns about it from `tools/list`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolContract {
    /// The action name (`billing.get_invoice`); unique within a server.
    pub action: String,
    /// The exposed MCP tool name (`billing_get_invoice`).
    pub tool: String,
    /// The description shown to agents.
    pub description: String,
    /// The MCP tool annotations.
    pub annotations: Hints,
    /// Why the action is deprecated and what to use instead; `None` when it is not.
    pub deprecated: Option<String>,
    /// The JSON Schema of the arguments.
    pub input_schema: Value,
    /// The OAuth scopes a caller needs, sorted; recorded in the lockfile only when there
    /// are some.
    pub scopes: Vec<String>,
}

impl ToolContract {
    /// A contract without hints or deprecation.
    pub fn new(
        action: impl Into<String>,
        tool: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolContract {
            action: action.into(),
            tool: tool.into(),
            description: description.into(),
            annotations: Hints::default(),
            deprecated: None,
            input_schema,
            scopes: Vec::new(),
        }
    }

    /// Sets the scopes a caller needs (sorted, once each).
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.sort();
        self.scopes.dedup();
        self
    }

    /// Sets the annotations.
    pub fn with_annotations(mut self, annotations: Hints) -> Self {
        self.annotations = annotations;
        self
    }

    /// Marks the action deprecated, with the reason or the replacement.
    pub fn with_deprecated(mut self, note: impl Into<String>) -> Self {
        self.deprecated = Some(note.into());
        self
    }

    /// The contract as a JSON object (`action`, `annotations`, `deprecated` when set,
    /// `description`, `input`, `scopes` when any, `tool`): the form stored in `fusion.lock` and digested.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("action".into(), Value::String(self.action.clone()));
        m.insert("annotations".into(), self.annotations.to_json());
        if let Some(note) = &self.deprecated {
            m.insert("deprecated".into(), Value::String(note.clone()));
        }
        m.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        m.insert("input".into(), self.input_schema.clone());
        if !self.scopes.is_empty() {
            m.insert("scopes".into(), Value::from(self.scopes.clone()));
        }
        m.insert("tool".into(), Value::String(self.tool.clone()));
        Value::Object(m)
    }

    /// The canonical JSON of [`ToolContract::to_json`]: keys sorted at every depth, no
    /// insignificant whitespace.
    pub fn canonical_json(&self) -> String {
        canonical::to_canonical_string(&self.to_json())
    }

    /// `sha256:` and the lowercase hex SHA-256 of [`ToolContract::canonical_json`]. It changes
    /// if and only if the contract changes.
    pub fn digest(&self) -> String {
        let hash = Sha256::digest(self.canonical_json().as_bytes());
        let mut out = String::with_capacity(7 + 64);
        out.push_str("sha256:");
        for b in hash {
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        }
        out
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests;
