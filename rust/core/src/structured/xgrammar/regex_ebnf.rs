//! xgrammar's fallback for regexes, first step: a textual regex -> EBNF
//! translation (`regex_converter.cc`), reproduced as text so its quirks carry
//! over into the EBNF parser (`ebnf`): for instance a `\x` escape there reads
//! every hex digit that follows. Its errors are xgrammar's, position included.

use super::error::{RaisedAt, XgrammarError};
use super::print::push_escaped;

/// `RegexToEBNF(regex)` without the `root ::= ` header.
pub(super) fn regex_to_ebnf(regex: &str) -> Result<String, XgrammarError> {
    // The converter reads the pattern as a C string: it ends at a NUL.
    let text = regex.split('\0').next().unwrap_or_default();
    let mut code_points: Vec<u32> = text.chars().map(u32::from).collect();
    let end = code_points.len();
    code_points.push(0);
    let mut converter = RegexConverter { cps: code_points, pos: 0, end, out: String::new(), depth: 0 };
    converter.convert()?;
    Ok(converter.out)
}

struct RegexConverter {
    /// The pattern's code points, then a 0 sentinel at `end`.
    cps: Vec<u32>,
    pos: usize,
    end: usize,
    out: String,
    depth: i32,
}

fn is_digit(cp: u32) -> bool {
    (0x30..=0x39).contains(&cp)
}

/// xgrammar narrows a code point to `char` before reading it as a hex digit.
fn hex_value(cp: u32) -> Option<u32> {
    char::from((cp & 0xff) as u8).to_digit(16)
}

/// `EscapeString` for one code point, as the EBNF text spells it.
fn escape_code_point(cp: u32) -> String {
    let mut text = String::new();
    push_escaped(cp, false, &mut text);
    text
}

/// `ParseNextEscaped`: the code point of the escape at `data[0] == '\\'` and
/// its length, `None` when it is not a valid escape. `extra` maps characters
/// that escape to themselves.
pub(super) fn parse_escape(data: &[u32], extra: &[u8]) -> Option<(u32, usize)> {
    let second = *data.get(1)?;
    if second > 128 {
        return None;
    }
    let second_byte = second as u8;
    if extra.contains(&second_byte) {
        return Some((second, 2));
    }
    let simple = match second_byte {
        b'\'' | b'"' | b'?' | b'\\' | b'/' => Some(second),
        b'a' => Some(0x07),
        b'b' => Some(0x08),
        b'f' => Some(0x0c),
        b'n' => Some(0x0a),
        b'r' => Some(0x0d),
        b't' => Some(0x09),
        b'v' => Some(0x0b),
        b'0' => Some(0x00),
        b'e' => Some(0x1b),
        _ => None,
    };
    if let Some(cp) = simple {
        return Some((cp, 2));
    }
    match second_byte {
        b'x' => {
            let mut value: u32 = 0;
            let mut len = 0;
            while let Some(digit) = data.get(2 + len).copied().and_then(hex_value) {
                value = value.checked_mul(16)?.checked_add(digit)?;
                len += 1;
            }
            (len > 0).then_some((value, len + 2))
        }
        b'u' | b'U' => {
            let len = if second_byte == b'u' { 4 } else { 8 };
            let mut value: u32 = 0;
            for i in 0..len {
                value = value * 16 + data.get(2 + i).copied().and_then(hex_value)?;
            }
            Some((value, len + 2))
        }
        _ => None,
    }
}

/// Characters the regex converter lets a backslash escape literally.
const REGEX_LITERAL_ESCAPES: &[u8] = b"^$.*+?\\()[]{}|/";

impl RegexConverter {
    fn at(&self, offset: usize) -> u32 {
        self.cps.get(self.pos + offset).copied().unwrap_or(0)
    }

    fn error(&self, message: &str) -> XgrammarError {
        XgrammarError::Rejected {
            at: RaisedAt::Regex,
            message: format!("Regex parsing error at position {}: {message}", self.pos + 1),
        }
    }

    fn segment(&mut self, element: &str) {
        if !self.out.is_empty() {
            self.out.push(' ');
        }
        self.out.push_str(element);
    }

