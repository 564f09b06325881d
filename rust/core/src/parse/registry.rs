//! Parser names (vLLM's CLI names and aliases) → parser instances.

use super::deepseek::{DeepSeekToolParser, Format, MarkerIds};
use super::engine::{EngineReasoning, EngineTools};
use super::hermes::HermesParser;
use super::llama3_json::Llama3JsonParser;
use super::plugin::{PluginRegistry, ReasoningParserFactory, Registered, ToolParserFactory};
use super::pythonic::PythonicParser;
use super::strict::{RequestFormat, StrictLevel, TagRequest};
use super::structural::TagModel;
use super::think::{DeepSeekV3Reasoning, ThinkParser};
use super::{ChatContext, DelegatingParser, ReasoningParser, ToolParser};
use crate::model::Model;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReasoningFamily {
    DeepSeekR1,
    DeepSeekV3,
    Qwen3,
    SeedOss,
    Glm45,
    MinimaxM2,
    KimiK2,
    /// A `--reasoning-parser-plugin` parser (`ParserSpec::reasoning_plugin`).
    Plugin,
    Step3p5,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToolFamily {
    Hermes,
    Qwen3Coder,
    SeedOss,
    Glm47,
    MinimaxM2,
    Llama3Json,
    Pythonic,
    Llama4Pythonic,
    DeepSeekV3,
    DeepSeekV31,
    Mistral,
    KimiK2,
    /// A `--tool-parser-plugin` parser (`ParserSpec::tool_plugin`).
    Plugin,
    Step3p5,
    Step5,
}

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
#[derive(Debug, Clone)]
pub struct ParserSpec {
    reasoning: Option<ReasoningFamily>,
    tool: Option<ToolFamily>,
    pub enable_auto_tools: bool,
    think_ids: Option<(i64, i64)>,
    deepseek_ids: Option<MarkerIds>,
    /// `[TOOL_CALLS]`'s id (mistral).
    tool_calls_id: Option<i64>,
    reasoning_plugin: Option<Registered<dyn ReasoningParserFactory>>,
    tool_plugin: Option<Registered<dyn ToolParserFactory>>,
    /// `--tool-strict-level`.
    tool_strict_level: Option<StrictLevel>,
}

impl ParserSpec {
    /// Resolve the flags like `ParserManager.get_parser`: a tool parser only
    /// counts with `--enable-auto-tool-choice`. `None` = plain path.
    /// Names registered by plugins come first.
    pub fn resolve(
        reasoning: Option<&str>,
        tool: Option<&str>,
        enable_auto_tools: bool,
        model: &Model,
        plugins: &PluginRegistry,
    ) -> Result<Option<ParserSpec>, ParserSpecError> {
        if enable_auto_tools && tool.is_none() {
            return Err(ParserSpecError::AutoWithoutTool);
        }
        let (reasoning_name, tool_name) = (reasoning, tool);
        let reasoning_plugin = reasoning.and_then(|n| plugins.reasoning(n));
        let tool_plugin = tool.filter(|_| enable_auto_tools).and_then(|n| plugins.tool(n));
        let reasoning = match reasoning {
            None => None,
            Some(_) if reasoning_plugin.is_some() => Some(ReasoningFamily::Plugin),
            Some("deepseek_r1") | Some("step5") => Some(ReasoningFamily::DeepSeekR1),
            Some("deepseek_v3") => Some(ReasoningFamily::DeepSeekV3),
            Some("qwen3") => Some(ReasoningFamily::Qwen3),
            Some("seed_oss") => Some(ReasoningFamily::SeedOss),
            Some("glm45") | Some("glm47") => Some(ReasoningFamily::Glm45),
            Some("minimax_m2") => Some(ReasoningFamily::MinimaxM2),
            Some("kimi_k2") => Some(ReasoningFamily::KimiK2),
            Some("step3p5") => Some(ReasoningFamily::Step3p5),
            Some(other) => return Err(ParserSpecError::UnknownReasoning(other.to_string())),
        };
        let tool = match (tool, enable_auto_tools) {
            (_, false) | (None, _) => None,
            _ if tool_plugin.is_some() => Some(ToolFamily::Plugin),
            (Some("hermes") | Some("qwen3_json"), true) => Some(ToolFamily::Hermes),
            (Some("qwen3_coder") | Some("qwen3_xml"), true) => Some(ToolFamily::Qwen3Coder),
            (Some("seed_oss"), true) => Some(ToolFamily::SeedOss),
            (Some("glm45") | Some("glm47"), true) => Some(ToolFamily::Glm47),
            (Some("minimax_m2"), true) => Some(ToolFamily::MinimaxM2),
            (Some("llama3_json") | Some("llama4_json"), true) => Some(ToolFamily::Llama3Json),
            (Some("pythonic"), true) => Some(ToolFamily::Pythonic),
            (Some("llama4_pythonic"), true) => Some(ToolFamily::Llama4Pythonic),
            (Some("deepseek_v3"), true) => Some(ToolFamily::DeepSeekV3),
            (Some("deepseek_v31"), true) => Some(ToolFamily::DeepSeekV31),
            (Some("mistral"), true) => Some(ToolFamily::Mistral),
            (Some("kimi_k2"), true) => Some(ToolFamily::KimiK2),
            (Some("step3p5"), true) => Some(ToolFamily::Step3p5),
            (Some("step5"), true) => Some(ToolFamily::Step5),
            (Some(other), true) => return Err(ParserSpecError::UnknownTool(other.to_string())),
        };
        if reasoning.is_none() && tool.is_none() {
            return Ok(None);
        }
        // The `<think>` families need both markers as single tokens.
        let token = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
        let tokenizer_error = |reason: &str| ParserSpecError::Tokenizer {
            tool: tool_name.unwrap_or("None").to_string(),
            reasoning: reasoning_name.unwrap_or("None").to_string(),
            model: model.path.display().to_string(),
            reason: reason.to_string(),
        };
        // The DeepSeek tool parsers count their markers by token id.
        let deepseek_ids = match tool {
            Some(ToolFamily::DeepSeekV3 | ToolFamily::DeepSeekV31) => {
                use super::deepseek::{CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END};
                match (token(CALLS_BEGIN), token(CALLS_END)) {
                    (Some(calls_begin), Some(_)) => {
                        Some(MarkerIds { calls_begin, call_begin: token(CALL_BEGIN), call_end: token(CALL_END) })
                    }
                    _ => return Err(tokenizer_error("could not locate tool call start/end tokens in the tokenizer")),
                }
            }
            _ => None,
        };
        let think_ids = match reasoning {
            Some(ReasoningFamily::DeepSeekR1 | ReasoningFamily::DeepSeekV3) => {
                match (token("<think>"), token("</think>")) {
                    (Some(s), Some(e)) => Some((s, e)),
                    _ => return Err(tokenizer_error("could not locate think start/end tokens in the tokenizer")),
                }
            }
            _ => None,
        };
        let tool_calls_id = match tool {
            Some(ToolFamily::Mistral) => {
                // v11+ vocabularies take vLLM's engine path, not ported yet.
                if ["[ARGS]", "[THINK]"].iter().any(|t| token(t).is_some()) {
                    return Err(tokenizer_error("only pre-v11 Mistral tokenizers (no [ARGS]/[THINK]) are supported"));
                }
                match token(super::mistral::TOOL_CALLS) {
                    Some(id) => Some(id),
                    None => {
                        return Err(tokenizer_error(
                            "Mistral parser could not locate the tool call token in the tokenizer!",
                        ))
                    }
                }
            }
            _ => None,
        };
        Ok(Some(ParserSpec {
            reasoning,
            tool,
            enable_auto_tools,
            think_ids,
            deepseek_ids,
            tool_calls_id,
            reasoning_plugin,
            tool_plugin,
            tool_strict_level: None,
        }))
    }

    pub fn has_reasoning(&self) -> bool {
        self.reasoning.is_some()
    }

    pub fn has_tool(&self) -> bool {
        self.tool.is_some()
    }

    /// Whether the tool parser's own `adjust_request` keeps special tokens
    /// when tools are offered. The DeepSeek parsers have none (the markers
    /// are not special tokens); Llama's and the pythonic parsers keep the
    /// base one, which leaves special tokens alone.
    pub fn tool_keeps_special_tokens(&self) -> bool {
        self.tool.is_some()
            && !matches!(
                self.tool,
                Some(
                    ToolFamily::Llama3Json
                        | ToolFamily::Pythonic
                        | ToolFamily::Llama4Pythonic
                        | ToolFamily::DeepSeekV3
                        | ToolFamily::DeepSeekV31
                )
            )
    }

    /// Whether a forced tool choice's JSON schema comes from the chat
    /// request (`ChatCompletionRequest.to_sampling_params`) rather than the
    /// parser: Mistral's parser opts out of the base `adjust_request`, so a
    /// Responses request gets no schema.
    pub fn forced_schema_from_chat_request(&self) -> bool {
        self.tool == Some(ToolFamily::Mistral)
    }

    /// `--tool-strict-level` (`None`: each tool parser's default).
    pub fn with_tool_strict_level(mut self, level: Option<StrictLevel>) -> ParserSpec {
        self.tool_strict_level = level;
        self
    }

    /// The tool parser's `structural_tag_model` (the Step parsers name
    /// Qwen3-Coder's).
    fn tag_model(&self) -> Option<TagModel> {
        Some(match self.tool? {
            ToolFamily::Hermes => TagModel::Hermes,
            ToolFamily::Qwen3Coder | ToolFamily::Step3p5 | ToolFamily::Step5 => TagModel::QwenCoder,
            ToolFamily::Glm47 => TagModel::Glm47,
            ToolFamily::MinimaxM2 => TagModel::Minimax,
            ToolFamily::Llama3Json => TagModel::Llama,
            ToolFamily::DeepSeekV3 => TagModel::DeepSeekR1,
            ToolFamily::DeepSeekV31 => TagModel::DeepSeekV31,
            ToolFamily::KimiK2 => TagModel::Kimi,
            ToolFamily::SeedOss
            | ToolFamily::Pythonic
            | ToolFamily::Llama4Pythonic
            | ToolFamily::Mistral
            | ToolFamily::Plugin => return None,
        })
    }

    /// What the parser's `adjust_request` changes in a rendered request:
    /// whether special tokens must be kept, and the `structured_outputs`
    /// that replace the request's own (`format`): the tool-call structural
    /// tag (`_apply_structural_tag`), or the JSON schema a forced choice
    /// gets from parsers without one.
    pub fn render_adjustments(&self, ctx: &ChatContext, format: &RequestFormat) -> (bool, Option<serde_json::Value>) {
        use super::structural::{json_schema, mistral_json_schema, params};
        use super::ToolChoice;
        // Requests are adjusted when a reasoning parser is configured or a
        // tool may be called; engine reasoning parsers keep special tokens.
        let mut keep_special = matches!(
            self.reasoning,
            Some(
                ReasoningFamily::Qwen3
                    | ReasoningFamily::SeedOss
                    | ReasoningFamily::Glm45
                    | ReasoningFamily::MinimaxM2
                    | ReasoningFamily::KimiK2
                    | ReasoningFamily::Step3p5
            )
        ) || self.reasoning_plugin.as_ref().is_some_and(|p| p.factory.keep_special_tokens());
        if let Some(plugin) = &self.tool_plugin {
            // vLLM's base `adjust_request` (plus the plugin's special-token wish).
            if ctx.tools.is_empty() || ctx.tool_choice == ToolChoice::None {
                return (keep_special, None);
            }
            keep_special |= plugin.factory.keep_special_tokens();
            let only = match &ctx.tool_choice {
                ToolChoice::Required => None,
                ToolChoice::Named(n) => Some(n.as_str()),
                _ => return (keep_special, None),
            };
            if !plugin.factory.supports_required_and_named() {
                return (keep_special, None);
            }
            let schema = json_schema(&ctx.tools, only, ctx.parallel_tool_calls);
            return (keep_special, Some(params(Some(schema), None)));
        }
        // Engine-based tool parsers (`ParserEngineToolAdapter`) keep special
        // tokens whenever render asks them to adjust (`tool_choice` other
        // than "none"), tools or not.
        let engine_based = !matches!(
            self.tool,
            None | Some(
                ToolFamily::Hermes
                    | ToolFamily::Llama3Json
                    | ToolFamily::Pythonic
                    | ToolFamily::Llama4Pythonic
                    | ToolFamily::DeepSeekV3
                    | ToolFamily::DeepSeekV31
                    | ToolFamily::Plugin
            )
        );
        keep_special |= engine_based && ctx.tool_choice != ToolChoice::None;
        if self.tool.is_none() || ctx.tools.is_empty() {
            return (keep_special, None);
        }
        keep_special |= self.tool_keeps_special_tokens() && ctx.tool_choice != ToolChoice::None;
        let request = TagRequest {
            tools: &ctx.tools,
            tool_choice: &ctx.tool_choice,
            parallel_tool_calls: ctx.parallel_tool_calls,
            format,
        };
        if let Some(tag) = super::strict::structural_tag(self.tag_model(), self.tool_strict_level, request) {
            return (keep_special, Some(params(None, Some(tag))));
        }
        if self.tag_model().is_some() {
            // Parsers with a tag model read forced calls in their own format
            // (`supports_required_and_named` is off): no JSON schema.
            return (keep_special, None);
        }
        let only = match &ctx.tool_choice {
            ToolChoice::Required => None,
            ToolChoice::Named(n) => Some(n.as_str()),
            _ => return (keep_special, None),
        };
        let structured = match self.tool {
            // Pre-v11 Mistral: a JSON array of `{name, arguments}`.
            Some(ToolFamily::Mistral) => mistral_json_schema(&ctx.tools, only).map(|s| params(Some(s), None)),
            _ => Some(params(Some(json_schema(&ctx.tools, only, ctx.parallel_tool_calls)), None)),
        };
        (keep_special, structured)
    }

    /// A fresh parser for one request (batch) or one streamed choice.
    pub fn build(&self, ctx: &ChatContext, model: &std::sync::Arc<Model>) -> DelegatingParser {
        let think = || self.think_ids.map(|(s, e)| ThinkParser::new("<think>", "</think>", s, e));
        let reasoning: Option<Box<dyn ReasoningParser>> = match self.reasoning {
            None => None,
            Some(ReasoningFamily::DeepSeekR1) => think().map(|t| Box::new(t) as Box<dyn ReasoningParser>),
            Some(ReasoningFamily::DeepSeekV3) => {
                let on = ctx.kwarg_true("thinking") || ctx.kwarg_true("enable_thinking");
                Some(Box::new(DeepSeekV3Reasoning { inner: if on { think() } else { None } }))
            }
            Some(family @ (ReasoningFamily::Qwen3 | ReasoningFamily::SeedOss)) => {
                // `enable_thinking` defaults to on; Python truthiness of the value.
                let thinking = thinking_enabled(ctx);
                let config = match family {
                    ReasoningFamily::SeedOss => super::qwen3::seed_oss_config(thinking),
                    _ => super::qwen3::config(thinking),
                };
                let mut engine = EngineReasoning::new(config, model.clone());
                engine.passthrough_without_thinking = !thinking;
                Some(Box::new(engine))
            }
            Some(ReasoningFamily::MinimaxM2) => {
                let mut engine = EngineReasoning::new(super::minimax_m2::config(), model.clone());
                engine.content_ids_after_end_only = true;
                Some(Box::new(engine))
            }
            Some(ReasoningFamily::KimiK2) => {
                let thinking = super::glm47::thinking_enabled(&ctx.template_kwargs);
                let mut engine = EngineReasoning::new(super::kimi_k2::config(thinking), model.clone());
                engine.passthrough_without_thinking = !thinking;
                // Content ids: after `</think>`, else from the tool section on.
                engine.content_ids_after_end_only = thinking;
                engine.content_ids_fallback = model.tokenizer.token_to_id(super::kimi_k2::SECTION_BEGIN).map(i64::from);
                Some(Box::new(engine))
            }
            Some(ReasoningFamily::Plugin) => self.reasoning_plugin.as_ref().map(|p| p.factory.create(ctx, model)),
            // Always thinking: no passthrough whatever `enable_thinking` says.
            Some(ReasoningFamily::Step3p5) => {
                Some(Box::new(EngineReasoning::new(super::step3p5::config(), model.clone())))
            }
            Some(ReasoningFamily::Glm45) => {
                let thinking = super::glm47::thinking_enabled(&ctx.template_kwargs);
                let mut engine = EngineReasoning::new(super::glm47::config(thinking), model.clone());
                engine.passthrough_without_thinking = !thinking;
                Some(Box::new(engine))
            }
        };
        let tool: Option<Box<dyn ToolParser>> = match self.tool {
            None => None,
            Some(ToolFamily::Hermes) => Some(Box::new(HermesParser::default())),
            Some(ToolFamily::Plugin) => self.tool_plugin.as_ref().map(|p| p.factory.create(ctx, model)),
            Some(ToolFamily::Llama3Json) => Some(Box::new(Llama3JsonParser::new())),
            Some(ToolFamily::Pythonic) => Some(Box::new(PythonicParser::new(false))),
            Some(ToolFamily::Llama4Pythonic) => Some(Box::new(PythonicParser::new(true))),
            Some(family @ (ToolFamily::Qwen3Coder | ToolFamily::SeedOss)) => {
                let thinking = thinking_enabled(ctx);
                let (config, forced_json) = match family {
                    // seed_oss has no structural-tag model: forced choices use JSON.
                    ToolFamily::SeedOss => (super::qwen3::seed_oss_config(thinking), true),
                    _ => (super::qwen3::config(thinking), false),
                };
                let mut tools = EngineTools::new(config, model.clone(), ctx.tools.clone(), self.reasoning.is_none());
                tools.supports_required_and_named = forced_json;
                Some(Box::new(tools))
            }
            Some(ToolFamily::MinimaxM2) => Some(Box::new(EngineTools::new(
                super::minimax_m2::config(),
                model.clone(),
                ctx.tools.clone(),
                self.reasoning.is_none(),
            ))),
            Some(ToolFamily::Step3p5) => Some(Box::new(EngineTools::new(
                super::step3p5::config(),
                model.clone(),
                ctx.tools.clone(),
                self.reasoning.is_none(),
            ))),
            Some(ToolFamily::Step5) => Some(Box::new(EngineTools::new(
                super::step3p5::step5_tool_config(),
                model.clone(),
                ctx.tools.clone(),
                self.reasoning.is_none(),
            ))),
            Some(ToolFamily::Mistral) => {
                Some(Box::new(super::mistral::MistralParser::new(self.tool_calls_id.unwrap_or(-1))))
            }
            Some(ToolFamily::KimiK2) => {
                let config = super::kimi_k2::config(super::glm47::thinking_enabled(&ctx.template_kwargs));
                let mut tools = EngineTools::new(config, model.clone(), ctx.tools.clone(), self.reasoning.is_none());
                tools.tool_header = Some(super::kimi_k2::parse_header);
                Some(Box::new(tools))
            }
            Some(ToolFamily::Glm47) => {
                let config = super::glm47::config(super::glm47::thinking_enabled(&ctx.template_kwargs));
                Some(Box::new(EngineTools::new(config, model.clone(), ctx.tools.clone(), self.reasoning.is_none())))
            }
            Some(family @ (ToolFamily::DeepSeekV3 | ToolFamily::DeepSeekV31)) => {
                let format = if family == ToolFamily::DeepSeekV3 { Format::V3 } else { Format::V31 };
                self.deepseek_ids.map(|ids| Box::new(DeepSeekToolParser::new(format, ids)) as Box<dyn ToolParser>)
            }
        };
        DelegatingParser::new(reasoning, tool, self.enable_auto_tools)
    }
}

/// `chat_template_kwargs.enable_thinking`, on unless falsy.
fn thinking_enabled(ctx: &ChatContext) -> bool {
    ctx.template_kwargs.get("enable_thinking").is_none_or(super::context::truthy)
}
