//! `ParserEngineReasoningAdapter`: an engine used as a reasoning parser
//! (tool markup passes through as text, for the tool parser to see).

use std::collections::HashSet;
use std::sync::Arc;

use super::{EngineConfig, Event, EventType, State, StreamingEngine};
use crate::model::Model;
use crate::parse::{ChatContext, Ids, ReasoningParser, Texts};
use crate::wire::response::Delta;

pub struct EngineReasoning {
    /// Batch returns the text untouched when the format's thinking is off
    /// (`Qwen3Parser.extract_reasoning`).
    pub passthrough_without_thinking: bool,
    /// `extract_content_ids` only returns ids after `</think>` (MiniMax).
    pub content_ids_after_end_only: bool,
    /// ...or, without `</think>`, the ids from the last of this token on
    /// (Kimi's tool-section opener).
    pub content_ids_fallback: Option<i64>,
    /// `extract_content_ids` cuts after the last `</think>` even where a
    /// call marker ended reasoning before it, as vLLM does (a family whose
    /// stream follows vLLM's there).
    pub content_ids_after_last_end: bool,
    /// Without the prompt, the tool phase starts with the output
    /// (`ReasoningParser::ended_before_output`).
    pub ended_before_output: bool,
    config: &'static EngineConfig,
    model: Arc<Model>,
    engine: StreamingEngine,
    has_reasoning: bool,
    reasoning_ended: bool,
    prompt_closes_reasoning: bool,
    streaming_initialized: bool,
    deferred_content: String,
    deferred_reasoning: String,
    content_has_nonws: bool,
    start_id: Option<i64>,
    end_id: Option<i64>,
    boundary_ids: HashSet<i64>,
    end_ids: HashSet<i64>,
}

impl EngineReasoning {
    /// A family whose thinking a request switches (`chat_template_kwargs`):
    /// `config` is the one for `thinking`, and without thinking batch
    /// returns the whole text as content.
    pub fn switched(config: fn(bool) -> &'static EngineConfig, thinking: bool, model: &Arc<Model>) -> EngineReasoning {
        let mut engine = EngineReasoning::new(config(thinking), model.clone());
        engine.passthrough_without_thinking = !thinking;
        engine
    }

    pub fn new(config: &'static EngineConfig, model: Arc<Model>) -> EngineReasoning {
        let id = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
        let mut engine = StreamingEngine::new(config, &model);
        engine.skip_tool_parsing = true;
        let has_reasoning = config.token_id_terminal("THINK_END").is_some()
            || config.terminals.iter().any(|(n, _)| *n == "THINK_START" || *n == "THINK_END")
            || config.initial_state == State::Reasoning;
        let start_id = config.token_id_terminal("THINK_START").and_then(id);
        let end_id = config.token_id_terminal("THINK_END").and_then(id);
        let boundary_ids = config.turn_boundary_tokens.iter().filter_map(|t| id(t)).collect();
        let end_ids = derive_end_ids(config, &model);
        EngineReasoning {
            passthrough_without_thinking: false,
            content_ids_after_end_only: false,
            content_ids_fallback: None,
            content_ids_after_last_end: false,
            ended_before_output: false,
            config,
            model,
            engine,
            has_reasoning,
            reasoning_ended: !has_reasoning,
            prompt_closes_reasoning: false,
            streaming_initialized: false,
            deferred_content: String::new(),
            deferred_reasoning: String::new(),
            content_has_nonws: false,
            start_id,
            end_id,
            boundary_ids,
            end_ids,
        }
    }

    fn wait_for_reasoning(&self) -> bool {
        self.config.wait_for_reasoning.unwrap_or(self.config.initial_state == State::Reasoning)
    }

    fn reset(&mut self, initial: Option<State>) {
        let prompt_closed = initial.is_none() && self.prompt_closes_reasoning;
        self.engine.reset(if prompt_closed { Some(State::Content) } else { initial });
        self.reasoning_ended = !self.has_reasoning || prompt_closed;
        self.deferred_content.clear();
        self.deferred_reasoning.clear();
        self.content_has_nonws = false;
    }

    fn initialize_streaming(&mut self) {
        if !self.streaming_initialized {
            self.streaming_initialized = true;
            self.reset(None);
        }
    }

