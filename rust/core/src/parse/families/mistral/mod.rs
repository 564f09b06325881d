//! `mistral` tool calls and reasoning. On a v11+ vocabulary (`[ARGS]`)
//! both run on vLLM's engine (`v11`). Here, tool calls for pre-v11
//! tokenizers (Mistral-7B-Instruct-v0.3 served with `--tokenizer-mode hf`):
//! `[TOOL_CALLS]` then a JSON list of `{"name": ..., "arguments": {...}}`,
//! ids of 9 letters and digits.
//!
//! vLLM 0.33 routes this case of its engine-based `MistralParser` to the
//! legacy path: batch `raw_decode`s the JSON after the marker; streaming
//! feeds the text to an incremental JSON parser (ijson) in pieces cut after
//! the characters that can change its state, and streams the raw argument
//! text between the braces. Where that stream disagrees with the batch
//! answer (text after the calls, `tool_choice: "none"`), the batch answer
//! wins, as everywhere in derender.

mod v11;

use serde_json::Value;

use std::sync::Arc;

use serde_json::json;

use crate::model::Model;
use crate::parse::engine::EngineReasoningFamily;
use crate::parse::family::{token_ids, Family, KeepSpecial, ReasoningFamily, ToolFamily, ToolParserFactory};
use crate::parse::Registry;
use crate::parse::json_events::{raw_decode, JsonEvent, JsonEventParser};
use crate::pycompat::json::{dumps, loads};
use crate::parse::call_stream::{whole_answer, CallStream};
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Texts, ToolChoice, ToolParser};
use crate::ids::random_alnum_id;
use crate::wire::response::{Delta, DeltaFunctionCall, DeltaToolCall};

pub const TOOL_CALLS: &str = "[TOOL_CALLS]";

/// A Mistral tool call id.
fn mistral_id() -> String {
    random_alnum_id(9)
}

/// Where the streamed JSON stands (vLLM's `StreamingState`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
enum State {
    WaitingForToolStart,
    WaitingForToolKey,
    ParsingName,
    ParsingNameCompleted,
    WaitingForArgumentsStart,
    ParsingArguments,
    ParsingArgumentsCompleted,
    ToolComplete,
    AllToolsComplete,
}

impl State {
    /// The characters after which a piece is cut before it is parsed.
    fn stops(self) -> &'static [char] {
        match self {
            State::WaitingForToolStart => &['{'],
            State::WaitingForToolKey => &[':', '{', '}'],
            State::ParsingName => &[',', ']', '}'],
            State::WaitingForArgumentsStart => &['{', '}'],
            State::ParsingArguments => &['}'],
            State::ParsingArgumentsCompleted | State::ParsingNameCompleted => &['}', ']'],
            State::ToolComplete => &['{', ']'],
            State::AllToolsComplete => &[],
        }
    }
}

/// `_split_delta`: the text up to and including the first stop character.
fn split(text: &str, stops: &[char]) -> (String, String) {
    match text.char_indices().find(|(_, c)| stops.contains(c)) {
        Some((i, c)) => (text[..i + c.len_utf8()].to_string(), text[i + c.len_utf8()..].to_string()),
        None => (text.to_string(), String::new()),
    }
}

pub struct MistralParser {
    tool_calls_id: i64,
    started: bool,
    state: State,
    json: JsonEventParser,
    /// The stream's JSON is a single object rather than a list.
    bare_object: bool,
    /// vLLM's bookkeeping: only `current_tool_id` is kept here.
    calls: CallStream,
    starting_new_tool: bool,
    new_name: Option<String>,
    new_string_arguments: Option<String>,
    /// The newest call's id is still to go out with its first delta (drawn
    /// then, so a stream state never holds an id no client saw).
    id_unsent: bool,
    /// The text from the first marker on (or all of a guided answer), and
    /// whether any call was streamed: without one, the end of the stream
    /// answers that text as batch does (calls, or the JSON as content).
    json_text: String,
    calls_sent: bool,
    /// Some content went out (before the marker, or before a later marker
    /// while the JSON still parsed): the stream then stays vLLM's, with no
    /// final batch answer after it, which would repeat that content.
    content_sent: bool,
}

