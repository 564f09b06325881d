//! `StreamingParserEngine`: terminals from the scanner and the lexer drive
//! the config's transition table; text is classified by the current state.

use std::collections::{HashMap, HashSet};

use super::lexer::{IncrementalLexer, LexToken, LexerShape, CONTENT};
use super::scanner::{Item, Scanner, DROP};
use super::{EngineConfig, Event, EventType, State, Transition};
use crate::model::Model;

const TOOL_STATES: [State; 4] = [State::ToolPreamble, State::ToolName, State::ToolArgs, State::ToolBetween];

fn is_tool_state(s: State) -> bool {
    TOOL_STATES.contains(&s)
}

pub struct StreamingEngine {
    pub config: &'static EngineConfig,
    pub state: State,
    pub tool_index: i64,
    resolved_ids: HashMap<i64, String>,
    has_drops: bool,
    scanner: Scanner,
    lexer: IncrementalLexer,
    token_id_terminal_names: HashSet<String>,
    tool_terminals: HashSet<&'static str>,
    tool_exit_terminals: HashSet<&'static str>,
    reasoning_markup_terminals: HashSet<&'static str>,
    pub skip_tool_parsing: bool,
    pub skip_reasoning_parsing: bool,
    ever_had_token_ids: bool,
    message_header_buffer: String,
    message_header_tokens: usize,
    in_skipped_tool_span: bool,
    args_buffer: String,
    args_safe_end: usize,
    args_depth: i64,
    args_in_string: bool,
    args_escape: bool,
    array_started: bool,
    array_in_element: bool,
}

fn ev(kind: EventType, value: impl Into<String>, tool_index: i64, token_count: usize) -> Event {
    Event { kind, value: value.into(), tool_index, token_count }
}

impl StreamingEngine {
    pub fn new(config: &'static EngineConfig, model: &Model) -> StreamingEngine {
        let mut resolved_ids: HashMap<i64, String> = HashMap::new();
        for (name, text) in &config.token_id_terminals {
            if let Some(id) = model.tokenizer.token_to_id(text) {
                resolved_ids.insert(i64::from(id), (*name).to_string());
            }
        }
        // Special tokens the config does not name are dropped from the text.
        let configured: HashSet<&str> = config
            .token_id_terminals
            .iter()
            .map(|(_, t)| *t)
            .chain(config.terminals.iter().flat_map(|(_, lits)| lits.iter().copied()))
            .chain(config.preserve_tokens.iter().copied())
            .collect();
        let mut literal_terms: Vec<(String, String)> = config
            .terminals
            .iter()
            .flat_map(|(n, lits)| lits.iter().map(move |l| ((*n).to_string(), (*l).to_string())))
            .collect();
        let mut has_drops = false;
        for (id, text) in model.special_tokens() {
            if !configured.contains(text.as_str()) {
                resolved_ids.insert(*id, DROP.to_string());
                literal_terms.push((DROP.to_string(), text.clone()));
                has_drops = true;
            }
        }
        let token_id_terminal_names = resolved_ids.values().cloned().collect();
        let tool_terminals = config
            .transitions
            .iter()
            .filter(|((s, _), t)| is_tool_state(t.next) || is_tool_state(*s))
            .map(|((_, term), _)| *term)
            .collect();
        let tool_exit_terminals = config
            .transitions
            .iter()
            .filter(|((s, _), t)| is_tool_state(*s) && !is_tool_state(t.next))
            .map(|((_, term), _)| *term)
            .collect();
        let mut e = StreamingEngine {
            config,
            state: config.initial_state,
            tool_index: -1,
            resolved_ids: resolved_ids.clone(),
            has_drops,
            scanner: Scanner::new(resolved_ids),
            lexer: IncrementalLexer::new(LexerShape::shared(&literal_terms)),
            token_id_terminal_names,
            tool_terminals,
            tool_exit_terminals,
            reasoning_markup_terminals: HashSet::new(),
            skip_tool_parsing: false,
            skip_reasoning_parsing: false,
            ever_had_token_ids: false,
            message_header_buffer: String::new(),
            message_header_tokens: 0,
            in_skipped_tool_span: false,
            args_buffer: String::new(),
            args_safe_end: 0,
            args_depth: 0,
            args_in_string: false,
            args_escape: false,
            array_started: false,
            array_in_element: false,
        };
        e.reasoning_markup_terminals = e.compute_reasoning_markup_terminals();
        e
    }

