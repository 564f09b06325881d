//! Kimi K2 (`vllm/parser/kimi_k2.py`): `<think>` reasoning and
//! `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
//! <|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|>`.
//! The header before the argument marker is the call's own id; the JSON
//! arguments pass through as written.


use std::sync::Arc;

use serde_json::{json, Value};

use crate::model::Model;
use crate::parse::engine::{EngineReasoning, EngineToolFamily, VllmStreamReasoningFamily};
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::structured::tool_tags::StrictLevel;
use crate::structured::format::{const_string, content, separated, sequence, tag, triggered, Choice, TagModel, TagTool};
use crate::parse::{ChatContext, Registry};
use crate::parse::engine::{tr, ByThinking, EngineConfig, EventType as E, State as S, Transition};

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
        arg_syntax: None,
        validate_tool_names: false,
        strip_tool_names: false,
        // vLLM's Kimi config keeps content around calls (only whitespace-only
        // content is dropped).
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: false,
        stream_text_after_calls: false,
    }
}

/// The format with or without its `<think>` markers (`thinking` kwargs).
pub fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, build)
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

// Registration.

fn reasoning(ctx: &ChatContext, model: &Arc<Model>) -> EngineReasoning {
    let thinking = ctx.thinking_or_enable_thinking();
    let mut engine = EngineReasoning::switched(config, thinking, model);
    // Content ids: after `</think>`, else from the tool section on.
    engine.content_ids_after_end_only = thinking;
    engine.content_ids_fallback = model.tokenizer.token_to_id(SECTION_BEGIN).map(i64::from);
    engine
}

// Streams follow vLLM's: it reads the prompt, and a tool section there
// (a past call, with no turn marker in Kimi's engine config to stop the
// scan) ends reasoning before the output starts, where batch still splits
// reasoning out.
static REASONING: ReasoningFamily =
    Family { names: &["kimi_k2"], needs: "", load: |_| Ok(Arc::new(VllmStreamReasoningFamily(reasoning))) };

static TOOLS: ToolFamily = Family {
    names: &["kimi_k2"],
    needs: "",
    load: |_| {
        let config = |ctx: &ChatContext| config(ctx.thinking_or_enable_thinking());
        Ok(Arc::new(EngineToolFamily { config, tag_model: Some(&TAG), tool_header: Some(parse_header) }))
    },
};

static TAG: TagModel = TagModel { name: "kimi", build: tag_for, default_level: StrictLevel::Auto };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}

/// Kimi-K2 (`<|tool_calls_section_begin|>` around `functions.NAME:IDX` calls).
fn tag_for(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = tools.iter().map(|t| {
        let body = sequence(vec![
            json!({"type": "regex", "pattern": "\\d+"}),
            const_string(ARG_BEGIN),
            content(t.schema(), "json"),
        ]);
        tag(&format!("{CALL_BEGIN}functions.{}:", t.name), body, CALL_END)
    });
    match choice {
        Choice::Auto => {
            let section = tag(SECTION_BEGIN, separated(tags.collect(), "", false), SECTION_END);
            triggered(&[SECTION_BEGIN], vec![section], false, &["<think>", "</think>", CALL_BEGIN])
        }
        Choice::Forced => {
            sequence(vec![const_string(SECTION_BEGIN), tags.next().unwrap_or(Value::Null), const_string(SECTION_END)])
        }
        Choice::Required => {
            sequence(vec![const_string(SECTION_BEGIN), separated(tags.collect(), "", false), const_string(SECTION_END)])
        }
    }
}

#[cfg(test)]
#[path = "kimi_k2_tests.rs"]
mod tests;
