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

const START: &str = "<tool_call>";
const END: &str = "</tool_call>";

/// Streams from deltas alone: everything it keeps is relative to the end of
/// the last settled call (closed, its name sent: nothing about it can change
/// any more), so a chunk costs what the chunk and the open call cost, and
/// the state is that open call, not the output so far.
#[derive(Default)]
pub struct HermesParser {
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
fn blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(START) {
        let body = &rest[i + START.len()..];
        match body.find(END) {
            Some(j) => {
                out.push(&body[..j]);
                rest = &body[j + END.len()..];
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
    /// `_extract_content`: text before the first `<tool_call>`, holding back
    /// a suffix that may still become the tag.
    fn content(&mut self) -> Option<String> {
        let sendable = match self.tail.find(START) {
            Some(i) => {
                self.in_calls = true;
                i
            }
            None => before_last_chars(&self.tail, partial_tag_overlap(&self.tail, START)),
        };
        let text: String = self.tail.drain(..sendable).collect();
        (!text.is_empty()).then_some(text)
    }

    /// `_extract_tool_call_jsons` on the unsettled text: stream the open
    /// calls' names and arguments, settling each call that closed.
    fn calls(&mut self, deltas: &mut Vec<DeltaToolCall>) {
        while !self.blocked {
            let Some(start) = self.tail.find(START) else {
                // Text between calls is dropped; keep what may begin a tag.
                let cut = before_last_chars(&self.tail, partial_tag_overlap(&self.tail, START));
                self.tail.drain(..cut);
                return;
            };
            self.tail.drain(..start);
            let body = &self.tail[START.len()..];
            let (json, complete, closed_at) = match body.find(END) {
                Some(e) => (body[..e].trim().to_string(), true, Some(START.len() + e + END.len())),
                None => {
                    let json = body[..before_last_chars(body, partial_tag_overlap(body, END))].trim();
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
        let Some(first) = text.find(START) else { return not_called() };
        let mut calls = Vec::new();
        for body in blocks(text) {
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

struct Hermes;

impl ToolParserFactory for Hermes {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(HermesParser::default())
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }

    fn tag_model(&self) -> Option<&'static TagModel> {
        Some(&TAG)
    }
}

static TAG: TagModel = TagModel { name: "hermes", build: tag_for, default_level: StrictLevel::Auto };

static TOOLS: ToolFamily = Family { names: &["hermes", "qwen3_json"], needs: "", load: |_| Ok(Arc::new(Hermes)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}

/// Hermes (`<tool_call>{"name": ..., "arguments": ...}</tool_call>`): every
/// tool, with and without the newlines.
fn tag_for(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = Vec::new();
    for t in tools {
        for (open, close) in [("<tool_call>\n", "}\n</tool_call>"), ("<tool_call>", "}</tool_call>")] {
            let begin = format!("{open}{{\"name\": \"{}\", \"arguments\": ", t.name);
            tags.push(tag(&begin, content(t.schema(), "json"), close));
        }
    }
    match choice {
        Choice::Auto => triggered(&["<tool_call>"], tags, false, &[]),
        Choice::Forced => separated(tags, "", true),
        Choice::Required => separated(tags, "", false),
    }
}

#[cfg(test)]
#[path = "hermes_tests.rs"]
mod tests;
