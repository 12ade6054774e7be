//! The Markdown a reader opens on GitHub: `README.md`, every `docs/*.md` guide and `llms.txt`.
//! Every relative link resolves to a file of the repository (and a `#anchor` to a heading of
//! it), and every Rust block shows its code: at most three hidden `# ` lines each.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Hidden lines a Rust block may have: the few a reader does not miss (a `main`, a `?` type).
const MAX_HIDDEN: usize = 3;

/// The checked documents: the README, the guides, `llms.txt`.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut docs = vec![root.join("README.md"), root.join("llms.txt")];
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap_or_else(|e| panic!("docs/: {e}"))
        .map(|entry| entry.unwrap_or_else(|e| panic!("docs/: {e}")).path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    guides.sort();
    docs.extend(guides);
    docs
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A line of a document, with whether it sits inside a fenced block and that block's info.
struct Line<'a> {
    number: usize,
    text: &'a str,
    /// `Some(info)` inside a fence (the fence lines themselves are `None`).
    fence: Option<&'a str>,
}

/// The document's lines, fences tracked (```` ``` ```` and `~~~`, as CommonMark opens them).
fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut open: Option<(&str, &str)> = None; // (marker, info)
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match open {
            Some((marker, info)) => {
                if trimmed.starts_with(marker) && trimmed.trim_end() == marker {
                    open = None;
                    out.push(Line {
                        number: i + 1,
                        text: line,
                        fence: None,
                    });
                } else {
                    out.push(Line {
                        number: i + 1,
                        text: line,
                        fence: Some(info),
                    });
                }
            }
            None => {
                for marker in ["```", "~~~"] {
                    if let Some(info) = trimmed.strip_prefix(marker) {
                        open = Some((marker, info.trim()));
                    }
                }
                out.push(Line {
                    number: i + 1,
                    text: line,
                    fence: None,
                });
            }
        }
    }
    out
}

/// Whether rustdoc reads a block with this info string as Rust (no language is Rust).
fn is_rust(info: &str) -> bool {
    info.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .all(|w| {
            matches!(
                w,
                "rust" | "ignore" | "no_run" | "should_panic" | "compile_fail" | "test_harness"
            ) || w.starts_with("edition")
        })
}

/// Whether rustdoc hides this line of a Rust block: `# code` or a lone `#`.
fn is_hidden(line: &str) -> bool {
    let t = line.trim_start();
    t == "#" || t.starts_with("# ")
}

/// `line` without its inline code spans (a link inside backticks is text). `in_code` carries
/// a span open at the end of a line to the next line of the paragraph; a blank line ends it.
fn without_code_spans(line: &str, in_code: &mut bool) -> String {
    if line.trim().is_empty() {
        *in_code = false;
    }
    let mut out = String::new();
    for c in line.chars() {
        if c == '`' {
            *in_code = !*in_code;
        } else if !*in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links `[text](target)` and images on a line, and of a reference
/// definition `[label]: target`; `in_code` as in [`without_code_spans`].
fn link_targets(line: &str, in_code: &mut bool) -> Vec<String> {
    let line = without_code_spans(line, in_code);
    let mut out = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.trim_matches(['<', '>']).to_owned());
        rest = &after[end..];
    }
    let t = line.trim_start();
    if t.starts_with('[')
        && let Some(close) = t.find("]:")
        && !t[..close].contains('(')
        && let Some(target) = t[close + 2..].split_whitespace().next()
    {
        out.push(target.to_owned());
    }
    out
}

/// GitHub's anchor of a heading: lower case, inline markup and punctuation dropped (but `-`
/// and `_`), spaces as `-`.
fn slug(heading: &str) -> String {
    // A link in a heading anchors as its text.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown document's headings, with GitHub's `-1`, `-2` for repeats.
fn anchors(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for line in lines(text) {
        if line.fence.is_some() {
            continue;
        }
        let t = line.text.trim_start();
        let level = t.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&level) && t[level..].starts_with(' ') {
            let base = slug(t[level..].trim().trim_end_matches('#'));
            let mut anchor = base.clone();
            let mut n = 0;
            while out.contains(&anchor) {
                n += 1;
                anchor = format!("{base}-{n}");
            }
            out.insert(anchor);
        }
    }
    out
}

