//! What XGrammar 0.2.8 refuses to compile, for the checks vLLM makes by
//! compiling (`_regex_compiles`: `Grammar.from_regex`; `_json_compiles`:
//! `Grammar.from_json_schema` in its default strict mode). Both restate
//! XGrammar's own checks: the regex converter's and the EBNF parser's
//! errors, and the JSON schema parser's, with its references resolved.

use crate::structured::request::STRING_FORMATS;
use serde_json::{Map, Value};

/// `Grammar.from_regex(pattern)` succeeds.
pub fn regex_compiles(pattern: &str) -> bool {
    Converter::new(pattern, false).run().is_ok()
}

/// A pattern inside a JSON schema: XGrammar first tries its own regex
/// automaton, which also takes lookarounds, inline flags and doubled
/// quantifiers, then the converter.
fn schema_pattern_compiles(pattern: &str) -> bool {
    Converter::new(pattern, true).run().is_ok()
}

/// The largest integer XGrammar's EBNF lexer reads.
const MAX_INTEGER: u64 = 1_000_000_000_000_000;

/// The regex converter (`RegexToEBNF`), keeping only what decides whether
/// the EBNF it writes parses.
struct Converter {
    chars: Vec<char>,
    at: usize,
    /// The last EBNF segment written: none, `(`, `|`, or an element.
    last: Last,
    depth: usize,
    /// Accept what only the JSON schema's regex automaton takes.
    lenient: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Last {
    Nothing,
    Open,
    Bar,
    Element,
    Quantifier,
}

type Step = Result<(), ()>;

impl Converter {
    fn new(pattern: &str, lenient: bool) -> Converter {
        Converter { chars: pattern.chars().collect(), at: 0, last: Last::Nothing, depth: 0, lenient }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn left(&self) -> usize {
        self.chars.len() - self.at
    }

    fn run(mut self) -> Step {
        while let Some(c) = self.peek(0) {
            match c {
                '^' | '$' => self.at += 1,
                '[' => {
                    self.class()?;
                    self.last = Last::Element;
                }
                '(' => {
                    self.at += 1;
                    self.depth += 1;
                    self.last = Last::Open;
                    if self.peek(0) == Some('?') {
                        self.at += 1;
                        self.group_modifier()?;
                    }
                }
                ')' => {
                    if self.depth == 0 {
                        return Err(());
                    }
                    self.depth -= 1;
                    self.at += 1;
                    self.last = Last::Element;
                }
                '*' | '+' | '?' | '{' => {
                    // The EBNF parser wants an element before a quantifier.
                    if !matches!(self.last, Last::Element | Last::Quantifier) {
                        return Err(());
                    }
                    if self.last == Last::Quantifier && !self.lenient {
                        return Err(());
                    }
                    if c == '{' {
                        self.repetition()?;
                    } else {
                        self.at += 1;
                    }
                    if self.peek(0) == Some('?') {
                        self.at += 1;
                    }
                    if matches!(self.peek(0), Some('{' | '*' | '+' | '?')) && !self.lenient {
                        return Err(());
                    }
                    self.last = Last::Quantifier;
                }
                '|' => {
                    self.at += 1;
                    self.last = Last::Bar;
                }
                '\\' => {
                    self.escape()?;
                    self.last = Last::Element;
                }
                _ => {
                    self.at += 1;
                    self.last = Last::Element;
                }
            }
        }
        if self.depth != 0 {
            return Err(());
        }
        Ok(())
    }

    /// `HandleRepetitionRange`, then the EBNF parser's bounds.
    fn repetition(&mut self) -> Step {
        self.at += 1;
        let number = |s: &mut Converter| -> Result<Option<u64>, ()> {
            let mut digits = String::new();
            while let Some(d) = s.peek(0).filter(char::is_ascii_digit) {
                digits.push(d);
                s.at += 1;
            }
            if digits.is_empty() {
                return Ok(None);
            }
            let n = digits.parse::<u64>().unwrap_or(u64::MAX);
            if n > MAX_INTEGER {
                return Err(());
            }
            Ok(Some(n))
        };
        let lower = number(self)?.ok_or(())?;
        match self.peek(0) {
            Some('}') => {
                self.at += 1;
                return Ok(());
            }
            Some(',') => self.at += 1,
            _ => return Err(()),
        }
        let upper = number(self)?;
        if self.peek(0) != Some('}') {
            return Err(());
        }
        self.at += 1;
        if upper.is_some_and(|u| u < lower) {
            return Err(());
        }
        Ok(())
    }

    /// `HandleGroupModifier`, after `(?`.
    fn group_modifier(&mut self) -> Step {
        match self.peek(0) {
            None => Err(()),
            Some(':') => {
                self.at += 1;
                Ok(())
            }
            Some('=' | '!') if self.lenient => {
                self.at += 1;
                Ok(())
            }
            Some('<') if matches!(self.peek(1), Some('=' | '!')) && self.lenient => {
                self.at += 2;
                Ok(())
            }
            Some('=' | '!') => Err(()),
            Some('<') if matches!(self.peek(1), Some('=' | '!')) => Err(()),
            Some('<') => {
                self.at += 1;
                while self.peek(0).is_some_and(|c| c.is_ascii_alphabetic()) {
                    self.at += 1;
                }
                if self.peek(0) != Some('>') {
                    return Err(());
                }
                self.at += 1;
                Ok(())
            }
            // Inline flags: only the automaton reads them.
            Some(c) if self.lenient && "imsxauL-".contains(c) => {
                while self.peek(0).is_some_and(|c| "imsxauL-".contains(c)) {
                    self.at += 1;
                }
                match self.peek(0) {
                    Some(':') => {
                        self.at += 1;
                        Ok(())
                    }
                    Some(')') => {
                        self.at += 1;
                        self.depth -= 1;
                        self.last = Last::Nothing;
                        Ok(())
                    }
                    _ => Err(()),
                }
            }
            Some(_) => Err(()),
        }
    }

    /// `HandleCharEscape`: the escaped code point (`None`: the character
    /// itself, unrecognised).
    fn char_escape(&mut self) -> Result<u32, ()> {
        let next = self.peek(1);
        let short = self.left() < 2
            || (next == Some('u') && self.left() < 5)
            || (next == Some('x') && self.left() < 4)
            || (next == Some('c') && self.left() < 3);
        if short {
            return Err(());
        }
        let Some(c) = next else { return Err(()) };
        let known = match c {
            '^' | '$' | '.' | '*' | '+' | '?' | '\\' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '/' | '-' | '\''
            | '"' => Some(u32::from(c)),
            'a' => Some(7),
            'b' => Some(8),
            'f' => Some(12),
            'n' => Some(10),
            'r' => Some(13),
            't' => Some(9),
            'v' => Some(11),
            '0' => Some(0),
            'e' => Some(27),
            _ => None,
        };
        if let Some(v) = known {
            self.at += 2;
            return Ok(v);
        }
        if c == 'x' {
            let mut n = 0usize;
            let mut value = 0u64;
            while let Some(d) = self.peek(2 + n).and_then(|d| d.to_digit(16)) {
                value = value.saturating_mul(16).saturating_add(u64::from(d));
                n += 1;
            }
            if n > 0 {
                self.at += 2 + n;
                return Ok(u32::try_from(value).unwrap_or(u32::MAX));
            }
        }
        if c == 'u' || c == 'U' {
            let width = if c == 'u' { 4 } else { 8 };
            let digits: Option<Vec<u32>> = (0..width).map(|i| self.peek(2 + i).and_then(|d| d.to_digit(16))).collect();
            if let Some(digits) = digits {
                self.at += 2 + width;
                return Ok(digits.into_iter().fold(0u32, |v, d| v.wrapping_mul(16).wrapping_add(d)));
            }
        }
        if c == 'u' && self.peek(2) == Some('{') {
            self.at += 3;
            let mut n = 0;
            let mut value = 0u32;
            while let Some(d) = self.peek(n).and_then(|d| d.to_digit(16)).filter(|_| n <= 6) {
                value = value * 16 + d;
                n += 1;
            }
            if n == 0 || n > 6 || self.peek(n) != Some('}') {
                return Err(());
            }
            self.at += n + 1;
            return Ok(value);
        }
        if c == 'c' {
            self.at += 2;
            let letter = self.peek(0).filter(char::is_ascii_alphabetic).ok_or(())?;
            self.at += 1;
            return Ok(u32::from(letter) % 32);
        }
        // Unrecognised: the character itself (a warning).
        self.at += 2;
        Ok(u32::from(c))
    }

    /// `HandleEscape`, outside a class.
    fn escape(&mut self) -> Step {
        if self.left() < 2 {
            return Err(());
        }
        match self.peek(1) {
            Some('d' | 'D' | 'w' | 'W' | 's' | 'S') => {
                self.at += 2;
                Ok(())
            }
            Some('1'..='9' | 'k' | 'p' | 'P' | 'b' | 'B') => Err(()),
            _ => self.char_escape().map(|_| ()),
        }
    }

    /// `HandleCharacterClass`, then the EBNF lexer's and parser's reading
    /// of the class it writes.
    fn class(&mut self) -> Step {
        self.at += 1;
        if self.peek(0) == Some(']') {
            return Err(());
        }
        // What the EBNF parser reads: characters, and dashes that may make
        // ranges (`None`).
        let mut items: Vec<Option<u32>> = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek(0) else { return Err(()) };
            if c == ']' {
                break;
            }
            if c == '\\' {
                if self.left() < 2 {
                    return Err(());
                }
                let expansion: Option<&[(u32, u32)]> = match self.peek(1) {
                    Some('d') => Some(&[(48, 57)]),
                    Some('D') => Some(&[(0, 0x2F), (0x3A, 0x10FFFF)]),
                    Some('w') => Some(&[(97, 122), (65, 90), (48, 57), (95, 95)]),
                    Some('W') => Some(&[(0, 0x2F), (0x3A, 0x40), (0x5B, 0x5E), (0x60, 0x60), (0x7B, 0x10FFFF)]),
                    Some('s') => Some(&[(12, 12), (10, 10), (13, 13), (9, 9), (11, 11), (32, 32), (0xA0, 0xA0)]),
                    Some('S') => Some(&[(0, 8), (0x0E, 0x1F), (0x21, 0x9F), (0xA1, 0x10FFFF)]),
                    _ => None,
                };
                if let Some(ranges) = expansion {
                    self.at += 2;
                    for &(lo, hi) in ranges {
                        items.push(Some(lo));
                        if hi != lo {
                            items.push(None);
                            items.push(Some(hi));
                        }
                    }
                } else {
                    let v = self.char_escape()?;
                    // A `^` written first reads as the class's negation.
                    if !(first && v == u32::from('^')) {
                        items.push(Some(v));
                    }
                }
            } else {
                self.at += 1;
                if c == '\n' || c == '\r' {
                    return Err(());
                }
                match c {
                    '^' if first => {}
                    '-' => items.push(None),
                    c => items.push(Some(u32::from(c))),
                }
            }
            first = false;
        }
        self.at += 1;
        // `EBNFParser::ParseCharClass`: `a-b` is a range whose ends must be ordered.
        let value = |item: Option<u32>| item.unwrap_or(u32::from('-'));
        let mut i = 0;
        while i < items.len() {
            if items.get(i + 1) == Some(&None) && i + 2 < items.len() {
                if value(items[i]) > value(items[i + 2]) {
                    return Err(());
                }
                i += 3;
            } else {
                i += 1;
            }
        }
        Ok(())
    }
}

/// `Grammar.from_json_schema(json.dumps(schema))` succeeds.
pub fn json_compiles(schema: &Value) -> bool {
    let mut checker = Schema { root: schema, resolved: Vec::new() };
    checker.check(schema, None).is_ok()
}

struct Schema<'a> {
    root: &'a Value,
    /// References already followed.
    resolved: Vec<String>,
}

