//! A validation rule is declared in two places, and each half needs the other: its file in
//! `fusion-runtime/src/validation/rules/` (its `RULE`, listed in the folder's `mod.rs`, `ALL`,
//! which is what every reader of "the rules" reads), and its row in the macro's attribute table
//! (`fusion-macros/src/rules.rs`'s `RULES`), which names the rule it writes. Read from the
//! sources with `syn`, as the compiler reads them:
//!
//! - every rule file that declares a `RULE` is in `ALL`, and every entry of `ALL` is a rule
//!   file's `RULE` (a rule missing from the table would be missed by the issue reader, the
//!   report, the contract diff, the healing cases and the typed path's keyword list);
//! - every attribute row names a rule in `ALL` whose file has the `keywords` and `check` the
//!   derive calls, and no two rows share a name;
//! - every rule with `keywords` (a rule the derive can write) has an attribute row;
//! - every attribute row has its row in the user's table of field attributes (`lib.rs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const RUNTIME: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fusion-runtime/src");
const MACROS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fusion-macros/src");

fn parse(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn rules_dir() -> PathBuf {
    Path::new(RUNTIME).join("validation/rules")
}

/// A rule file, as far as the table cares.
struct RuleFile {
    declares_rule: bool,
    fns: BTreeSet<String>,
}

/// Every file of `validation/rules/` but `mod.rs` and the two that declare what a rule is
/// (`check.rs`, `declaration.rs`), by module name.
fn rule_files() -> Vec<(String, RuleFile)> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(rules_dir()).expect("the rules folder");
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_none_or(|e| e != "rs")
            || ["mod", "check", "declaration"].contains(&stem)
        {
            continue;
        }
        let file = parse(&path);
        let mut rule = RuleFile {
            declares_rule: false,
            fns: BTreeSet::new(),
        };
        for item in &file.items {
            match item {
                syn::Item::Const(c) if c.ident == "RULE" => rule.declares_rule = true,
                syn::Item::Fn(f) => {
                    rule.fns.insert(f.sig.ident.to_string());
                }
                _ => {}
            }
        }
        out.push((stem.to_owned(), rule));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The modules `mod.rs`'s `ALL` lists (`&multiple_of::RULE` is `multiple_of`).
fn table() -> Vec<String> {
    let file = parse(&rules_dir().join("mod.rs"));
    let all = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Const(c) if c.ident == "ALL" => Some(&*c.expr),
            _ => None,
        })
        .expect("validation/rules/mod.rs has `const ALL`");
    let syn::Expr::Reference(r) = all else {
        panic!("`ALL` is `&[..]`");
    };
    let syn::Expr::Array(array) = &*r.expr else {
        panic!("`ALL` is `&[..]`");
    };
    array
        .elems
        .iter()
        .map(|e| match e {
            syn::Expr::Reference(r) => match &*r.expr {
                syn::Expr::Path(p) if p.path.segments.len() == 2 => {
                    assert_eq!(p.path.segments[1].ident, "RULE", "an entry of `ALL`");
                    p.path.segments[0].ident.to_string()
                }
                other => panic!("an entry of `ALL` is not `&<rule>::RULE`: {other:?}"),
            },
            other => panic!("an entry of `ALL` is not `&<rule>::RULE`: {other:?}"),
        })
        .collect()
}

/// The last string literal argument of a call.
fn last_str(call: &syn::ExprCall) -> Option<String> {
    match call.args.last() {
        Some(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        })) => Some(s.value()),
        _ => None,
    }
}

fn first_str(call: &syn::ExprCall) -> Option<String> {
    match call.args.first() {
        Some(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        })) => Some(s.value()),
        _ => None,
    }
}

