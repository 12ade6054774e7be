//! The house reads one way: `fusion-runtime`'s module graph, read as the compiler reads it
//! (and `fusion-macros`'s, for circles).
//!
//! The sources are parsed with `syn`, starting at `lib.rs` and following its `mod`
//! declarations, so a file no `mod` reaches is not read. Items under `#[cfg(test)]` (a module,
//! an `impl`, a function, anywhere in a file) are skipped. Every `use` and every path that
//! names the crate (`crate::`, `super::`, `self::`, a child module, a name a `use` brought in),
//! in items, expressions, types and macro arguments, is followed through re-exports to the
//! file that defines the item: that is an edge, with its line. A re-export of a module's own
//! descendants (`pub use self::x::Y` in a `mod.rs` or `lib.rs`, the module's doorway) is not
//! an edge of the file that writes it; a `mod.rs` with logic is otherwise a node like any file.
//!
//! - no circle between files, at any depth, in either crate;
//! - no circle between the parts of any module, at every level: the module's own file and each
//!   child (a file, or a folder with every file below it: edges from a sub-folder's files are
//!   lifted to the folder); the crate's top level is one such level;
//! - only `mcp/` names `rmcp` or `axum`; the typed client (`client/`) and the CLI (`cli.rs`)
//!   may name `rmcp` (they speak MCP as a client), `http/` (serving HTTP, none of it MCP) may
//!   name `axum`, and `lib.rs` re-exports `rmcp` (`pub use rmcp;`) and nothing else of it;
//! - no two modules whose names differ by one letter (`guard` / `guards`);
//! - the module table in `lib.rs`'s docs names every top-level module, and its "may import"
//!   column is what each one imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fusion-runtime/src");
/// The macros' crate, read by the same rules for circles.
const MACROS_SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fusion-macros/src");

/// A module's path from the crate root (`["server", "pipeline"]`; the root is `[]`).
type ModPath = Vec<String>;

/// One source file the compiler reads.
struct File {
    /// Its path under `src/` (`mcp/cancel.rs`).
    rel: String,
    /// The module it is (`mod.rs` is its folder's module, `lib.rs` the root).
    module: ModPath,
    ast: syn::File,
}

/// One `use` leaf: `use a::b::{c as d, e::*}` gives `a::b::c` bound as `d`, and the glob
/// `a::b::e`.
struct UseLeaf {
    path: Vec<String>,
    /// The name it binds; `None` for a glob.
    bind: Option<String>,
    line: usize,
    public: bool,
}

/// What a module holds, for resolving paths into it.
#[derive(Default)]
struct Module {
    /// Index of the file its items are in.
    file: usize,
    /// The names of its items (not its child modules).
    defines: BTreeSet<String>,
    uses: Vec<UseLeaf>,
    children: BTreeSet<String>,
}

/// One edge: `from` names an item of `to` at `line`, writing `path`.
#[derive(Clone)]
struct Edge {
    from: usize,
    to: usize,
    line: usize,
    path: String,
}

/// The crate as the compiler sees it.
struct Crate {
    /// Its `src/` folder.
    src: &'static str,
    files: Vec<File>,
    modules: BTreeMap<ModPath, Module>,
    edges: Vec<Edge>,
    /// Per file: the first segment and line of every path it names (for `rmcp` / `axum`).
    externs: Vec<Vec<(String, usize)>>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if !a.path().is_ident("cfg") {
            return false;
        }
        let Ok(list) = a.meta.require_list() else {
            return false;
        };
        let tokens = list.tokens.to_string().replace(' ', "");
        tokens == "test" || tokens.starts_with("all(test,")
    })
}

fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

