//! Qwen3's XML arguments (`<parameter=NAME>VALUE</parameter>`): the converter
//! to a JSON object and the extender that streams an open string value
//! exactly as the converter will print it (`vllm/parser/qwen3.py`).
//!
//! vLLM uses regexes with a lookahead; this is the same matching by hand.

use serde_json::{Map, Value};

use crate::parse::engine::{ArgSyntax, OpenValue};
use crate::pycompat::json::{dumps, dumps_str};

/// Skip Python `\s` characters from `i`.
pub(super) fn ws(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i].is_whitespace() {
        i += 1;
    }
    i
}

pub(super) fn word(c: &[char], i: usize, w: &str) -> Option<usize> {
    let w: Vec<char> = w.chars().collect();
    (c.len() >= i + w.len() && c[i..i + w.len()] == w[..]).then_some(i + w.len())
}

/// `<\s*parameter\s*=` at `i`: the index after `=`.
fn opener_eq(c: &[char], i: usize) -> Option<usize> {
    if c.get(i) != Some(&'<') {
        return None;
    }
    let j = word(c, ws(c, i + 1), "parameter")?;
    let j = ws(c, j);
    (c.get(j) == Some(&'=')).then_some(j + 1)
}

/// `<\s*/\s*parameter\s*>` at `i`: the index after `>`.
pub(super) fn closer(c: &[char], i: usize) -> Option<usize> {
    if c.get(i) != Some(&'<') {
        return None;
    }
    let j = ws(c, i + 1);
    if c.get(j) != Some(&'/') {
        return None;
    }
    let j = word(c, ws(c, j + 1), "parameter")?;
    let j = ws(c, j);
    (c.get(j) == Some(&'>')).then_some(j + 1)
}

/// One matched parameter (shared with the MiniMax-M2 arguments).
pub(super) struct Param {
    pub start: usize,
    pub end: usize,
    pub name: String,
    pub value: String,
}

/// One `_PARAM_RE` match starting exactly at `i`.
fn param_at(c: &[char], i: usize) -> Option<Param> {
    let j = ws(c, opener_eq(c, i)?);
    let close = (j..c.len()).find(|&k| c[k] == '>')?;
    let name: String = c[j..close].iter().collect();
    let vstart = close + 1;
    for k in vstart..c.len() {
        if let Some(e) = closer(c, k) {
            return Some(Param { start: i, end: e, name, value: c[vstart..k].iter().collect() });
        }
        if opener_eq(c, k).is_some() {
            return Some(Param { start: i, end: k, name, value: c[vstart..k].iter().collect() });
        }
    }
    None
}

/// `_PARAM_RE.finditer`.
fn complete_params(c: &[char]) -> Vec<Param> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        match param_at(c, i) {
            Some(p) => {
                i = if p.end > i { p.end } else { i + 1 };
                out.push(p);
            }
            None => i += 1,
        }
    }
    out
}

/// `_PARTIAL_PARAM_RE.search` on the text without complete params.
fn partial_param(c: &[char], complete: &[Param]) -> Option<(String, String)> {
    let mut remaining: Vec<char> = Vec::with_capacity(c.len());
    let mut pos = 0;
    for p in complete {
        remaining.extend_from_slice(&c[pos..p.start]);
        pos = p.end;
    }
    remaining.extend_from_slice(&c[pos..]);
    let r = &remaining;
    for i in 0..r.len() {
        let Some(j) = opener_eq(r, i) else { continue };
        let j = ws(r, j);
        // `([^>]+)>`: at least one char before the `>`.
        let Some(close) = (j..r.len()).find(|&k| r[k] == '>') else { continue };
        if close == j {
            continue;
        }
        let name: String = r[j..close].iter().collect();
        let value: String = r[close + 1..].iter().collect();
        return Some((name, value));
    }
    None
}

/// `_trim_wrapping_newlines`.
fn trim_newlines(v: &str) -> String {
    let v = v.strip_prefix('\n').unwrap_or(v);
    v.strip_suffix('\n').unwrap_or(v).to_string()
}

/// `_qwen3_arg_converter`: the parameters as a JSON object of strings.
pub fn convert(raw: &str, partial: bool) -> String {
    convert_with(raw, partial, trim_newlines)
}

/// The parameters as a JSON object of strings, each value through `value`.
fn convert_with(raw: &str, partial: bool, value: fn(&str) -> String) -> String {
    let c: Vec<char> = raw.chars().collect();
    let complete = complete_params(&c);
    let mut params = Map::new();
    for p in &complete {
        params.insert(p.name.clone(), Value::String(value(&p.value)));
    }
    if partial {
        if let Some((name, text)) = partial_param(&c, &complete) {
            if !name.is_empty() {
                params.insert(name, Value::String(value(&text)));
            }
        }
    }
    dumps(&Value::Object(params))
}

/// Is `t` a prefix of the pattern `parts` (literals and `\\s*`/`\\s+`)? A `\\s+`
/// is walked like `\\s*`: erring towards "may still match" only holds text back.
pub(super) fn prefix_of(t: &[char], parts: &[&str]) -> bool {
    let mut i = 0;
    for part in parts {
        if matches!(*part, "\\s*" | "\\s+") {
            while i < t.len() && t[i].is_whitespace() {
                i += 1;
            }
            continue;
        }
        for pc in part.chars() {
            if i == t.len() {
                return true;
            }
            if t[i] != pc {
                return false;
            }
            i += 1;
        }
    }
    i == t.len()
}

