//! Poolside Laguna (`poolside_v1`, vLLM's `PoolsideV1ReasoningParser` and
//! `PoolsideV1ToolParser`): DeepSeek-V3's `<think>` switch, with
//! `is_reasoning_end` looking back only to the current `<assistant>` turn,
//! so a `</think>` in the conversation history does not end this turn's
//! reasoning; GLM-style `<tool_call>` calls (`tools`).

mod tools;

use std::sync::Arc;

use super::deepseek::think_ids;
use crate::model::Model;
use crate::parse::family::{token_ids, Family, KeepSpecial, ReasoningFamily, ToolFamily, ToolParserFactory};
use crate::parse::think::{Switch, ThinkFamily};
use crate::parse::{ChatContext, Registry, ToolParser};

static REASONING: ReasoningFamily = Family {
    names: &["poolside_v1"],
    needs: "<assistant>, <think>, </think> as single tokens",
    load: |model| {
        // vLLM checks `<assistant>` at startup; the think markers only when a
        // request turns thinking on (a model without them fails then).
        let [assistant] = token_ids(model, ["<assistant>"], "Tokenizer must contain '<assistant>' token")?;
        let mut family = ThinkFamily::think(think_ids(model)?, Switch::OnRequest);
        family.turn_start = Some(assistant);
        // vLLM's stream reads the prompt: with thinking off (the default)
        // it ends in `<assistant></think>`, and the output starts in content.
        family.stream_follows_vllm = true;
        Ok(Arc::new(family))
    },
};

struct Tools;

impl ToolParserFactory for Tools {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(tools::PoolsideTools::default())
    }

    /// `adjust_request` keeps special tokens whenever tools are offered and
    /// not switched off.
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }

    /// `supports_required_and_named = False`: forced choices are read in
    /// the model's own markup.
    fn native_forced_choices(&self) -> bool {
        true
    }
}

static TOOLS: ToolFamily = Family { names: &["poolside_v1"], needs: "", load: |_| Ok(Arc::new(Tools)) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}
