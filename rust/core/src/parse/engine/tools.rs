//! `ParserEngineToolAdapter`: an engine used as a tool parser. Events become
//! tool-call deltas through per-call slots; arguments are converted by the
//! family's converter and coerced to the tools' JSON schemas.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::OpenValue;
use super::{EngineConfig, Event, EventType, State, StreamingEngine};
use crate::model::Model;
use crate::parse::coerce::{coerce_dict, schema_types};
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolChoice, ToolParser};
use crate::pycompat::json::{dumps, loads};
use crate::wire::response::{Delta, DeltaToolCall};

#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
struct Slot {
    id: String,
    name: String,
    args: String,
    name_sent: bool,
    string_keys: Option<Vec<String>>,
    streamed: String,
    extender: Option<OpenValue>,
    open_value_streams: bool,
}

/// A call header's `(id, name)`, when the format names calls by an id.
pub type HeaderParser = fn(&str) -> Option<(String, String)>;

pub struct EngineTools {
    /// Forced tool choices parse the output as JSON (families without an
    /// xgrammar structural-tag model).
    pub supports_required_and_named: bool,
    /// The text in the name state is a header carrying the call's own id
    /// (Kimi's `functions.NAME:IDX`): name and id come from it, and the
    /// argument text that names the call streams with it.
    pub tool_header: Option<HeaderParser>,
    /// The argument text that names a call streams with it (PLaMo 3's
    /// `_handle_arg_chunk`).
    pub first_arg_chunk_streams: bool,
    /// A call's name is final once its arguments start, the empty name too
    /// (Mistral's `_accept_tool_name` and `_try_extract_name`).
    pub empty_names: bool,
    /// Batch arguments from a call's raw body where the family reads them
    /// its own way (Mistral's `_extract_args_json`); `None`: the engine's.
    pub batch_args: Option<fn(&str) -> String>,
    /// The keys a JSON call body's arguments may sit under
    /// (`_extract_args_value`; Inkling's wrapper uses `args`).
    pub args_keys: &'static [&'static str],
    /// Batch keeps the text that follows calls in one pass (Inkling's
    /// `_single_pass_parse` flushes the engine's deferred content).
    pub batch_text_after_calls: bool,
    /// A new call's id (`_ensure_tool_id`).
    pub call_id: fn() -> String,
    /// Where the family's multi-token markers begin (`<|plamo:`): a marker
    /// cut short is dropped from argument chunks and from what the stream's
    /// end flushes (`_strip_unfinished_marker`).
    pub unfinished_marker: Option<&'static str>,
    config: &'static EngineConfig,
    /// The config's `stream_text_after_calls`, unless the reasoning family
    /// says otherwise (`ToolParser::stream_text_after_calls`).
    text_after_calls: bool,
    model: Arc<Model>,
    engine: StreamingEngine,
    tools: Vec<Value>,
    initialized: bool,
    deferred_content: String,
    content_has_nonws: bool,
    /// Trailing reasoning whitespace held back (`_strip_trailing_reasoning`,
    /// which vLLM's engine runs on the tool side too: a prompt that closes
    /// reasoning leaves `<think>` to this parser).
    deferred_reasoning: String,
    reasoning_ended: bool,
    suppress: bool,
    slots: Vec<Slot>,
}

/// The properties a converter gets for a call's arguments: vLLM's
/// `MinimaxM3Parser._convert_args` names the call by the first slot whose
/// arguments are the same text.
fn call_properties<'a>(tools: &'a [Value], slots: &[Slot], raw: &str) -> Option<&'a Map<String, Value>> {
    let name = slots.iter().find(|s| s.args == raw).map_or("", |s| s.name.trim());
    properties(tools, name)
}

fn properties<'a>(tools: &'a [Value], name: &str) -> Option<&'a Map<String, Value>> {
    tools.iter().find_map(|t| {
        let f = t.get("function")?;
        (f.get("name")?.as_str()? == name).then(|| f.get("parameters")?.get("properties")?.as_object()).flatten()
    })
}

