//! Exposure and routing: which MCP tools the actions become, and which action a
//! `tools/call` reaches.
//!
//! Flat exposure (the default) makes each action its own tool, dots replaced by a separator
//! (`billing.get_invoice` → `billing_get_invoice`). Grouped exposure makes one tool per
//! prefix (`billing`) whose `action` discriminator names the action (`get_invoice`).

use std::cmp::Reverse;
use std::collections::HashMap;

use serde_json::Value;

use crate::action::{ActionInfo, Exposure, Placement};
use crate::envelope::{ToolError, codes};
use crate::input::JsonObject;
use crate::validation::{closest, describe_sent};

/// Where a tool name leads.
#[derive(Clone, Debug)]
pub(crate) enum Route {
    Action(usize),
    Group(usize),
}

/// A grouped tool.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub tool: String,
    /// Discriminator value → action index, in registration order.
    pub members: Vec<(String, usize)>,
}

/// Tool name → where it leads. Built once with the server and only read per call.
pub(crate) type Routes = HashMap<String, Route, NameHash>;

/// The route table's hash: `foldhash` (seeded per process), several times cheaper than
/// SipHash on a short tool name. The table is fixed when the server is built and a client only
/// looks names up, so there is nothing for hash flooding to grow.
pub(crate) type NameHash = foldhash::fast::RandomState;

pub(crate) struct Layout {
    pub placements: Vec<Placement>,
    pub routes: Routes,
    pub groups: Vec<Group>,
    /// Tool names in listing order.
    pub tool_order: Vec<String>,
}

pub(crate) fn layout(infos: &[ActionInfo], exposure: &Exposure) -> Result<Layout, String> {
    let mut placements = Vec::with_capacity(infos.len());
    let mut routes = Routes::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut tool_order = Vec::new();
    for (i, info) in infos.iter().enumerate() {
        let placement = exposure.place(info.name);
        match &placement.discriminator {
            None => {
                if routes
                    .insert(placement.tool.clone(), Route::Action(i))
                    .is_some()
                {
                    return Err(format!(
                        "two actions are exposed as the same tool `{}`",
                        placement.tool
                    ));
                }
                tool_order.push(placement.tool.clone());
            }
            Some(value) => {
                let g = match routes.get(&placement.tool) {
                    Some(Route::Group(g)) => *g,
                    Some(Route::Action(_)) => {
                        return Err(format!(
                            "tool `{}` is both an action and a group",
                            placement.tool
                        ));
                    }
                    None => {
                        groups.push(Group {
                            tool: placement.tool.clone(),
                            members: Vec::new(),
                        });
                        routes.insert(placement.tool.clone(), Route::Group(groups.len() - 1));
                        tool_order.push(placement.tool.clone());
                        groups.len() - 1
                    }
                };
                groups[g].members.push((value.clone(), i));
            }
        }
        placements.push(placement);
    }
    for name in &tool_order {
        if !valid_tool_name(name) {
            return Err(format!(
                "`{name}` is not a tool name MCP clients accept (1 to 64 of A-Z a-z 0-9 _ - .)"
            ));
        }
    }
    Ok(Layout {
        placements,
        routes,
        groups,
        tool_order,
    })
}

/// Whether MCP clients accept `name` as a tool name: 1 to 64 of `A-Z a-z 0-9 _ - .`.
///
/// MCP (2025-11-25) allows up to [`MAX_TOOL_NAME_CHARS`] (128); the names a server exposes are
/// held to 64, the limit of several model providers' function-calling APIs, with room for the
/// prefixes clients add (`mcp__server__`). A requested name is measured against the 128.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// At most this many tools are listed in an `UNKNOWN_ACTION` envelope (the nearest names).
pub const MAX_LISTED_TOOLS: usize = 20;

/// The longest tool name MCP allows, in characters (2025-11-25, "Tool names": 1 to 128).
///
/// A requested name (or grouped tool's action) longer than this names nothing: it is answered
/// `UNKNOWN_ACTION` without looking for a near name, and the envelope shows only its first
/// [`SHOWN_NAME_CHARS`] characters and its length. The names a server exposes are held to the
/// stricter 64 of [`valid_tool_name`].
pub const MAX_TOOL_NAME_CHARS: usize = 128;

/// How much of a name longer than [`MAX_TOOL_NAME_CHARS`] an envelope shows, in characters.
pub const SHOWN_NAME_CHARS: usize = 32;

