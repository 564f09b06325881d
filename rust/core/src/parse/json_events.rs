//! An incremental JSON event parser with the timing of `ijson.parse_coro`
//! (its yajl2_c backend): text is fed in pieces, and each `(prefix, event)`
//! is reported as soon as its token is complete. A string ends at its
//! closing quote, a literal at its last letter, a number only when the next
//! character ends it. Prefixes are ijson's dotted paths (`""`, `item`,
//! `item.name`, ...). Like yajl, one top-level value is accepted, and after
//! an error every later feed fails too.

use serde_json::Value;

/// One parse event (scalars other than strings carry no value: nothing
/// downstream reads them).
#[derive(Debug, Clone, PartialEq)]
pub enum JsonEvent {
    StartMap,
    EndMap,
    StartArray,
    EndArray,
    MapKey(String),
    String(String),
    Scalar,
}

/// The text fed so far is not JSON.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("invalid JSON text")]
pub struct JsonSyntaxError;

/// What the events of one feed were, and whether it ended in an error
/// (events before the error were still delivered, as ijson's are).
#[derive(Debug, Default)]
pub struct Fed {
    pub events: Vec<(String, JsonEvent)>,
    pub error: Option<JsonSyntaxError>,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
enum Expect {
    /// A value (top level, after `:` or after `,` in an array).
    Value,
    /// A key or `}` (just after `{`).
    FirstKey,
    /// A key (after `,` in an object).
    Key,
    Colon,
    CommaOrMapEnd,
    /// A value or `]` (just after `[`).
    FirstItem,
    CommaOrArrayEnd,
    /// The top-level value is complete: only whitespace may follow.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
enum Pending {
    String {
        escaped: bool,
    },
    Number,
    /// `true`, `false` or `null`, told apart by the first letter.
    Literal,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct JsonEventParser {
    expect: Expect,
    /// ijson's path: `None` for an object before its first key, the key
    /// after it, `item` inside arrays.
    path: Vec<Option<String>>,
    /// Open containers (`true` = object).
    objects: Vec<bool>,
    pending: Option<(Pending, String)>,
    failed: bool,
}

impl Default for JsonEventParser {
    fn default() -> Self {
        JsonEventParser { expect: Expect::Value, path: Vec::new(), objects: Vec::new(), pending: None, failed: false }
    }
}

/// yajl's whitespace.
fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

fn is_number_char(c: char) -> bool {
    c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
fn valid_number(s: &str) -> bool {
    let b = s.strip_prefix('-').unwrap_or(s).as_bytes();
    let digits = |b: &[u8], i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    let mut i = 0;
    if b.first() == Some(&b'0') {
        i = 1;
    } else if !digits(b, &mut i) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(b, &mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(b, &mut i) {
            return false;
        }
    }
    i == b.len()
}

impl JsonEventParser {
    /// The text so far was not JSON: every later piece fails too.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// `parse_coro.send(piece)`.
    pub fn feed(&mut self, text: &str) -> Fed {
        let mut fed = Fed::default();
        if self.failed {
            fed.error = Some(JsonSyntaxError);
            return fed;
        }
        for c in text.chars() {
            if self.step(c, &mut fed.events).is_err() {
                self.failed = true;
                fed.error = Some(JsonSyntaxError);
                break;
            }
        }
        fed
    }

    fn prefix(&self, upto: usize) -> String {
        let parts: Vec<&str> = self.path[..upto].iter().map(|p| p.as_deref().unwrap_or("")).collect();
        parts.join(".")
    }

    fn step(&mut self, c: char, out: &mut Vec<(String, JsonEvent)>) -> Result<(), JsonSyntaxError> {
        if let Some((kind, mut buf)) = self.pending.take() {
            match kind {
                Pending::String { escaped } => {
                    if !escaped && (c as u32) < 0x20 {
                        return Err(JsonSyntaxError);
                    }
                    buf.push(c);
                    if !escaped && c == '"' {
                        let s: String = serde_json::from_str(&buf).map_err(|_| JsonSyntaxError)?;
                        return self.string_done(s, out);
                    }
                    self.pending = Some((Pending::String { escaped: !escaped && c == '\\' }, buf));
                    return Ok(());
                }
                Pending::Literal => {
                    let word = match buf.chars().next() {
                        Some('t') => "true",
                        Some('f') => "false",
                        _ => "null",
                    };
                    buf.push(c);
                    if buf == word {
                        return self.scalar_done(out);
                    }
                    if !word.starts_with(&buf) {
                        return Err(JsonSyntaxError);
                    }
                    self.pending = Some((kind, buf));
                    return Ok(());
                }
                Pending::Number => {
                    if is_number_char(c) {
                        buf.push(c);
                        self.pending = Some((kind, buf));
                        return Ok(());
                    }
                    if !valid_number(&buf) {
                        return Err(JsonSyntaxError);
                    }
                    self.scalar_done(out)?;
                    // `c` starts the next token.
                }
            }
        }
        if is_ws(c) {
            return Ok(());
        }
        let value_ok = matches!(self.expect, Expect::Value | Expect::FirstItem);
        let key_ok = matches!(self.expect, Expect::FirstKey | Expect::Key);
        match c {
            '"' if value_ok || key_ok => self.pending = Some((Pending::String { escaped: false }, "\"".into())),
            '-' | '0'..='9' if value_ok => self.pending = Some((Pending::Number, c.to_string())),
            't' if value_ok => self.pending = Some((Pending::Literal, "t".into())),
            'f' if value_ok => self.pending = Some((Pending::Literal, "f".into())),
            'n' if value_ok => self.pending = Some((Pending::Literal, "n".into())),
            '{' if value_ok => {
                out.push((self.prefix(self.path.len()), JsonEvent::StartMap));
                self.path.push(None);
                self.objects.push(true);
                self.expect = Expect::FirstKey;
            }
            '[' if value_ok => {
                out.push((self.prefix(self.path.len()), JsonEvent::StartArray));
                self.path.push(Some("item".into()));
                self.objects.push(false);
                self.expect = Expect::FirstItem;
            }
            '}' if matches!(self.expect, Expect::FirstKey | Expect::CommaOrMapEnd) => {
                self.close(JsonEvent::EndMap, out);
            }
            ']' if matches!(self.expect, Expect::FirstItem | Expect::CommaOrArrayEnd) => {
                self.close(JsonEvent::EndArray, out);
            }
            ':' if self.expect == Expect::Colon => self.expect = Expect::Value,
            ',' if self.expect == Expect::CommaOrMapEnd => self.expect = Expect::Key,
            ',' if self.expect == Expect::CommaOrArrayEnd => self.expect = Expect::Value,
            _ => return Err(JsonSyntaxError),
        }
        Ok(())
    }

    fn close(&mut self, event: JsonEvent, out: &mut Vec<(String, JsonEvent)>) {
        self.path.pop();
        self.objects.pop();
        out.push((self.prefix(self.path.len()), event));
        self.after_value();
    }

    fn after_value(&mut self) {
        self.expect = match self.objects.last() {
            Some(true) => Expect::CommaOrMapEnd,
            Some(false) => Expect::CommaOrArrayEnd,
            None => Expect::Done,
        };
    }

    fn string_done(&mut self, s: String, out: &mut Vec<(String, JsonEvent)>) -> Result<(), JsonSyntaxError> {
        if matches!(self.expect, Expect::FirstKey | Expect::Key) {
            let depth = self.path.len();
            out.push((self.prefix(depth.saturating_sub(1)), JsonEvent::MapKey(s.clone())));
            if let Some(last) = self.path.last_mut() {
                *last = Some(s);
            }
            self.expect = Expect::Colon;
            return Ok(());
        }
        out.push((self.prefix(self.path.len()), JsonEvent::String(s)));
        self.after_value();
        Ok(())
    }

    fn scalar_done(&mut self, out: &mut Vec<(String, JsonEvent)>) -> Result<(), JsonSyntaxError> {
        out.push((self.prefix(self.path.len()), JsonEvent::Scalar));
        self.after_value();
        Ok(())
    }
}

/// Python's `json.JSONDecoder().raw_decode(text)`: the first JSON value at
/// the very start of `text` (no leading whitespace) and the rest ignored.
pub fn raw_decode(text: &str) -> Option<Value> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    if text.starts_with(is_ws) {
        return None;
    }
    match stream.next() {
        Some(Ok(v)) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(pieces: &[&str]) -> Vec<Vec<(String, JsonEvent)>> {
        let mut p = JsonEventParser::default();
        pieces.iter().map(|s| p.feed(s).events).collect()
    }

    #[test]
    fn strings_and_structure_report_at_once_numbers_wait() {
        let got = events(&["[{\"name\": \"f\"", ", \"arguments\": {\"a\": 1", "}}", "]"]);
        assert_eq!(
            got[0],
            vec![
                ("".into(), JsonEvent::StartArray),
                ("item".into(), JsonEvent::StartMap),
                ("item".into(), JsonEvent::MapKey("name".into())),
                ("item.name".into(), JsonEvent::String("f".into())),
            ]
        );
        // `1` is reported only when `}` ends it.
        assert_eq!(got[1].last(), Some(&("item.arguments".into(), JsonEvent::MapKey("a".into()))));
        assert_eq!(got[2][0], ("item.arguments.a".into(), JsonEvent::Scalar));
        assert_eq!(got[2][1], ("item.arguments".into(), JsonEvent::EndMap));
        assert_eq!(got[3], vec![("".into(), JsonEvent::EndArray)]);
    }

    #[test]
    fn errors_stick() {
        let mut p = JsonEventParser::default();
        let fed = p.feed("[{\"a\" 1");
        assert!(fed.error.is_some());
        assert_eq!(fed.events.len(), 3);
        assert!(p.feed("]").error.is_some());
        assert!(JsonEventParser::default().feed("{} x").error.is_some());
    }

    #[test]
    fn raw_decode_ignores_what_follows() {
        assert_eq!(raw_decode("[1] tail"), Some(serde_json::json!([1])));
        assert_eq!(raw_decode(" [1]"), None);
        assert_eq!(raw_decode("[1"), None);
    }
}
