//! URI templates, RFC 6570 level 1: literal text and `{name}` variables. A variable matches
//! one or more characters other than `/`, `?` and `#`, percent-decoded; matching is linear in
//! the URI's length (each variable ends at the first occurrence of the literal after it).

use std::fmt;

/// A parsed URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

/// Why a template cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError(String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses `text`: `{name}` variables (ASCII letters, digits, `_`), two of them never
    /// side by side, each name once.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let err = |m: String| TemplateError(format!("URI template `{text}`: {m}"));
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(i) if rest.as_bytes()[i] == b'}' => {
                    return Err(err("`}` without `{`".into()));
                }
                Some(i) => {
                    if i > 0 {
                        parts.push(Part::Literal(rest[..i].to_owned()));
                    }
                    let after = &rest[i + 1..];
                    let Some(end) = after.find('}') else {
                        return Err(err("`{` without `}`".into()));
                    };
                    let name = &after[..end];
                    if name.is_empty()
                        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        return Err(err(format!(
                            "`{{{name}}}` is not a level-1 variable: write `{{name}}` with ASCII letters, digits and `_`"
                        )));
                    }
                    if matches!(parts.last(), Some(Part::Var(_))) {
                        return Err(err(format!(
                            "`{{{name}}}` follows another variable: put literal text between them"
                        )));
                    }
                    if parts.iter().any(|p| matches!(p, Part::Var(v) if v == name)) {
                        return Err(err(format!("`{{{name}}}` appears twice")));
                    }
                    parts.push(Part::Var(name.to_owned()));
                    rest = &after[end + 1..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether it has a variable.
    pub fn is_template(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Var(_)))
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values when `uri` matches, percent-decoded; `None` otherwise.
    pub fn matches(&self, uri: &str) -> Option<Vec<(&str, String)>> {
        let mut rest = uri;
        let mut out = Vec::new();
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Var(name) => {
                    let stop = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => {
                            // At least one character, then the next literal, within the
                            // characters a variable may take (or right at the stop).
                            let window = &rest[..stop];
                            let first = window.chars().next().map_or(0, char::len_utf8);
                            if first == 0 {
                                return None;
                            }
                            match window[first..].find(next.as_str()) {
                                Some(i) => i + first,
                                None if rest[stop..].starts_with(next.as_str()) => stop,
                                None => return None,
                            }
                        }
                        _ => stop,
                    };
                    if end == 0 {
                        return None;
                    }
                    let raw = &rest[..end];
                    let value = percent_encoding::percent_decode_str(raw)
                        .decode_utf8()
                        .ok()?
                        .into_owned();
                    out.push((name.as_str(), value));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> UriTemplate {
        match UriTemplate::parse(s) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn level_one_variables_match_one_segment() {
        let inv = t("billing://invoices/{id}");
        assert_eq!(
            inv.matches("billing://invoices/inv_2026_0001"),
            Some(vec![("id", "inv_2026_0001".to_owned())])
        );
        assert_eq!(inv.matches("billing://invoices/"), None);
        assert_eq!(inv.matches("billing://invoices/a/b"), None);
        assert_eq!(inv.matches("billing://invoice/a"), None);
        assert_eq!(
            inv.matches("billing://invoices/caf%C3%A9"),
            Some(vec![("id", "café".to_owned())])
        );
        assert_eq!(inv.matches("billing://invoices/%FF"), None);

        let data = t("test://template/{id}/data");
        assert_eq!(
            data.matches("test://template/123/data"),
            Some(vec![("id", "123".to_owned())])
        );
        assert_eq!(data.matches("test://template/123/other"), None);
        assert_eq!(data.matches("test://template//data"), None);

        let two = t("x://{a}-{b}.json");
        assert_eq!(
            two.matches("x://one-two.json"),
            Some(vec![("a", "one".to_owned()), ("b", "two".to_owned())])
        );
        assert_eq!(two.variables().collect::<Vec<_>>(), ["a", "b"]);
        assert!(!t("x://static").is_template());
        assert_eq!(t("x://static").matches("x://static"), Some(vec![]));
    }

    #[test]
    fn templates_outside_level_one_are_refused() {
        for bad in [
            "x://{",
            "x://}",
            "x://{}",
            "x://{+path}",
            "x://{a,b}",
            "x://{a}{b}",
            "x://{a}/{a}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
