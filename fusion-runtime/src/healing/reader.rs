//! The repairer: a generic reader of Fusion's envelope grammar (SPEC §1, §4). It is given
//! the call that was refused and the answer's text, and nothing else — no schema, no list
//! of tools, no knowledge of any action or field — and returns the call it would send next.
//!
//! From a `<validation_error>` it reads each `<field name="path">` line: "did you mean" renames
//! a key, "Expected only: …" drops the keys not listed, and every other line's "Expected …"
//! text is turned into a value ([`synthesize`]). From a `<tool_error>` naming available
//! actions it replaces the name the server did not know (the tool's, or an argument's value)
//! by the closest one listed, spelled as the envelope spells it. Text that is not an
//! envelope (a bare rmcp server's serde message) is read where it names a field or a value
//! ([`read_plain`]).

use crate::client::{Envelope, parse_envelope};
use crate::validation::rules::properties::{EACH, NULL_OR, OPTIONAL, WITH};
use serde_json::{Map, Value};

use super::pattern;

/// A `tools/call`: the tool's name and its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The tool name.
    pub tool: String,
    /// The arguments (an object).
    pub args: Value,
}

/// The call to send after `call` was answered with `answer`, or `None` when the answer gives
/// nothing to act on (or only what would send the same call again).
pub fn repair(call: &Call, answer: &str) -> Option<Call> {
    let next = match parse_envelope(answer) {
        Ok(Envelope::Validation(v)) => {
            let lines: Vec<(String, String)> =
                v.fields.into_iter().map(|f| (f.name, f.text)).collect();
            repair_fields(call, &lines)
        }
        Ok(Envelope::Tool(e)) => repair_routing(call, &e),
        Err(_) => read_plain(call, answer),
    }?;
    (next != *call).then_some(next)
}

/// Applies the `<field>` lines: key renames and drops first, then values.
fn repair_fields(call: &Call, lines: &[(String, String)]) -> Option<Call> {
    let mut args = call.args.clone();
    for (path, text) in lines {
        let allowed = match text.split_once("Expected only: ") {
            Some((_, rest)) => Some(quoted(rest)),
            None if text.ends_with("Expected no properties.") => Some(Vec::new()),
            None => None,
        };
        if let Some(allowed) = allowed {
            let Some(Value::Object(obj)) = lookup_mut(&mut args, path) else {
                continue;
            };
            let unknown: Vec<String> = obj
                .keys()
                .filter(|k| !allowed.contains(k))
                .cloned()
                .collect();
            for key in unknown {
                let value = obj.remove(&key);
                let meant = text
                    .split_once(&format!("'{key}' (did you mean '"))
                    .and_then(|(_, rest)| rest.split_once('\''))
                    .map(|(m, _)| m.to_owned());
                if let (Some(meant), Some(value)) = (meant, value)
                    && !obj.contains_key(&meant)
                {
                    obj.insert(meant, value);
                }
            }
        }
    }
    for (path, text) in lines {
        if text.contains("Expected only: ") || text.ends_with("Expected no properties.") {
            continue;
        }
        let Some(expected) = expected_text(text) else {
            continue;
        };
        let missing = text.starts_with("Required field is missing");
        let current = lookup_mut(&mut args, path).map(|v| v.clone());
        if missing && current.is_some() {
            // Filled by a rename above.
            continue;
        }
        if let Some(value) = synthesize(expected, current.as_ref()) {
            set(&mut args, path, value);
        }
    }
    Some(Call {
        tool: call.tool.clone(),
        args,
    })
}

