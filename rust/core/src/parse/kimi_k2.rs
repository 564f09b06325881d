//! Kimi K2 (`vllm/parser/kimi_k2.py`): `<think>` reasoning and
//! `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
//! <|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|>`.
//! The header before the argument marker is the call's own id; the JSON
//! arguments pass through as written.

use std::sync::OnceLock;

use super::engine::{tr, ArgFormat, EngineConfig, EventType as E, State as S, Transition};

pub const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
pub const SECTION_END: &str = "<|tool_calls_section_end|>";
pub const CALL_BEGIN: &str = "<|tool_call_begin|>";
pub const CALL_END: &str = "<|tool_call_end|>";
pub const ARG_BEGIN: &str = "<|tool_call_argument_begin|>";

fn build(thinking: bool) -> EngineConfig {
    let mut terminals: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    let mut token_ids: Vec<(&'static str, &'static str)> = Vec::new();
    let mut transitions: Vec<((S, &'static str), Transition)> = Vec::new();
    if thinking {
        terminals.extend([("THINK_START", vec!["<think>"]), ("THINK_END", vec!["</think>"])]);
        token_ids.extend([("THINK_START", "<think>"), ("THINK_END", "</think>")]);
        transitions.extend([
            ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
            ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
            ((S::Content, "THINK_END"), tr(S::Content, &[])),
        ]);
    }
    let markers = [
        ("TOOL_SECTION_START", SECTION_BEGIN),
        ("TOOL_SECTION_END", SECTION_END),
        ("TOOL_START", CALL_BEGIN),
        ("TOOL_END", CALL_END),
        ("ARG_START", ARG_BEGIN),
    ];
    terminals.extend(markers.iter().map(|(n, t)| (*n, vec![*t])));
    token_ids.extend(markers);
    transitions.extend([
        ((S::Reasoning, "TOOL_SECTION_START"), tr(S::ToolPreamble, &[E::ReasoningEnd])),
        ((S::Content, "TOOL_SECTION_START"), tr(S::ToolPreamble, &[])),
        ((S::ToolPreamble, "TOOL_START"), tr(S::ToolName, &[E::ToolCallStart])),
        ((S::ToolName, "ARG_START"), tr(S::ToolArgs, &[])),
        ((S::ToolArgs, "TOOL_END"), tr(S::ToolBetween, &[E::ToolCallEnd])),
        ((S::ToolArgs, "TOOL_SECTION_END"), tr(S::ToolPreamble, &[E::ToolCallEnd])),
        ((S::ToolBetween, "TOOL_START"), tr(S::ToolName, &[E::ToolCallStart])),
        // The section's end keeps a tool state, so text after the calls is
        // dropped.
        ((S::ToolPreamble, "TOOL_SECTION_END"), tr(S::ToolPreamble, &[])),
        ((S::ToolBetween, "TOOL_SECTION_END"), tr(S::ToolPreamble, &[])),
    ]);
    EngineConfig {
        name: "kimi_k2",
        terminals,
        token_id_terminals: token_ids,
        transitions,
        content_events: EngineConfig::default_content_events(),
        initial_state: if thinking { S::Reasoning } else { S::Content },
        wait_for_reasoning: Some(thinking),
        tool_args_json: true,
        tool_call_body_array: false,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: Vec::new(),
        strip_trailing_reasoning_whitespace: true,
        arg_format: ArgFormat::Json,
        validate_tool_names: false,
        strip_tool_names: false,
        // vLLM's Kimi config keeps content around calls (only whitespace-only
        // content is dropped).
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: false,
    }
}

/// The format with or without its `<think>` markers (`thinking` kwargs).
pub fn config(thinking: bool) -> &'static EngineConfig {
    static ON: OnceLock<EngineConfig> = OnceLock::new();
    static OFF: OnceLock<EngineConfig> = OnceLock::new();
    if thinking {
        ON.get_or_init(|| build(true))
    } else {
        OFF.get_or_init(|| build(false))
    }
}

/// `_extract_tool_id_and_name`: the header's `(id, name)` by vLLM's
/// `(?P<id>.+:\d+)` matched at the start of the stripped header (`.` stops
/// at a newline, `.+` is greedy); the name is the id's part before its
/// first `:`, without a `functions.` prefix. `None` without a name.
pub fn parse_header(header: &str) -> Option<(String, String)> {
    let line = header.trim().split('\n').next().unwrap_or("");
    let c: Vec<char> = line.chars().collect();
    let digit = |ch: &char| ch.is_ascii_digit();
    let colon = (1..c.len()).rev().find(|&i| c[i] == ':' && c.get(i + 1).is_some_and(digit))?;
    let end = colon + 1 + c[colon + 1..].iter().take_while(|ch| digit(ch)).count();
    let id: String = c[..end].iter().collect::<String>().trim().to_string();
    let first = id.split(':').next().unwrap_or("");
    let name = first.strip_prefix("functions.").unwrap_or(first).to_string();
    (!name.is_empty()).then_some((id, name))
}

#[cfg(test)]
#[path = "kimi_k2_tests.rs"]
mod tests;
