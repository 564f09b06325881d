//! Baidu ERNIE 4.5 thinking models (`ernie45`): `<think>` reasoning whose
//! answer may sit in `<response>…</response>`, and JSON tool calls in
//! `<tool_call>…</tool_call>` (vLLM's `Ernie45ReasoningParser`,
//! `Ernie45ToolParser`).
//!
//! Both stream by token-id rules vLLM wrote for the real vocabulary (a
//! newline token after a marker is dropped) and slice with `find` results
//! unchecked; both are reproduced as they are, with `pycompat::str`.

use std::sync::Arc;

use crate::model::Model;
use crate::parse::family::{token_ids, Family, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::py_isspace;
use crate::parse::think::ThinkParser;
use crate::parse::{
    random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, ReasoningParser, Registry, Texts, ToolParser,
};
use crate::pycompat::json::{dumps, loads};
use crate::pycompat::str::{find, rfind, slice};
use crate::wire::response::{Delta, DeltaToolCall};

const THINK_END: &str = "</think>";
const RESPONSE_START: &str = "<response>";
const RESPONSE_END: &str = "</response>";
const CALL_START: &str = "<tool_call>";
const CALL_END: &str = "</tool_call>";

/// The optional marker ids both parsers look up with `vocab.get`.
#[derive(Clone, Copy)]
struct Optional {
    response_start: Option<i64>,
    response_end: Option<i64>,
    newline: Option<i64>,
}

impl Optional {
    fn of(model: &Model) -> Optional {
        let id = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
        Optional { response_start: id(RESPONSE_START), response_end: id(RESPONSE_END), newline: id("<0x0A>") }
    }

    /// The delta starts with the newline token.
    fn newline_first(&self, delta: &[i64]) -> bool {
        delta.first().is_some_and(|&d| Some(d) == self.newline)
    }
}

fn has(ids: &[i64], id: Option<i64>) -> bool {
    id.is_some_and(|id| ids.contains(&id))
}

fn some(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// The text after `<response>` (from `find`, unchecked) up to the last
/// `</response>`, both positions taken in `text` as vLLM's reasoning
/// parser takes them.
fn unwrap_response(text: &str) -> String {
    let (start, end) = (find(text, RESPONSE_START), rfind(text, RESPONSE_END));
    let mut out = text;
    if start != -1 {
        out = slice(out, Some(start + RESPONSE_START.len() as i64), None);
    }
    if end != -1 {
        out = slice(out, None, Some(end));
    }
    out.to_string()
}

/// `<response>` arrived in this delta after reasoning: the text after it
/// (`find` unchecked), up to its own last `</response>`.
fn after_response_start(text: &str) -> String {
    let text = text.trim_start_matches('\n');
    let rest = slice(text, Some(find(text, RESPONSE_START) + RESPONSE_START.len() as i64), None);
    match rfind(rest, RESPONSE_END) {
        -1 => rest.to_string(),
        end => slice(rest, None, Some(end)).to_string(),
    }
}

struct Ernie45Reasoning {
    think: ThinkParser,
    optional: Optional,
    /// `</think>` is in the previous ids.
    ended: bool,
    /// The last two previous ids (`[-2]`, `[-1]`).
    last: [Option<i64>; 2],
}

crate::impl_snapshot!(Ernie45Reasoning { ended, last });

impl Ernie45Reasoning {
    fn streaming(&self, d: &str, ids: &[i64]) -> Option<Delta> {
        let (start, end) = (self.think.start_id, self.think.end_id);
        let o = self.optional;
        if let [one] = ids {
            if *one == start || *one == end || Some(*one) == o.response_start || Some(*one) == o.response_end {
                return None;
            }
        }
        if ids.contains(&end) {
            let at = find(d, THINK_END);
            let reasoning = slice(d, None, Some(at)).to_string();
            let content = slice(d, Some(at + THINK_END.len() as i64), None).trim_start_matches('\n');
            let content = unwrap_response(content);
            return Some(Delta { reasoning: Some(reasoning), content: some(content), ..Default::default() });
        }
        if !self.ended {
            return Some(Delta { reasoning: Some(d.to_string()), ..Default::default() });
        }
        let mut content = d.to_string();
        if has(ids, o.response_start) {
            content = after_response_start(&content);
        } else if has(ids, o.response_end) {
            if let end @ 0.. = rfind(&content, RESPONSE_END) {
                content = slice(&content, None, Some(end)).to_string();
            }
        }
        let after_marker = self.last[1].is_some_and(|l| l == end || Some(l) == o.response_end);
        if (after_marker || self.last[0] == Some(end)) && o.newline_first(ids) {
            content = content.trim_start_matches('\n').to_string();
        }
        Some(Delta { content: some(content), ..Default::default() })
    }
}

impl ReasoningParser for Ernie45Reasoning {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_reasoning(&self, text: &str, ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let (reasoning, content) = self.think.extract_reasoning(text, ctx);
        let content = content.map(|c| {
            let (start, end) = (find(&c, RESPONSE_START), rfind(&c, RESPONSE_END));
            if start != -1 && end != -1 && start < end {
                slice(&c, Some(start + RESPONSE_START.len() as i64), Some(end)).to_string()
            } else {
                c
            }
        });
        (reasoning, content.filter(|c| !c.is_empty()))
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        self.think.is_reasoning_end(ids)
    }

    fn is_reasoning_end_streaming(&self, current: &[i64], delta: &[i64]) -> bool {
        self.think.is_reasoning_end_streaming(current, delta)
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        self.think.extract_content_ids(ids)
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let out = self.streaming(t.delta, ids.delta);
        self.ended |= ids.delta.contains(&self.think.end_id);
        for &id in ids.delta {
            self.last = [self.last[1], Some(id)];
        }
        out
    }

    fn reads_history(&self) -> bool {
        false
    }
}

struct Ernie45ReasoningFactory {
    think: [i64; 2],
    optional: Optional,
}

impl ReasoningParserFactory for Ernie45ReasoningFactory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let [start, end] = self.think;
        let think = ThinkParser::new("<think>", THINK_END, start, end);
        Box::new(Ernie45Reasoning { think, optional: self.optional, ended: false, last: [None, None] })
    }
}

