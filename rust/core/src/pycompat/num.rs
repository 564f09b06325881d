//! Python's `int(s)` and `float(s)` on text, and a float as `json.dumps`
//! prints it, for parsers that type arguments by a tool's schema.

use super::repr::repr_float;

fn py_strip(s: &str) -> &str {
    s.trim_matches(super::str::py_isspace)
}

/// Python's `int(s)` as canonical decimal text (ASCII digits).
pub fn py_int(s: &str) -> Option<String> {
    let s = py_strip(s);
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits = without_underscores(digits)?;
    let trimmed = digits.trim_start_matches('0');
    Some(match trimmed {
        "" => "0".to_string(),
        t if negative => format!("-{t}"),
        t => t.to_string(),
    })
}

/// `s` without the underscores Python allows (one, between two digits).
fn without_underscores(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.is_empty() || !b.iter().all(|c| c.is_ascii_digit() || *c == b'_') {
        return None;
    }
    let ok = b.iter().enumerate().all(|(i, &c)| {
        c != b'_' || (i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
    });
    ok.then(|| s.replace('_', ""))
}

/// Python's `float(s)`.
pub fn py_float(s: &str) -> Option<f64> {
    let s = py_strip(s);
    let plain = s.replace('_', "");
    if plain.len() != s.len() {
        // Underscores only between digits.
        let b = s.as_bytes();
        let ok = (0..b.len()).all(|i| {
            b[i] != b'_' || (i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        });
        if !ok {
            return None;
        }
    }
    let lower = plain.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if body.starts_with("in") || body.starts_with("na") {
        // Rust reads `infinity` / `inf` / `nan` as Python does; nothing else.
        if !matches!(body, "inf" | "infinity" | "nan") || lower.len() - body.len() > 1 {
            return None;
        }
    }
    plain.parse::<f64>().ok()
}

/// A float as `json.dumps` prints it (`NaN`, `Infinity` included).
pub fn float_json(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        repr_float(f)
    }
}

/// `int(f)` of an integral float, as decimal text (`-0.0` is `0`).
pub fn integral_float_text(f: f64) -> String {
    if f == 0.0 {
        "0".to_string()
    } else {
        format!("{f:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_number_parsing() {
        assert_eq!(py_int(" -007 ").as_deref(), Some("-7"));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_float("1e400"), Some(f64::INFINITY));
        assert_eq!(py_float("+.5"), Some(0.5));
        assert_eq!(py_float("inff"), None);
        assert_eq!(integral_float_text(-0.0), "0");
        assert_eq!(integral_float_text(1e22), "10000000000000000000000");
    }
}
