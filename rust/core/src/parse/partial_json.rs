//! `partial_json_parser.loads` as vLLM's legacy JSON tool parsers call it
//! (`partial_json_loads` in `tool_parsers/utils.py`): complete a truncated
//! JSON text the way that library does, then read it with Python's `json`.
//!
//! What a stream shows at each chunk depends on exactly how the library
//! completes a prefix (which partial strings survive, where it cuts before a
//! dangling key), so this follows its algorithm step by step, including its
//! Python index arithmetic (negative indices count from the end). Every
//! failure (the library's exceptions, Python's `IndexError` or
//! `AssertionError`) is one `Err`: callers treat them all as "nothing yet".

use serde_json::Value;

/// The partialness switches the callers vary: whether an unterminated
/// string (`Allow.STR`) or a number that may still grow (`Allow.NUM`) may
/// be completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allow {
    pub strings: bool,
    pub numbers: bool,
}

impl Allow {
    pub const ALL: Allow = Allow { strings: true, numbers: true };
    pub const NO_STRINGS: Allow = Allow { strings: false, numbers: true };
    pub const NO_NUMBERS: Allow = Allow { strings: true, numbers: false };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    /// Python's `IndexError`: arrays and objects turn it into "partial".
    Index,
    /// Anything else (`MalformedJSON`, `PartialJSON`, `AssertionError`).
    Other,
}

type Fix<T> = Result<T, Fail>;

/// A completion: `(index, tail)`, `tail = None` meaning "already complete"
/// (the library's `True`); `Ok(None)` is its `False` (not completable).
type Completion = Fix<Option<(isize, Option<String>)>>;

// --- Python string operations on char slices -------------------------------

fn len(s: &[char]) -> isize {
    s.len() as isize
}

/// `s[k]`, negative `k` counting from the end.
fn at(s: &[char], k: isize) -> Fix<char> {
    let i = if k < 0 { k + len(s) } else { k };
    if i < 0 || i >= len(s) {
        return Err(Fail::Index);
    }
    Ok(s[i as usize])
}

/// A slice bound normalised as Python does.
fn bound(s: &[char], k: isize) -> usize {
    let i = if k < 0 { k + len(s) } else { k };
    i.clamp(0, len(s)) as usize
}

/// `s[a:b]`.
fn slice(s: &[char], a: Option<isize>, b: Option<isize>) -> &[char] {
    let a = a.map_or(0, |a| bound(s, a));
    let b = b.map_or(s.len(), |b| bound(s, b));
    if a >= b {
        &[]
    } else {
        &s[a..b]
    }
}

fn text(s: &[char]) -> String {
    s.iter().collect()
}

/// `s.rfind(c, a, b)`.
fn rfind(s: &[char], c: char, a: Option<isize>, b: Option<isize>) -> isize {
    let a = a.map_or(0, |a| bound(s, a));
    let b = b.map_or(s.len(), |b| bound(s, b));
    (a..b).rev().find(|&i| s[i] == c).map_or(-1, |i| i as isize)
}

/// `s.rfind(pair, a, b)` for a two-character needle.
fn rfind2(s: &[char], pair: [char; 2], a: isize, b: isize) -> isize {
    let (a, b) = (bound(s, a), bound(s, b));
    if b < a + 2 {
        return -1;
    }
    (a..=b - 2).rev().find(|&i| s[i] == pair[0] && s[i + 1] == pair[1]).map_or(-1, |i| i as isize)
}

pub use crate::pycompat::str::py_isspace;

fn is_blank(s: &[char]) -> bool {
    s.iter().all(|&c| py_isspace(c))
}

fn strip(s: &[char]) -> &[char] {
    let start = s.iter().position(|&c| !py_isspace(c)).unwrap_or(s.len());
    let end = s.iter().rposition(|&c| !py_isspace(c)).map_or(start, |i| i + 1);
    &s[start..end.max(start)]
}

