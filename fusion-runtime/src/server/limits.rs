//! The admit stage's guards, per action: the rate limit (`RATE_LIMITED`), the action's and its
//! group's concurrency guards (`SERVER_BUSY`) and the timeout (`TIMEOUT`).
//!
//! Limits come from `#[tool_action(..)]` ([`ActionInfo::limits`]) and are overridden by the
//! builder ([`ServerBuilder::concurrency`](super::ServerBuilder::concurrency) and the like).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::action::{ActionInfo, ActionLimits};
use crate::context::{ClientKey, RequestScope};
use crate::envelope::{ToolError, error};
use crate::guard::{
    ActivePermit, ConcurrencyGuard, ConcurrencyLimit, GuardState, RateLimit, RateLimiterGuard,
    SharedLimits,
};

/// The shared rate-limit store, when one is set (at build time or before serving).
pub(crate) type SharedStore = Arc<OnceLock<Arc<SharedLimits>>>;

/// The builder's guard overrides, by action or group name.
#[derive(Default)]
pub(crate) struct GuardConfig {
    pub concurrency: Vec<(String, ConcurrencyLimit)>,
    pub rate_limits: Vec<(String, RateLimit)>,
    pub timeouts: Vec<(String, Duration)>,
    pub groups: Vec<(String, ConcurrencyLimit)>,
}

/// The group an action belongs to: its name up to the first dot (`billing` for
/// `billing.charge`), as grouped exposure forms tools.
pub(crate) fn group_of(action: &str) -> Option<&str> {
    action.split_once('.').map(|(g, _)| g)
}

impl GuardConfig {
    /// Applies the overrides to the actions' declared limits and builds the guards, one set per
    /// action in `infos` order, each answering under the action's callable spelling
    /// (`callables`, in `infos` order). Fails when an override names no registered action or
    /// group.
    ///
    /// A name no action has is taken as a mounted upstream's tool when `mounted_tool` says it
    /// is under a mount's prefix: its guards are built by name (the upstream's tools are not
    /// known before it connects).
    pub(crate) fn build(
        &self,
        infos: &mut [ActionInfo],
        callables: &[Arc<str>],
        shared: &SharedStore,
        mounted_tool: &dyn Fn(&str) -> bool,
    ) -> Result<Guards, String> {
        fn find<'a>(infos: &'a mut [ActionInfo], name: &str) -> Option<&'a mut ActionInfo> {
            infos.iter_mut().find(|i| i.name == name)
        }
        let mut mounted: HashMap<String, ActionLimits> = HashMap::new();
        fn slot<'a>(
            mounted: &'a mut HashMap<String, ActionLimits>,
            mounted_tool: &dyn Fn(&str) -> bool,
            name: &str,
            what: &str,
        ) -> Result<&'a mut ActionLimits, String> {
            if !mounted_tool(name) {
                return Err(format!(
                    "{what} for `{name}`, but no action of that name is registered and no mount's prefix covers it"
                ));
            }
            Ok(mounted.entry(name.to_owned()).or_default())
        }
        for (name, limit) in &self.concurrency {
            match find(infos, name) {
                Some(info) => info.limits.concurrency = Some(*limit),
                None => {
                    slot(&mut mounted, mounted_tool, name, "a concurrency limit")?.concurrency =
                        Some(*limit)
                }
            }
        }
        for (name, limit) in &self.rate_limits {
            match find(infos, name) {
                Some(info) => info.limits.rate_limit = Some(*limit),
                None => {
                    slot(&mut mounted, mounted_tool, name, "a rate limit")?.rate_limit =
                        Some(*limit)
                }
            }
        }
        for (name, limit) in &self.timeouts {
            match find(infos, name) {
                Some(info) => info.limits.timeout = Some(*limit),
                None => slot(&mut mounted, mounted_tool, name, "a timeout")?.timeout = Some(*limit),
            }
        }
        let mut groups = HashMap::new();
        for (group, limit) in &self.groups {
            if !infos
                .iter()
                .any(|i| group_of(i.name) == Some(group.as_str()))
            {
                return Err(format!(
                    "a group concurrency limit for `{group}`, but no action is named `{group}.…`"
                ));
            }
            groups.insert(
                group.clone(),
                Arc::new(ConcurrencyGuard::new(format!("the {group} group"), *limit)),
            );
        }
        let guards_of =
            |name: Arc<str>, shown: Arc<str>, limits: &ActionLimits, group| ActionGuards {
                concurrency: limits
                    .concurrency
                    .map(|l| ConcurrencyGuard::new(&*shown, l)),
                group,
                rate: limits
                    .rate_limit
                    .map(|l| (RateLimiterGuard::new(&*shown, l), l.per_client)),
                timeout: limits.timeout,
                checks: AtomicU64::new(0),
                name,
                shown,
                shared: Arc::clone(shared),
            };
        let actions = infos
            .iter()
            .zip(callables)
            .map(|(info, shown)| {
                let group = group_of(info.name).and_then(|g| groups.get(g).cloned());
                guards_of(Arc::from(info.name), Arc::clone(shown), &info.limits, group)
            })
            .collect();
        let mounted = mounted
            .into_iter()
            .map(|(name, limits)| {
                let named: Arc<str> = Arc::from(name.as_str());
                let guards = guards_of(Arc::clone(&named), named, &limits, None);
                (name, guards)
            })
            .collect();
        Ok(Guards {
            actions,
            groups,
            mounted,
        })
    }
}

