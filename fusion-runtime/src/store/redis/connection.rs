//! The one Redis connection every Redis store of this crate opens ([`RedisStore`](crate::store::RedisStore),
//! [`RedisOnce`](crate::store::RedisOnce), [`RedisTasks`](crate::store::RedisTasks),
//! [`RedisChangeBus`](crate::store::RedisChangeBus)), and its bound.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::store::StoreError;

/// The default bound on one check (connecting included).
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_millis(500);

/// The connection every Redis store of this crate uses: one multiplexed connection to `url`,
/// made on first use (a server starts while Redis is down), reconnecting by itself, each try
/// bounded by [`DEFAULT_REDIS_TIMEOUT`].
pub(crate) fn managed_connection(url: &str) -> Result<ConnectionManager, StoreError> {
    let client = redis::Client::open(url).map_err(|e| StoreError(e.to_string()))?;
    let timeout = DEFAULT_REDIS_TIMEOUT;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout))
        .set_number_of_retries(1)
        .set_min_delay(Duration::from_millis(50))
        .set_max_delay(Duration::from_secs(1));
    ConnectionManager::new_lazy_with_config(client, config).map_err(|e| StoreError(e.to_string()))
}
