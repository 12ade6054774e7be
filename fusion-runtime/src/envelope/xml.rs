//! Escaping for everything Fusion writes into an envelope.
//!
//! Element content escapes only `&` and `<` (`>` and quotes stay readable for the model), plus
//! `]]>` → `]]&gt;`. Attribute values escape all five specials, and also tab, LF and CR as
//! character references so that attribute-value normalization cannot change them. In both,
//! characters XML 1.0 forbids (C0 controls other than tab/LF/CR, U+FFFE, U+FFFF) become U+FFFD.
//! Whatever the input, the output is well-formed and no input can open or close an element.

/// Whether XML 1.0 allows `c` in a document (surrogates cannot occur in a `char`).
#[inline]
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// `s` with every character XML forbids replaced by U+FFFD: what a round trip through an
/// envelope gives back.
pub fn replace_forbidden(s: &str) -> String {
    s.chars()
        .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
        .collect()
}

/// Bytes after which element content may need escaping: `&`, `<`, `>` (only after `]]`, but
/// the slow path decides), the C0 controls XML forbids, and `0xEF` (the lead byte of U+FFFE
/// and U+FFFF).
const TEXT_SPECIAL: [bool; 256] = special(false);
/// The same for attribute values: also `"`, `'`, tab, LF and CR.
const ATTR_SPECIAL: [bool; 256] = special(true);

const fn special(attr: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = matches!(c, b'&' | b'<' | b'>' | 0xEF)
            || (c < 0x20 && (attr || !matches!(c, b'\t' | b'\n' | b'\r')))
            || (attr && matches!(c, b'"' | b'\''));
        b += 1;
    }
    t
}

/// Appends `s` as element content.
pub fn push_text(out: &mut String, s: &str) {
    push_escaped(out, s, &TEXT_SPECIAL, false);
}

/// Appends `s` as a double-quoted attribute value (without the quotes).
pub fn push_attr(out: &mut String, s: &str) {
    push_escaped(out, s, &ATTR_SPECIAL, true);
}

/// Copies `s` in runs of bytes that need no escaping; each special byte is escaped (or copied,
/// for a `>` that does not end `]]>` in text and for a lead byte `0xEF` of an allowed
/// character).
#[inline]
fn push_escaped(out: &mut String, s: &str, table: &[bool; 256], attr: bool) {
    let bytes = s.as_bytes();
    let mut run = 0;
    let mut i = 0;
    loop {
        i = next_special(bytes, i, table, attr);
        let Some(&b) = bytes.get(i) else { break };
        let (replacement, len): (&str, usize) = match b {
            b'&' => ("&amp;", 1),
            b'<' => ("&lt;", 1),
            b'>' if attr || (i >= 2 && bytes[i - 2] == b']' && bytes[i - 1] == b']') => ("&gt;", 1),
            b'"' => ("&quot;", 1),
            b'\'' => ("&apos;", 1),
            b'\t' => ("&#9;", 1),
            b'\n' => ("&#10;", 1),
            b'\r' => ("&#13;", 1),
            // U+FFFE and U+FFFF are EF BF BE and EF BF BF; any other character starting with
            // 0xEF is allowed.
            0xEF if bytes.get(i + 1) == Some(&0xBF)
                && matches!(bytes.get(i + 2), Some(0xBE | 0xBF)) =>
            {
                ("\u{FFFD}", 3)
            }
            // The C0 controls XML forbids.
            c if c < 0x20 => ("\u{FFFD}", 1),
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[run..i]);
        out.push_str(replacement);
        i += len;
        run = i;
    }
    out.push_str(&s[run..]);
}

/// The position of the first byte from `i` on that `table` marks, or `bytes.len()`. Eight
/// bytes at a time while none of them can be special.
#[inline]
fn next_special(bytes: &[u8], mut i: usize, table: &[bool; 256], attr: bool) -> usize {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if may_be_special(u64::from_ne_bytes(word), attr)
            && let Some(k) = chunk.iter().position(|&b| table[usize::from(b)])
        {
            return i + k;
        }
        i += 8;
    }
    let rest = bytes.get(i..).unwrap_or_default();
    i + rest
        .iter()
        .position(|&b| table[usize::from(b)])
        .unwrap_or(rest.len())
}

/// Whether some byte of `w` is below 0x20, `&`, `<`, `>`, 0xEF, or (in attributes) a quote:
/// the bytes the tables mark, and tab, LF and CR.
#[inline]
fn may_be_special(w: u64, attr: bool) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Some byte of `x` is below `n` (n <= 0x80): the usual borrow test.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let has = |b: u8| below(w ^ (ONES * u64::from(b)), 1);
    let mut hit = below(w, 0x20) | has(b'&') | has(b'<') | has(b'>') | has(0xEF);
    if attr {
        hit |= has(b'"') | has(b'\'');
    }
    hit != 0
}

/// Appends `s` as element content, at most `max` bytes of it (escaped): a text that does not
/// fit is cut on a character boundary, outside any character reference, and ends with `...`.
pub fn push_text_within(out: &mut String, s: &str, max: usize) {
    push_within(out, s, max, push_text);
}

/// Appends `s` as an attribute value, at most `max` bytes of it, cut as in
/// [`push_text_within`].
pub fn push_attr_within(out: &mut String, s: &str, max: usize) {
    push_within(out, s, max, push_attr);
}