/// `_streamable_string_keys`: keys whose schema allows only strings.
fn string_keys(props: Option<&Map<String, Value>>) -> Option<Vec<String>> {
    let props = props.filter(|p| !p.is_empty())?;
    Some(props.iter().filter(|(_, s)| schema_types(Some(s)) == ["string"]).map(|(k, _)| k.clone()).collect())
}

/// `_safe_arg_prefix`: the part of a partial JSON object safe to stream,
/// and whether the last value is an open string that may keep streaming.
fn safe_arg_prefix(json: &str, string_keys: Option<&[String]>) -> (String, bool) {
    let c: Vec<char> = json.chars().collect();
    let (mut last_colon, mut last_key, mut pending): (Option<usize>, Option<String>, Option<String>) =
        (None, None, None);
    let (mut in_string, mut escape, mut start, mut depth) = (false, false, 0usize, 0i64);
    for (i, &ch) in c.iter().enumerate() {
        if escape {
            escape = false;
            continue;
        }
        if in_string {
            if ch == '\\' {
                escape = true;
            } else if ch == '"' {
                in_string = false;
                if depth == 1 {
                    pending = Some(c[start + 1..i].iter().collect());
                }
            }
            continue;
        }
        match ch {
            '"' => {
                in_string = true;
                start = i;
            }
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ':' if depth == 1 => {
                last_colon = Some(i);
                last_key = pending.take();
            }
            _ => {}
        }
    }
    let Some(colon) = last_colon else { return (String::new(), false) };
    let mut end = colon + 1;
    while end < c.len() && matches!(c[end], ' ' | '\t' | '\n' | '\r') {
        end += 1;
    }
    let upto = |n: usize| c[..n].iter().collect::<String>();
    if end >= c.len() || c[end] != '"' {
        return (upto(end), false);
    }
    if let Some(keys) = string_keys {
        if !last_key.as_ref().is_some_and(|k| keys.contains(k)) {
            return (upto(end), false);
        }
    }
    let mut escape = false;
    for (i, &ch) in c.iter().enumerate().skip(end + 1) {
        if escape {
            escape = false;
            continue;
        }
        if ch == '\\' {
            escape = true;
            continue;
        }
        if ch == '"' {
            return (upto(i), true);
        }
    }
    (json.to_string(), true)
}

impl EngineTools {
    pub fn new(
        config: &'static EngineConfig,
        model: Arc<Model>,
        tools: Vec<Value>,
        skip_reasoning: bool,
    ) -> EngineTools {
        let mut engine = StreamingEngine::new(config, &model);
        engine.skip_reasoning_parsing = skip_reasoning;
        EngineTools {
            supports_required_and_named: false,
            tool_header: None,
            first_arg_chunk_streams: false,
            empty_names: false,
            batch_args: None,
            args_keys: &["arguments", "parameters"],
            batch_text_after_calls: false,
            call_id: random_tool_call_id,
            unfinished_marker: None,
            config,
            text_after_calls: config.stream_text_after_calls,
            model,
            engine,
            tools,
            initialized: false,
            deferred_content: String::new(),
            content_has_nonws: false,
            deferred_reasoning: String::new(),
            reasoning_ended: false,
            suppress: false,
            slots: Vec::new(),
        }
    }

    fn reset(&mut self, initial: Option<State>) {
        self.engine.reset(initial);
        self.slots.clear();
        self.deferred_content.clear();
        self.content_has_nonws = false;
        self.deferred_reasoning.clear();
        self.reasoning_ended = false;
    }

    fn check_skip(&mut self, ctx: &ChatContext) {
        if !ctx.tools.is_empty() {
            self.tools = ctx.tools.clone();
        }
        if ctx.tool_choice == ToolChoice::None && !ctx.tools.is_empty() {
            self.suppress = true;
        }
    }

