//! The server's parser configuration: the reasoning and tool-call parsers
//! `--reasoning-parser`, `--tool-call-parser` and `--enable-auto-tool-choice`
//! name, what they change in a rendered request (vLLM's `adjust_request`),
//! and a fresh `DelegatingParser` per request.

use std::sync::Arc;

use super::family::{KeepSpecial, ReasoningParserFactory, ToolParserFactory};
use super::unified::{Grammar, GrammarRequest, Selected, UnifiedFactory};
use super::{ChatContext, DelegatingParser, Registry, ToolChoice};
use crate::error::ApiError;
use crate::model::Model;
use crate::structured::{params, tag_text, RequestFormat, StrictLevel, TagRequest};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParserSpecError {
    #[error("reasoning_parser_name='{0}' has not been registered")]
    UnknownReasoning(String),
    #[error("Error: --enable-auto-tool-choice requires tool_parser:'{0}' which has not been registered")]
    UnknownTool(String),
    #[error("Error: --enable-auto-tool-choice requires --tool-call-parser")]
    AutoWithoutTool,
    #[error("--reasoning-parser {reasoning} and --tool-call-parser {tool} cannot be combined")]
    Combined { reasoning: String, tool: String },
    /// A unified family's startup checks (vLLM's `TypeError`).
    #[error("{0}")]
    ResponseTemplate(String),
    #[error("--tool-call-parser {tool} and --reasoning-parser {reasoning} cannot be used with the tokenizer of '{model}': {reason}")]
    Tokenizer { tool: String, reasoning: String, model: String, reason: String },
}

/// The server's parser configuration (`--reasoning-parser`,
/// `--tool-call-parser`, `--enable-auto-tool-choice`).
#[derive(Clone)]
pub struct ParserSpec {
    reasoning: Option<Arc<dyn ReasoningParserFactory>>,
    tool: Option<Arc<dyn ToolParserFactory>>,
    pub enable_auto_tools: bool,
    /// `--tool-strict-level`.
    tool_strict_level: Option<StrictLevel>,
}

impl std::fmt::Debug for ParserSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParserSpec")
            .field("reasoning", &self.reasoning.is_some())
            .field("tool", &self.tool.is_some())
            .field("enable_auto_tools", &self.enable_auto_tools)
            .finish()
    }
}

impl ParserSpec {
    /// Resolve the flags like `ParserManager.get_parser`: a tool parser only
    /// counts with `--enable-auto-tool-choice`. `None` = plain path.
    pub fn resolve(
        reasoning: Option<&str>,
        tool: Option<&str>,
        enable_auto_tools: bool,
        model: &Model,
        registry: &Registry,
    ) -> Result<Option<ParserSpec>, ParserSpecError> {
        if enable_auto_tools && tool.is_none() {
            return Err(ParserSpecError::AutoWithoutTool);
        }
        let reasoning_source = match reasoning {
            None => None,
            Some(name) => {
                Some(registry.reasoning(name).ok_or_else(|| ParserSpecError::UnknownReasoning(name.to_string()))?)
            }
        };
        let tool_source = match tool.filter(|_| enable_auto_tools) {
            None => None,
            Some(name) => Some(registry.tool(name).ok_or_else(|| ParserSpecError::UnknownTool(name.to_string()))?),
        };
        if reasoning_source.is_none() && tool_source.is_none() {
            return Ok(None);
        }
        let tokenizer_error = |reason: String| ParserSpecError::Tokenizer {
            tool: tool.unwrap_or("None").to_string(),
            reasoning: reasoning.unwrap_or("None").to_string(),
            model: model.path.display().to_string(),
            reason,
        };
        let selected_tool = tool.filter(|_| tool_source.is_some());
        // `_compose_parser`: a model whose outputs one family always parses
        // (Harmony) takes no other parser.
        if let Some((c, (_, why))) = registry.composition_for_model(model).and_then(|c| Some((c, c.model_type?))) {
            let foreign = [("--reasoning-parser", reasoning), ("--tool-call-parser", selected_tool)]
                .into_iter()
                .find_map(|(flag, n)| n.filter(|n| !c.names.contains(n)).map(|n| (flag, n)));
            if let Some((flag, name)) = foreign {
                return Err(tokenizer_error(why(flag, name)));
            }
        }
        // A unified family's name takes the other slot with it, and its
        // checks run before any constructor.
        let composition = [reasoning, selected_tool].into_iter().flatten().find_map(|n| registry.composition_of(n));
        if let Some(c) = composition {
            let own = |n: Option<&str>| n.is_none_or(|n| c.names.contains(&n));
            if !own(reasoning) || !own(selected_tool) {
                return Err(ParserSpecError::Combined {
                    reasoning: reasoning.unwrap_or("None").to_string(),
                    tool: tool.unwrap_or("None").to_string(),
                });
            }
            (c.validate)(model, reasoning, selected_tool).map_err(ParserSpecError::ResponseTemplate)?;
        }
        // vLLM builds the tool parser first: its vocabulary error wins.
        let tool = tool_source.map(|s| s.load(model)).transpose().map_err(tokenizer_error)?;
        let reasoning = reasoning_source.map(|s| s.load(model)).transpose().map_err(tokenizer_error)?;
        Ok(Some(ParserSpec { reasoning, tool, enable_auto_tools, tool_strict_level: None }))
    }

