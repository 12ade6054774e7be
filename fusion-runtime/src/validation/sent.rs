use std::fmt::Write as _;

use serde_json::Value;

/// Longest "You sent" rendering of a string or object, in characters.
const MAX_SENT: usize = 50;

/// `s` in single quotes, cut to 50 characters (47 and `...`) on a character boundary.
pub fn quote_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_SENT * 4) + 2);
    push_quoted(&mut out, s);
    out
}

/// Appends [`quote_str`]`(s)`.
pub(crate) fn push_quoted(out: &mut String, s: &str) {
    out.push('\'');
    push_cut(out, s);
    out.push('\'');
}

/// Appends `s` cut to 50 characters (47 and `...`).
pub(crate) fn push_cut(out: &mut String, s: &str) {
    match cut_at(s, MAX_SENT) {
        None => out.push_str(s),
        Some(end) => {
            out.push_str(&s[..end]);
            out.push_str("...");
        }
    }
}

/// Where `s` is cut (after `max - 3` characters) when it has more than `max`.
pub(crate) fn cut_at(s: &str, max: usize) -> Option<usize> {
    // Up to `max` bytes are at most `max` characters: no need to count them.
    if s.len() <= max {
        return None;
    }
    s.char_indices().nth(max)?;
    s.char_indices().nth(max - 3).map(|(i, _)| i)
}

/// A sent value as `You sent:` shows it (SPEC §4): strings quoted, objects as compact JSON,
/// both cut to 50 characters; `array(N)`; anything else as written.
pub fn describe_sent(value: &Value) -> String {
    let mut out = String::new();
    push_sent(&mut out, value);
    out
}

/// Appends [`describe_sent`]`(value)`.
pub(crate) fn push_sent(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => push_quoted(out, s),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                push_int(out, u);
            } else if let Some(i) = n.as_i64().filter(|i| *i != 0) {
                // (Not 0: with `arbitrary_precision`, `-0` reads as 0 but is written `-0`.)
                push_int(out, i);
            } else {
                let _ = write!(out, "{n}");
            }
        }
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Null => out.push_str("null"),
        Value::Array(items) => {
            out.push_str("array(");
            push_int(out, items.len());
            out.push(')');
        }
        Value::Object(_) => push_cut(out, &compact_prefix(value)),
    }
}

/// Bytes of compact JSON enough to show any value cut to [`MAX_SENT`] characters (at most 4
/// bytes a character, and one maybe cut).
const SENT_PREFIX: usize = 4 * (MAX_SENT + 1) + 4;

/// The start of `value`'s compact JSON, cut on a character boundary after [`SENT_PREFIX`]
/// bytes: the writer stops serde_json then, so a large value costs only its first bytes.
fn compact_prefix(value: &Value) -> String {
    struct Prefix(Vec<u8>);
    impl std::io::Write for Prefix {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = (SENT_PREFIX + 1).saturating_sub(self.0.len());
            if room == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Prefix(Vec::with_capacity(64));
    // An error only says the prefix is full.
    let _ = serde_json::to_writer(&mut w, value);
    // Cut on the last whole character.
    let valid = std::str::from_utf8(&w.0).map_or_else(|e| e.valid_up_to(), str::len);
    String::from_utf8_lossy(&w.0[..valid]).into_owned()
}

/// Appends `n` in decimal.
pub(crate) fn push_int(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// Appends a number as a model reads it: integers without a fraction.
pub(crate) fn push_number(out: &mut String, n: f64) {
    if n.fract() == 0.0 && n.abs() < 1e16 {
        push_int(out, n as i64);
    } else {
        let _ = write!(out, "{n}");
    }
}
