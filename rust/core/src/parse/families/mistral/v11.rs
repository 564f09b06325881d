//! Mistral v11+ (`vllm/parser/mistral.py` `mistral_config`) on vLLM's
//! declarative engine: `[THINK]...[/THINK]` reasoning (special tokens from
//! v13; `<think>` text on a v11 tekken tokenizer; none otherwise) and
//! `[TOOL_CALLS]name[ARGS]{json}` calls, or `name{json}` where the opening
//! brace ends the name. A call has no end marker: batch keeps the first
//! JSON value of its arguments and drops what follows.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::{guided_schema, mistral_id, TOOL_CALLS};
use crate::model::Model;
use crate::parse::engine::{tr, EngineConfig, EngineReasoning, EngineTools, EventType as E, State as S};
use crate::parse::family::{KeepSpecial, ToolParserFactory};
use crate::parse::partial_json;
use crate::parse::{ChatContext, ToolParser};

pub const ARGS: &str = "[ARGS]";
pub const THINK_START: &str = "[THINK]";
pub const THINK_END: &str = "[/THINK]";

/// How the tokenizer writes reasoning (`MistralParser._reasoning_encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    /// `[THINK]` is in the vocabulary (v13+).
    SpecialToken,
    /// A tekken tokenizer that supports grammars (v11+) without `[THINK]`.
    Text,
    /// Reasoning is not parsed.
    None,
}

impl Reasoning {
    pub fn of(model: &Model) -> Reasoning {
        if model.tokenizer.token_to_id(THINK_START).is_some() {
            Reasoning::SpecialToken
        } else if model.tekken().is_some_and(|t| t.version >= 11) {
            Reasoning::Text
        } else {
            Reasoning::None
        }
    }
}

fn build(reasoning: Reasoning) -> EngineConfig {
    let think = match reasoning {
        Reasoning::SpecialToken => Some((THINK_START, THINK_END)),
        Reasoning::Text => Some(("<think>", "</think>")),
        Reasoning::None => None,
    };
    let mut terminals: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    let mut token_ids: Vec<(&'static str, &'static str)> = Vec::new();
    let mut transitions = Vec::new();
    if let Some((start, end)) = think {
        terminals.extend([("THINK_START", vec![start]), ("THINK_END", vec![end])]);
        // Text markers are never matched by id.
        if reasoning == Reasoning::SpecialToken {
            token_ids.extend([("THINK_START", start), ("THINK_END", end)]);
        }
        transitions.extend([
            ((S::Content, "THINK_START"), tr(S::Reasoning, &[])),
            ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
            ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
            ((S::Content, "THINK_END"), tr(S::Content, &[])),
            ((S::Reasoning, "TOOL_CALLS"), tr(S::ToolName, &[E::ReasoningEnd, E::ToolCallStart])),
        ]);
    }
    terminals.extend([("TOOL_CALLS", vec![TOOL_CALLS]), ("ARGS", vec![ARGS]), ("OPEN_BRACE", vec!["{"])]);
    token_ids.extend([("TOOL_CALLS", TOOL_CALLS), ("ARGS", ARGS)]);
    let opens: &'static [E] =
        if think.is_some() { &[E::ReasoningEnd, E::ToolCallStart] } else { &[E::ToolCallStart] };
    transitions.extend([
        ((S::Content, "TOOL_CALLS"), tr(S::ToolName, opens)),
        ((S::ToolName, "ARGS"), tr(S::ToolArgs, &[])),
        // The brace that ends a name starts the arguments.
        ((S::ToolName, "OPEN_BRACE"), tr(S::ToolArgs, &[E::ArgValueChunk])),
        ((S::ToolArgs, "TOOL_CALLS"), tr(S::ToolName, &[E::ToolCallEnd, E::ToolCallStart])),
    ]);
    EngineConfig {
        name: "mistral",
        terminals,
        token_id_terminals: token_ids,
        transitions,
        content_events: EngineConfig::default_content_events(),
        initial_state: S::Content,
        wait_for_reasoning: Some(think.is_some()),
        tool_args_json: true,
        tool_call_body_array: false,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: Vec::new(),
        strip_trailing_reasoning_whitespace: true,
        arg_syntax: None,
        validate_tool_names: false,
        strip_tool_names: false,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: true,
        stream_text_after_calls: false,
    }
}

pub fn config(reasoning: Reasoning) -> &'static EngineConfig {
    static CONFIGS: [OnceLock<EngineConfig>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match reasoning {
        Reasoning::SpecialToken => 0,
        Reasoning::Text => 1,
        Reasoning::None => 2,
    };
    CONFIGS[slot].get_or_init(|| build(reasoning))
}

/// `_extract_args_json`: the first JSON value of the stripped arguments
/// (`raw_decode`; text after it is dropped), the stripped text when none
/// parses, `{}` when empty.
fn first_json_value(raw: &str) -> String {
    let stripped = raw.trim();
    if stripped.is_empty() {
        return "{}".to_string();
    }
    let chars: Vec<char> = stripped.chars().collect();
    match partial_json::raw_decode(&chars) {
        Some((_, end)) => chars[..end].iter().collect(),
        None => stripped.to_string(),
    }
}

/// The reasoning side (`MistralParserReasoningAdapter`).
pub fn reasoning(_ctx: &ChatContext, model: &Arc<Model>) -> EngineReasoning {
    let mut engine = EngineReasoning::new(config(Reasoning::of(model)), model.clone());
    // vLLM hands the tool parser the ids after the last `[/THINK]`: a call
    // before a think block in the same chunk reads as text.
    engine.content_ids_after_last_end = true;
    engine
}

/// The tool side (`MistralToolParser` on a v11+ vocabulary).
pub struct Tools;

impl ToolParserFactory for Tools {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, with_reasoning: bool) -> Box<dyn ToolParser> {
        let config = config(Reasoning::of(model));
        let mut tools = EngineTools::new(config, model.clone(), ctx.tools.clone(), !with_reasoning);
        tools.first_arg_chunk_streams = true;
        tools.empty_names = true;
        tools.batch_args = Some(first_json_value);
        tools.call_id = mistral_id;
        Box::new(tools)
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }

    /// Forced choices are read like `auto` (`supports_required_and_named =
    /// False`), after the guided schema vLLM sets on a tokenizer without
    /// grammars.
    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn forced_schema(&self, tools: &[Value], only: Option<&str>, _parallel: bool) -> Option<Value> {
        guided_schema(tools, only)
    }

    fn forced_schema_from_chat_request(&self) -> bool {
        true
    }

    fn tokenizer_grammar(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_arguments_are_the_first_json_value() {
        assert_eq!(first_json_value("  {\"a\": 1} and then text"), "{\"a\": 1}");
        assert_eq!(first_json_value("{\"a\": "), "{\"a\":");
        assert_eq!(first_json_value(" \n"), "{}");
        assert_eq!(first_json_value("[1, 2]]"), "[1, 2]");
    }
}
