//! The in-process one-time store: ids in this process's memory until they expire.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::time::Instant;

use crate::store::StoreError;
use crate::store::once::{OnceStore, digest};

/// How many live ids [`MemoryOnce`] holds by default (about 100 bytes each).
pub const DEFAULT_ONCE_CAPACITY: usize = 65_536;

/// The in-process [`OnceStore`]: ids in memory until they expire, at most `capacity` live
/// ones. Full of live ids, it refuses (`Err`) rather than forget one that could be replayed.
pub struct MemoryOnce {
    inner: Mutex<Seen>,
    capacity: usize,
}

#[derive(Default)]
struct Seen {
    ids: HashMap<[u8; 32], Instant>,
    by_expiry: BinaryHeap<Reverse<(Instant, [u8; 32])>>,
}

impl fmt::Debug for MemoryOnce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryOnce")
            .field("capacity", &self.capacity)
            .field("live", &self.len())
            .finish()
    }
}

impl Default for MemoryOnce {
    fn default() -> Self {
        MemoryOnce::new(DEFAULT_ONCE_CAPACITY)
    }
}

impl MemoryOnce {
    /// A store of at most `capacity` live ids.
    pub fn new(capacity: usize) -> Self {
        MemoryOnce {
            inner: Mutex::new(Seen::default()),
            capacity,
        }
    }

    /// How many ids it holds now (expired ones included until the next use).
    pub fn len(&self) -> usize {
        self.lock().ids.len()
    }

    /// Whether it holds no id.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`OnceStore::first_use`], synchronously.
    pub fn take(&self, kind: &str, id: &[u8], ttl: Duration) -> Result<bool, StoreError> {
        let now = Instant::now();
        let key = digest(kind, id);
        let mut seen = self.lock();
        while let Some(Reverse((at, _))) = seen.by_expiry.peek()
            && *at <= now
        {
            if let Some(Reverse((at, old))) = seen.by_expiry.pop()
                && seen.ids.get(&old) == Some(&at)
            {
                seen.ids.remove(&old);
            }
        }
        if seen.ids.contains_key(&key) {
            return Ok(false);
        }
        if seen.ids.len() >= self.capacity {
            return Err(StoreError(format!(
                "the one-time store holds its maximum of {} live ids",
                self.capacity
            )));
        }
        let expires = now + ttl;
        seen.ids.insert(key, expires);
        seen.by_expiry.push(Reverse((expires, key)));
        Ok(true)
    }
}

impl OnceStore for MemoryOnce {
    fn first_use<'a>(
        &'a self,
        kind: &'a str,
        id: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let taken = self.take(kind, id, ttl);
        Box::pin(std::future::ready(taken))
    }

    fn name(&self) -> &'static str {
        "in-process"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_id_is_taken_once_per_kind_until_it_expires() {
        let store = MemoryOnce::new(2);
        let ttl = Duration::from_secs(10);
        assert_eq!(store.take("rs", b"a", ttl), Ok(true));
        assert_eq!(store.take("rs", b"a", ttl), Ok(false));
        assert_eq!(store.take("dg", b"a", ttl), Ok(true), "kinds are apart");
        // Full of live ids: refused, not forgotten.
        assert!(store.take("rs", b"b", ttl).is_err());
        assert_eq!(store.take("rs", b"a", ttl), Ok(false));
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(store.take("rs", b"b", ttl), Ok(true), "expired ids leave");
        assert_eq!(store.take("rs", b"a", ttl), Ok(true));
        assert_eq!(store.len(), 2);
    }
}
