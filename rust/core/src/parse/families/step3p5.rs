//! Step-3.5 / Step-3.7 (`vllm/parser/step3p5.py`): the Qwen3 grammar
//! (`<think>` reasoning, `<tool_call>` XML calls) with two changes. The
//! chat template always prefills `<think>\n`, so thinking is always on
//! (`enable_thinking` is ignored), and the model closes reasoning with
//! `\n</think>\n`, so trailing reasoning whitespace is stripped.
//!
//! Step-5 (`vllm/tool_parsers/step5_tool_parser.py`) has only a tool parser
//! of its own (its reasoning is `deepseek_r1`'s): the Qwen3 grammar without
//! thinking, keeping the content whitespace around calls. Its stream sends
//! the text between and after calls as vLLM's does: it has already sent the
//! whitespace before a call that batch strips.

use std::sync::{Arc, OnceLock};

use super::qwen3::TAG;
use crate::parse::engine::{EngineReasoning, EngineReasoningFamily, EngineToolFamily};
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::parse::Registry;
use crate::parse::engine::EngineConfig;

/// The one Step-3.5 config (no thinking switch).
pub fn config() -> &'static EngineConfig {
    static CONFIG: OnceLock<EngineConfig> = OnceLock::new();
    CONFIG.get_or_init(|| EngineConfig {
        name: "step3p5",
        strip_trailing_reasoning_whitespace: true,
        ..super::qwen3::qwen3_grammar(true)
    })
}

/// The Step-5 tool parser's config.
pub fn step5_tool_config() -> &'static EngineConfig {
    static CONFIG: OnceLock<EngineConfig> = OnceLock::new();
    CONFIG.get_or_init(|| EngineConfig {
        name: "step5",
        // `qwen3_config(thinking=False)` names no turn boundaries.
        turn_boundary_tokens: Vec::new(),
        drop_whitespace_only_content_before_tools: false,
        strip_content_whitespace_with_tools: false,
        ..super::qwen3::qwen3_grammar(false)
    })
}

// Registration: `step3p5` reasoning and tool calls, and the `step5` tool
// parser (its reasoning is `deepseek_r1`'s). Both name Qwen3-Coder's tag.

static REASONING: ReasoningFamily = Family {
    names: &["step3p5"],
    needs: "",
    // Always thinking: no passthrough whatever `enable_thinking` says.
    load: |_| Ok(Arc::new(EngineReasoningFamily(|_, model| EngineReasoning::new(config(), model.clone())))),
};

static TOOLS: ToolFamily = Family {
    names: &["step3p5"],
    needs: "",
    load: |_| Ok(Arc::new(EngineToolFamily { config: |_| config(), tag_model: Some(&TAG), tool_header: None })),
};

static STEP5_TOOLS: ToolFamily = Family {
    names: &["step5"],
    needs: "",
    load: |_| {
        Ok(Arc::new(EngineToolFamily { config: |_| step5_tool_config(), tag_model: Some(&TAG), tool_header: None }))
    },
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tool_family(&STEP5_TOOLS);
}

#[cfg(test)]
#[path = "step3p5_tests.rs"]
mod tests;
