//! The diff engine: every change between two sets of contracts, classified.
//!
//! [`metadata`] compares what an agent reads about an action (tool name, description,
//! deprecation, hints) from a table; [`walk`] walks the two input schemas side by side,
//! following `$ref`s through [`crate::schema`]; [`keywords`] says, one row per JSON Schema
//! keyword, what a change of it means and in which words.

mod delta;
mod engine;
mod keywords;
mod metadata;
mod walk;

pub use delta::{Delta, DeltaSeverity};
pub use engine::diff;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::delta::fill;
    use super::*;
    use crate::contract::ToolContract;

    /// A schema whose field `line` points at a definition named `name` through `reference`.
    fn behind_ref(name: &str, reference: &str, max: u64) -> ToolContract {
        ToolContract::new(
            "a",
            "a",
            "",
            json!({
                "type": "object",
                "properties": {"line": {"$ref": reference}},
                "$defs": {name: {"type": "object", "properties": {"sku": {"type": "string", "maxLength": max}}}}
            }),
        )
    }

    #[test]
    fn changes_behind_escaped_refs_are_found() {
        for (name, reference) in [
            ("Line Item", "#/$defs/Line%20Item"),
            ("a/b", "#/$defs/a~1b"),
            ("m~n", "#/$defs/m~0n"),
            ("100%", "#/$defs/100%25"),
        ] {
            let d = diff(
                &[behind_ref(name, reference, 10)],
                &[behind_ref(name, reference, 5)],
            );
            assert_eq!(d.len(), 1, "{reference}: {d:?}");
            assert_eq!(
                d[0].to_string(),
                "BREAKING actions.a.input.line.sku: maxLength of field 'line.sku' was lowered (tightened). (before: 10, after: 5)",
                "{reference}"
            );
        }
    }

    #[test]
    fn fill_replaces_known_names_once() {
        assert_eq!(
            fill(
                "'{name}' is now {after} {other}",
                &[("name", "{after}"), ("after", "x")]
            ),
            "'{after}' is now x {other}"
        );
        assert_eq!(fill("{", &[]), "{");
    }
}
