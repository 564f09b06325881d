//! Meituan LongCat-Flash (`longcat`, vLLM's `LongcatFlashToolParser`):
//! Hermes' JSON calls and parser between `<longcat_tool_call>` markers, with
//! vLLM's `longcat` structural tag (Hermes' shape under those markers).

use std::sync::Arc;

use super::hermes::{tag_for, Hermes, Markers};
use crate::parse::family::{Family, ToolFamily};
use crate::parse::Registry;
use crate::structured::format::TagModel;
use crate::structured::tool_tags::StrictLevel;

const LONGCAT: Markers = Markers { start: "<longcat_tool_call>", end: "</longcat_tool_call>" };

static TAG: TagModel =
    TagModel { name: "longcat", build: |tools, choice| tag_for(&LONGCAT, tools, choice), default_level: StrictLevel::Auto };

static TOOLS: ToolFamily =
    Family { names: &["longcat"], needs: "", load: |_| Ok(Arc::new(Hermes { markers: &LONGCAT, tag: &TAG })) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}