impl MistralParser {
    pub fn new(tool_calls_id: i64) -> Self {
        MistralParser {
            tool_calls_id,
            started: false,
            state: State::WaitingForToolStart,
            json: JsonEventParser::default(),
            bare_object: false,
            calls: CallStream::new(),
            starting_new_tool: false,
            new_name: None,
            new_string_arguments: None,
            id_unsent: false,
            json_text: String::new(),
            calls_sent: false,
            content_sent: false,
        }
    }

    /// `update_stream_state_pre_v11_tokenizer`: one ijson event.
    fn on_event(&mut self, prefix: &str, event: JsonEvent) {
        if prefix.is_empty() && event == JsonEvent::StartMap {
            self.bare_object = true;
        }
        let prefix = match (self.bare_object, prefix.is_empty()) {
            (true, true) => "item".to_string(),
            (true, false) => format!("item.{prefix}"),
            (false, _) => prefix.to_string(),
        };
        match (prefix.as_str(), event) {
            ("item", JsonEvent::StartMap) => {
                self.state = State::WaitingForToolKey;
                self.starting_new_tool = true;
            }
            ("item", JsonEvent::MapKey(k)) if k == "name" => self.state = State::ParsingName,
            ("item", JsonEvent::MapKey(k)) if k == "arguments" => self.state = State::WaitingForArgumentsStart,
            ("item.name", JsonEvent::String(s)) => {
                self.new_name = Some(s);
                self.state = State::ParsingNameCompleted;
            }
            ("item.arguments", JsonEvent::StartMap) => self.state = State::ParsingArguments,
            ("item.arguments", JsonEvent::EndMap) => self.state = State::ParsingArgumentsCompleted,
            ("item.arguments", JsonEvent::String(s)) => self.new_string_arguments = Some(s),
            ("item", JsonEvent::EndMap) => {
                self.state = if self.bare_object { State::AllToolsComplete } else { State::ToolComplete };
            }
            ("", JsonEvent::EndArray) => self.state = State::AllToolsComplete,
            _ => {}
        }
    }

    fn new_delta(&self) -> DeltaToolCall {
        DeltaToolCall {
            id: None,
            kind: Some("function"),
            index: self.calls.current,
            function: Some(DeltaFunctionCall { name: None, arguments: None }),
        }
    }

    /// The call's pending id goes out with its first delta.
    fn finish_delta(&mut self, mut call: DeltaToolCall, out: &mut Vec<DeltaToolCall>) {
        if std::mem::take(&mut self.id_unsent) {
            call.id = Some(mistral_id());
        }
        self.calls_sent = true;
        out.push(call);
    }

