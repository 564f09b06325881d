//! `hermes` / `qwen3_json`: `<tool_call>{"name": …, "arguments": …}</tool_call>`
//! (vLLM's `Hermes2ProToolParser`).

use crate::pycompat::json::{dumps, loads, partial_tag_overlap};
use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::family::{Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::structured::tool_tags::StrictLevel;
use crate::structured::format::{content, separated, tag, triggered, Choice, TagModel, TagTool};
use crate::parse::{random_tool_call_id, Registry, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::wire::response::{Delta, DeltaToolCall};

/// The strings around one call; LongCat's parser is Hermes' with its own.
pub(super) struct Markers {
    pub(super) start: &'static str,
    pub(super) end: &'static str,
}

const HERMES: Markers = Markers { start: "<tool_call>", end: "</tool_call>" };
#[cfg(test)]
const START: &str = HERMES.start;
#[cfg(test)]
const END: &str = HERMES.end;

/// Streams from deltas alone: everything it keeps is relative to the end of
/// the last settled call (closed, its name sent: nothing about it can change
/// any more), so a chunk costs what the chunk and the open call cost, and
/// the state is that open call, not the output so far.
pub struct HermesParser {
    markers: &'static Markers,
    /// A `<tool_call>` was seen: content is over.
    in_calls: bool,
    /// Before it: the content not sent yet (a suffix that may still become
    /// the tag). After it: the text from the open call's `<tool_call>` on,
    /// or what follows the last settled call.
    tail: String,
    /// Calls settled so far (the open call's index).
    settled: usize,
    /// The open call's name went out, and how many chars of its arguments.
    name_sent: bool,
    args_sent: usize,
    /// A closed call without a name: vLLM's parser stops at it for good.
    blocked: bool,
}

/// The bodies of `<tool_call>` blocks, as `tool_call_regex.findall` sees
/// them: closed blocks, then an unclosed last block running to the end.
fn blocks<'a>(text: &'a str, m: &Markers) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(m.start) {
        let body = &rest[i + m.start.len()..];
        match body.find(m.end) {
            Some(j) => {
                out.push(&body[..j]);
                rest = &body[j + m.end.len()..];
            }
            None => {
                out.push(body);
                break;
            }
        }
    }
    out
}

fn parse_call(body: &str) -> Option<FunctionCall> {
    let v = loads(body)?;
    let obj = v.as_object()?;
    let name = obj.get("name")?.as_str()?.to_string();
    let arguments = dumps(obj.get("arguments")?);
    Some(FunctionCall { id: None, name, arguments })
}

/// `_extract_tool_name`: `"name"\s*:\s*"([^"]+)"`.
fn tool_name(json: &str) -> Option<String> {
    let mut search = json;
    while let Some(i) = search.find("\"name\"") {
        let after = search[i + 6..].trim_start_matches(char::is_whitespace);
        if let Some(rest) = after.strip_prefix(':') {
            let rest = rest.trim_start_matches(char::is_whitespace);
            if let Some(rest) = rest.strip_prefix('"') {
                if let Some(end) = rest.find('"') {
                    if end > 0 {
                        return Some(rest[..end].to_string());
                    }
                }
            }
        }
        search = &search[i + 1..];
    }
    None
}

/// `_extract_tool_args`: the raw text after `"arguments":`, without the
/// outer closing brace once the call's JSON is complete.
fn tool_args(json: &str, complete: bool) -> Option<String> {
    let mut search = 0;
    let raw = loop {
        let i = json[search..].find("\"arguments\"")? + search;
        let after = &json[i + 11..];
        let trimmed = after.trim_start_matches(char::is_whitespace);
        if let Some(rest) = trimmed.strip_prefix(':') {
            break rest.trim_start_matches(char::is_whitespace);
        }
        search = i + 1;
    };
    if complete {
        let r = raw.trim_end();
        let r = r.strip_suffix('}').map_or(r, str::trim_end);
        return Some(r.to_string());
    }
    Some(raw.to_string())
}

/// The byte index where the last `n` chars of `text` begin.
fn before_last_chars(text: &str, n: usize) -> usize {
    match n {
        0 => text.len(),
        _ => text.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i),
    }
}

impl HermesParser {
    pub(super) fn new(markers: &'static Markers) -> Self {
        HermesParser {
            markers,
            in_calls: false,
            tail: String::new(),
            settled: 0,
            name_sent: false,
            args_sent: 0,
            blocked: false,
        }
    }

    /// `_extract_content`: text before the first `<tool_call>`, holding back
    /// a suffix that may still become the tag.
    fn content(&mut self) -> Option<String> {
        let start = self.markers.start;
        let sendable = match self.tail.find(start) {
            Some(i) => {
                self.in_calls = true;
                i
            }
            None => before_last_chars(&self.tail, partial_tag_overlap(&self.tail, start)),
        };
        let text: String = self.tail.drain(..sendable).collect();
        (!text.is_empty()).then_some(text)
    }