/// `UNKNOWN_ACTION`, `MISSING_DISCRIMINATOR` and other envelopes that list actions: the name
/// the server did not know (its `requested` detail: the tool's name or an argument's value) is
/// replaced by the `closest` detail, else by the nearest listed action; a missing
/// `discriminator` key is added with the `closest` (or first) action.
fn repair_routing(call: &Call, e: &crate::ToolError) -> Option<Call> {
    let available = e.action_list();
    let nearest = |sent: &str| {
        available
            .iter()
            .min_by_key(|a| strsim::levenshtein(sent, a))
            .cloned()
    };
    let closest = e.detail_value("closest").map(str::to_owned);
    let mut next = call.clone();
    if let Some(requested) = e.detail_value("requested") {
        let fix = closest.clone().or_else(|| nearest(requested))?;
        if call.tool == requested {
            next.tool = fix;
        } else if let Value::Object(obj) = &mut next.args {
            let key = obj
                .iter()
                .find(|(_, v)| v.as_str() == Some(requested))
                .map(|(k, _)| k.clone())?;
            obj.insert(key, Value::String(fix));
        }
    } else if let Some(key) = e.detail_value("discriminator") {
        let pick = closest.or_else(|| available.first().cloned())?;
        if let Value::Object(obj) = &mut next.args {
            obj.insert(key.to_owned(), Value::String(pick));
        }
    } else {
        // No details: the tool's name, if the message quotes it, else nothing to go on.
        if !e.message().contains(&format!("'{}'", call.tool)) {
            return None;
        }
        next.tool = nearest(&call.tool)?;
    }
    Some(next)
}

/// The "Expected …" text of a `<field>` line, without its final period.
fn expected_text(text: &str) -> Option<&str> {
    let at = text.rfind("Expected ")?;
    let rest = &text[at + "Expected ".len()..];
    Some(rest.strip_suffix('.').unwrap_or(rest))
}

