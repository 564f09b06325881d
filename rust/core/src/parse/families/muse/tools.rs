//! `MuseToolParser` (and Glimmer's profile): the text is segmented into
//! messages; calls are the complete `<atem:invoke>` blocks of messages to a
//! tool, content and reasoning the bodies of their channels. Streams
//! reparse the whole text and send what grew, a call once complete.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::reasoning::FUNCTION_CALLS_OPEN;
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Snapshot, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads};
use crate::pycompat::re::Pattern;
use crate::wire::response::{Delta, DeltaToolCall};

const STRUCTURAL: [&str; 4] = ["<|eom|>", "<|eot|>", "<|start|>", "<|message|>"];

struct Patterns {
    header: Pattern,
    end: Pattern,
    open_tail_to: Pattern,
    invoke: Pattern,
    name: Pattern,
    param: Pattern,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        header: Pattern::new(r"(?:<\|start\|>\s*assistant)?[^\S\n]*(?:to=([A-Za-z0-9_.\-]+))?<\|message\|>"),
        end: Pattern::new(r"<\|eom\|>|<\|eot\|>"),
        open_tail_to: Pattern::new(r"[^\S\n]+to=[A-Za-z0-9_.\-]*$"),
        invoke: Pattern::new(r"(?s)(<atem:invoke\b.*?</atem:invoke>)"),
        name: Pattern::new(r#"<atem:invoke\b[^>]*?\bname="([^"]+)""#),
        param: Pattern::new(r#"(?s)<atem:parameter\b[^>]*?\bname="([^"]+)"[^>]*?>(.*?)</atem:parameter>"#),
    })
}

/// A tool parser profile: which recipients are which channel.
pub(super) struct Profile {
    /// String-typed parameters stay as written (not JSON-decoded).
    pub(super) preserve_strings: bool,
    pub(super) reasoning: &'static [Option<&'static str>],
    pub(super) content: &'static [Option<&'static str>],
    pub(super) non_tool: &'static [&'static str],
}

pub(super) const SPARK: Profile = Profile {
    preserve_strings: true,
    reasoning: &[None, Some("self")],
    content: &[Some("user"), Some("commentary")],
    non_tool: &["self", "user", "commentary", "developer"],
};

pub(super) const GLIMMER: Profile = Profile {
    preserve_strings: false,
    reasoning: &[Some("self")],
    content: &[None, Some("user")],
    non_tool: &["self", "user"],
};

/// `_iter_messages`: `(recipient, body, closed)`; a message also ends
/// where the next header starts, or at a `<|start|>` inside its body.
fn messages(text: &str) -> Vec<(Option<&str>, &str, bool)> {
    let p = patterns();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let Some(h) = p.header.search(&text[pos..]) else { break };
        let body_start = pos + h.end;
        let end = p.end.search(&text[body_start..]).map(|m| (body_start + m.start, body_start + m.end));
        let next = p.header.search(&text[body_start..]).map(|m| body_start + m.start);
        let (mut body_end, mut closed) = (end.map_or(text.len(), |e| e.0), end.is_some());
        let next_pos = match next {
            Some(n) if n < body_end => {
                body_end = n;
                closed = false;
                n
            }
            _ => end.map_or(text.len(), |e| e.1),
        };
        let mut body = &text[body_start..body_end];
        if let Some(i) = body.find("<|start|>") {
            body = &body[..i];
            closed = false;
        }
        out.push((h.group(1), body, closed));
        pos = next_pos;
    }
    out
}

/// `_safe_open_body`: a growing body without a tail that may be framing.
fn safe_open_body(body: &str) -> &str {
    if let Some(tail) = patterns().open_tail_to.search(body) {
        return &body[..tail.start];
    }
    let longest = (STRUCTURAL.iter().map(|m| m.len()).max().unwrap_or(1) - 1).min(body.len());
    let partial = (1..=longest).rev().find(|&k| {
        let at = body.len() - k;
        body.is_char_boundary(at) && STRUCTURAL.iter().any(|m| m.starts_with(&body[at..]))
    });
    partial.map_or(body, |k| &body[..body.len() - k])
}

fn char_tail(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or("", |(i, _)| &s[i..])
}

pub(super) struct MuseTools {
    profile: &'static Profile,
    registered: HashSet<String>,
    /// Per tool, its string-typed parameters.
    strings: Map<String, Value>,
    streamed_content: usize,
    streamed_reasoning: usize,
    emitted_calls: usize,
}

