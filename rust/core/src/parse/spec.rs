//! The server's parser configuration: the reasoning and tool-call parsers
//! `--reasoning-parser`, `--tool-call-parser` and `--enable-auto-tool-choice`
//! name, what they change in a rendered request (vLLM's `adjust_request`),
//! and a fresh `DelegatingParser` per request.

use std::sync::Arc;

use super::family::{KeepSpecial, ReasoningParserFactory, ToolParserFactory};
use super::{ChatContext, DelegatingParser, Registry, ToolChoice};
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

    /// A fresh parser for one request (batch) or one streamed choice.
    pub fn build(&self, ctx: &ChatContext, model: &Arc<Model>) -> DelegatingParser {
        let reasoning = self.reasoning.as_ref().map(|r| r.create(ctx, model));
        let tool = self.tool.as_ref().map(|t| t.create(ctx, model, self.reasoning.is_some()));
        DelegatingParser::new(reasoning, tool, self.enable_auto_tools)
    }
}