/// The broken relative links of one document, one line each.
fn broken_links(doc: &Path, text: &str) -> Vec<String> {
    let dir = doc.parent().unwrap_or(Path::new(ROOT));
    let mut broken = Vec::new();
    let mut in_code = false;
    for line in lines(text) {
        if line.fence.is_some() {
            in_code = false;
            continue;
        }
        for target in link_targets(line.text, &mut in_code) {
            if target.is_empty()
                || target.contains("://")
                || target.starts_with("mailto:")
                || target.starts_with("crate::")
                || !target.contains(['.', '/', '#'])
            {
                // Absolute URLs, and rustdoc's intra-doc paths (the README is also rustdoc).
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                doc.to_path_buf()
            } else {
                dir.join(file)
            };
            let at = format!("{}:{}: `{target}`", doc.display(), line.number);
            if !path.exists() {
                broken.push(format!("{at}: no file {}", path.display()));
                continue;
            }
            if let Some(anchor) = anchor
                && path.extension().is_some_and(|x| x == "md")
                && !anchors(&read(&path)).contains(anchor)
            {
                broken.push(format!("{at}: no heading with anchor #{anchor}"));
            }
        }
    }
    broken
}

/// The Rust blocks of one document with more than [`MAX_HIDDEN`] hidden lines.
fn overhidden_blocks(doc: &Path, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None; // (first line, hidden)
    for line in lines(text) {
        match (line.fence, &mut current) {
            (Some(info), Some((_, hidden))) if is_rust(info) => {
                *hidden += usize::from(is_hidden(line.text));
            }
            (Some(info), None) if is_rust(info) => {
                current = Some((line.number, usize::from(is_hidden(line.text))));
            }
            (None, Some((first, hidden))) => {
                if *hidden > MAX_HIDDEN {
                    out.push(format!(
                        "{}:{first}: {hidden} hidden lines (at most {MAX_HIDDEN})",
                        doc.display()
                    ));
                }
                current = None;
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    for doc in documents() {
        broken.extend(broken_links(&doc, &read(&doc)));
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_rust_block_shows_its_code() {
    let mut over = Vec::new();
    for doc in documents() {
        over.extend(overhidden_blocks(&doc, &read(&doc)));
    }
    assert!(
        over.is_empty(),
        "blocks hiding their code:\n{}",
        over.join("\n")
    );
}

#[test]
fn the_checks_catch_what_they_look_for() {
    let doc = Path::new(ROOT).join("docs/errors.md");
    // A link from inside docs/ written as if from the root, a missing heading, a good one.
    let text = "See [ops](docs/operations.md), [x](envelope.md#no-such-heading), \
                [y](operations.md) and `[z](nowhere.md)`.\n";
    let broken = broken_links(&doc, text);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].contains("docs/operations.md"), "{broken:?}");
    assert!(broken[1].contains("#no-such-heading"), "{broken:?}");
    // A code span that wraps onto the next line does not hide the link after it.
    let text = "Flags `--metrics\nADDR`: see [ops](docs/operations.md).\n";
    assert_eq!(broken_links(&doc, text).len(), 1);
    // Four hidden lines in a Rust block; a `toml` block and `#[derive]` are not counted.
    let text =
        "```rust\n# a\n# b\n#\n# d\n#[derive(Debug)]\n```\n```toml\n# a\n# b\n# c\n# d\n```\n";
    let over = overhidden_blocks(&doc, text);
    assert_eq!(over.len(), 1, "{over:?}");
    assert!(over[0].contains("4 hidden lines"), "{over:?}");
    assert!(overhidden_blocks(&doc, "```\n# a\n# b\n# c\nfn main() {}\n```\n").is_empty());
}

#[test]
fn anchors_follow_github() {
    let a =
        anchors("# The `<tool_error>` envelope\n## Codes\n## Codes\n```\n# not a heading\n```\n");
    assert!(a.contains("the-tool_error-envelope"), "{a:?}");
    assert!(a.contains("codes") && a.contains("codes-1"), "{a:?}");
    assert!(!a.contains("not-a-heading"), "{a:?}");
}