/// `tool_call_regex.findall`: each `<tool_call>\s*{...}\s*</tool_call>`,
/// the JSON the shortest that closes before the end marker.
fn call_bodies(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(CALL_START) {
        let open = from + found + CALL_START.len();
        let body = open + text[open..].len() - text[open..].trim_start_matches(py_isspace).len();
        let matched = text[body..].starts_with('{').then(|| {
            text[body..].match_indices('}').map(|(i, _)| body + i + 1).find(|&close| {
                text[close..].trim_start_matches(py_isspace).starts_with(CALL_END)
            })
        });
        match matched.flatten() {
            Some(close) => {
                out.push(&text[body..close]);
                let tail = text[close..].trim_start_matches(py_isspace);
                from = text.len() - tail.len() + CALL_END.len();
            }
            None => from = open - CALL_START.len() + 1,
        }
    }
    out
}

/// `extract_tool_calls`: `None` where vLLM's `try` fails.
fn extract(text: &str) -> Option<(Vec<FunctionCall>, Option<String>)> {
    let start = text.find(CALL_START)?;
    let mut calls = Vec::new();
    for body in call_bodies(text) {
        let call = loads(body)?;
        let name = match call.get("name") {
            None => String::new(),
            Some(name) => name.as_str()?.to_string(),
        };
        let arguments = call.get("arguments").map_or_else(|| "{}".to_string(), dumps);
        calls.push(FunctionCall { id: None, name, arguments });
    }
    Some((calls, some(text[..start].trim_end_matches('\n').to_string())))
}

struct Ernie45Tools {
    think_end: Option<i64>,
    optional: Optional,
    buffer: String,
    /// `current_tool_id`.
    current: i64,
    /// Every previous id is the newline token (true before any).
    all_newlines: bool,
    /// `previous_token_ids[-1]`.
    last: Option<i64>,
}

crate::impl_snapshot!(Ernie45Tools { buffer, current, all_newlines, last });