/// Every action's guards, in registration order, and the group guards.
pub(crate) struct Guards {
    pub actions: Vec<ActionGuards>,
    pub groups: HashMap<String, Arc<ConcurrencyGuard>>,
    /// The guards of mounted tools, by exposed name (`finance_get_invoice`).
    pub mounted: HashMap<String, ActionGuards>,
}

/// One action's guards.
pub(crate) struct ActionGuards {
    concurrency: Option<ConcurrencyGuard>,
    group: Option<Arc<ConcurrencyGuard>>,
    rate: Option<(RateLimiterGuard, bool)>,
    pub timeout: Option<Duration>,
    checks: AtomicU64,
    /// The action's registered name: the shared store's key, the same in every exposure.
    name: Arc<str>,
    /// How clients call it: what its answers say.
    shown: Arc<str>,
    shared: SharedStore,
}

/// Held while an admitted call runs; dropping it frees the slots it holds.
pub(crate) struct Admission {
    _action: Option<ActivePermit>,
    _group: Option<ActivePermit>,
}

/// Keyed buckets are swept of idle clients once every this many checks.
const SWEEP_EVERY: u64 = 1024;

impl ActionGuards {
    /// The rate limit, then the action's slot, then its group's slot. Cancel-safe: dropping
    /// the future while it waits in a queue gives the place back.
    pub(crate) async fn admit(&self, scope: &RequestScope) -> Result<Admission, ToolError> {
        if let Some((rate, per_client)) = &self.rate {
            if let Some(shared) = self.shared.get() {
                let key = if *per_client {
                    ClientKey::of(scope).0
                } else {
                    String::new()
                };
                shared
                    .check_as(&self.name, &self.shown, &key, &rate.limit())
                    .await?;
            } else if *per_client {
                rate.check(&ClientKey::of(scope).0)?;
                if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
                    rate.retain_recent();
                }
            } else {
                rate.check("")?;
            }
        }
        let action = match &self.concurrency {
            Some(g) => Some(g.acquire().await?),
            None => None,
        };
        let group = match &self.group {
            Some(g) => Some(g.acquire().await?),
            None => None,
        };
        Ok(Admission {
            _action: action,
            _group: group,
        })
    }

    /// Whether the action has no rate limit and no concurrency guard (its own or its group's):
    /// every call is admitted at once, with no slot to hold.
    pub(crate) fn admits_all(&self) -> bool {
        self.rate.is_none() && self.concurrency.is_none() && self.group.is_none()
    }

    /// The action's concurrency guard state, when it has one.
    pub(crate) fn state(&self) -> Option<GuardState> {
        self.concurrency.as_ref().map(ConcurrencyGuard::state)
    }
}

/// The answer for a call its client cancelled: nobody reads it (the client stopped waiting),
/// but it is logged and keeps the pipeline total. Once the server stops its calls (the end of
/// an HTTP drain's grace), a cancelled call was the server's to stop, and its client, still
/// waiting, reads why: `SERVER_BUSY`, to be sent again elsewhere.
pub(crate) fn cancelled(action: &str, stopping: bool) -> ToolError {
    if stopping {
        return error(
            crate::envelope::codes::SERVER_BUSY,
            format!(
                "The call to {action} was stopped before it finished: the server is shutting down"
            ),
        )
        .recovery("Check whether it took effect, then send it again: another instance will answer")
        .retry_after(Duration::from_secs(1));
    }
    error(
        crate::envelope::codes::CANCELLED,
        format!("The call to {action} was cancelled by the client before it finished"),
    )
    .recovery("Send the call again if you still need its result")
}