    /// The token (its text) is a special token the engine drops.
    pub fn drops_token(&self, token: &str) -> bool {
        self.model.tokenizer.token_to_id(token).is_some_and(|id| self.engine.drops(i64::from(id)))
    }

    /// A streamed delta as `_events_to_delta` makes it, before a family's
    /// override and `_strip_trailing_reasoning` (which needs to know
    /// whether the delta's events ended reasoning: the bool).
    pub fn raw_streaming(&mut self, t: &Texts, ids: &Ids, ctx: &ChatContext) -> (Option<Delta>, bool) {
        if !self.initialized {
            self.initialized = true;
            self.reset(Some(State::Content));
        }
        self.check_skip(ctx);
        let model = self.model.clone();
        let events = self.engine.feed(&model, t.delta, ids.delta);
        let ended = events.iter().any(|e| e.kind == EventType::ReasoningEnd);
        (self.events_to_delta(events, false), ended)
    }

    /// `_fix_arg_types`: coerce the arguments to the tool's schema.
    fn fix_arg_types(&self, args_json: &str, name: &str) -> String {
        if self.tools.is_empty() || name.is_empty() {
            return args_json.to_string();
        }
        let Some(Value::Object(mut args)) = loads(args_json) else { return args_json.to_string() };
        let Some(props) = properties(&self.tools, name).filter(|p| !p.is_empty()) else { return args_json.to_string() };
        if coerce_dict(&mut args, props) {
            return dumps(&Value::Object(args));
        }
        args_json.to_string()
    }

    /// `_accept_tool_name`: non-empty, and offered when names are validated.
    fn accept_name(&self, name: &str) -> bool {
        if name.is_empty() && !self.empty_names {
            return false;
        }
        if !self.config.validate_tool_names || self.tools.is_empty() {
            return true;
        }
        self.tools.iter().any(|t| t.get("function").and_then(|f| f.get("name")).and_then(Value::as_str) == Some(name))
    }

    /// Whether a call has streamed its name (batch will return calls).
    fn call_sent(&self) -> bool {
        self.slots.iter().any(|s| s.name_sent)
    }

    fn ensure_slot(&mut self, idx: i64) {
        while self.slots.len() as i64 <= idx {
            self.slots.push(Slot::default());
        }
    }

    fn name_delta(&mut self, idx: usize, name: String, arguments: Option<String>) -> DeltaToolCall {
        let keys = string_keys(properties(&self.tools, &name));
        let slot = &mut self.slots[idx];
        slot.name = name.clone();
        slot.name_sent = true;
        slot.string_keys = keys;
        if slot.id.is_empty() {
            slot.id = (self.call_id)();
        }
        DeltaToolCall::opening(idx as i64, slot.id.clone(), name, arguments)
    }

    /// `_try_extract_name`: `"name"\s*:\s*"([^"]*)"` in the raw body.
    fn try_extract_name(&self, idx: usize) -> Option<String> {
        if self.empty_names {
            return Some(self.slots[idx].name.clone());
        }
        let args = &self.slots[idx].args;
        let mut from = 0;
        while let Some(i) = args[from..].find("\"name\"") {
            let at = from + i + 6;
            let rest = args[at..].trim_start();
            if let Some(r) = rest.strip_prefix(':') {
                if let Some(r) = r.trim_start().strip_prefix('"') {
                    if let Some(end) = r.find('"') {
                        return (end > 0).then(|| r[..end].to_string());
                    }
                }
            }
            from = at;
        }
        None
    }