fn callee(call: &syn::ExprCall) -> String {
    match &*call.func {
        syn::Expr::Path(p) => p
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The macro's attribute rows: `(attribute, rule)`. A row is `row(name, .., rule)`, or a call
/// of a helper whose body ends in `row(.., rule)` with the rule written out
/// (`format(name, variant)`).
fn attribute_rows() -> Vec<(String, String)> {
    let file = parse(&Path::new(MACROS).join("rules.rs"));
    let helper_rule = |name: &str| -> Option<String> {
        file.items.iter().find_map(|item| match item {
            syn::Item::Fn(f) if f.sig.ident == name => match f.block.stmts.last() {
                Some(syn::Stmt::Expr(syn::Expr::Call(call), None)) if callee(call) == "row" => {
                    last_str(call)
                }
                _ => None,
            },
            _ => None,
        })
    };
    let rules = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Const(c) if c.ident == "RULES" => Some(&*c.expr),
            _ => None,
        })
        .expect("fusion-macros' rules.rs has `const RULES`");
    let syn::Expr::Reference(r) = rules else {
        panic!("`RULES` is `&[..]`");
    };
    let syn::Expr::Array(array) = &*r.expr else {
        panic!("`RULES` is `&[..]`");
    };
    array
        .elems
        .iter()
        .map(|e| {
            let syn::Expr::Call(call) = e else {
                panic!("a row of `RULES` is not a call: {e:?}");
            };
            let name = first_str(call).expect("a row starts with the attribute's name");
            let rule = if callee(call) == "row" {
                last_str(call)
            } else {
                helper_rule(&callee(call))
            };
            let rule = rule.unwrap_or_else(|| panic!("the row of `{name}` names no rule"));
            (name, rule)
        })
        .collect()
}

#[test]
fn every_rule_file_is_in_the_table_and_every_entry_is_a_rule() {
    let files = rule_files();
    let table = table();
    for (name, file) in &files {
        if file.declares_rule {
            assert!(
                table.contains(name),
                "validation/rules/{name}.rs declares a RULE that `rules::ALL` does not list: \
                 add `&{name}::RULE` there"
            );
        }
    }
    for name in &table {
        assert!(
            files.iter().any(|(n, f)| n == name && f.declares_rule),
            "`rules::ALL` lists `{name}`, which is no rule file with a `RULE`"
        );
    }
    let distinct: BTreeSet<&String> = table.iter().collect();
    assert_eq!(distinct.len(), table.len(), "a rule is twice in `ALL`");
}

#[test]
fn every_attribute_row_writes_a_rule_of_the_table() {
    let files = rule_files();
    let table = table();
    let rows = attribute_rows();
    assert!(rows.len() >= 12, "{} rows read", rows.len());
    let mut names = BTreeSet::new();
    for (attribute, rule) in &rows {
        assert!(
            names.insert(attribute),
            "two rows of the macro's table are `{attribute}`"
        );
        assert!(
            table.contains(rule),
            "the attribute `{attribute}` writes the rule `{rule}`, which `rules::ALL` does not list"
        );
        let file = files.iter().find(|(n, _)| n == rule).map(|(_, f)| f);
        for f in ["keywords", "check"] {
            assert!(
                file.is_some_and(|file| file.fns.contains(f)),
                "the attribute `{attribute}` writes `rules::{rule}::{f}`, which its file lacks"
            );
        }
    }
}

#[test]
fn every_rule_the_derive_can_write_has_an_attribute() {
    let rows = attribute_rows();
    for (name, file) in rule_files() {
        if file.declares_rule && file.fns.contains("keywords") {
            assert!(
                rows.iter().any(|(_, rule)| *rule == name),
                "the rule `{name}` writes keywords, but no row of the macro's table writes it"
            );
        }
    }
}

#[test]
fn every_attribute_is_in_the_users_table() {
    let lib = std::fs::read_to_string(Path::new(RUNTIME).join("lib.rs")).expect("lib.rs");
    let table: Vec<&str> = lib
        .lines()
        .skip_while(|l| !l.contains("# Field attributes"))
        .take_while(|l| !l.contains("# Container attributes"))
        .filter(|l| l.starts_with("/// | `"))
        .collect();
    for (attribute, _) in attribute_rows() {
        assert!(
            table
                .iter()
                .any(|l| l.starts_with(&format!("/// | `{attribute}`"))
                    || l.starts_with(&format!("/// | `{attribute}("))
                    || l.starts_with(&format!("/// | `{attribute} ="))),
            "lib.rs's table of field attributes has no row for `{attribute}`"
        );
    }
}
