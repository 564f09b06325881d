//! Ling 3 (`vllm/parser/ling3.py`): GLM-4.7's grammar, arguments and
//! `glm_4_7` structural tag under the name `ling3`. Its tool parser leaves
//! the default strict level at `auto` (GLM-4.7's is `function`).

use std::sync::Arc;

use super::glm47;
use crate::parse::engine::VllmStreamReasoningFamily;
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::parse::Registry;
use crate::structured::format::TagModel;
use crate::structured::tool_tags::StrictLevel;

static REASONING: ReasoningFamily =
    Family { names: &["ling3"], needs: "", load: |_| Ok(Arc::new(VllmStreamReasoningFamily(glm47::reasoning))) };

/// GLM-4.7's tag model at Ling 3's strict level; vLLM knows it as
/// `glm_4_7`, so only this family uses it (the registry keeps GLM's).
static TAG: TagModel = TagModel { name: "glm_4_7", build: glm47::tag_for, default_level: StrictLevel::Auto };

static TOOLS: ToolFamily = Family { names: &["ling3"], needs: "", load: |_| Ok(Arc::new(glm47::tools(&TAG))) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}