    pub fn has_reasoning(&self) -> bool {
        self.reasoning.is_some()
    }

    /// See `ReasoningParserFactory::stream_follows_vllm`.
    pub fn stream_follows_vllm(&self) -> bool {
        self.reasoning.as_ref().is_some_and(|r| r.stream_follows_vllm())
    }

    /// vLLM's stream fails on a finish that comes alone (no tokens).
    pub fn stream_fails_on_finish_alone(&self) -> bool {
        self.reasoning.as_ref().is_some_and(|r| r.stream_fails_on_finish_alone())
    }

    pub fn has_tool(&self) -> bool {
        self.tool.is_some()
    }

    /// The `reasoning_parser_kwargs` render answers with: the template
    /// kwargs as the reasoning parser's constructor leaves them.
    pub fn reasoning_parser_kwargs(&self, kwargs: &serde_json::Map<String, serde_json::Value>) -> serde_json::Value {
        let mut kwargs = kwargs.clone();
        if let Some(r) = &self.reasoning {
            r.adjust_template_kwargs(&mut kwargs);
        }
        serde_json::json!({ "chat_template_kwargs": kwargs })
    }

    /// Whether the tool parser's `adjust_request` keeps special tokens when
    /// tools are offered.
    pub fn tool_keeps_special_tokens(&self) -> bool {
        self.tool.as_ref().is_some_and(|t| t.keep_special_tokens() != KeepSpecial::Never)
    }

    /// Whether a forced tool choice's JSON schema comes from the chat
    /// request (`ChatCompletionRequest.to_sampling_params`) rather than the
    /// parser.
    pub fn forced_schema_from_chat_request(&self) -> bool {
        self.tool.as_ref().is_some_and(|t| t.forced_schema_from_chat_request())
    }

    /// Does the tool parser refuse a forced call without function tools?
    pub fn requires_function_tools(&self) -> bool {
        self.tool.as_ref().is_some_and(|t| t.requires_function_tools())
    }

    /// `--tool-strict-level` (`None`: each tool parser's default).
    pub fn with_tool_strict_level(mut self, level: Option<StrictLevel>) -> ParserSpec {
        self.tool_strict_level = level;
        self
    }

    /// What the parsers' `adjust_request` change in a rendered request:
    /// whether special tokens must be kept, and the `structured_outputs`
    /// that replace the request's own (`format`): the tool-call structural
    /// tag (`_apply_structural_tag`), or the JSON schema a forced choice
    /// gets from parsers without one.
    pub fn render_adjustments(&self, ctx: &ChatContext, format: &RequestFormat) -> (bool, Option<serde_json::Value>) {
        let mut keep_special = self.reasoning.as_ref().is_some_and(|r| r.keep_special_tokens());
        // A unified parser adjusts every request.
        keep_special |= self.unified().is_some_and(|u| u.keeps_special_tokens());
        // A unified parser may move the request's output format into its
        // own structural tag (Harmony's final channel).
        let output = self.unified().and_then(|u| u.output_format(format));
        // Tool tags then see the moved format as the request's.
        let moved = output.clone().map(RequestFormat::Format);
        let format = moved.as_ref().unwrap_or(format);
        let output = output.map(|f| params(None, Some(tag_text(f))));
        let Some(tool) = &self.tool else { return (keep_special, output) };
        // vLLM runs `adjust_request` when a reasoning parser is configured
        // or the tool choice is not "none"; engine tool parsers then keep
        // special tokens whatever the tools.
        let adjusting = ctx.tool_choice != ToolChoice::None;
        keep_special |= tool.keep_special_tokens() == KeepSpecial::Always && (adjusting || self.reasoning.is_some());
        if ctx.tools.is_empty() || !adjusting {
            return (keep_special, output);
        }
        keep_special |= tool.keep_special_tokens() == KeepSpecial::WithTools;
        (keep_special, self.tool_adjustment(tool.as_ref(), ctx, format).or(output))
    }