impl Ernie45Tools {
    fn streaming(&mut self, delta: &str, ids: &[i64]) -> Option<Delta> {
        self.buffer.push_str(delta);
        let o = self.optional;
        let Some(start) = self.buffer.find(CALL_START) else {
            let mut text = std::mem::take(&mut self.buffer);
            if self.current > 0 {
                text.clear();
            }
            if self.current == -1 && self.all_newlines {
                text = text.trim_matches('\n').to_string();
            }
            if has(ids, o.response_start) {
                text = after_response_start(&text);
            } else if has(ids, o.response_end) {
                text = slice(&text, None, Some(rfind(&text, RESPONSE_END))).to_string();
            }
            let after_marker = self.last.is_some_and(|l| {
                Some(l) == self.think_end || Some(l) == o.response_start || Some(l) == o.response_end
            });
            if after_marker && o.newline_first(ids) {
                text = text.trim_start_matches('\n').to_string();
            }
            return some(text).map(|content| Delta { content: Some(content), ..Default::default() });
        };
        let Some(end) = self.buffer.find(CALL_END) else {
            let content = self.buffer[..start].trim_end_matches('\n').to_string();
            self.buffer.drain(..start);
            return some(content).map(|content| Delta { content: Some(content), ..Default::default() });
        };
        let cut = end + CALL_END.len();
        // The first call's index is taken even when its JSON fails.
        self.current = self.current.max(0);
        let (calls, content) = extract(&self.buffer[..cut]).unwrap_or_default();
        let call = calls.into_iter().next()?;
        let opening = DeltaToolCall::opening(self.current, random_tool_call_id(), call.name, Some(call.arguments));
        self.current += 1;
        self.buffer.drain(..cut);
        Some(Delta { content, tool_calls: vec![opening], ..Default::default() })
    }
}

impl ToolParser for Ernie45Tools {
    fn completes_to_batch(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        match extract(text) {
            Some((calls, content)) => Extracted { tools_called: true, calls, content },
            None => Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) },
        }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let out = self.streaming(t.delta, ids.delta);
        for &id in ids.delta {
            self.all_newlines &= Some(id) == self.optional.newline;
            self.last = Some(id);
        }
        out
    }

    fn reads_history(&self) -> bool {
        false
    }
}

struct Ernie45ToolsFactory {
    think_end: Option<i64>,
    optional: Optional,
}

impl ToolParserFactory for Ernie45ToolsFactory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        let (think_end, optional) = (self.think_end, self.optional);
        Box::new(Ernie45Tools { think_end, optional, buffer: String::new(), current: -1, all_newlines: true, last: None })
    }
}

static REASONING: ReasoningFamily = Family {
    names: &["ernie45"],
    needs: "<think>, </think> as single tokens",
    load: |model| {
        let think = token_ids(model, ["<think>", THINK_END], "could not locate think start/end tokens in the tokenizer")?;
        Ok(Arc::new(Ernie45ReasoningFactory { think, optional: Optional::of(model) }))
    },
};

static TOOLS: ToolFamily = Family {
    names: &["ernie45"],
    needs: "",
    load: |model| {
        let think_end = model.tokenizer.token_to_id(THINK_END).map(i64::from);
        Ok(Arc::new(Ernie45ToolsFactory { think_end, optional: Optional::of(model) }))
    },
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_bodies_take_the_shortest_json_closed_by_the_end_marker() {
        let text = "<tool_call> {\"a\": {\"b\": 1}} \n</tool_call>x<tool_call>{1}{2}</tool_call><tool_call>{";
        assert_eq!(call_bodies(text), ["{\"a\": {\"b\": 1}}", "{1}{2}"]);
    }

    #[test]
    fn batch_keeps_the_text_before_the_first_call() {
        let text = "ok\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n</tool_call>\n";
        let (calls, content) = extract(text).unwrap_or_default();
        assert_eq!(content.as_deref(), Some("ok"));
        assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("f", r#"{"x": 1}"#));
        // One call that does not parse fails them all; a marker without a
        // matching call is still "called", with no calls.
        assert!(extract("<tool_call>{oops}</tool_call>").is_none());
        assert_eq!(extract("a<tool_call>[1]</tool_call>").map(|(c, t)| (c.len(), t)), Some((0, Some("a".into()))));
    }

    #[test]
    fn response_positions_are_taken_before_slicing() {
        assert_eq!(unwrap_response("<response>\nhi\n</response>\n"), "\nhi\n</response");
        assert_eq!(unwrap_response("hi</response>"), "hi");
        assert_eq!(after_response_start("\n<response>\nhi</response>"), "\nhi");
    }
}
