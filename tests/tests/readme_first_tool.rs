//! The README's "Your first tool": its `main.rs` block is `examples/hello/main.rs` byte for
//! byte, and its `[dependencies]` block names every crate that program uses, with the features
//! it needs. `scripts/first-tool` builds the two blocks as written in a fresh crate and calls
//! the tool over stdio; this test keeps the example (which the workspace builds) the same code.

use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The body of the first fenced block whose info string starts with `lang`, after `heading`.
fn block<'a>(readme: &'a str, heading: &str, lang: &str) -> &'a str {
    let Some(at) = readme.find(heading) else {
        panic!("no `{heading}` in the README")
    };
    let section = &readme[at..];
    let fence = format!("\n```{lang}");
    let Some(open) = section.find(&fence) else {
        panic!("no ```{lang} block after `{heading}`")
    };
    let after = &section[open + fence.len()..];
    let Some(line_end) = after.find('\n') else {
        panic!("an unterminated ```{lang} fence")
    };
    let body = &after[line_end + 1..];
    let Some(close) = body.find("```\n") else {
        panic!("an unclosed ```{lang} block")
    };
    assert!(
        close == 0 || body[..close].ends_with('\n'),
        "the closing fence sits on its own line"
    );
    &body[..close]
}

#[test]
fn the_readme_first_tool_is_the_hello_example() {
    let readme = read("README.md");
    let shown = block(&readme, "## Your first tool", "rust");
    let example = read("examples/hello/main.rs");
    assert_eq!(
        shown, example,
        "the README's first tool and examples/hello/main.rs differ: change both"
    );
    assert!(
        shown.lines().count() <= 21,
        "the first tool stays short: {} lines",
        shown.lines().count()
    );
}

#[test]
fn the_readme_first_tool_names_every_dependency_it_uses() {
    let readme = read("README.md");
    let deps = block(&readme, "## Your first tool", "toml");
    let program = block(&readme, "## Your first tool", "rust");
    assert!(deps.starts_with("[dependencies]\n"), "{deps}");
    let line = |name: &str| {
        deps.lines()
            .find(|l| l.starts_with(&format!("{name} =")))
            .unwrap_or_else(|| panic!("{name} is not in the [dependencies] block: {deps}"))
    };
    // Every crate the program names at a path root is a dependency.
    for (used, name) in [
        ("fusion_runtime::", "fusion-runtime"),
        ("serde::", "serde"),
        ("tokio::", "tokio"),
    ] {
        assert!(program.contains(used), "{used} in the program");
        line(name);
    }
    assert!(line("serde").contains("\"derive\""), "{deps}");
    let tokio = line("tokio");
    assert!(
        tokio.contains("\"macros\"") && tokio.contains("\"rt-multi-thread\""),
        "{deps}"
    );
    // `scripts/first-tool` replaces this exact line with the checkout's path.
    assert!(
        deps.contains("fusion-runtime = \"0.1\"\n"),
        "scripts/first-tool looks for `fusion-runtime = \"0.1\"`: {deps}"
    );
    assert_eq!(
        deps.lines().filter(|l| l.contains(" = ")).count(),
        3,
        "only the three crates: {deps}"
    );
}
