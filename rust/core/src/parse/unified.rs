//! Parsers that read reasoning and tool calls as one: vLLM's `Parser`
//! subclasses that override `parse` / `parse_delta` themselves instead of
//! delegating to a reasoning and a tool parser (the response-template
//! parser, Harmony). A family's factory hands one out through
//! `unified()`; `DelegatingParser` then routes every call to it.

use std::sync::Arc;

use serde_json::Value;

use super::snapshot::Snapshot;
use super::{ChatContext, Extracted, FunctionCall, Ids, ReasoningParser, Texts, ToolParser};
use crate::error::ApiError;
use crate::model::Model;
use crate::structured::{RequestFormat, StrictLevel};
use crate::wire::response::Delta;

/// Which of the server's parser slots the flags filled.
#[derive(Debug, Clone, Copy)]
pub struct Selected {
    /// `--reasoning-parser` named this parser.
    pub reasoning: bool,
    /// `--tool-call-parser` named it (with `--enable-auto-tool-choice`).
    pub tools: bool,
    /// `--enable-auto-tool-choice`.
    pub auto: bool,
}

/// What a family that derives its own grammar reads of a rendered request
/// (vLLM's `adjust_request` after the prompt is known).
pub struct GrammarRequest<'a> {
    /// The request as chat sees it (Responses function tools flattened
    /// into chat tools, as the template is shown them).
    pub ctx: &'a ChatContext,
    pub route: Route<'a>,
    /// `extract_structured_outputs()`: the request's own constraint, as
    /// the `StructuredOutputsParams` object, if any.
    pub output: Option<&'a Value>,
    /// That constraint as an xgrammar format, when xgrammar takes it.
    pub format: &'a RequestFormat,
    /// The rendered prompt, and the model that decodes it.
    pub prompt: &'a [i64],
    pub model: &'a Model,
}

/// The route a request came by.
#[derive(Clone, Copy)]
pub enum Route<'a> {
    Chat,
    /// The Responses request's own `tools` (hosted and namespace tools as
    /// sent) and `tool_choice`.
    Responses {
        tools: &'a [Value],
        tool_choice: Option<&'a Value>,
    },
}

/// A grammar that replaces the request's structured outputs.
pub struct Grammar {
    /// The `structured_outputs.structural_tag` text.
    pub structural_tag: String,
    /// It covers the output from its first token, reasoning included:
    /// chat render's `reasoning_ended` is then true (`_grammar_from_parser`).
    pub from_message_start: bool,
    /// `adjust_request` writes it into the request's own
    /// `structured_outputs`, so a Responses request's `text.format` then
    /// conflicts with it (`extract_structured_outputs`).
    pub as_request_outputs: bool,
}

/// One request's (batch) or one streamed choice's parser.
pub trait UnifiedParser: Snapshot + Send {
    /// Batch: `(reasoning, content, calls)` of one choice's output text and
    /// ids (the stop token included, as the engine reports them).
    fn parse(
        &mut self,
        text: &str,
        ids: &[i64],
        prompt: Option<&[i64]>,
    ) -> (Option<String>, Option<String>, Vec<FunctionCall>);
    /// One streamed chunk; `finished`: the engine reported a finish reason.
    fn parse_delta(&mut self, text: &str, ids: &[i64], prompt: Option<&[i64]>, finished: bool) -> Option<Delta>;
    /// `is_reasoning_end` on the prompt's ids.
    fn is_reasoning_end(&self, ids: &[i64]) -> bool;
    /// Whether `token`'s text, after `before` in the next chunk, completes
    /// a delimiter and shows none of its text: a stop token that does so
    /// need not be held back (vLLM's stream and its batch answer agree).
    fn takes_as_markup(&self, before: &str, token: &str, prompt: Option<&[i64]>) -> bool {
        let _ = (before, token, prompt);
        false
    }
    /// The error vLLM's parser raised on the last call, if any.
    fn failure(&self) -> Option<ApiError> {
        None
    }
}

/// Makes the unified parser; the render-side answers of its `adjust_request`.
pub trait UnifiedFactory: Send + Sync {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, selected: Selected) -> Box<dyn UnifiedParser>;
    /// Its `adjust_request` keeps special tokens on every request.
    fn keeps_special_tokens(&self) -> bool {
        true
    }
    /// The structural-tag format that replaces the request's output
    /// format (`adjust_request`).
    fn output_format(&self, format: &RequestFormat) -> Option<serde_json::Value> {
        let _ = format;
        None
    }
    /// It reads the output's ids, not its text.
    fn reads_ids(&self) -> bool {
        false
    }
    /// Render leaves `spaces_between_special_tokens` on.
    fn keeps_special_token_spacing(&self) -> bool {
        true
    }
    /// The grammar `adjust_request` puts in place of the request's own
    /// constraint (`Ok(None)`: it leaves the request alone), or its refusal.
    /// `selected`: the slots the flags filled; `strict_level`:
    /// `--tool-strict-level` (`None`: the tool parser's default).
    fn grammar(
        &self,
        request: &GrammarRequest,
        selected: Selected,
        strict_level: Option<StrictLevel>,
    ) -> Result<Option<Grammar>, ApiError> {
        let _ = (request, selected, strict_level);
        Ok(None)
    }
    /// `adjust_request`'s refusals (`tools_given`: the request lists tools;
    /// `strict` / `named`: as the raw request says).
    fn check_request(&self, ctx: &ChatContext, tools_given: bool, strict: bool, named: bool) -> Result<(), ApiError> {
        let _ = (ctx, tools_given, strict, named);
        Ok(())
    }
}

/// The split parsers stand for the unified one: `DelegatingParser` asks
/// the factory for it (`ParserSpec::build`) and never drives these.
pub struct Placeholder;

impl ReasoningParser for Placeholder {
    fn extract_reasoning(&self, text: &str, _: &ChatContext) -> (Option<String>, Option<String>) {
        (None, Some(text.to_string()))
    }
    fn is_reasoning_end(&self, _: &[i64]) -> bool {
        true
    }
    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        ids.to_vec()
    }
    fn extract_reasoning_streaming(&mut self, t: &Texts, _: &Ids) -> Option<Delta> {
        Some(Delta::content(t.delta))
    }
}

impl ToolParser for Placeholder {
    fn extract_tool_calls(&self, text: &str, _: &ChatContext) -> Extracted {
        Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) }
    }
    fn extract_tool_calls_streaming(&mut self, t: &Texts, _: &Ids, _: &ChatContext) -> Option<Delta> {
        Some(Delta::content(t.delta))
    }
}
