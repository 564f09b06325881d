//! Seed-OSS (`vllm/parser/seed_oss.py`): the Qwen3 grammar under `seed:`
//! markers, reasoning and tool calls. It has no structural-tag model, so
//! forced tool choices are answered as JSON.

use std::sync::Arc;

use super::qwen3::{build, Markers};
use crate::model::Model;
use crate::parse::engine::{ByThinking, EngineConfig, EngineReasoning, EngineReasoningFamily, EngineToolFamily};
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::parse::{ChatContext, Registry};

/// The wrapper strings.
const SEED_OSS: Markers = Markers {
    name: "seed_oss",
    think_start: "<seed:think>",
    think_end: "</seed:think>",
    tool_start: "<seed:tool_call>",
    tool_end: "</seed:tool_call>",
    turn_boundaries: ["<seed:bos>", "<seed:eos>"],
};

/// The config, thinking on or off (`enable_thinking`).
pub fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| build(&SEED_OSS, thinking))
}

fn reasoning(ctx: &ChatContext, model: &Arc<Model>) -> EngineReasoning {
    EngineReasoning::switched(config, ctx.enable_thinking(), model)
}

static REASONING: ReasoningFamily =
    Family { names: &["seed_oss"], needs: "", load: |_| Ok(Arc::new(EngineReasoningFamily(reasoning))) };

static TOOLS: ToolFamily = Family {
    names: &["seed_oss"],
    needs: "",
    load: |_| {
        let config = |ctx: &ChatContext| config(ctx.enable_thinking());
        Ok(Arc::new(EngineToolFamily { config, tag_model: None, tool_header: None }))
    },
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}