fn skip_blank(s: &[char], mut i: isize) -> isize {
    while i >= 0 && i < len(s) && py_isspace(s[i as usize]) {
        i += 1;
    }
    i
}

/// How many backslashes end `s[:index]` (`index - len(s[:index].rstrip("\\"))`).
fn backslashes_before(s: &[char], index: isize) -> usize {
    slice(s, None, Some(index)).iter().rev().take_while(|&&c| c == '\\').count()
}

// --- partial_json_parser.core.complete -------------------------------------

/// `_fix`: the kept slice of `s` and the suffix that completes it.
fn fix(s: &[char], allow: Allow, top_level: bool) -> Fix<(String, String)> {
    match complete_any(strip(s), allow, top_level) {
        Ok(Some((index, tail))) => Ok((text(slice(s, None, Some(index))), tail.unwrap_or_default())),
        Ok(None) => Err(Fail::Other),
        Err(_) => Err(Fail::Other),
    }
}

fn complete_any(s: &[char], allow: Allow, top_level: bool) -> Completion {
    let c = at(s, skip_blank(s, 0))?;
    match c {
        '"' => return complete_str(s, allow),
        '0'..='9' => return complete_num(s, allow, top_level),
        '[' => return complete_collection(s, allow, ']'),
        '{' => return complete_collection(s, allow, '}'),
        _ => {}
    }
    let st = text(s);
    for word in ["null", "true", "false", "Infinity"] {
        if st.starts_with(word) {
            return Ok(Some((word.chars().count() as isize, None)));
        }
        if word.starts_with(&st) {
            return Ok(Some((0, Some(word.to_string()))));
        }
    }
    if c == '-' {
        if s.len() == 1 {
            return Ok(None);
        } else if s[1] != 'I' {
            return complete_num(s, allow, top_level);
        }
    }
    for word in ["-Infinity", "NaN"] {
        if st.starts_with(word) {
            return Ok(Some((word.chars().count() as isize, None)));
        }
        if word.starts_with(&st) {
            return Ok(Some((0, Some(word.to_string()))));
        }
    }
    Err(Fail::Other)
}

fn complete_str(s: &[char], allow: Allow) -> Completion {
    if s.first() != Some(&'"') {
        return Err(Fail::Other);
    }
    let mut i: isize = 1;
    while let Ok(c) = at(s, i) {
        if c == '\\' {
            if i + 1 == len(s) {
                break;
            }
            i += 2;
            continue;
        }
        if c == '"' {
            return Ok(Some((i + 1, None)));
        }
        i += 1;
    }
    if !allow.strings {
        return Ok(None);
    }
    // Cut an escape sequence that was itself cut short.
    for (letter, width) in [('u', 5), ('U', 9), ('x', 3)] {
        let k = rfind2(s, ['\\', letter], (i - width).max(0), i);
        if k != -1 && backslashes_before(s, k).is_multiple_of(2) {
            return Ok(Some((k, Some("\"".into()))));
        }
    }
    Ok(Some((i, Some("\"".into()))))
}

/// `complete_arr` / `complete_obj`: one loop, objects reading a key first.
fn complete_collection(s: &[char], allow: Allow, close: char) -> Completion {
    let mut i: isize = 1;
    let mut j: isize = 1;
    let result: Completion = (|| loop {
        j = skip_blank(s, j);
        if at(s, j)? == close {
            return Ok(Some((j + 1, None)));
        }
        if close == '}' {
            match complete_str(slice(s, Some(j), None), allow)? {
                Some((n, None)) => j += n,
                _ => return Ok(Some((i, Some("}".into())))),
            }
            j = skip_blank(s, j);
            if at(s, j)? != ':' {
                return Err(Fail::Other);
            }
            j = skip_blank(s, j + 1);
        }
        match complete_any(slice(s, Some(j), None), allow, false)? {
            None => return Ok(Some((i, Some(close.to_string())))),
            Some((n, None)) => {
                j += n;
                i = j;
            }
            Some((n, Some(tail))) => return Ok(Some((j + n, Some(tail + &close.to_string())))),
        }
        j = skip_blank(s, j);
        match at(s, j)? {
            ',' => j += 1,
            c if c == close => return Ok(Some((j + 1, None))),
            _ => return Err(Fail::Other),
        }
    })();
    match result {
        Err(Fail::Index) => Ok(Some((i, Some(close.to_string())))),
        other => other,
    }
}

