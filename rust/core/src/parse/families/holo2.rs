//! Holo2 (H Company; vLLM's `DeepSeekV3ReasoningWithThinkingParser`):
//! DeepSeek-V3's `<think>` switch, but thinking is on unless the request's
//! `thinking` / `enable_thinking` template kwargs turn it off.

use std::sync::Arc;

use super::deepseek::{think_ids, THINK_NEEDS};
use crate::parse::family::{Family, ReasoningFamily};
use crate::parse::think::{Switch, ThinkFamily};
use crate::parse::Registry;

static REASONING: ReasoningFamily = Family {
    names: &["holo2"],
    needs: THINK_NEEDS,
    load: |model| Ok(Arc::new(ThinkFamily::think(think_ids(model)?, Switch::DefaultOn))),
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
}
