//! Finds where tool-call arguments end: melody takes the shortest prefix
//! of the arguments text that `serde_json::from_str::<Value>` accepts,
//! testing every prefix. This reads the text once, char by char, and says
//! when the text read so far first becomes such a document, with the same
//! rules: JSON whitespace around the value, no raw control characters in
//! strings, paired surrogate escapes, at most 127 nested containers, and
//! serde_json's own rule for numbers too large for an f64.

use serde::{Deserialize, Serialize};

/// serde_json refuses the 128th nested array or object.
const MAX_DEPTH: usize = 127;

/// Reading state of one arguments document.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct JsonPrefix {
    /// Open containers, `[` or `{`, outermost first.
    #[serde(rename = "o", default, skip_serializing_if = "String::is_empty")]
    open: String,
    #[serde(rename = "s", default)]
    state: State,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum State {
    /// Nothing but whitespace yet.
    #[default]
    Start,
    /// A value must follow (after `:` or an array's `,`).
    Value,
    /// Just after `[`: a value or `]`.
    FirstItem,
    /// Just after `{`: a key or `}`.
    FirstKey,
    /// After an object's `,`.
    Key,
    /// After a key.
    Colon,
    /// After a value inside a container.
    AfterValue,
    String {
        key: bool,
        escape: Escape,
    },
    Number(Number),
    /// `word` is one of true/false/null; `matched` bytes of it are read.
    Literal {
        word: u8,
        matched: u8,
    },
    /// No continuation can make the text valid.
    Failed,
}

