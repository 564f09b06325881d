//! Tencent Hunyuan-A13B (`hunyuan_a13b`, vLLM's `HunyuanA13BReasoningParser`
//! and `HunyuanA13BToolParser`): `<think>\n...\n</think>\n<answer>\n...\n</answer>`
//! messages whose answer may hold `<tool_calls>[{"name", "arguments"}]</tool_calls>`.
//!
//! Batch reads the blocks with regexes. The reasoning stream is a state
//! machine over token ids that vLLM hard-codes from the real (cl100k-based)
//! vocabulary, one token per delta: a delta of any other length fails the
//! call, as vLLM's assertion does. The tool stream re-reads the whole text
//! at every delta with vLLM's regexes (xLAM's walk, with its own way of
//! cutting a call's arguments before the next call).

use std::sync::{Arc, LazyLock};

use serde_json::Value;

use crate::error::ApiError;
use crate::ids::random_hex_id;
use crate::model::Model;
use crate::parse::call_stream::CallStream;
use crate::parse::family::{Family, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::py_isspace;
use crate::parse::plugin::FailureSlot;
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, ReasoningParser, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads};
use crate::pycompat::re::Pattern;
use crate::wire::response::{Delta, DeltaToolCall};

/// `extract_reasoning_streaming` raised (its `assert`, an index past a
/// sequence, a split without its separator): the call fails.
const FAILED: &str = "invalid stream_state: derender failed";

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

// ---- reasoning ----

static FULL: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"(?s)(?:<think>\n(.*?)\n</think>\n<answer>\n)?(.*?)\n</answer>"));
static HALF: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"(?s)<think>\n(.*?)\n</think>\n<answer>\n(.*)"));
const RESPONSE_END: &str = "\n</answer>";

/// The id sequences vLLM hard-codes: `<think>\n` (or `<think>\n\n`), then
/// `\n</think>\n<answer>\n` (or without its first `\n`), then `\n</answer>`.
const THINK_START: &[i64] = &[14023, 771, 397];
const THINK_START_FAST: &[i64] = &[14023, 771, 1363];
const RESPONSE_START: &[i64] = &[198, 524, 27963, 397, 27, 9399, 397];
const RESPONSE_START_FAST: &[i64] = &[524, 27963, 397, 27, 9399, 397];
const RESPONSE_END_IDS: &[i64] = &[198, 524, 9399, 29];

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Phase {
    /// Before `<think>\n` (and after `\n</answer>`): content.
    #[default]
    Idle,
    Think,
    /// After `<answer>\n`: vLLM's stream hands over to the tool parser.
    Response,
}

impl Phase {
    /// `(expected_sequence, expected_sequence_side)`; the side sequence is
    /// only read in `Idle` and `Think`.
    fn sequences(self) -> (&'static [i64], &'static [i64]) {
        match self {
            Phase::Idle => (THINK_START, THINK_START_FAST),
            Phase::Think => (RESPONSE_START, RESPONSE_START_FAST),
            Phase::Response => (RESPONSE_END_IDS, RESPONSE_START_FAST),
        }
    }
}

#[derive(Default)]
struct HunyuanReasoning {
    phase: Phase,
    /// `sequence_index` (also the length of `token_buffer`).
    matched: usize,
    /// `text_buffer`: the text of the tokens matched so far.
    held: String,
    failure: FailureSlot,
}

crate::impl_snapshot!(HunyuanReasoning { phase, matched, held });

impl HunyuanReasoning {
    /// `check_token_with_sequence`; `Err` where Python indexes past a list.
    fn token_matches(&self, token: i64) -> Result<bool, ()> {
        let (expected, side) = self.phase.sequences();
        let primary = *expected.get(self.matched).ok_or(())? == token;
        if primary || self.phase == Phase::Response {
            return Ok(primary);
        }
        Ok(*side.get(self.matched).ok_or(())? == token)
    }

