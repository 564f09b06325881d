//! Harmony messages and their tokens, as vLLM 0.33.0 renders them
//! (oss-harmony 0.0.11, then vLLM's `_use_legacy_tool_call_headers`):
//! `<|start|>AUTHOR[ to=R]<|channel|>CH[ to=R][ <|constrain|>CT]<|message|>TEXT<|end|>`,
//! the recipient after the channel when the channel is `commentary`, and
//! an assistant's call rewritten to `assistant to=R<|channel|>commentary json`.
//! Every text piece is encoded on its own, special-token text as plain text.

use tokenizers::Tokenizer;

/// One message.
#[derive(Debug, Clone, Default)]
pub struct Message {
    /// `user`, `assistant`, `system`, `developer` or `tool`.
    pub role: &'static str,
    /// A tool's name (`functions.NAME`), which stands for its role.
    pub name: Option<String>,
    pub recipient: Option<String>,
    pub channel: Option<String>,
    pub content_type: Option<String>,
    /// Each part is encoded separately.
    pub parts: Vec<String>,
}

impl Message {
    pub fn new(role: &'static str, text: impl Into<String>) -> Message {
        Message { role, parts: vec![text.into()], ..Message::default() }
    }

    pub fn on(mut self, channel: &str) -> Message {
        self.channel = Some(channel.to_string());
        self
    }

    pub fn to(mut self, recipient: String) -> Message {
        self.recipient = Some(recipient);
        self
    }
}

/// The framing tokens.
#[derive(Debug, Clone, Copy)]
pub struct Framing {
    pub start: u32,
    pub end: u32,
    pub message: u32,
    pub channel: u32,
    pub constrain: u32,
    pub call: u32,
}

/// Encodes pieces of text: every special token's text stays plain text.
pub struct Encoder<'a> {
    pub tokenizer: &'a Tokenizer,
    pub framing: Framing,
}

impl Encoder<'_> {
    fn text(&self, text: &str, out: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        if let Ok(encoding) = self.tokenizer.encode(text, false) {
            out.extend_from_slice(encoding.get_ids());
        }
    }

    /// One message's tokens.
    pub fn render(&self, m: &Message, out: &mut Vec<u32>) {
        let f = self.framing;
        out.push(f.start);
        let legacy_call = m.role == "assistant"
            && m.channel.as_deref() == Some("commentary")
            && m.recipient.as_deref().is_some_and(|r| !r.is_empty())
            && m.content_type.as_deref().is_some_and(|c| !c.is_empty());
        if legacy_call {
            // vLLM puts prior calls back in the header gpt-oss was trained on.
            let (recipient, channel) = (m.recipient.as_deref().unwrap_or(""), m.channel.as_deref().unwrap_or(""));
            self.text(&format!("assistant to={recipient}"), out);
            out.push(f.channel);
            self.text(&format!("{channel} {}", m.content_type.as_deref().unwrap_or("")), out);
        } else {
            self.text(m.name.as_deref().unwrap_or(m.role), out);
            let recipient = m.recipient.as_deref().filter(|r| *r != "all").map(|r| format!(" to={r}"));
            let after_channel = m.channel.as_deref() == Some("commentary");
            if !after_channel {
                recipient.iter().for_each(|r| self.text(r, out));
            }
            if let Some(channel) = &m.channel {
                out.push(f.channel);
                self.text(channel, out);
            }
            if after_channel {
                recipient.iter().for_each(|r| self.text(r, out));
            }
            if let Some(ct) = &m.content_type {
                self.text(" ", out);
                out.push(f.constrain);
                self.text(ct.strip_prefix("<|constrain|>").unwrap_or(ct), out);
            }
        }
        out.push(f.message);
        for part in &m.parts {
            self.text(part, out);
        }
        out.push(if m.role == "assistant" && m.recipient.is_some() { f.call } else { f.end });
    }
}