/// The strings in single quotes in `text`, in order.
fn quoted(text: &str) -> Vec<String> {
    text.split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// A value meeting `expected` (the text after "Expected "), kept as close to `current` (what
/// was sent, `None` when missing) as the text allows.
pub fn synthesize(expected: &str, current: Option<&Value>) -> Option<Value> {
    let mut budget = MAX_BUILT;
    synthesize_within(expected, current, 0, &mut budget)
}

/// How many objects, items and shapes deep the reader follows a line's words: a server's text
/// can nest them without end.
const MAX_WORDS_DEPTH: usize = 16;

/// How many keys and items the reader builds for one line at most: a server's text can ask
/// for a thousand items of a thousand items.
const MAX_BUILT: usize = 10_000;

fn synthesize_within(
    expected: &str,
    current: Option<&Value>,
    depth: usize,
    budget: &mut usize,
) -> Option<Value> {
    if depth > MAX_WORDS_DEPTH || *budget == 0 {
        return None;
    }
    *budget -= 1;
    // An object's keys and an array's items first: their rules hold every other phrase.
    let object = expected.strip_prefix(NULL_OR).unwrap_or(expected);
    if let Some(keys) = object.strip_prefix(WITH) {
        return Some(build_object(keys, current, depth, budget));
    }
    if object.starts_with("an object of ") && object.contains(" listed at ") {
        return Some(Value::Object(as_object(current).unwrap_or_default()));
    }
    if let [count, each] = split_top(expected, EACH, 2)[..]
        && (each.starts_with(WITH) || each.starts_with(NULL_OR))
    {
        return Some(build_items(count, each, current, depth, budget));
    }
    let lower = expected.to_ascii_lowercase();
    if let Some((_, rest)) = expected.split_once("one of: ") {
        let options = if rest.starts_with('\'') {
            quoted(rest)
        } else {
            Vec::new()
        };
        if options.is_empty() {
            // Shapes, not values ("an object; null"): the first one the sent value converts to.
            return split_top(rest, "; ", usize::MAX)
                .into_iter()
                .filter(|shape| !shape.trim().starts_with("null"))
                .find_map(|shape| synthesize_within(shape.trim(), current, depth + 1, budget))
                .or(Some(Value::Null));
        }
        let sent = current.map(|c| match c {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let best = match sent {
            Some(sent) => options
                .iter()
                .min_by_key(|o| strsim::levenshtein(&sent, o))
                .cloned(),
            None => options.first().cloned(),
        };
        return best.map(Value::String);
    }
    if let Some((_, rest)) = expected.split_once("exactly '") {
        return rest
            .split_once('\'')
            .map(|(v, _)| Value::String(v.to_owned()));
    }
    if let Some((_, re)) = expected.split_once("matching ") {
        return pattern::sample(re.trim()).map(Value::String);
    }
    if let Some(example) = example_in(expected) {
        return Some(Value::String(example));
    }
    if let Some(v) = format_value(&lower) {
        return Some(Value::String(v.to_owned()));
    }
    if let Some(v) = bound(&lower) {
        return Some(v);
    }
    if let Some(n) = number_after(&lower, "multiple of ") {
        let sent = current.and_then(Value::as_f64).unwrap_or(n);
        let k = (sent / n).round().max(1.0);
        return Some(number(k * n));
    }
    if let Some(v) = length(&lower, current) {
        return Some(v);
    }
    convert(&lower, current)
}

/// `text` split at each `sep` outside parentheses (a key's rule is in parentheses, and may
/// hold the separator itself), into `max` parts at most; a `\\` escapes the character after
/// it, as in a pattern.
fn split_top<'t>(text: &'t str, sep: &str, max: usize) -> Vec<&'t str> {
    let (mut parts, mut depth, mut start, mut escaped) = (Vec::new(), 0usize, 0, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0
                && i >= start
                && parts.len() + 1 < max
                && text[i..].starts_with(sep) =>
            {
                parts.push(&text[start..i]);
                start = i + sep.len();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// What was sent, as an object: itself, the one object of a one-item array, or an object
/// written as a JSON string.
fn as_object(current: Option<&Value>) -> Option<Map<String, Value>> {
    match current? {
        Value::Object(o) => Some(o.clone()),
        Value::Array(a) if a.len() == 1 => as_object(a.first()),
        Value::String(s) => match serde_json::from_str(s.trim()) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

/// An object from its keys' list (`sku (a string matching …), quantity (…), note (optional,
/// …), and 3 more keys, …`): what was sent kept where it was an object, each required key
/// not there made from its rule, the optional ones left out.
fn build_object(keys: &str, current: Option<&Value>, depth: usize, budget: &mut usize) -> Value {
    let mut out = as_object(current).unwrap_or_default();
    for entry in split_top(keys, ", ", usize::MAX) {
        let Some((key, rule)) = entry
            .split_once(" (")
            .and_then(|(k, r)| Some((k.trim(), r.strip_suffix(')')?)))
        else {
            continue;
        };
        if rule.starts_with(OPTIONAL) || out.contains_key(key) {
            continue;
        }
        if let Some(value) = synthesize_within(rule, None, depth + 1, budget) {
            out.insert(key.to_owned(), value);
        }
    }
    Value::Object(out)
}

/// An array of objects from its count (`at least 2 items`, `an array of 1 to 20 items`) and
/// what each item takes: what was sent kept, items made from the words added up to the count.
fn build_items(
    count: &str,
    each: &str,
    current: Option<&Value>,
    depth: usize,
    budget: &mut usize,
) -> Value {
    let mut items = match current {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Object(o)) => vec![Value::Object(o.clone())],
        _ => Vec::new(),
    };
    let lower = count.to_ascii_lowercase();
    let n = number_after(&lower, "at least ")
        .or_else(|| number_after(&lower, "exactly "))
        .or_else(|| number_after(&lower, " of ").filter(|_| lower.contains(" to ")))
        .map_or(1, |n| n as usize);
    let n = n.clamp(1, 1000);
    while items.len() < n && *budget > 0 {
        let item = synthesize_within(each, None, depth + 1, budget);
        items.push(item.unwrap_or(Value::Object(Map::new())));
    }
    if let Some(max) = number_after(&lower, "at most ")
        .or_else(|| number_after(&lower, " to ").filter(|_| lower.contains(" of ")))
    {
        items.truncate((max as usize).max(1));
    }
    Value::Array(items)
}

/// An example the text gives: "(e.g. X)" or "like X".
fn example_in(expected: &str) -> Option<String> {
    let after = expected
        .split_once("e.g. ")
        .or_else(|| expected.split_once(" like "))?
        .1;
    let token: String = after
        .split(|c: char| c.is_whitespace() || c == ')' || c == ',')
        .next()?
        .trim_end_matches(['.', ';'])
        .to_owned();
    (!token.is_empty()).then_some(token)
}

/// A value for a named format.
fn format_value(lower: &str) -> Option<&'static str> {
    let has = |w: &str| lower.contains(w);
    Some(if has("email") {
        "user@example.com"
    } else if has("date-time") || has("datetime") {
        "2026-01-15T10:30:00Z"
    } else if has("uuid") {
        "123e4567-e89b-12d3-a456-426614174000"
    } else if has("url") || has("uri") {
        "https://example.com"
    } else if has("ipv4") {
        "192.0.2.1"
    } else if has("ipv6") {
        "2001:db8::1"
    } else if has("hostname") {
        "example.com"
    } else if has(" date") || lower.starts_with("date") {
        "2026-01-15"
    } else if has(" time") || lower.starts_with("time") {
        "10:30:00"
    } else {
        return None;
    })
}

/// The number right after `marker` in `text`.
fn number_after(text: &str, marker: &str) -> Option<f64> {
    let rest = text.split_once(marker)?.1;
    let token: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | 'e' | '+'))
        .collect();
    token.trim_end_matches('.').parse().ok()
}

fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

/// "a number >= N" (and `>`, `<=`, `<`): the bound, or the next whole number past it.
fn bound(lower: &str) -> Option<Value> {
    if !lower.contains("number") && !lower.contains("integer") {
        return None;
    }
    for (marker, step) in [(">= ", 0.0), ("<= ", 0.0), ("> ", 1.0), ("< ", -1.0)] {
        if let Some(n) = number_after(lower, marker) {
            let v = if step == 0.0 {
                n
            } else if n.fract() == 0.0 {
                n + step
            } else {
                n + step * 1e-6
            };
            return Some(number(v));
        }
    }
    let lo = number_after(lower, "between ")?;
    Some(number(lo))
}

/// "at least / at most / exactly N characters / items", "of N to M characters / items".
fn length(lower: &str, current: Option<&Value>) -> Option<Value> {
    let (n, at_least) = match (
        number_after(lower, "at least ")
            .or_else(|| number_after(lower, "exactly "))
            .or_else(|| number_after(lower, " of ").filter(|_| lower.contains(" to "))),
        number_after(lower, "at most "),
    ) {
        (Some(n), _) => (n as usize, true),
        (None, Some(n)) => (n as usize, false),
        (None, None) => return None,
    };
    if lower.contains("character") {
        let sent = match current {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let mut chars: Vec<char> = sent.chars().collect();
        if at_least {
            chars.resize(n.max(chars.len()), 'x');
        } else {
            chars.truncate(n);
        }
        return Some(Value::String(chars.into_iter().collect()));
    }
    if lower.contains("item") {
        let mut items = match current {
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        if at_least {
            let fill = items.last().cloned().unwrap_or(Value::String("x".into()));
            items.resize(n.max(items.len()), fill);
        } else {
            items.truncate(n);
        }
        return Some(Value::Array(items));
    }
    None
}

/// "a string", "an integer", "a number", "a boolean", "an array", "an object", "null": what
/// was sent, converted.
fn convert(lower: &str, current: Option<&Value>) -> Option<Value> {
    let cur = current.cloned().unwrap_or(Value::Null);
    // A one-item array stands for its item; a string may hold JSON.
    let inner = match &cur {
        Value::Array(a) if a.len() == 1 => a[0].clone(),
        Value::String(s) => serde_json::from_str(s.trim()).unwrap_or(cur.clone()),
        _ => cur.clone(),
    };
    if lower.starts_with("a string") {
        return Some(Value::String(match inner {
            Value::String(s) => s,
            Value::Null => "x".to_owned(),
            other => other.to_string(),
        }));
    }
    if lower.starts_with("an integer") || lower.starts_with("a whole number") {
        let n = inner.as_f64().unwrap_or(if inner.as_bool() == Some(true) {
            1.0
        } else {
            0.0
        });
        return Some(Value::from(n.round() as i64));
    }
    if lower.starts_with("a number") {
        return Some(number(inner.as_f64().unwrap_or(0.0)));
    }
    if lower.starts_with("a boolean") {
        let b = match &inner {
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_f64() != Some(0.0),
            Value::String(s) => matches!(s.to_ascii_lowercase().as_str(), "true" | "yes" | "1"),
            _ => false,
        };
        return Some(Value::Bool(b));
    }
    if lower.starts_with("an array") || lower.starts_with("a list") {
        return Some(match cur {
            Value::Array(a) => Value::Array(a),
            Value::Null => Value::Array(Vec::new()),
            Value::String(s) => match serde_json::from_str::<Value>(&s) {
                Ok(Value::Array(a)) => Value::Array(a),
                _ => Value::Array(vec![Value::String(s)]),
            },
            other => Value::Array(vec![other]),
        });
    }
    if lower.starts_with("an object") {
        return Some(match inner {
            Value::Object(o) => Value::Object(o),
            _ => Value::Object(Map::new()),
        });
    }
    if lower.starts_with("null") {
        return Some(Value::Null);
    }
    None
}

/// The value at a dotted path (`(root)` is the whole object).
fn lookup_mut<'a>(root: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    if path == "(root)" || path.is_empty() {
        return Some(root);
    }
    let mut at = root;
    for seg in path.split('.') {
        at = match at {
            Value::Object(o) => o.get_mut(seg)?,
            Value::Array(a) => a.get_mut(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Sets the value at a dotted path, making the objects on the way.
fn set(root: &mut Value, path: &str, value: Value) {
    if path == "(root)" || path.is_empty() {
        *root = value;
        return;
    }
    let segs: Vec<&str> = path.split('.').collect();
    set_in(root, &segs, value);
}

fn set_in(at: &mut Value, segs: &[&str], value: Value) {
    let Some((seg, rest)) = segs.split_first() else {
        *at = value;
        return;
    };
    if let Value::Array(a) = at
        && let Some(slot) = seg.parse::<usize>().ok().and_then(|n| a.get_mut(n))
    {
        set_in(slot, rest, value);
        return;
    }
    if !at.is_object() {
        *at = Value::Object(Map::new());
    }
    if let Value::Object(o) = at {
        let slot = o.entry((*seg).to_owned()).or_insert(Value::Null);
        set_in(slot, rest, value);
    }
}

/// Text that is not an envelope (serde's messages, a hand-written check's): the parts that
/// name a field (`name: …`, `items[0].sku: …`) or quote a value sent (`unknown variant `x`, expected one of
/// …`, `invalid type: string "x", expected …`, `unknown field `x`, expected one of …`).
pub fn read_plain(call: &Call, text: &str) -> Option<Call> {
    let mut args = call.args.clone();
    let text = text.trim();
    let backquoted =
        |s: &str| -> Vec<String> { s.split('`').skip(1).step_by(2).map(str::to_owned).collect() };
    if let Some(rest) = text.strip_prefix("unknown variant ") {
        let sent = backquoted(rest).into_iter().next()?;
        let options = backquoted(rest.split_once("expected")?.1);
        let best = options
            .iter()
            .min_by_key(|o| strsim::levenshtein(&sent, o))?
            .clone();
        replace_value(&mut args, &Value::String(sent), Value::String(best))?;
    } else if let Some(rest) = text.strip_prefix("unknown field ") {
        let sent = backquoted(rest).into_iter().next()?;
        let options = backquoted(rest.split_once("expected")?.1);
        let best = options
            .iter()
            .min_by_key(|o| strsim::levenshtein(&sent, o))?
            .clone();
        let obj = args.as_object_mut()?;
        let v = obj.remove(&sent)?;
        obj.insert(best, v);
    } else if let Some(rest) = text.strip_prefix("invalid type: ") {
        let (sent, expected) = rest.split_once(", expected ")?;
        let shown = sent.split_once(' ').map_or("", |(_, v)| v);
        let sent_value: Value = serde_json::from_str(shown).ok()?;
        let target = expected.split(" at line").next().unwrap_or(expected);
        let wanted = match target {
            t if t.starts_with('i') || t.starts_with('u') => "an integer",
            t if t.starts_with('f') => "a number",
            t if t.contains("string") => "a string",
            t if t.contains("sequence") => "an array",
            t if t.contains("bool") => "a boolean",
            t if t.contains("map") || t.contains("struct") => "an object",
            _ => return None,
        };
        let fixed = convert(wanted, Some(&sent_value))?;
        replace_value(&mut args, &sent_value, fixed)?;
    } else if let Some((field, rest)) = text.split_once(": ") {
        // `name`, `customer.id` or `items[0].sku`.
        let path = field.replace('[', ".").replace(']', "");
        let current = lookup_mut(&mut args, &path)?.clone();
        let rest = rest.replace("does not match ", "a string matching ");
        let value = synthesize(&rest, Some(&current))?;
        set(&mut args, &path, value);
    } else {
        return None;
    }
    Some(Call {
        tool: call.tool.clone(),
        args,
    })
}

/// Replaces the first top-level value equal to `sent` (or an array holding it) by `value`.
fn replace_value(args: &mut Value, sent: &Value, value: Value) -> Option<()> {
    let obj = args.as_object_mut()?;
    let key = obj
        .iter()
        .find(|(_, v)| *v == sent || matches!(v, Value::Array(a) if a.len() == 1 && a[0] == *sent))
        .map(|(k, _)| k.clone())?;
    obj.insert(key, value);
    Some(())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{MAX_BUILT, synthesize};

    fn count(v: &Value) -> usize {
        1 + match v {
            Value::Object(o) => o.values().map(count).sum(),
            Value::Array(a) => a.iter().map(count).sum(),
            _ => 0,
        }
    }

    /// A server's text decides what the reader builds: a thousand items of a thousand items,
    /// or objects nested without end, stop at the reader's bounds.
    #[test]
    fn what_a_line_asks_the_reader_to_build_is_bounded() {
        let wide = "at least 1000 items, each an object with: a (an array of at least 1000 items, each an object with: b (a string))";
        let built = synthesize(wide, None).unwrap_or(Value::Null);
        assert!(count(&built) <= 2 * MAX_BUILT, "{}", count(&built));
        assert!(matches!(&built, Value::Array(a) if !a.is_empty()));

        let mut deep = String::from("a string");
        for _ in 0..5_000 {
            deep = format!("an object with: k ({deep})");
        }
        let built = synthesize(&deep, None).unwrap_or(Value::Null);
        let mut depth = 0;
        let mut at = &built;
        while let Some(inner) = at.get("k") {
            depth += 1;
            at = inner;
        }
        assert!((1..=super::MAX_WORDS_DEPTH + 1).contains(&depth), "{depth}");

        // Within the bounds, the line's object is built as it says.
        assert_eq!(
            synthesize(
                "an object with: a (an integer >= 2), b (optional, a string)",
                None
            ),
            Some(json!({"a": 2}))
        );
    }
}
