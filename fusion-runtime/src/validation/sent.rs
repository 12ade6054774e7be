use serde_json::Value;

/// Longest "You sent" rendering of a string or object, in characters.
const MAX_SENT: usize = 50;

/// `s` in single quotes, cut to 50 characters (47 and `...`) on a character boundary.
pub fn quote_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_SENT * 4) + 2);
    out.push('\'');
    push_cut(&mut out, s);
    out.push('\'');
    out
}

fn push_cut(out: &mut String, s: &str) {
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
    match value {
        Value::String(s) => quote_str(s),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        Value::Array(items) => format!("array({})", items.len()),
        Value::Object(_) => {
            let json = value.to_string();
            let mut out = String::with_capacity(json.len().min(MAX_SENT * 4));
            push_cut(&mut out, &json);
            out
        }
    }
}