fn complete_num(s: &[char], allow: Allow, top_level: bool) -> Completion {
    const NUM: &str = "1234567890.-+eE";
    let mut i: isize = 1;
    while i < len(s) && NUM.contains(s[i as usize]) {
        i += 1;
    }
    let mut modified = false;
    while ".-+eE".contains(at(s, i - 1)?) {
        modified = true;
        i -= 1;
    }
    if modified || (i == len(s) && !top_level) {
        Ok(allow.numbers.then(|| (i, Some(String::new()))))
    } else {
        Ok(Some((i, None)))
    }
}

// --- partial_json_parser.core.myelin.fix_fast -------------------------------

/// `text[1:]`.
fn drop_first(text: &str) -> String {
    text.chars().skip(1).collect()
}

fn closers(stack: &[(isize, char)]) -> String {
    stack.iter().rev().map(|&(_, c)| if c == '{' { '}' } else { ']' }).collect()
}

/// `fix_fast`: `(head, tail)` with `head + tail` the completed JSON.
fn fix_fast(s: &[char], allow: Allow) -> Fix<(String, String)> {
    let tokens: Vec<(isize, char)> = s
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c, '"' | '[' | ']' | '{' | '}'))
        .map(|(i, &c)| (i as isize, c))
        .collect();
    if tokens.first().is_none_or(|&(_, c)| c == '"') {
        return fix(s, allow, true);
    }
    let is_escaped = |index: isize| backslashes_before(s, index) % 2 == 1;
    let mut stack: Vec<(isize, char)> = Vec::new();
    let (mut in_string, mut string_start, mut string_end) = (false, -1isize, -1isize);
    for &(i, c) in &tokens {
        if c == '"' {
            if !in_string {
                in_string = true;
                string_start = i;
            } else if !is_escaped(i) {
                in_string = false;
                string_end = i;
            }
        } else if !in_string {
            match c {
                '}' | ']' => {
                    let (_, open) = stack.pop().ok_or(Fail::Index)?;
                    if open != if c == '}' { '{' } else { '[' } {
                        return Err(Fail::Other);
                    }
                }
                _ => stack.push((i, c)),
            }
        }
    }
    let Some(&(top_at, top)) = stack.last() else { return Ok((text(s), String::new())) };
    let below = &stack[..stack.len() - 1];
    let head = |k: isize| text(slice(s, None, Some(k)));

    if !allow.strings && in_string {
        // Cut before the key whose string is still open.
        if top_at > string_end && top == '{' {
            return Ok((head(top_at + 1), closers(&stack)));
        }
        let comma = rfind(s, ',', Some(top_at.max(string_end) + 1), Some(string_start));
        if comma != -1 {
            return Ok((head(comma), closers(&stack)));
        }
        return Ok(truncate_before_last_key(s, top_at, string_end, &stack));
    }

    if in_string != (string_end < string_start) {
        return Err(Fail::Other);
    }
    if in_string {
        if top == '[' {
            let (h, t) = fix(slice(s, Some(string_start), None), allow, false)?;
            return Ok((head(string_start) + &h, t + &closers(&stack)));
        }
        let start = string_end.max(top_at);
        let between = slice(s, Some(start + 1), Some(string_start));
        if between.contains(&',') {
            let comma = rfind(s, ',', Some(start), Some(string_start));
            let rest: Vec<char> = std::iter::once('{').chain(slice(s, Some(comma + 1), None).iter().copied()).collect();
            let (h, t) = fix(&rest, allow, false)?;
            return Ok((head(comma) + &drop_first(&h), t + &closers(below)));
        }
        if between.contains(&':') {
            let (h, t) = fix(slice(s, Some(string_start), None), allow, false)?;
            return Ok((head(string_start) + &h, t + &closers(&stack)));
        }
        return Ok((head(string_start), closers(&stack)));
    }

    let (last_at, last) = *tokens.last().ok_or(Fail::Other)?;
    let comma = rfind(s, ',', Some(string_end.max(last_at) + 1), None);
    if comma != -1 {
        if is_blank(slice(s, Some(comma + 1), None)) {
            return Ok((head(comma), closers(&stack)));
        }
        if top != '[' {
            return Err(Fail::Other);
        }
        return refix_after_comma(s, comma, '[', allow, below, below);
    }
    if matches!(last, ']' | '}') {
        if !is_blank(slice(s, Some(last_at + 1), None)) {
            return Err(Fail::Other);
        }
        return Ok((text(s), closers(&stack)));
    }
    if matches!(last, '[' | '{') {
        let (h, t) = fix(slice(s, Some(last_at), None), allow, false)?;
        return Ok((head(last_at) + &h, t + &closers(below)));
    }
    // The last token closed a string.
    if top == '[' {
        return Ok((text(s), closers(&stack)));
    }
    let colon = rfind(s, ':', Some(string_end), None);
    let comma = rfind(s, ',', Some(top_at + 1), Some(string_start));
    if comma == -1 {
        let (h, t) = fix(slice(s, Some(top_at), None), allow, false)?;
        return Ok((head(top_at) + &h, t + &closers(below)));
    }
    if colon == -1 {
        if rfind(s, ':', Some(top_at.max(comma) + 1), Some(string_start)) != -1 {
            return Ok((text(s), closers(&stack)));
        }
        // The library closes the whole stack here, not the stack below.
        return refix_after_comma(s, comma, '{', allow, below, &stack);
    }
    if colon <= comma {
        return Err(Fail::Other);
    }
    refix_after_comma(s, comma, '{', allow, below, below)
}

