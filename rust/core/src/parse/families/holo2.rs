//! Holo2 (H Company; vLLM's `DeepSeekV3ReasoningWithThinkingParser`):
//! DeepSeek-V3's `<think>` switch, but thinking is on unless the request's
//! `thinking` / `enable_thinking` template kwargs turn it off.
//!
//! Its stream follows vLLM's (keeps a `<think>` that opens a longer first
//! delta, reads the prompt): batch drops that marker, and once the stream
//! has sent the blank line between `</think>` and a call as content, as
//! vLLM's does, batch's answer (which drops it) is out of reach.

use std::sync::Arc;

use super::deepseek::{think_ids, THINK_NEEDS};
use crate::parse::family::{Family, ReasoningFamily};
use crate::parse::think::{Switch, ThinkFamily};
use crate::parse::Registry;

static REASONING: ReasoningFamily = Family {
    names: &["holo2"],
    needs: THINK_NEEDS,
    load: |model| {
        let mut family = ThinkFamily::think(think_ids(model)?, Switch::DefaultOn);
        family.stream_follows_vllm = true;
        Ok(Arc::new(family))
    },
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
}
