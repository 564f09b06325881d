//! Poolside Laguna (`poolside_v1`, vLLM's `PoolsideV1ReasoningParser`):
//! DeepSeek-V3's `<think>` switch, with `is_reasoning_end` looking back only
//! to the current `<assistant>` turn, so a `</think>` in the conversation
//! history does not end this turn's reasoning.

use std::sync::Arc;

use super::deepseek::think_ids;
use crate::parse::family::{token_ids, Family, ReasoningFamily};
use crate::parse::think::{Switch, ThinkFamily};
use crate::parse::Registry;

static REASONING: ReasoningFamily = Family {
    names: &["poolside_v1"],
    needs: "<assistant>, <think>, </think> as single tokens",
    load: |model| {
        // vLLM checks `<assistant>` at startup; the think markers only when a
        // request turns thinking on (a model without them fails then).
        let [assistant] = token_ids(model, ["<assistant>"], "Tokenizer must contain '<assistant>' token")?;
        let mut family = ThinkFamily::think(think_ids(model)?, Switch::OnRequest);
        family.turn_start = Some(assistant);
        Ok(Arc::new(family))
    },
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
}