/// `use` trees expanded into leaves.
fn use_leaves(tree: &syn::UseTree, base: &[String], public: bool, out: &mut Vec<UseLeaf>) {
    let mut path = base.to_vec();
    match tree {
        syn::UseTree::Path(p) => {
            path.push(p.ident.to_string());
            use_leaves(&p.tree, &path, public, out);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let bind = if name == "self" {
                base.last().cloned()
            } else {
                path.push(name.clone());
                Some(name)
            };
            out.push(UseLeaf {
                path,
                bind,
                line: line_of(n.ident.span()),
                public,
            });
        }
        syn::UseTree::Rename(r) => {
            let name = r.ident.to_string();
            if name != "self" {
                path.push(name);
            }
            out.push(UseLeaf {
                path,
                bind: Some(r.rename.to_string()),
                line: line_of(r.ident.span()),
                public,
            });
        }
        syn::UseTree::Glob(g) => out.push(UseLeaf {
            path,
            bind: None,
            line: line_of(g.star_token.spans[0]),
            public,
        }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_leaves(t, base, public, out);
            }
        }
    }
}

fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.to_string())
}

impl Crate {
    fn read(src: &'static str) -> Crate {
        let mut krate = Crate {
            src,
            files: Vec::new(),
            modules: BTreeMap::new(),
            edges: Vec::new(),
            externs: Vec::new(),
        };
        let root = PathBuf::from(src);
        krate.load(&root, &root.join("lib.rs"), Vec::new());
        krate.link();
        krate
    }

    /// Reads the file `path` as `module`, whose `mod x;` files are in `dir`.
    fn load(&mut self, dir: &Path, path: &Path, module: ModPath) {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rel = path
            .strip_prefix(self.src)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        let index = self.files.len();
        let items = ast.items.clone();
        self.files.push(File {
            rel,
            module: module.clone(),
            ast,
        });
        self.scan(&items, module, index, dir);
    }