    /// `check_last_token`, after `matched` was advanced past `token`.
    fn sequence_complete(&self, token: i64) -> bool {
        let (expected, side) = self.phase.sequences();
        if self.phase != Phase::Response && side.get(self.matched - 1) == Some(&token) {
            return self.matched == side.len();
        }
        self.matched == expected.len()
    }

    fn emit(&self, text: String) -> Delta {
        match self.phase {
            Phase::Think => Delta { reasoning: Some(text), ..Default::default() },
            _ => Delta::content(text),
        }
    }
}

impl ReasoningParser for HunyuanReasoning {
    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        if let Some(m) = FULL.search(text) {
            return (non_empty(m.group(1).unwrap_or("")), non_empty(m.group(2).unwrap_or("")));
        }
        if let Some(m) = HALF.search(text) {
            let response = m.group(2).unwrap_or("");
            let response = response.strip_suffix(RESPONSE_END).unwrap_or(response);
            return (non_empty(m.group(1).unwrap_or("")), non_empty(response));
        }
        (None, Some(text.to_string()))
    }

    fn is_reasoning_end(&self, _ids: &[i64]) -> bool {
        self.phase == Phase::Response
    }

    fn extract_content_ids(&self, _ids: &[i64]) -> Vec<i64> {
        Vec::new()
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        if ids.delta.is_empty() {
            return None;
        }
        let [token] = ids.delta else {
            self.failure.record(ApiError::bad_request(FAILED));
            return None;
        };
        let Ok(matches) = self.token_matches(*token) else {
            self.failure.record(ApiError::bad_request(FAILED));
            return None;
        };
        if matches {
            self.held.push_str(t.delta);
            self.matched += 1;
            if self.sequence_complete(*token) {
                self.phase = match self.phase {
                    Phase::Idle => Phase::Think,
                    Phase::Think => Phase::Response,
                    Phase::Response => Phase::Idle,
                };
                self.matched = 0;
                self.held.clear();
            }
            return None;
        }
        // The sequence broke: what it held goes out with this delta.
        let text = std::mem::take(&mut self.held) + t.delta;
        self.matched = 0;
        Some(self.emit(text))
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn failure(&self) -> Option<ApiError> {
        self.failure.get()
    }
}

struct ReasoningFactory;

impl ReasoningParserFactory for ReasoningFactory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(HunyuanReasoning::default())
    }

    /// `assert len(delta_token_ids) == 1`.
    fn stream_fails_on_finish_alone(&self) -> bool {
        true
    }
}

// ---- tool calls ----

static BLOCK: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"(?s)<tool_calls>([\s\S]*?)</tool_calls>"));
static THINK_REGION: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"(?s)<think>(.*?)</think>"));
static NAME: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r#""name"\s*:\s*"([^"]+)""#));
static EMPTY_ARGS: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r#""name"\s*:\s*"[^"]+"\s*,\s*"arguments"\s*:\s*\{\s*\}"#));
static ARGS: LazyLock<Pattern> = LazyLock::new(|| {
    Pattern::new(r#""name"\s*:\s*"[^"]+"\s*,\s*"arguments"\s*:\s*(\{(?:[^{}]|(?:\{[^{}]*\}))*\})"#)
});
const CALLS_START: &str = "<tool_calls>";
/// A13B's chat template writes it before assistant turns.
const ASSISTANT_LABEL: &str = "助手：";

/// `preprocess_model_output`: the content before the first `<tool_calls>`
/// block outside a think block whose body is JSON, and that body.
fn preprocess(output: &str) -> Option<(&str, &str)> {
    let thinks: Vec<(usize, usize)> = THINK_REGION.finditer(output).iter().map(|m| (m.start, m.end)).collect();
    BLOCK.finditer(output).into_iter().find_map(|m| {
        let in_think = thinks.iter().any(|&(s, e)| m.start > s && m.end < e);
        let body = py_strip(m.group(1).unwrap_or(""));
        (!in_think && loads(body).is_some()).then(|| (&output[..m.start], body))
    })
}

/// One parsed call as vLLM builds it; `Err` where pydantic raises.
fn read_call(call: &Value) -> Result<Option<FunctionCall>, ()> {
    let Some(obj) = call.as_object().filter(|o| o.contains_key("name") && o.contains_key("arguments")) else {
        return Ok(None);
    };
    let name = obj["name"].as_str().ok_or(())?.to_string();
    let arguments = match &obj["arguments"] {
        args @ Value::Object(_) => dumps(args),
        Value::String(s) => s.clone(),
        _ => return Err(()),
    };
    Ok(Some(FunctionCall { id: Some(format!("call_{}", random_hex_id())), name, arguments }))
}

/// Per call: its name sent, its first `{` sent, its arguments sent.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Sent {
    name: bool,
    prefix: bool,
    args: String,
}