    /// `_extract_tool_calls_streaming_pre_v11_tokenizer`; `None` when the
    /// JSON parser failed (vLLM logs the exception and sends nothing).
    fn stream_json(&mut self, delta_text: &str, delta_ids: &[i64]) -> Option<Delta> {
        if self.json.failed() {
            // vLLM's stream still releases text before a later marker that
            // ends a delta; its batch answer cannot follow that text, so it
            // is held here and the stream ends with the batch answer.
            self.json_text.push_str(delta_text);
            return None;
        }
        let mut content: Option<String> = None;
        let mut calls = Vec::new();
        let mut current = self.new_delta();
        let mut modified = false;
        let mut text = delta_text.to_string();
        let resumed = !self.json_text.is_empty();
        let from = if resumed { 0 } else { text.find(TOOL_CALLS).unwrap_or(0) };
        self.json_text.push_str(&text[from..]);
        if resumed {
            // A later marker: batch reads the first list only, so the text
            // before the marker goes on with that list and the rest is
            // dropped. (vLLM streams that text as content and parses the
            // next list as more of the current call's arguments.)
            if let Some(at) = text.find(TOOL_CALLS) {
                text.truncate(at);
            }
        } else if delta_ids.contains(&self.tool_calls_id) || text.contains(TOOL_CALLS) {
            let mut parts = text.split(TOOL_CALLS);
            let first = parts.next().unwrap_or("");
            if !text.starts_with(TOOL_CALLS) {
                content = Some(first.to_string());
            }
            text = parts.collect();
        }
        while !text.is_empty() {
            let before = self.state;
            if self.state == State::AllToolsComplete {
                // Text after the calls: batch drops it, so the stream does
                // too (vLLM streams it as content).
                text.clear();
                continue;
            }
            let (piece, rest) = split(&text, self.state.stops());
            text = rest;
            let fed = self.json.feed(&piece);
            for (prefix, event) in fed.events {
                self.on_event(&prefix, event);
            }
            if fed.error.is_some() {
                return None;
            }
            if self.starting_new_tool {
                self.starting_new_tool = false;
                if modified {
                    self.finish_delta(current, &mut calls);
                }
                modified = false;
                self.calls.current += 1;
                self.id_unsent = true;
                current = self.new_delta();
            }
            let function = current.function.get_or_insert(DeltaFunctionCall { name: None, arguments: None });
            if let Some(name) = self.new_name.take() {
                modified = true;
                function.name = Some(name);
            }
            if let Some(args) = self.new_string_arguments.take() {
                modified = true;
                function.arguments = Some(args);
            }
            if self.state == State::ParsingNameCompleted {
                self.state = State::WaitingForToolKey;
            }
            if matches!(self.state, State::ParsingArguments | State::ParsingArgumentsCompleted) {
                if self.state == State::ParsingArgumentsCompleted {
                    self.state = State::WaitingForToolKey;
                }
                modified = true;
                let mut args = function.arguments.take().unwrap_or_default() + &piece;
                if before != State::ParsingArguments {
                    // The first piece of the arguments starts at `{`. (vLLM
                    // strips only whitespace, keeping a `:` that arrives in
                    // the same delta as `{`, unlike its batch answer.)
                    args = args.trim_start_matches(|c: char| c.is_whitespace() || c == ':').to_string();
                }
                function.arguments = Some(args);
            }
        }
        if modified {
            self.finish_delta(current, &mut calls);
        }
        let content = content.filter(|c| !c.is_empty());
        self.content_sent |= content.is_some();
        if content.is_some() || !calls.is_empty() {
            return Some(Delta { content, tool_calls: calls, ..Default::default() });
        }
        (self.state == State::AllToolsComplete).then(Delta::default)
    }
}

/// `_pre_v11_function_calls`: the calls in the decoded JSON.
fn function_calls(parsed: Option<Value>) -> Vec<FunctionCall> {
    let items = match parsed {
        Some(Value::Object(o)) => vec![Value::Object(o)],
        Some(Value::Array(a)) => a,
        _ => return Vec::new(),
    };
    items
        .into_iter()
        .filter_map(|item| {
            let obj = item.as_object()?;
            if !obj.contains_key("name") && !obj.contains_key("arguments") {
                return None;
            }
            let name = obj.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            let arguments = match obj.get("arguments") {
                None | Some(Value::Null) => "{}".to_string(),
                Some(Value::String(s)) => s.clone(),
                Some(v) => dumps(v),
            };
            Some(FunctionCall { id: Some(mistral_id()), name, arguments })
        })
        .collect()
}

/// The JSON batch reads: the first non-blank piece after a marker (repeated
/// markers count once; later pieces are trailing text), else the whole text.
fn json_part(text: &str) -> &str {
    match text.split_once(TOOL_CALLS) {
        Some((_, rest)) => rest.split(TOOL_CALLS).map(str::trim).find(|s| !s.is_empty()).unwrap_or(""),
        None => text.trim(),
    }
}

/// The calls batch finds in `json`: `raw_decode`, else the regex fallback.
fn calls_in(json: &str) -> Vec<FunctionCall> {
    function_calls(raw_decode(json).or_else(|| bracketed(json).and_then(loads)))
}

/// `tool_call_regex.findall(text)[0]`: `\[{.*}\]`, greedy across lines.
fn bracketed(text: &str) -> Option<&str> {
    let start = text.find("[{")?;
    let end = text.rfind("}]")?;
    (end >= start).then(|| &text[start..end + 2])
}