    fn convert(&mut self) -> Result<(), XgrammarError> {
        let mut is_empty = true;
        while self.pos != self.end {
            let cp = self.at(0);
            match char::from_u32(cp).unwrap_or('\0') {
                // Anchors are dropped (xgrammar warns when they are not at the ends).
                '^' | '$' => self.pos += 1,
                '[' => {
                    is_empty = false;
                    let class = self.character_class()?;
                    self.segment(&class);
                }
                '(' => {
                    is_empty = false;
                    self.pos += 1;
                    self.depth += 1;
                    self.segment("(");
                    if self.pos != self.end && self.at(0) == u32::from('?') {
                        self.pos += 1;
                        self.group_modifier()?;
                    }
                }
                ')' => {
                    is_empty = false;
                    if self.depth == 0 {
                        return Err(self.error("Unmatched ')'"));
                    }
                    if self.out.ends_with('|') {
                        self.segment("\"\"");
                    }
                    self.depth -= 1;
                    self.segment(")");
                    self.pos += 1;
                }
                c @ ('*' | '+' | '?') => {
                    is_empty = false;
                    self.out.push(c);
                    self.pos += 1;
                    self.after_quantifier()?;
                }
                '{' => {
                    is_empty = false;
                    let range = self.repetition_range()?;
                    self.out.push_str(&range);
                    self.after_quantifier()?;
                }
                '|' => {
                    is_empty = false;
                    if self.out.is_empty() || self.out.ends_with('|') || self.out.ends_with('(') {
                        self.segment("\"\"");
                    }
                    self.segment("|");
                    self.pos += 1;
                }
                '\\' => {
                    is_empty = false;
                    let escape = self.escape()?;
                    self.segment(&escape);
                }
                '.' => {
                    is_empty = false;
                    self.segment("[\\u0000-\\U0010FFFF]");
                    self.pos += 1;
                }
                _ => {
                    is_empty = false;
                    self.segment(&format!("\"{}\"", escape_code_point(cp)));
                    self.pos += 1;
                }
            }
        }
        if self.depth != 0 {
            return Err(self.error("The parenthesis is not closed."));
        }
        if self.out.ends_with('|') {
            self.segment("\"\"");
        }
        if is_empty {
            self.segment("\"\"");
        }
        Ok(())
    }

    /// A lazy `?` is skipped; another quantifier is an error.
    fn after_quantifier(&mut self) -> Result<(), XgrammarError> {
        if self.pos != self.end && self.at(0) == u32::from('?') {
            self.pos += 1;
        }
        if self.pos != self.end && [b'{', b'*', b'+', b'?'].iter().any(|b| self.at(0) == u32::from(*b)) {
            return Err(self.error("Two consecutive repetition modifiers are not allowed."));
        }
        Ok(())
    }

    fn character_class(&mut self) -> Result<String, XgrammarError> {
        let mut class = String::from("[");
        self.pos += 1;
        if self.at(0) == u32::from(']') {
            return Err(self.error("Empty character class is not allowed in regex."));
        }
        while self.at(0) != u32::from(']') && self.pos != self.end {
            if self.at(0) == u32::from('\\') {
                class.push_str(&self.escape_in_class()?);
            } else {
                class.push(char::from_u32(self.at(0)).unwrap_or('\u{fffd}'));
                self.pos += 1;
            }
        }
        if self.pos == self.end {
            return Err(self.error("Unclosed '['"));
        }
        class.push(']');
        self.pos += 1;
        Ok(class)
    }

    fn repetition_range(&mut self) -> Result<String, XgrammarError> {
        let invalid = |this: &Self| this.error("Invalid repetition count.");
        let mut range = String::from("{");
        self.pos += 1;
        if !is_digit(self.at(0)) {
            return Err(invalid(self));
        }
        while is_digit(self.at(0)) {
            range.push(char::from(self.at(0) as u8));
            self.pos += 1;
        }
        if self.at(0) != u32::from(',') && self.at(0) != u32::from('}') {
            return Err(invalid(self));
        }
        let closed = self.at(0) == u32::from('}');
        range.push(if closed { '}' } else { ',' });
        self.pos += 1;
        if closed {
            return Ok(range);
        }
        if !is_digit(self.at(0)) && self.at(0) != u32::from('}') {
            return Err(invalid(self));
        }
        while is_digit(self.at(0)) {
            range.push(char::from(self.at(0) as u8));
            self.pos += 1;
        }
        if self.at(0) != u32::from('}') {
            return Err(invalid(self));
        }
        range.push('}');
        self.pos += 1;
        Ok(range)
    }

