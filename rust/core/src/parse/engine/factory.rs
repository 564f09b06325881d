//! Engine families as factories: a family on the declarative engine gives
//! the config a request selects and a few adapter settings, as values.

use std::sync::Arc;

use super::tools::HeaderParser;
use super::{EngineConfig, EngineReasoning, EngineTools};
use crate::model::Model;
use crate::parse::family::{KeepSpecial, ReasoningParserFactory, ToolParserFactory};
use crate::parse::{ChatContext, ReasoningParser, ToolParser};
use crate::structured::format::TagModel;

/// An engine family's tool side (`ParserEngineToolAdapter`).
pub struct EngineToolFamily {
    /// The config for a request (`chat_template_kwargs` may switch thinking).
    pub config: fn(&ChatContext) -> &'static EngineConfig,
    pub tag_model: Option<&'static TagModel>,
    /// The call header carries the call's own id (`EngineTools::tool_header`).
    pub tool_header: Option<HeaderParser>,
}

impl ToolParserFactory for EngineToolFamily {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, with_reasoning: bool) -> Box<dyn ToolParser> {
        let mut tools = EngineTools::new((self.config)(ctx), model.clone(), ctx.tools.clone(), !with_reasoning);
        // Without a tag model, forced choices are answered as JSON.
        tools.supports_required_and_named = self.tag_model.is_none();
        tools.tool_header = self.tool_header;
        Box::new(tools)
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }

    fn tag_model(&self) -> Option<&'static TagModel> {
        self.tag_model
    }
}

/// An engine family's reasoning side (`ParserEngineReasoningAdapter`): the
/// adapter a request gets. Engine reasoning parsers keep special tokens.
pub struct EngineReasoningFamily(pub fn(&ChatContext, &Arc<Model>) -> EngineReasoning);

impl ReasoningParserFactory for EngineReasoningFamily {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new((self.0)(ctx, model))
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }
}

/// An engine family whose streams follow vLLM's where vLLM's stream and
/// batch disagree (`ReasoningParserFactory::stream_follows_vllm`).
pub struct VllmStreamReasoningFamily(pub fn(&ChatContext, &Arc<Model>) -> EngineReasoning);

impl ReasoningParserFactory for VllmStreamReasoningFamily {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let mut reasoning = (self.0)(ctx, model);
        // vLLM's cut, which loses a call that ended reasoning in the chunk
        // that also closes the think block.
        reasoning.content_ids_after_last_end = true;
        Box::new(reasoning)
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }

    fn stream_follows_vllm(&self) -> bool {
        true
    }
}
