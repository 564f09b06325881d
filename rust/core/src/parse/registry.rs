//! Parser names (vLLM's CLI names and aliases) → factories, and the
//! server's parser configuration built from them. Built-in families and
//! plugins register alike; a plugin name shadows a built-in one, as a later
//! `register_module` does in vLLM. Nothing here names a family.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::family::{Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use super::{ChatContext, DelegatingParser, ToolChoice};
use crate::model::Model;
use crate::structured::{params, structural_tag, RequestFormat, StrictLevel, TagModel, TagRequest};

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

/// How a registered name makes its factory.
enum Source<F: ?Sized + 'static> {
    Family(&'static Family<F>),
    Plugin(Arc<F>),
}

impl<F: ?Sized> Source<F> {
    fn load(&self, model: &Model) -> Result<Arc<F>, String> {
        match self {
            Source::Family(family) => (family.load)(model),
            Source::Plugin(factory) => Ok(factory.clone()),
        }
    }
}

/// The two kinds of parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Reasoning,
}

/// A registered name, as `derender parsers` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub name: &'static str,
    /// The family's other names.
    pub aliases: &'static [&'static str],
    pub needs: &'static str,
}

/// Every parser name the server knows.
pub struct Registry {
    tools: BTreeMap<String, Source<dyn ToolParserFactory>>,
    reasoning: BTreeMap<String, Source<dyn ReasoningParserFactory>>,
    tags: BTreeMap<&'static str, &'static TagModel>,
}

impl Default for Registry {
    /// The built-in families.
    fn default() -> Self {
        let mut registry = Registry { tools: BTreeMap::new(), reasoning: BTreeMap::new(), tags: BTreeMap::new() };
        super::families::register(&mut registry);
        registry
    }
}

impl Registry {
    pub fn tool_family(&mut self, family: &'static ToolFamily) {
        for name in family.names {
            self.tools.insert(name.to_string(), Source::Family(family));
        }
    }

    pub fn reasoning_family(&mut self, family: &'static ReasoningFamily) {
        for name in family.names {
            self.reasoning.insert(name.to_string(), Source::Family(family));
        }
    }

    /// A plugin tool parser (`--tool-parser-plugin`).
    pub fn add_tool(&mut self, name: impl Into<String>, factory: Arc<dyn ToolParserFactory>) {
        self.tools.insert(name.into(), Source::Plugin(factory));
    }

    /// A plugin reasoning parser (`--reasoning-parser-plugin`).
    pub fn add_reasoning(&mut self, name: impl Into<String>, factory: Arc<dyn ReasoningParserFactory>) {
        self.reasoning.insert(name.into(), Source::Plugin(factory));
    }

    /// The built-in families of a kind (plugins aside), sorted by name.
    pub fn listing(&self, kind: Kind) -> Vec<Listing> {
        match kind {
            Kind::Tool => listing(&self.tools),
            Kind::Reasoning => listing(&self.reasoning),
        }
    }

    /// Can the parser `name` serve `model` (`None`: no such name)? The
    /// error is the reason its constructor would give at startup.
    pub fn fits(&self, kind: Kind, name: &str, model: &Model) -> Option<Result<(), String>> {
        match kind {
            Kind::Tool => self.tools.get(name).map(|s| s.load(model).map(drop)),
            Kind::Reasoning => self.reasoning.get(name).map(|s| s.load(model).map(drop)),
        }
    }

    /// A structural-tag model, under vLLM's key for it.
    pub fn tag_model(&mut self, model: &'static TagModel) {
        self.tags.insert(model.name, model);
    }

    /// The structural-tag models, by name.
    pub fn tag_models(&self) -> impl Iterator<Item = &'static TagModel> + '_ {
        self.tags.values().copied()
    }

    /// The structural-tag model vLLM knows by `name`.
    pub fn find_tag_model(&self, name: &str) -> Option<&'static TagModel> {
        self.tags.get(name).copied()
    }
}

fn listing<F: ?Sized>(names: &BTreeMap<String, Source<F>>) -> Vec<Listing> {
    names
        .iter()
        .filter_map(|(name, source)| match source {
            Source::Family(f) if f.names.first() == Some(&name.as_str()) => {
                Some(Listing { name: f.names[0], aliases: &f.names[1..], needs: f.needs })
            }
            _ => None,
        })
        .collect()
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
                Some(registry.reasoning.get(name).ok_or_else(|| ParserSpecError::UnknownReasoning(name.to_string()))?)
            }
        };
        let tool_source = match tool.filter(|_| enable_auto_tools) {
            None => None,
            Some(name) => Some(registry.tools.get(name).ok_or_else(|| ParserSpecError::UnknownTool(name.to_string()))?),
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
        let adjusting = ctx.tool_choice != ToolChoice::None;
        keep_special |= tool.keep_special_tokens() == KeepSpecial::Always && adjusting;
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
        if let Some(tag) = structural_tag(tool.tag_model(), self.tool_strict_level, request) {
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