    fn compute_arg_delta(&mut self, idx: usize, raw: &str) -> Option<String> {
        let Some(syntax) = self.config.arg_syntax else {
            return Some(raw.to_string());
        };
        if !syntax.stream_deltas {
            return None;
        }
        let slot = &mut self.slots[idx];
        if let Some(ext) = &mut slot.extender {
            match (syntax.extend_value)(ext, raw) {
                Some(diff) => {
                    if diff.is_empty() || !slot.open_value_streams {
                        return None;
                    }
                    slot.streamed.push_str(&diff);
                    return Some(diff);
                }
                None => slot.extender = None,
            }
        } else if syntax.structural_chars.is_some_and(|chars| !raw.contains(|c| chars.contains(c))) {
            return None;
        }
        let args = &self.slots[idx].args;
        let current = (syntax.convert)(args, true, call_properties(&self.tools, &self.slots, args))?;
        let name = self.slots[idx].name.clone();
        let current = if name.is_empty() { current } else { self.fix_arg_types(&current, &name) };
        let slot = &mut self.slots[idx];
        let (safe, streams) = safe_arg_prefix(&current, slot.string_keys.as_deref());
        if safe.is_empty() {
            return None;
        }
        if !slot.streamed.is_empty() && !safe.starts_with(&slot.streamed) {
            return None;
        }
        let diff = safe[slot.streamed.len()..].to_string();
        slot.streamed = safe;
        slot.extender = (syntax.open_value)(&slot.args);
        slot.open_value_streams = streams;
        (!diff.is_empty()).then_some(diff)
    }

    fn flush_arg_converter(&mut self, idx: usize) -> Option<String> {
        let syntax = self.config.arg_syntax?;
        let slot = &self.slots[idx];
        let mut fin = (syntax.convert)(&slot.args, false, call_properties(&self.tools, &self.slots, &slot.args))?;
        if !fin.is_empty() {
            fin = self.fix_arg_types(&fin, &slot.name.clone());
        }
        let slot = &mut self.slots[idx];
        if !fin.is_empty() && fin.chars().count() > slot.streamed.chars().count() {
            if !slot.streamed.is_empty() && !fin.starts_with(&slot.streamed) {
                return None;
            }
            let diff = fin[slot.streamed.len()..].to_string();
            slot.streamed = fin;
            return Some(diff);
        }
        None
    }

    fn handle_arg_chunk(&mut self, e: &Event, deltas: &mut Vec<DeltaToolCall>) {
        let idx = e.tool_index as usize;
        let stripped;
        let e = match self.cut_marker_from_args(idx, &e.value) {
            Some(value) => {
                stripped = Event { value, ..e.clone() };
                &stripped
            }
            None => e,
        };
        let name_sent_before = self.slots[idx].name_sent;
        self.slots[idx].args.push_str(&e.value);
        if !self.slots[idx].name_sent {
            let name = if !self.slots[idx].name.is_empty() {
                Some(self.slots[idx].name.clone())
            } else if !e.value.is_empty() {
                self.try_extract_name(idx)
            } else {
                None
            };
            let name = name.map(|n| if self.config.strip_tool_names { n.trim().to_string() } else { n });
            if let Some(n) = name.and_then(|n| self.header_name(idx, n)).filter(|n| self.accept_name(n)) {
                let d = self.name_delta(idx, n, None);
                deltas.push(d);
            }
            // A header format streams the text that named the call.
            let streams = self.tool_header.is_some() || self.first_arg_chunk_streams;
            if streams && !name_sent_before && self.slots[idx].name_sent && !e.value.is_empty() {
                deltas.push(DeltaToolCall::arguments(idx as i64, e.value.clone()));
            }
        } else if !e.value.is_empty() {
            if let Some(diff) = self.compute_arg_delta(idx, &e.value) {
                deltas.push(DeltaToolCall::arguments(idx as i64, diff));
            }
        }
    }

    /// An argument chunk without the cut-short marker at its end, where
    /// the arguments still parse without it.
    fn cut_marker_from_args(&self, idx: usize, value: &str) -> Option<String> {
        let at = value.rfind(self.unfinished_marker?)?;
        let kept = &value[..at];
        loads(&format!("{}{kept}", self.slots[idx].args)).map(|_| kept.to_string())
    }

