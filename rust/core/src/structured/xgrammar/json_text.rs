//! JSON text as xgrammar's bundled picojson writes it (const/enum values and
//! property keys become grammar literals in this spelling), and the cache key
//! xgrammar derives from a sub-schema.
//!
//! vLLM hands xgrammar `json.dumps(schema)`, so a number is an int64 when it
//! was a Python int that fits, and a double otherwise.

use serde_json::{Number, Value};

/// Compact serialisation, object keys in document order.
pub(super) fn serialize(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// xgrammar's cache key: annotation keys dropped, object keys sorted, leaves
/// serialised. Keys are pasted in unescaped, as xgrammar does.
pub(super) fn cache_key(value: &Value) -> String {
    let mut out = String::new();
    write_key(value, &mut out);
    out
}

/// Keys that carry no constraint and so do not distinguish two schemas.
pub(super) fn is_annotation_key(key: &str) -> bool {
    matches!(
        key,
        "title"
            | "default"
            | "description"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "$comment"
            | "$schema"
    )
}

fn write_key(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().filter(|(k, _)| !is_annotation_key(k)).collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push('"');
                out.push_str(key);
                out.push_str("\":");
                write_key(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_key(item, out);
            }
            out.push(']');
        }
        other => write_value(other, out),
    }
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

/// The number as xgrammar sees it: `Some(i)` for an int64, else the double.
pub(super) enum JsonNumber {
    Int(i64),
    Double(f64),
}

pub(super) fn classify(n: &Number) -> JsonNumber {
    if let Some(i) = n.as_i64() {
        return JsonNumber::Int(i);
    }
    // A u64 past i64::MAX overflows picojson's int64 parse and becomes a double.
    if let Some(u) = n.as_u64() {
        return JsonNumber::Double(u as f64);
    }
    JsonNumber::Double(n.as_f64().unwrap_or(f64::NAN))
}

fn number_text(n: &Number) -> String {
    match classify(n) {
        JsonNumber::Int(i) => i.to_string(),
        JsonNumber::Double(x) => double_text(x),
    }
}

/// picojson: `%.f` for integral values below 2^53, else `%.17g`.
pub(super) fn double_text(x: f64) -> String {
    if x.abs() < 9_007_199_254_740_992.0 && x.fract() == 0.0 {
        if x == 0.0 && x.is_sign_negative() {
            return "-0".to_string();
        }
        return format!("{x:.0}");
    }
    format_g(x, 17)
}

/// C's `%.{precision}g`.
pub(super) fn format_g(x: f64, precision: usize) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".to_string()
        } else if x > 0.0 {
            "inf".to_string()
        } else {
            "-inf".to_string()
        };
    }
    let precision = precision.max(1);
    // The exponent C uses is the one of the value rounded to `precision` digits.
    let scientific = format!("{:.*e}", precision - 1, x);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific.as_str(), "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i64 {
        let mantissa = strip_fraction_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (precision as i64 - 1 - exponent).max(0) as usize;
        strip_fraction_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn strip_fraction_zeros(text: &str) -> &str {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.')
}

/// picojson's string escaping: byte-wise; `/` and non-ASCII are left alone.
pub(super) fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn doubles_print_like_picojson() {
        assert_eq!(double_text(1.0), "1");
        assert_eq!(double_text(-0.0), "-0");
        assert_eq!(double_text(0.1), "0.10000000000000001");
        assert_eq!(double_text(2.5e-7), "2.4999999999999999e-07");
        assert_eq!(double_text(1e20), "1e+20");
        assert_eq!(double_text(2.5), "2.5");
        assert_eq!(double_text(12345678901234567890.0), "1.2345678901234567e+19");
    }

    #[test]
    fn cache_key_sorts_and_drops_annotations() {
        let schema = json!({"type": "string", "description": "x", "enum": ["b", "a"]});
        assert_eq!(cache_key(&schema), r#"{"enum":["b","a"],"type":"string"}"#);
    }
}
