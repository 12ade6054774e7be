//! [`ServerBuilder::build`]: the registrations checked once, then the [`Server`] made of them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::catalog::Catalog;
use super::listing::Icon;
use super::names::Names;
use super::registry::{ActionDescriptor, Inner};
use super::routing::Route;
use super::{
    Exposure, Item, MAX_PAGE_SIZE, ToolSource, ToolSpec, Visibility, group, limits, routing, source,
};
use crate::action::ActionInfo;
use crate::context::Notifier;
use crate::contract::{ContractAwareness, ToolContract};

use super::builder::{BuildError, ServerBuilder};
use super::instance::Server;

impl ServerBuilder {
    /// Checks the registrations and builds the server, phase by phase; the first phase that
    /// finds a fault answers with it.
    pub fn build(mut self) -> Result<Server, BuildError> {
        self.check_settings()?;
        let mut infos = self.registered_actions()?;
        let mounted_scopes = self.bind_mounts(&mut infos)?;
        let shared = self.shared_limits();
        self.bound_results(&mut infos)?;
        let placed = self.place(&infos)?;
        let mounted_tool = |name: &str| self.sources.iter().any(|s| s.owns(name));
        let guards = (self.guards)
            .build(&mut infos, &placed.callables, &shared, &mounted_tool)
            .map_err(BuildError::Guard)?;
        let mut tools = tool_list(&placed, &infos)?;
        let searchable = if self.tool_search {
            let all = std::mem::take(&mut tools);
            tools = super::tool_search::listed(all.len());
            all
        } else {
            Vec::new()
        };
        let Placed {
            layout,
            discriminator,
            callables,
            names,
        } = placed;
        let entries: Vec<ActionDescriptor> = infos
            .into_iter()
            .zip(layout.placements)
            .zip(std::mem::take(&mut self.actions))
            .zip(guards.actions)
            .zip(callables)
            .map(
                |((((info, p), handler), guards), callable)| ActionDescriptor {
                    routed_tool: Arc::from(p.tool.as_str()),
                    callable,
                    info,
                    tool: p.tool,
                    discriminator: p.discriminator,
                    handler,
                    guards: Arc::new(guards),
                },
            )
            .collect();
        let catalog = self.checked_catalog()?;
        let contracts = contracts_of(&entries);
        let (awareness, source_awareness) = match (&self.lockfile, self.self_healing_cap) {
            (Some(path), Some(cap)) => load_awareness(path, &contracts, cap, &self.sources, &names),
            _ => (None, None),
        };
        let visibility = self.visibility(&layout.tool_order, &catalog)?;
        if let Some(bus) = self.change_bus.take() {
            // A fresh notifier has no bus: this cannot be refused.
            let _ = self.states.changes.attach_bus(bus);
        }
        let tasked: std::collections::HashMap<String, crate::TaskSupport> = entries
            .iter()
            .filter(|a| a.info.task.allows_task())
            .map(|a| (a.tool.clone(), a.info.task))
            .collect();
        let declared_icons = declared_icons(&entries, &catalog);
        Ok(Server {
            inner: Arc::new(Inner {
                tasked,
                contracts,
                awareness,
                source_awareness,
                lockfile: self.lockfile,
                name: self.name,
                version: self.version,
                stamp: std::sync::OnceLock::new(),
                stopping: std::sync::atomic::AtomicBool::new(false),
                instructions: self.instructions,
                entries,
                tools,
                tool_names: layout.tool_order,
                routes: layout.routes,
                groups: layout.groups,
                discriminator,
                states: Arc::new(self.states),
                middleware: self.middleware.into(),
                internal: self.internal,
                group_guards: guards.groups,
                mounted_guards: guards.mounted,
                mounted_scopes,
                catalog,
                auth: self.auth.auth,
                shared,
                list_cache: self.list_cache,
                request_state_key: self.request_state_key,
                names,
                once: Arc::new(match self.once {
                    Some(store) => std::sync::OnceLock::from(store),
                    None => std::sync::OnceLock::new(),
                }),
                tasks: Arc::new(match self.tasks {
                    Some(store) => std::sync::OnceLock::from(store),
                    None => std::sync::OnceLock::new(),
                }),
                running: Default::default(),
                #[cfg(feature = "server-http")]
                session_asks: Default::default(),
                #[cfg(any(feature = "server-http", feature = "server-stdio"))]
                result_streams: Default::default(),
                read_cache: self.read_cache,
                sources: self.sources,
                visibility,
                listing: self.listing.built(declared_icons),
                searchable,
                tool_search: self.tool_search,
            }),
        })
    }