    /// `_events_to_delta` for reasoning and text events.
    fn events_to_delta(&mut self, events: Vec<Event>, finished: bool) -> Option<Delta> {
        if events.is_empty() && self.deferred_content.is_empty() {
            return None;
        }
        let mut content_parts: Vec<String> = Vec::new();
        let mut reasoning = String::new();
        for e in events {
            match e.kind {
                EventType::TextChunk => content_parts.push(e.value),
                EventType::ReasoningChunk => reasoning.push_str(&e.value),
                EventType::ReasoningEnd => self.reasoning_ended = true,
                _ => {}
            }
        }
        if !self.deferred_content.is_empty() {
            content_parts.insert(0, std::mem::take(&mut self.deferred_content));
        }
        let mut content: String = content_parts.concat();
        if !self.content_has_nonws && !content.is_empty() {
            if !content.trim().is_empty() {
                self.content_has_nonws = true;
            } else if !finished {
                // Whitespace before any real content waits for what follows.
                self.deferred_content = std::mem::take(&mut content);
            }
        }
        let content = (!content.is_empty()).then_some(content);
        let reasoning = (!reasoning.is_empty()).then_some(reasoning);
        if content.is_none() && reasoning.is_none() {
            return None;
        }
        Some(Delta { content, reasoning, ..Default::default() })
    }

    /// The engine's state before the next streamed delta.
    pub fn streaming_state(&mut self) -> State {
        self.initialize_streaming();
        self.engine.state
    }

    /// Start the stream inside reasoning (a prompt that left it open).
    pub fn start_in_reasoning(&mut self) {
        self.start_in(State::Reasoning);
    }

    /// Start the stream in `state` (where the prompt left the format).
    pub fn start_in(&mut self, state: State) {
        self.engine.reset(Some(state));
        self.streaming_initialized = true;
    }

    /// The streamed events of the engine's held text, as a delta (before a
    /// family's override), when the stream ends.
    pub fn raw_finish(&mut self) -> Option<Delta> {
        ReasoningParser::finish_streaming(self)
    }

    /// A streamed delta as `_events_to_delta` makes it, before trailing
    /// reasoning whitespace is held back: what a family's override sees
    /// (`strip_trailing_reasoning` then finishes the delta).
    pub fn raw_delta(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        self.initialize_streaming();
        let model = self.model.clone();
        let events = self.engine.feed(&model, t.delta, ids.delta);
        self.events_to_delta(events, false)
    }

    /// The token (its text) is a special token the engine drops.
    pub fn drops_token(&self, token: &str) -> bool {
        self.model.tokenizer.token_to_id(token).is_some_and(|id| self.engine.drops(i64::from(id)))
    }

    pub fn strip_trailing_reasoning(&mut self, delta: Option<Delta>) -> Option<Delta> {
        if !self.config.strip_trailing_reasoning_whitespace {
            return delta;
        }
        hold_trailing_reasoning(&mut self.deferred_reasoning, self.reasoning_ended, delta)
    }
}

/// `_strip_trailing_reasoning`: a delta's trailing reasoning whitespace is
/// held in `held` until more reasoning follows, and dropped once reasoning
/// has ended; a delta left empty becomes none.
pub(crate) fn hold_trailing_reasoning(held: &mut String, reasoning_ended: bool, delta: Option<Delta>) -> Option<Delta> {
    match delta {
        Some(mut d) if d.reasoning.is_some() => {
            let combined = format!("{held}{}", d.reasoning.take().unwrap_or_default());
            let trimmed = combined.trim_end();
            *held = combined[trimmed.len()..].to_string();
            d.reasoning = (!trimmed.is_empty()).then(|| trimmed.to_string());
            (d.reasoning.is_some() || d.content.is_some() || !d.tool_calls.is_empty()).then_some(d)
        }
        other => {
            if reasoning_ended {
                held.clear();
            }
            other
        }
    }
}

/// `_derive_reasoning_end_token_ids`: the single tokens that end reasoning.
fn derive_end_ids(config: &EngineConfig, model: &Model) -> HashSet<i64> {
    let mut ends: Vec<(&str, State)> = Vec::new();
    for ((state, terminal), t) in &config.transitions {
        if *state != State::Reasoning {
            continue;
        }
        if t.events.contains(&EventType::ReasoningEnd) {
            if !ends.iter().any(|(n, _)| n == terminal) {
                ends.push((terminal, t.next));
            }
        } else if t.next != State::Reasoning {
            return HashSet::new();
        }
    }
    let mut ids = HashSet::new();
    for (terminal, next) in ends {
        match config.token_id_terminal(terminal).and_then(|t| model.tokenizer.token_to_id(t)) {
            Some(id) => {
                ids.insert(i64::from(id));
            }
            None if next == State::Content => return HashSet::new(),
            None => {}
        }
    }
    ids
}