    fn scan(&mut self, items: &[syn::Item], module: ModPath, file: usize, dir: &Path) {
        self.modules.entry(module.clone()).or_default().file = file;
        for item in items {
            let attrs: &[syn::Attribute] = match item {
                syn::Item::Mod(m) => &m.attrs,
                syn::Item::Use(u) => &u.attrs,
                syn::Item::Fn(f) => &f.attrs,
                syn::Item::Impl(i) => &i.attrs,
                syn::Item::Struct(s) => &s.attrs,
                syn::Item::Enum(e) => &e.attrs,
                syn::Item::Const(c) => &c.attrs,
                syn::Item::Static(s) => &s.attrs,
                syn::Item::Trait(t) => &t.attrs,
                syn::Item::Type(t) => &t.attrs,
                syn::Item::Macro(m) => &m.attrs,
                _ => &[],
            };
            if is_cfg_test(attrs) {
                continue;
            }
            match item {
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    let mut child = module.clone();
                    child.push(name.clone());
                    if let Some(m) = self.modules.get_mut(&module) {
                        m.children.insert(name.clone());
                    }
                    let child_dir = dir.join(&name);
                    match &m.content {
                        Some((_, inner)) => self.scan(inner, child, file, &child_dir),
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            let path = if flat.exists() {
                                flat
                            } else {
                                child_dir.join("mod.rs")
                            };
                            self.load(&child_dir, &path, child);
                        }
                    }
                }
                syn::Item::Use(u) => {
                    let public = !matches!(u.vis, syn::Visibility::Inherited);
                    let mut leaves = Vec::new();
                    use_leaves(&u.tree, &[], public, &mut leaves);
                    if let Some(m) = self.modules.get_mut(&module) {
                        m.uses.extend(leaves);
                    }
                }
                _ => {
                    if let Some(name) = item_name(item)
                        && let Some(m) = self.modules.get_mut(&module)
                    {
                        m.defines.insert(name);
                    }
                }
            }
        }
    }

    /// `path` as written in `module`, from the crate root; `None` when it is not the crate's
    /// (another crate, a local, a generic).
    fn absolute(&self, module: &[String], path: &[String], depth: usize) -> Option<Vec<String>> {
        let first = path.first()?;
        if depth > 8 {
            return None;
        }
        let rest = &path[1..];
        let mut abs: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => {
                let mut m = module.to_vec();
                m.pop();
                let mut rest = rest.iter().peekable();
                while rest.peek().is_some_and(|s| *s == "super") {
                    rest.next();
                    m.pop();
                }
                m.extend(rest.cloned());
                return Some(m);
            }
            _ => {
                let m = self.modules.get(module)?;
                if m.children.contains(first) {
                    let mut abs = module.to_vec();
                    abs.extend(path.iter().cloned());
                    return Some(abs);
                }
                let leaf = m.uses.iter().find(|u| u.bind.as_ref() == Some(first))?;
                let mut abs = self.absolute(module, &leaf.path, depth + 1)?;
                abs.extend(rest.iter().cloned());
                return Some(abs);
            }
        };
        abs.extend(rest.iter().cloned());
        Some(abs)
    }

    /// The module whose file defines what `abs` names, following re-exports.
    fn resolve(&self, abs: &[String], depth: usize) -> ModPath {
        let mut module: ModPath = Vec::new();
        for (i, seg) in abs.iter().enumerate() {
            let mut child = module.clone();
            child.push(seg.clone());
            if self.modules.contains_key(&child) {
                module = child;
                continue;
            }
            if depth > 8 {
                return module;
            }
            let Some(m) = self.modules.get(&module) else {
                return module;
            };
            if m.defines.contains(seg) {
                return module;
            }
            if let Some(leaf) = m.uses.iter().find(|u| u.bind.as_ref() == Some(seg))
                && let Some(mut target) = self.absolute(&module, &leaf.path, 0)
            {
                target.extend(abs[i + 1..].iter().cloned());
                return self.resolve(&target, depth + 1);
            }
            for glob in m.uses.iter().filter(|u| u.bind.is_none()) {
                let Some(mut target) = self.absolute(&module, &glob.path, 0) else {
                    continue;
                };
                let found = self.modules.get(&target).is_some_and(|g| {
                    g.defines.contains(seg)
                        || g.children.contains(seg)
                        || g.uses.iter().any(|u| u.bind.as_ref() == Some(seg))
                });
                if found {
                    target.extend(abs[i..].iter().cloned());
                    return self.resolve(&target, depth + 1);
                }
            }
            return module;
        }
        module
    }

    fn link(&mut self) {
        let mut edges = Vec::new();
        let mut externs = Vec::new();
        for (index, file) in self.files.iter().enumerate() {
            let mut seen = Seen {
                module: file.module.clone(),
                names: Vec::new(),
            };
            seen.visit_file(&file.ast);
            let mut ext = Vec::new();
            for named in seen.names {
                if let Some(first) = named.path.first() {
                    ext.push((first.clone(), named.line));
                }
                let Some(abs) = self.absolute(&named.module, &named.path, 0) else {
                    continue;
                };
                let target = self.resolve(&abs, 0);
                let Some(to) = self.modules.get(&target).map(|m| m.file) else {
                    continue;
                };
                // A module's doorway: re-exporting its own descendants.
                let doorway = named.public_use
                    && target.len() > named.module.len()
                    && target[..named.module.len()] == named.module[..];
                if to != index && !doorway {
                    edges.push(Edge {
                        from: index,
                        to,
                        line: named.line,
                        path: named.path.join("::"),
                    });
                }
            }
            externs.push(ext);
        }
        self.edges = edges;
        self.externs = externs;
    }

    /// The file graph: file → file → the first edge between them.
    fn file_graph(&self) -> BTreeMap<usize, BTreeMap<usize, Edge>> {
        let mut graph: BTreeMap<usize, BTreeMap<usize, Edge>> = BTreeMap::new();
        for e in &self.edges {
            graph
                .entry(e.from)
                .or_default()
                .entry(e.to)
                .or_insert_with(|| e.clone());
        }
        graph
    }

    /// The parts of `level` (its own file, its child modules with all below them), each
    /// file's part, and the edges between parts.
    fn level_graph(&self, level: &[String]) -> (BTreeMap<String, BTreeMap<String, Edge>>, bool) {
        let part = |f: &File| -> Option<String> {
            if f.module.len() < level.len() || f.module[..level.len()] != *level {
                return None;
            }
            if f.module.len() == level.len() {
                return Some(f.rel.clone());
            }
            let mut child = level.to_vec();
            child.push(f.module[level.len()].clone());
            let deeper = self
                .files
                .iter()
                .any(|g| g.module.len() > child.len() && g.module[..child.len()] == child[..]);
            let own = self.modules.get(&child).map(|m| &self.files[m.file].rel);
            Some(match own {
                Some(rel) if !deeper => rel.clone(),
                _ => format!("{}/", child.join("/")),
            })
        };
        let mut graph: BTreeMap<String, BTreeMap<String, Edge>> = BTreeMap::new();
        let mut any = false;
        for e in &self.edges {
            let (Some(a), Some(b)) = (part(&self.files[e.from]), part(&self.files[e.to])) else {
                continue;
            };
            any = true;
            if a != b {
                graph
                    .entry(a)
                    .or_default()
                    .entry(b)
                    .or_insert_with(|| e.clone());
            }
        }
        (graph, any)
    }

    fn describe(&self, e: &Edge) -> String {
        format!("{}:{} `{}`", self.files[e.from].rel, e.line, e.path)
    }
}