    /// The special token (by id) is one the engine drops from the text.
    pub fn drops(&self, id: i64) -> bool {
        self.has_drops && self.resolved_ids.get(&id).is_some_and(|t| t == DROP)
    }

    fn compute_reasoning_markup_terminals(&self) -> HashSet<&'static str> {
        let plain = |s: State| matches!(s, State::Content | State::Reasoning);
        let markers: HashSet<&'static str> = self
            .config
            .transitions
            .iter()
            .filter(|((s, _), t)| (*s == State::Reasoning || t.next == State::Reasoning) && !is_tool_state(t.next))
            .map(|((_, term), _)| *term)
            .collect();
        for ((s, term), t) in self.config.transitions.iter() {
            if !markers.contains(term) {
                continue;
            }
            let only_reasoning_events =
                t.events.iter().all(|e| matches!(e, EventType::ReasoningStart | EventType::ReasoningEnd));
            if !plain(*s) || !plain(t.next) || !only_reasoning_events {
                return HashSet::new();
            }
        }
        markers
    }

    pub fn reset(&mut self, initial: Option<State>) {
        self.state = initial.unwrap_or(self.config.initial_state);
        self.tool_index = -1;
        self.ever_had_token_ids = false;
        self.scanner.reset();
        self.lexer.reset();
        self.message_header_buffer.clear();
        self.message_header_tokens = 0;
        self.in_skipped_tool_span = false;
        self.reset_args();
        self.array_started = false;
        self.array_in_element = false;
    }

    fn reset_args(&mut self) {
        self.args_buffer.clear();
        self.args_safe_end = 0;
        self.args_depth = 0;
        self.args_in_string = false;
        self.args_escape = false;
    }

    pub fn feed(&mut self, model: &Model, delta_text: &str, ids: &[i64]) -> Vec<Event> {
        if !ids.is_empty() {
            self.ever_had_token_ids = true;
        }
        if !delta_text.is_empty()
            && self.lexer.buffer.is_empty()
            && !self.scanner.has_deferred()
            && !delta_text.chars().any(|c| self.lexer.shape().is_first_char(c))
            && !ids.iter().any(|id| self.resolved_ids.contains_key(id))
        {
            return self.emit_for_state(delta_text, ids.len());
        }
        let items = self.scanner.scan(model, delta_text, ids);
        if let [Item::Text { text, token_texts, token_count }] = items.as_slice() {
            let toks = self.lexer.feed(text, token_texts, *token_count);
            if toks.len() == 1 && toks[0].terminal == CONTENT {
                return self.emit_for_state(&toks[0].value, toks[0].token_count);
            }
            return self.process_lex_tokens(toks);
        }
        self.process_items(items)
    }

    fn process_items(&mut self, items: Vec<Item>) -> Vec<Event> {
        let mut events = Vec::new();
        for item in items {
            match item {
                Item::Terminal { terminal, text } => {
                    let flushed = self.lexer.flush();
                    events.extend(self.process_lex_tokens(flushed));
                    events.extend(self.on_terminal(&terminal, &text, 0));
                }
                Item::Text { text, token_texts, token_count } => {
                    if text.is_empty() && token_count > 0 {
                        events.extend(self.emit_for_state("", token_count));
                    } else {
                        let toks = self.lexer.feed(&text, &token_texts, token_count);
                        events.extend(self.process_lex_tokens(toks));
                    }
                }
            }
        }
        events
    }

    pub fn finish(&mut self) -> Vec<Event> {
        let pending = self.scanner.flush_pending();
        let mut events = self.process_items(pending);
        let flushed = self.lexer.flush();
        events.extend(self.process_lex_tokens(flushed));
        if !self.args_buffer.is_empty() {
            events.push(ev(EventType::ArgValueChunk, std::mem::take(&mut self.args_buffer), self.tool_index, 0));
            self.args_safe_end = 0;
        }
        match self.state {
            s if is_tool_state(s) => {
                let end_open = if self.config.tool_call_body_array { self.array_in_element } else { true };
                if end_open && self.tool_index >= 0 {
                    events.push(ev(EventType::ToolCallEnd, "", self.tool_index, 0));
                }
                self.state = State::Content;
            }
            State::Reasoning => {
                events.push(ev(EventType::ReasoningEnd, "", self.tool_index, 0));
                self.state = State::Content;
            }
            State::MessageHeader => {
                if !self.message_header_buffer.is_empty() {
                    let v = std::mem::take(&mut self.message_header_buffer);
                    events.push(ev(EventType::TextChunk, v, self.tool_index, self.message_header_tokens));
                    self.message_header_tokens = 0;
                }
                self.state = State::Content;
            }
            _ => {}
        }
        events
    }

    fn process_lex_tokens(&mut self, tokens: Vec<LexToken>) -> Vec<Event> {
        let mut events = Vec::new();
        for tok in tokens {
            let strict = self.ever_had_token_ids && self.token_id_terminal_names.contains(&tok.terminal);
            if tok.terminal == CONTENT || strict {
                if !tok.value.is_empty() {
                    events.extend(self.emit_for_state(&tok.value, tok.token_count));
                }
            } else {
                events.extend(self.on_terminal(&tok.terminal, &tok.value, tok.token_count));
            }
        }
        events
    }

    fn on_terminal(&mut self, terminal: &str, value: &str, token_count: usize) -> Vec<Event> {
        let Some(transition) = self.config.transition(self.state, terminal) else {
            if self.has_drops && terminal == DROP {
                return Vec::new();
            }
            if self.skip_tool_parsing && self.tool_exit_terminals.contains(terminal) {
                self.in_skipped_tool_span = false;
            }
            return self.emit_for_state(value, token_count);
        };
        if self.skip_reasoning_parsing && self.reasoning_markup_terminals.contains(terminal) {
            return self.emit_for_state(value, token_count);
        }
        if self.skip_tool_parsing && self.tool_terminals.contains(terminal) {
            let is_opener = is_tool_state(transition.next);
            let is_exit = self.tool_exit_terminals.contains(terminal);
            let plain_closer = is_exit && !is_opener && !self.in_skipped_tool_span;
            if !plain_closer {
                if is_opener {
                    self.in_skipped_tool_span = true;
                } else if is_exit {
                    self.in_skipped_tool_span = false;
                }
                let leaving_header = self.state == State::MessageHeader;
                if leaving_header {
                    self.message_header_buffer.clear();
                    self.message_header_tokens = 0;
                }
                if transition.events.contains(&EventType::ReasoningEnd) {
                    self.state = State::Content;
                    return vec![
                        ev(EventType::ReasoningEnd, value, self.tool_index, 0),
                        ev(EventType::TextChunk, value, self.tool_index, 0),
                    ];
                }
                if leaving_header {
                    self.state = State::Content;
                    return vec![ev(EventType::TextChunk, value, self.tool_index, 0)];
                }
                return match self.config.content_event(self.state) {
                    Some(kind) => vec![ev(kind, value, self.tool_index, 0)],
                    None => Vec::new(),
                };
            }
        }
        if transition.skip_in_token_id_mode && self.ever_had_token_ids {
            return self.emit_for_state(value, token_count);
        }
        self.apply_transition(transition, value, token_count)
    }

    fn emit_for_state(&mut self, text: &str, token_count: usize) -> Vec<Event> {
        match self.state {
            State::MessageHeader => {
                self.message_header_buffer.push_str(text);
                self.message_header_tokens += token_count;
                Vec::new()
            }
            State::ToolArgs if self.config.tool_call_body_array => self.feed_array_text(text),
            State::ToolArgs if self.config.tool_args_json => self.feed_args_text(text),
            State::ToolArgs => vec![ev(EventType::ArgValueChunk, text, self.tool_index, token_count)],
            s => match self.config.content_event(s) {
                Some(kind) => vec![ev(kind, text, self.tool_index, token_count)],
                None => Vec::new(),
            },
        }
    }

    fn apply_transition(&mut self, t: &Transition, value: &str, token_count: usize) -> Vec<Event> {
        let mut events = Vec::new();
        let previous = self.state;
        let (mut header, mut header_tokens) = (String::new(), 0);
        if self.state == State::ToolArgs && t.next != State::ToolArgs && !self.args_buffer.is_empty() {
            events.push(ev(EventType::ArgValueChunk, std::mem::take(&mut self.args_buffer), self.tool_index, 0));
        }
        if previous == State::MessageHeader {
            header = std::mem::take(&mut self.message_header_buffer);
            header_tokens = std::mem::take(&mut self.message_header_tokens);
        }
        self.state = t.next;
        for &kind in t.events {
            if kind == EventType::ToolCallStart {
                self.tool_index += 1;
            }
            let from_header = previous == State::MessageHeader && kind == EventType::TextChunk;
            let v = if from_header { header.as_str() } else { value };
            if kind == EventType::TextChunk && v.is_empty() {
                continue;
            }
            let count = if from_header { header_tokens } else { token_count };
            events.push(ev(kind, v, self.tool_index, count));
        }
        if self.state == State::ToolArgs {
            self.args_depth = 0;
            self.args_in_string = false;
            self.args_escape = false;
            self.args_safe_end = 0;
            if self.config.tool_call_body_array {
                self.array_started = false;
                self.array_in_element = false;
            }
        }
        events
    }

    fn feed_args_text(&mut self, text: &str) -> Vec<Event> {
        let mut events = Vec::new();
        for ch in text.chars() {
            events.extend(self.feed_args_char(ch));
        }
        events
    }

    /// JSON arguments: emitted as they come, except a closing brace at depth
    /// zero (the call's own), held until more text shows it was not the end.
    fn feed_args_char(&mut self, ch: char) -> Vec<Event> {
        self.args_buffer.push(ch);
        let len = self.args_buffer.len();
        if self.args_escape {
            self.args_escape = false;
        } else if self.args_in_string {
            if ch == '\\' {
                self.args_escape = true;
            } else if ch == '"' {
                self.args_in_string = false;
            }
        } else if ch == '"' {
            self.args_in_string = true;
        } else if ch == '{' || ch == '[' {
            self.args_depth += 1;
        } else if ch == '}' || ch == ']' {
            if self.args_depth > 0 {
                self.args_depth -= 1;
            }
            if self.args_depth == 0 {
                return Vec::new();
            }
        }
        self.args_safe_end = len;
        self.flush_safe_args()
    }

    fn flush_safe_args(&mut self) -> Vec<Event> {
        if self.args_safe_end == 0 {
            return Vec::new();
        }
        let rest = self.args_buffer.split_off(self.args_safe_end);
        let emit = std::mem::replace(&mut self.args_buffer, rest);
        self.args_safe_end = 0;
        vec![ev(EventType::ArgValueChunk, emit, self.tool_index, 0)]
    }

    fn feed_array_text(&mut self, text: &str) -> Vec<Event> {
        let mut events = Vec::new();
        for (i, ch) in text.char_indices() {
            if self.state != State::ToolArgs {
                events.extend(self.emit_for_state(&text[i..], 0));
                break;
            }
            events.extend(self.feed_array_char(ch));
        }
        events
    }

    fn feed_array_char(&mut self, ch: char) -> Vec<Event> {
        if self.array_in_element {
            let mut events = self.feed_args_char(ch);
            if ch == '}' && !self.args_in_string && !self.args_escape && self.args_depth == 0 {
                self.array_in_element = false;
                if !self.args_buffer.is_empty() {
                    events.push(ev(
                        EventType::ArgValueChunk,
                        std::mem::take(&mut self.args_buffer),
                        self.tool_index,
                        0,
                    ));
                    self.args_safe_end = 0;
                }
                events.push(ev(EventType::ToolCallEnd, "", self.tool_index, 0));
            }
            return events;
        }
        if matches!(ch, ' ' | '\t' | '\r' | '\n') {
            return Vec::new();
        }
        if !self.array_started {
            if ch == '[' {
                self.array_started = true;
                return Vec::new();
            }
            return self.bail_array(ch);
        }
        match ch {
            ',' => Vec::new(),
            '{' => {
                self.tool_index += 1;
                self.reset_args();
                self.array_in_element = true;
                let mut events = vec![ev(EventType::ToolCallStart, "", self.tool_index, 0)];
                events.extend(self.feed_args_char(ch));
                events
            }
            ']' => {
                self.state = State::Content;
                self.array_started = false;
                self.array_in_element = false;
                Vec::new()
            }
            _ => self.bail_array(ch),
        }
    }

    fn bail_array(&mut self, ch: char) -> Vec<Event> {
        self.state = State::Content;
        self.array_started = false;
        self.array_in_element = false;
        self.emit_for_state(&ch.to_string(), 0)
    }
}

crate::impl_snapshot!(StreamingEngine {
    state,
    tool_index,
    skip_tool_parsing,
    skip_reasoning_parsing,
    ever_had_token_ids,
    message_header_buffer,
    message_header_tokens,
    in_skipped_tool_span,
    args_buffer,
    args_safe_end,
    args_depth,
    args_in_string,
    args_escape,
    array_started,
    array_in_element,
} nested { scanner, lexer } check |e| crate::parse::snapshot::check_index(e.tool_index, "tool_index"));