/// Re-complete the last member after `comma` as a one-member container,
/// dropping the comma when that member turns out empty.
fn refix_after_comma(
    s: &[char],
    comma: isize,
    open: char,
    allow: Allow,
    if_empty: &[(isize, char)],
    otherwise: &[(isize, char)],
) -> Fix<(String, String)> {
    let rest: Vec<char> = std::iter::once(open).chain(slice(s, Some(comma + 1), None).iter().copied()).collect();
    let (h, t) = fix(&rest, allow, false)?;
    let h_tail = drop_first(&h);
    let t_chars: Vec<char> = t.chars().collect();
    let t_inner = text(strip(slice(&t_chars, None, Some(-1))));
    let head = |k: isize| text(slice(s, None, Some(k)));
    if (h_tail.clone() + &t_inner).is_empty() {
        return Ok((head(comma) + &h_tail, t + &closers(if_empty)));
    }
    Ok((head(comma + 1) + &h_tail, t + &closers(otherwise)))
}

/// `truncate_before_last_key_start`.
fn truncate_before_last_key(
    s: &[char],
    container: isize,
    string_end: isize,
    stack: &[(isize, char)],
) -> (String, String) {
    let head = |k: isize| text(slice(s, None, Some(k)));
    let mut key_start = string_end;
    loop {
        key_start = rfind(s, '"', Some(container), Some(key_start));
        if key_start == -1 {
            return (head(container + 1), closers(stack));
        }
        if backslashes_before(s, key_start) % 2 == 1 {
            key_start -= 1;
            continue;
        }
        let comma = rfind(s, ',', Some(container), Some(key_start));
        if comma == -1 {
            return (head(container + 1), closers(stack));
        }
        return (head(comma), closers(stack));
    }
}

// --- Python's json module ---------------------------------------------------

/// Why Python's `json.loads` failed: "Extra data" is the one callers retry.
#[derive(Debug, PartialEq, Eq)]
pub enum LoadError {
    ExtraData,
    Invalid,
}

