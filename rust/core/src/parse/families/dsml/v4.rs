//! DeepSeek-V4 (`deepseek_v4`, tool and reasoning parser in one engine):
//! `<think>` reasoning, then DSML calls in a `tool_calls` block (two more
//! openers seen in production). Thinking is on unless the request's kwargs
//! turn it off (`DeepSeekV4Parser.__init__`).

use std::sync::Arc;

use super::{arg_syntax, convert, tag_for, tool_terminals, tool_transitions, unwrap_wrapper, Dialect};
use crate::model::Model;
use crate::parse::engine::{
    tr, ArgSyntax, ByThinking, EngineConfig, EngineReasoning, EngineReasoningFamily, EngineToolFamily, EventType as E,
    State as S,
};
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::parse::{ChatContext, Registry};
use crate::structured::format::TagModel;
use crate::structured::tool_tags::StrictLevel;

static DIALECT: Dialect = Dialect {
    tool_start: &["<｜DSML｜tool_calls>", "<｜DSML｜toolcalls>", "<｜DSML｜tool>"],
    tool_end: "</｜DSML｜tool_calls>",
    invoke_prefix: "<｜DSML｜invoke name=\"",
    invoke_end: "</｜DSML｜invoke>",
    param_start: "<｜DSML｜parameter",
    param_close: "</｜DSML｜parameter>",
    xml_style: "deepseek_xml",
};

/// V4's engine in a dialect's spellings (V4.1 respells it).
pub(super) fn build(name: &'static str, d: &'static Dialect, args: &'static ArgSyntax, thinking: bool) -> EngineConfig {
    let mut terminals = vec![("THINK_START", vec!["<think>"]), ("THINK_END", vec!["</think>"])];
    terminals.extend(tool_terminals(d));
    let mut transitions = vec![
        ((S::Content, "THINK_START"), tr(S::Reasoning, &[E::ReasoningStart])),
        // A bare `</think>`, or a second `<think>`, is absorbed.
        ((S::Content, "THINK_END"), tr(S::Content, &[])),
        ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
        ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
        // A call inside `<think>` ends the reasoning.
        ((S::Reasoning, "TOOL_START"), tr(S::ToolPreamble, &[E::ReasoningEnd])),
    ];
    transitions.extend(tool_transitions());
    EngineConfig {
        name,
        terminals,
        token_id_terminals: vec![
            ("THINK_START", "<think>"),
            ("THINK_END", "</think>"),
            ("TOOL_START", d.tool_start[0]),
            ("TOOL_END", d.tool_end),
        ],
        transitions,
        content_events: vec![
            (S::Content, E::TextChunk),
            (S::Reasoning, E::ReasoningChunk),
            (S::ToolName, E::ToolName),
            (S::ToolArgs, E::ArgValueChunk),
        ],
        initial_state: if thinking { S::Reasoning } else { S::Content },
        wait_for_reasoning: Some(thinking),
        tool_args_json: false,
        tool_call_body_array: false,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: Vec::new(),
        strip_trailing_reasoning_whitespace: true,
        arg_syntax: Some(args),
        validate_tool_names: false,
        strip_tool_names: false,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: false,
        stream_text_after_calls: true,
    }
}

pub fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| build("deepseek_v4", &DIALECT, &ARGS, thinking))
}

/// `thinking or enable_thinking` (on when neither is given), off for a
/// `reasoning_effort` of "none".
pub(super) fn thinking(ctx: &ChatContext) -> bool {
    ctx.thinking_or_enable_thinking()
        && ctx.template_kwargs.get("reasoning_effort").and_then(serde_json::Value::as_str) != Some("none")
}

static ARGS: ArgSyntax = arg_syntax(|raw, partial, props| Some(unwrap_wrapper(convert(&DIALECT, raw, partial), props)));

// Registration: `deepseek_v4` as reasoning and tool parser, and xgrammar's
// `deepseek_v4` structural tag.

fn reasoning(ctx: &ChatContext, model: &Arc<Model>) -> EngineReasoning {
    reasoning_with(config, ctx, model)
}

/// The reasoning side of a V4-style engine.
pub(super) fn reasoning_with(
    config: fn(bool) -> &'static EngineConfig,
    ctx: &ChatContext,
    model: &Arc<Model>,
) -> EngineReasoning {
    let thinking = thinking(ctx);
    let mut engine = EngineReasoning::new(config(thinking), model.clone());
    // Thinking off: vLLM's stream reads the prompt's `</think>` and hands
    // the whole output to the tool engine, which reads `<think>` itself.
    engine.ended_before_output = !thinking;
    engine
}

static REASONING: ReasoningFamily =
    Family { names: &["deepseek_v4"], needs: "", load: |_| Ok(Arc::new(EngineReasoningFamily(reasoning))) };

static TOOLS: ToolFamily = Family {
    names: &["deepseek_v4"],
    needs: "",
    load: |_| {
        let config = |ctx: &ChatContext| config(thinking(ctx));
        Ok(Arc::new(EngineToolFamily { config, tag_model: Some(&TAG), tool_header: None }))
    },
};

static TAG: TagModel =
    TagModel { name: "deepseek_v4", build: |tools, choice| tag_for(&DIALECT, tools, choice), default_level: StrictLevel::Auto };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}