    /// The tool-call structural tag, or the JSON schema a forced choice
    /// gets from a parser without one.
    fn tool_adjustment(
        &self,
        tool: &dyn ToolParserFactory,
        ctx: &ChatContext,
        format: &RequestFormat,
    ) -> Option<serde_json::Value> {
        let request = TagRequest {
            tools: &ctx.tools,
            tool_choice: &ctx.tool_choice,
            parallel_tool_calls: ctx.parallel_tool_calls,
            format,
        };
        if let Some(tag) = tool.structural_tag(self.tool_strict_level, request) {
            return Some(params(None, Some(tag)));
        }
        if !tool.supports_required_and_named() {
            return None;
        }
        let only = match &ctx.tool_choice {
            ToolChoice::Required => None,
            ToolChoice::Named(n) => Some(n.as_str()),
            _ => return None,
        };
        let schema = tool.forced_schema(&ctx.tools, only, ctx.parallel_tool_calls);
        schema.map(|s| params(Some(s), None))
    }

    /// The parser both slots stand for when it reads reasoning and tool
    /// calls as one (`parse::unified`).
    fn unified(&self) -> Option<&dyn UnifiedFactory> {
        let reasoning = self.reasoning.as_ref().and_then(|r| r.unified());
        reasoning.or_else(|| self.tool.as_ref().and_then(|t| t.unified()))
    }

    /// The parser reads the output's ids, not its text (Harmony).
    pub fn reads_ids(&self) -> bool {
        self.unified().is_some_and(|u| u.reads_ids())
    }

    /// The parser gets each chunk's ids as the engine sent them, a stop
    /// token before the finish included: it reads ids (Harmony), or its
    /// stream follows vLLM's, which decodes that token as it comes.
    pub fn takes_chunks_as_sent(&self) -> bool {
        self.reads_ids() || self.stream_follows_vllm()
    }

    /// Whether render leaves `spaces_between_special_tokens` on: the
    /// parsers' `adjust_request` (a tool parser's runs with a reasoning
    /// parser, or when the tool choice is not "none") may turn it off.
    pub fn keeps_special_token_spacing(&self, ctx: &ChatContext) -> bool {
        if let Some(u) = self.unified() {
            return u.keeps_special_token_spacing();
        }
        let adjusting = ctx.tool_choice != ToolChoice::None || self.reasoning.is_some();
        self.reasoning.as_ref().is_none_or(|r| r.keeps_special_token_spacing())
            && self.tool.as_ref().is_none_or(|t| !adjusting || t.keeps_special_token_spacing())
    }

    /// `adjust_request`'s refusals (a unified parser's: the response
    /// template cannot guarantee strict tools, forced or named calls, or a
    /// single call). `tools_given`: the request lists tools (hosted ones
    /// count); `strict` / `named`: as the raw request says.
    /// The tool parser builds a Mistral tokenizer's own grammar at render
    /// (`MistralParser.adjust_request` on a tokenizer with grammars).
    pub fn tokenizer_grammar(&self) -> bool {
        self.tool.as_ref().is_some_and(|t| t.tokenizer_grammar())
    }

    pub fn check_request(
        &self,
        ctx: &ChatContext,
        tools_given: bool,
        strict: bool,
        named: bool,
    ) -> Result<(), ApiError> {
        match (self.unified(), &self.tool) {
            (Some(u), Some(_)) => u.check_request(ctx, tools_given, strict, named),
            _ => Ok(()),
        }
    }

    fn selected(&self) -> Selected {
        Selected { reasoning: self.reasoning.is_some(), tools: self.tool.is_some(), auto: self.enable_auto_tools }
    }

    /// The grammar a unified parser derives for a rendered request (Beam's
    /// template grammar), which replaces the request's structured outputs.
    pub fn grammar(&self, request: &GrammarRequest) -> Result<Option<Grammar>, ApiError> {
        match self.unified() {
            Some(u) => u.grammar(request, self.selected(), self.tool_strict_level),
            None => Ok(None),
        }
    }

    /// A fresh parser for one request (batch) or one streamed choice.
    pub fn build(&self, ctx: &ChatContext, model: &Arc<Model>) -> DelegatingParser {
        let reasoning = self.reasoning.as_ref().map(|r| r.create(ctx, model));
        let mut tool = self.tool.as_ref().map(|t| t.create(ctx, model, self.reasoning.is_some()));
        if let Some(on) = self.reasoning.as_ref().and_then(|r| r.tool_text_after_calls()) {
            tool.iter_mut().for_each(|t| t.stream_text_after_calls(on));
        }
        let parser = DelegatingParser::new(reasoning, tool, self.enable_auto_tools);
        let selected = self.selected();
        match self.unified() {
            Some(u) => parser.with_unified(u.create(ctx, model, selected)),
            None => parser,
        }
    }
}
