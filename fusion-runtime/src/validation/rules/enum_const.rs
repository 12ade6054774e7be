//! `enum` / `const` (and a `oneOf` of constants, which schemars writes for a Rust enum whose
//! variants have doc comments): `jsonschema` decides them; their wording, with a
//! did-you-mean when a string sent is close to one option.

use serde_json::Value;

use super::unknown_keys::closest;
use crate::validation::push_list;
use crate::validation::sent::{push_quoted, push_sent};

/// The problem, with the closest option to a string sent: `Invalid option (did you mean
/// 'open'?)`.
pub fn push_problem(out: &mut String, options: &[Value], sent: Option<&Value>) {
    if options.len() == 1 {
        out.push_str("Invalid value");
        return;
    }
    out.push_str("Invalid option");
    if let Some(Value::String(s)) = sent
        && let Some(best) = closest(s, options.iter().filter_map(Value::as_str))
    {
        out.push_str(" (did you mean ");
        push_quoted(out, best);
        out.push_str("?)");
    }
}

/// The expected text: `exactly 'v2'`, or `one of: 'open', 'paid', 'void'`.
pub fn push_expected(out: &mut String, options: &[Value]) {
    if let [only] = options {
        out.push_str("exactly ");
        push_sent(out, only);
    } else {
        out.push_str("one of: ");
        push_list(out, options, ", ", push_sent);
    }
}

/// The options of a union whose every branch is one constant (`const`, or an `enum` of one
/// value), each branch already resolved by `resolve`; `None` for any other union.
pub fn union_options<'a>(
    branches: &'a [Value],
    resolve: impl Fn(&'a Value) -> &'a Value,
) -> Option<Vec<Value>> {
    if branches.len() < 2 {
        return None;
    }
    branches
        .iter()
        .map(|b| {
            let b = resolve(b);
            match (b.get("const"), b.get("enum")) {
                (Some(c), None) => Some(c.clone()),
                (None, Some(Value::Array(one))) if one.len() == 1 => one.first().cloned(),
                _ => None,
            }
        })
        .collect()
}
