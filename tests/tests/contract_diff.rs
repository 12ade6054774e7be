//! The diff engine's classification rules, one table per severity and a row (at least) per rule.

use fusion_runtime::contract::{Delta, DeltaSeverity, Hints, ToolContract, diff};
use serde_json::{Value, json};

use DeltaSeverity::{Breaking, Cosmetic, Risky, Safe};

const A: &str = "billing.get_invoice";

fn contract(action: &str, schema: Value) -> ToolContract {
    ToolContract::new(
        action,
        action.replace('.', "_"),
        "Fetch one invoice",
        schema,
    )
}

fn base_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id"],
        "properties": {
            "id": {"type": "string", "description": "The invoice id", "minLength": 3, "maxLength": 64, "pattern": "^inv_"},
            "status": {"type": "string", "enum": ["open", "paid", "void"]},
            "amount": {"type": "number", "minimum": 0, "maximum": 1000, "multipleOf": 10, "exclusiveMaximum": 5000, "exclusiveMinimum": -1},
            "email": {"type": "string", "format": "email"},
            "note": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10}
        }
    })
}

fn base() -> ToolContract {
    contract(A, base_schema())
}

/// The base contract with its input schema changed by `f`.
fn with_schema(f: impl FnOnce(&mut Value)) -> ToolContract {
    let mut c = base();
    f(&mut c.input_schema);
    c
}

fn with(f: impl FnOnce(&mut ToolContract)) -> ToolContract {
    let mut c = base();
    f(&mut c);
    c
}