/// `_param_value_end_window`: the tail from the last `<` while it may still
/// grow into a value end, else nothing.
pub(super) fn end_window(text: &[char], may_become_end: fn(&[char]) -> bool) -> Vec<char> {
    match text.iter().rposition(|&ch| ch == '<') {
        Some(s) if may_become_end(&text[s..]) => text[s..].to_vec(),
        _ => Vec::new(),
    }
}

/// Could `tail` still grow into a value end (`</parameter>` or `<parameter=`)?
fn may_become_end(tail: &[char]) -> bool {
    prefix_of(tail, &["<", "\\s*", "/", "\\s*", "parameter", "\\s*", ">"])
        || prefix_of(tail, &["<", "\\s*", "parameter", "\\s*", "="])
}

fn has_value_end(text: &[char]) -> bool {
    (0..text.len()).any(|i| closer(text, i).is_some() || opener_eq(text, i).is_some())
}

/// `_param_value_extender(raw_args, trim_newlines=True)`: streams the open
/// trailing value of the arguments, as JSON string content.
fn open_value(raw: &str) -> Option<OpenValue> {
    let c: Vec<char> = raw.chars().collect();
    let complete = complete_params(&c);
    let (name, value) = partial_param(&c, &complete)?;
    // A repeated key keeps its first position, so its value is not last.
    if complete.iter().any(|p| p.name == name) {
        return None;
    }
    let vc: Vec<char> = value.chars().collect();
    let held = if value.ends_with('\n') && value != "\n" { "\n".to_string() } else { String::new() };
    let window = end_window(&vc, may_become_end).into_iter().collect();
    Some(OpenValue { window, started: !value.is_empty(), held, balance: 0 })
}

/// Moves the end window past `delta`; `false` when the value may have
/// ended (the caller re-converts).
fn advance_window(v: &mut OpenValue, delta: &str) -> bool {
    let mut text: Vec<char> = v.window.chars().collect();
    text.extend(delta.chars());
    if has_value_end(&text) {
        return false;
    }
    v.window = end_window(&text, may_become_end).into_iter().collect();
    true
}

fn json_content(text: &str) -> String {
    let quoted = dumps_str(text);
    quoted[1..quoted.len() - 1].to_string()
}

/// The JSON-escaped text `delta` adds to the value; `None` when the value
/// may have ended (the caller re-converts).
fn extend_value(v: &mut OpenValue, delta: &str) -> Option<String> {
    if !advance_window(v, delta) {
        return None;
    }
    let mut t = format!("{}{}", v.held, delta);
    if !v.started && !t.is_empty() {
        v.started = true;
        if let Some(rest) = t.strip_prefix('\n') {
            t = rest.to_string();
        }
    }
    v.held = if t.ends_with('\n') { "\n".to_string() } else { String::new() };
    if !v.held.is_empty() {
        t.pop();
    }
    Some(json_content(&t))
}

/// Qwen3-Coder's `<parameter=k>v</parameter>` arguments (Qwen3, Seed-OSS, Step).
pub static ARGS: ArgSyntax = ArgSyntax {
    convert: |raw, partial, _| Some(convert(raw, partial)),
    stream_deltas: true,
    structural_chars: None,
    open_value,
    extend_value,
};

/// The same parameters with values taken verbatim, wrapping newlines kept
/// (MiMo: `_param_value_extender(trim_newlines=False)`).
pub static VERBATIM_ARGS: ArgSyntax = ArgSyntax {
    convert: |raw, partial, _| Some(convert_with(raw, partial, str::to_string)),
    stream_deltas: true,
    structural_chars: None,
    open_value: |raw| open_value(raw).map(|v| OpenValue { held: String::new(), ..v }),
    extend_value: |v, delta| advance_window(v, delta).then(|| json_content(delta)),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_complete_and_partial_params() {
        let raw = "<parameter=city>\nParis\n</parameter>\n<parameter=unit>cel";
        assert_eq!(convert(raw, false), r#"{"city": "Paris"}"#);
        assert_eq!(convert(raw, true), r#"{"city": "Paris", "unit": "cel"}"#);
        // A value ends at the next opener even without a closer.
        assert_eq!(convert("<parameter=a>1<parameter=b>2</parameter>", false), r#"{"a": "1", "b": "2"}"#);
    }

    #[test]
    fn verbatim_values_keep_their_newlines() {
        let raw = "<parameter=city>\nParis\n</parameter><parameter=unit>\ncel";
        assert_eq!((VERBATIM_ARGS.convert)(raw, true, None).unwrap(), r#"{"city": "\nParis\n", "unit": "\ncel"}"#);
        let mut e = (VERBATIM_ARGS.open_value)("<parameter=q>\nhel").unwrap();
        assert_eq!((VERBATIM_ARGS.extend_value)(&mut e, "lo\n").as_deref(), Some("lo\\n"));
        assert_eq!((VERBATIM_ARGS.extend_value)(&mut e, "</parameter>"), None);
    }

    #[test]
    fn extender_streams_the_open_value() {
        let mut e = open_value("<parameter=q>\nhel").unwrap();
        assert_eq!(extend_value(&mut e, "lo wor").as_deref(), Some("lo wor"));
        assert_eq!(extend_value(&mut e, "ld\n").as_deref(), Some("ld"));
        assert_eq!(extend_value(&mut e, "</parameter>"), None);
    }
}