    /// Kimi's `_emit_name_delta`: the name inside a header (its id kept),
    /// or none (and the slot's name forgotten); plain names pass through.
    fn header_name(&mut self, idx: usize, name: String) -> Option<String> {
        let Some(parse) = self.tool_header else { return Some(name) };
        match parse(&name) {
            Some((id, name)) => {
                self.slots[idx].id = id;
                Some(name)
            }
            None => {
                self.slots[idx].name.clear();
                None
            }
        }
    }

    fn handle_tool_end(&mut self, e: &Event, deltas: &mut Vec<DeltaToolCall>) {
        let idx = e.tool_index as usize;
        if idx >= self.slots.len() {
            return;
        }
        if let Some(parse) = self.tool_header.filter(|_| !self.slots[idx].name_sent) {
            if let Some((id, name)) = parse(&self.slots[idx].name) {
                self.slots[idx].id = id;
                self.slots[idx].name = name;
            }
        }
        if self.config.strip_tool_names {
            self.slots[idx].name = self.slots[idx].name.trim().to_string();
        }
        let mut remaining = self.flush_arg_converter(idx);
        if !self.slots[idx].name_sent {
            let name = if self.slots[idx].name.is_empty() {
                self.try_extract_name(idx).unwrap_or_default()
            } else {
                self.slots[idx].name.clone()
            };
            if self.accept_name(&name) {
                let d = self.name_delta(idx, name, Some(remaining.take().unwrap_or_default()));
                deltas.push(d);
            }
        }
        if let Some(r) = remaining.filter(|r| !r.is_empty()) {
            if self.slots[idx].name_sent {
                deltas.push(DeltaToolCall::arguments(idx as i64, r));
            }
        }
    }

    /// `_events_to_delta`; at the end, with an unfinished-marker family's
    /// clean-up of what is flushed.
    fn events_to_delta(&mut self, events: Vec<Event>, finished: bool) -> Option<Delta> {
        let Some(marker) = self.unfinished_marker.filter(|_| finished) else {
            return self.events_to_delta_raw(events, finished);
        };
        let events = super::marker::coalesce_finished(events, |name| {
            super::marker::strip_unfinished(name, marker, self.config, &self.model).unwrap_or_default()
        });
        let mut d = self.events_to_delta_raw(events, true)?;
        d.reasoning = d.reasoning.and_then(|r| super::marker::strip_unfinished(&r, marker, self.config, &self.model));
        d.content = d.content.and_then(|c| super::marker::strip_unfinished(&c, marker, self.config, &self.model));
        for tc in &mut d.tool_calls {
            if let Some(f) = &mut tc.function {
                if f.arguments.as_deref().is_none_or(|a| a.trim().is_empty()) {
                    f.arguments = Some("{}".into());
                }
            }
        }
        (d.reasoning.is_some() || d.content.is_some() || !d.tool_calls.is_empty()).then_some(d)
    }

