//! MiniMax-M3 (`vllm/parser/minimax_m3.py`, `reasoning/minimax_m3_*`):
//! every tag of a call carries the `]<]minimax[>[` namespace, parameters
//! are nested elements converted by the tool's schema, and reasoning sits
//! between `<mm:think>` markers that may be split into several tokens.

mod args;
mod reasoning;

use std::sync::Arc;


use crate::model::Model;
use crate::parse::engine::{tr, ArgSyntax, EngineConfig, EngineTools, EventType as E, State as S};
use crate::parse::family::{Family, KeepSpecial, ReasoningFamily, ToolFamily, ToolParserFactory};
use crate::parse::{ChatContext, Registry, ToolParser};

/// The engine's terminals: tags behind the namespace (`args::NAMESPACE`).
const TOOL_START: &str = "]<]minimax[>[<tool_call>";
const TOOL_END: &str = "]<]minimax[>[</tool_call>";
const INVOKE_DQ: &str = "]<]minimax[>[<invoke name=\"";
const INVOKE_SQ: &str = "]<]minimax[>[<invoke name='";
const INVOKE_UNQUOTED: &str = "]<]minimax[>[<invoke name=";
const INVOKE_END: &str = "]<]minimax[>[</invoke>";

static ARGS: ArgSyntax = ArgSyntax {
    convert: |raw, _partial, properties| Some(args::convert(raw, properties)),
    // Arguments are sent once the whole `<invoke>` is parsed.
    stream_deltas: false,
    structural_chars: None,
    open_value: |_| None,
    extend_value: |_, _| None,
};

/// `minimax_m3_config`.
fn config() -> &'static EngineConfig {
    static CONFIG: std::sync::OnceLock<EngineConfig> = std::sync::OnceLock::new();
    CONFIG.get_or_init(|| {
        let invokes = ["INVOKE_PREFIX_DQ", "INVOKE_PREFIX_SQ", "INVOKE_PREFIX_UNQUOTED"];
        let mut transitions = vec![((S::Content, "TOOL_START"), tr(S::ToolPreamble, &[]))];
        for state in [S::ToolPreamble, S::ToolBetween] {
            transitions.extend(invokes.map(|t| ((state, t), tr(S::ToolName, &[E::ToolCallStart]))));
        }
        for t in ["NAME_END_DQ", "NAME_END_SQ", "NAME_END_UNQUOTED"] {
            transitions.push(((S::ToolName, t), tr(S::ToolArgs, &[])));
        }
        transitions.extend([
            ((S::ToolArgs, "INVOKE_END"), tr(S::ToolBetween, &[E::ToolCallEnd])),
            ((S::ToolPreamble, "TOOL_END"), tr(S::ToolBetween, &[])),
            ((S::ToolBetween, "TOOL_END"), tr(S::ToolBetween, &[])),
        ]);
        EngineConfig {
            name: "minimax_m3",
            terminals: vec![
                ("TOOL_START", vec![TOOL_START]),
                ("TOOL_END", vec![TOOL_END]),
                ("INVOKE_PREFIX_DQ", vec![INVOKE_DQ]),
                ("INVOKE_PREFIX_SQ", vec![INVOKE_SQ]),
                ("INVOKE_PREFIX_UNQUOTED", vec![INVOKE_UNQUOTED]),
                ("INVOKE_END", vec![INVOKE_END]),
                ("NAME_END_DQ", vec!["\">"]),
                ("NAME_END_SQ", vec!["'>"]),
                ("NAME_END_UNQUOTED", vec![">"]),
            ],
            token_id_terminals: Vec::new(),
            transitions,
            content_events: EngineConfig::default_content_events(),
            initial_state: S::Content,
            wait_for_reasoning: None,
            tool_args_json: false,
            tool_call_body_array: false,
            preserve_tokens: Vec::new(),
            turn_boundary_tokens: Vec::new(),
            strip_trailing_reasoning_whitespace: true,
            arg_syntax: Some(&ARGS),
            validate_tool_names: false,
            // Batch strips a call's name; so do streams here, where vLLM's
            // sends it as written (` get_weather `).
            strip_tool_names: true,
            drop_whitespace_only_content_before_tools: true,
            strip_content_whitespace_with_tools: false,
            stream_text_after_calls: false,
        }
    })
}

/// `MinimaxM3ToolParser`: the engine adapter with vLLM's base request
/// handling switched off (`adjust_request` returns the request as is), and
/// forced tool choices read in the model's own markup.
struct Tools;

impl ToolParserFactory for Tools {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, with_reasoning: bool) -> Box<dyn ToolParser> {
        let mut tools = EngineTools::new(config(), model.clone(), ctx.tools.clone(), !with_reasoning);
        tools.supports_required_and_named = false;
        Box::new(tools)
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Never
    }

    /// Forced choices are read in the model's own markup.
    fn native_forced_choices(&self) -> bool {
        true
    }
}

static TOOLS: ToolFamily = Family { names: &["minimax_m3"], needs: "", load: |_| Ok(Arc::new(Tools)) };

static REASONING: ReasoningFamily = Family {
    names: &["minimax_m3"],
    needs: "<mm:think>, </mm:think> in the vocabulary",
    load: |model| Ok(Arc::new(reasoning::Factory::load(model)?)),
};

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.reasoning_family(&REASONING);
}
