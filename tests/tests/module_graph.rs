//! The house reads one way: `fusion-runtime`'s module graph, read from its sources.
//!
//! - no circle between top-level modules (`crate::a` named in `b` and `crate::b` in `a`,
//!   directly or around a longer circle);
//! - no circle between the files of one module (`super::x` / `crate::m::x` between the
//!   sibling files of a folder; a module's `mod.rs`, which declares and re-exports its
//!   files, may be named by them);
//! - only `mcp/` names `rmcp` or `axum`; the typed client (`client/`) and the CLI (`cli.rs`)
//!   may name `rmcp` (they speak MCP as a client), and `lib.rs` re-exports it
//!   (`pub use rmcp;`) and nothing else of it;
//! - no two modules whose names differ by one letter (`guard` / `guards`);
//! - the module table in `lib.rs`'s docs names every top-level module, and its "may import"
//!   column is what each one imports.
//!
//! Test code (`#[cfg(test)]` and what follows it in a file, and `tests.rs` files) is not
//! read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fusion-runtime/src");

/// One source file: its module path (`["server", "pipeline"]`; `mod.rs` is its folder's
/// module) and its code, without comments and without test code.
struct File {
    path: PathBuf,
    module: Vec<String>,
    /// Whether it is a folder's `mod.rs`.
    is_mod: bool,
    code: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs")
            && p.file_stem().is_some_and(|s| s != "tests")
        {
            out.push(p);
        }
    }
}

/// The code of a file: line comments and doc comments dropped, and everything from the first
/// `#[cfg(test)]` on.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let line = match line.find("//") {
            // `"https://…"` inside a string literal: keep the line whole.
            Some(i) if line[..i].matches('"').count() % 2 == 0 => &line[..i],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn files() -> Vec<File> {
    let root = PathBuf::from(SRC);
    let mut paths = Vec::new();
    rust_files(&root, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&root).unwrap_or(&path);
            let mut module: Vec<String> = rel
                .iter()
                .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            let is_mod = module.last().is_some_and(|m| m == "mod");
            if is_mod || module == ["lib"] {
                module.pop();
            }
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            File {
                code: code_of(&text),
                path,
                module,
                is_mod,
            }
        })
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths after `prefix` in `code`, expanded (`crate::{a::b, c}` → `a::b`, `c`), as
/// segments.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix) {
        let at = from + i;
        from = at + prefix.len();
        if code[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        expand(&code[from..], Vec::new(), &mut out);
    }
    out
}

/// Reads one path (`a::b::{c, d::e}`) at the start of `rest`, appending its expansions.
fn expand(rest: &str, base: Vec<String>, out: &mut Vec<Vec<String>>) {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('{') {
        let mut depth = 0usize;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    expand(&inner[start..i], base.clone(), out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..i], base.clone(), out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
    if end == 0 {
        if !base.is_empty() {
            out.push(base);
        }
        return;
    }
    let mut path = base;
    path.push(rest[..end].to_owned());
    match rest[end..].strip_prefix("::") {
        Some(more) => expand(more, path, out),
        None => out.push(path),
    }
}

/// Every path a file names, made absolute (crate-relative segments).
fn named_paths(file: &File) -> Vec<Vec<String>> {
    let mut out = paths_after(&file.code, "crate::");
    // `super::` is the parent of the file's module (a `mod.rs` is its folder's module).
    for p in paths_after(&file.code, "super::") {
        let mut abs = file.module.clone();
        abs.pop();
        let mut p = p.into_iter().peekable();
        // `super::super::x`: one level up per further `super`.
        while p.peek().is_some_and(|s| s == "super") {
            p.next();
            abs.pop();
        }
        abs.extend(p);
        out.push(abs);
    }
    out
}

fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    let edges = top_level_edges(&files());
    assert!(
        edges.get("envelope").is_none_or(BTreeSet::is_empty),
        "envelope imports nothing of the crate: {:?}",
        edges.get("envelope")
    );
    assert!(
        edges.get("context").is_none_or(|to| !to.contains("server")),
        "context sits below server"
    );
    if let Some(cycle) = find_cycle(&edges) {
        panic!("top-level modules import each other: {}", cycle.join(" → "));
    }
}

/// Each top-level module's `crate::` imports (other top-level modules), from the sources.
fn top_level_edges(files: &[File]) -> BTreeMap<String, BTreeSet<String>> {
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.module.first().cloned())
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let Some(from) = f.module.first() else {
            continue;
        };
        let entry = edges.entry(from.clone()).or_default();
        for p in named_paths(f) {
            if let Some(to) = p.first()
                && to != from
                && top.contains(to)
            {
                entry.insert(to.clone());
            }
        }
    }
    edges
}

