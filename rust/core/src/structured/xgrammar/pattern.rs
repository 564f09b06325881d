//! `pattern` strings. xgrammar keeps a pattern whole, as a `Regex(..)` rule,
//! when it is printable ASCII, its own regex engine compiles it, and it can
//! match something needing no JSON escape; otherwise it converts the pattern
//! to grammar rules (`regex_ebnf`). Knowing that engine's every rule is out of
//! reach, so this port decides only where it is sure: patterns written in a
//! plain, common subset of regex syntax (checked against the installed
//! xgrammar), patterns that cannot go to the engine, and patterns whose
//! conversion fails on a construct the engine refuses too. Anything else is
//! reported as unsupported.

use super::convert::Converter;
use super::ebnf::parse_ebnf;
use super::error::{RaisedAt, XgrammarError};
use super::grammar::Expr;
use super::numeric::regex_subgrammar;
use super::regex_ebnf::regex_to_ebnf;

/// Repetition counts beyond this are not judged (the engine's limits differ).
const MAX_COUNT: u32 = 1000;
/// Group nesting beyond this is not judged.
const MAX_NESTING: usize = 64;

/// Conversion errors for constructs xgrammar's regex engine rejects as well,
/// so the conversion error is what xgrammar raises.
const ENGINE_REJECTS: [&str; 9] = [
    "Backreference is not supported yet.",
    "Unicode character class escape sequence is not supported yet.",
    "Word boundary is not supported yet.",
    "Lookbehind is not supported yet.",
    "Unmatched ')'",
    "The parenthesis is not closed.",
    "Unclosed '['",
    "Empty character class is not allowed in regex.",
    "Escape sequence is not finished.",
];

/// The expression for the inside of a JSON string matching `pattern`.
pub(super) fn string_pattern(conv: &mut Converter, pattern: &str) -> Result<Expr, XgrammarError> {
    match engine_verdict(pattern) {
        Verdict::KeptWhole => Ok(Expr::Regex(pattern.to_string())),
        Verdict::Converted => regex_subgrammar(conv, pattern),
        // Malformed patterns: xgrammar's engine refuses them, so the
        // conversion's error is the one raised.
        Verdict::Unknown => match regex_to_ebnf(pattern) {
            Err(error @ XgrammarError::Rejected { at: RaisedAt::Regex, .. }) if refused_by_engine(&error) => Err(error),
            Ok(ebnf) => match parse_ebnf(&ebnf) {
                Err(error @ XgrammarError::Rejected { at: RaisedAt::EbnfParser, .. }) => Err(error),
                _ => Err(XgrammarError::Unsupported(format!("pattern {pattern:?}"))),
            },
            Err(_) => Err(XgrammarError::Unsupported(format!("pattern {pattern:?}"))),
        },
    }
}

fn refused_by_engine(error: &XgrammarError) -> bool {
    let XgrammarError::Rejected { message, .. } = error else { return false };
    ENGINE_REJECTS.iter().any(|cause| message.ends_with(cause))
}

#[derive(Debug, PartialEq)]
enum Verdict {
    /// Kept as a `Regex` rule.
    KeptWhole,
    /// Converted to grammar rules.
    Converted,
    /// Outside what this port can judge.
    Unknown,
}

fn engine_verdict(pattern: &str) -> Verdict {
    // Only printable ASCII is offered to the engine.
    if !pattern.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return Verdict::Converted;
    }
    // A leading case-insensitive flag is understood, and changes nothing here.
    let body = pattern.strip_prefix("(?i)").unwrap_or(pattern);
    let mut parser = Parser { bytes: body.as_bytes(), pos: 0 };
    if parser.peek() == Some(b'^') {
        parser.pos += 1;
    }
    let Some(matchable) = parser.alternation(0) else { return Verdict::Unknown };
    if parser.peek() == Some(b'$') {
        parser.pos += 1;
    }
    match (parser.pos == parser.bytes.len(), matchable) {
        (false, _) => Verdict::Unknown,
        (true, true) => Verdict::KeptWhole,
        // The engine's language, minus what JSON must escape, is empty.
        (true, false) => Verdict::Converted,
    }
}

