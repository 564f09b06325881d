//! `InstructTokenizerV13.encode_instruct`: the token layout of a normalized
//! conversation. Every text piece is encoded on its own; `<s>` starts the
//! prompt and `</s>` ends each complete assistant message.

use super::messages::{Chunk, Content, Message};
use crate::tekken::Tekken;

struct Ids<'a> {
    tekken: &'a Tekken,
    out: Vec<u32>,
}

impl Ids<'_> {
    fn special(&mut self, text: &str) {
        // mistral_common refuses a v13 table without these at load.
        self.out.extend(self.tekken.special_id(text));
    }

    fn text(&mut self, text: &str) {
        self.out.extend(self.tekken.encode(text));
    }

    fn chunks(&mut self, chunks: &[Chunk]) {
        for chunk in chunks {
            match chunk {
                Chunk::Text(t) => self.text(t),
                Chunk::Think { text, closed } => {
                    self.special("[THINK]");
                    self.text(text);
                    if *closed {
                        self.special("[/THINK]");
                    }
                }
            }
        }
    }

    fn content(&mut self, content: &Content) {
        match content {
            Content::None => {}
            Content::Str(s) => self.text(s),
            Content::Chunks(c) => self.chunks(c),
        }
    }
}

/// The prompt ids. `tools_json`: the available tools as the prompt shows
/// them, before the first user message. An assistant message without text
/// or calls is refused with mistral_common's message.
pub fn encode(tekken: &Tekken, messages: &[Message], tools_json: Option<&str>) -> Result<Vec<u32>, String> {
    let mut ids = Ids { tekken, out: Vec::new() };
    ids.special("<s>");
    let first_user = messages.iter().position(|m| matches!(m, Message::User(_)));
    for (i, m) in messages.iter().enumerate() {
        match m {
            Message::User(content) => {
                if let (Some(json), true) = (tools_json, Some(i) == first_user) {
                    ids.special("[AVAILABLE_TOOLS]");
                    ids.text(json);
                    ids.special("[/AVAILABLE_TOOLS]");
                }
                ids.special("[INST]");
                ids.content(content);
                ids.special("[/INST]");
            }
            Message::System(content) => {
                ids.special("[SYSTEM_PROMPT]");
                ids.content(content);
                ids.special("[/SYSTEM_PROMPT]");
            }
            Message::Tool { content, .. } => {
                ids.special("[TOOL_RESULTS]");
                ids.content(content);
                ids.special("[/TOOL_RESULTS]");
            }
            Message::Assistant { content, calls, prefix } => {
                let has_text = match content {
                    Content::None => false,
                    Content::Str(s) => !s.is_empty(),
                    Content::Chunks(c) => !c.is_empty(),
                };
                if !has_text && calls.is_empty() {
                    return Err(format!(
                        "Invalid assistant message: role='assistant' content='' tool_calls=None prefix={}",
                        if *prefix { "True" } else { "False" }
                    ));
                }
                match content {
                    // A string loses its trailing spaces; chunks are kept.
                    Content::Str(s) if has_text => ids.text(s.trim_end_matches(' ')),
                    Content::Chunks(c) => ids.chunks(c),
                    _ => {}
                }
                for call in calls {
                    ids.special("[TOOL_CALLS]");
                    ids.text(&call.name);
                    ids.special("[ARGS]");
                    ids.text(&call.arguments);
                }
                if !prefix {
                    ids.special("</s>");
                }
            }
        }
    }
    Ok(ids.out)
}
