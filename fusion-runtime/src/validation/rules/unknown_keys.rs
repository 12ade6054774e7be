//! `additionalProperties: false` (unless `#[fusion(allow_unknown_fields)]`): the keys counted
//! while the fields are checked must be all the object's keys.

use crate::validation::sent::push_quoted;
use crate::validation::{MAX_COMPARED_CHARS, push_list};

/// Whether the object holds no key besides the `present` fields, when unknown keys are denied.
#[inline(always)]
pub fn check(deny_unknown: bool, present: usize, len: usize) -> bool {
    !deny_unknown || present == len
}

/// The problem: `Unrecognized key 'emial' (did you mean 'email'?)`.
pub fn push_problem(out: &mut String, key: &str, known: &[String]) {
    out.push_str("Unrecognized key ");
    push_quoted(out, key);
    push_did_you_mean(out, closest(key, known.iter().map(String::as_str)));
}

/// ` (did you mean 'email'?)`, when there is a closest candidate.
pub(crate) fn push_did_you_mean(out: &mut String, best: Option<&str>) {
    if let Some(best) = best {
        out.push_str(" (did you mean ");
        push_quoted(out, best);
        out.push_str("?)");
    }
}

/// The expected text: `only: 'invoice_id', 'email'`, or `no properties`.
pub fn push_expected(out: &mut String, known: &[String]) {
    if known.is_empty() {
        out.push_str("no properties");
    } else {
        out.push_str("only: ");
        push_list(out, known, ", ", |out, k| push_quoted(out, k));
    }
}

/// The candidate closest to `key` by edit distance, when it is close enough to be a typo. A
/// `key` longer than [`MAX_COMPARED_CHARS`] characters has none, and a candidate is compared
/// only when the lengths differ by no more than the distance allowed: the cost stays bounded.
pub fn closest<'a>(key: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let key_len = key.chars().take(MAX_COMPARED_CHARS + 1).count();
    if key_len > MAX_COMPARED_CHARS {
        return None;
    }
    let key_lower = key.to_lowercase();
    let key_lower_len = key_lower.chars().count();
    candidates
        .filter_map(|c| {
            let c_len = c.chars().count();
            let allowed = (c_len.max(key_len) / 3).max(1);
            let c_lower = c.to_lowercase();
            // The distance is at least the difference of the lengths.
            if c_lower.chars().count().abs_diff(key_lower_len) > allowed {
                return None;
            }
            let d = strsim::damerau_levenshtein(&key_lower, &c_lower);
            (d <= allowed).then_some((d, c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
