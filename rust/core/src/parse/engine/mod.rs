//! vLLM 0.33's declarative parser engine (`vllm/parser/engine/`): a format
//! is data (terminals, which of them are single tokens, a transition table
//! over a few states, what text means in each state) and one engine runs
//! them all. Ported to Rust; the families live in `parse::families`.

use serde_json::{Map, Value};

/// A tool's JSON-schema `properties`.
pub type Properties = Map<String, Value>;

mod factory;
pub mod json_member;
mod lexer;
pub mod marker;
mod reasoning;
mod scanner;
mod streaming;
mod tools;

pub use factory::{EngineReasoningFamily, EngineToolFamily, VllmStreamReasoningFamily};
pub(crate) use reasoning::hold_trailing_reasoning;
pub use reasoning::EngineReasoning;
pub use streaming::StreamingEngine;
pub use tools::EngineTools;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum State {
    Content,
    Reasoning,
    MessageHeader,
    ToolPreamble,
    ToolName,
    ToolArgs,
    ToolBetween,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    TextChunk,
    ReasoningStart,
    ReasoningChunk,
    ReasoningEnd,
    ToolCallStart,
    ToolName,
    ArgValueChunk,
    ToolCallEnd,
}

/// A semantic event of the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub kind: EventType,
    pub value: String,
    pub tool_index: i64,
    pub token_count: usize,
}

#[derive(Debug, Clone)]
pub struct Transition {
    pub next: State,
    pub events: &'static [EventType],
    pub skip_in_token_id_mode: bool,
}

/// A family's two configs, thinking on and off, each built once on first use.
pub struct ByThinking {
    on: std::sync::OnceLock<EngineConfig>,
    off: std::sync::OnceLock<EngineConfig>,
}

impl Default for ByThinking {
    fn default() -> Self {
        Self::new()
    }
}

impl ByThinking {
    pub const fn new() -> Self {
        ByThinking { on: std::sync::OnceLock::new(), off: std::sync::OnceLock::new() }
    }

    /// The config for `thinking`, from `build(thinking)` the first time.
    pub fn get(&'static self, thinking: bool, build: impl FnOnce(bool) -> EngineConfig) -> &'static EngineConfig {
        let cell = if thinking { &self.on } else { &self.off };
        cell.get_or_init(|| build(thinking))
    }
}

/// `ParserEngineConfig`: one model format, as data.
#[derive(Debug)]
pub struct EngineConfig {
    pub name: &'static str,
    /// Terminal name → its literal spellings.
    pub terminals: Vec<(&'static str, Vec<&'static str>)>,
    /// Terminals matched by token id: name → token text.
    pub token_id_terminals: Vec<(&'static str, &'static str)>,
    pub transitions: Vec<((State, &'static str), Transition)>,
    /// What text means in each state (`None` = dropped).
    pub content_events: Vec<(State, EventType)>,
    pub initial_state: State,
    pub wait_for_reasoning: Option<bool>,
    pub tool_args_json: bool,
    pub tool_call_body_array: bool,
    pub preserve_tokens: Vec<&'static str>,
    pub turn_boundary_tokens: Vec<&'static str>,
    pub strip_trailing_reasoning_whitespace: bool,
    /// How tool arguments are written (`None`: JSON, passed through).
    pub arg_syntax: Option<&'static ArgSyntax>,
    /// Only names of offered tools become calls.
    pub validate_tool_names: bool,
    /// Tool names are stripped of surrounding whitespace (GLM).
    pub strip_tool_names: bool,
    /// Streamed whitespace-only content is dropped once a call has started.
    pub drop_whitespace_only_content_before_tools: bool,
    /// Batch content next to tool calls is stripped.
    pub strip_content_whitespace_with_tools: bool,
    /// Streams send text after a streamed call when vLLM's stream does
    /// (later, with a following delta), where batch drops it. Off: such
    /// text is dropped, as batch drops it.
    pub stream_text_after_calls: bool,
}

/// How a family writes tool arguments: vLLM's `arg_converter` and the
/// streamer of an open trailing string value. A family declares one as a
/// value, so the engine names no family; `None` in a config means JSON
/// arguments passed through as the model wrote them (no converter: raw
/// deltas stream, batch keeps the stripped text).
#[derive(Debug)]
pub struct ArgSyntax {
    /// `arg_converter(raw, partial)`: the arguments so far as JSON text;
    /// `None` where vLLM's converter raises (the delta is skipped; batch
    /// falls back to reading the body as JSON). The properties are those of
    /// the call (MiniMax-M3's converter reads them; see `EngineTools`).
    pub convert: fn(&str, bool, Option<&Properties>) -> Option<String>,
    /// `stream_arg_deltas`: arguments stream as they convert; else they
    /// are sent once, when the call ends.
    pub stream_deltas: bool,
    /// `arg_structural_chars`: a delta without any of these (and no open
    /// value to extend) cannot change the converted arguments.
    pub structural_chars: Option<&'static str>,
    /// Start streaming the last value of `raw` when it is an open string.
    pub open_value: fn(&str) -> Option<OpenValue>,
    /// The JSON-escaped text a delta adds to the open value; `None` when
    /// the value may have ended (the caller re-converts).
    pub extend_value: fn(&mut OpenValue, &str) -> Option<String>,
}

/// What streaming an open value needs to remember between deltas: the
/// text that could still grow into the value's end, and the syntax's flags.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpenValue {
    pub window: String,
    pub started: bool,
    pub held: String,
    /// Gemma 4's `(` minus `)` count so far.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub balance: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl EngineConfig {
    pub fn transition(&self, state: State, terminal: &str) -> Option<&Transition> {
        self.transitions.iter().find(|((s, t), _)| *s == state && *t == terminal).map(|(_, tr)| tr)
    }

    pub fn content_event(&self, state: State) -> Option<EventType> {
        self.content_events.iter().find(|(s, _)| *s == state).map(|(_, e)| *e)
    }

    pub fn token_id_terminal(&self, name: &str) -> Option<&'static str> {
        self.token_id_terminals.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// The default `content_events` of vLLM's config.
    pub fn default_content_events() -> Vec<(State, EventType)> {
        vec![
            (State::Content, EventType::TextChunk),
            (State::Reasoning, EventType::ReasoningChunk),
            (State::ToolName, EventType::ToolName),
            (State::ToolArgs, EventType::ArgValueChunk),
        ]
    }
}

/// Shorthand for a transition.
pub fn tr(next: State, events: &'static [EventType]) -> Transition {
    Transition { next, events, skip_in_token_id_mode: false }
}
