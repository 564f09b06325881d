//! Gemma 4's argument syntax (`_parse_gemma4_args`, `_gemma4_arg_converter`,
//! `_gemma4_arg_value_extender`): `key:<|"|>text<|"|>,n:42,o:{...},l:[...]`,
//! strings between `<|"|>` delimiters, bare values kept as text (the tool
//! schema types them later).

use serde_json::{Map, Value};

use crate::parse::engine::{ArgSyntax, OpenValue};
use crate::pycompat::json::{dumps, dumps_str};

const DELIM: &str = "<|\"|>";

pub(super) static ARGS: ArgSyntax = ArgSyntax {
    convert: |raw, partial, _| Some(convert(raw, partial)),
    stream_deltas: true,
    structural_chars: Some(",:{}[]<"),
    open_value,
    extend_value,
};

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn starts_at(c: &[char], i: usize, pat: &str) -> bool {
    let p = chars(pat);
    c.len() >= i + p.len() && c[i..i + p.len()] == p[..]
}

fn find_from(c: &[char], i: usize, pat: &str) -> Option<usize> {
    (i..c.len()).find(|&j| starts_at(c, j, pat))
}

fn text(c: &[char]) -> String {
    c.iter().collect()
}

/// Python's `str.strip()`.
fn strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

fn rstrip(s: &str) -> &str {
    s.trim_end_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// `_strip_partial_delim`: without a trailing start of `<|"|>`.
fn strip_partial_delim(value: &str) -> &str {
    for k in (1..=DELIM.len()).rev() {
        if let Some(rest) = value.strip_suffix(&DELIM[..k]) {
            return rest;
        }
    }
    value
}

/// `_drop_call_closer`.
fn drop_call_closer(text: &str, paren_excess: bool) -> &str {
    if text.ends_with('}') || (text.ends_with(')') && paren_excess) {
        &text[..text.len() - 1]
    } else {
        text
    }
}

/// Skips a bracketed span from just after its opener; `(end, closed)`.
fn skip_nested(c: &[char], mut i: usize, open: char, close: char) -> (usize, bool) {
    let mut depth = 1;
    while i < c.len() && depth > 0 {
        if starts_at(c, i, DELIM) {
            i += DELIM.len();
            i = find_from(c, i, DELIM).map_or(c.len(), |e| e + DELIM.len());
            continue;
        }
        if c[i] == open {
            depth += 1;
        } else if c[i] == close {
            depth -= 1;
        }
        i += 1;
    }
    (i, depth == 0)
}

/// `_parse_gemma4_fields`: the object, and the key of a trailing string
/// left open.
fn parse_fields(args: &str, partial: bool) -> (Map<String, Value>, Option<String>) {
    let mut result = Map::new();
    if strip(args).is_empty() {
        return (result, None);
    }
    let c = chars(args);
    let n = c.len();
    let mut i = 0;
    while i < n {
        while i < n && matches!(c[i], ' ' | ',' | '\n' | '\t') {
            i += 1;
        }
        if i >= n {
            break;
        }
        let key_start = i;
        while i < n && c[i] != ':' {
            i += 1;
        }
        if i >= n {
            break;
        }
        let raw_key = text(&c[key_start..i]);
        let mut key = strip(&raw_key).to_string();
        if key.starts_with(DELIM) && key.ends_with(DELIM) {
            // `key[5:-5]`: empty when the delimiters overlap.
            key = key.get(DELIM.len()..key.len().saturating_sub(DELIM.len())).unwrap_or("").to_string();
        }
        i += 1;
        if i >= n {
            if !partial {
                result.insert(key, Value::from(""));
            }
            break;
        }
        while i < n && matches!(c[i], ' ' | '\n' | '\t') {
            i += 1;
        }
        if i >= n {
            if !partial {
                result.insert(key, Value::from(""));
            }
            break;
        }
        if starts_at(&c, i, DELIM) {
            i += DELIM.len();
            match find_from(&c, i, DELIM) {
                None => {
                    let value = text(&c[i..]);
                    let value = if partial { strip_partial_delim(&value).to_string() } else { value };
                    result.insert(key.clone(), Value::from(value));
                    return (result, Some(key));
                }
                Some(end) => {
                    result.insert(key, Value::from(text(&c[i..end])));
                    i = end + DELIM.len();
                }
            }
        } else if c[i] == '{' || c[i] == '[' {
            let (open, close) = if c[i] == '{' { ('{', '}') } else { ('[', ']') };
            let start = i + 1;
            let (end, closed) = skip_nested(&c, start, open, close);
            i = end;
            let inner = if closed { text(&c[start..end - 1]) } else { text(&c[start..end]) };
            let value = match open {
                '{' => Value::Object(parse_fields(&inner, !closed).0),
                _ => Value::Array(parse_array(&inner, !closed)),
            };
            result.insert(key, value);
        } else {
            let start = i;
            while i < n && !matches!(c[i], ',' | '}' | ']') {
                i += 1;
            }
            if (partial && i >= n) || i == start {
                break;
            }
            let raw = text(&c[start..i]);
            let raw = strip(&raw);
            if partial && raw.ends_with('.') {
                break;
            }
            result.insert(key, Value::from(raw));
        }
    }
    (result, None)
}

/// `_parse_gemma4_array`.
fn parse_array(arr: &str, partial: bool) -> Vec<Value> {
    let c = chars(arr);
    let n = c.len();
    let mut items = Vec::new();
    let mut i = 0;
    while i < n {
        while i < n && matches!(c[i], ' ' | ',' | '\n' | '\t') {
            i += 1;
        }
        if i >= n {
            break;
        }
        if starts_at(&c, i, DELIM) {
            i += DELIM.len();
            match find_from(&c, i, DELIM) {
                None => {
                    items.push(Value::from(text(&c[i..])));
                    break;
                }
                Some(end) => {
                    items.push(Value::from(text(&c[i..end])));
                    i = end + DELIM.len();
                }
            }
        } else if c[i] == '{' || c[i] == '[' {
            let (open, close) = if c[i] == '{' { ('{', '}') } else { ('[', ']') };
            let start = i + 1;
            let (end, closed) = skip_nested(&c, start, open, close);
            i = end;
            let inner = if closed { text(&c[start..end - 1]) } else { text(&c[start..end]) };
            items.push(match open {
                '{' => Value::Object(parse_fields(&inner, !closed).0),
                _ => Value::Array(parse_array(&inner, !closed)),
            });
        } else {
            let start = i;
            while i < n && !matches!(c[i], ',' | ']') {
                i += 1;
            }
            if (partial && i >= n) || i == start {
                break;
            }
            let raw = text(&c[start..i]);
            let raw = strip(&raw);
            if partial && raw.ends_with('.') {
                break;
            }
            items.push(Value::from(raw));
        }
    }
    items
}

/// `_gemma4_arg_converter`.
pub(super) fn convert(raw: &str, partial: bool) -> String {
    let text = strip(raw);
    let text = drop_call_closer(text, text.matches('(').count() < text.matches(')').count());
    dumps(&Value::Object(parse_fields(text, partial).0))
}

/// `_gemma4_arg_value_extender`'s setup: the open trailing string value,
/// when it is the last value; `held` is the tail the converter would not
/// show yet, `balance` the `(` minus `)` count so far.
fn open_value(raw: &str) -> Option<OpenValue> {
    let text = strip(raw);
    let balance = text.matches('(').count() as i64 - text.matches(')').count() as i64;
    let body = drop_call_closer(text, balance < 0);
    let (params, open_key) = parse_fields(body, true);
    let open_key = open_key?;
    if params.keys().next_back() != Some(&open_key) {
        return None;
    }
    let held_len = raw.len() - rstrip(raw).len() + text.len() - strip_partial_delim(body).len();
    Some(OpenValue { held: raw[raw.len() - held_len..].to_string(), balance, ..OpenValue::default() })
}

/// The extender's `extend`: the JSON text the delta adds to the value.
fn extend_value(v: &mut OpenValue, delta: &str) -> Option<String> {
    let text = format!("{}{}", v.held, delta);
    if text.contains(DELIM) {
        return None;
    }
    v.balance += delta.matches('(').count() as i64 - delta.matches(')').count() as i64;
    let visible = strip_partial_delim(drop_call_closer(rstrip(&text), v.balance < 0));
    v.held = text[visible.len()..].to_string();
    let quoted = dumps_str(visible);
    Some(quoted[1..quoted.len() - 1].to_string())
}
