//! Stop tokens and stop strings, as the engine's detokenizer applies them.

use std::collections::HashSet;

use crate::wire::request::{OutputOptions, StopReason};

/// `_drop_stop_token`: leave out the token that stopped generation (unless
/// `include_stop_str_in_output`), filling `stop_reason` for a secondary stop
/// token. Returns how many ids to decode and the stop reason.
pub fn drop_stop_token(
    ids: &[i64],
    finish_reason: Option<&str>,
    stop_reason: Option<&StopReason>,
    request: Option<&OutputOptions>,
    eos: Option<i64>,
    model_eos: &HashSet<i64>,
) -> (usize, Option<StopReason>) {
    let reason = stop_reason.cloned();
    if finish_reason != Some("stop") || matches!(reason, Some(StopReason::Str(_))) || ids.is_empty() {
        return (ids.len(), reason);
    }
    let last = ids[ids.len() - 1];
    let (stopped, reason) = match reason {
        None => {
            let honor_eos = request.is_none_or(|r| !r.ignore_eos);
            if honor_eos && Some(last) == eos {
                (true, None)
            } else if request.is_some_and(|r| r.stop_token_ids.contains(&last))
                || (honor_eos && model_eos.contains(&last))
            {
                (true, Some(StopReason::Int(last)))
            } else {
                (false, None)
            }
        }
        Some(StopReason::Int(r)) => (last == r, Some(StopReason::Int(r))),
        Some(other) => (false, Some(other)),
    };
    if !stopped || request.is_some_and(|r| r.include_stop_str_in_output) {
        return (ids.len(), reason);
    }
    (ids.len() - 1, reason)
}

/// `check_stop_strings`: the stop string completing earliest in the text
/// (ties by list order), searching only where the new text could match.
/// Returns the string and the char length to cut to (`None` = no cut).
pub fn check_stop_strings(
    text: &str,
    new_chars: usize,
    stops: &[String],
    include: bool,
) -> Option<(String, Option<usize>)> {
    if new_chars == 0 || stops.is_empty() {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    let len = chars.len() as i64;
    let mut best: Option<(&String, usize, usize)> = None;
    for stop in stops {
        let slen = stop.chars().count() as i64;
        // Python's str.find with a negative start counts from the end.
        let start = (len + 1 - new_chars as i64 - slen).max(0) as usize;
        let Some(idx) = find_chars(&chars, start, stop) else {
            continue;
        };
        let end = idx + slen as usize;
        if best.is_none_or(|(_, _, e)| end < e) {
            best = Some((stop, idx, end));
        }
    }
    let (stop, idx, end) = best?;
    if include {
        return Some((stop.clone(), (end < chars.len()).then_some(end)));
    }
    Some((stop.clone(), Some(idx)))
}

fn find_chars(chars: &[char], start: usize, needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    if needle.is_empty() {
        return (start <= chars.len()).then_some(start);
    }
    if needle.len() > chars.len() {
        return None;
    }
    (start..=chars.len() - needle.len()).find(|&i| chars[i..i + needle.len()] == needle[..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_stop_string_wins() {
        let stops = vec!["world".to_string(), "lo".to_string()];
        let m = check_stop_strings("Hello world and more", 20, &stops, false);
        assert_eq!(m, Some(("lo".to_string(), Some(3))));
        let m = check_stop_strings("Hello world and more", 20, &["world".to_string()], true);
        assert_eq!(m, Some(("world".to_string(), Some(11))));
    }

    #[test]
    fn only_new_text_is_searched() {
        // "ab" lies entirely in the old text: one new char cannot complete it.
        assert_eq!(check_stop_strings("abcd", 1, &["ab".to_string()], false), None);
        assert!(check_stop_strings("abcd", 1, &["cd".to_string()], false).is_some());
    }

    #[test]
    fn eos_is_dropped_and_secondary_eos_reported() {
        let eos: HashSet<i64> = [7, 9].into_iter().collect();
        assert_eq!(drop_stop_token(&[1, 7], Some("stop"), None, None, Some(7), &eos), (1, None));
        assert_eq!(drop_stop_token(&[1, 9], Some("stop"), None, None, Some(7), &eos), (1, Some(StopReason::Int(9))));
        assert_eq!(drop_stop_token(&[1, 9], Some("length"), None, None, Some(7), &eos), (2, None));
        assert_eq!(drop_stop_token(&[1, 5], Some("stop"), None, None, Some(7), &eos), (2, None));
    }
}
