//! Gemma 4 (`vllm/parser/gemma4.py`): `<|channel>thought\n...<channel|>`
//! reasoning and `<|tool_call>call:NAME{key:<|"|>v<|"|>}<tool_call|>` calls
//! in one engine config. The family's own steps around the engine: a first
//! delta that starts inside a thought gets its `<|channel>` back, the
//! `thought\n` label is cut from reasoning, and a prompt that ends inside an
//! open channel starts the stream in reasoning.

mod args;

use std::sync::Arc;


use crate::model::Model;
use crate::parse::engine::{
    tr, ByThinking, EngineConfig, EngineReasoning, EngineTools, EventType as E, State as S,
};
use crate::parse::family::{Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use crate::parse::{ChatContext, Extracted, Ids, ReasoningParser, Registry, Snapshot, Texts, ToolParser};
use crate::wire::response::Delta;

const CHANNEL_START: &str = "<|channel>";
const CHANNEL_END: &str = "<channel|>";
const THOUGHT_PREFIX: &str = "thought\n";

fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, |thinking| EngineConfig {
        name: "gemma4",
        terminals: vec![
            ("THINK_START", vec![CHANNEL_START]),
            ("THINK_END", vec![CHANNEL_END]),
            ("TOOL_START", vec!["<|tool_call>"]),
            ("TOOL_END", vec!["<tool_call|>"]),
            ("CALL_PREFIX", vec!["call:"]),
            ("COLON", vec![":"]),
            ("OPEN_BRACE", vec!["{"]),
            ("OPEN_PAREN", vec!["("]),
        ],
        token_id_terminals: vec![
            ("THINK_START", CHANNEL_START),
            ("THINK_END", CHANNEL_END),
            ("TOOL_START", "<|tool_call>"),
            ("TOOL_END", "<tool_call|>"),
        ],
        transitions: vec![
            ((S::Content, "THINK_START"), tr(S::Reasoning, &[E::ReasoningStart])),
            ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
            ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
            ((S::Reasoning, "TOOL_START"), tr(S::ToolPreamble, &[E::ReasoningEnd, E::ToolCallStart])),
            ((S::Content, "TOOL_START"), tr(S::ToolPreamble, &[E::ReasoningEnd, E::ToolCallStart])),
            ((S::ToolPreamble, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
            ((S::ToolPreamble, "CALL_PREFIX"), tr(S::ToolName, &[])),
            // Some checkpoints write `<|tool_call>:name{...}`.
            ((S::ToolPreamble, "COLON"), tr(S::ToolName, &[])),
            ((S::ToolName, "OPEN_BRACE"), tr(S::ToolArgs, &[])),
            ((S::ToolName, "OPEN_PAREN"), tr(S::ToolArgs, &[])),
            ((S::ToolName, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
            ((S::ToolArgs, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
            ((S::Content, "TOOL_END"), tr(S::Content, &[])),
            ((S::Content, "THINK_END"), tr(S::Content, &[])),
        ],
        content_events: EngineConfig::default_content_events(),
        initial_state: S::Content,
        // With thinking off the templates write no marker at all.
        wait_for_reasoning: Some(thinking),
        tool_args_json: false,
        tool_call_body_array: false,
        preserve_tokens: vec!["<|\"|>"],
        turn_boundary_tokens: vec!["<|turn>", "<|tool_response>"],
        strip_trailing_reasoning_whitespace: true,
        arg_syntax: Some(&args::ARGS),
        validate_tool_names: false,
        // Batch strips a call's name; streams send it as written, as
        // vLLM's do.
        strip_tool_names: false,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: true,
        stream_text_after_calls: true,
    })
}

/// `thinking`: `chat_template_kwargs.enable_thinking`, off by default.
fn thinking(ctx: &ChatContext) -> bool {
    ctx.template_kwargs.get("enable_thinking").is_some_and(crate::pycompat::truthy)
}

/// The markers' ids (`None` where the vocabulary lacks one).
#[derive(Clone, Copy)]
struct Ids4 {
    channel_start: Option<i64>,
    channel_end: Option<i64>,
    boundaries: [Option<i64>; 4],
}

impl Ids4 {
    fn of(model: &Model) -> Ids4 {
        let id = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
        Ids4 {
            channel_start: id(CHANNEL_START),
            channel_end: id(CHANNEL_END),
            boundaries: [id(CHANNEL_END), id("<|tool_call>"), id("<|turn>"), id("<|tool_response>")],
        }
    }

    /// `_preprocess_feed` on the first delta: text that starts inside a
    /// thought (or closes one) gets its `<|channel>` back.
    fn first_feed(&self, text: &str, ids: &[i64], in_content: bool) -> Option<(String, Vec<i64>)> {
        let start = self.channel_start?;
        self.channel_end?;
        if text.is_empty() || !in_content || text.contains(CHANNEL_START) {
            return None;
        }
        let inject = text.contains(CHANNEL_END) || text.starts_with(THOUGHT_PREFIX) || text == "thought";
        let ids = if ids.is_empty() { Vec::new() } else { std::iter::once(start).chain(ids.iter().copied()).collect() };
        inject.then(|| (format!("{CHANNEL_START}{text}"), ids))
    }
}

/// Cuts the `thought\n` label from the first reasoning of a stream
/// (`Gemma4Parser._events_to_delta`).
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct ThoughtLabel {
    text: String,
    stripped: bool,
}

impl ThoughtLabel {
    fn apply(&mut self, delta: Option<Delta>, finished: bool) -> Option<Delta> {
        let mut d = delta?;
        let Some(reasoning) = d.reasoning.take() else { return Some(d) };
        if self.stripped {
            d.reasoning = Some(reasoning);
            return Some(d);
        }
        let before = self.text.chars().count();
        self.text.push_str(&reasoning);
        let prefix = THOUGHT_PREFIX.chars().count();
        if self.text.starts_with(THOUGHT_PREFIX) {
            if before >= prefix {
                self.stripped = true;
                d.reasoning = Some(reasoning);
                return Some(d);
            }
            let rest: String = reasoning.chars().skip(prefix - before).collect();
            self.stripped = true;
            if !rest.is_empty() {
                d.reasoning = Some(rest);
                return Some(d);
            }
            return (d.content.is_some() || !d.tool_calls.is_empty()).then_some(d);
        }
        if THOUGHT_PREFIX.starts_with(self.text.as_str()) {
            if finished {
                self.stripped = true;
            }
            return None;
        }
        self.stripped = true;
        d.reasoning = Some(self.text.clone());
        Some(d)
    }
}

struct Gemma4Reasoning {
    engine: EngineReasoning,
    ids: Ids4,
    first_feed: bool,
    label: ThoughtLabel,
}

impl ReasoningParser for Gemma4Reasoning {
    fn extract_reasoning(&self, text: &str, ctx: &ChatContext) -> (Option<String>, Option<String>) {
        let fed = self.ids.first_feed(text, &[], true);
        let text = fed.as_ref().map_or(text, |(t, _)| t.as_str());
        let (reasoning, content) = self.engine.extract_reasoning(text, ctx);
        let reasoning = reasoning.and_then(|r| match r.strip_prefix(THOUGHT_PREFIX) {
            Some(rest) => Some(rest.to_string()),
            None if r == "thought" => None,
            None => Some(r),
        });
        (reasoning.filter(|r| !r.is_empty()), content)
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        self.engine.is_reasoning_end(ids)
    }

    /// `<turn|>` and the other unconfigured special tokens never show.
    fn drops_token(&self, token: &str) -> bool {
        self.engine.drops_token(token)
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        self.engine.extract_content_ids(ids)
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let in_content = self.engine.streaming_state() == S::Content;
        let fed = if std::mem::take(&mut self.first_feed) { self.ids.first_feed(t.delta, ids.delta, in_content) } else { None };
        let delta = match &fed {
            Some((text, fed_ids)) => {
                let texts = Texts { previous: t.previous, current: t.current, delta: text };
                let ids = Ids { previous: ids.previous, current: ids.current, delta: fed_ids };
                self.engine.raw_delta(&texts, &ids)
            }
            None => self.engine.raw_delta(t, ids),
        };
        let delta = self.label.apply(delta, false);
        self.engine.strip_trailing_reasoning(delta)
    }

    /// `adjust_initial_state_from_prompt`: the prompt ends inside an open
    /// `<|channel>` block.
    fn adjust_initial_state_from_prompt(&mut self, prompt: &[i64]) {
        let Some(start) = self.ids.channel_start else { return };
        for &id in prompt.iter().rev() {
            if id == start {
                self.engine.start_in_reasoning();
                return;
            }
            if self.ids.boundaries.contains(&Some(id)) {
                return;
            }
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
        let delta = self.engine.raw_finish();
        self.label.apply(delta, true)
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

crate::impl_snapshot!(Gemma4Reasoning { first_feed, label } nested { engine });

/// `_strip_trailing_reasoning` for the tool engine, which vLLM runs on
/// every tool delta too: reasoning's trailing whitespace waits until more
/// reasoning follows (dropped once reasoning has ended).
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct TrailingSpace {
    held: String,
    reasoning_ended: bool,
}

impl TrailingSpace {
    fn apply(&mut self, delta: Option<Delta>) -> Option<Delta> {
        crate::parse::engine::hold_trailing_reasoning(&mut self.held, self.reasoning_ended, delta)
    }
}

struct Gemma4Tools {
    tools: EngineTools,
    ids: Ids4,
    first_feed: bool,
    label: ThoughtLabel,
    trailing: TrailingSpace,
}

impl ToolParser for Gemma4Tools {
    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        let fed = self.ids.first_feed(text, &[], true);
        self.tools.extract_tool_calls(fed.as_ref().map_or(text, |(t, _)| t.as_str()), ctx)
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        // The tool engine starts every stream in content.
        let fed = if std::mem::take(&mut self.first_feed) { self.ids.first_feed(t.delta, ids.delta, true) } else { None };
        let (delta, ended) = match &fed {
            Some((text, fed_ids)) => {
                let texts = Texts { previous: t.previous, current: t.current, delta: text };
                let ids = Ids { previous: ids.previous, current: ids.current, delta: fed_ids };
                self.tools.raw_streaming(&texts, &ids, ctx)
            }
            None => self.tools.raw_streaming(t, ids, ctx),
        };
        self.trailing.reasoning_ended |= ended;
        let delta = self.label.apply(delta, false);
        self.trailing.apply(delta)
    }

    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn drops_token(&self, token: &str) -> bool {
        self.tools.drops_token(token)
    }

    fn engine_based(&self) -> bool {
        true
    }

    fn finish_streaming(&mut self) -> Option<Delta> {
        let delta = self.tools.finish_streaming();
        self.label.apply(delta, true)
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

crate::impl_snapshot!(Gemma4Tools { first_feed, label, trailing } nested { tools });

struct Factory;

impl ReasoningParserFactory for Factory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        let mut engine = EngineReasoning::new(config(thinking(ctx)), model.clone());
        // A call inside the thought loses its markup's ids when the same
        // delta closes the thought: its text is content, as in vLLM's stream.
        engine.content_ids_after_last_end = true;
        Box::new(Gemma4Reasoning {
            engine,
            ids: Ids4::of(model),
            first_feed: true,
            label: ThoughtLabel::default(),
        })
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }

    /// vLLM's stream reads the prompt: with thinking off the template ends
    /// it in an empty `<|channel>thought\n<channel|>`, so reasoning has
    /// ended before the output and the tool engine reads all of it
    /// (reasoning it opens included), while batch splits reasoning first.
    fn stream_follows_vllm(&self) -> bool {
        true
    }
}

impl ToolParserFactory for Factory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, with_reasoning: bool) -> Box<dyn ToolParser> {
        let tools = EngineTools::new(config(thinking(ctx)), model.clone(), ctx.tools.clone(), !with_reasoning);
        Box::new(Gemma4Tools {
            tools,
            ids: Ids4::of(model),
            first_feed: true,
            label: ThoughtLabel::default(),
            trailing: TrailingSpace::default(),
        })
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }

    /// Forced choices are read in the model's own markup.
    fn native_forced_choices(&self) -> bool {
        true
    }
}

static REASONING: ReasoningFamily = Family { names: &["gemma4"], needs: "", load: |_| Ok(Arc::new(Factory)) };
static TOOLS: ToolFamily = Family { names: &["gemma4"], needs: "", load: |_| Ok(Arc::new(Factory)) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}
