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

fn push_cut(out: &mut String, s: &str) {
    // Up to 50 bytes are at most 50 characters: no need to count them.
    if s.len() <= MAX_SENT {
        out.push_str(s);
        return;
    }
    match s.char_indices().nth(MAX_SENT) {
        None => out.push_str(s),
        Some(_) => {
            let end = s
                .char_indices()
                .nth(MAX_SENT - 3)
                .map_or(s.len(), |(i, _)| i);
            out.push_str(&s[..end]);
            out.push_str("...");
        }
    }
}

/// How a sent value is shown after `You sent:` (SPEC §4): strings quoted and cut to 50
/// characters, numbers and booleans as written, `null`, `array(N)`, objects as compact JSON
/// cut to 50 characters.
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
                push_u64(out, u);
            } else if let Some(i) = n.as_i64().filter(|i| *i != 0) {
                // (Not 0: with `arbitrary_precision`, `-0` reads as 0 but is written `-0`.)
                push_i64(out, i);
            } else {
                use std::fmt::Write as _;
                let _ = write!(out, "{n}");
            }
        }
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Null => out.push_str("null"),
        Value::Array(items) => {
            out.push_str("array(");
            push_u64(out, items.len() as u64);
            out.push(')');
        }
        Value::Object(_) => push_cut(out, &value.to_string()),
    }
}

/// Appends `n` in decimal.
pub(crate) fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[start..] {
        out.push(char::from(d));
    }
}

/// Appends `n` in decimal.
pub(crate) fn push_i64(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_u64(out, n.unsigned_abs());
}
