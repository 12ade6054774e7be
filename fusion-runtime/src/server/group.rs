//! A grouped tool as `tools/list` shows it: one description, one input schema and one set of
//! hints standing for all its member actions.
//!
//! The schema shown is the schema enforced. A field every member that has it defines the same
//! way — and that no member lets through unchecked as an unknown key — is shown once, in the
//! flat `properties` (what grouping saves the model). A field the members define differently
//! is shown per member. Each member gets one `allOf` entry tied to the discriminator:
//!
//! ```json
//! {"if": {"properties": {"action": {"const": "get"}}},
//!  "then": {"properties": {"action": true, "id": true, "key": {"type": "integer"}},
//!           "required": ["id"], "additionalProperties": false}}
//! ```
//!
//! holding what that member alone decides: its required keys, its unknown-key rule and its
//! own schema of each field it defines differently. A member may not have a field named like
//! the discriminator (the router takes that key away before the member sees it), and two
//! members may not define one `$defs` name differently; both refuse to build.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::routing::Group;
use crate::action::{ActionInfo, Hints};
use crate::input::JsonObject;

/// Keywords of a member's root schema the grouped schema states once, or that say nothing
/// about which arguments pass.
const ROOT_ONLY: [&str; 7] = [
    "$schema",
    "$defs",
    "definitions",
    "title",
    "description",
    "type",
    "properties",
];

/// The description, input schema and hints of a grouped tool, or why the members cannot share
/// one tool.
pub(crate) fn group_tool(
    group: &Group,
    discriminator: &str,
    infos: &[ActionInfo],
) -> Result<(String, Arc<JsonObject>, Hints), String> {
    let members: Vec<(&str, &ActionInfo)> = group
        .members
        .iter()
        .map(|(v, i)| (v.as_str(), &infos[*i]))
        .collect();
    let description = describe(&group.tool, discriminator, &members);
    let hints = Hints::merge(members.iter().map(|(_, info)| info.hints));

    let mut schema_uri = None;
    let mut defs = JsonObject::new();
    let mut def_owner: BTreeMap<String, &str> = BTreeMap::new();
    // Field → its schema in each member that defines it, in member order.
    let mut fields: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (_, info) in &members {
        let schema = &info.input_schema;
        if schema_uri.is_none() {
            schema_uri = schema.get("$schema").cloned();
        }
        let props = properties(schema);
        if props.contains_key(discriminator) {
            return Err(format!(
                "action `{}` has a field `{discriminator}`, the name of the `{}` tool's discriminator: rename the field or group with another discriminator (`grouped_by`)",
                info.name, group.tool
            ));
        }
        for (k, v) in props {
            fields.entry(k.as_str()).or_default().push(v);
        }
        for key in ["$defs", "definitions"] {
            let Some(Value::Object(d)) = schema.get(key) else {
                continue;
            };
            for (name, def) in d {
                match defs.get(name) {
                    Some(seen) if seen != def => {
                        let first = def_owner.get(name).copied().unwrap_or("another action");
                        return Err(format!(
                            "actions `{first}` and `{}` define the schema `{name}` differently, and the `{}` tool can show only one: rename one of the types",
                            info.name, group.tool
                        ));
                    }
                    Some(_) => {}
                    None => {
                        defs.insert(name.clone(), def.clone());
                        def_owner.insert(name.clone(), info.name);
                    }
                }
            }
        }
    }
    // A member that lets unknown keys through decides nothing about the fields it lacks: a
    // field shown once would be checked on its calls too.
    let all_strict = members
        .iter()
        .all(|(_, info)| info.input_schema.get("additionalProperties") == Some(&json!(false)));
    let shared = |field: &str| -> Option<&Value> {
        let defs = fields.get(field)?;
        let first = *defs.first()?;
        let agree = defs.iter().all(|d| *d == first);
        let everyone = defs.len() == members.len();
        (agree && (all_strict || everyone)).then_some(first)
    };

    let mut shown = JsonObject::new();
    let values: Vec<Value> = members.iter().map(|(v, _)| json!(v)).collect();
    shown.insert(
        discriminator.to_owned(),
        json!({"type": "string", "enum": values, "description": "The action to run"}),
    );
    for (field, defs) in &fields {
        let value = match shared(field) {
            Some(schema) => schema.clone(),
            None => {
                let owners: Vec<&str> = members
                    .iter()
                    .filter(|(_, info)| properties(&info.input_schema).contains_key(*field))
                    .map(|(v, _)| *v)
                    .collect();
                let mut note = format!(
                    "Differs by {discriminator} ({}): see the allOf entry of the action you call",
                    owners.join(", ")
                );
                if let Some(Value::String(d)) = defs.first().and_then(|d| d.get("description")) {
                    note = format!("{d} {note}");
                }
                json!({ "description": note })
            }
        };
        shown.insert((*field).to_owned(), value);
    }

    let mut branches = Vec::with_capacity(members.len());
    for (value, info) in &members {
        let schema = &info.input_schema;
        let strict = schema.contains_key("additionalProperties");
        let mut props = JsonObject::new();
        props.insert(discriminator.to_owned(), Value::Bool(true));
        for (k, v) in properties(schema) {
            if shared(k).is_none() {
                props.insert(k.clone(), v.clone());
            } else if strict {
                props.insert(k.clone(), Value::Bool(true));
            }
        }
        let mut then = JsonObject::new();
        then.insert("properties".into(), Value::Object(props));
        for (k, v) in schema.iter() {
            if !ROOT_ONLY.contains(&k.as_str()) {
                then.insert(k.clone(), v.clone());
            }
        }
        branches.push(json!({
            "if": {"properties": {discriminator: {"const": value}}},
            "then": then,
        }));
    }

    let mut out = JsonObject::new();
    if let Some(uri) = schema_uri {
        out.insert("$schema".into(), uri);
    }
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), Value::Object(shown));
    out.insert("required".into(), json!([discriminator]));
    out.insert("allOf".into(), Value::Array(branches));
    if !defs.is_empty() {
        out.insert("$defs".into(), Value::Object(defs));
    }
    Ok((description, Arc::new(out), hints))
}

