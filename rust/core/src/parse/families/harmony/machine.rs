//! Harmony's streaming message parser (`openai_harmony.StreamableParser`,
//! as vLLM 0.33.0's oss-harmony 0.0.11 runs it, strict mode) over token
//! ids, one token at a time. Unlike the library's parser it keeps no token
//! history: its whole state is the phase, the header's ids while a header
//! is open, the current message's header and the UTF-8 bytes a content
//! token left incomplete, so a stream can carry it in its compact state.

use serde::{Deserialize, Serialize};

use crate::model::Model;

const CHANNEL: &str = "<|channel|>";
const CONSTRAIN: &str = "<|constrain|>";
const REPLACEMENT: &str = "\u{FFFD}";
const ROLES: [&str; 5] = ["user", "assistant", "system", "developer", "tool"];

/// The framing tokens' ids in the model's vocabulary.
#[derive(Debug, Clone, Copy)]
pub struct Framing {
    pub start: i64,
    pub message: i64,
    /// `<|return|>`, `<|end|>`, `<|call|>`: they end a message.
    pub stops: [i64; 3],
}

/// A parsed message header (`ParsedHeader`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub role: String,
    pub channel: Option<String>,
    pub recipient: Option<String>,
    pub content_type: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
enum Phase {
    ExpectStart,
    /// The parser starts inside the assistant's header.
    #[default]
    Header,
    Content,
}

/// What one token did.
#[derive(Debug, PartialEq)]
pub enum Step {
    /// The library raised: the token changed nothing vLLM keeps.
    Rejected,
    /// The token was taken; `Some`: the content text it completed.
    Taken(Option<String>),
    /// The token ended the current message; the text its undecoded bytes
    /// still held.
    Ended(Header, String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    phase: Phase,
    /// `next_role` is still the assistant (no header parsed yet).
    role_given: bool,
    /// The open header's ids.
    header_ids: Vec<i64>,
    /// The current message's header (in content).
    current: Option<Header>,
    /// Content bytes that do not decode yet.
    pending: Vec<u8>,
}

impl Default for Machine {
    fn default() -> Self {
        Machine { phase: Phase::Header, role_given: true, header_ids: Vec::new(), current: None, pending: Vec::new() }
    }
}

impl Machine {
    /// The current message's header, once its `<|message|>` is read.
    pub fn current(&self) -> Option<&Header> {
        self.current.as_ref().filter(|_| self.phase == Phase::Content)
    }

    /// `process(token)`.
    pub fn step(&mut self, token: i64, framing: &Framing, model: &Model) -> Step {
        match self.phase {
            Phase::ExpectStart if token == framing.start => {
                self.phase = Phase::Header;
                self.header_ids.clear();
                Step::Taken(None)
            }
            Phase::ExpectStart => Step::Rejected,
            Phase::Header if token == framing.message => {
                // The library leaves the header state before parsing it: a
                // header that does not parse is lost, the role kept.
                self.phase = Phase::ExpectStart;
                let ids = std::mem::take(&mut self.header_ids);
                let Some(header) = decode_utf8(model, &ids).and_then(|h| parse_header(&h, self.role_given)) else {
                    return Step::Rejected;
                };
                self.role_given = false;
                self.phase = Phase::Content;
                self.current = Some(header);
                self.pending.clear();
                Step::Taken(None)
            }
            Phase::Header => {
                // Strict mode: stop tokens are header text too.
                self.header_ids.push(token);
                Step::Taken(None)
            }
            Phase::Content if framing.stops.contains(&token) => self.end(),
            Phase::Content => {
                model.token_bytes(token, &mut self.pending);
                Step::Taken(self.decode_pending())
            }
        }
    }

    /// `process_eos()`: `Err` when the output ended inside a header.
    pub fn eos(&mut self) -> Result<Option<(Header, String)>, ()> {
        match self.phase {
            Phase::ExpectStart => Ok(None),
            Phase::Header => Err(()),
            Phase::Content => match self.end() {
                Step::Ended(header, tail) => Ok(Some((header, tail))),
                _ => Ok(None),
            },
        }
    }

    fn end(&mut self) -> Step {
        self.phase = Phase::ExpectStart;
        let tail = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        Step::Ended(self.current.take().unwrap_or_default(), tail)
    }