struct HunyuanTools {
    /// `streaming_state["current_tool_index"]`.
    current: i64,
    sent: Vec<Sent>,
    /// `prev_tool_call_arr`: the arguments owed at the end.
    calls: CallStream,
    failure: FailureSlot,
}

crate::impl_snapshot!(HunyuanTools { current, sent } nested { calls });

impl HunyuanTools {
    fn new() -> Self {
        HunyuanTools { current: -1, sent: Vec::new(), calls: CallStream::new(), failure: FailureSlot::default() }
    }

    fn args_delta(index: usize, text: String) -> Option<Delta> {
        Some(Delta::tool_calls(vec![DeltaToolCall::arguments(index as i64, text)]))
    }

    /// The names and arguments walk over the whole text `current`.
    fn step(&mut self, current: &str) -> Option<Delta> {
        let names = NAME.finditer(current);
        let count = names.len();
        if count == 0 {
            return None;
        }
        if self.sent.len() < count {
            self.sent.resize(count, Sent::default());
        }
        if self.current == -1 || self.current < count as i64 - 1 {
            let next = (self.current + 1) as usize;
            if next < count && !self.sent[next].name {
                self.current = next as i64;
                self.sent[next].name = true;
                let name = names[next].group(1).unwrap_or("").to_string();
                let id = format!("call_{next}_{}", random_hex_id());
                return Some(Delta::tool_calls(vec![DeltaToolCall::opening(next as i64, id, name, None)]));
            }
        }
        let i = usize::try_from(self.current).ok().filter(|i| *i < count)?;
        if EMPTY_ARGS.search(current).is_some_and(|m| m.start > 0) && !self.sent[i].prefix {
            self.sent[i].prefix = true;
            self.sent[i].args = "{}".to_string();
            if i < count - 1 {
                self.current += 1;
            }
            return Self::args_delta(i, "{}".into());
        }
        let all_args = ARGS.finditer(current);
        let m = all_args.get(i)?;
        let mut args = m.group(1).unwrap_or("").to_string();
        if i < count - 1 {
            if let Some(next) = current[m.start..].find("},{") {
                // `current[start:next + 1].split('"arguments":')[1].strip()`
                let Some((_, rest)) = current[m.start..m.start + next + 1].split_once("\"arguments\":") else {
                    self.failure.record(ApiError::bad_request(FAILED));
                    return None;
                };
                let rest = rest.split("\"arguments\":").next().unwrap_or("");
                args = py_strip(rest).to_string();
            }
        }
        let sent = &mut self.sent[i];
        if !sent.prefix && args.starts_with('{') {
            sent.prefix = true;
            sent.args = "{".to_string();
            return Self::args_delta(i, "{".into());
        }
        if let Some(diff) = args.strip_prefix(sent.args.as_str()).filter(|d| !d.is_empty()) {
            let diff = diff.to_string();
            sent.args = args;
            return Self::args_delta(i, diff);
        }
        if args.ends_with('}') && args == sent.args && i < count - 1 {
            self.current += 1;
        }
        None
    }
}

