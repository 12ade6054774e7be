//! The cache hints of 2026-07-28 answers: how long a list or a resource read stays fresh
//! ([`ListCache`]) and who may keep it ([`CacheScope`]).

use std::time::Duration;

/// The `ttlMs` / `cacheScope` of 2026-07-28 `resources/read` results: per resource, else the
/// default.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadCache {
    pub(crate) default: Option<ListCache>,
    pub(crate) per_resource: Vec<(String, ListCache)>,
}

/// The default cache hints of a resource read: not cached, private (rmcp's).
pub const DEFAULT_READ_CACHE: ListCache = ListCache {
    ttl: Duration::ZERO,
    scope: CacheScope::Private,
};

impl ReadCache {
    pub(crate) fn of(&self, resource: &str) -> ListCache {
        self.per_resource
            .iter()
            .find(|(r, _)| r == resource)
            .map(|(_, c)| *c)
            .or(self.default)
            .unwrap_or(DEFAULT_READ_CACHE)
    }
}

/// Who may keep a cached answer (MCP 2026-07-28 `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CacheScope {
    /// Any client or intermediary, for any user.
    #[default]
    Public,
    /// Only the requesting user's client.
    Private,
}

/// How long 2026-07-28 clients may keep `server/discover` and the lists (`tools/list`,
/// `prompts/list`, `resources/list`, `resources/templates/list`) before asking again,
/// and who may keep them: the result's `ttlMs` and `cacheScope`. Older clients get neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListCache {
    /// How long an answer stays fresh.
    pub ttl: Duration,
    /// Who may keep it.
    pub scope: CacheScope,
}

/// The default [`ListCache`]: a minute, public (the lists are the same for every caller
/// and change only with a deploy).
pub const DEFAULT_LIST_CACHE: ListCache = ListCache {
    ttl: Duration::from_secs(60),
    scope: CacheScope::Public,
};

impl Default for ListCache {
    fn default() -> Self {
        DEFAULT_LIST_CACHE
    }
}