impl ReasoningParser for EngineReasoning {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        if self.passthrough_without_thinking {
            return (None, Some(text.to_string()));
        }
        // Batch runs a fresh engine over the whole text.
        let mut fresh = EngineReasoning::new(self.config, self.model.clone());
        fresh.prompt_closes_reasoning = self.prompt_closes_reasoning;
        fresh.reset(None);
        let model = fresh.model.clone();
        let mut events = fresh.engine.feed(&model, text, &[]);
        events.extend(fresh.engine.finish());
        let (mut reasoning, mut content) = (String::new(), String::new());
        for e in events {
            match e.kind {
                EventType::ReasoningChunk => reasoning.push_str(&e.value),
                EventType::TextChunk => content.push_str(&e.value),
                _ => {}
            }
        }
        if self.config.strip_trailing_reasoning_whitespace {
            reasoning = reasoning.trim_end().to_string();
        }
        ((!reasoning.is_empty()).then_some(reasoning), (!content.is_empty()).then_some(content))
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        let start_opens = self
            .config
            .transition(self.config.initial_state, "THINK_START")
            .is_some_and(|t| t.next == State::Reasoning);
        for id in ids.iter().rev() {
            if self.end_ids.contains(id) {
                return true;
            }
            if Some(*id) == self.start_id {
                if start_opens {
                    return false;
                }
                break;
            }
            if self.boundary_ids.contains(id) {
                break;
            }
        }
        !self.wait_for_reasoning()
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        if self.content_ids_after_end_only {
            if let Some(i) = self.end_id.and_then(|end| ids.iter().rposition(|&x| x == end)) {
                return ids[i + 1..].to_vec();
            }
            if let Some(i) = self.content_ids_fallback.and_then(|m| ids.iter().rposition(|&x| x == m)) {
                return ids[i..].to_vec();
            }
            return Vec::new();
        }
        if !self.wait_for_reasoning() {
            return ids.to_vec();
        }
        let implicit_end = || {
            let start = ids.iter().rposition(|x| self.boundary_ids.contains(x)).map_or(0, |i| i + 1);
            ids[start..].iter().position(|x| self.end_ids.contains(x)).map(|i| start + i)
        };
        if let Some(end) = self.end_id {
            if let Some(i) = ids.iter().rposition(|&x| x == end) {
                // A call marker inside the think block ended the reasoning
                // before this `</think>` (vLLM cuts after the last one and
                // loses the call's marker ids): the content starts at that
                // marker, without the `</think>` the engine dropped from its
                // text, as it would one token per chunk.
                let implicit = implicit_end().filter(|_| !self.content_ids_after_last_end);
                if let Some(k) = implicit.filter(|&k| k < i && ids[k] != end) {
                    return ids[k..].iter().copied().filter(|&x| x != end).collect();
                }
                return ids[i + 1..].to_vec();
            }
        }
        if !self.end_ids.is_empty() {
            if let Some(i) = implicit_end() {
                return ids[i..].to_vec();
            }
        }
        ids.to_vec()
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        let delta = self.raw_delta(t, ids);
        self.strip_trailing_reasoning(delta)
    }

    fn set_prompt_token_ids(&mut self, prompt: &[i64]) {
        self.prompt_closes_reasoning = self.config.initial_state == State::Reasoning
            && !self.boundary_ids.is_empty()
            && self.is_reasoning_end(prompt);
    }

    fn engine_based(&self) -> bool {
        true
    }

    fn passthrough(&self) -> bool {
        self.passthrough_without_thinking
    }

    fn ended_before_output(&self) -> bool {
        self.ended_before_output
    }

    fn engine_confirmed_end(&self) -> bool {
        self.reasoning_ended
    }

    fn end_marker_dropped_after_end(&self) -> Option<(i64, &str)> {
        let text = self.config.token_id_terminal("THINK_END")?;
        let dropped = self.config.transitions.iter().any(|((from, term), t)| {
            *from == State::Content && *term == "THINK_END" && t.next == State::Content && t.events.is_empty()
        });
        dropped.then_some((self.end_id?, text))
    }

    fn finish_streaming(&mut self) -> Option<Delta> {
        let events = self.engine.finish();
        if events.is_empty() && self.deferred_content.is_empty() {
            return None;
        }
        self.events_to_delta(events, true)
    }
}

crate::impl_snapshot!(EngineReasoning {
    reasoning_ended,
    prompt_closes_reasoning,
    streaming_initialized,
    deferred_content,
    deferred_reasoning,
    content_has_nonws,
} nested { engine });