/// The rows of `lib.rs`'s module table: module → the modules its last column names
/// (`nothing of the crate` is none).
fn module_table() -> BTreeMap<String, BTreeSet<String>> {
    let lib = std::fs::read_to_string(format!("{SRC}/lib.rs")).unwrap_or_else(|e| panic!("{e}"));
    let mut rows = BTreeMap::new();
    let mut in_table = false;
    for line in lib.lines() {
        let Some(row) = line.strip_prefix("//! |") else {
            in_table = false;
            continue;
        };
        if row.starts_with(" module | owns | may import |") {
            in_table = true;
            continue;
        }
        if !in_table || row.starts_with("---") {
            continue;
        }
        let cells: Vec<&str> = row.trim_end_matches('|').split(" | ").collect();
        let (Some(first), Some(last)) = (cells.first(), cells.last()) else {
            continue;
        };
        // The first cell's first `code` span: [`server`], [`prompt`](mod@prompt), `__private`.
        let Some(name) = first.split('`').nth(1) else {
            continue;
        };
        let name = name.to_owned();
        let imports = last
            .split(',')
            .map(|m| m.trim().trim_matches('`').to_owned())
            .filter(|m| !m.is_empty() && m != "nothing of the crate")
            .collect();
        rows.insert(name, imports);
    }
    rows
}

#[test]
fn the_module_table_says_what_each_module_imports() {
    let table = module_table();
    assert!(table.contains_key("server"), "the table is read: {table:?}");
    let edges = top_level_edges(&files());
    let mut wrong = Vec::new();
    for (module, imports) in &edges {
        match table.get(module) {
            None => wrong.push(format!("no row for `{module}` (it imports {imports:?})")),
            Some(row) if row != imports => wrong.push(format!(
                "`{module}` imports {imports:?}, its row says {row:?}"
            )),
            Some(_) => {}
        }
    }
    for module in table.keys().filter(|m| !edges.contains_key(*m)) {
        wrong.push(format!("the row `{module}` is no module"));
    }
    assert!(
        wrong.is_empty(),
        "lib.rs's module table:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_files_of_one_module_import_each_other() {
    let files = files();
    // Folder → sibling file → siblings it names.
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut siblings: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for f in files.iter().filter(|f| !f.is_mod && f.module.len() >= 2) {
        let (name, folder) = f.module.split_last().unwrap_or_else(|| unreachable!());
        siblings
            .entry(folder.to_vec())
            .or_default()
            .insert(name.clone());
    }
    // Folders with a `mod.rs` have their module's files beside it.
    for f in files.iter().filter(|f| f.is_mod && f.module.len() >= 2) {
        let (name, folder) = f.module.split_last().unwrap_or_else(|| unreachable!());
        siblings
            .entry(folder.to_vec())
            .or_default()
            .insert(name.clone());
    }
    for f in &files {
        let Some((name, folder)) = f.module.split_last() else {
            continue;
        };
        let Some(names) = siblings.get(folder) else {
            continue;
        };
        for p in named_paths(f) {
            if p.len() > folder.len()
                && p[..folder.len()] == *folder
                && names.contains(&p[folder.len()])
                && p[folder.len()] != *name
            {
                graphs
                    .entry(folder.to_vec())
                    .or_default()
                    .entry(name.clone())
                    .or_default()
                    .insert(p[folder.len()].clone());
            }
        }
    }
    for (folder, edges) in &graphs {
        if let Some(cycle) = find_cycle(edges) {
            panic!(
                "files of `{}` import each other: {}",
                folder.join("::"),
                cycle.join(" → ")
            );
        }
    }
}

#[test]
fn only_mcp_names_rmcp_or_axum() {
    for f in files() {
        let allowed: &[&str] = match f.module.first().map(String::as_str) {
            Some("mcp") => continue,
            Some("client" | "cli") => &["rmcp"],
            _ => &[],
        };
        for krate in ["rmcp", "axum"] {
            if allowed.contains(&krate) {
                continue;
            }
            let mut code = f.code.clone();
            if f.module.is_empty() && krate == "rmcp" {
                code = code.replace("pub use rmcp;", "");
            }
            let named = !paths_after(&code, &format!("{krate}::")).is_empty()
                || code.contains(&format!("use {krate}"));
            assert!(
                !named,
                "{} names `{krate}`: only mcp/ speaks the protocol's types",
                f.path.display()
            );
        }
    }
}

fn one_letter_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    match long.len() - short.len() {
        0 => short.iter().zip(&long).filter(|(x, y)| x != y).count() == 1,
        1 => (0..long.len()).any(|i| {
            let mut l = long.clone();
            l.remove(i);
            l == short
        }),
        _ => false,
    }
}

#[test]
fn no_two_modules_are_named_one_letter_apart() {
    let names: BTreeSet<String> = files()
        .iter()
        .flat_map(|f| f.module.clone())
        .filter(|n| n != "tests")
        .collect();
    for a in &names {
        for b in &names {
            assert!(
                a >= b || !one_letter_apart(a, b),
                "modules `{a}` and `{b}` differ by one letter"
            );
        }
    }
}

#[test]
fn the_reader_finds_what_it_looks_for() {
    let mut out = Vec::new();
    expand("{a::b, c::{d, e}}; x", Vec::new(), &mut out);
    assert_eq!(
        out,
        vec![vec!["a", "b"], vec!["c", "d"], vec!["c", "e"]]
            .into_iter()
            .map(|p| p.into_iter().map(String::from).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        paths_after("use crate::server::Inner; notcrate::x", "crate::"),
        vec![vec!["server".to_owned(), "Inner".to_owned()]]
    );
    let mut edges = BTreeMap::new();
    edges.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    edges.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert!(find_cycle(&edges).is_some());
    assert!(one_letter_apart("guard", "guards") && !one_letter_apart("guard", "limits"));
    assert_eq!(
        code_of("use a; // crate::b\n#[cfg(test)]\nuse crate::c;"),
        "use a; \n"
    );
}
