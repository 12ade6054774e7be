//! One-time ids: the first use of an id is taken, every later one within its lifetime is
//! refused.

//!
//! The trait and the key digest every backend uses; the backends are `memory/once.rs` and
//! `redis/once.rs`.

use std::time::Duration;

use futures::future::BoxFuture;
use sha2::{Digest, Sha256};

use super::StoreError;

/// Records one-time ids. [`first_use`](OnceStore::first_use) must decide atomically in the
/// store (two instances presenting the same id at once: exactly one gets `true`) and within
/// a bounded time.
pub trait OnceStore: Send + Sync + 'static {
    /// Marks `id` of `kind` (`rs` for request state, `dg` for delegation ids) as used for
    /// `ttl`: `Ok(true)` the first time, `Ok(false)` when it was used already.
    /// `Err` when the store cannot decide — callers fail closed.
    fn first_use<'a>(
        &'a self,
        kind: &'a str,
        id: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// A name for logs and errors (`in-process`, `redis`).
    fn name(&self) -> &'static str;
}

/// The digest an id is stored under: its kind and bytes, hashed, so a client's bytes never
/// become a key as they are.
pub(crate) fn digest(kind: &str, id: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(kind.as_bytes());
    hash.update([0]);
    hash.update(id);
    hash.finalize().into()
}