struct Row {
    rule: &'static str,
    old: Vec<ToolContract>,
    new: Vec<ToolContract>,
    /// Every delta expected: severity, path, words the description must contain.
    expect: Vec<(DeltaSeverity, &'static str, &'static [&'static str])>,
}

fn row(
    rule: &'static str,
    old: Vec<ToolContract>,
    new: Vec<ToolContract>,
    expect: Vec<(DeltaSeverity, &'static str, &'static [&'static str])>,
) -> Row {
    Row {
        rule,
        old,
        new,
        expect,
    }
}

fn one(
    rule: &'static str,
    new: ToolContract,
    severity: DeltaSeverity,
    path: &'static str,
    words: &'static [&'static str],
) -> Row {
    row(rule, vec![base()], vec![new], vec![(severity, path, words)])
}

fn run(rows: Vec<Row>) {
    for r in rows {
        let got = diff(&r.old, &r.new);
        let show = |d: &[Delta]| {
            d.iter()
                .map(|d| format!("  {d}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            got.len(),
            r.expect.len(),
            "rule `{}`: expected {} delta(s), got:\n{}",
            r.rule,
            r.expect.len(),
            show(&got)
        );
        for (severity, path, words) in &r.expect {
            let found = got.iter().any(|d| {
                d.severity == *severity
                    && d.path == *path
                    && words
                        .iter()
                        .all(|w| d.description.to_lowercase().contains(&w.to_lowercase()))
            });
            assert!(
                found,
                "rule `{}`: no {severity} delta at `{path}` mentioning {words:?}; got:\n{}",
                r.rule,
                show(&got)
            );
        }
        // The diff of a set with itself is always empty.
        assert!(diff(&r.new, &r.new).is_empty(), "rule `{}`", r.rule);
    }
}

#[test]
fn breaking_rules() {
    let other = contract(
        "billing.void_invoice",
        json!({"type": "object", "properties": {"reason": {"type": "string"}}}),
    );
    run(vec![
        row(
            "action removed",
            vec![base(), other.clone()],
            vec![base()],
            vec![(Breaking, "actions.billing.void_invoice", &["'billing.void_invoice'", "removed"])],
        ),
        row(
            "action renamed (removed + added with an identical input schema)",
            vec![base()],
            vec![contract("billing.fetch_invoice", base_schema())],
            vec![(Breaking, "actions.billing.fetch_invoice", &["'billing.get_invoice'", "renamed", "'billing.fetch_invoice'"])],
        ),
        one(
            "exposed tool name changed",
            with(|c| c.tool = "get_invoice".into()),
            Breaking,
            "actions.billing.get_invoice.tool",
            &["renamed", "'get_invoice'"],
        ),
        one(
            "required field added",
            with_schema(|s| {
                s["properties"]["customer"] = json!({"type": "string"});
                s["required"] = json!(["id", "customer"]);
            }),
            Breaking,
            "actions.billing.get_invoice.input.customer",
            &["new required field"],
        ),
        one(
            "field removed",
            with_schema(|s| {
                s["properties"].as_object_mut().map(|p| p.remove("note"));
            }),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["'note'", "removed"],
        ),
        one(
            "field renamed (the spec's example)",
            with_schema(|s| {
                let id = s["properties"]["id"].take();
                s["properties"].as_object_mut().map(|p| p.remove("id"));
                s["properties"]["invoice_id"] = id;
                s["required"] = json!(["invoice_id"]);
            }),
            Breaking,
            "actions.billing.get_invoice.input.id",
            &["field 'id' was renamed to 'invoice_id'"],
        ),
        row(
            "field renamed and made required",
            vec![base()],
            vec![with_schema(|s| {
                let note = s["properties"]["note"].take();
                s["properties"].as_object_mut().map(|p| p.remove("note"));
                s["properties"]["memo"] = note;
                s["required"] = json!(["id", "memo"]);
            })],
            vec![
                (Breaking, "actions.billing.get_invoice.input.note", &["renamed to 'memo'"]),
                (Breaking, "actions.billing.get_invoice.input.memo", &["formerly 'note'", "now required"]),
            ],
        ),
        row(
            "field renamed and made optional",
            vec![base()],
            vec![with_schema(|s| {
                let id = s["properties"]["id"].take();
                s["properties"].as_object_mut().map(|p| p.remove("id"));
                s["properties"]["invoice_id"] = id;
                s["required"] = json!([]);
            })],
            vec![
                (Breaking, "actions.billing.get_invoice.input.id", &["renamed to 'invoice_id'"]),
                (Safe, "actions.billing.get_invoice.input.invoice_id", &["formerly 'id'", "now optional"]),
            ],
        ),
        one(
            "type changed",
            with_schema(|s| s["properties"]["note"]["type"] = json!("integer")),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["type", "changed"],
        ),
        one(
            "type narrowed (a type dropped from a list)",
            with(|c| c.input_schema = json!({"type": "object", "properties": {"x": {"type": "string"}}})),
            Breaking,
            "actions.billing.get_invoice.input.x",
            &["type"],
        )
        .from(contract(A, json!({"type": "object", "properties": {"x": {"type": ["string", "null"]}}}))),
        one(
            "enum value removed",
            with_schema(|s| s["properties"]["status"]["enum"] = json!(["open", "paid"])),
            Breaking,
            "actions.billing.get_invoice.input.status",
            &["no longer accepts 'void'"],
        ),
        one(
            "enum added to a free field",
            with_schema(|s| s["properties"]["note"]["enum"] = json!(["a", "b"])),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["restricted to a list"],
        ),
        one(
            "const added",
            with_schema(|s| s["properties"]["note"]["const"] = json!("v2")),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["accepts only one value", "const added"],
        ),
        one(
            "maxLength lowered",
            with_schema(|s| s["properties"]["id"]["maxLength"] = json!(32)),
            Breaking,
            "actions.billing.get_invoice.input.id",
            &["maxLength", "lowered", "tightened"],
        ),
        one(
            "minLength raised",
            with_schema(|s| s["properties"]["id"]["minLength"] = json!(5)),
            Breaking,
            "actions.billing.get_invoice.input.id",
            &["minLength", "raised", "tightened"],
        ),
        one(
            "maximum lowered",
            with_schema(|s| s["properties"]["amount"]["maximum"] = json!(500)),
            Breaking,
            "actions.billing.get_invoice.input.amount",
            &["maximum", "lowered"],
        ),
        one(
            "minimum raised",
            with_schema(|s| s["properties"]["amount"]["minimum"] = json!(1)),
            Breaking,
            "actions.billing.get_invoice.input.amount",
            &["minimum", "raised"],
        ),
        one(
            "exclusiveMaximum lowered",
            with_schema(|s| s["properties"]["amount"]["exclusiveMaximum"] = json!(4000)),
            Breaking,
            "actions.billing.get_invoice.input.amount",
            &["exclusiveMaximum", "tightened"],
        ),
        one(
            "exclusiveMinimum raised",
            with_schema(|s| s["properties"]["amount"]["exclusiveMinimum"] = json!(0)),
            Breaking,
            "actions.billing.get_invoice.input.amount",
            &["exclusiveMinimum", "tightened"],
        ),
        one(
            "maxItems lowered",
            with_schema(|s| s["properties"]["tags"]["maxItems"] = json!(3)),
            Breaking,
            "actions.billing.get_invoice.input.tags",
            &["maxItems", "tightened"],
        ),
        one(
            "minItems raised",
            with_schema(|s| s["properties"]["tags"]["minItems"] = json!(2)),
            Breaking,
            "actions.billing.get_invoice.input.tags",
            &["minItems", "tightened"],
        ),
        one(
            "bound added",
            with_schema(|s| s["properties"]["note"]["maxLength"] = json!(200)),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["maxLength", "added"],
        ),
        one(
            "multipleOf changed (old multiples no longer all valid)",
            with_schema(|s| s["properties"]["amount"]["multipleOf"] = json!(3)),
            Breaking,
            "actions.billing.get_invoice.input.amount",
            &["multipleOf changed"],
        ),
        one(
            "multipleOf added",
            with_schema(|s| s["properties"]["note"] = json!({"type": "number", "multipleOf": 5})),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["type"],
        )
        .also(Breaking, "actions.billing.get_invoice.input.note", &["multipleOf added"]),
        one(
            "pattern changed",
            with_schema(|s| s["properties"]["id"]["pattern"] = json!("^INV-")),
            Breaking,
            "actions.billing.get_invoice.input.id",
            &["different pattern", "pattern changed"],
        ),
        one(
            "pattern added",
            with_schema(|s| s["properties"]["note"]["pattern"] = json!("^[a-z]+$")),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["now must match a pattern"],
        ),
        one(
            "format changed",
            with_schema(|s| s["properties"]["email"]["format"] = json!("uri")),
            Breaking,
            "actions.billing.get_invoice.input.email",
            &["different format", "format changed"],
        ),
        one(
            "format added",
            with_schema(|s| s["properties"]["note"]["format"] = json!("date")),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["now must have a format"],
        ),
        one(
            "unknown keys newly rejected",
            with_schema(|s| s["additionalProperties"] = json!(false)),
            Breaking,
            "actions.billing.get_invoice.input",
            &["rejects unknown keys"],
        )
        .from(with_schema(|s| {
            s.as_object_mut().map(|m| m.remove("additionalProperties"));
        })),
        one(
            "optional field became required",
            with_schema(|s| s["required"] = json!(["id", "note"])),
            Breaking,
            "actions.billing.get_invoice.input.note",
            &["was optional and is now required"],
        ),
        one(
            "uniqueItems switched on",
            with_schema(|s| s["properties"]["tags"]["uniqueItems"] = json!(true)),
            Breaking,
            "actions.billing.get_invoice.input.tags",
            &["unique items"],
        ),
        one(
            "array items: a nested constraint tightened",
            with_schema(|s| s["properties"]["tags"]["items"]["maxLength"] = json!(8)),
            Breaking,
            "actions.billing.get_invoice.input.tags[]",
            &["maxLength", "added"],
        ),
        one(
            "anyOf: an allowed shape removed",
            contract(A, json!({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}]}}})),
            Breaking,
            "actions.billing.get_invoice.input.x",
            &["no longer accepts some of the shapes"],
        )
        .from(contract(A, json!({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}))),
    ]);
}

#[test]
fn nested_objects_and_local_refs_are_followed() {
    let old = contract(
        A,
        json!({
            "type": "object",
            "properties": {
                "address": {"$ref": "#/$defs/Address", "description": "Where to send it"},
                "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}
            },
            "$defs": {
                "Address": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 80}}, "required": ["city"]},
                "Line": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}
            }
        }),
    );
    let mut new = old.clone();
    new.input_schema["$defs"]["Address"]["properties"]["city"]["maxLength"] = json!(40);
    new.input_schema["$defs"]["Line"]["properties"]
        .as_object_mut()
        .map(|p| p.remove("sku"));
    let got = diff(std::slice::from_ref(&old), &[new]);
    let summary: Vec<(DeltaSeverity, &str)> =
        got.iter().map(|d| (d.severity, d.path.as_str())).collect();
    assert_eq!(
        summary,
        [
            (Breaking, "actions.billing.get_invoice.input.address.city"),
            (Breaking, "actions.billing.get_invoice.input.lines[].sku"),
        ],
        "{got:#?}"
    );

    // The shape schemars gives an `Option<Struct>`: a nullable `anyOf` around a `$ref`.
    let nullable = |max: u64| {
        contract(
            A,
            json!({
                "type": "object",
                "properties": {"billing": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}},
                "$defs": {"Address": {"type": "object", "properties": {"zip": {"type": "string", "maxLength": max}}}}
            }),
        )
    };
    let got = diff(&[nullable(10)], &[nullable(12)]);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].path, "actions.billing.get_invoice.input.billing.zip");
    assert_eq!(got[0].severity, Safe);

    // A recursive schema terminates and still reports a change below the recursion.
    let tree = |max: u64| {
        contract(
            A,
            json!({
                "$ref": "#/$defs/Node",
                "$defs": {"Node": {"type": "object", "properties": {
                    "name": {"type": "string", "maxLength": max},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    "left": {"$ref": "#/$defs/Node"},
                    "right": {"$ref": "#/$defs/Node"}
                }}}
            }),
        )
    };
    let got = diff(&[tree(10)], &[tree(5)]);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].path, "actions.billing.get_invoice.input.name");
    assert_eq!(got[0].severity, Breaking);
    assert!(diff(&[tree(10)], &[tree(10)]).is_empty());
}

