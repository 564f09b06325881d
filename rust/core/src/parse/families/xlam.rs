//! Salesforce xLAM (`xlam`, vLLM's `xLAMToolParser`): a JSON array of
//! `{"name": ..., "arguments": {...}}` found by heuristics (after
//! `</think>`, in a code fence, after `[TOOL_CALLS]`, in `<tool_call>`, or
//! the whole output when it starts with `[`).
//!
//! Streams re-run those heuristics over the whole text at every chunk and
//! walk the calls with regexes, as vLLM's method does, quirks included: an
//! empty-argument call anywhere makes the current call's arguments `{}`,
//! and the final chunk gets the last call's arguments again (vLLM's
//! `prev_tool_call_arr` is set, its streamed record never is).

use std::sync::{Arc, LazyLock};

use serde_json::Value;

use crate::ids::random_hex_id;
use crate::model::Model;
use crate::parse::call_stream::CallStream;
use crate::parse::family::{Family, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::py_isspace;
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads};
use crate::pycompat::re::Pattern;
use crate::pycompat::repr::repr_value;
use crate::wire::response::{Delta, DeltaToolCall};

static BLOCKS: LazyLock<[Pattern; 3]> = LazyLock::new(|| {
    [
        Pattern::new(r"```(?:json)?\s*([\s\S]*?)```"),
        Pattern::new(r"\[TOOL_CALLS\]([\s\S]*?)(?=\n|$)"),
        Pattern::new(r"<tool_call>([\s\S]*?)</tool_call>"),
    ]
});
static THINKING: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"</think>([\s\S]*)"));
static OPEN_FENCE: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"```(?:json)?\s*([\s\S]*?)(?:```|$)"));
static NAME: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r#""name"\s*:\s*"([^"]+)""#));
static EMPTY_ARGS: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r#""name"\s*:\s*"[^"]+"\s*,\s*"arguments"\s*:\s*\{\s*\}"#));
static ARGS: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r#""name"\s*:\s*"[^"]+"\s*,\s*"arguments"\s*:\s*(\{(?:[^{}]|(?:\{[^{}]*\}))*\})"#)
});

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

fn is_json(text: &str) -> bool {
    loads(text).is_some()
}

/// `call_<index>_<random_uuid()>`, as vLLM numbers them.
fn call_id(index: usize) -> String {
    format!("call_{index}_{}", random_hex_id())
}

/// `preprocess_model_output`: `(content, the calls' JSON text)`.
fn preprocess(output: &str) -> (Option<String>, Option<String>) {
    if let Some(m) = THINKING.search(output) {
        let content = py_strip(&output[..m.start + "</think>".len()]).to_string();
        let thinking = py_strip(m.group(1).unwrap_or(""));
        if is_json(thinking) {
            return (Some(content), Some(thinking.to_string()));
        }
        for block in BLOCKS.iter() {
            if let Some(json) = block.findall(thinking).into_iter().find(|s| is_json(s)) {
                return (Some(content), Some(json.to_string()));
            }
        }
    }
    for block in BLOCKS.iter() {
        if let Some(json) = block.findall(output).into_iter().find(|s| is_json(s)) {
            return (Some(py_strip(&block.remove(output)).to_string()), Some(json.to_string()));
        }
    }
    if py_strip(output).starts_with('[')
        && (is_json(output) || (output.contains('{') && output.contains("name") && output.contains("arguments")))
    {
        return (None, Some(output.to_string()));
    }
    (Some(output.to_string()), None)
}

/// One call of the array as vLLM reads it; `Err` where pydantic raises.
fn read_call(index: usize, call: &Value) -> Result<Option<FunctionCall>, ()> {
    let Some(obj) = call.as_object().filter(|o| o.contains_key("name") && o.contains_key("arguments")) else {
        return Ok(None);
    };
    let name = obj["name"].as_str().ok_or(())?.to_string();
    let arguments = match &obj["arguments"] {
        args @ Value::Object(_) => dumps(args),
        Value::String(s) => s.clone(),
        _ => return Err(()),
    };
    Ok(Some(FunctionCall { id: Some(call_id(index)), name, arguments }))
}