/// What one file names: paths with the module they are written in.
struct Seen {
    module: ModPath,
    names: Vec<Named>,
}

struct Named {
    module: ModPath,
    path: Vec<String>,
    line: usize,
    /// Written in a `pub use` (a re-export).
    public_use: bool,
}

impl Seen {
    fn push(&mut self, path: Vec<String>, line: usize, public_use: bool) {
        self.names.push(Named {
            module: self.module.clone(),
            path,
            line,
            public_use,
        });
    }

    /// Paths inside a macro's tokens (`format!("{}", crate::x::y())`, `tokio::select!`):
    /// `a::b::c` runs of identifiers.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(first) => {
                    let after_colons =
                        i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == ':');
                    let mut path = vec![first.to_string()];
                    let line = line_of(first.span());
                    let mut j = i + 1;
                    while j + 2 < trees.len()
                        && matches!(&trees[j], TokenTree::Punct(p) if p.as_char() == ':')
                        && matches!(&trees[j + 1], TokenTree::Punct(p) if p.as_char() == ':')
                    {
                        let TokenTree::Ident(next) = &trees[j + 2] else {
                            break;
                        };
                        path.push(next.to_string());
                        j += 3;
                    }
                    if path.len() > 1 && !after_colons {
                        self.push(path, line, false);
                    }
                    i = j;
                }
                TokenTree::Punct(_) | TokenTree::Literal(_) => i += 1,
            }
        }
    }
}

