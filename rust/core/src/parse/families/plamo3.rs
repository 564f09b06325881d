//! Preferred Networks PLaMo 3 (`plamo3`, vLLM's unified `Plamo3Parser`):
//! reasoning from the start (unless `enable_thinking` is false) up to
//! `<|plamo:end_think:plamo|>`, and tool requests
//! `<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>
//! <|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>
//! <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>ARGS...`
//! on the declarative engine, with JSON arguments kept as written.
//!
//! The markers are several tokens each (`<|plamo:begin_` `think` `:plamo|>`),
//! so the family finds reasoning's end by id sequence and drops a marker a
//! stream ends inside (the engine's `unfinished_marker`).

use std::sync::Arc;

use serde_json::json;

use crate::model::Model;
use crate::parse::engine::marker::strip_unfinished;
use crate::parse::engine::{tr, ByThinking, EngineConfig, EngineReasoning, EngineTools, EventType as E, State as S};
use crate::parse::family::{Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Snapshot, Texts, ToolParser};
use crate::structured::format::{content, separated, tag, triggered, Choice, TagModel, TagTool};
use crate::structured::tool_tags::StrictLevel;
use crate::wire::response::Delta;

const BEGIN_TOOL_REQUESTS: &str = "<|plamo:begin_tool_requests:plamo|>";
const END_TOOL_REQUESTS: &str = "<|plamo:end_tool_requests:plamo|>";
const BEGIN_TOOL_REQUEST: &str = "<|plamo:begin_tool_request:plamo|>";
const END_TOOL_REQUEST: &str = "<|plamo:end_tool_request:plamo|>";
const BEGIN_TOOL_NAME: &str = "<|plamo:begin_tool_name:plamo|>";
const END_TOOL_NAME: &str = "<|plamo:end_tool_name:plamo|>";
const BEGIN_TOOL_ARGUMENTS: &str = "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>";
const END_TOOL_ARGUMENTS: &str = "<|plamo:end_tool_arguments:plamo|>";
const BEGIN_THINK: &str = "<|plamo:begin_think:plamo|>";
const END_THINK: &str = "<|plamo:end_think:plamo|>";
const EOT: &str = "<|plamo:tag|>";
/// Where every multi-token marker begins.
const MARKER: &str = "<|plamo:";

fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| {
        let mut terminals = vec![
            ("TOOL_REQUESTS_START", vec![BEGIN_TOOL_REQUESTS]),
            ("TOOL_REQUESTS_END", vec![END_TOOL_REQUESTS]),
            ("TOOL_REQUEST_START", vec![BEGIN_TOOL_REQUEST]),
            ("TOOL_REQUEST_END", vec![END_TOOL_REQUEST]),
            ("TOOL_NAME_START", vec![BEGIN_TOOL_NAME]),
            ("TOOL_NAME_END", vec![END_TOOL_NAME]),
            ("TOOL_ARGS_START", vec![BEGIN_TOOL_ARGUMENTS]),
            ("TOOL_ARGS_END", vec![END_TOOL_ARGUMENTS]),
            ("EOT", vec![EOT]),
        ];
        let mut token_id_terminals = vec![("EOT", EOT)];
        let mut transitions = Vec::new();
        if thinking {
            terminals.splice(0..0, [("THINK_START", vec![BEGIN_THINK]), ("THINK_END", vec![END_THINK])]);
            token_id_terminals.extend([("THINK_START", BEGIN_THINK), ("THINK_END", END_THINK)]);
            transitions.extend([
                ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
                ((S::Content, "THINK_START"), tr(S::Reasoning, &[E::ReasoningStart])),
                ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
                ((S::Content, "THINK_END"), tr(S::Content, &[])),
                ((S::Reasoning, "TOOL_REQUESTS_START"), tr(S::ToolPreamble, &[E::ReasoningEnd])),
            ]);
        }
        transitions.extend([
            ((S::Content, "TOOL_REQUESTS_START"), tr(S::ToolPreamble, &[])),
            ((S::ToolPreamble, "TOOL_REQUEST_START"), tr(S::ToolPreamble, &[])),
            ((S::ToolPreamble, "TOOL_NAME_START"), tr(S::ToolName, &[E::ToolCallStart])),
            ((S::ToolName, "TOOL_NAME_END"), tr(S::ToolPreamble, &[])),
            ((S::ToolPreamble, "TOOL_ARGS_START"), tr(S::ToolArgs, &[])),
            ((S::ToolArgs, "TOOL_ARGS_END"), tr(S::ToolBetween, &[])),
            ((S::ToolBetween, "TOOL_REQUEST_END"), tr(S::ToolPreamble, &[E::ToolCallEnd])),
            ((S::ToolPreamble, "TOOL_REQUESTS_END"), tr(S::Content, &[])),
            // The end of turn, wherever it comes, leaves nothing visible.
            ((S::Reasoning, "EOT"), tr(S::Content, &[E::ReasoningEnd])),
            ((S::Content, "EOT"), tr(S::Content, &[])),
            ((S::ToolPreamble, "EOT"), tr(S::Content, &[])),
            ((S::ToolName, "EOT"), tr(S::Content, &[])),
            ((S::ToolArgs, "EOT"), tr(S::Content, &[])),
            ((S::ToolBetween, "EOT"), tr(S::Content, &[])),
        ]);
        EngineConfig {
            name: "plamo3",
            terminals,
            token_id_terminals,
            transitions,
            content_events: EngineConfig::default_content_events(),
            initial_state: if thinking { S::Reasoning } else { S::Content },
            wait_for_reasoning: None,
            tool_args_json: true,
            tool_call_body_array: false,
            preserve_tokens: vec!["<|plamo:begin_", "<|plamo:end_", ":plamo|>"],
            turn_boundary_tokens: Vec::new(),
            strip_trailing_reasoning_whitespace: false,
            arg_syntax: None,
            validate_tool_names: false,
            strip_tool_names: false,
            drop_whitespace_only_content_before_tools: true,
            strip_content_whitespace_with_tools: false,
            stream_text_after_calls: false,
        }
    })
}