/// A JSON integer as picojson holds it (`is<int64_t>`).
fn int64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) if !n.is_f64() => n.as_i64(),
        _ => None,
    }
}

impl Schema<'_> {
    /// `SchemaParser::Parse`, with each `$ref` resolved as generation does.
    fn check(&mut self, schema: &Value, default_type: Option<&str>) -> Step {
        let object = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Object(o) => o,
            _ => return Err(()),
        };
        if let Some(r) = object.get("$ref") {
            return self.reference(r.as_str().ok_or(())?);
        }
        if object.contains_key("const") {
            return Ok(());
        }
        if let Some(e) = object.get("enum") {
            return if e.as_array().is_some_and(|a| !a.is_empty()) { Ok(()) } else { Err(()) };
        }
        for keyword in ["anyOf", "oneOf", "allOf"] {
            if let Some(options) = object.get(keyword) {
                for option in options.as_array().ok_or(())? {
                    self.check(option, None)?;
                }
                return Ok(());
            }
        }
        let kind = match object.get("type") {
            Some(Value::Array(types)) => {
                if types.is_empty() {
                    let mut without = object.clone();
                    without.remove("type");
                    return self.check(&Value::Object(without), None);
                }
                for t in types {
                    let t = t.as_str().ok_or(())?;
                    let mut one = object.clone();
                    one.insert("type".into(), Value::String(t.into()));
                    self.check(&Value::Object(one), None)?;
                }
                return Ok(());
            }
            Some(Value::String(t)) => Some(t.as_str()),
            Some(_) => return Err(()),
            None => default_type,
        };
        match kind {
            Some("integer") => integer(object),
            Some("number") => number(object),
            Some("string") => string(object),
            Some("boolean" | "null") => Ok(()),
            Some("array") => self.array(object),
            Some("object") => self.object(object),
            Some(_) => Err(()),
            None if ["properties", "additionalProperties", "unevaluatedProperties"]
                .iter()
                .any(|k| object.contains_key(*k)) =>
            {
                self.object(object)
            }
            None if ["items", "prefixItems", "unevaluatedItems"].iter().any(|k| object.contains_key(*k)) => {
                self.array(object)
            }
            None => Ok(()),
        }
    }

    /// `ResolveRef`: `#` and `#/a/b` paths; other URIs take anything.
    fn reference(&mut self, uri: &str) -> Step {
        if uri == "#" || !uri.starts_with("#/") || self.resolved.iter().any(|r| r == uri) {
            return Ok(());
        }
        self.resolved.push(uri.to_string());
        let mut current: &Value = self.root;
        for part in uri[2..].split('/').filter(|p| !p.is_empty()) {
            current = current.as_object().and_then(|o| o.get(part)).ok_or(())?;
        }
        self.check(current, None)
    }

    fn array(&mut self, o: &Map<String, Value>) -> Step {
        let mut prefix = 0i64;
        if let Some(items) = o.get("prefixItems") {
            for item in items.as_array().ok_or(())? {
                if !item.is_object() {
                    return Err(());
                }
                self.check(item, None)?;
                prefix += 1;
            }
        }
        let extra_key =
            if o.contains_key("items") { Some("items") } else { o.get("unevaluatedItems").map(|_| "unevaluatedItems") };
        let additional = match extra_key.and_then(|k| o.get(k)) {
            Some(Value::Bool(b)) => *b,
            Some(v @ Value::Object(_)) => {
                self.check(v, None)?;
                true
            }
            Some(_) => return Err(()),
            // Strict mode: no items beyond those declared.
            None => false,
        };
        let mut min = 0i64;
        if let Some(v) = o.get("minItems") {
            min = int64(v).ok_or(())?.max(0);
        }
        if let Some(v) = o.get("minContains") {
            min = min.max(int64(v).ok_or(())?);
        }
        let mut max = -1i64;
        if let Some(v) = o.get("maxItems") {
            max = int64(v).filter(|m| *m >= 0).ok_or(())?;
        }
        if max != -1 && (min > max || max < prefix) {
            return Err(());
        }
        if !additional && (prefix < min || (max != -1 && prefix > max)) {
            return Err(());
        }
        Ok(())
    }

    fn object(&mut self, o: &Map<String, Value>) -> Step {
        let mut properties = 0i64;
        if let Some(p) = o.get("properties") {
            for v in p.as_object().ok_or(())?.values() {
                self.check(v, None)?;
                properties += 1;
            }
        }
        let mut required: Vec<&str> = Vec::new();
        if let Some(r) = o.get("required") {
            for key in r.as_array().ok_or(())? {
                let key = key.as_str().ok_or(())?;
                if !required.contains(&key) {
                    required.push(key);
                }
            }
        }
        let mut patterns = false;
        if let Some(p) = o.get("patternProperties") {
            for v in p.as_object().ok_or(())?.values() {
                self.check(v, None)?;
                patterns = true;
            }
        }
        let names = o.get("propertyNames").is_some();
        if let Some(n) = o.get("propertyNames") {
            let n_obj = n.as_object().ok_or(())?;
            if n_obj.get("type").and_then(Value::as_str).is_some_and(|t| t != "string") {
                return Err(());
            }
            self.check(n, Some("string"))?;
        }
        let mut additional = false;
        if let Some(a) = o.get("additionalProperties") {
            additional = match a {
                Value::Bool(b) => *b,
                v => {
                    self.check(v, None)?;
                    true
                }
            };
        }
        let unevaluated = if o.contains_key("additionalProperties") {
            additional
        } else {
            match o.get("unevaluatedProperties") {
                Some(Value::Bool(b)) => *b,
                Some(v) => {
                    self.check(v, None)?;
                    true
                }
                None => false,
            }
        };
        let count = |key: &str| -> Result<i64, ()> {
            match o.get(key) {
                None => Ok(-2),
                Some(v) => {
                    let n = int64(v).ok_or(())?;
                    if n < 0 {
                        return Err(());
                    }
                    Ok(n)
                }
            }
        };
        let min = count("minProperties")?.max(0);
        let max = match count("maxProperties")? {
            -2 => -1,
            n => n,
        };
        if max != -1 && (min > max || required.len() as i64 > max) {
            return Err(());
        }
        if !patterns && !names && !additional && !unevaluated && min > properties {
            return Err(());
        }
        Ok(())
    }
}

