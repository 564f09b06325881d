//! JSON as Python's `json` module reads and writes it: `json.loads` (which
//! accepts NaN/Infinity) and `json.dumps(obj, ensure_ascii=False)` with its
//! default `", "` / `": "` separators, which is how vLLM re-serialises tool
//! arguments.

use serde_json::Value;

use crate::pycompat::repr::repr_float;

/// `json.loads`: `None` when Python would raise.
pub fn loads(text: &str) -> Option<Value> {
    serde_json::from_str(text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))).ok()
}

/// `json.loads(text, strict=False)`: control characters may stand raw
/// inside strings.
pub fn loads_lenient(text: &str) -> Option<Value> {
    let mut out = String::with_capacity(text.len());
    let (mut in_str, mut escaped) = (false, false);
    for c in text.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            } else if (c as u32) < 0x20 {
                out.push_str(&format!("\\u{:04x}", c as u32));
                continue;
            }
        } else if c == '"' {
            in_str = true;
        }
        out.push(c);
    }
    loads(&out)
}

/// Python's `JSONDecodeError` for `text`, from serde's error: its message
/// head and the char offset where decoding stopped.
pub fn decode_error(text: &str, e: &serde_json::Error) -> (&'static str, usize) {
    // serde_json reports 1-based line and column; Python reports the char
    // offset where decoding stopped (the end of the text for a truncated one).
    if e.classify() == serde_json::error::Category::Eof {
        return eof_error(text);
    }
    let pos = char_offset(text, e.line(), e.column());
    let detail = e.to_string();
    let msg = if detail.contains("trailing characters") {
        "Extra data"
    } else if detail.contains("key must be a string") {
        "Expecting property name enclosed in double quotes"
    } else if detail.contains("expected `:`") {
        "Expecting ':' delimiter"
    } else if detail.contains("expected `,` or `}`") || detail.contains("expected `,` or `]`") {
        "Expecting ',' delimiter"
    } else if detail.contains("control character") {
        "Invalid control character at"
    } else if detail.contains("escape") {
        "Invalid \\escape"
    } else if detail.contains("expected ident") {
        // serde reads into a misspelt `null`/`true`/`false`; Python stops
        // where the word starts.
        let chars: Vec<char> = text.chars().collect();
        let start = (0..pos.min(chars.len())).rev().take_while(|&i| chars[i].is_ascii_alphabetic()).last();
        return ("Expecting value", start.unwrap_or(pos));
    } else {
        "Expecting value"
    };
    (msg, pos)
}

/// What Python's decoder expected when the text ran out, from where it
/// stands: inside a string (reported at the string's start), after an
/// object's opener or comma, a key, a colon, or a value.
fn eof_error(text: &str) -> (&'static str, usize) {
    #[derive(Clone, Copy, PartialEq)]
    enum Last {
        Open,
        Comma,
        Key,
        Colon,
        Value,
    }
    let mut stack: Vec<char> = Vec::new();
    let mut last = Last::Comma;
    let (mut in_string, mut escape, mut string_start) = (false, false, 0);
    // The bare word the text ends in (a literal cut short), and its start.
    let (mut word, mut word_start) = (String::new(), 0);
    let mut n = 0;
    for (i, c) in text.chars().enumerate() {
        n = i + 1;
        if !in_string && c.is_ascii_alphabetic() {
            if word.is_empty() {
                word_start = i;
            }
            word.push(c);
        } else if !in_string {
            word.clear();
        }
        if in_string {
            match (escape, c) {
                (true, _) => escape = false,
                (false, '\\') => escape = true,
                (false, '"') => {
                    in_string = false;
                    let in_object = stack.last() == Some(&'{');
                    last = if in_object && matches!(last, Last::Open | Last::Comma) { Last::Key } else { Last::Value };
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                string_start = i;
            }
            '{' | '[' => {
                stack.push(c);
                last = Last::Open;
            }
            '}' | ']' => {
                stack.pop();
                last = Last::Value;
            }
            ',' => last = Last::Comma,
            ':' => last = Last::Colon,
            c if c.is_whitespace() => {}
            _ => last = Last::Value,
        }
    }
    if in_string {
        return ("Unterminated string starting at", string_start);
    }
    if !word.is_empty() && !matches!(word.as_str(), "true" | "false" | "null") {
        return ("Expecting value", word_start);
    }
    let msg = match (stack.last(), last) {
        (Some('{'), Last::Open | Last::Comma) => "Expecting property name enclosed in double quotes",
        (Some('{'), Last::Key) => "Expecting ':' delimiter",
        (Some(_), Last::Value) => "Expecting ',' delimiter",
        _ => "Expecting value",
    };
    (msg, n)
}

/// `str(e)` of the `JSONDecodeError` `json.loads(text)` raises: `None`
/// when it does not raise.
pub fn loads_error(text: &str) -> Option<String> {
    let trimmed = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    let e = serde_json::from_str::<Value>(trimmed).err()?;
    let body = text.trim_start_matches([' ', '\t', '\n', '\r']);
    let lead = text.chars().count() - body.chars().count();
    // Python reports a text cut short at its very end, trailing space included.
    let (msg, pos) = decode_error(body, &e);
    let pos = pos + lead;
    let before: Vec<char> = text.chars().take(pos).collect();
    let line = before.iter().filter(|&&c| c == '\n').count() + 1;
    let column = pos - before.iter().rposition(|&c| c == '\n').map_or(0, |i| i + 1) + 1;
    Some(format!("{msg}: line {line} column {column} (char {pos})"))
}

fn char_offset(text: &str, line: usize, column: usize) -> usize {
    let mut pos = 0usize;
    for (i, l) in text.split('\n').enumerate() {
        if i + 1 == line {
            return pos + l.chars().take(column.saturating_sub(1)).count();
        }
        pos += l.chars().count() + 1;
    }
    pos
}

/// `json.dumps(value, ensure_ascii=False)`.
pub fn dumps(value: &Value) -> String {
    dumps_with(value, &DumpOptions::default())
}

/// The keyword arguments of `json.dumps` that chat templates use.
#[derive(Debug, Clone, Default)]
pub struct DumpOptions {
    pub indent: Option<String>,
    /// `(item_separator, key_separator)`; Python's default depends on `indent`.
    pub separators: Option<(String, String)>,
    pub sort_keys: bool,
    pub ensure_ascii: bool,
}

/// `json.dumps` with options.
pub fn dumps_with(value: &Value, opts: &DumpOptions) -> String {
    let (item, key) = match &opts.separators {
        Some((i, k)) => (i.clone(), k.clone()),
        None if opts.indent.is_some() => (",".to_string(), ": ".to_string()),
        None => (", ".to_string(), ": ".to_string()),
    };
    let mut w = Writer { opts, item, key, out: String::new() };
    w.value(value, 0);
    w.out
}

struct Writer<'a> {
    opts: &'a DumpOptions,
    item: String,
    key: String,
    out: String,
}