/// Recursive descent over the recognised subset; each method returns whether
/// the part can match some text needing no JSON escape, or `None` when the
/// syntax is outside the subset.
struct Parser<'p> {
    bytes: &'p [u8],
    pos: usize,
}

/// A set of code points, as inclusive ranges.
type CodePoints = Vec<(u32, u32)>;

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn at_end_anchor(&self) -> bool {
        self.peek() == Some(b'$') && self.pos + 1 == self.bytes.len()
    }

    fn alternation(&mut self, nesting: usize) -> Option<bool> {
        let mut any = self.concatenation(nesting)?;
        while self.eat(b'|') {
            any |= self.concatenation(nesting)?;
        }
        Some(any)
    }

    fn concatenation(&mut self, nesting: usize) -> Option<bool> {
        let mut all = true;
        while let Some(byte) = self.peek() {
            if byte == b'|' || byte == b')' || self.at_end_anchor() {
                break;
            }
            let atom = self.atom(nesting)?;
            let min = self.quantifier()?;
            all &= atom || min == 0;
        }
        Some(all)
    }

    /// The minimum count of the quantifier after an atom (1 when none).
    fn quantifier(&mut self) -> Option<u32> {
        let min = match self.peek() {
            Some(b'*' | b'?') => 0,
            Some(b'+') => 1,
            Some(b'{') => {
                self.pos += 1;
                let min = self.number()?;
                let max = if self.eat(b',') {
                    if self.peek() == Some(b'}') {
                        None
                    } else {
                        Some(self.number()?)
                    }
                } else {
                    Some(min)
                };
                if self.peek() != Some(b'}') || max.is_some_and(|max| max < min) {
                    return None;
                }
                min
            }
            _ => return Some(1),
        };
        self.pos += 1;
        // A lazy suffix changes nothing here; stacked quantifiers stay out.
        self.eat(b'?');
        if matches!(self.peek(), Some(b'*' | b'+' | b'?' | b'{')) {
            return None;
        }
        Some(min)
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = std::str::from_utf8(self.bytes.get(start..self.pos)?).ok()?;
        let value: u32 = digits.parse().ok()?;
        (value <= MAX_COUNT).then_some(value)
    }

    fn atom(&mut self, nesting: usize) -> Option<bool> {
        let byte = self.peek()?;
        self.pos += 1;
        match byte {
            b'(' => {
                if nesting >= MAX_NESTING {
                    return None;
                }
                if self.eat(b'?') && !self.eat(b':') {
                    return None;
                }
                let inner = self.alternation(nesting + 1)?;
                self.eat(b')').then_some(inner)
            }
            b'[' => self.class(),
            b'.' => Some(true),
            b'\\' => self.escape(false).map(|set| any_allowed(&set)),
            b')' | b']' | b'{' | b'}' | b'*' | b'+' | b'?' | b'|' | b'^' | b'$' => None,
            literal => Some(allowed(u32::from(literal))),
        }
    }

    /// The code points an escape stands for.
    fn escape(&mut self, in_class: bool) -> Option<CodePoints> {
        let byte = self.peek()?;
        self.pos += 1;
        let single = |cp: u32| Some(vec![(cp, cp)]);
        match byte {
            b'd' => Some(vec![(0x30, 0x39)]),
            b'w' => Some(vec![(0x30, 0x39), (0x41, 0x5a), (0x5f, 0x5f), (0x61, 0x7a)]),
            b's' => Some(vec![(0x09, 0x0d), (0x20, 0x20)]),
            b'D' => Some(complement(&[(0x30, 0x39)])),
            b'W' => Some(complement(&[(0x30, 0x39), (0x41, 0x5a), (0x5f, 0x5f), (0x61, 0x7a)])),
            b'S' => Some(complement(&[(0x09, 0x0d), (0x20, 0x20)])),
            b'n' => single(0x0a),
            b't' => single(0x09),
            b'r' => single(0x0d),
            b'f' => single(0x0c),
            b'v' => single(0x0b),
            b'a' => single(0x07),
            b'e' => single(0x1b),
            b'0' => single(0x00),
            b'b' if in_class => single(0x08),
            b'x' => single(self.hex_digits(2)?),
            b'u' if self.eat(b'{') => {
                let start = self.pos;
                while self.peek().is_some_and(|b| b.is_ascii_hexdigit()) && self.pos - start < 6 {
                    self.pos += 1;
                }
                let digits = std::str::from_utf8(self.bytes.get(start..self.pos)?).ok()?;
                let value = u32::from_str_radix(digits, 16).ok()?;
                (self.eat(b'}') && value <= 0x10ffff).then(|| vec![(value, value)])
            }
            b'u' => single(self.hex_digits(4)?),
            // Punctuation escapes itself.
            other if other.is_ascii_punctuation() || other == b' ' => single(u32::from(other)),
            _ => None,
        }
    }

    fn hex_digits(&mut self, count: usize) -> Option<u32> {
        let digits = std::str::from_utf8(self.bytes.get(self.pos..self.pos + count)?).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += count;
        u32::from_str_radix(digits, 16).ok()
    }

    fn class(&mut self) -> Option<bool> {
        let negated = self.eat(b'^');
        let mut members: CodePoints = Vec::new();
        let mut first = true;
        loop {
            let byte = self.peek()?;
            if byte == b']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            let low = self.class_member()?;
            let is_range = self.peek() == Some(b'-') && self.bytes.get(self.pos + 1).is_some_and(|b| *b != b']');
            if !is_range {
                members.extend(low);
                continue;
            }
            self.pos += 1;
            let (&[(low, low_end)], Some(&[(high, high_end)])) = (low.as_slice(), self.class_member().as_deref())
            else {
                return None;
            };
            if low != low_end || high != high_end || high < low {
                return None;
            }
            members.push((low, high));
        }
        let set = if negated { complement(&members) } else { members };
        Some(any_allowed(&set))
    }

    fn class_member(&mut self) -> Option<CodePoints> {
        let byte = self.peek()?;
        self.pos += 1;
        match byte {
            b'\\' => self.escape(true),
            // `[` inside a class may open a POSIX class in some engines.
            b'[' | b']' => None,
            other => Some(vec![(u32::from(other), u32::from(other))]),
        }
    }
}