/// Per call: its name sent, its first `{` sent, its arguments sent.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Sent {
    name: bool,
    prefix: bool,
    args: String,
}

#[derive(Default)]
struct XlamParser {
    /// `streaming_state["current_tool_index"]`.
    current: i64,
    sent: Vec<Sent>,
    /// `prev_tool_call_arr`, for the arguments owed at the end.
    calls: CallStream,
}

crate::impl_snapshot!(XlamParser { current, sent } nested { calls });

enum Step {
    Delta(Delta),
    Nothing,
    /// vLLM's `except`: the chunk's text goes out as content.
    Failed,
}

impl XlamParser {
    fn new() -> Self {
        XlamParser { current: -1, ..Default::default() }
    }

    fn args_delta(index: usize, text: &str) -> Step {
        Step::Delta(Delta::tool_calls(vec![DeltaToolCall::arguments(index as i64, text.to_string())]))
    }

    fn step(&mut self, current: &str, preprocessed: Option<String>, has_block: bool) -> Step {
        if let Some(Value::Array(parsed)) = loads(preprocessed.as_deref().unwrap_or(current)) {
            self.calls.prev = parsed;
        }
        let mut search = preprocessed.clone().unwrap_or_else(|| current.to_string());
        if preprocessed.is_none() && has_block {
            if let Some(json) = OPEN_FENCE.search(current).and_then(|m| m.group(1)).map(py_strip) {
                if json.starts_with('[') && json.contains("\"name\"") && json.contains("\"arguments\"") {
                    search = json.to_string();
                }
            }
        }
        let names = NAME.finditer(&search);
        let count = names.len();
        if count == 0 {
            return Step::Nothing;
        }
        if self.sent.len() < count {
            self.sent.resize(count, Sent::default());
        }
        let mut index = self.current;
        if index == -1 || index < count as i64 - 1 {
            let next = (index + 1) as usize;
            if next < count && !self.sent[next].name {
                self.current = next as i64;
                self.sent[next].name = true;
                let name = names[next].group(1).unwrap_or("").to_string();
                return Step::Delta(Delta::tool_calls(vec![DeltaToolCall::opening(next as i64, call_id(next), name, None)]));
            }
        }
        index = self.current;
        let Ok(i) = usize::try_from(index) else { return Step::Nothing };
        if i >= count {
            return Step::Nothing;
        }
        if EMPTY_ARGS.search(&search).is_some_and(|m| m.start > 0) && !self.sent[i].prefix {
            self.sent[i].prefix = true;
            self.sent[i].args = "{}".to_string();
            if i < count - 1 {
                self.current += 1;
            }
            return Self::args_delta(i, "{}");
        }
        let all_args = ARGS.finditer(&search);
        let Some(m) = all_args.get(i) else { return Step::Nothing };
        let mut args = m.group(1).unwrap_or("").to_string();
        if count > 1 {
            if let Some(Value::Array(tools)) = loads(&search) {
                if let Some(tool) = tools.get(i) {
                    let Some(obj) = tool.as_object() else { return Step::Failed };
                    args = match obj.get("arguments") {
                        Some(a @ Value::Object(_)) => dumps(a),
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => repr_value(other),
                        None => "{}".to_string(),
                    };
                }
            }
        }
        let sent = &mut self.sent[i];
        if !sent.prefix && args.starts_with('{') {
            sent.prefix = true;
            sent.args = "{".to_string();
            return Self::args_delta(i, "{");
        }
        if let Some(diff) = args.strip_prefix(sent.args.as_str()).filter(|d| !d.is_empty()) {
            let diff = diff.to_string();
            sent.args = args;
            return Self::args_delta(i, &diff);
        }
        if args.ends_with('}') && args == sent.args && i < count - 1 {
            self.current += 1;
        }
        Step::Nothing
    }
}