/// For a name longer than [`MAX_TOOL_NAME_CHARS`]: its first [`SHOWN_NAME_CHARS`] characters
/// and `...`, and its length in characters.
fn overlong(name: &str) -> Option<(String, usize)> {
    if name.len() <= MAX_TOOL_NAME_CHARS
        || name.chars().take(MAX_TOOL_NAME_CHARS + 1).count() <= MAX_TOOL_NAME_CHARS
    {
        return None;
    }
    let end = name
        .char_indices()
        .nth(SHOWN_NAME_CHARS)
        .map_or(name.len(), |(i, _)| i);
    Some((format!("{}...", &name[..end]), name.chars().count()))
}

/// At most the first [`MAX_TOOL_NAME_CHARS`] characters of `name`, for a log line.
pub(crate) fn loggable(name: &str) -> &str {
    match name.char_indices().nth(MAX_TOOL_NAME_CHARS) {
        Some((end, _)) => &name[..end],
        None => name,
    }
}

/// The tools an `UNKNOWN_ACTION` answer lists: all of them up to [`MAX_LISTED_TOOLS`], else
/// the nearest names to `requested`, in their order.
pub(crate) fn nearest(requested: &str, tools: &[String]) -> Vec<String> {
    if tools.len() <= MAX_LISTED_TOOLS {
        return tools.to_vec();
    }
    let lower = requested.to_lowercase();
    let mut by_distance: Vec<(usize, usize)> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| (strsim::damerau_levenshtein(&lower, &t.to_lowercase()), i))
        .collect();
    by_distance.sort();
    let mut keep: Vec<usize> = by_distance
        .iter()
        .take(MAX_LISTED_TOOLS)
        .map(|(_, i)| *i)
        .collect();
    keep.sort_unstable();
    keep.into_iter().map(|i| tools[i].clone()).collect()
}

/// The `UNKNOWN_ACTION` envelope for a tool name nothing is exposed as.
pub(crate) fn unknown_tool(requested: &str, tools: &[String]) -> ToolError {
    if let Some((shown, length)) = overlong(requested) {
        return ToolError::new(
            codes::UNKNOWN_ACTION,
            format!(
                "No tool named '{shown}': the name has {length} characters, and tool names have at most {MAX_TOOL_NAME_CHARS}"
            ),
        )
        .recovery("Call one of the available tools; do not invent tool names")
        .available_actions(tools.iter().take(MAX_LISTED_TOOLS).cloned())
        .detail("requested", shown)
        .detail("length", length);
    }
    let near = closest(requested, tools.iter().map(String::as_str));
    let listed = nearest(requested, tools);
    let recovery = match near {
        Some(n) => {
            format!("Call {n} instead (the closest name), or pick one of the available tools")
        }
        None => "Call one of the available tools; do not invent tool names".to_owned(),
    };
    let mut e = ToolError::new(
        codes::UNKNOWN_ACTION,
        format!("No tool named '{requested}'"),
    )
    .recovery(recovery)
    .available_actions(listed)
    .detail("requested", requested);
    if let Some(n) = near {
        e = e.detail("closest", n);
    }
    e
}

/// Picks a group member for a call: the discriminator's value, or an envelope saying what
/// is wrong with it.
pub(crate) fn pick_member<'a>(
    group: &Group,
    discriminator: &str,
    arguments: &mut JsonObject,
    info_of: impl Fn(usize) -> &'a ActionInfo,
) -> Result<usize, ToolError> {
    let values = || group.members.iter().map(|(v, _)| v.clone());
    let sent = arguments.remove(discriminator);
    let requested = match sent {
        Some(Value::String(s)) => s,
        other => {
            let near = guess_from_arguments(group, arguments, info_of);
            let problem = match other {
                None => format!(
                    "The {} tool needs '{discriminator}' to say which action to run",
                    group.tool
                ),
                Some(v) => format!(
                    "The {} tool needs '{discriminator}' to be a string naming an action; it was {}",
                    group.tool,
                    describe_sent(&v)
                ),
            };
            let recovery = match near {
                Some(n) => format!(
                    "Call {} again with \"{discriminator}\": \"{n}\" (it fits the arguments you sent), or another of the available actions",
                    group.tool
                ),
                None => format!(
                    "Call {} again with \"{discriminator}\" set to one of the available actions",
                    group.tool
                ),
            };
            let mut e = ToolError::new(codes::MISSING_DISCRIMINATOR, problem)
                .recovery(recovery)
                .available_actions(values())
                .detail("discriminator", discriminator);
            if let Some(n) = near {
                e = e.detail("closest", n);
            }
            return Err(e);
        }
    };
    if let Some((_, i)) = group.members.iter().find(|(v, _)| *v == requested) {
        return Ok(*i);
    }
    if let Some((shown, length)) = overlong(&requested) {
        return Err(ToolError::new(
            codes::UNKNOWN_ACTION,
            format!(
                "The {} tool has no action '{shown}': the name has {length} characters, and action names have at most {MAX_TOOL_NAME_CHARS}",
                group.tool
            ),
        )
        .recovery(format!(
            "Call {} again with \"{discriminator}\" set to one of the available actions",
            group.tool
        ))
        .available_actions(values())
        .detail("requested", shown)
        .detail("length", length));
    }
    let near = closest(&requested, group.members.iter().map(|(v, _)| v.as_str()));
    let recovery = match near {
        Some(n) => format!(
            "Call {} again with \"{discriminator}\": \"{n}\" (the closest name), or another of the available actions",
            group.tool
        ),
        None => format!(
            "Call {} again with \"{discriminator}\" set to one of the available actions",
            group.tool
        ),
    };
    let mut e = ToolError::new(
        codes::UNKNOWN_ACTION,
        format!("The {} tool has no action '{requested}'", group.tool),
    )
    .recovery(recovery)
    .available_actions(values())
    .detail("requested", requested.as_str());
    if let Some(n) = near {
        e = e.detail("closest", n);
    }
    Err(e)
}