fn complement(ranges: &[(u32, u32)]) -> CodePoints {
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable();
    let mut out = Vec::new();
    let mut next = 0_u32;
    for (low, high) in sorted {
        if low > next {
            out.push((next, low - 1));
        }
        next = next.max(high.saturating_add(1));
    }
    if next <= 0x10ffff {
        out.push((next, 0x10ffff));
    }
    out
}

/// Whether a set holds a character a JSON string holds without escaping:
/// anything from U+0020 on but `"` and `\`.
fn any_allowed(set: &[(u32, u32)]) -> bool {
    set.iter().any(|&(low, high)| {
        let low = low.max(0x20);
        low <= high && (low..=high.min(low + 3)).any(allowed)
    })
}

fn allowed(cp: u32) -> bool {
    cp >= 0x20 && cp != 0x22 && cp != 0x5c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_installed_xgrammar() {
        assert_eq!(engine_verdict("^[0-9]+$"), Verdict::KeptWhole);
        assert_eq!(engine_verdict(r"\s"), Verdict::KeptWhole);
        assert_eq!(engine_verdict(r#"^"a$"#), Verdict::Converted);
        assert_eq!(engine_verdict(r"[\b]x"), Verdict::Converted);
        assert_eq!(engine_verdict("caf\u{e9}"), Verdict::Converted);
        assert_eq!(engine_verdict(r"[^\x20-\u{10FFFF}]"), Verdict::Converted);
        assert_eq!(engine_verdict(r"[^\x20-\uffff]"), Verdict::KeptWhole);
        assert_eq!(engine_verdict("(?i)a"), Verdict::KeptWhole);
        assert_eq!(engine_verdict("(?s)a"), Verdict::Unknown);
    }
}