fn properties(schema: &JsonObject) -> &JsonObject {
    static EMPTY: std::sync::OnceLock<JsonObject> = std::sync::OnceLock::new();
    match schema.get("properties") {
        Some(Value::Object(p)) => p,
        _ => EMPTY.get_or_init(JsonObject::new),
    }
}

fn describe(tool: &str, discriminator: &str, members: &[(&str, &ActionInfo)]) -> String {
    let mut description = format!(
        "{tool} actions. Set '{discriminator}' to the action to run, and give that action's fields:"
    );
    for (value, info) in members {
        let summary = info.description.lines().next().unwrap_or("").trim();
        description.push_str(&format!("\n- {value}: {summary}"));
        if let Some(why) = &info.deprecated {
            description.push_str(&format!(" (deprecated: {why})"));
        }
        let schema = &info.input_schema;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields: Vec<String> = properties(schema)
            .keys()
            .map(|k| {
                if required.contains(&k.as_str()) {
                    format!("{k} (required)")
                } else {
                    k.clone()
                }
            })
            .collect();
        if !fields.is_empty() {
            description.push_str(&format!(" Fields: {}.", fields.join(", ")));
        }
    }
    description
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::action::Exposure;
    use crate::server::routing::layout;

    fn info(name: &'static str, schema: Value, hints: Hints) -> ActionInfo {
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

    fn strict(props: Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    }

    fn grouped(infos: &[ActionInfo]) -> Result<(String, Arc<JsonObject>, Hints), String> {
        let exposure = Exposure::Grouped {
            discriminator: "op".into(),
        };
        let l = layout(infos, &exposure)?;
        group_tool(&l.groups[0], "op", infos)
    }

    #[test]
    fn agreeing_fields_are_shown_once_and_differing_ones_per_member() {
        let ro = Hints {
            read_only: Some(true),
            ..Hints::default()
        };
        let infos = [
            info(
                "billing.get_invoice",
                strict(
                    json!({"id": {"type": "string"}, "note": {"type": "string"}}),
                    &["id"],
                ),
                ro,
            ),
            info(
                "billing.get_line",
                strict(
                    json!({"id": {"type": "integer"}, "note": {"type": "string"}}),
                    &["id", "note"],
                ),
                Hints::default(),
            ),
        ];
        let (description, schema, hints) = grouped(&infos).unwrap_or_else(|e| panic!("{e}"));
        assert!(description.contains("- get_invoice: Does a thing. Fields: id (required), note."));
        assert_eq!(schema["required"], json!(["op"]));
        assert_eq!(schema["properties"]["note"], json!({"type": "string"}));
        assert!(schema["properties"]["id"].get("type").is_none());
        assert_eq!(
            schema["allOf"][1],
            json!({
                "if": {"properties": {"op": {"const": "get_line"}}},
                "then": {
                    "properties": {"op": true, "id": {"type": "integer"}, "note": true},
                    "required": ["id", "note"],
                    "additionalProperties": false
                }
            })
        );
        assert_eq!(hints.read_only, Some(false), "one member writes");
    }

    #[test]
    fn a_member_field_named_like_the_discriminator_or_a_clashing_def_refuses_to_build() {
        let infos = [info(
            "billing.get_invoice",
            strict(json!({"op": {"type": "string"}}), &[]),
            Hints::default(),
        )];
        let e = grouped(&infos).err().unwrap_or_default();
        assert!(e.contains("`billing.get_invoice` has a field `op`"), "{e}");

        let with_def = |name, ty| {
            let mut s = strict(json!({"x": {"$ref": "#/$defs/Item"}}), &[]);
            s["$defs"] = json!({"Item": {"type": ty}});
            info(name, s, Hints::default())
        };
        let infos = [
            with_def("billing.a", "string"),
            with_def("billing.b", "integer"),
        ];
        let e = grouped(&infos).err().unwrap_or_default();
        assert!(
            e.contains("actions `billing.a` and `billing.b` define the schema `Item` differently"),
            "{e}"
        );
    }

    #[test]
    fn hints_merge_with_mcp_defaults() {
        let merged = Hints::merge([Hints::default(), Hints::default()]);
        assert_eq!(
            merged,
            Hints {
                read_only: Some(false),
                destructive: Some(true),
                idempotent: Some(false),
                open_world: Some(true),
            }
        );
        let safe = Hints {
            read_only: Some(true),
            destructive: None,
            idempotent: Some(true),
            open_world: Some(false),
        };
        let merged = Hints::merge([safe, safe]);
        assert_eq!(
            merged.destructive,
            Some(false),
            "read-only members destroy nothing"
        );
        assert_eq!(merged.read_only, Some(true));
        assert_eq!(merged.open_world, Some(false));
    }
}