impl ToolParser for HunyuanTools {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let failed = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some((content, body)) = preprocess(text) else {
            let content = Some(text.replacen(ASSISTANT_LABEL, "", 1));
            return Extracted { tools_called: false, calls: Vec::new(), content };
        };
        let Some(data) = loads(body) else { return failed() };
        let Value::Array(items) = data else {
            let content = Some(if content.is_empty() { text } else { content }.to_string());
            return Extracted { tools_called: false, calls: Vec::new(), content };
        };
        let mut calls = Vec::new();
        for item in &items {
            match read_call(item) {
                Ok(call) => calls.extend(call),
                Err(()) => return failed(),
            }
        }
        let content = (!py_strip(content).is_empty()).then(|| content.to_string());
        Extracted { tools_called: !calls.is_empty(), calls, content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let mut rest = t.current.trim_start_matches(py_isspace);
        if let Some(after) = rest.strip_prefix(CALLS_START) {
            rest = after.trim_start_matches(py_isspace);
        }
        if !rest.starts_with('[') {
            return Some(Delta::content(t.delta));
        }
        if let Some(Value::Array(parsed)) = loads(rest) {
            self.calls.prev = parsed;
        }
        self.step(t.current)
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }

    fn failure(&self) -> Option<ApiError> {
        self.failure.get()
    }
}

struct ToolFactory;

impl ToolParserFactory for ToolFactory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(HunyuanTools::new())
    }
}

static TOOLS: ToolFamily = Family { names: &["hunyuan_a13b"], needs: "", load: |_| Ok(Arc::new(ToolFactory)) };
static REASONING: ReasoningFamily =
    Family { names: &["hunyuan_a13b"], needs: "", load: |_| Ok(Arc::new(ReasoningFactory)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.reasoning_family(&REASONING);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ChatContext {
        ChatContext::from_request(&Default::default(), &Default::default())
    }

    #[test]
    fn batch_splits_think_answer_and_calls() {
        let r = HunyuanReasoning::default();
        let text = "<think>\nhm\n</think>\n<answer>\nhi\n</answer>";
        assert_eq!(r.extract_reasoning(text, &ctx()), (Some("hm".into()), Some("hi".into())));
        // Without the answer's end, the half match; with neither, all content.
        let open = "<think>\nhm\n</think>\n<answer>\nhi";
        assert_eq!(r.extract_reasoning(open, &ctx()), (Some("hm".into()), Some("hi".into())));
        assert_eq!(r.extract_reasoning("plain", &ctx()), (None, Some("plain".into())));

        let tools = HunyuanTools::new();
        let got = tools.extract_tool_calls(r#"ok <tool_calls>[{"name": "f", "arguments": {"a": 1}}]</tool_calls>"#, &ctx());
        assert!(got.tools_called);
        assert_eq!((got.calls[0].name.as_str(), got.calls[0].arguments.as_str()), ("f", r#"{"a": 1}"#));
        assert_eq!(got.content.as_deref(), Some("ok "));
        // A block inside a think block is not a call; the label is dropped.
        let inside = r#"助手：<think>x <tool_calls>[]</tool_calls> y</think>"#;
        assert_eq!(tools.extract_tool_calls(inside, &ctx()).content.as_deref(), Some(&inside["助手：".len()..]));
    }

    #[test]
    fn stream_follows_ids_one_per_delta() {
        let mut r = HunyuanReasoning::default();
        let mut out = Vec::new();
        let steps: &[(i64, &str)] =
            &[(14023, "<think"), (771, ">"), (397, "\n"), (40, "x"), (198, "\n"), (50, "y"), (524, "</")];
        for (id, text) in steps {
            let texts = Texts { previous: "", current: "", delta: text };
            let ids = Ids { previous: &[], current: &[], delta: &[*id] };
            out.push(r.extract_reasoning_streaming(&texts, &ids).and_then(|d| d.reasoning));
        }
        // The broken `\n` sequence goes out with the token that broke it.
        assert_eq!(out, [None, None, None, Some("x".into()), None, Some("\ny".into()), None]);
        assert!(r.failure().is_none());
        let texts = Texts { previous: "", current: "", delta: "ab" };
        r.extract_reasoning_streaming(&texts, &Ids { previous: &[], current: &[], delta: &[1, 2] });
        assert!(r.failure().is_some());
    }
}