fn number_value(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// `ParseInteger`.
fn integer(o: &Map<String, Value>) -> Step {
    // A bound as an integer: whole numbers only, within i64.
    let bound = |v: &Value| -> Result<i64, ()> {
        if let Some(i) = int64(v) {
            return Ok(i);
        }
        let f = number_value(v).ok_or(())?;
        if f != f.floor() || f.abs() >= 9_223_372_036_854_775_808.0 {
            return Err(());
        }
        Ok(f as i64)
    };
    let mut multiple = None;
    if let Some(m) = o.get("multipleOf") {
        let f = number_value(m).ok_or(())?;
        if f <= 0.0 {
            return Err(());
        }
        // Fractional or large: ignored with a warning.
        if f == f.floor() && f <= 1024.0 {
            multiple = Some(f as i64);
        }
    }
    let minimum = o.get("minimum").map(bound).transpose()?;
    let maximum = o.get("maximum").map(bound).transpose()?;
    let exclusive_min = o.get("exclusiveMinimum").map(bound).transpose()?;
    if exclusive_min == Some(i64::MAX) {
        return Err(());
    }
    let exclusive_max = o.get("exclusiveMaximum").map(bound).transpose()?;
    if exclusive_max == Some(i64::MIN) {
        return Err(());
    }
    let start = [minimum, exclusive_min.map(|e| e + 1)].into_iter().flatten().max();
    let end = [maximum, exclusive_max.map(|e| e - 1)].into_iter().flatten().min();
    let (lo, hi) = (start.unwrap_or(i64::MIN), end.unwrap_or(i64::MAX));
    if lo > hi {
        return Err(());
    }
    if let (Some(m), Some(_), Some(_)) = (multiple, start, end) {
        let width = i128::from(hi) - i128::from(lo) + 1;
        if width <= 10_000 && !(lo..=hi).any(|v| v % m == 0) {
            return Err(());
        }
    }
    Ok(())
}

/// `ParseNumber`.
fn number(o: &Map<String, Value>) -> Step {
    if let Some(m) = o.get("multipleOf") {
        if number_value(m).ok_or(())? <= 0.0 {
            return Err(());
        }
    }
    let get = |k: &str| o.get(k).map(|v| number_value(v).ok_or(())).transpose();
    let (min, max) = (get("minimum")?, get("maximum")?);
    let (xmin, xmax) = (get("exclusiveMinimum")?, get("exclusiveMaximum")?);
    let empty = matches!((min, max), (Some(a), Some(b)) if a > b)
        || matches!((min, xmax), (Some(a), Some(b)) if a >= b)
        || matches!((xmin, max), (Some(a), Some(b)) if a >= b)
        || matches!((xmin, xmax), (Some(a), Some(b)) if a >= b);
    if empty {
        return Err(());
    }
    Ok(())
}

/// `ParseString`, and the pattern's grammar.
fn string(o: &Map<String, Value>) -> Step {
    if o.get("format").is_some_and(|f| !f.is_string()) {
        return Err(());
    }
    let length = |k: &str| -> Result<i64, ()> {
        match o.get(k) {
            None => Ok(if k == "minLength" { 0 } else { -1 }),
            Some(v) => int64(v).filter(|n| *n <= i64::from(i32::MAX)).ok_or(()),
        }
    };
    let (min, max) = (length("minLength")?, length("maxLength")?);
    if max != -1 && min > max {
        return Err(());
    }
    // A format XGrammar knows takes the place of the pattern.
    let known_format = o.get("format").and_then(Value::as_str).is_some_and(|f| STRING_FORMATS.contains(&f));
    match o.get("pattern") {
        None => Ok(()),
        Some(Value::String(_)) if known_format => Ok(()),
        Some(Value::String(p)) if schema_pattern_compiles(p) => Ok(()),
        Some(_) => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn regexes_compile_as_xgrammar_decides() {
        for ok in [
            "abc", "", "^a$", "[a-z]+", "[^]", r"\d{3}", "a{3,}", "a+?", "(?<x>a)", "a|", "|a", "(|a)", "()",
            r"[\d-z]", r"\q", r"\u00e9", r"\x41", r"\cA", ".*", "[a-]", "[-a]", r"[\]]", "a{0}", "$a", r"[\w-a]",
            r"\uZZZZ", r"\u{41}", "[a-é]",
        ] {
            assert!(regex_compiles(ok), "{ok}");
        }
        for bad in [
            "[z-a]",
            "[]",
            "a{2,1}",
            "a{,3}",
            "*a",
            "a**",
            "(?=a)",
            "(?i)a",
            "(?P<x>a)",
            r"(a)\1",
            r"\p{L}",
            r"\bword",
            "a)",
            "(a",
            "[a",
            "\\",
            "(?#c)",
            "x{2}{3}",
            "(?>a)",
            "a*+",
            "a{99999999999999999999}",
            "(*a)",
            "a|*b",
            "^*",
            r"\x4",
            r"\u12",
            r"\u{}",
            r"\c1",
            "(?<a1>x)",
            "[\n]",
            r"[a-\d]",
            r"[z-\x41]",
            r"\k<a>",
            "{2}",
            "[é-a]",
        ] {
            assert!(!regex_compiles(bad), "{bad}");
        }
    }

    #[test]
    fn schemas_compile_as_xgrammar_decides() {
        for ok in [
            json!({"type": "integer"}),
            json!({"type": ["integer", "string"]}),
            json!({"$ref": "#/$defs/x", "$defs": {"x": {"type": "integer"}}}),
            json!({"type": "string", "pattern": "(?=a)b"}),
            json!({"type": "string", "minLength": -5}),
            json!({"type": "integer", "multipleOf": 3, "minimum": 1}),
            json!({"oneOf": []}),
            json!({"type": "object", "additionalProperties": true, "unevaluatedProperties": {"type": "foo"}}),
            json!({"type": "array", "items": {"type": "string"}, "minItems": 1}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}),
        ] {
            assert!(json_compiles(&ok), "{ok}");
        }
        for bad in [
            json!({"type": "foo"}),
            json!(false),
            json!({"type": "integer", "minimum": 5, "maximum": 1}),
            json!({"$ref": "#/$defs/x"}),
            json!({"enum": []}),
            json!({"type": "array", "minItems": 1}),
            json!({"type": "object", "minProperties": 1}),
            json!({"type": "string", "pattern": "["}),
            json!({"type": "string", "maxLength": -5}),
            json!({"type": "string", "minLength": 1.0}),
            json!({"type": "integer", "multipleOf": 3, "minimum": 1, "maximum": 2}),
            json!({"type": "integer", "minimum": 1.5}),
            json!({"type": "number", "exclusiveMinimum": 1, "maximum": 1}),
            json!({"type": "object", "required": ["a", "b"], "maxProperties": 1}),
            json!({"type": "object", "properties": {"a": false}}),
            json!({"$ref": "#/$defs/0", "$defs": [{"type": "integer"}]}),
        ] {
            assert!(!json_compiles(&bad), "{bad}");
        }
    }
}