    /// Phase 1, the server's own settings: its change notifier, the `requestState` key's
    /// length, the authentication's configuration.
    fn check_settings(&mut self) -> Result<(), BuildError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.states.changes = Notifier::new(self.changes.0, self.changes.1);
        if let Some(key) = &self.request_state_key
            && key.len() < 32
        {
            return Err(BuildError::RequestStateKey(key.len()));
        }
        if let Some(auth) = &self.auth.auth {
            auth.check()?;
        }
        Ok(())
    }

    /// Phase 2, the actions: each name once, each state an action needs registered.
    fn registered_actions(&self) -> Result<Vec<ActionInfo>, BuildError> {
        let infos: Vec<ActionInfo> = self.actions.iter().map(|a| a.info().clone()).collect();
        let mut seen = HashMap::new();
        for info in &infos {
            if seen.insert(info.name, ()).is_some() {
                return Err(BuildError::DuplicateAction(info.name));
            }
            if let Some(req) = info.state
                && !self.states.contains(req.type_id)
            {
                return Err(BuildError::MissingState {
                    action: info.name,
                    state: req.type_name,
                });
            }
        }
        Ok(infos)
    }

    /// Phase 3, the mounts: each source bound to the exposure's separator and the server's
    /// notifier; no guard named after a whole mount; the builder's scopes applied to the
    /// actions, and returned for the mounted tools they name.
    fn bind_mounts(
        &self,
        infos: &mut [ActionInfo],
    ) -> Result<HashMap<String, Vec<Cow<'static, str>>>, BuildError> {
        let source_separator = match &self.exposure {
            Exposure::Flat { separator } => separator.as_str(),
            Exposure::Grouped { .. } => "_",
        };
        for source in &self.sources {
            source.bind(source_separator, &self.states.changes);
        }
        let sources = &self.sources;
        let mounted_tool = |name: &str| sources.iter().any(|s| s.owns(name));
        let g = &self.guards;
        let named = (g.concurrency.iter().map(|(n, _)| n))
            .chain(g.rate_limits.iter().map(|(n, _)| n))
            .chain(g.timeouts.iter().map(|(n, _)| n))
            .chain(g.groups.iter().map(|(n, _)| n))
            .chain(self.auth.scopes.iter().map(|(n, _)| n));
        if let Some(mount) = named
            .filter(|n| !infos.iter().any(|i| i.name == n.as_str()))
            .find(|n| sources.iter().any(|s| s.name() == n.as_str()))
        {
            return Err(BuildError::Guard(format!(
                "`{mount}` is a mount: name one of its tools (`{mount}_…`), or set what holds for all its tools in its MountOptions (scopes, rate_limit, pending, call_timeout)"
            )));
        }
        apply_scope_overrides(infos, &self.auth.scopes, &mounted_tool).map_err(BuildError::Guard)
    }

    /// Phase 4, where rate-limit buckets live: the builder's shared store, if any.
    fn shared_limits(&mut self) -> limits::SharedStore {
        let shared = limits::SharedStore::default();
        if let Some(store) = self.auth.store.take() {
            let _ = shared.set(store);
        }
        shared
    }

    /// Phase 5, the result bound: at least one byte, and every action's default.
    fn bound_results(&self, infos: &mut [ActionInfo]) -> Result<(), BuildError> {
        if self.max_result_bytes == 0 {
            return Err(BuildError::Guard(
                "`max_result_bytes` must be at least 1: it is how many bytes of text a result may carry".into(),
            ));
        }
        for info in infos {
            info.limits
                .max_result_bytes
                .get_or_insert(self.max_result_bytes);
        }
        Ok(())
    }

    /// Phase 6, where each action is listed: the tools' layout in the exposure (no tool under
    /// a mount's prefix), and each action's one spelling as clients call it ([`Names`]).
    fn place(&self, infos: &[ActionInfo]) -> Result<Placed, BuildError> {
        let layout = routing::layout(infos, &self.exposure).map_err(BuildError::Exposure)?;
        if let Some(name) = layout
            .tool_order
            .iter()
            .find(|n| self.sources.iter().any(|s| s.owns(n)))
        {
            return Err(BuildError::Exposure(format!(
                "tool `{name}` is under the prefix of a mounted upstream"
            )));
        }
        let discriminator = match &self.exposure {
            Exposure::Grouped { discriminator } => discriminator.clone(),
            Exposure::Flat { .. } => String::from("action"),
        };
        // Each action's one spelling (see `Names`), for every sentence that names it.
        let callables: Vec<Arc<str>> = (layout.placements.iter())
            .map(|p| match &p.discriminator {
                Some(d) => Arc::from(format!("{}.{d}", p.tool)),
                None => Arc::from(p.tool.as_str()),
            })
            .collect();
        let names = Arc::new(Names::new(
            infos.iter().map(|i| i.name).zip(&callables),
            &self.sources,
        ));
        Ok(Placed {
            layout,
            discriminator,
            callables,
            names,
        })
    }

    /// Phase 8, prompts, resources and templates: the catalog, and no read-cache setting for
    /// a resource it does not hold.
    fn checked_catalog(&mut self) -> Result<Catalog, BuildError> {
        let separator = match &self.exposure {
            Exposure::Flat { separator } => separator.as_str(),
            Exposure::Grouped { .. } => "_",
        };
        let catalog = std::mem::take(&mut self.catalog).build(
            separator,
            self.internal.hide_messages,
            |id| self.states.contains(id),
        )?;
        if let Some((unknown, _)) = self
            .read_cache
            .per_resource
            .iter()
            .find(|(r, _)| !catalog.resources().iter().any(|e| e.info.uri == r))
        {
            return Err(BuildError::ResourceCache(unknown.clone()));
        }
        Ok(catalog)
    }

    /// Phase 9, what each client sees: icons and disabled items name things the server has
    /// (a tool, a mounted tool, a prompt, a resource), the page size is in bounds, and the
    /// disabled ones start hidden.
    fn visibility(
        &self,
        tool_order: &[String],
        catalog: &Catalog,
    ) -> Result<Visibility, BuildError> {
        let visibility = Visibility::new(self.states.changes.clone());
        let known = |item: &Item, name: &str| match item {
            Item::Tool => {
                tool_order.iter().any(|t| t == name) || self.sources.iter().any(|s| s.owns(name))
            }
            Item::Prompt => catalog.prompts().iter().any(|p| p.name == *name),
            Item::Resource => catalog.resources().iter().any(|r| r.info.uri == name),
        };
        if let Some((item, name, _)) = (self.listing.icons.iter()).find(|(i, n, _)| !known(i, n)) {
            return Err(BuildError::Icons(*item, name.clone()));
        }
        if let Some(size) = self.listing.page_size
            && !(1..=MAX_PAGE_SIZE).contains(&size)
        {
            return Err(BuildError::PageSize(size));
        }
        for (item, name) in &self.disabled {
            if !known(item, name) {
                return Err(BuildError::Disabled(*item, name.clone()));
            }
            visibility.set_quietly(*item, name, false);
        }
        Ok(visibility)
    }
}

