//! Inkling (`inkling`, tool and reasoning parser in one engine, vLLM's
//! `parser/inkling.py`): typed blocks the model writes after the prompt's
//! `<|message_model|>`,
//!
//! ```text
//! <|content_thinking|>reasoning<|end_message|>
//! <|message_model|><|content_text|>visible text<|end_message|>
//! <|message_model|>NAME<|content_invoke_tool_json|>{"name":"f","args":{...}}<|end_message|>
//! ```
//!
//! ending with `<|content_model_end_sampling|>`. Text between the model
//! marker and a block kind is a header (hidden; shown as content when no
//! kind follows). A call's name comes from its JSON and its arguments are
//! the `args` object's text as written. Terminals are read in the text, and
//! a stream starts where the prompt's tail leaves the format.

use std::sync::Arc;

use crate::model::Model;
use crate::parse::engine::json_member::member_object;
use crate::parse::engine::{
    tr, ArgSyntax, EngineConfig, EngineReasoning, EngineTools, EventType as E, State as S,
};
use crate::parse::family::{Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Snapshot, Texts, ToolParser};
use crate::wire::response::Delta;

const MESSAGE_MODEL: &str = "<|message_model|>";
const CONTENT_TEXT: &str = "<|content_text|>";
const CONTENT_THINKING: &str = "<|content_thinking|>";
const CONTENT_INVOKE_TOOL_JSON: &str = "<|content_invoke_tool_json|>";
const CONTENT_INVOKE_TOOL_TEXT: &str = "<|content_invoke_tool_text|>";
const CONTENT_TOOL_ERROR: &str = "<|content_tool_error|>";
const CONTENT_MODEL_END_SAMPLING: &str = "<|content_model_end_sampling|>";
const END_MESSAGE: &str = "<|end_message|>";
/// `INKLING_SPECIAL_TOKENS`.
const SPECIALS: [&str; 8] = [
    MESSAGE_MODEL,
    CONTENT_TEXT,
    CONTENT_THINKING,
    CONTENT_INVOKE_TOOL_JSON,
    CONTENT_INVOKE_TOOL_TEXT,
    CONTENT_TOOL_ERROR,
    CONTENT_MODEL_END_SAMPLING,
    END_MESSAGE,
];

fn config() -> &'static EngineConfig {
    static CONFIG: std::sync::OnceLock<EngineConfig> = std::sync::OnceLock::new();
    CONFIG.get_or_init(build)
}

