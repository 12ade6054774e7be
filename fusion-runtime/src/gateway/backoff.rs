//! How long a mount waits before trying a down upstream again: bounded exponential backoff
//! with jitter, and the circuit that answers at once while it waits.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Bounded exponential backoff: `base`, doubled after each further consecutive failure, never
/// above `cap`, then shortened by up to `jitter` of itself (0.0–1.0) so reconnecting gateways
/// do not all knock at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// The wait after the first failure.
    pub base: Duration,
    /// The longest wait.
    pub cap: Duration,
    /// The share of a wait taken off at random (0.0 for none, at most 1.0).
    pub jitter: f64,
}

/// The default [`Backoff`]: 1 second, doubling, capped at 30 seconds, jitter 20 %.
pub const DEFAULT_BACKOFF: Backoff = Backoff {
    base: Duration::from_secs(1),
    cap: Duration::from_secs(30),
    jitter: 0.2,
};

impl Default for Backoff {
    fn default() -> Self {
        DEFAULT_BACKOFF
    }
}

impl Backoff {
    /// The un-jittered wait after `failures` consecutive failures (at least one).
    pub fn ceiling(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(31);
        self.base
            .checked_mul(1u32 << doublings)
            .unwrap_or(self.cap)
            .min(self.cap)
    }

    /// The wait after `failures` consecutive failures, jittered.
    pub fn delay(&self, failures: u32) -> Duration {
        let ceiling = self.ceiling(failures);
        let jitter = self.jitter.clamp(0.0, 1.0);
        if jitter == 0.0 {
            return ceiling;
        }
        ceiling.mul_f64(1.0 - jitter * unit_random())
    }
}

/// A number in `[0, 1)`, different on every call: jitter needs no more than that.
fn unit_random() -> f64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let bits = foldhash::fast::RandomState::default().hash_one(n);
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_then_stops_at_the_cap() {
        let b = Backoff {
            base: Duration::from_millis(500),
            cap: Duration::from_secs(4),
            jitter: 0.0,
        };
        let waits: Vec<u64> = (1..=6).map(|f| b.delay(f).as_millis() as u64).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 4000, 4000]);
        assert_eq!(b.ceiling(u32::MAX), Duration::from_secs(4));
        assert_eq!(b.ceiling(0), Duration::from_millis(500));
    }

    #[test]
    fn jitter_only_shortens_within_its_share() {
        let b = Backoff::default();
        for failures in 1..40 {
            let d = b.delay(failures);
            let ceiling = b.ceiling(failures);
            assert!(
                d <= ceiling && d >= ceiling.mul_f64(0.8),
                "{d:?} for {ceiling:?}"
            );
        }
    }
}