/// The member whose input properties cover most of the keys sent (none when no key matches).
/// The keys sent are looked up by each member's properties, not the other way round: the cost
/// does not grow with the number of keys sent.
fn guess_from_arguments<'g, 'a>(
    group: &'g Group,
    arguments: &JsonObject,
    info_of: impl Fn(usize) -> &'a ActionInfo,
) -> Option<&'g str> {
    if arguments.is_empty() {
        return None;
    }
    // Best: a member that takes every key sent and gets every key it requires; then the most
    // keys it knows, the fewest it does not, the fewest required keys missing.
    group
        .members
        .iter()
        .map(|(v, i)| {
            let schema = &info_of(*i).input_schema;
            let props = schema.get("properties").and_then(Value::as_object);
            let hits = props.map_or(0, |p| {
                p.keys().filter(|k| arguments.contains_key(*k)).count()
            });
            let misses = arguments.len() - hits;
            let unmet = schema
                .get("required")
                .and_then(Value::as_array)
                .map_or(0, |r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .filter(|k| !arguments.contains_key(*k))
                        .count()
                });
            let fits = misses == 0 && unmet == 0;
            ((fits, hits, Reverse(misses), Reverse(unmet)), v.as_str())
        })
        .filter(|((_, hits, _, _), _)| *hits > 0)
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Hints;
    use serde_json::json;
    use std::borrow::Cow;
    use std::sync::Arc;

    fn info(name: &'static str, props: &[&str], hints: Hints) -> ActionInfo {
        let properties: JsonObject = props
            .iter()
            .map(|p| ((*p).to_owned(), json!({"type": "string"})))
            .collect();
        let schema = json!({"type": "object", "properties": properties, "required": props});
        ActionInfo {
            name,
            title: None,
            description: Cow::Borrowed("Does a thing.\nMore text."),
            hints,
            deprecated: None,
            input_schema: Arc::new(schema.as_object().cloned().unwrap_or_default()),
            deprecated_fields: Arc::new([]),
            output_schema: None,
            state: None,
            limits: Default::default(),
            scopes: Vec::new(),
            task: Default::default(),
            icons: &[],
        }
    }

    fn infos() -> Vec<ActionInfo> {
        let ro = Hints {
            read_only: Some(true),
            ..Default::default()
        };
        vec![
            info("billing.get_invoice", &["id"], ro),
            info(
                "billing.send_reminder",
                &["invoice_id", "email"],
                Hints::default(),
            ),
            info("status", &[], ro),
        ]
    }

    #[test]
    fn flat_and_grouped_layouts() {
        let flat = layout(&infos(), &Exposure::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            flat.tool_order,
            ["billing_get_invoice", "billing_send_reminder", "status"]
        );
        let grouped = layout(
            &infos(),
            &Exposure::Grouped {
                discriminator: "action".into(),
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(grouped.tool_order, ["billing", "status"]);
        assert_eq!(grouped.groups[0].members.len(), 2);
        let bad = layout(
            &infos(),
            &Exposure::Flat {
                separator: "/".into(),
            },
        );
        assert!(bad.is_err());
    }

    #[test]
    fn a_missing_discriminator_is_guessed_from_the_arguments() {
        let infos = infos();
        let grouped = layout(
            &infos,
            &Exposure::Grouped {
                discriminator: "action".into(),
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut args = json!({"email": "a@b.c", "invoice_id": "x"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let e = pick_member(&grouped.groups[0], "action", &mut args, |i| &infos[i])
            .err()
            .unwrap_or_else(|| panic!("expected an error"));
        assert_eq!(e.code(), &codes::MISSING_DISCRIMINATOR);
        assert_eq!(e.detail_value("closest"), Some("send_reminder"));
        let mut wrong_type = json!({"action": 3})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let e = pick_member(&grouped.groups[0], "action", &mut wrong_type, |i| &infos[i]).err();
        assert!(e.is_some_and(|e| e.message().contains("to be a string")));
        let mut ok = json!({"action": "get_invoice", "id": "x"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            pick_member(&grouped.groups[0], "action", &mut ok, |i| &infos[i]).ok(),
            Some(0)
        );
        assert!(!ok.contains_key("action"), "the discriminator is removed");
    }

    #[test]
    fn unknown_tool_lists_the_nearest_names_when_there_are_many() {
        let tools: Vec<String> = (0..50).map(|i| format!("tool_{i:02}")).collect();
        let e = unknown_tool("tool_07x", &tools);
        assert_eq!(e.action_list().len(), MAX_LISTED_TOOLS);
        assert!(e.action_list().iter().any(|a| a == "tool_07"));
        assert_eq!(e.detail_value("closest"), Some("tool_07"));
        assert!(valid_tool_name("a.b-c_d") && !valid_tool_name("") && !valid_tool_name("a b"));
    }

    #[test]
    fn a_name_longer_than_mcp_allows_is_cut_and_not_searched() {
        let tools: Vec<String> = (0..50).map(|i| format!("tool_{i:02}")).collect();
        let at_limit = format!("tool_07{}", "x".repeat(MAX_TOOL_NAME_CHARS - 7));
        assert!(
            unknown_tool(&at_limit, &tools)
                .detail_value("length")
                .is_none()
        );
        let name = "é".repeat(1 << 20);
        let e = unknown_tool(&name, &tools);
        assert_eq!(e.code(), &codes::UNKNOWN_ACTION);
        let shown = format!("{}...", "é".repeat(SHOWN_NAME_CHARS));
        assert_eq!(e.detail_value("requested"), Some(shown.as_str()));
        assert_eq!(e.detail_value("length"), Some("1048576"));
        assert_eq!(e.detail_value("closest"), None);
        assert_eq!(e.action_list(), &tools[..MAX_LISTED_TOOLS]);
        assert!(e.render().len() < 2048, "{}", e.render().len());
        let over = "a".repeat(MAX_TOOL_NAME_CHARS + 1);
        assert_eq!(
            unknown_tool(&over, &tools).detail_value("length"),
            Some("129")
        );
        assert_eq!(loggable(&name).chars().count(), MAX_TOOL_NAME_CHARS);
        assert_eq!(loggable("short"), "short");
    }

    #[test]
    fn a_discriminator_too_long_or_too_large_is_not_echoed() {
        let infos = infos();
        let grouped = layout(
            &infos,
            &Exposure::Grouped {
                discriminator: "action".into(),
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut long = JsonObject::new();
        long.insert(
            "action".into(),
            Value::String("get_invoicx".repeat(100_000)),
        );
        let e = pick_member(&grouped.groups[0], "action", &mut long, |i| &infos[i])
            .err()
            .unwrap_or_else(|| panic!("expected an error"));
        assert_eq!(e.code(), &codes::UNKNOWN_ACTION);
        assert_eq!(e.detail_value("closest"), None);
        assert_eq!(e.detail_value("length"), Some("1100000"));
        assert!(e.render().len() < 2048, "{}", e.render().len());
        let mut typo = json!({"action": "get_invoicx"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let e = pick_member(&grouped.groups[0], "action", &mut typo, |i| &infos[i]).err();
        assert_eq!(
            e.as_ref().and_then(|e| e.detail_value("closest")),
            Some("get_invoice")
        );
        let mut object = JsonObject::new();
        let big: JsonObject = (0..100_000)
            .map(|i| (format!("k{i}"), Value::from(i)))
            .collect();
        object.insert("action".into(), Value::Object(big));
        let e = pick_member(&grouped.groups[0], "action", &mut object, |i| &infos[i])
            .err()
            .unwrap_or_else(|| panic!("expected an error"));
        assert_eq!(e.code(), &codes::MISSING_DISCRIMINATOR);
        let (_, shown) = e.message().split_once("it was ").unwrap_or_default();
        assert!(
            shown.starts_with("{\"k") && shown.ends_with("..."),
            "{shown}"
        );
        assert_eq!(shown.chars().count(), 50);
        assert!(e.render().len() < 2048, "{}", e.render().len());
    }
}