impl ToolParser for XlamParser {
    fn completes_to_batch(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let failed = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let (content, json) = preprocess(text);
        let Some(json) = json.filter(|j| !j.is_empty()) else {
            return Extracted { tools_called: false, calls: Vec::new(), content };
        };
        let Some(data) = loads(&json) else { return failed() };
        let Value::Array(items) = data else {
            return Extracted { tools_called: false, calls: Vec::new(), content: content.or_else(|| Some(text.into())) };
        };
        let mut calls = Vec::new();
        for (index, item) in items.iter().enumerate() {
            match read_call(index, item) {
                Ok(call) => calls.extend(call),
                Err(()) => return failed(),
            }
        }
        Extracted { tools_called: !calls.is_empty(), calls, content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let stripped = py_strip(t.current);
        let (_, preprocessed) = preprocess(t.current);
        let has_block = ["```json", "```\n[", "[TOOL_CALLS]", "<tool_call>"].iter().any(|m| t.current.contains(m));
        let is_block = ["[", "<tool_call>", "[TOOL_CALLS]"].iter().any(|p| stripped.starts_with(p))
            || t.current.contains("</think>[")
            || preprocessed.is_some()
            || (has_block && t.current.contains("\"name\"") && t.current.contains("\"arguments\""));
        if !is_block {
            return Some(Delta::content(t.delta));
        }
        match self.step(t.current, preprocessed, has_block) {
            Step::Delta(d) => Some(d),
            Step::Nothing => None,
            Step::Failed => Some(Delta::content(t.delta)),
        }
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }

    fn remaining_args_index(&self) -> Option<i64> {
        self.calls.remaining_index()
    }
}

struct Xlam;

impl ToolParserFactory for Xlam {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(XlamParser::new())
    }
}

static TOOLS: ToolFamily = Family { names: &["xlam"], needs: "", load: |_| Ok(Arc::new(Xlam)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(text: &str) -> Extracted {
        XlamParser::new().extract_tool_calls(text, &ChatContext::from_request(&Default::default(), &Default::default()))
    }

    #[test]
    fn batch_finds_the_array_by_its_heuristics() {
        let call = r#"[{"name": "f", "arguments": {"a": 1}}]"#;
        for text in [call.to_string(), format!("ok```json\n{call}\n```"), format!("<think>hm</think>{call}")] {
            let got = batch(&text);
            assert!(got.tools_called, "{text}");
            assert_eq!(got.calls[0].arguments, r#"{"a": 1}"#);
        }
        assert_eq!(batch(&format!("ok```json\n{call}\n```")).content.as_deref(), Some("ok"));
        assert_eq!(batch(&format!("<think>hm</think>{call}")).content.as_deref(), Some("<think>hm</think>"));
        assert!(!batch("just text").tools_called);
        // A name that is not a string fails the whole answer.
        assert_eq!(batch(r#"[{"name": 1, "arguments": {}}]"#).content.as_deref(), Some(r#"[{"name": 1, "arguments": {}}]"#));
    }

    #[test]
    fn streams_the_name_then_a_brace_then_the_rest() {
        let ctx = ChatContext::from_request(&Default::default(), &Default::default());
        let mut p = XlamParser::new();
        let chunks = [r#"[{"name": "f", "#, r#""arguments": {"a": 1}"#, "}]"];
        let mut current = String::new();
        let mut args = Vec::new();
        for c in chunks {
            current.push_str(c);
            let ids = Ids { previous: &[], current: &[], delta: &[] };
            let texts = Texts { previous: "", current: &current, delta: c };
            if let Some(d) = p.extract_tool_calls_streaming(&texts, &ids, &ctx) {
                args.extend(d.tool_calls.into_iter().filter_map(|t| t.function?.arguments));
            }
        }
        assert_eq!(args, ["{", r#""a": 1}"#]);
        // Owed again at the end: vLLM never records what it streamed.
        assert_eq!(p.remaining_unstreamed_args(), r#"{"a": 1}"#);
    }
}
