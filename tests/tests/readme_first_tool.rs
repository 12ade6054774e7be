//! The README's "Your first tool": its `main.rs` block is `examples/hello/main.rs` byte for
//! byte, and its `[dependencies]` block names every crate that program uses, with the features
//! it needs. `scripts/first-tool` builds the two blocks as written in a fresh crate and calls
//! the tool over stdio; this test keeps the example (which the workspace builds) the same code.
//! The envelopes the README's first screen shows are what that server answers, byte for byte:
//! a name it does not register, or a line it no longer writes, fails here.

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

// The README's first tool, compiled here as it is in `examples/hello` (the test harness
// brings its own `main`).
include!("../../examples/hello/main.rs");

/// Each `cargo run -- call TOOL 'JSON'` block above the first tool, with the `xml` block that
/// follows it: what the README says the model reads.
fn shown_calls(readme: &str) -> Vec<(String, serde_json::Value, String)> {
    let top = &readme[..readme.find("## Your first tool").unwrap_or(readme.len())];
    let mut shown = Vec::new();
    let mut rest = top;
    while let Some(at) = rest.find("```sh\ncargo run -- call ") {
        let after = &rest[at + "```sh\ncargo run -- call ".len()..];
        let Some(line_end) = after.find('\n') else {
            panic!("an unterminated call line")
        };
        let line = &after[..line_end];
        let Some((tool, json)) = line.split_once(' ') else {
            panic!("`{line}`: a tool and its arguments")
        };
        let json = json.trim().trim_matches('\'');
        let arguments: serde_json::Value =
            serde_json::from_str(json).unwrap_or_else(|e| panic!("`{json}`: {e}"));
        let envelope = block(after, "", "xml");
        shown.push((tool.to_string(), arguments, envelope.to_string()));
        rest = &after[line_end..];
        rest = &rest[rest.find("```xml").map_or(rest.len(), |x| x + 6)..];
    }
    shown
}

#[tokio::test(flavor = "current_thread")]
async fn the_readme_shows_what_its_first_tool_answers() {
    use fusion_runtime::testing::TestServer;

    let readme = read("README.md");
    let shown = shown_calls(&readme);
    let tools: Vec<&str> = shown.iter().map(|(tool, _, _)| tool.as_str()).collect();
    assert_eq!(
        tools,
        ["greet", "gret"],
        "the first screen shows greet's misspelt key and a misspelt tool"
    );
    // As the example's `main` builds it.
    let kit = TestServer::build(Server::builder().name("hello").action::<GreetAction>())
        .unwrap_or_else(|e| panic!("{e}"));
    for (tool, arguments, envelope) in shown {
        let call = kit.call_tool(&tool, arguments.clone()).await;
        assert!(call.is_error(), "{tool} {arguments}: an error");
        let answered = call.response().texts().collect::<Vec<_>>().join("\n");
        assert_eq!(
            format!("{answered}\n"),
            envelope,
            "the README shows another answer than the server sends for {tool} {arguments}"
        );
    }
}