    fn events_to_delta_raw(&mut self, events: Vec<Event>, finished: bool) -> Option<Delta> {
        if events.is_empty() && self.deferred_content.is_empty() {
            return None;
        }
        let mut deltas: Vec<DeltaToolCall> = Vec::new();
        let mut content_parts: Vec<String> = Vec::new();
        let mut reasoning = String::new();
        let carried = self.deferred_content.clone();
        let mut seen_tool = false;
        for e in events {
            match e.kind {
                // Batch drops all text after the first tool event once a call
                // is returned; vLLM's stream sends it later (a chunking bug),
                // so once a call has streamed, later text is dropped here
                // unless the family follows vLLM's stream.
                EventType::TextChunk if self.call_sent() && !self.text_after_calls => {}
                EventType::TextChunk if seen_tool => self.deferred_content.push_str(&e.value),
                EventType::TextChunk => content_parts.push(e.value),
                EventType::ReasoningChunk => reasoning.push_str(&e.value),
                EventType::ToolCallStart if !self.suppress => {
                    seen_tool = true;
                    self.ensure_slot(e.tool_index);
                }
                EventType::ToolName if !self.suppress => {
                    seen_tool = true;
                    self.ensure_slot(e.tool_index);
                    self.slots[e.tool_index as usize].name.push_str(&e.value);
                }
                EventType::ArgValueChunk if !self.suppress => {
                    seen_tool = true;
                    self.ensure_slot(e.tool_index);
                    self.handle_arg_chunk(&e, &mut deltas);
                }
                EventType::ToolCallEnd if !self.suppress => {
                    seen_tool = true;
                    self.handle_tool_end(&e, &mut deltas);
                }
                _ => {}
            }
        }
        if deltas.len() > 1 {
            deltas = coalesce(deltas);
        }
        if self.call_sent() && !self.text_after_calls {
            // Text deferred after this chunk's tool events, before its call
            // was named: batch drops it too.
            self.deferred_content.truncate(carried.len().min(self.deferred_content.len()));
        }
        if !self.deferred_content.is_empty() && (!seen_tool || deltas.is_empty()) {
            let now = self.deferred_content[carried.len().min(self.deferred_content.len())..].to_string();
            if !carried.is_empty() {
                content_parts.insert(0, carried);
            }
            if !now.is_empty() {
                content_parts.push(now);
            }
            self.deferred_content.clear();
        }
        let mut content: String = content_parts.concat();
        if !self.content_has_nonws && !content.is_empty() {
            if !content.trim().is_empty() {
                self.content_has_nonws = true;
            } else if !self.slots.is_empty() {
                if self.config.drop_whitespace_only_content_before_tools {
                    content.clear();
                }
            } else if !finished {
                self.deferred_content = std::mem::take(&mut content);
            }
        }
        let content = (!content.is_empty()).then_some(content);
        let reasoning = (!reasoning.is_empty()).then_some(reasoning);
        if content.is_none() && reasoning.is_none() && deltas.is_empty() {
            return None;
        }
        Some(Delta { content, reasoning, tool_calls: deltas, ..Default::default() })
    }

    /// `_build_extracted_result` (batch).
    fn extracted(&mut self) -> Vec<FunctionCall> {
        let mut calls = Vec::new();
        for idx in 0..self.slots.len() {
            let slot = self.slots[idx].clone();
            if slot.name.is_empty() && slot.args.is_empty() {
                continue;
            }
            let mut name = slot.name.trim().to_string();
            let raw = slot.args.clone();
            let args = if let Some(read) = self.batch_args.filter(|_| !raw.trim().is_empty()) {
                read(&raw)
            } else if name.is_empty() && !raw.trim().is_empty() {
                let (n, a) = name_and_args(&raw, self.args_keys);
                name = n;
                a
            } else if !raw.trim().is_empty() {
                match self.config.arg_syntax {
                    Some(syntax) => (syntax.convert)(&raw, false, call_properties(&self.tools, &self.slots, &raw))
                        .unwrap_or_else(|| name_and_args(&raw, self.args_keys).1),
                    // JSON arguments (Kimi's `_extract_args_json`): the text, stripped.
                    None => raw.trim().to_string(),
                }
            } else {
                "{}".to_string()
            };
            if !self.accept_name(&name) {
                continue;
            }
            if self.slots[idx].id.is_empty() {
                self.slots[idx].id = (self.call_id)();
            }
            let arguments = self.fix_arg_types(&args, &name);
            calls.push(FunctionCall { id: Some(self.slots[idx].id.clone()), name, arguments });
        }
        calls
    }
}

/// `_extract_name_and_args` for a JSON body.
fn name_and_args(raw: &str, keys: &[&str]) -> (String, String) {
    let raw = raw.trim();
    let Some(Value::Object(o)) = loads(raw) else { return (String::new(), raw.to_string()) };
    let name = o.get("name").and_then(Value::as_str).unwrap_or("").to_string();
    for key in keys {
        if let Some(v) = o.get(*key) {
            return (name, v.as_str().map_or_else(|| dumps(v), str::to_string));
        }
    }
    let rest: Map<String, Value> = o.into_iter().filter(|(k, _)| k != "name").collect();
    (name, dumps(&Value::Object(rest)))
}