fn json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The end (exclusive, in chars) of the JSON value starting at `s[0]`, by
/// structure alone; the value itself is then read by serde_json.
fn value_end(s: &[char]) -> Option<usize> {
    match s.first()? {
        '{' | '[' => {
            let mut depth = 0usize;
            let mut in_str = false;
            let mut escaped = false;
            for (i, &c) in s.iter().enumerate() {
                if in_str {
                    match (escaped, c) {
                        (true, _) => escaped = false,
                        (false, '\\') => escaped = true,
                        (false, '"') => in_str = false,
                        _ => {}
                    }
                    continue;
                }
                match c {
                    '"' => in_str = true,
                    '{' | '[' => depth += 1,
                    '}' | ']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        '"' => {
            let mut escaped = false;
            for (i, &c) in s.iter().enumerate().skip(1) {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => return Some(i + 1),
                    _ => {}
                }
            }
            None
        }
        _ => number_or_literal_end(s),
    }
}

/// Python's `NUMBER_RE` (`-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`) or a literal.
fn number_or_literal_end(s: &[char]) -> Option<usize> {
    let st = text(&s[..s.len().min(9)]);
    for word in ["null", "true", "false"] {
        if st.starts_with(word) {
            return Some(word.len());
        }
    }
    let digits = |from: usize| s[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = usize::from(s.first() == Some(&'-'));
    match s.get(i) {
        Some('0') => i += 1,
        Some('1'..='9') => i += digits(i),
        _ => return None,
    }
    if s.get(i) == Some(&'.') && digits(i + 1) > 0 {
        i += 1 + digits(i + 1);
    }
    if matches!(s.get(i), Some('e' | 'E')) {
        let sign = usize::from(matches!(s.get(i + 1), Some('+' | '-')));
        let n = digits(i + 1 + sign);
        if n > 0 {
            i += 1 + sign + n;
        }
    }
    Some(i)
}

/// `JSONDecoder.raw_decode(s)`: the value at `s[0]` (no leading whitespace)
/// and where it ends, in chars.
pub fn raw_decode(s: &[char]) -> Option<(Value, usize)> {
    let end = value_end(s)?;
    let value = serde_json::from_str(&text(&s[..end])).ok()?;
    Some((value, end))
}

/// `json.loads`.
pub fn loads(s: &[char]) -> Result<Value, LoadError> {
    let start = s.iter().position(|&c| !json_ws(c)).unwrap_or(s.len());
    let (value, n) = raw_decode(&s[start..]).ok_or(LoadError::Invalid)?;
    if s[start + n..].iter().all(|&c| json_ws(c)) {
        Ok(value)
    } else {
        Err(LoadError::ExtraData)
    }
}

/// `partial_json_loads(s, flags)`: the value and how many chars of `s` it
/// covers (all of `s` unless a complete value is followed by more text).
pub fn partial_loads(s: &[char], allow: Allow) -> Option<(Value, usize)> {
    let (head, tail) = fix_fast(s, allow).ok()?;
    let completed: Vec<char> = head.chars().chain(tail.chars()).collect();
    match loads(&completed) {
        Ok(v) => Some((v, s.len())),
        Err(LoadError::ExtraData) => raw_decode(s),
        Err(LoadError::Invalid) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn complete(s: &str, allow: Allow) -> Option<String> {
        fix_fast(&chars(s), allow).ok().map(|(h, t)| h + &t)
    }

    #[test]
    fn completes_like_partial_json_parser() {
        // Values below were produced by partial_json_parser 0.2.1.1.post7's
        // `ensure_json` on the same inputs.
        let all = Allow::ALL;
        assert_eq!(
            complete(r#"{"name": "get_weather", "parameters": {"city": "Par"#, all).as_deref(),
            Some(r#"{"name": "get_weather", "parameters": {"city": "Par"}}"#)
        );
        assert_eq!(complete(r#"{"to": ["chen"#, all).as_deref(), Some(r#"{"to": ["chen"]}"#));
        assert_eq!(complete(r#"{"a": 1, "b"#, all).as_deref(), Some(r#"{"a": 1}"#));
        assert_eq!(complete(r#"{"a": 1,"#, all).as_deref(), Some(r#"{"a": 1}"#));
        assert_eq!(complete(r#"{"a": tr"#, all).as_deref(), Some(r#"{"a": true}"#));
        assert_eq!(complete(r#"{"a": 12"#, all).as_deref(), Some(r#"{"a": 12}"#));
        assert_eq!(complete(r#"{"a": 1.5e"#, all).as_deref(), Some(r#"{"a": 1.5}"#));
        assert_eq!(complete(r#"[1, 2"#, all).as_deref(), Some(r#"[1, 2]"#));
        assert_eq!(complete(r#"{"s": "x\u00"#, all).as_deref(), Some(r#"{"s": "x"}"#));
        // Without partial strings, an open string value or key is dropped.
        let no = Allow::NO_STRINGS;
        assert_eq!(complete(r#"{"name": "get_wea"#, no).as_deref(), Some("{}"));
        assert_eq!(complete(r#"{"name": "get_weather", "param"#, no).as_deref(), Some(r#"{"name": "get_weather"}"#));
        assert_eq!(complete(r#"{"na"#, no).as_deref(), Some("{}"));
    }

    /// Every prefix of a set of tool-call texts, as the real library reads
    /// them (`tests/data/gen_partial_json.py` made the fixture).
    #[test]
    fn matches_the_library_on_every_prefix() {
        use std::io::BufRead;
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/partial_json.jsonl.gz");
        let file = std::fs::File::open(path).expect("fixture");
        let mut checked = 0;
        for line in std::io::BufReader::new(flate2::read::GzDecoder::new(file)).lines() {
            let row: Value = serde_json::from_str(&line.expect("line")).expect("row");
            let text = chars(row["text"].as_str().expect("text"));
            let allow = if row["strings"] == Value::Bool(true) { Allow::ALL } else { Allow::NO_STRINGS };
            // Compared as Python prints them: key order and number forms count.
            let got = partial_loads(&text, allow).map(|(v, end)| (crate::pycompat::json::dumps(&v), end as u64));
            let want = row["result"]
                .as_array()
                .map(|r| (r[0].as_str().expect("value").to_string(), r[1].as_u64().expect("end")));
            assert_eq!(got, want, "{:?} strings={}", text.iter().collect::<String>(), allow.strings);
            checked += 1;
        }
        assert!(checked > 2000, "fixture too small: {checked}");
    }

    #[test]
    fn loads_follows_python() {
        assert_eq!(loads(&chars(" {\"a\": [1, 2]} ")), Ok(serde_json::json!({"a": [1, 2]})));
        assert_eq!(loads(&chars("{\"a\": 1}; {\"b\": 2}")), Err(LoadError::ExtraData));
        assert_eq!(loads(&chars("{\"a\": }")), Err(LoadError::Invalid));
        // raw_decode stops after the first value, whatever follows.
        let (v, end) = raw_decode(&chars("{\"a\": \"}\"}; {\"b\"")).unwrap();
        assert_eq!((v, end), (serde_json::json!({"a": "}"}), 10));
        assert!(raw_decode(&chars(" {}")).is_none());
    }

    #[test]
    fn partial_loads_reads_the_first_of_several_values() {
        let (v, end) = partial_loads(&chars("{\"name\": \"a\"}; {\"na"), Allow::ALL).unwrap();
        assert_eq!((v, end), (serde_json::json!({"name": "a"}), 13));
        let s = chars("{\"name\": \"a\", \"arguments\": {\"x\": ");
        let (v, end) = partial_loads(&s, Allow::ALL).unwrap();
        assert_eq!((v, end), (serde_json::json!({"name": "a", "arguments": {}}), s.len()));
        assert!(partial_loads(&chars("hello"), Allow::ALL).is_none());
    }
}