impl ToolParser for MistralParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    /// Required and named choices are parsed like `auto`.
    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn engine_based(&self) -> bool {
        true
    }

    /// `_legacy_extract_tool_calls`.
    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        let not_called =
            |content: &str| Extracted { tools_called: false, calls: Vec::new(), content: Some(content.into()) };
        if ctx.tool_choice == ToolChoice::None && !ctx.tools.is_empty() {
            return not_called(text);
        }
        let content = match text.split_once(TOOL_CALLS) {
            Some((content, _)) => Some(content),
            // A guided bare array, without the marker.
            None if ctx.forces_tool_calls() => None,
            None => return not_called(text),
        };
        let json = json_part(text);
        let calls = calls_in(json);
        if calls.is_empty() {
            return not_called(json);
        }
        let content = content.filter(|c| !c.trim().is_empty()).map(str::to_string);
        Extracted { tools_called: true, calls, content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        if ctx.tool_choice == ToolChoice::None && !ctx.tools.is_empty() {
            // Batch returns the whole text as content here; so does the
            // stream (vLLM's drops what follows a `[TOOL_CALLS]` token).
            return Some(Delta::content(t.delta));
        }
        if ids.delta.contains(&self.tool_calls_id) || t.delta.contains(TOOL_CALLS) {
            self.started = true;
        } else if !self.started && !t.delta.is_empty() && ctx.forces_tool_calls() {
            // Guided required/named output is a bare JSON array.
            self.started = true;
        }
        if !self.started {
            self.content_sent |= !t.delta.is_empty();
            return Some(Delta::content(t.delta));
        }
        self.stream_json(t.delta, ids.delta)
    }

    /// Nothing streamed (the JSON parser gave up, or a guided answer held no
    /// call): the stream ends with what batch finds in the same text.
    fn finish_streaming(&mut self) -> Option<Delta> {
        if self.calls_sent || self.content_sent {
            return None;
        }
        let text = std::mem::take(&mut self.json_text);
        let json = json_part(&text);
        if json.is_empty() {
            return None;
        }
        let calls = calls_in(json);
        self.calls_sent = !calls.is_empty();
        let mut answer = whole_answer(Extracted { tools_called: self.calls_sent, calls, content: Some(json.into()) });
        // As batch: beside the calls, the text before the marker is content.
        let before = text.split_once(TOOL_CALLS).map(|(c, _)| c).filter(|c| !c.trim().is_empty());
        if let (true, Some(delta), Some(before)) = (self.calls_sent, answer.as_mut(), before) {
            delta.content = Some(before.to_string());
        }
        answer
    }
}

// Registration.

struct Mistral {
    tool_calls_id: i64,
}

impl ToolParserFactory for Mistral {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(MistralParser::new(self.tool_calls_id))
    }

    /// vLLM's Mistral parser is built on its engine adapter.
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }

    fn forced_schema(&self, tools: &[Value], only: Option<&str>, _parallel: bool) -> Option<Value> {
        guided_schema(tools, only)
    }

    /// It opts out of the base `adjust_request`: the chat request sets the
    /// schema, so a Responses request gets none.
    fn forced_schema_from_chat_request(&self) -> bool {
        true
    }
}

fn load(model: &Model) -> Result<Arc<dyn ToolParserFactory>, String> {
    let [tool_calls_id] =
        token_ids(model, [TOOL_CALLS], "Mistral parser could not locate the tool call token in the tokenizer!")?;
    // `_is_pre_v11_tokeniser`: a tekken version, else `[ARGS]` in the vocabulary.
    let pre_v11 = match model.tekken() {
        Some(tekken) => tekken.version < 11,
        None => model.tokenizer.token_to_id(v11::ARGS).is_none(),
    };
    if pre_v11 {
        Ok(Arc::new(Mistral { tool_calls_id }))
    } else {
        Ok(Arc::new(v11::Tools))
    }
}

static TOOLS: ToolFamily = Family { names: &["mistral"], needs: "[TOOL_CALLS] as one token", load };

static REASONING: ReasoningFamily =
    Family { names: &["mistral"], needs: "", load: |_| Ok(Arc::new(EngineReasoningFamily(v11::reasoning))) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.reasoning_family(&REASONING);
}