#[test]
fn risky_rules() {
    let hints = |a: Hints| with(|c| c.annotations = a);
    let read_only = Hints {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    };
    let from_read_only = |new: Hints| row("hint", vec![hints(read_only)], vec![hints(new)], vec![]);
    let mut rows = vec![
        from_read_only(Hints {
            read_only: Some(false),
            ..read_only
        })
        .named("no longer read-only")
        .expect(
            Risky,
            "actions.billing.get_invoice.annotations.readOnlyHint",
            &["no longer read-only"],
        ),
        from_read_only(Hints {
            destructive: Some(true),
            ..read_only
        })
        .named("now destructive")
        .expect(
            Risky,
            "actions.billing.get_invoice.annotations.destructiveHint",
            &["destructive"],
        ),
        from_read_only(Hints {
            destructive: None,
            ..read_only
        })
        .named("destructive by MCP default once the hint is dropped")
        .expect(
            Risky,
            "actions.billing.get_invoice.annotations.destructiveHint",
            &["destructive"],
        ),
        from_read_only(Hints {
            idempotent: Some(false),
            ..read_only
        })
        .named("no longer idempotent")
        .expect(
            Risky,
            "actions.billing.get_invoice.annotations.idempotentHint",
            &["no longer idempotent"],
        ),
        from_read_only(Hints {
            open_world: Some(true),
            ..read_only
        })
        .named("now open world")
        .expect(
            Risky,
            "actions.billing.get_invoice.annotations.openWorldHint",
            &["external"],
        ),
    ];
    rows.extend([
        one(
            "action deprecated",
            with(|c| c.deprecated = Some("Use billing.fetch_invoice".into())),
            Risky,
            "actions.billing.get_invoice.deprecated",
            &["now deprecated", "billing.fetch_invoice"],
        ),
        one(
            "field description changed, constraints unchanged",
            with_schema(|s| s["properties"]["id"]["description"] = json!("The customer id")),
            Risky,
            "actions.billing.get_invoice.input.id",
            &["description", "constraints did not"],
        ),
        one(
            "field deprecated",
            with_schema(|s| s["properties"]["note"]["deprecated"] = json!(true)),
            Risky,
            "actions.billing.get_invoice.input.note",
            &["now deprecated"],
        ),
        one(
            "default changed",
            with_schema(|s| s["properties"]["status"]["default"] = json!("open")),
            Risky,
            "actions.billing.get_invoice.input.status",
            &["default"],
        ),
        one(
            "a keyword the engine does not classify",
            with_schema(|s| s["properties"]["note"]["not"] = json!({"const": "x"})),
            Risky,
            "actions.billing.get_invoice.input.note",
            &["'not'", "does not classify"],
        ),
    ]);
    run(rows);
}

