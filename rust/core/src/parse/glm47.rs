//! GLM-4.5/4.7 (`vllm/parser/glm47_moe.py`): `<think>` reasoning and
//! `<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::engine::{tr, ArgFormat, EngineConfig, EventType as E, State as S, Transition};
use super::pyjson::{dumps, dumps_str};

const ARG_VALUE_END: &str = "</arg_value>";

fn build(thinking: bool) -> EngineConfig {
    let mut terminals = Vec::new();
    let mut token_ids = Vec::new();
    let mut transitions: Vec<((S, &'static str), Transition)> = Vec::new();
    if thinking {
        terminals.extend([("THINK_START", vec!["<think>"]), ("THINK_END", vec!["</think>"])]);
        token_ids.extend([("THINK_START", "<think>"), ("THINK_END", "</think>")]);
        transitions.extend([
            ((S::Content, "THINK_START"), tr(S::Reasoning, &[E::ReasoningStart])),
            ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
            ((S::Content, "THINK_END"), tr(S::Content, &[])),
        ]);
    }
    terminals.extend([
        ("TOOL_START", vec!["<tool_call>"]),
        ("TOOL_END", vec!["</tool_call>"]),
        ("ARG_KEY_START", vec!["<arg_key>"]),
        ("ARG_KEY_END", vec!["</arg_key>"]),
        ("ARG_VALUE_START", vec!["<arg_value>"]),
        ("ARG_VALUE_END", vec![ARG_VALUE_END]),
    ]);
    token_ids.extend([("TOOL_START", "<tool_call>"), ("TOOL_END", "</tool_call>")]);
    transitions.extend([
        ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
        ((S::Reasoning, "TOOL_START"), tr(S::ToolName, &[E::ReasoningEnd, E::ToolCallStart])),
        ((S::Content, "TOOL_START"), tr(S::ToolName, &[E::ToolCallStart])),
        ((S::ToolName, "ARG_KEY_START"), tr(S::ToolArgs, &[E::ArgValueChunk])),
        ((S::ToolName, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
        ((S::ToolArgs, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
    ]);
    for t in ["ARG_KEY_START", "ARG_KEY_END", "ARG_VALUE_START", "ARG_VALUE_END"] {
        transitions.push(((S::ToolArgs, t), tr(S::ToolArgs, &[E::ArgValueChunk])));
    }
    EngineConfig {
        name: "glm47_moe",
        terminals,
        token_id_terminals: token_ids,
        transitions,
        content_events: EngineConfig::default_content_events(),
        initial_state: if thinking { S::Reasoning } else { S::Content },
        wait_for_reasoning: None,
        tool_args_json: false,
        tool_call_body_array: false,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: vec!["<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"],
        strip_trailing_reasoning_whitespace: true,
        arg_format: ArgFormat::Glm47,
        validate_tool_names: true,
        strip_tool_names: true,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: true,
    }
}

pub fn config(thinking: bool) -> &'static EngineConfig {
    static ON: OnceLock<EngineConfig> = OnceLock::new();
    static OFF: OnceLock<EngineConfig> = OnceLock::new();
    if thinking {
        ON.get_or_init(|| build(true))
    } else {
        OFF.get_or_init(|| build(false))
    }
}

/// `Glm47MoeParser.thinking_enabled`: on unless `thinking` or
/// `enable_thinking` is given and neither is truthy.
pub fn thinking_enabled(kwargs: &Map<String, Value>) -> bool {
    let t = kwargs.get("thinking").filter(|v| !v.is_null());
    let e = kwargs.get("enable_thinking").filter(|v| !v.is_null());
    if t.is_none() && e.is_none() {
        return true;
    }
    t.is_some_and(super::context::truthy) || e.is_some_and(super::context::truthy)
}

fn find(c: &[char], from: usize, pat: &str) -> Option<usize> {
    let p: Vec<char> = pat.chars().collect();
    if p.len() > c.len() {
        return None;
    }
    (from..=c.len() - p.len()).find(|&i| c[i..i + p.len()] == p[..])
}

/// `<arg_key>K</arg_key>\s*<arg_value>` at `i`: (key, index after the opener).
fn arg_head(c: &[char], i: usize) -> Option<(String, usize)> {
    let ks = i + "<arg_key>".len();
    if find(c, i, "<arg_key>") != Some(i) {
        return None;
    }
    let ke = find(c, ks, "</arg_key>")?;
    let mut j = ke + "</arg_key>".len();
    while j < c.len() && c[j].is_whitespace() {
        j += 1;
    }
    (find(c, j, "<arg_value>") == Some(j)).then(|| (c[ks..ke].iter().collect(), j + "<arg_value>".len()))
}

/// `_glm47_parse_args`: the arguments, and the key of the open last value.
fn parse_args(raw: &str, partial: bool) -> (Map<String, Value>, Option<String>) {
    let c: Vec<char> = raw.chars().collect();
    let mut params = Map::new();
    let mut remaining: Vec<char> = Vec::new();
    let mut i = 0;
    let mut copied = 0;
    while i < c.len() {
        let complete = arg_head(&c, i).and_then(|(k, vs)| find(&c, vs, ARG_VALUE_END).map(|ve| (k, vs, ve)));
        match complete {
            Some((k, vs, ve)) => {
                params.insert(k.trim().to_string(), Value::String(c[vs..ve].iter().collect()));
                remaining.extend_from_slice(&c[copied..i]);
                i = ve + ARG_VALUE_END.len();
                copied = i;
            }
            None => i += 1,
        }
    }
    remaining.extend_from_slice(&c[copied..]);
    let mut open = None;
    if partial {
        for i in 0..remaining.len() {
            if let Some((k, vs)) = arg_head(&remaining, i) {
                let key = k.trim().to_string();
                if !key.is_empty() {
                    params.insert(key.clone(), Value::String(remaining[vs..].iter().collect()));
                    open = Some(key);
                }
                break;
            }
        }
    }
    (params, open)
}

pub fn convert(raw: &str, partial: bool) -> String {
    dumps(&Value::Object(parse_args(raw, partial).0))
}

/// Streams the open last value until `</arg_value>` appears.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ValueExtender {
    tail: String,
}

impl ValueExtender {
    pub fn new(raw: &str) -> Option<ValueExtender> {
        let (params, open) = parse_args(raw, true);
        let open = open?;
        if params.keys().next_back() != Some(&open) {
            return None;
        }
        let keep = ARG_VALUE_END.chars().count() - 1;
        Some(ValueExtender { tail: raw.chars().rev().take(keep).collect::<Vec<_>>().into_iter().rev().collect() })
    }

    pub fn extend(&mut self, delta: &str) -> Option<String> {
        let text = format!("{}{}", self.tail, delta);
        if text.contains(ARG_VALUE_END) {
            return None;
        }
        let keep = ARG_VALUE_END.chars().count() - 1;
        self.tail = text.chars().rev().take(keep).collect::<Vec<_>>().into_iter().rev().collect();
        let q = dumps_str(delta);
        Some(q[1..q.len() - 1].to_string())
    }
}