/// Mistral's guided schema for a forced choice on pre-v11 tokenizers
/// (`_build_guided_schema_pre_v11`): an array of `{name, arguments}`, one
/// item at most for a named tool; `None` when the named tool is unknown.
fn guided_schema(tools: &[Value], only: Option<&str>) -> Option<Value> {
    let any_of: Vec<Value> = tools
        .iter()
        .filter_map(|t| t.get("function"))
        .filter(|f| only.is_none_or(|o| f.get("name").and_then(Value::as_str) == Some(o)))
        .map(|f| {
            // `parameters or {"type": "object"}`: an empty or missing schema.
            let params = match f.get("parameters") {
                Some(p) if crate::pycompat::truthy(p) => p.clone(),
                _ => json!({"type": "object"}),
            };
            let name = f.get("name").cloned().unwrap_or(Value::Null);
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "enum": [name]}, "arguments": params},
                "required": ["name", "arguments"]
            })
        })
        .collect();
    if only.is_some() && any_of.is_empty() {
        return None;
    }
    let mut schema = serde_json::Map::new();
    schema.insert("type".into(), json!("array"));
    schema.insert("minItems".into(), json!(1));
    if only.is_some() {
        schema.insert("maxItems".into(), json!(1));
    }
    schema.insert("items".into(), json!({"type": "object", "anyOf": any_of}));
    Some(Value::Object(schema))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ID: i64 = 5;

    fn ctx(choice: ToolChoice) -> ChatContext {
        ChatContext {
            tools: vec![json!({"type": "function", "function": {"name": "f"}})],
            tool_choice: choice,
            include_reasoning: true,
            parallel_tool_calls: true,
            logprobs: false,
            template_kwargs: Default::default(),
            request_kwargs: Default::default(),
            structural_tag: false,
        }
    }

    /// Stream `pieces` (the marker as its own token id) and assemble
    /// content and calls `(name, arguments)`.
    fn stream(pieces: &[&str], choice: ToolChoice) -> (String, Vec<(String, String)>) {
        let c = ctx(choice);
        let mut p = MistralParser::new(ID);
        let (mut content, mut calls) = (String::new(), Vec::<(String, String)>::new());
        for piece in pieces {
            let ids: Vec<i64> = if *piece == TOOL_CALLS { vec![ID] } else { vec![1] };
            let t = Texts { previous: "", current: piece, delta: piece };
            let i = Ids { previous: &[], current: &ids, delta: &ids };
            let Some(d) = p.extract_tool_calls_streaming(&t, &i, &c) else { continue };
            content += d.content.as_deref().unwrap_or("");
            for call in d.tool_calls {
                let idx = call.index as usize;
                if idx >= calls.len() {
                    calls.resize(idx + 1, Default::default());
                    assert_eq!(call.id.as_ref().map(String::len), Some(9));
                }
                let f = call.function.unwrap();
                calls[idx].0 += f.name.as_deref().unwrap_or("");
                calls[idx].1 += f.arguments.as_deref().unwrap_or("");
            }
        }
        (content, calls)
    }

    fn chars(text: &str) -> Vec<String> {
        text.chars().map(String::from).collect()
    }

    const OUTPUT: &str = r#"Hi [TOOL_CALLS] [{"name": "f", "arguments": {"a": {"b": [1, "}"]}, "c": 2.5}}, {"name": "g", "arguments": {}}] tail"#;

    #[test]
    fn batch_reads_the_list_after_the_marker() {
        let got = MistralParser::new(ID).extract_tool_calls(OUTPUT, &ctx(ToolChoice::Auto));
        assert!(got.tools_called);
        assert_eq!(got.content.as_deref(), Some("Hi "));
        assert_eq!(got.calls[0].name, "f");
        assert_eq!(got.calls[0].arguments, r#"{"a": {"b": [1, "}"]}, "c": 2.5}"#);
        assert_eq!(got.calls[1].arguments, "{}");
        assert!(got.calls.iter().all(|c| c.id.as_ref().is_some_and(|id| id.len() == 9)));
    }

    #[test]
    fn batch_without_calls_returns_the_json_text() {
        let got = MistralParser::new(ID).extract_tool_calls("x [TOOL_CALLS] [{\"a\": 1}] ", &ctx(ToolChoice::Auto));
        assert!(!got.tools_called);
        assert_eq!(got.content.as_deref(), Some("[{\"a\": 1}]"));
        let none = MistralParser::new(ID).extract_tool_calls(OUTPUT, &ctx(ToolChoice::None));
        assert_eq!(none.content.as_deref(), Some(OUTPUT));
    }

    #[test]
    fn batch_reads_a_bare_array_when_forced() {
        let got = MistralParser::new(ID)
            .extract_tool_calls(" [{\"name\": \"f\", \"arguments\": {}}]", &ctx(ToolChoice::Required));
        assert_eq!(got.calls.len(), 1);
        assert_eq!(got.content, None);
    }

    #[test]
    fn stream_assembles_to_the_batch_answer_for_any_chunking() {
        let (head, rest) = OUTPUT.split_once(TOOL_CALLS).unwrap();
        let expected = (
            "Hi ".to_string(),
            vec![
                ("f".to_string(), r#"{"a": {"b": [1, "}"]}, "c": 2.5}"#.to_string()),
                ("g".to_string(), "{}".to_string()),
            ],
        );
        let mut by_char = chars(head);
        by_char.push(TOOL_CALLS.into());
        by_char.extend(chars(rest));
        assert_eq!(stream(&by_char.iter().map(String::as_str).collect::<Vec<_>>(), ToolChoice::Auto), expected);
        for i in 0..=rest.len() {
            if !rest.is_char_boundary(i) {
                continue;
            }
            let pieces = [head, TOOL_CALLS, &rest[..i], &rest[i..]];
            assert_eq!(stream(&pieces, ToolChoice::Auto), expected, "split at {i}");
        }
        assert_eq!(stream(&[OUTPUT], ToolChoice::Auto), expected);
    }

    #[test]
    fn a_second_marker_ends_the_calls_at_any_split() {
        let text = r#"[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1}}][TOOL_CALLS] [{"name": "sub", "arguments":{"b": 2}}]"#;
        let expected = (String::new(), vec![("add".to_string(), r#"{"a": 1}"#.to_string())]);
        let rest = &text[TOOL_CALLS.len()..];
        for i in 0..=rest.len() {
            let (a, b) = rest.split_at(i);
            // The second marker arrives inside either piece, with text around it.
            assert_eq!(stream(&[TOOL_CALLS, a, b], ToolChoice::Auto), expected, "split at {i}");
        }
        assert_eq!(stream(&[text], ToolChoice::Auto), expected);
    }

    #[test]
    fn stream_with_tool_choice_none_is_plain_content() {
        let (content, calls) = stream(&["a", TOOL_CALLS, "[{\"name\": \"f\"}]"], ToolChoice::None);
        assert_eq!(content, "a[TOOL_CALLS][{\"name\": \"f\"}]");
        assert!(calls.is_empty());
    }

    #[test]
    fn stream_without_calls_ends_with_the_json_as_content() {
        let mut p = MistralParser::new(ID);
        let c = ctx(ToolChoice::Named("f".into()));
        let pieces = [" {\"a\": ", "1}", " "];
        for piece in pieces {
            let t = Texts { previous: "", current: piece, delta: piece };
            let i = Ids { previous: &[], current: &[1], delta: &[1] };
            let d = p.extract_tool_calls_streaming(&t, &i, &c);
            assert!(d.is_none_or(|d| d.content.is_none() && d.tool_calls.is_empty()));
        }
        let flushed = p.finish_streaming().and_then(|d| d.content);
        assert_eq!(flushed.as_deref(), Some("{\"a\": 1}"));
        let batch = p.extract_tool_calls(&pieces.concat(), &c);
        assert_eq!(batch.content, flushed);
    }

    /// Content and calls `(name, arguments)`.
    type Answer = (String, Vec<(String, String)>);

    /// Stream `text` one char at a time (the marker as one piece), finish,
    /// and assemble; with the batch answer's content and calls.
    fn stream_and_finish(text: &str) -> (Answer, Answer) {
        let c = ctx(ToolChoice::Auto);
        let mut p = MistralParser::new(ID);
        let (mut content, mut calls) = (String::new(), Vec::<(String, String)>::new());
        let mut pieces: Vec<String> = Vec::new();
        for (i, part) in text.split(TOOL_CALLS).enumerate() {
            if i > 0 {
                pieces.push(TOOL_CALLS.into());
            }
            pieces.extend(chars(part));
        }
        let mut deltas: Vec<Delta> = Vec::new();
        for piece in &pieces {
            let ids: Vec<i64> = if piece == TOOL_CALLS { vec![ID] } else { vec![1] };
            let t = Texts { previous: "", current: piece, delta: piece };
            let i = Ids { previous: &[], current: &ids, delta: &ids };
            deltas.extend(p.extract_tool_calls_streaming(&t, &i, &c));
        }
        deltas.extend(p.finish_streaming());
        for d in deltas {
            content += d.content.as_deref().unwrap_or("");
            for call in d.tool_calls {
                let idx = call.index as usize;
                if idx >= calls.len() {
                    calls.resize(idx + 1, Default::default());
                }
                let f = call.function.unwrap();
                calls[idx].0 += f.name.as_deref().unwrap_or("");
                calls[idx].1 += f.arguments.as_deref().unwrap_or("");
            }
        }
        let b = p.extract_tool_calls(text, &c);
        let b_calls = b.calls.into_iter().map(|c| (c.name, c.arguments)).collect();
        ((content, calls), (b.content.unwrap_or_default(), b_calls))
    }

    #[test]
    fn a_stream_the_json_parser_gave_up_on_ends_with_the_batch_answer() {
        // Junk before the list: batch's regex fallback finds the call.
        let (got, want) =
            stream_and_finish(r#"[TOOL_CALLS]  junk [{"name": "add", "arguments":{"a": 1, "b": 2}}] trail"#);
        assert_eq!(got, want);
        assert_eq!(got.1, [("add".to_string(), r#"{"a": 1, "b": 2}"#.to_string())]);
        // v11-style calls on a pre-v11 tokenizer: batch answers the first
        // piece after the marker as content.
        let (got, want) = stream_and_finish(r#"[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}"#);
        assert_eq!(got, want);
        assert_eq!(got, (r#"add{"a": 3.5, "b": 4}"#.to_string(), vec![]));
        let (got, want) = stream_and_finish("[TOOL_CALLS] not json at all");
        assert_eq!(got, want);
    }

    #[test]
    fn text_after_the_json_parser_gave_up_waits_for_the_batch_answer() {
        // vLLM releases "4}" (the text before a marker that ends a delta)
        // after its JSON parser failed, then ends without the batch answer.
        let c = ctx(ToolChoice::Auto);
        let mut p = MistralParser::new(ID);
        let text = r#"[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}"#;
        let mut content = String::new();
        for piece in [TOOL_CALLS, r#"add{"a": 3.5, "b": "#, &format!("4}}{TOOL_CALLS}"), r#"multiply{"a": 3, "b": 6}"#] {
            let ids: Vec<i64> = if piece.contains(TOOL_CALLS) { vec![ID] } else { vec![1] };
            let t = Texts { previous: "", current: piece, delta: piece };
            let i = Ids { previous: &[], current: &ids, delta: &ids };
            content += p.extract_tool_calls_streaming(&t, &i, &c).and_then(|d| d.content).as_deref().unwrap_or("");
        }
        assert_eq!(content, "");
        content += p.finish_streaming().and_then(|d| d.content).as_deref().unwrap_or("");
        assert_eq!(Some(content), p.extract_tool_calls(text, &c).content);
    }

    #[test]
    fn a_stream_that_sent_content_gets_no_final_batch_answer() {
        // Text before a marker the JSON parser then gives up on: vLLM's
        // stream, which batch's answer (the JSON part) cannot follow.
        let c = ctx(ToolChoice::Auto);
        let mut p = MistralParser::new(ID);
        for piece in ["Hello", TOOL_CALLS, " not json"] {
            let ids: Vec<i64> = if piece == TOOL_CALLS { vec![ID] } else { vec![1] };
            let t = Texts { previous: "", current: piece, delta: piece };
            let i = Ids { previous: &[], current: &ids, delta: &ids };
            p.extract_tool_calls_streaming(&t, &i, &c);
        }
        assert!(p.finish_streaming().is_none());
    }

    #[test]
    fn stream_stops_at_invalid_json() {
        let (content, calls) = stream(&["x", TOOL_CALLS, "[{\"name\" 1", "}]", "more"], ToolChoice::Auto);
        assert_eq!(content, "x");
        assert!(calls.is_empty());
    }
}

crate::impl_snapshot!(MistralParser {
    started,
    state,
    json,
    bare_object,
    starting_new_tool,
    new_name,
    new_string_arguments,
    id_unsent,
    json_text,
    calls_sent,
    content_sent,
} nested { calls });