impl Writer<'_> {
    fn newline(&mut self, depth: usize) {
        if let Some(indent) = &self.opts.indent {
            self.out.push('\n');
            for _ in 0..depth {
                self.out.push_str(indent);
            }
        }
    }

    fn value(&mut self, v: &Value, depth: usize) {
        match v {
            Value::Array(items) if !items.is_empty() => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        let sep = self.item.clone();
                        self.out.push_str(&sep);
                    }
                    self.newline(depth + 1);
                    self.value(item, depth + 1);
                }
                self.newline(depth);
                self.out.push(']');
            }
            Value::Object(map) if !map.is_empty() => {
                self.out.push('{');
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                if self.opts.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                }
                for (i, (k, item)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        let sep = self.item.clone();
                        self.out.push_str(&sep);
                    }
                    self.newline(depth + 1);
                    write_str(k, &mut self.out, self.opts.ensure_ascii);
                    let sep = self.key.clone();
                    self.out.push_str(&sep);
                    self.value(item, depth + 1);
                }
                self.newline(depth);
                self.out.push('}');
            }
            Value::String(s) => write_str(s, &mut self.out, self.opts.ensure_ascii),
            other => write_scalar(other, &mut self.out),
        }
    }
}

/// `json.dumps(text, ensure_ascii=False)` of a string (with its quotes).
pub fn dumps_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_str(text, &mut out, false);
    out
}

fn write_scalar(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_f64() {
                let f = n.as_f64().unwrap_or(0.0);
                if f.is_nan() {
                    out.push_str("NaN");
                } else if f.is_infinite() {
                    out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
                } else {
                    out.push_str(&repr_float(f));
                }
            } else {
                out.push_str(&n.to_string());
            }
        }
        Value::String(s) => write_str(s, out, false),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

fn write_str(s: &str, out: &mut String, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ensure_ascii && (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{:04x}", unit));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `partial_tag_overlap`: the longest proper prefix of `tag` that `text`
/// ends with (in chars).
pub fn partial_tag_overlap(text: &str, tag: &str) -> usize {
    let tag_chars: Vec<char> = tag.chars().collect();
    let max = tag_chars.len().saturating_sub(1).min(text.chars().count());
    (1..=max).rev().find(|&k| text.ends_with(&tag_chars[..k].iter().collect::<String>())).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumps_matches_python() {
        let v = loads(r#"{"city": "Paris", "n": [1, 2.5, 1e-7], "ok": true, "u": "é\n\u0001"}"#).unwrap();
        assert_eq!(dumps(&v), "{\"city\": \"Paris\", \"n\": [1, 2.5, 1e-07], \"ok\": true, \"u\": \"é\\n\\u0001\"}");
    }

    #[test]
    fn decode_errors_read_as_pythons() {
        assert_eq!(loads_error("c").as_deref(), Some("Expecting value: line 1 column 1 (char 0)"));
        assert_eq!(loads_error("{\"a\": 1} x").as_deref(), Some("Extra data: line 1 column 10 (char 9)"));
        assert_eq!(loads_error("{\"a\": 1}"), None);
        // Cut short: what Python expected where the text ends.
        let expect = |t: &str| loads_error(t).unwrap_or_default();
        assert_eq!(expect("{\"p\": {"), "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)");
        assert_eq!(expect("{\"a\""), "Expecting ':' delimiter: line 1 column 5 (char 4)");
        assert_eq!(expect("{\"a\": 1"), "Expecting ',' delimiter: line 1 column 8 (char 7)");
        assert_eq!(expect("[1, "), "Expecting value: line 1 column 5 (char 4)");
        assert_eq!(expect("{\"a\": tru"), "Expecting value: line 1 column 7 (char 6)");
        assert_eq!(expect("[\"ab"), "Unterminated string starting at: line 1 column 2 (char 1)");
        assert_eq!(expect("not json"), "Expecting value: line 1 column 1 (char 0)");
    }

    #[test]
    fn overlap_counts_tag_prefixes() {
        assert_eq!(partial_tag_overlap("abc<tool_", "<tool_call>"), 6);
        assert_eq!(partial_tag_overlap("abc", "<tool_call>"), 0);
        assert_eq!(partial_tag_overlap("<tool_call>", "<tool_call>"), 0);
    }
}
