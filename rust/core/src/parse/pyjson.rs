//! JSON as Python's `json` module reads and writes it: `json.loads` (which
//! accepts NaN/Infinity) and `json.dumps(obj, ensure_ascii=False)` with its
//! default `", "` / `": "` separators, which is how vLLM re-serialises tool
//! arguments.

use serde_json::Value;

use crate::pyrepr::repr_float;

/// `json.loads`: `None` when Python would raise.
pub fn loads(text: &str) -> Option<Value> {
    serde_json::from_str(text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))).ok()
}

/// `json.dumps(value, ensure_ascii=False)`.
pub fn dumps(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// `json.dumps(text, ensure_ascii=False)` of a string (with its quotes).
pub fn dumps_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_str(text, &mut out);
    out
}

fn write_value(v: &Value, out: &mut String) {
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
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(k, out);
                out.push_str(": ");
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

fn write_str(s: &str, out: &mut String) {
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
    fn overlap_counts_tag_prefixes() {
        assert_eq!(partial_tag_overlap("abc<tool_", "<tool_call>"), 6);
        assert_eq!(partial_tag_overlap("abc", "<tool_call>"), 0);
        assert_eq!(partial_tag_overlap("<tool_call>", "<tool_call>"), 0);
    }
}