#[test]
fn safe_rules() {
    let deprecated = with(|c| c.deprecated = Some("gone soon".into()));
    run(vec![
        one(
            "optional field added",
            with_schema(|s| s["properties"]["memo"] = json!({"type": "string"})),
            Safe,
            "actions.billing.get_invoice.input.memo",
            &["new optional field 'memo'"],
        ),
        row(
            "action added",
            vec![base()],
            vec![
                base(),
                contract("billing.list_invoices", json!({"type": "object"})),
            ],
            vec![(
                Safe,
                "actions.billing.list_invoices",
                &["'billing.list_invoices'", "added"],
            )],
        ),
        one(
            "maxLength raised",
            with_schema(|s| s["properties"]["id"]["maxLength"] = json!(128)),
            Safe,
            "actions.billing.get_invoice.input.id",
            &["maxLength", "raised", "loosened"],
        ),
        one(
            "minimum lowered",
            with_schema(|s| s["properties"]["amount"]["minimum"] = json!(-10)),
            Safe,
            "actions.billing.get_invoice.input.amount",
            &["minimum", "lowered", "loosened"],
        ),
        one(
            "bound removed",
            with_schema(|s| {
                s["properties"]["tags"]
                    .as_object_mut()
                    .map(|m| m.remove("maxItems"));
            }),
            Safe,
            "actions.billing.get_invoice.input.tags",
            &["maxItems", "removed"],
        ),
        one(
            "pattern removed",
            with_schema(|s| {
                s["properties"]["id"]
                    .as_object_mut()
                    .map(|m| m.remove("pattern"));
            }),
            Safe,
            "actions.billing.get_invoice.input.id",
            &["no longer must match a pattern"],
        ),
        one(
            "multipleOf loosened (a divisor of the old one)",
            with_schema(|s| s["properties"]["amount"]["multipleOf"] = json!(5)),
            Safe,
            "actions.billing.get_invoice.input.amount",
            &["multipleOf loosened"],
        ),
        one(
            "enum value added",
            with_schema(|s| {
                s["properties"]["status"]["enum"] = json!(["open", "paid", "void", "draft"])
            }),
            Safe,
            "actions.billing.get_invoice.input.status",
            &["now also accepts 'draft'"],
        ),
        one(
            "required field became optional",
            with_schema(|s| s["required"] = json!([])),
            Safe,
            "actions.billing.get_invoice.input.id",
            &["was required and is now optional"],
        ),
        one(
            "unknown keys accepted again",
            with_schema(|s| s["additionalProperties"] = json!(true)),
            Safe,
            "actions.billing.get_invoice.input",
            &["accepts unknown keys"],
        ),
        one(
            "type widened (null allowed, integer to number)",
            with_schema(|s| s["properties"]["note"]["type"] = json!(["string", "null"])),
            Safe,
            "actions.billing.get_invoice.input.note",
            &["more types"],
        ),
        one(
            "hints toward safe",
            with(|c| c.annotations.read_only = Some(true)),
            Safe,
            "actions.billing.get_invoice.annotations.readOnlyHint",
            &["now read-only"],
        ),
        row(
            "deprecation lifted",
            vec![deprecated],
            vec![base()],
            vec![(
                Safe,
                "actions.billing.get_invoice.deprecated",
                &["no longer deprecated"],
            )],
        ),
    ]);
}