/// Where the actions are listed (phase 6).
struct Placed {
    layout: routing::Layout,
    discriminator: String,
    /// Each action's spelling as clients call it, in registration order.
    callables: Vec<Arc<str>>,
    names: Arc<Names>,
}

/// Phase 7, the tool list: an action's own tool, or a group's.
fn tool_list(placed: &Placed, infos: &[ActionInfo]) -> Result<Vec<ToolSpec>, BuildError> {
    let layout = &placed.layout;
    let mut tools = Vec::with_capacity(layout.tool_order.len());
    for name in &layout.tool_order {
        match layout.routes.get(name) {
            Some(Route::Action(i)) => tools.push(action_tool(name, &infos[*i], &placed.names)),
            Some(Route::Group(g)) => {
                let group = &layout.groups[*g];
                let (description, input_schema, hints) =
                    group::group_tool(group, &placed.discriminator, infos)
                        .map_err(BuildError::Exposure)?;
                tools.push(ToolSpec {
                    name: name.clone(),
                    title: None,
                    description,
                    input_schema,
                    output_schema: None,
                    hints: Some(hints),
                });
            }
            None => {}
        }
    }
    Ok(tools)
}

/// Applies the builder's scope overrides to the actions, and returns the ones for mounted
/// tools (a name no action has, under a mount's prefix), by name. Fails when one names
/// neither.
fn apply_scope_overrides(
    infos: &mut [ActionInfo],
    overrides: &[(String, Vec<String>)],
    mounted_tool: &dyn Fn(&str) -> bool,
) -> Result<HashMap<String, Vec<Cow<'static, str>>>, String> {
    let mut mounted = HashMap::new();
    for (name, scopes) in overrides {
        let mut scopes: Vec<Cow<'static, str>> =
            scopes.iter().map(|s| Cow::Owned(s.clone())).collect();
        scopes.sort();
        scopes.dedup();
        match infos.iter_mut().find(|i| i.name == name) {
            Some(info) => info.scopes = scopes,
            None if mounted_tool(name) => {
                mounted.insert(name.clone(), scopes);
            }
            None => {
                return Err(format!(
                    "scopes for `{name}`, but no action of that name is registered and no mount's prefix covers it"
                ));
            }
        }
    }
    Ok(mounted)
}

