//! A string that a regular expression matches: the shortest walk through its syntax tree
//! (`regex-syntax`'s HIR), taking each repetition's minimum, each alternation's first branch
//! and each class's first letter or digit. Used by the generator for valid baselines and by
//! the reader for "Expected a string matching …".

use regex_syntax::hir::{Class, Hir, HirKind};

/// A string `pattern` matches, or `None` when the pattern does not parse or needs something
/// this walk cannot produce (an empty class, a byte class outside ASCII).
pub fn sample(pattern: &str) -> Option<String> {
    let hir = regex_syntax::parse(pattern).ok()?;
    let mut out = String::new();
    walk(&hir, &mut out).then_some(out)
}

fn walk(hir: &Hir, out: &mut String) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(lit) => match std::str::from_utf8(&lit.0) {
            Ok(s) => {
                out.push_str(s);
                true
            }
            Err(_) => false,
        },
        HirKind::Class(class) => match pick(class) {
            Some(c) => {
                out.push(c);
                true
            }
            None => false,
        },
        HirKind::Repetition(rep) => (0..rep.min).all(|_| walk(&rep.sub, out)),
        HirKind::Capture(cap) => walk(&cap.sub, out),
        HirKind::Concat(parts) => parts.iter().all(|p| walk(p, out)),
        HirKind::Alternation(branches) => branches.first().is_some_and(|b| walk(b, out)),
    }
}

/// The class's first ASCII letter or digit, else its first character.
fn pick(class: &Class) -> Option<char> {
    let ranges: Vec<(char, char)> = match class {
        Class::Unicode(u) => u.ranges().iter().map(|r| (r.start(), r.end())).collect(),
        Class::Bytes(b) => b
            .ranges()
            .iter()
            .filter(|r| r.start().is_ascii())
            .map(|r| (char::from(r.start()), char::from(r.end().min(0x7f))))
            .collect(),
    };
    let nice = ranges.iter().find_map(|&(lo, hi)| {
        ['a', 'A', '0']
            .into_iter()
            .find(|&c| lo <= c && c <= hi)
            .or_else(|| (lo..=hi).find(char::is_ascii_alphanumeric))
    });
    nice.or_else(|| ranges.first().map(|&(lo, _)| lo))
}

#[cfg(test)]
mod tests {
    use super::sample;

    #[test]
    fn samples_match_their_pattern() {
        for p in [
            "^inv_[0-9]{4}_[0-9]{4}$",
            "^acc_[a-z0-9]{6,12}$",
            "^(eu|us)-[a-z]+-\\d$",
            "^[A-Z]{2}\\.[^ ]?x+$",
        ] {
            let s = sample(p).unwrap_or_else(|| panic!("no sample for {p}"));
            let re = regex::Regex::new(p).unwrap_or_else(|e| panic!("{e}"));
            assert!(re.is_match(&s), "{s:?} does not match {p}");
        }
    }
}
