//! String and number literals (escapes, prefixes, radixes, f-strings).

use super::grammar::{is_id_char, is_id_start, PResult, Parser};
use super::{Lit, Node, NotCalls};

impl Parser {
    pub(super) fn string_prefix(&self, w: &str) -> bool {
        let next = self.s.get(self.i + w.chars().count()).copied();
        if !matches!(next, Some('\'' | '"')) {
            return false;
        }
        let l = w.to_ascii_lowercase();
        matches!(l.as_str(), "r" | "u" | "b" | "f" | "br" | "rb" | "fr" | "rf")
    }

    /// Adjacent string literals, concatenated.
    pub(super) fn strings(&mut self) -> PResult<Node> {
        let mut text = String::new();
        let (mut any_bytes, mut any_str, mut fstring, mut placeholder) = (false, false, false, false);
        loop {
            self.skip();
            let prefix = match self.peek() {
                Some('\'' | '"') => String::new(),
                Some(c) if is_id_start(c) => match self.word() {
                    Some(w) if self.string_prefix(&w) => w.to_ascii_lowercase(),
                    _ => break,
                },
                _ => break,
            };
            self.i += prefix.len();
            let raw = prefix.contains('r');
            let bytes = prefix.contains('b');
            let f = prefix.contains('f');
            let piece = self.string_body(raw, bytes)?;
            if f {
                fstring = true;
                match unbrace(&piece) {
                    Some(t) => text.push_str(&t),
                    None => placeholder = true,
                }
            } else {
                text.push_str(&piece);
            }
            any_bytes |= bytes;
            any_str |= !bytes;
        }
        if any_bytes && any_str {
            return Err(NotCalls);
        }
        Ok(if any_bytes {
            Node::Const(Lit::Unsupported)
        } else if fstring {
            Node::FString((!placeholder).then_some(text))
        } else {
            Node::Const(Lit::Str(text))
        })
    }