impl<'ast> Visit<'ast> for Seen {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        match item {
            syn::Item::Mod(m) if is_cfg_test(&m.attrs) => {}
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    self.module.push(m.ident.to_string());
                    for i in items {
                        self.visit_item(i);
                    }
                    self.module.pop();
                }
            }
            syn::Item::Use(u) if is_cfg_test(&u.attrs) => {}
            syn::Item::Use(u) => {
                let public = !matches!(u.vis, syn::Visibility::Inherited);
                let mut leaves = Vec::new();
                use_leaves(&u.tree, &[], public, &mut leaves);
                for leaf in leaves {
                    self.push(leaf.path, leaf.line, public);
                }
            }
            syn::Item::Fn(f) if is_cfg_test(&f.attrs) => {}
            syn::Item::Impl(i) if is_cfg_test(&i.attrs) => {}
            syn::Item::Struct(s) if is_cfg_test(&s.attrs) => {}
            syn::Item::Enum(e) if is_cfg_test(&e.attrs) => {}
            syn::Item::Const(c) if is_cfg_test(&c.attrs) => {}
            syn::Item::Static(s) if is_cfg_test(&s.attrs) => {}
            syn::Item::Trait(t) if is_cfg_test(&t.attrs) => {}
            syn::Item::Type(t) if is_cfg_test(&t.attrs) => {}
            syn::Item::Macro(m) if is_cfg_test(&m.attrs) => {}
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Const(c) => &c.attrs,
            syn::ImplItem::Fn(f) => &f.attrs,
            syn::ImplItem::Type(t) => &t.attrs,
            syn::ImplItem::Macro(m) => &m.attrs,
            _ => return visit::visit_impl_item(self, item),
        };
        if !is_cfg_test(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        let attrs = match item {
            syn::TraitItem::Const(c) => &c.attrs,
            syn::TraitItem::Fn(f) => &f.attrs,
            syn::TraitItem::Type(t) => &t.attrs,
            syn::TraitItem::Macro(m) => &m.attrs,
            _ => return visit::visit_trait_item(self, item),
        };
        if !is_cfg_test(attrs) {
            visit::visit_trait_item(self, item);
        }
    }

    fn visit_stmt(&mut self, stmt: &'ast syn::Stmt) {
        let skip = match stmt {
            syn::Stmt::Local(l) => is_cfg_test(&l.attrs),
            syn::Stmt::Macro(m) => is_cfg_test(&m.attrs),
            _ => false,
        };
        if !skip {
            visit::visit_stmt(self, stmt);
        }
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if !is_cfg_test(&field.attrs) {
            visit::visit_field(self, field);
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if !is_cfg_test(&arm.attrs) {
            visit::visit_arm(self, arm);
        }
    }

    /// A visibility (`pub(crate)`, `pub(in crate::a)`) names where an item may be seen, not
    /// something it uses: no edge.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = path.segments.first() {
            self.push(segments, line_of(first.ident.span()), false);
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }
}

/// The crate, read once per test thread (`syn`'s spans are not `Sync`).
fn krate() -> &'static Crate {
    thread_local! {
        static CRATE: &'static Crate = Box::leak(Box::new(Crate::read(SRC)));
    }
    CRATE.with(|k| *k)
}

/// `fusion-macros`, read the same way.
fn macros() -> &'static Crate {
    thread_local! {
        static CRATE: &'static Crate = Box::leak(Box::new(Crate::read(MACROS_SRC)));
    }
    CRATE.with(|k| *k)
}

/// The strongly connected parts of `graph` with more than one node: the nodes tangled in one
/// set of circles, of which [`circles`] shows only the shortest.
fn tangles<N: Ord + Clone, E>(graph: &BTreeMap<N, BTreeMap<N, E>>) -> Vec<BTreeSet<N>> {
    let circles = circles(graph);
    let reach = |from: &N| -> BTreeSet<N> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for next in graph.get(&n).into_iter().flat_map(BTreeMap::keys) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    circles
        .iter()
        .filter_map(|c| c.first())
        .map(|n| {
            let from = reach(n);
            from.into_iter().filter(|m| reach(m).contains(n)).collect()
        })
        .collect()
}

/// The strongly connected parts of `graph` with more than one node, each as one circle
/// through its smallest node.
fn circles<N: Ord + Clone, E>(graph: &BTreeMap<N, BTreeMap<N, E>>) -> Vec<Vec<N>> {
    let nodes: BTreeSet<N> = graph
        .iter()
        .flat_map(|(a, to)| std::iter::once(a.clone()).chain(to.keys().cloned()))
        .collect();
    let reach = |from: &N| -> BTreeSet<N> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for next in graph.get(&n).into_iter().flat_map(BTreeMap::keys) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<N, BTreeSet<N>> = nodes.iter().map(|n| (n.clone(), reach(n))).collect();
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    for n in &nodes {
        if done.contains(n) || !reaches[n].contains(n) {
            continue;
        }
        let part: BTreeSet<N> = reaches[n]
            .iter()
            .filter(|m| reaches[*m].contains(n))
            .cloned()
            .collect();
        done.extend(part.iter().cloned());
        // The shortest circle from `n` back to `n`, breadth first.
        let mut back: BTreeMap<N, N> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([n.clone()]);
        'search: while let Some(m) = queue.pop_front() {
            for next in graph.get(&m).into_iter().flat_map(BTreeMap::keys) {
                if next == n {
                    let mut circle = vec![n.clone()];
                    let mut at = m.clone();
                    while at != *n {
                        circle.push(at.clone());
                        at = back[&at].clone();
                    }
                    circle.push(n.clone());
                    let last = circle.len() - 1;
                    circle[1..last].reverse();
                    out.push(circle);
                    break 'search;
                }
                if part.contains(next) && !back.contains_key(next) {
                    back.insert(next.clone(), m.clone());
                    queue.push_back(next.clone());
                }
            }
        }
    }
    out
}

