//! The Qwen3 format (`vllm/parser/qwen3.py`): `<think>` reasoning and
//! `<tool_call>` XML tool calls in one engine config.


use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::engine::{EngineReasoning, EngineReasoningFamily, EngineToolFamily};
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::structured::tool_tags::StrictLevel;
use crate::structured::format::{content, tag, triggered, Choice, TagModel, TagTool, THINK};
use crate::parse::{ChatContext, Registry};
use crate::parse::engine::{tr, ByThinking, EngineConfig, EventType as E, State as S};

/// The wrapper strings a family of the Qwen3 grammar uses.
pub(super) struct Markers {
    pub(super) name: &'static str,
    pub(super) think_start: &'static str,
    pub(super) think_end: &'static str,
    pub(super) tool_start: &'static str,
    pub(super) tool_end: &'static str,
    pub(super) turn_boundaries: [&'static str; 2],
}

const QWEN3: Markers = Markers {
    name: "qwen3",
    think_start: "<think>",
    think_end: "</think>",
    tool_start: "<tool_call>",
    tool_end: "</tool_call>",
    turn_boundaries: ["<|im_start|>", "<|im_end|>"],
};

pub(super) fn build(m: &Markers, thinking: bool) -> EngineConfig {
    EngineConfig {
        name: m.name,
        terminals: vec![
            ("THINK_START", vec![m.think_start]),
            ("THINK_END", vec![m.think_end]),
            ("TOOL_START", vec![m.tool_start]),
            ("TOOL_END", vec![m.tool_end]),
            ("FUNC_PREFIX", vec!["<function="]),
            ("FUNC_END", vec!["</function>"]),
            ("PARAM_START", vec!["<parameter="]),
            ("PARAM_END", vec!["</parameter>"]),
            ("CLOSE_ANGLE", vec![">"]),
        ],
        token_id_terminals: vec![
            ("THINK_START", m.think_start),
            ("THINK_END", m.think_end),
            ("TOOL_START", m.tool_start),
            ("TOOL_END", m.tool_end),
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
        turn_boundary_tokens: m.turn_boundaries.to_vec(),
        strip_trailing_reasoning_whitespace: false,
        arg_syntax: Some(&super::qwen3_args::ARGS),
        validate_tool_names: false,
        strip_tool_names: false,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: true,
        stream_text_after_calls: true,
    }
}

/// The Qwen3 config with thinking on (the default) or off
/// (`chat_template_kwargs.enable_thinking: false`).
pub fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| build(&QWEN3, thinking))
}

/// A fresh Qwen3-grammar config, for families that retune a few of its
/// settings (Step-3.5).
pub(super) fn qwen3_grammar(thinking: bool) -> EngineConfig {
    build(&QWEN3, thinking)
}

// Registration: the `qwen3` reasoning parser and the `qwen3_coder` (alias
// `qwen3_xml`) tool parser; Step's families reuse the tag model.

fn reasoning(ctx: &ChatContext, model: &Arc<Model>) -> EngineReasoning {
    EngineReasoning::switched(config, ctx.enable_thinking(), model)
}

static REASONING: ReasoningFamily =
    Family { names: &["qwen3"], needs: "", load: |_| Ok(Arc::new(EngineReasoningFamily(reasoning))) };

static TOOLS: ToolFamily = Family {
    names: &["qwen3_coder", "qwen3_xml"],
    needs: "",
    load: |_| {
        let config = |ctx: &ChatContext| config(ctx.enable_thinking());
        Ok(Arc::new(EngineToolFamily { config, tag_model: Some(&TAG), tool_header: None }))
    },
};

pub(super) static TAG: TagModel = TagModel { name: "qwen_3_coder", build: tag_for, default_level: StrictLevel::Auto };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}

/// Qwen3-Coder XML (`<tool_call>\n<function=NAME>\n...`).
fn tag_for(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = tools.iter().map(|t| {
        tag(
            &format!("<tool_call>\n<function={}>\n", t.name),
            content(t.schema(), "qwen_xml"),
            "\n</function>\n</tool_call>",
        )
    });
    match choice {
        Choice::Forced => tags.next().unwrap_or(Value::Null),
        _ => triggered(&["<tool_call>\n<function="], tags.collect(), choice == Choice::Required, &THINK),
    }
}
