//! Step-3.5 / Step-3.7 (`vllm/parser/step3p5.py`): the Qwen3 grammar
//! (`<think>` reasoning, `<tool_call>` XML calls) with two changes. The
//! chat template always prefills `<think>\n`, so thinking is always on
//! (`enable_thinking` is ignored), and the model closes reasoning with
//! `\n</think>\n`, so trailing reasoning whitespace is stripped.

use std::sync::OnceLock;

use super::engine::EngineConfig;

/// The one Step-3.5 config (no thinking switch).
pub fn config() -> &'static EngineConfig {
    static CONFIG: OnceLock<EngineConfig> = OnceLock::new();
    CONFIG.get_or_init(|| EngineConfig {
        name: "step3p5",
        strip_trailing_reasoning_whitespace: true,
        ..super::qwen3::qwen3_grammar(true)
    })
}

#[cfg(test)]
#[path = "step3p5_tests.rs"]
mod tests;