#[test]
fn cosmetic_rules() {
    run(vec![
        one(
            "tool description reworded",
            with(|c| c.description = "Fetch a single invoice by its id".into()),
            Cosmetic,
            "actions.billing.get_invoice.description",
            &["reworded"],
        ),
        one(
            "a hint written at its MCP default",
            with(|c| c.annotations.destructive = Some(true)),
            Cosmetic,
            "actions.billing.get_invoice.annotations.destructiveHint",
            &["effective value stays true"],
        ),
        one(
            "a number written differently",
            with_schema(|s| s["properties"]["id"]["maxLength"] = json!(64.0)),
            Cosmetic,
            "actions.billing.get_invoice",
            &["without a change in meaning"],
        ),
        one(
            "field description changed together with a constraint",
            with_schema(|s| {
                s["properties"]["id"]["description"] = json!("At most 32 characters");
                s["properties"]["id"]["maxLength"] = json!(32);
            }),
            Cosmetic,
            "actions.billing.get_invoice.input.id",
            &["description", "wording"],
        )
        .also(
            Breaking,
            "actions.billing.get_invoice.input.id",
            &["maxLength", "lowered"],
        ),
        one(
            "title changed",
            with_schema(|s| s["properties"]["note"]["title"] = json!("Note")),
            Cosmetic,
            "actions.billing.get_invoice.input.note",
            &["'title'"],
        ),
    ]);
    // Reordering `required` alone is cosmetic.
    let a = contract(
        A,
        json!({"type": "object", "required": ["a", "b"], "properties": {"a": {}, "b": {}}}),
    );
    let b = contract(
        A,
        json!({"type": "object", "required": ["b", "a"], "properties": {"a": {}, "b": {}}}),
    );
    let got = diff(&[a], &[b]);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].severity, Cosmetic);
    assert!(got[0].description.contains("reordered"));
}