impl State {
    /// JSON whitespace may come here and changes nothing.
    fn between_tokens(&self) -> bool {
        matches!(
            self,
            State::Start
                | State::Value
                | State::FirstItem
                | State::FirstKey
                | State::Key
                | State::Colon
                | State::AfterValue
        )
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Escape {
    #[default]
    None,
    Backslash,
    /// `\u` and `digits` hex digits of `value`; `low` when this must be
    /// the second half of a surrogate pair.
    Hex {
        digits: u8,
        value: u16,
        low: bool,
    },
    /// A high surrogate was read: `\u` and a low one must follow.
    NeedBackslash,
    NeedU,
}

/// A number inside a container, tracked the way serde_json computes it,
/// so that "out of range" is decided exactly as there.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Number {
    part: Part,
    significand: u64,
    /// Power of ten from digits (integer digits past u64, fraction digits kept).
    scale: i32,
    /// The current part overflowed (as serde_json sees it): its further
    /// digits only scale the value (integer part) or are ignored.
    overflowed: bool,
    exponent: i32,
    exponent_negative: bool,
    /// The value needs an f64 (so its range is checked).
    float: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Part {
    /// Nothing or only `-` read: a digit must come.
    #[default]
    Minus,
    Zero,
    Integer,
    Dot,
    Fraction,
    E,
    ExponentSign,
    Exponent,
}

const WORDS: [&str; 3] = ["true", "false", "null"];

fn is_json_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// serde_json's `overflow!(value * 10 + digit, max)`.
fn times_ten_plus(value: u64, digit: u64) -> Option<u64> {
    value.checked_mul(10)?.checked_add(digit)
}

/// serde_json's `f64_from_parts` refusal: a value that becomes infinite
/// when the significand is scaled by a non-negative power of ten.
fn out_of_range(significand: u64, exponent: i32) -> bool {
    if exponent < 0 || significand == 0 {
        return false;
    }
    if exponent > 308 {
        return true;
    }
    // serde_json multiplies by a table of correctly rounded powers of ten.
    let power = format!("1e{exponent}").parse::<f64>().unwrap_or(f64::INFINITY);
    (significand as f64 * power).is_infinite()
}

impl JsonPrefix {
    pub(super) fn is_initial(&self) -> bool {
        *self == JsonPrefix::default()
    }

    /// Reads `text`; returns the byte offset just after the char that
    /// completes the document, and then starts over for the next one.
    pub(super) fn first_complete(&mut self, text: &str) -> Option<usize> {
        for (at, c) in text.char_indices() {
            if self.push(c) {
                *self = JsonPrefix::default();
                return Some(at + c.len_utf8());
            }
        }
        None
    }

    /// Reads one char; true when the text read is now a whole document.
    fn push(&mut self, c: char) -> bool {
        let state = std::mem::take(&mut self.state);
        if is_json_space(c) && state.between_tokens() {
            self.state = state;
            return false;
        }
        match state {
            State::FirstItem if c == ']' => self.close('['),
            State::Start | State::Value | State::FirstItem => self.value(c),
            State::FirstKey if c == '}' => self.close('{'),
            State::FirstKey | State::Key if c == '"' => self.set(State::String { key: true, escape: Escape::None }),
            State::Colon if c == ':' => self.set(State::Value),
            State::AfterValue => self.after_value(c),
            State::String { key, escape } => self.string(key, escape, c),
            State::Number(number) => self.number(number, c),
            State::Literal { word, matched } => self.literal(word, matched, c),
            State::FirstKey | State::Key | State::Colon | State::Failed => self.set(State::Failed),
        }
    }

    /// Moves to `state`; the document is not complete.
    fn set(&mut self, state: State) -> bool {
        self.state = state;
        false
    }

    fn value(&mut self, c: char) -> bool {
        match c {
            '"' => self.set(State::String { key: false, escape: Escape::None }),
            '[' | '{' if self.open.len() >= MAX_DEPTH => self.set(State::Failed),
            '[' => {
                self.open.push(c);
                self.set(State::FirstItem)
            }
            '{' => {
                self.open.push(c);
                self.set(State::FirstKey)
            }
            // A number on its own is valid from its first digit on.
            '0'..='9' if self.open.is_empty() => true,
            '0'..='9' => self.number(Number::default(), c),
            '-' => self.set(State::Number(Number::default())),
            _ => match WORDS.iter().position(|word| word.starts_with(c)).and_then(|word| u8::try_from(word).ok()) {
                Some(word) => self.set(State::Literal { word, matched: 1 }),
                None => self.set(State::Failed),
            },
        }
    }

    /// A value ended: the document is complete when nothing is open.
    fn value_done(&mut self) -> bool {
        self.state = State::AfterValue;
        self.open.is_empty()
    }

    fn close(&mut self, opener: char) -> bool {
        if self.open.pop() == Some(opener) {
            self.value_done()
        } else {
            self.set(State::Failed)
        }
    }

    fn after_value(&mut self, c: char) -> bool {
        match (c, self.open.chars().last()) {
            (']', _) => self.close('['),
            ('}', _) => self.close('{'),
            (',', Some('[')) => self.set(State::Value),
            (',', Some('{')) => self.set(State::Key),
            _ => self.set(State::Failed),
        }
    }

    fn string(&mut self, key: bool, escape: Escape, c: char) -> bool {
        let next = match escape {
            Escape::None => match c {
                '"' if key => return self.set(State::Colon),
                '"' => return self.value_done(),
                '\\' => Some(Escape::Backslash),
                c if u32::from(c) < 0x20 => None,
                _ => Some(Escape::None),
            },
            Escape::Backslash => match c {
                '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' => Some(Escape::None),
                'u' => Some(Escape::Hex { digits: 0, value: 0, low: false }),
                _ => None,
            },
            Escape::Hex { digits, value, low } => c.to_digit(16).and_then(|digit| {
                let value = value.checked_mul(16)?.checked_add(u16::try_from(digit).ok()?)?;
                if digits < 3 {
                    return Some(Escape::Hex { digits: digits + 1, value, low });
                }
                let is_low = (0xDC00..=0xDFFF).contains(&value);
                let is_high = (0xD800..=0xDBFF).contains(&value);
                match (low, is_low, is_high) {
                    (true, true, _) | (false, false, false) => Some(Escape::None),
                    (false, false, true) => Some(Escape::NeedBackslash),
                    _ => None,
                }
            }),
            Escape::NeedBackslash => (c == '\\').then_some(Escape::NeedU),
            Escape::NeedU => (c == 'u').then_some(Escape::Hex { digits: 0, value: 0, low: true }),
        };
        match next {
            Some(escape) => self.set(State::String { key, escape }),
            None => self.set(State::Failed),
        }
    }

    fn literal(&mut self, word: u8, matched: u8, c: char) -> bool {
        let text = WORDS.get(usize::from(word)).copied().unwrap_or_default();
        match text.as_bytes().get(usize::from(matched)) {
            Some(&byte) if char::from(byte) == c => {
                let matched = matched + 1;
                if text.len() == usize::from(matched) {
                    return self.value_done();
                }
                self.set(State::Literal { word, matched })
            }
            _ => self.set(State::Failed),
        }
    }

    fn number(&mut self, mut number: Number, c: char) -> bool {
        let digit = c.to_digit(10).map(u64::from);
        let part = match (number.part, c, digit) {
            // `-` then a digit is a whole document on its own.
            (Part::Minus, _, Some(_)) if self.open.is_empty() => return true,
            (Part::Minus, '0', _) => Part::Zero,
            (Part::Minus, _, Some(digit)) => {
                number.significand = digit;
                Part::Integer
            }
            (Part::Integer, _, Some(digit)) => {
                number.integer_digit(digit);
                Part::Integer
            }
            (Part::Zero | Part::Integer, '.', _) => {
                number.float = true;
                number.overflowed = false;
                Part::Dot
            }
            (Part::Dot | Part::Fraction, _, Some(digit)) => {
                number.fraction_digit(digit);
                Part::Fraction
            }
            (Part::Zero | Part::Integer | Part::Fraction, 'e' | 'E', _) => {
                number.float = true;
                Part::E
            }
            (Part::E, '+' | '-', _) => {
                number.exponent_negative = c == '-';
                Part::ExponentSign
            }
            (Part::E | Part::ExponentSign, _, Some(digit)) => {
                number.exponent = i32::try_from(digit).unwrap_or(0);
                number.overflowed = false;
                Part::Exponent
            }
            (Part::Exponent, _, Some(digit)) => {
                if !number.exponent_digit(digit) {
                    return self.set(State::Failed);
                }
                Part::Exponent
            }
            (Part::Zero | Part::Integer | Part::Fraction | Part::Exponent, _, _) => {
                // The number ended at `c`, which belongs to what follows.
                if number.is_out_of_range() {
                    return self.set(State::Failed);
                }
                self.state = State::AfterValue;
                return self.push(c);
            }
            _ => return self.set(State::Failed),
        };
        number.part = part;
        self.set(State::Number(number))
    }
}

impl Number {
    fn integer_digit(&mut self, digit: u64) {
        if self.overflowed {
            self.scale = self.scale.saturating_add(1);
            return;
        }
        match times_ten_plus(self.significand, digit) {
            Some(value) => self.significand = value,
            None => {
                // serde_json switches to an f64 and only counts later digits.
                self.overflowed = true;
                self.float = true;
                self.scale = self.scale.saturating_add(1);
            }
        }
    }

    fn fraction_digit(&mut self, digit: u64) {
        if self.overflowed {
            return;
        }
        match times_ten_plus(self.significand, digit) {
            Some(value) => {
                self.significand = value;
                self.scale = self.scale.saturating_sub(1);
            }
            None => self.overflowed = true,
        }
    }

    /// False when the exponent overflows an i32 in a way serde_json refuses.
    fn exponent_digit(&mut self, digit: u64) -> bool {
        if self.overflowed {
            return true;
        }
        let digit = i32::try_from(digit).unwrap_or(0);
        match self.exponent.checked_mul(10).and_then(|value| value.checked_add(digit)) {
            Some(value) => self.exponent = value,
            None => {
                if self.significand != 0 && !self.exponent_negative {
                    return false;
                }
                // The value is zero whatever comes next.
                self.overflowed = true;
                self.significand = 0;
            }
        }
        true
    }

    fn is_out_of_range(&self) -> bool {
        if !self.float {
            return false;
        }
        let exponent = if self.exponent_negative {
            self.scale.saturating_sub(self.exponent)
        } else {
            self.scale.saturating_add(self.exponent)
        };
        out_of_range(self.significand, exponent)
    }
}
