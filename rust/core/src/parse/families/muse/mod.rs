//! Muse Spark and Muse Glimmer (`reasoning/muse_*`, `tool_parsers/muse_*`):
//! channel-scoped messages (`to=<recipient><|message|>...<|eom|>`) with ATEM
//! tool calls (`<atem:invoke name=...>`). `musespark1x` is vLLM's alias of
//! `muse`; `muse_glimmer` keeps Glimmer's original channel rules.

mod reasoning;
mod tools;

use std::sync::Arc;


use crate::model::Model;
use crate::parse::family::{Family, KeepSpecial, ReasoningFamily, ToolFamily, ToolParserFactory};
use crate::parse::{ChatContext, Registry, ToolParser};

struct Tools(&'static tools::Profile);

impl ToolParserFactory for Tools {
    fn create(&self, ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(tools::MuseTools::new(self.0, ctx))
    }

    /// `adjust_request` keeps the channel framing in the text.
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }

    /// Forced choices are read in the model's own markup.
    fn native_forced_choices(&self) -> bool {
        true
    }
}

static SPARK_REASONING: ReasoningFamily = Family {
    names: &["muse", "musespark1x"],
    needs: "",
    load: |_| Ok(Arc::new(reasoning::Factory { glimmer: false })),
};

static GLIMMER_REASONING: ReasoningFamily =
    Family { names: &["muse_glimmer"], needs: "", load: |_| Ok(Arc::new(reasoning::Factory { glimmer: true })) };

static SPARK_TOOLS: ToolFamily =
    Family { names: &["muse", "musespark1x"], needs: "", load: |_| Ok(Arc::new(Tools(&tools::SPARK))) };

static GLIMMER_TOOLS: ToolFamily =
    Family { names: &["muse_glimmer"], needs: "", load: |_| Ok(Arc::new(Tools(&tools::GLIMMER))) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&SPARK_REASONING);
    registry.reasoning_family(&GLIMMER_REASONING);
    registry.tool_family(&SPARK_TOOLS);
    registry.tool_family(&GLIMMER_TOOLS);
}
