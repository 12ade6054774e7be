//! What a store answers when it cannot decide.

/// The store could not decide (unreachable, timed out, answered nonsense).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);
