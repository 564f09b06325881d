//! `InstructTokenizerV13.encode_instruct` (and V11's, which differs in three
//! places): the token layout of a normalized conversation. Every text piece
//! is encoded on its own; `<s>` starts the prompt and `</s>` ends each
//! complete assistant message.

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

    fn chunks(&mut self, chunks: &[Chunk]) -> Result<(), String> {
        for chunk in chunks {
            match chunk {
                Chunk::Text(t) => self.text(t),
                // V11 inherits V1's `encode_think`, which raises.
                Chunk::Think { .. } if self.tekken.version < 13 => {
                    return Err("Think not implemented for tokenizer < V13.".into())
                }
                Chunk::Think { text, closed } => {
                    self.special("[THINK]");
                    self.text(text);
                    if *closed {
                        self.special("[/THINK]");
                    }
                }
            }
        }
        Ok(())
    }

    fn content(&mut self, content: &Content) -> Result<(), String> {
        match content {
            Content::None => {}
            Content::Str(s) => self.text(s),
            Content::Chunks(c) => self.chunks(c)?,
        }
        Ok(())
    }
}

/// `json.dumps` of v7's call list (`_prepare_function_call`): the
/// arguments are already dumped the same way.
fn json_calls(calls: &[super::messages::ToolCall]) -> String {
    let quoted = |s: &str| super::messages::json_text(&serde_json::Value::String(s.to_string()));
    let items: Vec<String> = calls
        .iter()
        .map(|call| {
            let id = if unset_id(&call.id) { String::new() } else { format!(", \"id\": {}", quoted(&call.id)) };
            format!("{{\"name\": {}, \"arguments\": {}{id}}}", quoted(&call.name), call.arguments)
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// An id mistral_common leaves out of the prompt.
fn unset_id(id: &str) -> bool {
    id.is_empty() || id == "null"
}

/// The prompt ids. `tools_json`: the available tools as the prompt shows
/// them, before the first user message (v13) or the last (v11). An
/// assistant message without text or calls is refused with mistral_common's
/// message.
pub fn encode(tekken: &Tekken, messages: &[Message], tools_json: Option<&str>) -> Result<Vec<u32>, String> {
    let v11 = tekken.version < 13;
    let v7 = tekken.version < 11;
    let mut ids = Ids { tekken, out: Vec::new() };
    ids.special("<s>");
    let mut users = messages.iter().enumerate().filter(|(_, m)| matches!(m, Message::User(_))).map(|(i, _)| i);
    let tools_at = if v11 { users.next_back() } else { users.next() };
    for (i, m) in messages.iter().enumerate() {
        match m {
            Message::User(content) => {
                if let (Some(json), true) = (tools_json, Some(i) == tools_at) {
                    ids.special("[AVAILABLE_TOOLS]");
                    ids.text(json);
                    ids.special("[/AVAILABLE_TOOLS]");
                }
                ids.special("[INST]");
                ids.content(content)?;
                ids.special("[/INST]");
            }
            Message::System(content) => {
                ids.special("[SYSTEM_PROMPT]");
                ids.content(content)?;
                ids.special("[/SYSTEM_PROMPT]");
            }
            Message::Tool { content, id, .. } => {
                ids.special("[TOOL_RESULTS]");
                if v11 {
                    ids.text(id);
                    ids.special("[TOOL_CONTENT]");
                }
                ids.content(content)?;
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
                    Content::Chunks(c) => ids.chunks(c)?,
                    _ => {}
                }
                if tekken.version < 11 && !calls.is_empty() {
                    // v7: one JSON list of `{name, arguments, id}` after the marker.
                    ids.special("[TOOL_CALLS]");
                    ids.text(&json_calls(calls));
                }
                for call in calls.iter().filter(|_| !v7) {
                    ids.special("[TOOL_CALLS]");
                    ids.text(&call.name);
                    if v11 && !unset_id(&call.id) {
                        ids.special("[CALL_ID]");
                        ids.text(&call.id);
                    }
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