    /// `_extract_tool_call_jsons` on the unsettled text: stream the open
    /// calls' names and arguments, settling each call that closed.
    fn calls(&mut self, deltas: &mut Vec<DeltaToolCall>) {
        let Markers { start: open, end: close } = *self.markers;
        while !self.blocked {
            let Some(start) = self.tail.find(open) else {
                // Text between calls is dropped; keep what may begin a tag.
                let cut = before_last_chars(&self.tail, partial_tag_overlap(&self.tail, open));
                self.tail.drain(..cut);
                return;
            };
            self.tail.drain(..start);
            let body = &self.tail[open.len()..];
            let (json, complete, closed_at) = match body.find(close) {
                Some(e) => (body[..e].trim().to_string(), true, Some(open.len() + e + close.len())),
                None => {
                    let json = body[..before_last_chars(body, partial_tag_overlap(body, close))].trim();
                    (json.to_string(), !json.is_empty() && loads(json).is_some(), None)
                }
            };
            let index = self.settled as i64;
            if !self.name_sent {
                let Some(name) = tool_name(&json) else {
                    self.blocked = closed_at.is_some();
                    return;
                };
                self.name_sent = true;
                deltas.push(DeltaToolCall::opening(index, random_tool_call_id(), name, None));
            }
            if let Some(args) = tool_args(&json, complete) {
                let count = args.chars().count();
                if count > self.args_sent {
                    let diff: String = args.chars().skip(self.args_sent).collect();
                    self.args_sent = count;
                    deltas.push(DeltaToolCall::arguments(index, diff));
                }
            }
            let Some(end) = closed_at else { return };
            self.tail.drain(..end);
            (self.settled, self.name_sent, self.args_sent) = (self.settled + 1, false, 0);
        }
    }
}

impl ToolParser for HermesParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    /// Hermes has an xgrammar structural-tag model, so vLLM (with strict tool
    /// calling, its default) treats required/named choices like "auto".
    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some(first) = text.find(self.markers.start) else { return not_called() };
        let mut calls = Vec::new();
        for body in blocks(text, self.markers) {
            match parse_call(body) {
                Some(c) => calls.push(c),
                None => return not_called(),
            }
        }
        let content = &text[..first];
        Extracted { tools_called: true, calls, content: (!content.is_empty()).then(|| content.to_string()) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        if self.blocked {
            return None;
        }
        self.tail.push_str(t.delta);
        let content = if self.in_calls { None } else { self.content() };
        let mut deltas = Vec::new();
        if self.in_calls {
            self.calls(&mut deltas);
        }
        if content.is_some() || !deltas.is_empty() {
            return Some(Delta { content, tool_calls: deltas, ..Default::default() });
        }
        None
    }

    fn reads_history(&self) -> bool {
        false
    }
}

crate::impl_snapshot!(HermesParser { in_calls, tail, settled, name_sent, args_sent, blocked }
    check |p| crate::parse::snapshot::check_index(p.settled, "settled"));

// Registration.

/// A Hermes-style family: its markers and structural-tag model.
pub(super) struct Hermes {
    pub(super) markers: &'static Markers,
    pub(super) tag: &'static TagModel,
}

impl ToolParserFactory for Hermes {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(HermesParser::new(self.markers))
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }

    fn tag_model(&self) -> Option<&'static TagModel> {
        Some(self.tag)
    }
}

static TAG: TagModel =
    TagModel { name: "hermes", build: |tools, choice| tag_for(&HERMES, tools, choice), default_level: StrictLevel::Auto };

static TOOLS: ToolFamily = Family {
    names: &["hermes", "qwen3_json"],
    needs: "",
    load: |_| Ok(Arc::new(Hermes { markers: &HERMES, tag: &TAG })),
};

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}

/// Hermes-style (`_hermes_style_structural_tag`: `<tool_call>{"name": ...,
/// "arguments": ...}</tool_call>`): every tool, with and without the newlines.
pub(super) fn tag_for(m: &Markers, tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = Vec::new();
    for t in tools {
        let shapes = [(format!("{}\n", m.start), format!("}}\n{}", m.end)), (m.start.to_string(), format!("}}{}", m.end))];
        for (open, close) in shapes {
            let begin = format!("{open}{{\"name\": \"{}\", \"arguments\": ", t.name);
            tags.push(tag(&begin, content(t.schema(), "json"), &close));
        }
    }
    match choice {
        Choice::Auto => triggered(&[m.start], tags, false, &[]),
        Choice::Forced => separated(tags, "", true),
        Choice::Required => separated(tags, "", false),
    }
}

#[cfg(test)]
#[path = "hermes_tests.rs"]
mod tests;