    /// The text the pending bytes complete: the valid prefix, then one
    /// U+FFFD for one invalid sequence; later bytes wait for the next token.
    fn decode_pending(&mut self) -> Option<String> {
        let (valid, error_len) = match std::str::from_utf8(&self.pending) {
            Ok(_) => (self.pending.len(), None),
            Err(e) => (e.valid_up_to(), e.error_len()),
        };
        let mut delta = String::from_utf8_lossy(&self.pending[..valid]).into_owned();
        self.pending.drain(..valid);
        if let Some(len) = error_len {
            delta.push_str(REPLACEMENT);
            self.pending.drain(..len);
        }
        (!delta.is_empty()).then_some(delta)
    }
}

/// `decode_utf8` of the header's ids (special tokens as their text).
fn decode_utf8(model: &Model, ids: &[i64]) -> Option<String> {
    let mut bytes = Vec::new();
    for &id in ids {
        if !model.token_bytes(id, &mut bytes) {
            return None;
        }
    }
    String::from_utf8(bytes).ok()
}

/// `parse_header_from_string` (`None`: the library raises). `role_given`:
/// the parser was made for the assistant and has read no header yet.
pub fn parse_header(text: &str, role_given: bool) -> Option<Header> {
    let mut header = text.to_string();
    let mut channel = None;
    if let Some(idx) = header.find(CHANNEL) {
        let after = &header[idx + CHANNEL.len()..];
        let end = after.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(after.len());
        if end == 0 {
            return None;
        }
        channel = Some(after[..end].to_string());
        header = format!("{}{}", &header[..idx], &after[end..]);
        // oss-harmony 0.0.11 drops every later channel marker and its value.
        while let Some(idx) = header.find(CHANNEL) {
            let after = &header[idx + CHANNEL.len()..];
            let end = after.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(after.len());
            header = format!("{}{}", &header[..idx], &after[end..]);
        }
    }
    let mut header = header.trim().to_string();
    if header.contains(CONSTRAIN) {
        header = header.replace(CONSTRAIN, &format!(" {CONSTRAIN}")).trim().to_string();
    }
    let mut parts: Vec<&str> = header.split_ascii_whitespace().collect();
    let role = if role_given {
        "assistant"
    } else {
        let first = *parts.first()?;
        match ROLES.iter().find(|r| **r == first) {
            Some(role) => role,
            // An unknown name with a recipient is a tool's message.
            None if parts.len() > 1 || first.starts_with("to=") => {
                parts.remove(0);
                "tool"
            }
            None => return None,
        }
    };
    if parts.first() == Some(&role) {
        parts.remove(0);
    }
    let (mut recipient, mut content_type) = (None, None);
    if let Some(last) = parts.pop() {
        let strip = |p: &str| p.strip_prefix("to=").unwrap_or(p).to_string();
        if last.starts_with("to=") || parts.is_empty() {
            recipient = Some(strip(last));
        } else {
            content_type = Some(last.to_string());
            recipient = parts.pop().map(strip);
        }
    }
    if !parts.is_empty() {
        return None;
    }
    Some(Header { role: role.to_string(), channel, recipient, content_type })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(role: &str, channel: Option<&str>, recipient: Option<&str>, ct: Option<&str>) -> Option<Header> {
        let s = |v: Option<&str>| v.map(str::to_string);
        Some(Header { role: role.into(), channel: s(channel), recipient: s(recipient), content_type: s(ct) })
    }

    #[test]
    fn headers_parse_as_oss_harmony_does() {
        assert_eq!(parse_header("<|channel|>final", true), h("assistant", Some("final"), None, None));
        assert_eq!(
            parse_header(" to=functions.get_weather<|channel|>commentary json", true),
            h("assistant", Some("commentary"), Some("functions.get_weather"), Some("json"))
        );
        assert_eq!(
            parse_header("<|channel|>commentary to=functions.f <|constrain|>json", true),
            h("assistant", Some("commentary"), Some("functions.f"), Some("<|constrain|>json"))
        );
        // 0.0.11 drops a second channel marker and its value.
        assert_eq!(
            parse_header("<|channel|>commentary to=functions.f<|channel|>commentary <|constrain|>json", true),
            h("assistant", Some("commentary"), Some("functions.f"), Some("<|constrain|>json"))
        );
        assert_eq!(parse_header("assistant<|channel|>analysis", false), h("assistant", Some("analysis"), None, None));
        assert_eq!(parse_header("functions.f to=assistant<|channel|>commentary", false).unwrap().role, "tool");
        assert_eq!(parse_header("<|channel|>", true), None);
        assert_eq!(parse_header("stranger", false), None);
        assert_eq!(parse_header("<|channel|>final a b c", true), None);
    }
}