fn contracts_of(entries: &[ActionDescriptor]) -> Vec<ToolContract> {
    entries
        .iter()
        .map(|d| {
            let mut c = ToolContract::new(
                d.info.name,
                d.tool.clone(),
                d.info.description.to_string(),
                serde_json::Value::Object(d.info.input_schema.as_ref().clone()),
            )
            .with_annotations(d.info.hints);
            if let Some(why) = &d.info.deprecated {
                c = c.with_deprecated(why.to_string());
            }
            if !d.info.scopes.is_empty() {
                c = c.with_scopes(d.info.scopes.iter().map(|s| s.to_string()));
            }
            c
        })
        .collect()
}

/// The frozen self-healing sections of the actions, or `None` (said once on stderr) when the
/// lockfile cannot be read; no deltas means no per-call cost at all. With sources, the
/// lockfile's contracts of their tools, compared at run time. A delta's sentence and its
/// "After" value name today's actions as clients call them (`names`); a name the lockfile
/// had before is left as it was.
fn load_awareness(
    path: &Path,
    contracts: &[ToolContract],
    cap: usize,
    sources: &[Arc<dyn ToolSource>],
    names: &Names,
) -> (Option<ContractAwareness>, Option<source::SourceAwareness>) {
    let lock = match crate::contract::Lockfile::read(path) {
        Ok(lock) => lock,
        Err(e) => {
            let msg = format!(
                "fusion: self-healing is off: cannot use the contract lockfile {}: {e}",
                path.display()
            );
            // The server is often built before logging is set up: make sure it is seen.
            if tracing::dispatcher::has_been_set() {
                tracing::warn!("{msg}");
            } else {
                eprintln!("{msg}");
            }
            return (None, None);
        }
    };
    let (mounted, own): (Vec<ToolContract>, Vec<ToolContract>) = lock
        .contracts()
        .iter()
        .cloned()
        .partition(|c| sources.iter().any(|s| s.owns(&c.action)));
    let deltas = (crate::contract::diff(&own, contracts).into_iter())
        .map(|mut d| {
            d.description = names.spell_in(&d.description).into_owned();
            d.after = d.after.map(|a| names.spell_in(&a).into_owned());
            d
        })
        .collect();
    let actions = ContractAwareness::new(deltas, cap);
    let mounted = (!sources.is_empty()).then(|| source::SourceAwareness::new(mounted, cap));
    ((!actions.is_empty()).then_some(actions), mounted)
}

/// The tool an action is listed as in flat exposure; a deprecation's note names actions as
/// clients call them.
fn action_tool(name: &str, info: &ActionInfo, names: &Names) -> ToolSpec {
    let description = match &info.deprecated {
        Some(why) => format!("DEPRECATED: {}. {}", names.spell_in(why), info.description),
        None => info.description.to_string(),
    };
    ToolSpec {
        name: name.to_owned(),
        title: info.title.as_ref().map(|t| t.to_string()),
        description,
        input_schema: crate::schema::for_tools_list(&info.input_schema, Some(&info.description)),
        output_schema: info
            .output_schema
            .as_ref()
            .map(|s| crate::schema::for_tools_list(s, None)),
        hints: (!info.hints.is_empty()).then_some(info.hints),
    }
}

/// The icons the attributes declare, by the name each list shows: a tool exposed on its own
/// (flat exposure, or an ungrouped action), every prompt, resource and template. A grouped
/// tool takes none of its members' icons: they describe one action each, and which of them
/// would speak for the group would depend on registration order.
fn declared_icons(
    entries: &[ActionDescriptor],
    catalog: &Catalog,
) -> Vec<(super::Item, String, Vec<Icon>)> {
    let owned = |icons: &[crate::action::StaticIcon]| icons.iter().map(Icon::from).collect();
    let tools = entries
        .iter()
        .filter(|d| d.discriminator.is_none() && !d.info.icons.is_empty())
        .map(|d| (super::Item::Tool, d.tool.clone(), owned(d.info.icons)));
    let prompts = (catalog.prompts().iter())
        .filter(|p| !p.info.icons.is_empty())
        .map(|p| (super::Item::Prompt, p.name.clone(), owned(p.info.icons)));
    let resources = (catalog.resources().iter())
        .filter(|r| !r.info.icons.is_empty())
        .map(|r| {
            (
                super::Item::Resource,
                r.info.uri.to_owned(),
                owned(r.info.icons),
            )
        });
    tools.chain(prompts).chain(resources).collect()
}