/// A circle as `a (a.rs:12 `crate::b::X`) → b (…) → a`.
fn show<N: Ord + Clone + std::fmt::Display>(
    k: &Crate,
    circle: &[N],
    graph: &BTreeMap<N, BTreeMap<N, Edge>>,
) -> String {
    let mut out = String::new();
    for pair in circle.windows(2) {
        let e = &graph[&pair[0]][&pair[1]];
        out.push_str(&format!("{} ({}) → ", pair[0], k.describe(e)));
    }
    if let Some(last) = circle.last() {
        out.push_str(&last.to_string());
    }
    out
}

/// The circles between `k`'s files, shown.
fn file_circles(k: &Crate) -> Vec<String> {
    let graph = k.file_graph();
    let rel = |n: &usize| k.files[*n].rel.clone();
    circles(&graph)
        .into_iter()
        .zip(tangles(&graph))
        .map(|(c, tangle)| {
            let named: BTreeMap<String, BTreeMap<String, Edge>> = graph
                .iter()
                .map(|(a, to)| {
                    (
                        rel(a),
                        to.iter().map(|(b, e)| (rel(b), e.clone())).collect(),
                    )
                })
                .collect();
            let c: Vec<String> = c.iter().map(rel).collect();
            let all: Vec<String> = tangle.iter().map(rel).collect();
            format!("{}\n    tangled: {}", show(k, &c, &named), all.join(", "))
        })
        .collect()
}

/// The circles between the parts of any of `k`'s modules, shown.
fn level_circles(k: &Crate) -> Vec<String> {
    let mut found = Vec::new();
    for level in k.modules.keys() {
        let (graph, _) = k.level_graph(level);
        for (c, tangle) in circles(&graph).into_iter().zip(tangles(&graph)) {
            let name = if level.is_empty() {
                "the crate".to_owned()
            } else {
                format!("`{}`", level.join("::"))
            };
            let all: Vec<&str> = tangle.iter().map(String::as_str).collect();
            found.push(format!(
                "in {name}: {}\n    tangled: {}",
                show(k, &c, &graph),
                all.join(", ")
            ));
        }
    }
    found
}