    /// A single escaped character (`HandleCharEscape`), spelled for EBNF.
    fn char_escape(&mut self, literal: &[u8]) -> Result<String, XgrammarError> {
        let remaining = self.end - self.pos;
        let next = self.at(1);
        if remaining < 2
            || (next == u32::from('u') && remaining < 5)
            || (next == u32::from('x') && remaining < 4)
            || (next == u32::from('c') && remaining < 3)
        {
            return Err(self.error("Escape sequence is not finished."));
        }
        if let Some((cp, len)) = parse_escape(&self.cps[self.pos..], literal) {
            self.pos += len;
            return self.spelled(cp);
        }
        if next == u32::from('u') && self.at(2) == u32::from('{') {
            self.pos += 3;
            let mut len = 0;
            let mut value: u32 = 0;
            while len <= 6 {
                let Some(digit) = hex_value(self.at(len)) else { break };
                value = value.saturating_mul(16).saturating_add(digit);
                len += 1;
            }
            if len == 0 || len > 6 || self.at(len) != u32::from('}') {
                return Err(self.error("Invalid Unicode escape sequence."));
            }
            self.pos += len + 1;
            return self.spelled(value);
        }
        if next == u32::from('c') {
            self.pos += 2;
            let letter = self.at(0);
            if !char::from_u32(letter).is_some_and(|c| c.is_ascii_alphabetic()) {
                return Err(self.error("Invalid control character escape sequence."));
            }
            self.pos += 1;
            return self.spelled(letter % 32);
        }
        // Unknown escape: the character itself (xgrammar warns).
        self.pos += 2;
        self.spelled(next)
    }

    /// Code points past Unicode would not survive the EBNF round trip.
    fn spelled(&self, cp: u32) -> Result<String, XgrammarError> {
        if char::from_u32(cp).is_none() {
            return Err(XgrammarError::Unsupported(format!("regex escape for code point {cp:#x}")));
        }
        Ok(escape_code_point(cp))
    }

    fn escape_in_class(&mut self) -> Result<String, XgrammarError> {
        if self.end - self.pos < 2 {
            return Err(self.error("Escape sequence is not finished."));
        }
        let shorthand = match char::from_u32(self.at(1)).unwrap_or('\0') {
            'd' => Some("0-9"),
            'D' => Some("\\x00-\\x2F\\x3A-\\U0010FFFF"),
            'w' => Some("a-zA-Z0-9_"),
            'W' => Some("\\x00-\\x2F\\x3A-\\x40\\x5B-\\x5E\\x60\\x7B-\\U0010FFFF"),
            's' => Some("\\f\\n\\r\\t\\v\\u0020\\u00a0"),
            'S' => Some("\\x00-\\x08\\x0E-\\x1F\\x21-\\x9F\\xA1-\\U0010FFFF"),
            _ => None,
        };
        if let Some(text) = shorthand {
            self.pos += 2;
            return Ok(text.to_string());
        }
        let mut literal = REGEX_LITERAL_ESCAPES.to_vec();
        literal.push(b'-');
        let spelled = self.char_escape(&literal)?;
        Ok(match spelled.as_str() {
            "]" | "-" => format!("\\{spelled}"),
            _ => spelled,
        })
    }

    fn escape(&mut self) -> Result<String, XgrammarError> {
        if self.end - self.pos < 2 {
            return Err(self.error("Escape sequence is not finished."));
        }
        let shorthand = match char::from_u32(self.at(1)).unwrap_or('\0') {
            'd' => Some("[0-9]"),
            'D' => Some("[^0-9]"),
            'w' => Some("[a-zA-Z0-9_]"),
            'W' => Some("[^a-zA-Z0-9_]"),
            's' => Some("[\\f\\n\\r\\t\\v\\u0020\\u00a0]"),
            'S' => Some("[^\\f\\n\\r\\t\\v\\u0020\\u00a0]"),
            '1'..='9' | 'k' => return Err(self.error("Backreference is not supported yet.")),
            'p' | 'P' => return Err(self.error("Unicode character class escape sequence is not supported yet.")),
            'b' | 'B' => return Err(self.error("Word boundary is not supported yet.")),
            _ => None,
        };
        if let Some(text) = shorthand {
            self.pos += 2;
            return Ok(text.to_string());
        }
        Ok(format!("\"{}\"", self.char_escape(REGEX_LITERAL_ESCAPES)?))
    }

    fn group_modifier(&mut self) -> Result<(), XgrammarError> {
        if self.pos == self.end {
            return Err(self.error("Group modifier is not finished."));
        }
        match char::from_u32(self.at(0)).unwrap_or('\0') {
            ':' => self.pos += 1,
            '=' | '!' => return Err(self.error("Lookahead is not supported yet.")),
            '<' if self.pos + 1 != self.end && matches!(self.at(1), 0x3d | 0x21) => {
                return Err(self.error("Lookbehind is not supported yet."))
            }
            '<' => {
                self.pos += 1;
                while self.pos != self.end && char::from_u32(self.at(0)).is_some_and(|c| c.is_ascii_alphabetic()) {
                    self.pos += 1;
                }
                if self.pos == self.end || self.at(0) != u32::from('>') {
                    return Err(self.error("Invalid named capturing group."));
                }
                self.pos += 1;
            }
            _ => return Err(self.error("Group modifier flag is not supported yet.")),
        }
        Ok(())
    }
}
