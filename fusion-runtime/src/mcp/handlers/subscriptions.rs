//! The resources one session subscribed to (`resources/subscribe`), shared by the handler
//! that records them and the change forwarding that reads them.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

/// At most this many resource subscriptions per session.
pub const MAX_SUBSCRIPTIONS: usize = 256;

/// The URIs one session subscribed to with `resources/subscribe` (2025 clients; 2026-07-28
/// ones use `subscriptions/listen`). Clones share the set.
#[derive(Clone, Debug, Default)]
pub struct Subscriptions(pub(crate) Arc<Mutex<BTreeSet<String>>>);

impl Subscriptions {
    /// Whether the session subscribed to `uri`.
    pub fn contains(&self, uri: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(uri)
    }

    /// How many URIs the session subscribed to.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether the session subscribed to nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The URIs, in order.
    pub fn uris(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }
}
