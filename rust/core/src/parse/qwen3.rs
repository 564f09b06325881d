//! The Qwen3 format (`vllm/parser/qwen3.py`): `<think>` reasoning and
//! `<tool_call>` XML tool calls in one engine config.

use std::sync::OnceLock;

use super::engine::{tr, EngineConfig, EventType as E, State as S};

const CHATML_TURN_BOUNDARIES: [&str; 2] = ["<|im_start|>", "<|im_end|>"];

fn build(thinking: bool) -> EngineConfig {
    EngineConfig {
        name: "qwen3",
        terminals: vec![
            ("THINK_START", vec!["<think>"]),
            ("THINK_END", vec!["</think>"]),
            ("TOOL_START", vec!["<tool_call>"]),
            ("TOOL_END", vec!["</tool_call>"]),
            ("FUNC_PREFIX", vec!["<function="]),
            ("FUNC_END", vec!["</function>"]),
            ("PARAM_START", vec!["<parameter="]),
            ("PARAM_END", vec!["</parameter>"]),
            ("CLOSE_ANGLE", vec![">"]),
        ],
        token_id_terminals: vec![
            ("THINK_START", "<think>"),
            ("THINK_END", "</think>"),
            ("TOOL_START", "<tool_call>"),
            ("TOOL_END", "</tool_call>"),
        ],
        transitions: vec![
            ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
            ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
            // A duplicate </think> after reasoning ended is dropped.
            ((S::Content, "THINK_END"), tr(S::Content, &[])),
            // <tool_call> inside reasoning ends it implicitly.
            ((S::Reasoning, "TOOL_START"), tr(S::ToolPreamble, &[E::ReasoningEnd, E::ToolCallStart])),
            ((S::Content, "TOOL_START"), tr(S::ToolPreamble, &[E::ReasoningEnd, E::ToolCallStart])),
            ((S::Content, "FUNC_PREFIX"), tr(S::ToolName, &[E::ToolCallStart])),
            ((S::ToolPreamble, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
            ((S::ToolPreamble, "FUNC_PREFIX"), tr(S::ToolName, &[])),
            ((S::ToolName, "CLOSE_ANGLE"), tr(S::ToolArgs, &[])),
            ((S::ToolName, "FUNC_END"), tr(S::ToolBetween, &[E::ToolCallEnd])),
            ((S::ToolName, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
            ((S::ToolName, "TOOL_START"), tr(S::ToolPreamble, &[E::ToolCallEnd, E::ToolCallStart])),
            ((S::ToolName, "FUNC_PREFIX"), tr(S::ToolName, &[E::ToolCallEnd, E::ToolCallStart])),
            ((S::ToolArgs, "FUNC_END"), tr(S::ToolBetween, &[E::ToolCallEnd])),
            ((S::ToolArgs, "FUNC_PREFIX"), tr(S::ToolName, &[E::ToolCallEnd, E::ToolCallStart])),
            ((S::ToolArgs, "PARAM_START"), tr(S::ToolArgs, &[E::ArgValueChunk])),
            ((S::ToolArgs, "PARAM_END"), tr(S::ToolArgs, &[E::ArgValueChunk])),
            ((S::ToolBetween, "TOOL_END"), tr(S::Content, &[])),
            ((S::ToolBetween, "TOOL_START"), tr(S::ToolPreamble, &[E::ToolCallStart])),
            ((S::ToolBetween, "FUNC_PREFIX"), tr(S::ToolName, &[E::ToolCallStart])),
        ],
        content_events: EngineConfig::default_content_events(),
        initial_state: if thinking { S::Reasoning } else { S::Content },
        wait_for_reasoning: Some(thinking),
        tool_args_json: false,
        tool_call_body_array: false,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: CHATML_TURN_BOUNDARIES.to_vec(),
        strip_trailing_reasoning_whitespace: false,
    }
}

/// The Qwen3 config with thinking on (the default) or off
/// (`chat_template_kwargs.enable_thinking: false`).
pub fn config(thinking: bool) -> &'static EngineConfig {
    static ON: OnceLock<EngineConfig> = OnceLock::new();
    static OFF: OnceLock<EngineConfig> = OnceLock::new();
    if thinking {
        ON.get_or_init(|| build(true))
    } else {
        OFF.get_or_init(|| build(false))
    }
}