/// `chat_template_kwargs.enable_thinking`, on unless given falsy.
fn thinking(ctx: &ChatContext) -> bool {
    ctx.template_kwargs.get("enable_thinking").is_none_or(crate::pycompat::truthy)
}

/// The reasoning markers' ids, and the end of turn's.
#[derive(Clone)]
struct Markers {
    start: Vec<i64>,
    end: Vec<i64>,
    eot: Option<i64>,
}

impl Markers {
    fn of(model: &Model) -> Markers {
        Markers {
            start: model.encode_plain(BEGIN_THINK),
            end: model.encode_plain(END_THINK),
            eot: model.tokenizer.token_to_id(EOT).map(i64::from),
        }
    }
}

fn starts_at(ids: &[i64], i: usize, seq: &[i64]) -> bool {
    !seq.is_empty() && ids[i..].starts_with(seq)
}

struct Plamo3Reasoning {
    engine: EngineReasoning,
    model: Arc<Model>,
    markers: Markers,
    thinking: bool,
}

impl Plamo3Reasoning {
    fn strip(&self, text: Option<String>) -> Option<String> {
        text.and_then(|t| strip_unfinished(&t, MARKER, config(self.thinking), &self.model))
    }
}

impl ReasoningParser for Plamo3Reasoning {
    fn extract_reasoning(&self, text: &str, ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let (reasoning, content) = self.engine.extract_reasoning(text, ctx);
        (self.strip(reasoning), content)
    }

    /// The last reasoning marker decides, read as id sequences; an end of
    /// turn before any means reasoning is open.
    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        if !self.thinking {
            return true;
        }
        for i in (0..ids.len()).rev() {
            if starts_at(ids, i, &self.markers.end) {
                return true;
            }
            if starts_at(ids, i, &self.markers.start) || Some(ids[i]) == self.markers.eot {
                return false;
            }
        }
        false
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        let end = &self.markers.end;
        if !self.thinking || end.is_empty() || ids.len() < end.len() {
            return ids.to_vec();
        }
        (0..=ids.len() - end.len()).rev().find(|&i| ids[i..].starts_with(end)).map_or(ids.to_vec(), |i| ids[i + end.len()..].to_vec())
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        self.engine.extract_reasoning_streaming(t, ids)
    }

    fn adjust_initial_state_from_prompt(&mut self, prompt: &[i64]) {
        self.engine.adjust_initial_state_from_prompt(prompt);
    }

    fn set_prompt_token_ids(&mut self, prompt: &[i64]) {
        self.engine.set_prompt_token_ids(prompt);
    }

    fn engine_based(&self) -> bool {
        true
    }

    /// Without thinking, `is_reasoning_end` holds for any prompt: the
    /// whole output is content, in batch and stream alike.
    fn passthrough(&self) -> bool {
        !self.thinking
    }

    fn engine_confirmed_end(&self) -> bool {
        self.engine.engine_confirmed_end()
    }

    fn end_marker_dropped_after_end(&self) -> Option<(i64, &str)> {
        self.engine.end_marker_dropped_after_end()
    }

    fn finish_streaming(&mut self) -> Option<Delta> {
        let mut d = self.engine.raw_finish()?;
        d.reasoning = self.strip(d.reasoning.take());
        (d.reasoning.is_some() || d.content.is_some()).then_some(d)
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        self.engine.snapshot()
    }
}

