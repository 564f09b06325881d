//! DeepSeek-V3.2 (`deepseek_v32`): DSML calls in a `function_calls` block;
//! reasoning is a separate parser's (`deepseek_v3`).

use std::sync::{Arc, OnceLock};

use super::{arg_syntax, convert, tag_for, tool_terminals, tool_transitions, unwrap_wrapper, Dialect};
use crate::parse::engine::{ArgSyntax, EngineConfig, EngineToolFamily, EventType as E, State as S};
use crate::parse::family::{Family, ToolFamily};
use crate::parse::Registry;
use crate::structured::format::TagModel;
use crate::structured::tool_tags::StrictLevel;

pub(super) static DIALECT: Dialect = Dialect {
    tool_start: &["<｜DSML｜function_calls>"],
    tool_end: "</｜DSML｜function_calls>",
    invoke_prefix: "<｜DSML｜invoke name=\"",
    invoke_end: "</｜DSML｜invoke>",
    param_start: "<｜DSML｜parameter",
    param_close: "</｜DSML｜parameter>",
    xml_style: "deepseek_xml",
};

fn build() -> EngineConfig {
    EngineConfig {
        name: "deepseek_v32",
        terminals: tool_terminals(&DIALECT),
        // Matched by id only where the vocabulary has them as single tokens.
        token_id_terminals: vec![("TOOL_START", DIALECT.tool_start[0]), ("TOOL_END", DIALECT.tool_end)],
        transitions: tool_transitions(),
        content_events: vec![
            (S::Content, E::TextChunk),
            (S::ToolName, E::ToolName),
            (S::ToolArgs, E::ArgValueChunk),
        ],
        initial_state: S::Content,
        wait_for_reasoning: Some(false),
        tool_args_json: false,
        tool_call_body_array: false,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: Vec::new(),
        strip_trailing_reasoning_whitespace: true,
        arg_syntax: Some(&ARGS),
        validate_tool_names: false,
        strip_tool_names: false,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: false,
        stream_text_after_calls: true,
    }
}

pub fn config() -> &'static EngineConfig {
    static CONFIG: OnceLock<EngineConfig> = OnceLock::new();
    CONFIG.get_or_init(build)
}

static ARGS: ArgSyntax = arg_syntax(|raw, partial, props| Some(unwrap_wrapper(convert(&DIALECT, raw, partial), props)));

// Registration: the `deepseek_v32` tool parser and xgrammar's
// `deepseek_v3_2` structural tag.

static TOOLS: ToolFamily = Family {
    names: &["deepseek_v32"],
    needs: "",
    load: |_| Ok(Arc::new(EngineToolFamily { config: |_| config(), tag_model: Some(&TAG), tool_header: None })),
};

static TAG: TagModel =
    TagModel { name: "deepseek_v3_2", build: |tools, choice| tag_for(&DIALECT, tools, choice), default_level: StrictLevel::Auto };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}