fn push_within(out: &mut String, s: &str, max: usize, push: fn(&mut String, &str)) {
    let start = out.len();
    // Escaping never shortens a text: `max + 1` bytes of `s` (the character boundary after
    // them) are enough to tell that it does not fit, whatever its length.
    let mut end = (max + 1).min(s.len());
    while !s.is_char_boundary(end) {
        end += 1;
    }
    push(out, &s[..end]);
    if out.len() - start <= max {
        return;
    }
    let mut cut = start + max.saturating_sub(3);
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    // A reference is at most 6 bytes (`&quot;`): one cut open starts after the last `;`.
    let mut from = cut.saturating_sub(6).max(start);
    while !out.is_char_boundary(from) {
        from -= 1;
    }
    let tail = &out[from..cut];
    if let Some(amp) = tail.rfind('&')
        && !tail[amp..].contains(';')
    {
        cut -= tail.len() - amp;
    }
    out.truncate(cut);
    out.push_str(&"..."[..max.min(3)]);
}

/// `s` escaped as element content, in a new string.
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_text(&mut out, s);
    out
}

/// `s` escaped as an attribute value, in a new string.
pub fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_attr(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_only_amp_lt_and_cdata_end() {
        assert_eq!(
            escape_text(r#"a & b < c > d "e" 'f'"#),
            r#"a &amp; b &lt; c > d "e" 'f'"#
        );
        assert_eq!(escape_text("x ]]> y ]> ]]]>"), "x ]]&gt; y ]> ]]]&gt;");
        assert_eq!(escape_text("] ]>"), "] ]>");
    }

    #[test]
    fn forbidden_characters_become_replacement() {
        assert_eq!(
            escape_text("a\u{0}b\u{1b}c\tn\nr\r"),
            "a\u{FFFD}b\u{FFFD}c\tn\nr\r"
        );
        assert_eq!(
            escape_text("\u{FFFE}\u{FFFF}\u{FFFD}"),
            "\u{FFFD}\u{FFFD}\u{FFFD}"
        );
        assert_eq!(escape_attr("\u{7}\u{FFFF}"), "\u{FFFD}\u{FFFD}");
    }

    /// The character-by-character definition the byte-run escaper must match.
    fn reference(s: &str, attr: bool) -> String {
        let mut out = String::new();
        let mut brackets = 0usize;
        for c in s.chars() {
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' if attr || brackets >= 2 => out.push_str("&gt;"),
                '"' if attr => out.push_str("&quot;"),
                '\'' if attr => out.push_str("&apos;"),
                '\t' if attr => out.push_str("&#9;"),
                '\n' if attr => out.push_str("&#10;"),
                '\r' if attr => out.push_str("&#13;"),
                c if !is_xml_char(c) => out.push('\u{FFFD}'),
                c => out.push(c),
            }
            brackets = if c == ']' { brackets + 1 } else { 0 };
        }
        out
    }

    #[test]
    fn byte_runs_match_the_character_definition() {
        let pieces = [
            "a",
            "]",
            "]]",
            ">",
            "&",
            "<",
            "\"",
            "'",
            "\t",
            "\n",
            "\r",
            "\u{0}",
            "\u{1f}",
            "\u{7f}",
            "\u{ef}",
            "\u{fefe}",
            "\u{fffd}",
            "\u{fffe}",
            "\u{ffff}",
            "\u{f000}",
            "\u{10000}",
            "é",
        ];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    for d in ["", "]", ">", "x"] {
                        let s = format!("{a}{b}{c}{d}");
                        assert_eq!(escape_text(&s), reference(&s, false), "text {s:?}");
                        assert_eq!(escape_attr(&s), reference(&s, true), "attr {s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn word_scan_finds_specials_at_every_offset() {
        let pieces = [
            "]]>", ">", "&", "<", "\"", "'", "\t", "\n", "\u{1}", "\u{fffe}", "\u{ffff}",
            "\u{fefe}", "é",
        ];
        let filler = "abcdefghijklmnopqrstuvwxyz0123456789";
        for p in pieces {
            for before in 0..20 {
                for after in [0, 1, 7, 8, 9, 17] {
                    let s = format!("{}{p}{}", &filler[..before], &filler[..after]);
                    assert_eq!(escape_text(&s), reference(&s, false), "text {s:?}");
                    assert_eq!(escape_attr(&s), reference(&s, true), "attr {s:?}");
                    let twice = format!("{s}{s}");
                    assert_eq!(
                        escape_text(&twice),
                        reference(&twice, false),
                        "text {twice:?}"
                    );
                    assert_eq!(
                        escape_attr(&twice),
                        reference(&twice, true),
                        "attr {twice:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn within_cuts_escaped_text_outside_references() {
        let mut out = String::new();
        push_text_within(&mut out, "short", 16);
        assert_eq!(out, "short");
        for max in 0..40 {
            for s in [
                "a&b<c>d\"e'f".repeat(5),
                "é".repeat(30),
                "\u{1}x".repeat(20),
            ] {
                for attr in [false, true] {
                    let mut out = String::from("<");
                    if attr {
                        push_attr_within(&mut out, &s, max);
                    } else {
                        push_text_within(&mut out, &s, max);
                    }
                    let pushed = &out[1..];
                    assert!(pushed.len() <= max, "{max} {pushed:?}");
                    let full = if attr {
                        escape_attr(&s)
                    } else {
                        escape_text(&s)
                    };
                    if full.len() <= max {
                        assert_eq!(pushed, full);
                    } else {
                        let kept = pushed.trim_end_matches('.');
                        assert!(full.starts_with(kept), "{max} {pushed:?}");
                        let open = kept.rfind('&').is_some_and(|a| !kept[a..].contains(';'));
                        assert!(!open, "a reference is cut: {pushed:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn attributes_escape_all_five_and_whitespace() {
        assert_eq!(escape_attr(r#"k&<>"'"#), "k&amp;&lt;&gt;&quot;&apos;");
        assert_eq!(escape_attr("a\tb\nc\rd"), "a&#9;b&#10;c&#13;d");
    }
}