impl MuseTools {
    pub(super) fn new(profile: &'static Profile, ctx: &ChatContext) -> MuseTools {
        let mut registered = HashSet::new();
        let mut strings = Map::new();
        for tool in &ctx.tools {
            let function = tool.get("function").unwrap_or(tool);
            let Some(name) = function.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) else { continue };
            registered.insert(name.to_string());
            if let (true, Some(params)) = (profile.preserve_strings, function.get("parameters").and_then(Value::as_object)) {
                let keys: Vec<Value> = params
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("string"))
                    .map(|(k, _)| Value::from(k.as_str()))
                    .collect();
                strings.insert(name.to_string(), Value::Array(keys));
            }
        }
        MuseTools { profile, registered, strings, streamed_content: 0, streamed_reasoning: 0, emitted_calls: 0 }
    }

    fn is_tool(&self, recipient: Option<&str>) -> bool {
        recipient.is_some_and(|r| !self.profile.non_tool.contains(&r))
    }

    /// `_tool_channel_text`: the tool messages' bodies, or the whole text
    /// when it has no framing at all.
    fn tool_channel_text(&self, text: &str) -> String {
        let bodies: Vec<&str> = messages(text).into_iter().filter(|m| self.is_tool(m.0)).map(|m| m.1).collect();
        if !bodies.is_empty() {
            return bodies.join("\n");
        }
        let unframed = patterns().header.search(text).is_none();
        if unframed && (text.contains(FUNCTION_CALLS_OPEN) || text.contains("<atem:invoke")) {
            return text.to_string();
        }
        String::new()
    }

    /// `_visible_channels`: content, reasoning, and whether each is open.
    fn channels(&self, text: &str) -> (String, String, bool, bool) {
        let (mut content, mut reasoning, mut content_open, mut reasoning_open) = (String::new(), String::new(), false, false);
        for (recipient, body, closed) in messages(text) {
            if self.profile.reasoning.contains(&recipient) {
                reasoning.push_str(body);
                reasoning_open = !closed;
            } else if self.profile.content.contains(&recipient) {
                content.push_str(body);
                content_open = !closed;
            }
        }
        (content, reasoning, content_open, reasoning_open)
    }

    /// `_normalize_name`: `get_weather.get_weather` for a bare registered name.
    fn normalize_name(&self, emitted: &str) -> String {
        if self.registered.is_empty() || self.registered.contains(emitted) {
            return emitted.to_string();
        }
        match emitted.split_once('.') {
            Some((head, tail)) if head == tail && self.registered.contains(head) => head.to_string(),
            _ => emitted.to_string(),
        }
    }

    /// `_parse_tool_calls`.
    fn calls(&self, text: &str) -> Vec<FunctionCall> {
        let p = patterns();
        let scoped = self.tool_channel_text(text);
        let mut calls = Vec::new();
        for invoke in p.invoke.findall(&scoped) {
            let Some(name) = p.name.search(invoke).and_then(|m| m.group(1)) else { continue };
            let name = self.normalize_name(name);
            let strings = self.strings.get(&name).and_then(Value::as_array);
            let mut args = Map::new();
            for m in p.param.finditer(invoke) {
                let (key, raw) = (m.group(1).unwrap_or(""), m.group(2).unwrap_or(""));
                let verbatim = strings.is_some_and(|s| s.iter().any(|k| k.as_str() == Some(key)));
                let value = if verbatim { None } else { loads(raw) };
                args.insert(key.to_string(), value.unwrap_or_else(|| Value::from(raw)));
            }
            calls.push(FunctionCall { id: None, name, arguments: dumps(&Value::Object(args)) });
        }
        calls
    }

    /// `_extract_content`: the user-facing bodies, or the unframed text.
    fn content(&self, text: &str) -> Option<String> {
        let (content, reasoning, _, _) = self.channels(text);
        if !content.is_empty() {
            return Some(content);
        }
        let unframed = reasoning.is_empty() && patterns().header.search(text).is_none();
        (unframed && !text.is_empty()).then(|| text.to_string())
    }
}

impl ToolParser for MuseTools {
    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let calls =
            if text.contains(FUNCTION_CALLS_OPEN) || text.contains("<atem:invoke") { self.calls(text) } else { Vec::new() };
        Extracted { tools_called: !calls.is_empty(), calls, content: self.content(text) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        if t.previous.is_empty() {
            (self.streamed_content, self.streamed_reasoning, self.emitted_calls) = (0, 0, 0);
        }
        let calls = self.calls(t.current);
        let (content, reasoning, content_open, reasoning_open) = self.channels(t.current);
        let content = if content_open { safe_open_body(&content) } else { &content };
        let reasoning = if reasoning_open { safe_open_body(&reasoning) } else { &reasoning };
        let content_delta = char_tail(content, self.streamed_content);
        let reasoning_delta = char_tail(reasoning, self.streamed_reasoning);
        let tool_calls: Vec<DeltaToolCall> = calls
            .iter()
            .enumerate()
            .skip(self.emitted_calls)
            .map(|(i, c)| DeltaToolCall::opening(i as i64, random_tool_call_id(), c.name.clone(), Some(c.arguments.clone())))
            .collect();
        if content_delta.is_empty() && reasoning_delta.is_empty() && tool_calls.is_empty() {
            return None;
        }
        let delta = Delta {
            content: (!content_delta.is_empty()).then(|| content_delta.to_string()),
            reasoning: (!reasoning_delta.is_empty()).then(|| reasoning_delta.to_string()),
            tool_calls,
            ..Default::default()
        };
        self.streamed_content = content.chars().count();
        self.streamed_reasoning = reasoning.chars().count();
        self.emitted_calls = calls.len();
        Some(delta)
    }

    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

crate::impl_snapshot!(MuseTools { streamed_content, streamed_reasoning, emitted_calls });
