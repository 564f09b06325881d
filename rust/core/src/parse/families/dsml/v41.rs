//! DeepSeek-V4.1 (`deepseek_v41`, tool and reasoning parser in one engine):
//! V4's engine with the DSML names spelled with a leading space
//! (`<｜DSML｜ calls>`, `<｜DSML｜ invoke name="…">`, `<｜DSML｜ parameter …>`)
//! and one block opener (vLLM's `parser/deepseek_v41.py`).

use std::sync::Arc;

use super::v4::{build, reasoning_with, thinking};
use super::{arg_syntax, convert, tag_for, unwrap_wrapper, Dialect};
use crate::model::Model;
use crate::parse::engine::{ArgSyntax, ByThinking, EngineConfig, EngineReasoning, EngineReasoningFamily, EngineToolFamily};
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::parse::{ChatContext, Registry};
use crate::structured::format::TagModel;
use crate::structured::tool_tags::StrictLevel;

static DIALECT: Dialect = Dialect {
    tool_start: &["<｜DSML｜ calls>"],
    tool_end: "</｜DSML｜ calls>",
    invoke_prefix: "<｜DSML｜ invoke name=\"",
    invoke_end: "</｜DSML｜ invoke>",
    param_start: "<｜DSML｜ parameter",
    param_close: "</｜DSML｜ parameter>",
    xml_style: "deepseek_v4_1_xml",
};

static ARGS: ArgSyntax = arg_syntax(|raw, partial, props| Some(unwrap_wrapper(convert(&DIALECT, raw, partial), props)));

pub fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| build("deepseek_v41", &DIALECT, &ARGS, thinking))
}

// Registration: `deepseek_v41` as reasoning and tool parser, and xgrammar's
// `deepseek_v4_1` structural tag.

fn reasoning(ctx: &ChatContext, model: &Arc<Model>) -> EngineReasoning {
    reasoning_with(config, ctx, model)
}

static REASONING: ReasoningFamily =
    Family { names: &["deepseek_v41"], needs: "", load: |_| Ok(Arc::new(EngineReasoningFamily(reasoning))) };

static TOOLS: ToolFamily = Family {
    names: &["deepseek_v41"],
    needs: "",
    load: |_| {
        let config = |ctx: &ChatContext| config(thinking(ctx));
        Ok(Arc::new(EngineToolFamily { config, tag_model: Some(&TAG), tool_header: None }))
    },
};

static TAG: TagModel = TagModel {
    name: "deepseek_v4_1",
    build: |tools, choice| tag_for(&DIALECT, tools, choice),
    default_level: StrictLevel::Auto,
};

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}