    /// One string literal from its opening quote: its value.
    fn string_body(&mut self, raw: bool, bytes: bool) -> PResult<String> {
        let q = self.peek().ok_or(NotCalls)?;
        let triple = self.at(1) == Some(q) && self.at(2) == Some(q);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let c = self.peek().ok_or(NotCalls)?;
            if c == q && (!triple || (self.at(1) == Some(q) && self.at(2) == Some(q))) {
                self.i += if triple { 3 } else { 1 };
                return Ok(out);
            }
            if bytes && !c.is_ascii() {
                return Err(NotCalls);
            }
            if (c == '\n' || c == '\r') && !triple {
                return Err(NotCalls);
            }
            if c != '\\' {
                out.push(c);
                self.i += 1;
                continue;
            }
            let e = self.at(1).ok_or(NotCalls)?;
            self.i += 2;
            if raw {
                out.push('\\');
                out.push(e);
                continue;
            }
            self.escape(e, bytes, &mut out)?;
        }
    }

    /// A backslash escape (the `\` and `e` already consumed).
    fn escape(&mut self, e: char, bytes: bool, out: &mut String) -> PResult<()> {
        let simple = match e {
            '\n' => Some(None),
            '\r' => {
                if self.peek() == Some('\n') {
                    self.i += 1;
                }
                Some(None)
            }
            '\\' | '\'' | '"' => Some(Some(e)),
            'a' => Some(Some('\x07')),
            'b' => Some(Some('\x08')),
            'f' => Some(Some('\x0c')),
            'n' => Some(Some('\n')),
            'r' => Some(Some('\r')),
            't' => Some(Some('\t')),
            'v' => Some(Some('\x0b')),
            _ => None,
        };
        if let Some(c) = simple {
            out.extend(c);
            return Ok(());
        }
        let code = match e {
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.i += 1;
                        }
                        None => break,
                    }
                }
                v
            }
            'x' => self.hex(2)?,
            'u' if !bytes => self.hex(4)?,
            'U' if !bytes => self.hex(8)?,
            // `\N{...}` needs the Unicode name table: unsupported.
            'N' if !bytes => return Err(NotCalls),
            _ => {
                out.push('\\');
                out.push(e);
                return Ok(());
            }
        };
        out.push(char::from_u32(code).ok_or(NotCalls)?);
        Ok(())
    }

    fn hex(&mut self, n: usize) -> PResult<u32> {
        let mut v: u32 = 0;
        for _ in 0..n {
            let d = self.peek().and_then(|c| c.to_digit(16)).ok_or(NotCalls)?;
            v = v.checked_mul(16).and_then(|v| v.checked_add(d)).ok_or(NotCalls)?;
            self.i += 1;
        }
        Ok(v)
    }

    pub(super) fn number(&mut self) -> PResult<Node> {
        let start = self.i;
        let radix = match (self.peek(), self.at(1).map(|c| c.to_ascii_lowercase())) {
            (Some('0'), Some('x')) => 16,
            (Some('0'), Some('o')) => 8,
            (Some('0'), Some('b')) => 2,
            _ => 10,
        };
        let lit = if radix != 10 {
            self.i += 2;
            if self.peek() == Some('_') {
                self.i += 1;
            }
            let digits = self.digit_run(radix)?;
            Lit::Int(to_decimal(&digits, radix))
        } else {
            let int_part = if self.peek() == Some('.') { String::new() } else { self.digit_run(10)? };
            let mut float = false;
            let mut text = int_part.clone();
            if self.peek() == Some('.') {
                float = true;
                self.i += 1;
                text.push('.');
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    text.push_str(&self.digit_run(10)?);
                } else {
                    text.push('0');
                }
            }
            if matches!(self.peek(), Some('e' | 'E'))
                && (self.at(1).is_some_and(|c| c.is_ascii_digit())
                    || (matches!(self.at(1), Some('+' | '-')) && self.at(2).is_some_and(|c| c.is_ascii_digit())))
            {
                float = true;
                self.i += 1;
                text.push('e');
                if let Some(sign @ ('+' | '-')) = self.peek() {
                    text.push(sign);
                    self.i += 1;
                }
                text.push_str(&self.digit_run(10)?);
            }
            if matches!(self.peek(), Some('j' | 'J')) {
                self.i += 1;
                Lit::Unsupported
            } else if float {
                let t = if text.starts_with('.') { format!("0{text}") } else { text };
                Lit::Float(t.parse::<f64>().map_err(|_| NotCalls)?)
            } else {
                let trimmed = int_part.trim_start_matches('0');
                if int_part.len() > 1 && int_part.starts_with('0') && !trimmed.is_empty() {
                    return Err(NotCalls);
                }
                Lit::Int(if trimmed.is_empty() { "0".into() } else { trimmed.to_string() })
            }
        };
        // `1abc`, `0x1g`: invalid literals.
        if self.peek().is_some_and(is_id_char) || self.i == start {
            return Err(NotCalls);
        }
        Ok(Node::Const(lit))
    }

    /// Digits of `radix` with single underscores between them.
    fn digit_run(&mut self, radix: u32) -> PResult<String> {
        let mut out = String::new();
        loop {
            match self.peek() {
                Some(c) if c.is_digit(radix) => {
                    out.push(c);
                    self.i += 1;
                }
                Some('_') if !out.is_empty() && self.at(1).is_some_and(|c| c.is_digit(radix)) => self.i += 1,
                _ => break,
            }
        }
        if out.is_empty() {
            return Err(NotCalls);
        }
        Ok(out)
    }
}

/// f-string text without placeholders: `{{`/`}}` unescaped; `None` when a
/// placeholder (or a lone brace, a syntax error) occurs.
fn unbrace(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '{' || c == '}' {
            if it.peek() == Some(&c) {
                it.next();
            } else {
                return None;
            }
        }
        out.push(c);
    }
    Some(out)
}

/// An unbounded integer in `radix` as decimal digits.
fn to_decimal(digits: &str, radix: u32) -> String {
    // Little-endian limbs of 10^9.
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let mut carry = u64::from(c.to_digit(radix).unwrap_or(0));
        for limb in limbs.iter_mut() {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut out = limbs.last().map_or("0".into(), u64::to_string);
    for limb in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{limb:09}"));
    }
    out
}
