//! Parser names (vLLM's CLI names and aliases) → parser instances.

use super::hermes::HermesParser;
use super::think::{DeepSeekV3Reasoning, ThinkParser};
use super::{ChatContext, DelegatingParser, ReasoningParser, ToolParser};
use crate::model::Model;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReasoningFamily {
    DeepSeekR1,
    DeepSeekV3,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToolFamily {
    Hermes,
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
}

impl ParserSpec {
    /// Resolve the flags like `ParserManager.get_parser`: a tool parser only
    /// counts with `--enable-auto-tool-choice`. `None` = plain path.
    pub fn resolve(
        reasoning: Option<&str>,
        tool: Option<&str>,
        enable_auto_tools: bool,
        model: &Model,
    ) -> Result<Option<ParserSpec>, ParserSpecError> {
        if enable_auto_tools && tool.is_none() {
            return Err(ParserSpecError::AutoWithoutTool);
        }
        let reasoning = match reasoning {
            None => None,
            Some("deepseek_r1") | Some("step5") => Some(ReasoningFamily::DeepSeekR1),
            Some("deepseek_v3") => Some(ReasoningFamily::DeepSeekV3),
            Some(other) => return Err(ParserSpecError::UnknownReasoning(other.to_string())),
        };
        let tool = match (tool, enable_auto_tools) {
            (_, false) | (None, _) => None,
            (Some("hermes") | Some("qwen3_json"), true) => Some(ToolFamily::Hermes),
            (Some(other), true) => return Err(ParserSpecError::UnknownTool(other.to_string())),
        };
        if reasoning.is_none() && tool.is_none() {
            return Ok(None);
        }
        let think_ids = match reasoning {
            None => None,
            Some(_) => {
                let id = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
                match (id("<think>"), id("</think>")) {
                    (Some(s), Some(e)) => Some((s, e)),
                    _ => {
                        return Err(ParserSpecError::Tokenizer {
                            tool: format!("{tool:?}"),
                            reasoning: format!("{reasoning:?}"),
                            model: model.path.display().to_string(),
                            reason: "could not locate think start/end tokens in the tokenizer".into(),
                        })
                    }
                }
            }
        };
        Ok(Some(ParserSpec { reasoning, tool, enable_auto_tools, think_ids }))
    }

    pub fn has_reasoning(&self) -> bool {
        self.reasoning.is_some()
    }

    pub fn has_tool(&self) -> bool {
        self.tool.is_some()
    }

    /// A fresh parser for one request (batch) or one streamed choice.
    pub fn build(&self, ctx: &ChatContext) -> DelegatingParser {
        let think = || {
            self.think_ids.map(|(s, e)| ThinkParser {
                start: "<think>".into(),
                end: "</think>".into(),
                start_id: s,
                end_id: e,
            })
        };
        let reasoning: Option<Box<dyn ReasoningParser>> = match self.reasoning {
            None => None,
            Some(ReasoningFamily::DeepSeekR1) => think().map(|t| Box::new(t) as Box<dyn ReasoningParser>),
            Some(ReasoningFamily::DeepSeekV3) => {
                let on = ctx.kwarg_true("thinking") || ctx.kwarg_true("enable_thinking");
                Some(Box::new(DeepSeekV3Reasoning { inner: if on { think() } else { None } }))
            }
        };
        let tool: Option<Box<dyn ToolParser>> = match self.tool {
            None => None,
            Some(ToolFamily::Hermes) => Some(Box::new(HermesParser::default())),
        };
        DelegatingParser::new(reasoning, tool, self.enable_auto_tools)
    }
}
