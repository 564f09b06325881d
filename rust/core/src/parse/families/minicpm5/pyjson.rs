//! `json.loads` into Python values: integers stay exact (a big one is no
//! float, `-0` is `0`), `NaN` and `Infinity` are read, a repeated key keeps
//! its first place and its last value.

use crate::parse::pyast::PyValue;

/// Nesting past this is Python's `RecursionError`: not read as JSON.
const MAX_DEPTH: usize = 900;

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

/// `json.loads(text)`, `None` where Python raises.
pub(super) fn loads_py(text: &str) -> Option<PyValue> {
    let mut r = Reader { text, at: 0 };
    r.blank();
    let value = r.value(0)?;
    r.blank();
    (r.at == text.len()).then_some(value)
}

impl Reader<'_> {
    fn rest(&self) -> &[u8] {
        &self.text.as_bytes()[self.at..]
    }

    fn peek(&self) -> Option<u8> {
        self.rest().first().copied()
    }

    fn blank(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        let hit = self.rest().starts_with(word.as_bytes());
        if hit {
            self.at += word.len();
        }
        hit
    }

    fn value(&mut self, depth: usize) -> Option<PyValue> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(PyValue::Str),
            _ if self.eat("null") => Some(PyValue::None),
            _ if self.eat("true") => Some(PyValue::Bool(true)),
            _ if self.eat("false") => Some(PyValue::Bool(false)),
            _ if self.eat("NaN") => Some(PyValue::Float(f64::NAN)),
            _ if self.eat("Infinity") => Some(PyValue::Float(f64::INFINITY)),
            _ if self.eat("-Infinity") => Some(PyValue::Float(f64::NEG_INFINITY)),
            _ => self.number(),
        }
    }

    fn object(&mut self, depth: usize) -> Option<PyValue> {
        self.at += 1;
        let mut entries: Vec<(PyValue, PyValue)> = Vec::new();
        self.blank();
        if self.eat("}") {
            return Some(PyValue::Dict(entries));
        }
        loop {
            self.blank();
            let key = self.string()?;
            self.blank();
            if !self.eat(":") {
                return None;
            }
            self.blank();
            let value = self.value(depth + 1)?;
            match entries.iter_mut().find(|(k, _)| *k == PyValue::Str(key.clone())) {
                Some(slot) => slot.1 = value,
                None => entries.push((PyValue::Str(key), value)),
            }
            self.blank();
            if self.eat("}") {
                return Some(PyValue::Dict(entries));
            }
            if !self.eat(",") {
                return None;
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<PyValue> {
        self.at += 1;
        let mut items = Vec::new();
        self.blank();
        if self.eat("]") {
            return Some(PyValue::List(items));
        }
        loop {
            self.blank();
            items.push(self.value(depth + 1)?);
            self.blank();
            if self.eat("]") {
                return Some(PyValue::List(items));
            }
            if !self.eat(",") {
                return None;
            }
        }
    }

    /// A string token, decoded by serde (which refuses raw control
    /// characters, as `strict=True` does).
    fn string(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.at;
        let mut i = self.at + 1;
        let bytes = self.text.as_bytes();
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => {
                    self.at = i + 1;
                    return serde_json::from_str(&self.text[start..self.at]).ok();
                }
                _ => i += 1,
            }
        }
        None
    }

    fn digits(&mut self) -> usize {
        let n = self.rest().iter().take_while(|b| b.is_ascii_digit()).count();
        self.at += n;
        n
    }

    fn number(&mut self) -> Option<PyValue> {
        let start = self.at;
        self.eat("-");
        let int_start = self.at;
        let n = self.digits();
        if n == 0 || (n > 1 && self.text.as_bytes()[int_start] == b'0') {
            // `01` reads as `0` then extra data: an error either way.
            return None;
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return None;
            }
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let save = self.at;
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                // Python's number pattern stops before a bare `e`.
                self.at = save;
            } else {
                float = true;
            }
        }
        let token = &self.text[start..self.at];
        if float {
            return token.parse().ok().map(PyValue::Float);
        }
        let digits = token.trim_start_matches('-');
        Some(PyValue::Int(if digits == "0" { digits.to_string() } else { token.to_string() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_as_python_does() {
        assert_eq!(loads_py(" 99999999999999999999999 "), Some(PyValue::Int("99999999999999999999999".into())));
        assert_eq!(loads_py("-0"), Some(PyValue::Int("0".into())));
        assert_eq!(loads_py(r#"{"a": 1, "a": 2}"#), Some(PyValue::Dict(vec![(PyValue::Str("a".into()), PyValue::Int("2".into()))])));
        assert_eq!(loads_py("[1, 2,]"), None);
        assert_eq!(loads_py("01"), None);
        assert_eq!(loads_py("1e5").and_then(|v| v.dumps().ok()).as_deref(), Some("100000.0"));
    }
}