#[test]
fn no_circle_between_files() {
    for (name, k) in [("fusion-runtime", krate()), ("fusion-macros", macros())] {
        let found = file_circles(k);
        assert!(
            found.is_empty(),
            "{name}: files import each other:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn no_circle_between_the_parts_of_any_module() {
    for (name, k) in [("fusion-runtime", krate()), ("fusion-macros", macros())] {
        let found = level_circles(k);
        assert!(
            found.is_empty(),
            "{name}: the parts of a module import each other:\n{}",
            found.join("\n")
        );
    }
}

/// Each top-level module's imports (other top-level modules): the crate's level, `lib.rs`
/// left out.
fn top_level_edges() -> BTreeMap<String, BTreeSet<String>> {
    let k = krate();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &k.files {
        if let Some(top) = f.module.first() {
            edges.entry(top.clone()).or_default();
        }
    }
    for e in &k.edges {
        let (Some(from), Some(to)) = (k.files[e.from].module.first(), k.files[e.to].module.first())
        else {
            continue;
        };
        if from != to {
            edges.entry(from.clone()).or_default().insert(to.clone());
        }
    }
    edges
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    let edges = top_level_edges();
    assert!(
        edges.get("envelope").is_none_or(BTreeSet::is_empty),
        "envelope imports nothing of the crate: {:?}",
        edges.get("envelope")
    );
    assert!(
        edges.get("context").is_none_or(|to| !to.contains("server")),
        "context sits below server"
    );
    let graph: BTreeMap<String, BTreeMap<String, ()>> = edges
        .iter()
        .map(|(a, to)| (a.clone(), to.iter().map(|b| (b.clone(), ())).collect()))
        .collect();
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "top-level modules import each other: {}",
        found
            .iter()
            .map(|c| c.join(" → "))
            .collect::<Vec<_>>()
            .join("; ")
    );
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
    let edges = top_level_edges();
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
fn only_mcp_names_rmcp_or_axum() {
    let k = krate();
    for (f, names) in k.files.iter().zip(&k.externs) {
        let allowed: &[&str] = match f.module.first().map(String::as_str) {
            Some("mcp") => continue,
            Some("client" | "cli") => &["rmcp"],
            // Serving HTTP, whatever is served: the listener, probes, bodies; never MCP.
            Some("http") => &["axum"],
            _ => &[],
        };
        for (first, line) in names {
            let krate = first.as_str();
            if !["rmcp", "axum"].contains(&krate) || allowed.contains(&krate) {
                continue;
            }
            // `lib.rs` re-exports the crate itself: `pub use rmcp;`.
            let reexport = f.module.is_empty()
                && krate == "rmcp"
                && k.modules[&Vec::new()]
                    .uses
                    .iter()
                    .any(|u| u.line == *line && u.public && u.path == ["rmcp"]);
            assert!(
                reexport,
                "{}:{line} names `{krate}`: only mcp/ speaks the protocol's types",
                f.rel
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
    let names: BTreeSet<String> = krate()
        .files
        .iter()
        .flat_map(|f| f.module.clone())
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
    let k = krate();
    // Every file the compiler reads is read, and no test file.
    assert!(
        k.files.iter().any(|f| f.rel == "mcp/http/cancel.rs"),
        "files are read"
    );
    assert!(
        k.files.iter().all(|f| !f.rel.ends_with("tests.rs")),
        "test files are not read"
    );
    // `use a::{b as c, d::{self, *}}` expands to its leaves.
    let tree: syn::UseTree =
        syn::parse_str("a::{b as c, d::{self, *}}").unwrap_or_else(|e| panic!("{e}"));
    let mut leaves = Vec::new();
    use_leaves(&tree, &[], false, &mut leaves);
    let got: Vec<(String, Option<String>)> = leaves
        .iter()
        .map(|l| (l.path.join("::"), l.bind.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("a::b".to_owned(), Some("c".to_owned())),
            ("a::d".to_owned(), Some("d".to_owned())),
            ("a::d".to_owned(), None),
        ]
    );
    // Code under `#[cfg(test)]` inside an `impl` is skipped, the rest of the file is read.
    let file: syn::File = syn::parse_str(
        "impl A { #[cfg(test)] fn t() { crate::hidden::x(); } fn f() { crate::seen::y(); } }\n\
         fn g() { format!(\"{}\", crate::in_macro::z()); }",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut seen = Seen {
        module: Vec::new(),
        names: Vec::new(),
    };
    seen.visit_file(&file);
    let crate_paths: BTreeSet<String> = seen
        .names
        .iter()
        .filter(|n| n.path.first().is_some_and(|s| s == "crate"))
        .map(|n| n.path.join("::"))
        .collect();
    assert_eq!(
        crate_paths,
        BTreeSet::from(["crate::seen::y".to_owned(), "crate::in_macro::z".to_owned()])
    );
    // Re-exports are followed to the file that defines the item.
    let target = k.resolve(&["ToolError".to_owned()], 0);
    assert_eq!(target.first().map(String::as_str), Some("envelope"));
    let mut edges = BTreeMap::new();
    edges.insert("a", BTreeMap::from([("b", ())]));
    edges.insert("b", BTreeMap::from([("a", ())]));
    edges.insert("c", BTreeMap::from([("a", ())]));
    assert_eq!(circles(&edges), vec![vec!["a", "b", "a"]]);
    assert!(one_letter_apart("guard", "guards") && !one_letter_apart("guard", "limits"));
}
