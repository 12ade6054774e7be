//! Which protocol generation a request speaks, and the per-request rules of 2026-07-28
//! that rmcp 3.11 leaves to the server: the log level from `_meta` (no
//! `notifications/message` without one, an unknown one refused), `serverInfo` in every
//! result's `_meta`, and the builder's cache hints on discover and the lists.
//!
//! rmcp already checks the `_meta` version and capabilities, answers `server/discover`,
//! adds `resultType` and strips it for older clients; this module does the rest.

use rmcp::model::{
    ErrorCode, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, MetaObject, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::context::{LogLevel, LogThreshold};
use crate::server::{CacheScope, ListCache, Server};

/// The `_meta` key of a 2026-07-28 request's log level.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// The `_meta` key of the server's name and version in a 2026-07-28 result.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// The `_meta` key of a request's protocol version.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The generation of one request.
#[derive(Clone, Debug)]
pub(crate) enum Era {
    /// 2025-x: a session (stdio, stateful HTTP) or a stateless 2025 request; the log level
    /// is the session's.
    Legacy,
    /// 2026-07-28 or later: everything comes with the request. `threshold` is the level in
    /// its `_meta`, or [`LogThreshold::off`] without one.
    Modern {
        /// What the request's logs are filtered with.
        threshold: LogThreshold,
    },
}

/// The level spelled exactly `s` (MCP's lowercase names; no other spelling).
fn exact_level(s: &str) -> Option<LogLevel> {
    s.parse::<LogLevel>().ok().filter(|l| l.as_str() == s)
}

/// Whether `version` is 2026-07-28 or later (ISO dates compare as strings).
pub(crate) fn is_modern_version(version: &str) -> bool {
    version >= ProtocolVersion::V_2026_07_28.as_str()
}

/// The message of the `-32602` an unknown log level gets.
pub(crate) const BAD_LOG_LEVEL: &str = "Invalid params: io.modelcontextprotocol/logLevel must be one of debug, info, notice, warning, error, critical, alert, emergency";

/// The log level a modern request's `meta` names ([`LogThreshold::off`] without one), or the
/// `-32602` a level that is not an MCP level gets.
pub(crate) fn modern_threshold(
    meta: &rmcp::model::RequestMetaObject,
) -> Result<LogThreshold, ErrorData> {
    match meta.get(LOG_LEVEL_KEY) {
        None => Ok(LogThreshold::off()),
        Some(raw) => match raw.as_str().and_then(exact_level) {
            Some(level) => Ok(LogThreshold::new(level)),
            None => Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                BAD_LOG_LEVEL,
                Some(serde_json::json!({ "field": LOG_LEVEL_KEY })),
            )),
        },
    }
}

impl Era {
    /// The era of `cx`, as rmcp decides it (the request's `_meta` version, else the
    /// session's). A modern request whose `_meta` log level is not an MCP level is
    /// refused with `-32602`.
    pub(crate) fn of(cx: &RequestContext<RoleServer>) -> Result<Era, ErrorData> {
        let modern = cx
            .protocol_version()
            .is_some_and(|v| is_modern_version(v.as_str()));
        if !modern {
            return Ok(Era::Legacy);
        }
        let threshold = modern_threshold(&cx.meta)?;
        Ok(Era::Modern { threshold })
    }

    /// Whether the request is 2026-07-28 or later.
    pub(crate) fn is_modern(&self) -> bool {
        matches!(self, Era::Modern { .. })
    }

    /// The threshold the request's logs go through: its own (modern) or the session's.
    pub(crate) fn threshold(&self, session: &LogThreshold) -> LogThreshold {
        match self {
            Era::Legacy => session.clone(),
            Era::Modern { threshold } => threshold.clone(),
        }
    }

    /// Adds `serverInfo` to a modern result's `_meta`; a legacy one stays as it is.
    pub(crate) fn stamp(&self, meta: &mut Option<MetaObject>, server: &Server) {
        if !self.is_modern() {
            return;
        }
        // Serialized once per server, cloned per result.
        let value = server.stamp(|| {
            serde_json::to_value(Implementation::new(server.name(), server.version()))
                .unwrap_or(serde_json::Value::Null)
        });
        if value.is_null() {
            return;
        }
        meta.get_or_insert_with(MetaObject::default)
            .insert(SERVER_INFO_KEY.to_owned(), value.clone());
    }

    /// Stamps a list result and gives it the builder's cache hints (modern only).
    pub(crate) fn finish_list<L: CachedList>(&self, mut list: L, server: &Server) -> L {
        if self.is_modern() {
            let (meta, ttl, scope) = list.parts();
            self.stamp(meta, server);
            let cache = server.list_cache();
            *ttl = Some(ttl_ms(cache));
            *scope = Some(to_rmcp_scope(cache.scope));
        }
        list
    }
}

/// `ttlMs` of a cache setting, saturating.
pub(crate) fn ttl_ms(cache: ListCache) -> u64 {
    u64::try_from(cache.ttl.as_millis()).unwrap_or(u64::MAX)
}

/// rmcp's cache scope.
pub(crate) fn to_rmcp_scope(scope: CacheScope) -> rmcp::model::CacheScope {
    match scope {
        CacheScope::Public => rmcp::model::CacheScope::Public,
        CacheScope::Private => rmcp::model::CacheScope::Private,
    }
}

/// A paginated list result: its `_meta`, `ttlMs` and `cacheScope`.
pub(crate) trait CachedList {
    fn parts(
        &mut self,
    ) -> (
        &mut Option<MetaObject>,
        &mut Option<u64>,
        &mut Option<rmcp::model::CacheScope>,
    );
}

macro_rules! cached_list {
    ($($t:ty),*) => {$(
        impl CachedList for $t {
            fn parts(
                &mut self,
            ) -> (
                &mut Option<MetaObject>,
                &mut Option<u64>,
                &mut Option<rmcp::model::CacheScope>,
            ) {
                (&mut self.meta, &mut self.ttl_ms, &mut self.cache_scope)
            }
        }
    )*};
}

cached_list!(
    ListToolsResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_dates() {
        assert!(is_modern_version("2026-07-28"));
        assert!(is_modern_version("2027-01-01"));
        assert!(!is_modern_version("2025-11-25"));
        assert!(!is_modern_version("2025-06-18"));
    }

    #[test]
    fn a_legacy_result_is_not_stamped_and_a_modern_one_names_the_server() {
        let server = Server::builder()
            .name("billing")
            .version("1.2.3")
            .build()
            .map_err(|e| e.to_string());
        let Ok(server) = server else {
            panic!("build: {server:?}");
        };
        let mut meta = None;
        Era::Legacy.stamp(&mut meta, &server);
        assert!(meta.is_none());
        let modern = Era::Modern {
            threshold: LogThreshold::off(),
        };
        modern.stamp(&mut meta, &server);
        let json = serde_json::to_value(&meta).unwrap_or_default();
        assert_eq!(
            json[SERVER_INFO_KEY],
            serde_json::json!({"name": "billing", "version": "1.2.3"})
        );
        let list = modern.finish_list(ListToolsResult::with_all_items(vec![]), &server);
        assert_eq!(list.ttl_ms, Some(60_000));
        assert_eq!(list.cache_scope, Some(rmcp::model::CacheScope::Public));
        let legacy = Era::Legacy.finish_list(ListToolsResult::with_all_items(vec![]), &server);
        assert_eq!((legacy.ttl_ms, legacy.cache_scope), (None, None));
    }
}
