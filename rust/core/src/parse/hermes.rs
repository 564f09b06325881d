//! `hermes` / `qwen3_json`: `<tool_call>{"name": …, "arguments": …}</tool_call>`
//! (vLLM's `Hermes2ProToolParser`).

use super::pyjson::{dumps, loads, partial_tag_overlap};
use super::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::wire::response::{Delta, DeltaFunctionCall, DeltaToolCall};

const START: &str = "<tool_call>";
const END: &str = "</tool_call>";

#[derive(Default)]
pub struct HermesParser {
    /// Chars of content already sent (stream).
    sent_content: usize,
    /// Per call: the name once sent, and the argument text sent so far.
    names: Vec<Option<String>>,
    streamed_args: Vec<String>,
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

/// `_extract_tool_call_jsons`: each region's JSON text and whether it is complete.
fn call_jsons(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(s) = text[pos..].find(START) {
        let json_start = pos + s + START.len();
        match text[json_start..].find(END) {
            Some(e) => {
                out.push((text[json_start..json_start + e].trim().to_string(), true));
                pos = json_start + e + END.len();
            }
            None => {
                let mut raw = &text[json_start..];
                let overlap = partial_tag_overlap(raw, END);
                if overlap > 0 {
                    let cut = raw.char_indices().rev().nth(overlap - 1).map_or(0, |(i, _)| i);
                    raw = &raw[..cut];
                }
                let json = raw.trim();
                let complete = !json.is_empty() && loads(json).is_some();
                out.push((json.to_string(), complete));
                break;
            }
        }
    }
    out
}

impl HermesParser {
    /// `_extract_content`: unsent text before the first `<tool_call>`,
    /// holding back a suffix that may still become the tag.
    fn content(&mut self, current: &str) -> Option<String> {
        let sendable = match current.find(START) {
            Some(i) => current[..i].chars().count(),
            None => current.chars().count() - partial_tag_overlap(current, START),
        };
        if sendable > self.sent_content {
            let text: String = current.chars().skip(self.sent_content).take(sendable - self.sent_content).collect();
            self.sent_content = sendable;
            return Some(text);
        }
        None
    }
}

impl ToolParser for HermesParser {
    fn snapshot(&mut self) -> Option<&mut dyn super::Snapshot> {
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
        let content = self.content(t.current);
        let mut deltas = Vec::new();
        for (i, (json, complete)) in call_jsons(t.current).into_iter().enumerate() {
            if i >= self.names.len() {
                self.names.push(None);
                self.streamed_args.push(String::new());
            }
            if self.names[i].is_none() {
                let Some(name) = tool_name(&json) else { break };
                self.names[i] = Some(name.clone());
                deltas.push(DeltaToolCall {
                    id: Some(random_tool_call_id()),
                    kind: Some("function"),
                    index: i as i64,
                    function: Some(DeltaFunctionCall { name: Some(name), arguments: None }),
                });
            }
            if let Some(args) = tool_args(&json, complete) {
                let sent = self.streamed_args[i].chars().count();
                if args.chars().count() > sent {
                    let diff: String = args.chars().skip(sent).collect();
                    self.streamed_args[i] = args;
                    if !diff.is_empty() {
                        deltas.push(DeltaToolCall {
                            id: None,
                            kind: None,
                            index: i as i64,
                            function: Some(DeltaFunctionCall { name: None, arguments: Some(diff) }),
                        });
                    }
                }
            }
        }
        if content.as_deref().is_some_and(|c| !c.is_empty()) || !deltas.is_empty() {
            return Some(Delta { content, tool_calls: deltas, ..Default::default() });
        }
        None
    }
}

crate::impl_snapshot!(HermesParser { sent_content, names, streamed_args }
check |p| match p.names.len() == p.streamed_args.len() {
    true => super::snapshot::check_index(p.names.len(), "calls"),
    false => Err(super::SnapshotError::Range("calls")),
});