/// `_coalesce_tool_call_deltas`: one delta per tool index.
fn coalesce(deltas: Vec<DeltaToolCall>) -> Vec<DeltaToolCall> {
    let n = deltas.len();
    let mut merged: Vec<DeltaToolCall> = Vec::new();
    for tc in deltas {
        match merged.iter_mut().find(|m| m.index == tc.index) {
            None => merged.push(tc),
            Some(m) => {
                if m.id.is_none() {
                    m.id = tc.id;
                }
                if m.kind.is_none() {
                    m.kind = tc.kind;
                }
                if let Some(f) = tc.function {
                    match &mut m.function {
                        None => m.function = Some(f),
                        Some(mf) => {
                            if mf.name.is_none() {
                                mf.name = f.name;
                            }
                            if let Some(a) = f.arguments {
                                mf.arguments = Some(mf.arguments.take().unwrap_or_default() + &a);
                            }
                        }
                    }
                }
            }
        }
    }
    if merged.len() == n {
        return merged;
    }
    merged
}

impl ToolParser for EngineTools {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        let mut fresh =
            EngineTools::new(self.config, self.model.clone(), self.tools.clone(), self.engine.skip_reasoning_parsing);
        fresh.tool_header = self.tool_header;
        fresh.first_arg_chunk_streams = self.first_arg_chunk_streams;
        fresh.unfinished_marker = self.unfinished_marker;
        fresh.empty_names = self.empty_names;
        fresh.batch_args = self.batch_args;
        fresh.args_keys = self.args_keys;
        fresh.batch_text_after_calls = self.batch_text_after_calls;
        fresh.call_id = self.call_id;
        fresh.check_skip(ctx);
        fresh.reset(Some(State::Content));
        let model = fresh.model.clone();
        let mut events = fresh.engine.feed(&model, text, &[]);
        events.extend(fresh.engine.finish());
        let delta = fresh.events_to_delta(events, true);
        let calls = fresh.extracted();
        let tools_called = !calls.is_empty();
        let mut content = delta.and_then(|d| d.content);
        if self.batch_text_after_calls && !fresh.deferred_content.is_empty() {
            content = Some(content.unwrap_or_default() + &fresh.deferred_content);
        }
        let content = content.and_then(|c| {
            // `_strip_content_whitespace`.
            let c = match tools_called {
                true if self.config.strip_content_whitespace_with_tools => c.trim().to_string(),
                true if self.config.drop_whitespace_only_content_before_tools && c.trim().is_empty() => String::new(),
                _ => c,
            };
            (!c.is_empty()).then_some(c)
        });
        Extracted { tools_called, calls, content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        let (delta, ended) = self.raw_streaming(t, ids, ctx);
        if !self.config.strip_trailing_reasoning_whitespace {
            return delta;
        }
        self.reasoning_ended |= ended;
        super::hold_trailing_reasoning(&mut self.deferred_reasoning, self.reasoning_ended, delta)
    }

    fn supports_required_and_named(&self) -> bool {
        self.supports_required_and_named
    }

    fn stream_text_after_calls(&mut self, on: bool) {
        self.text_after_calls = on;
    }

    fn engine_based(&self) -> bool {
        true
    }

    fn finish_streaming(&mut self) -> Option<Delta> {
        let events = self.engine.finish();
        if events.is_empty() && self.deferred_content.is_empty() {
            return None;
        }
        self.events_to_delta(events, true)
    }
}

crate::impl_snapshot!(EngineTools { initialized, deferred_content, content_has_nonws, deferred_reasoning, reasoning_ended, suppress, slots } nested { engine }
    check |t| crate::parse::snapshot::check_index(t.slots.len(), "slots"));
