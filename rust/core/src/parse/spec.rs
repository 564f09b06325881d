//! The server's parser configuration: the reasoning and tool-call parsers
//! `--reasoning-parser`, `--tool-call-parser` and `--enable-auto-tool-choice`
//! name, what they change in a rendered request (vLLM's `adjust_request`),
//! and a fresh `DelegatingParser` per request.

use std::sync::Arc;

use super::families::response_template::{validate as validate_template, NAMES};
use super::family::{KeepSpecial, ReasoningParserFactory, ResponseTemplate, ToolParserFactory};
use super::{ChatContext, DelegatingParser, Registry, ToolChoice};
use crate::error::ApiError;
use crate::model::Model;
use crate::structured::{params, RequestFormat, StrictLevel, TagRequest};

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
    /// The response template's startup checks (vLLM's `TypeError`).
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
        // `_compose_parser`: a response-template name takes the other
        // parser with it, and checks the template before any constructor.
        let template_name = |n: Option<&str>| n.is_some_and(|n| NAMES.contains(&n));
        let (r_template, t_template) =
            (template_name(reasoning), template_name(tool.filter(|_| tool_source.is_some())));
        if r_template || t_template {
            let mixed = (reasoning_source.is_some() && !r_template) || (tool_source.is_some() && !t_template);
            if mixed {
                return Err(ParserSpecError::Combined {
                    reasoning: reasoning.unwrap_or("None").to_string(),
                    tool: tool.unwrap_or("None").to_string(),
                });
            }
            let selected_tool = tool.filter(|_| tool_source.is_some());
            validate_template(model, reasoning, selected_tool).map_err(ParserSpecError::ResponseTemplate)?;
        }
        // vLLM builds the tool parser first: its vocabulary error wins.
        let tool = tool_source.map(|s| s.load(model)).transpose().map_err(tokenizer_error)?;
        let reasoning = reasoning_source.map(|s| s.load(model)).transpose().map_err(tokenizer_error)?;
        Ok(Some(ParserSpec { reasoning, tool, enable_auto_tools, tool_strict_level: None }))
    }

    pub fn has_reasoning(&self) -> bool {
        self.reasoning.is_some()
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
        // The response-template parser adjusts every request.
        keep_special |= self.response_template().is_some();
        let Some(tool) = &self.tool else { return (keep_special, None) };
        // vLLM runs `adjust_request` when a reasoning parser is configured
        // or the tool choice is not "none"; engine tool parsers then keep
        // special tokens whatever the tools.
        let adjusting = ctx.tool_choice != ToolChoice::None;
        keep_special |= tool.keep_special_tokens() == KeepSpecial::Always && (adjusting || self.reasoning.is_some());
        if ctx.tools.is_empty() || !adjusting {
            return (keep_special, None);
        }
        keep_special |= tool.keep_special_tokens() == KeepSpecial::WithTools;
        let request = TagRequest {
            tools: &ctx.tools,
            tool_choice: &ctx.tool_choice,
            parallel_tool_calls: ctx.parallel_tool_calls,
            format,
        };
        if let Some(tag) = tool.structural_tag(self.tool_strict_level, request) {
            return (keep_special, Some(params(None, Some(tag))));
        }
        if !tool.supports_required_and_named() {
            return (keep_special, None);
        }
        let only = match &ctx.tool_choice {
            ToolChoice::Required => None,
            ToolChoice::Named(n) => Some(n.as_str()),
            _ => return (keep_special, None),
        };
        let schema = tool.forced_schema(&ctx.tools, only, ctx.parallel_tool_calls);
        (keep_special, schema.map(|s| params(Some(s), None)))
    }

    /// The response-template parser both names stand for, if selected.
    fn response_template(&self) -> Option<&ResponseTemplate> {
        let reasoning = self.reasoning.as_ref().and_then(|r| r.response_template());
        reasoning.or_else(|| self.tool.as_ref().and_then(|t| t.response_template()))
    }

    /// Render also turns `spaces_between_special_tokens` off.
    pub fn keeps_special_token_spacing(&self) -> bool {
        self.response_template().is_none()
    }

    /// `adjust_request`'s refusals: the response-template parser cannot
    /// guarantee strict tools, forced or named calls, or a single call.
    /// `tools_given`: the request lists tools (hosted ones count);
    /// `strict` / `named`: as the raw request says.
    pub fn check_request(
        &self,
        ctx: &ChatContext,
        tools_given: bool,
        strict: bool,
        named: bool,
    ) -> Result<(), ApiError> {
        if self.response_template().is_none()
            || self.tool.is_none()
            || !tools_given
            || ctx.tool_choice == ToolChoice::None
        {
            return Ok(());
        }
        let required = ctx.tool_choice == ToolChoice::Required;
        crate::parse::families::response_template::refuse_guarantees(strict, required, named, ctx.parallel_tool_calls)
    }

    /// A fresh parser for one request (batch) or one streamed choice.
    pub fn build(&self, ctx: &ChatContext, model: &Arc<Model>) -> DelegatingParser {
        let reasoning = self.reasoning.as_ref().map(|r| r.create(ctx, model));
        let tool = self.tool.as_ref().map(|t| t.create(ctx, model, self.reasoning.is_some()));
        let parser = DelegatingParser::new(reasoning, tool, self.enable_auto_tools);
        match self.response_template() {
            Some(t) => parser.with_unified(t.unified(
                ctx,
                model,
                self.reasoning.is_some(),
                self.tool.is_some(),
                self.enable_auto_tools,
            )),
            None => parser,
        }
    }
}
