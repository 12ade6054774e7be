//! Visibility: tools, prompts and resources switched off and on while the server runs.
//!
//! A disabled tool is left out of `tools/list` and answered `UNKNOWN_ACTION` (its closest
//! *enabled* name suggested); a disabled prompt or resource is left out of its list and
//! answered as one that does not exist. Each change that changes something tells the clients
//! through the [`Notifier`] (`notifications/*/list_changed` to 2025 sessions, the same on
//! 2026-07-28 `subscriptions/listen` streams).
//!
//! The state is this instance's: with a [`ChangeBus`](crate::store::ChangeBus) the
//! notification reaches every instance's clients, the disabled set does not — apply the same
//! rule on each instance (from configuration, say). The contract (`lock`, the `tools`
//! command, [`Server::contracts`](crate::Server::contracts)) is the full one whatever is
//! disabled.

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::context::Notifier;

/// What a visibility rule names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    /// An MCP tool, by the name `tools/list` shows (an action in flat exposure, a whole
    /// group in grouped exposure, a mounted tool).
    Tool,
    /// A prompt, by name.
    Prompt,
    /// A resource by its URI, or a resource template by its URI template.
    Resource,
}

#[derive(Default)]
struct Hidden {
    tools: HashSet<String>,
    prompts: HashSet<String>,
    resources: HashSet<String>,
}

impl Hidden {
    fn get(&self, kind: Item) -> &HashSet<String> {
        match kind {
            Item::Tool => &self.tools,
            Item::Prompt => &self.prompts,
            Item::Resource => &self.resources,
        }
    }

    fn of(&mut self, kind: Item) -> &mut HashSet<String> {
        match kind {
            Item::Tool => &mut self.tools,
            Item::Prompt => &mut self.prompts,
            Item::Resource => &mut self.resources,
        }
    }
}

#[derive(Default)]
struct Shared {
    hidden: RwLock<Hidden>,
    /// Whether anything is disabled: the call path reads only this while nothing is.
    any: AtomicBool,
    /// Bumped on every change: list cursors are bound to it.
    generation: AtomicU64,
}

/// The runtime handle on what the server shows: enable and disable tools, prompts and
/// resources (see the [module](self) docs). From [`Server::visibility`](crate::Server::visibility);
/// clones share the state.
#[derive(Clone)]
pub struct Visibility {
    shared: Arc<Shared>,
    notifier: Notifier,
}

impl fmt::Debug for Visibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = self
            .shared
            .hidden
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Visibility")
            .field("tools", &hidden.tools)
            .field("prompts", &hidden.prompts)
            .field("resources", &hidden.resources)
            .finish()
    }
}

impl Visibility {
    /// Everything enabled; changes are announced through `notifier`.
    pub(crate) fn new(notifier: Notifier) -> Self {
        Visibility {
            shared: Arc::default(),
            notifier,
        }
    }

    /// Switches `name` off or on without telling anyone (the builder's rules).
    pub(crate) fn set_quietly(&self, kind: Item, name: &str, enabled: bool) -> bool {
        let mut hidden = self
            .shared
            .hidden
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let changed = match enabled {
            true => hidden.of(kind).remove(name),
            false => hidden.of(kind).insert(name.to_owned()),
        };
        let any =
            !(hidden.tools.is_empty() && hidden.prompts.is_empty() && hidden.resources.is_empty());
        self.shared.any.store(any, Ordering::Release);
        if changed {
            self.shared.generation.fetch_add(1, Ordering::AcqRel);
        }
        changed
    }

    /// Switches `name` off (`enabled` false) or on, and when that changed something, tells
    /// the clients their list changed. Returns whether it changed something. A name nothing
    /// goes by is kept all the same (a mounted tool may appear later).
    pub fn set(&self, kind: Item, name: &str, enabled: bool) -> bool {
        let changed = self.set_quietly(kind, name, enabled);
        if changed {
            match kind {
                Item::Tool => self.notifier.tools_list_changed(),
                Item::Prompt => self.notifier.prompts_list_changed(),
                Item::Resource => self.notifier.resources_list_changed(),
            };
        }
        changed
    }

    /// Disables the tool `name` (as `tools/list` shows it); see [`Visibility::set`].
    pub fn disable_tool(&self, name: &str) -> bool {
        self.set(Item::Tool, name, false)
    }

    /// Enables the tool `name` again; see [`Visibility::set`].
    pub fn enable_tool(&self, name: &str) -> bool {
        self.set(Item::Tool, name, true)
    }

    /// Disables the prompt `name`; see [`Visibility::set`].
    pub fn disable_prompt(&self, name: &str) -> bool {
        self.set(Item::Prompt, name, false)
    }

    /// Enables the prompt `name` again; see [`Visibility::set`].
    pub fn enable_prompt(&self, name: &str) -> bool {
        self.set(Item::Prompt, name, true)
    }

    /// Disables the resource with this URI, or the template with this URI template; see
    /// [`Visibility::set`].
    pub fn disable_resource(&self, uri: &str) -> bool {
        self.set(Item::Resource, uri, false)
    }

    /// Enables the resource (or template) again; see [`Visibility::set`].
    pub fn enable_resource(&self, uri: &str) -> bool {
        self.set(Item::Resource, uri, true)
    }

    /// Whether `name` is enabled.
    pub fn is_enabled(&self, kind: Item, name: &str) -> bool {
        if !self.shared.any.load(Ordering::Acquire) {
            return true;
        }
        let hidden = self
            .shared
            .hidden
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        !hidden.get(kind).contains(name)
    }

    /// Whether nothing at all is disabled (the common case, checked without a lock).
    pub fn all_enabled(&self) -> bool {
        !self.shared.any.load(Ordering::Acquire)
    }

    /// How many changes were made so far: a list read at one generation may differ from one
    /// read at another.
    pub fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::Acquire)
    }

    /// `items` without those of `kind` that are disabled (by the name `name_of` gives).
    pub(crate) fn retain<T>(&self, kind: Item, items: &mut Vec<T>, name_of: impl Fn(&T) -> &str) {
        if self.all_enabled() {
            return;
        }
        let hidden = self
            .shared
            .hidden
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let set = hidden.get(kind);
        items.retain(|i| !set.contains(name_of(i)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_change_is_announced_once_and_only_when_it_changes_something() {
        let notifier = Notifier::default();
        let mut changes = notifier.watch();
        let v = Visibility::new(notifier);
        assert!(v.all_enabled());
        assert!(v.disable_tool("a"));
        assert!(!v.disable_tool("a"));
        assert!(!v.is_enabled(Item::Tool, "a"));
        assert!(v.is_enabled(Item::Prompt, "a"));
        assert_eq!(v.generation(), 1);
        assert!(v.enable_tool("a"));
        assert!(v.all_enabled());
        let mut items = vec!["a".to_owned(), "b".to_owned()];
        v.set_quietly(Item::Tool, "b", false);
        v.retain(Item::Tool, &mut items, String::as_str);
        assert_eq!(items, ["a"]);
        let wait = std::time::Duration::from_millis(100);
        for _ in 0..2 {
            let got = tokio::time::timeout(wait, changes.recv()).await;
            assert!(matches!(got, Ok(Some(_))), "a change is announced");
        }
        let got = tokio::time::timeout(wait, changes.recv()).await;
        assert!(
            got.is_err(),
            "nothing more: the quiet rule and the no-ops say nothing"
        );
    }
}