struct Factory;

impl ReasoningParserFactory for Factory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let thinking = thinking(ctx);
        Box::new(Plamo3Reasoning {
            engine: EngineReasoning::new(config(thinking), model.clone()),
            model: model.clone(),
            markers: Markers::of(model),
            thinking,
        })
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }
}

impl ToolParserFactory for Factory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, with_reasoning: bool) -> Box<dyn ToolParser> {
        let mut tools = EngineTools::new(config(thinking(ctx)), model.clone(), ctx.tools.clone(), !with_reasoning);
        tools.first_arg_chunk_streams = true;
        tools.unfinished_marker = Some(MARKER);
        Box::new(tools)
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }

    fn tag_model(&self) -> Option<&'static TagModel> {
        Some(&TAG)
    }
}

/// vLLM's `plamo3` structural tag: one tool-requests block of requests.
fn tag_for(tools: &[TagTool], choice: Choice) -> serde_json::Value {
    let requests: Vec<_> = tools
        .iter()
        .map(|t| {
            let begin = format!("{BEGIN_TOOL_REQUEST}{BEGIN_TOOL_NAME}{}{END_TOOL_NAME}{BEGIN_TOOL_ARGUMENTS}", t.name);
            tag(&begin, content(t.schema(), "json"), &format!("{END_TOOL_ARGUMENTS}{END_TOOL_REQUEST}"))
        })
        .collect();
    let block = json!({
        "type": "tag",
        "begin": BEGIN_TOOL_REQUESTS,
        "content": separated(requests, "", choice == Choice::Forced),
        "end": [END_TOOL_REQUESTS, format!("{END_TOOL_REQUESTS}{EOT}")],
    });
    match choice {
        Choice::Auto => triggered(&[BEGIN_TOOL_REQUESTS], vec![block], false, &[]),
        _ => block,
    }
}

static TAG: TagModel = TagModel { name: "plamo3", build: tag_for, default_level: StrictLevel::Auto };

static REASONING: ReasoningFamily = Family { names: &["plamo3"], needs: "", load: |_| Ok(Arc::new(Factory)) };
static TOOLS: ToolFamily = Family { names: &["plamo3"], needs: "", load: |_| Ok(Arc::new(Factory)) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Arc<Model> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/models/plamo3");
        Arc::new(Model::load_dir(&dir).expect("the plamo3 fixture"))
    }

    fn reasoning(model: &Arc<Model>, thinking: bool) -> Plamo3Reasoning {
        Plamo3Reasoning {
            engine: EngineReasoning::new(config(thinking), model.clone()),
            model: model.clone(),
            markers: Markers::of(model),
            thinking,
        }
    }

    #[test]
    fn reasoning_ends_by_id_sequence_and_cut_markers_are_dropped() {
        let m = model();
        let r = reasoning(&m, true);
        let ids = |t: &str| m.encode_plain(t);
        assert!(r.is_reasoning_end(&ids(&format!("x{END_THINK}y"))));
        assert!(!r.is_reasoning_end(&ids(&format!("{END_THINK}y{BEGIN_THINK}z"))));
        assert!(reasoning(&m, false).is_reasoning_end(&[]));
        assert_eq!(r.extract_content_ids(&ids(&format!("a{END_THINK}b"))), ids("b"));
        // A marker the text ends inside goes; a complete one stays.
        let ctx = ChatContext::from_request(&Default::default(), &Default::default());
        let (reasoning_text, _) = r.extract_reasoning("thinking<|plamo:end_", &ctx);
        assert_eq!(reasoning_text.as_deref(), Some("thinking"));
        let cfg = config(true);
        assert_eq!(strip_unfinished("a<|plamo:tag|>", MARKER, cfg, &m).as_deref(), Some("a<|plamo:tag|>"));
        assert_eq!(strip_unfinished("<|plamo:begin_", MARKER, cfg, &m), None);
    }

    #[test]
    fn forced_choices_get_the_tool_requests_tag() {
        let params = json!({"type": "object"});
        let tools = [TagTool { name: "f", parameters: Some(&params), strict: false }];
        let tag = tag_for(&tools, Choice::Forced);
        assert_eq!(tag["begin"], BEGIN_TOOL_REQUESTS);
        assert_eq!(tag["content"]["stop_after_first"], true);
        assert_eq!(tag["end"][1], format!("{END_TOOL_REQUESTS}{EOT}"));
        assert_eq!(tag_for(&tools, Choice::Auto)["triggers"][0], BEGIN_TOOL_REQUESTS);
    }
}