fn build() -> EngineConfig {
    // `<|end_message|>` ends every block kind; it is THINK_END because the
    // engine keys its reasoning plumbing on that name.
    let terminals = vec![
        ("MSG_MODEL", vec![MESSAGE_MODEL]),
        ("TEXT_START", vec![CONTENT_TEXT]),
        ("THINK_START", vec![CONTENT_THINKING]),
        ("THINK_END", vec![END_MESSAGE]),
        ("END_SAMPLING", vec![CONTENT_MODEL_END_SAMPLING]),
        ("TOOL_START", vec![CONTENT_INVOKE_TOOL_JSON]),
        ("TOOL_TEXT", vec![CONTENT_INVOKE_TOOL_TEXT]),
        ("TOOL_ERROR", vec![CONTENT_TOOL_ERROR]),
    ];
    let mut transitions = Vec::new();
    // Between blocks and at a header alike: a visible block's opener proves
    // reasoning is over; a tool block opens a call.
    for from in [S::Content, S::MessageHeader] {
        transitions.extend([
            ((from, "MSG_MODEL"), tr(S::MessageHeader, &[])),
            ((from, "TEXT_START"), tr(S::Content, &[E::ReasoningEnd])),
            ((from, "THINK_START"), tr(S::Reasoning, &[E::ReasoningStart])),
            ((from, "TOOL_START"), tr(S::ToolArgs, &[E::ReasoningEnd, E::ToolCallStart])),
            ((from, "TOOL_TEXT"), tr(S::Content, &[E::ReasoningEnd])),
            ((from, "TOOL_ERROR"), tr(S::Content, &[E::ReasoningEnd])),
        ]);
    }
    transitions.extend([
        ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
        ((S::Reasoning, "TOOL_START"), tr(S::ToolArgs, &[E::ReasoningEnd, E::ToolCallStart])),
    ]);
    for end in ["THINK_END", "END_SAMPLING"] {
        transitions.extend([
            ((S::Content, end), tr(S::Content, &[])),
            // A thinking block's end defers the reasoning's end to the next
            // opener, so the header between them stays hidden.
            ((S::Reasoning, end), tr(S::Content, if end == "THINK_END" { &[] } else { &[E::ReasoningEnd] })),
            ((S::ToolArgs, end), tr(S::Content, &[E::ToolCallEnd])),
            // A header no block kind follows is content after all.
            ((S::MessageHeader, end), tr(S::Content, &[E::TextChunk])),
        ]);
    }
    EngineConfig {
        name: "inkling",
        terminals,
        // The block markers are matched in the text: a delegating reasoning
        // pass may hand the tool pass text whose ids lack the opener.
        token_id_terminals: Vec::new(),
        transitions,
        content_events: EngineConfig::default_content_events(),
        initial_state: S::MessageHeader,
        wait_for_reasoning: Some(true),
        tool_args_json: true,
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

/// `_inkling_arg_converter`: the `args` object's text as written.
fn convert(raw: &str, partial: bool) -> Option<String> {
    match member_object(raw, "args") {
        Ok(Some(span)) => Some(span.to_string()),
        Ok(None) => Some(if partial { String::new() } else { "{}".to_string() }),
        Err(_) => None,
    }
}

static ARGS: ArgSyntax = ArgSyntax {
    convert: |raw, partial, _| convert(raw, partial),
    stream_deltas: true,
    structural_chars: None,
    open_value: |_| None,
    extend_value: |_, _| None,
};

/// The marker ids the prompt scans read.
#[derive(Clone, Copy, Default)]
struct MarkerIds {
    thinking: Option<i64>,
    text: Option<i64>,
    model: Option<i64>,
    end_sampling: Option<i64>,
}

impl MarkerIds {
    fn of(model: &Model) -> MarkerIds {
        let id = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
        MarkerIds {
            thinking: id(CONTENT_THINKING),
            text: id(CONTENT_TEXT),
            model: id(MESSAGE_MODEL),
            end_sampling: id(CONTENT_MODEL_END_SAMPLING),
        }
    }
}

struct InklingReasoning {
    engine: EngineReasoning,
    ids: MarkerIds,
    specials: Vec<i64>,
}

impl ReasoningParser for InklingReasoning {
    fn drops_token(&self, token: &str) -> bool {
        self.engine.drops_token(token)
    }

    fn extract_reasoning(&self, text: &str, ctx: &ChatContext) -> (Option<String>, Option<String>) {
        self.engine.extract_reasoning(text, ctx)
    }

    /// The last thinking, text, model or end-of-sampling marker decides:
    /// reasoning is over after a text block or the end of sampling.
    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        let m = self.ids;
        for &id in ids.iter().rev() {
            if Some(id) == m.thinking || Some(id) == m.model {
                return false;
            }
            if Some(id) == m.text || Some(id) == m.end_sampling {
                return true;
            }
        }
        false
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        self.engine.extract_content_ids(ids)
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let delta = self.engine.raw_delta(t, ids);
        self.engine.strip_trailing_reasoning(delta)
    }

    /// `adjust_initial_state_from_prompt`: the stream continues inside a
    /// thinking block, a text block or a model header, whichever marker
    /// the prompt's tail ends in (before any other Inkling marker).
    fn adjust_initial_state_from_prompt(&mut self, prompt: &[i64]) {
        let m = self.ids;
        for &id in prompt.iter().rev() {
            let state = if Some(id) == m.thinking {
                S::Reasoning
            } else if Some(id) == m.text {
                S::Content
            } else if Some(id) == m.model {
                S::MessageHeader
            } else if self.specials.contains(&id) {
                return;
            } else {
                continue;
            };
            self.engine.start_in(state);
            return;
        }
    }

    fn set_prompt_token_ids(&mut self, prompt: &[i64]) {
        self.engine.set_prompt_token_ids(prompt);
    }

    fn engine_based(&self) -> bool {
        true
    }

    fn engine_confirmed_end(&self) -> bool {
        self.engine.engine_confirmed_end()
    }

    fn end_marker_dropped_after_end(&self) -> Option<(i64, &str)> {
        self.engine.end_marker_dropped_after_end()
    }

    fn finish_streaming(&mut self) -> Option<Delta> {
        self.engine.raw_finish()
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        self.engine.snapshot()
    }
}

struct Reasoning;

impl ReasoningParserFactory for Reasoning {
    fn create(&self, _ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let specials = SPECIALS.iter().filter_map(|t| model.tokenizer.token_to_id(t)).map(i64::from).collect();
        Box::new(InklingReasoning {
            engine: EngineReasoning::new(config(), model.clone()),
            ids: MarkerIds::of(model),
            specials,
        })
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }

    /// Streams start where the prompt's tail leaves the format, as vLLM's
    /// do (batch always starts at the model's header).
    fn stream_follows_vllm(&self) -> bool {
        true
    }
}

struct Tools;

impl ToolParserFactory for Tools {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, with_reasoning: bool) -> Box<dyn ToolParser> {
        let mut tools = EngineTools::new(config(), model.clone(), ctx.tools.clone(), !with_reasoning);
        // `_extract_args_value`: the wrapper's `args` first.
        tools.args_keys = &["args", "arguments", "parameters"];
        tools.batch_text_after_calls = true;
        Box::new(tools)
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }

    /// No structural tag and no guided decoding: forced choices render and
    /// parse as `auto`.
    fn native_forced_choices(&self) -> bool {
        true
    }
}

static REASONING: ReasoningFamily = Family { names: &["inkling"], needs: "", load: |_| Ok(Arc::new(Reasoning)) };
static TOOLS: ToolFamily = Family { names: &["inkling"], needs: "", load: |_| Ok(Arc::new(Tools)) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}
