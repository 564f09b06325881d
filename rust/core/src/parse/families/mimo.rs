//! Xiaomi MiMo (`vllm/parser/mimo.py`): the Qwen3 grammar and reasoning
//! switch, with parameter values kept verbatim, and xgrammar's `mimo`
//! structural tag (no newlines between the wrapper tags).

use std::sync::Arc;

use serde_json::Value;

use super::qwen3::{build, Markers};
use super::qwen3_args::VERBATIM_ARGS;
use crate::parse::engine::{ByThinking, EngineConfig, EngineReasoning, EngineReasoningFamily, EngineToolFamily};
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::parse::{ChatContext, Registry};
use crate::structured::format::{content, tag, triggered, Choice, TagModel, TagTool};
use crate::structured::tool_tags::StrictLevel;

const MIMO: Markers = Markers {
    name: "mimo",
    think_start: "<think>",
    think_end: "</think>",
    tool_start: "<tool_call>",
    tool_end: "</tool_call>",
    turn_boundaries: ["<|im_start|>", "<|im_end|>"],
};

fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| EngineConfig { arg_syntax: Some(&VERBATIM_ARGS), ..build(&MIMO, thinking) })
}

static REASONING: ReasoningFamily = Family {
    names: &["mimo"],
    needs: "",
    load: |_| Ok(Arc::new(EngineReasoningFamily(|ctx, model| EngineReasoning::switched(config, ctx.enable_thinking(), model)))),
};

static TOOLS: ToolFamily = Family {
    names: &["mimo"],
    needs: "",
    load: |_| {
        let config = |ctx: &ChatContext| config(ctx.enable_thinking());
        Ok(Arc::new(EngineToolFamily { config, tag_model: Some(&TAG), tool_header: None }))
    },
};

static TAG: TagModel = TagModel { name: "mimo", build: tag_for, default_level: StrictLevel::Auto };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}

/// `get_mimo_structural_tag` with reasoning disabled, as vLLM asks for it.
fn tag_for(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = tools.iter().map(|t| {
        tag(&format!("<tool_call><function={}>", t.name), content(t.schema(), "qwen_xml"), "</function></tool_call>")
    });
    match choice {
        Choice::Forced => tags.next().unwrap_or(Value::Null),
        _ => triggered(
            &["<tool_call>"],
            tags.collect(),
            choice == Choice::Required,
            &["<think>", "</think>", "</tool_call>", "<function="],
        ),
    }
}