#[test]
fn identical_or_reordered_contracts_have_no_delta() {
    let mut reordered = serde_json::Map::new();
    let schema = base_schema();
    let obj = schema.as_object().expect("object");
    for (k, v) in obj.iter().rev() {
        reordered.insert(k.clone(), v.clone());
    }
    let a = [base(), contract("z.last", json!({}))];
    let b = [
        contract("z.last", json!({})),
        contract(A, Value::Object(reordered)),
    ];
    assert!(diff(&a, &b).is_empty());
}

#[test]
fn output_is_sorted_by_action_then_path_then_severity() {
    let old = [
        contract(
            "b.second",
            json!({"type": "object", "properties": {"x": {"type": "string", "description": "d"}}}),
        ),
        contract(
            "a.first",
            json!({"type": "object", "properties": {"y": {"type": "string"}}}),
        ),
    ];
    let new = [
        contract(
            "a.first",
            json!({"type": "object", "properties": {"y": {"type": "integer"}, "z": {}}}),
        ),
        contract(
            "b.second",
            json!({"type": "object", "properties": {"x": {"type": "string", "maxLength": 3, "description": "e"}}}),
        ),
        contract("c.third", json!({})),
    ];
    let got = diff(&old, &new);
    let keys: Vec<(Option<&str>, &str, DeltaSeverity)> = got
        .iter()
        .map(|d| (d.action.as_deref(), d.path.as_str(), d.severity))
        .collect();
    assert_eq!(
        keys,
        [
            (Some("a.first"), "actions.a.first.input.y", Breaking),
            (Some("a.first"), "actions.a.first.input.z", Safe),
            (Some("b.second"), "actions.b.second.input.x", Breaking),
            (Some("b.second"), "actions.b.second.input.x", Cosmetic),
            (Some("c.third"), "actions.c.third", Safe),
        ]
    );
    // Whatever the order the contracts come in.
    let mut old_rev = old.to_vec();
    old_rev.reverse();
    let mut new_rev = new.to_vec();
    new_rev.reverse();
    assert_eq!(diff(&old_rev, &new_rev), got);
}

#[test]
fn ambiguous_renames_are_reported_as_removed_and_added() {
    let s = json!({"type": "object", "properties": {}});
    let old = [contract("a.one", s.clone()), contract("a.two", s.clone())];
    let new = [contract("a.three", s.clone()), contract("a.four", s)];
    let got = diff(&old, &new);
    let words: Vec<(&str, DeltaSeverity)> =
        got.iter().map(|d| (d.path.as_str(), d.severity)).collect();
    assert_eq!(
        words,
        [
            ("actions.a.four", Safe),
            ("actions.a.one", Breaking),
            ("actions.a.three", Safe),
            ("actions.a.two", Breaking),
        ]
    );
    assert!(got.iter().all(|d| !d.description.contains("renamed")));
}

#[test]
fn before_and_after_are_canonical_json() {
    let new = with_schema(|s| s["properties"]["id"]["maxLength"] = json!(32));
    let got = diff(&[base()], &[new]);
    assert_eq!(got[0].before.as_deref(), Some("64"));
    assert_eq!(got[0].after.as_deref(), Some("32"));
    let renamed = diff(&[base()], &[contract("billing.fetch", base_schema())]);
    assert_eq!(
        renamed[0].before.as_deref(),
        Some("\"billing.get_invoice\"")
    );
    assert_eq!(renamed[0].after.as_deref(), Some("\"billing.fetch\""));
    assert_eq!(renamed[0].action.as_deref(), Some("billing.fetch"));
}

trait RowExt {
    fn from(self, old: ToolContract) -> Row;
    fn also(
        self,
        severity: DeltaSeverity,
        path: &'static str,
        words: &'static [&'static str],
    ) -> Row;
    fn named(self, rule: &'static str) -> Row;
    fn expect(
        self,
        severity: DeltaSeverity,
        path: &'static str,
        words: &'static [&'static str],
    ) -> Row;
}

impl RowExt for Row {
    /// Replaces the old side.
    fn from(mut self, old: ToolContract) -> Row {
        self.old = vec![old];
        self
    }
    fn also(
        mut self,
        severity: DeltaSeverity,
        path: &'static str,
        words: &'static [&'static str],
    ) -> Row {
        self.expect.push((severity, path, words));
        self
    }
    fn named(mut self, rule: &'static str) -> Row {
        self.rule = rule;
        self
    }
    fn expect(
        self,
        severity: DeltaSeverity,
        path: &'static str,
        words: &'static [&'static str],
    ) -> Row {
        self.also(severity, path, words)
    }
}
