//! OpenAI's Harmony format (gpt-oss; tool parser `openai`, reasoning parser
//! `openai_gptoss`): vLLM's `HarmonyParser`, which reads the output's token
//! ids, not its text. Messages are
//! `<|start|>ROLE[ to=RECIPIENT]<|channel|>CHANNEL[ CONTENT_TYPE]<|message|>TEXT<|end|>`
//! (the first one's `<|start|>assistant` is the prompt's end); `analysis`
//! is reasoning, `final` and recipient-less `commentary` are content, a
//! function recipient (`functions.NAME`, or a bare name that is no builtin
//! tool) is a tool call whose arguments end at `<|call|>`.
//!
//! vLLM uses this parser for every `gpt_oss` model whatever the flags name,
//! and refuses any other parser for it.

mod machine;
mod tag;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use self::machine::{Framing, Header, Machine, Step};
use crate::error::ApiError;
use crate::model::Model;
use crate::parse::family::{
    token_ids, Composition, Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily,
    ToolParserFactory,
};
use crate::parse::unified::{Placeholder, Selected, UnifiedFactory, UnifiedParser};
use crate::parse::{random_tool_call_id, ChatContext, FunctionCall, ReasoningParser, Registry, ToolParser};
use crate::pycompat::json::{dumps_with, loads, DumpOptions};
use crate::structured::{RequestFormat, StrictLevel, TagModel};
use crate::wire::response::{Delta, DeltaToolCall};

const TOOL: &str = "openai";
const REASONING: &str = "openai_gptoss";
const MODEL_TYPE: &str = "gpt_oss";
/// `BUILTIN_TOOL_TO_MCP_SERVER_LABEL`: recipients that are no function.
const BUILTIN_TOOLS: [&str; 3] = ["python", "browser", "container"];

/// `_SegmentType`.
#[derive(Debug, PartialEq)]
enum Segment {
    Tool,
    Reasoning,
    Content,
    Ignore,
}

/// `is_function_recipient` (chat: every bare name that is no builtin tool).
fn is_function_recipient(recipient: &str) -> bool {
    if recipient.is_empty() || recipient.starts_with("<|") {
        return false;
    }
    if let Some(name) = recipient.strip_prefix("functions.") {
        return !name.is_empty();
    }
    let first = recipient.split('.').next().unwrap_or(recipient);
    recipient != "assistant" && !BUILTIN_TOOLS.contains(&first)
}

fn classify(channel: Option<&str>, recipient: Option<&str>) -> Segment {
    if recipient.is_some_and(is_function_recipient) {
        return Segment::Tool;
    }
    match channel {
        Some("analysis") => Segment::Reasoning,
        Some("final") => Segment::Content,
        Some("commentary") if recipient.is_none() => Segment::Content,
        _ => Segment::Ignore,
    }
}

/// `_normalize_recipient`: older Harmony read a constrained format into
/// the recipient. An empty recipient (`to=` and nothing) stays a recipient.
fn normalize(recipient: Option<&str>) -> Option<String> {
    let r = recipient?;
    match r.find("<|constrain|>") {
        None => Some(r.to_string()),
        Some(i) => Some(r[..i].trim_end().to_string()).filter(|r| !r.is_empty()),
    }
}

/// A completed message.
struct Message {
    header: Header,
    text: String,
}

/// The parser state a stream carries between calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Stream {
    machine: Machine,
    /// `_current_message_tokens`: the ids taken since the last completed
    /// message (returned as raw text when the output ends inside a header).
    recovery: Vec<i64>,
    next_tool_index: i64,
}

/// One token's segment (`Segment`); `ended`: it completed a message.
struct Piece {
    channel: Option<String>,
    recipient: Option<String>,
    delta: String,
    ended: Option<Message>,
}

pub struct Harmony {
    framing: Framing,
    model: Arc<Model>,
    reasoning: bool,
    tools: bool,
    include_reasoning: bool,
    stream: Stream,
    /// The library takes ids as `u32`: another id raises.
    failure: Option<&'static str>,
}

impl Harmony {
    /// `process_chunk`: one piece per token the library took.
    fn process(&self, stream: &mut Stream, ids: &[i64], content: &mut String) -> Vec<Piece> {
        let mut pieces = Vec::with_capacity(ids.len());
        for &id in ids {
            let (delta, ended) = match stream.machine.step(id, &self.framing, &self.model) {
                Step::Rejected => continue,
                Step::Taken(delta) => (delta.unwrap_or_default(), None),
                Step::Ended(header, tail) => {
                    let text = std::mem::take(content) + &tail;
                    (String::new(), Some(Message { header, text }))
                }
            };
            content.push_str(&delta);
            let current = stream.machine.current();
            // The recovered text is only read when the output ends inside a
            // header: inside a message the ids are dead weight (a stream's
            // state stays small however long the message).
            if ended.is_some() || current.is_some() {
                stream.recovery.clear();
            } else {
                stream.recovery.push(id);
            }
            pieces.push(Piece {
                channel: current.and_then(|h| h.channel.clone()),
                recipient: normalize(current.and_then(|h| h.recipient.as_deref())),
                delta,
                ended,
            });
        }
        pieces
    }

    /// `flush`: the message the output's end completes, or the raw text
    /// of a header it cut (as a final message, and as its delta).
    fn flush(&self, stream: &mut Stream, content: &mut String) -> Vec<Piece> {
        let ended = match stream.machine.eos() {
            Ok(Some((header, tail))) => vec![Piece::ended(header, std::mem::take(content) + &tail)],
            Ok(None) => Vec::new(),
            Err(()) => {
                let text = self.model.decode(&stream.recovery);
                let header = Header { role: "assistant".into(), channel: Some("final".into()), ..Header::default() };
                let recovered = Piece {
                    channel: header.channel.clone(),
                    recipient: None,
                    delta: text.clone(),
                    ended: None,
                };
                vec![recovered, Piece::ended(header, text)]
            }
        };
        *stream = Stream { next_tool_index: stream.next_tool_index, ..Stream::default() };
        content.clear();
        ended
    }

    /// A tool call's arguments: JSON re-serialized (`json.dumps`) unless
    /// the content type names another format or the text does not parse.
    fn arguments(header: &Header, text: &str) -> String {
        if header.content_type.as_deref().is_some_and(|t| !t.contains("json")) {
            return text.to_string();
        }
        match loads(text) {
            Some(v) => dumps_with(&v, &DumpOptions { ensure_ascii: true, ..DumpOptions::default() }),
            None => text.to_string(),
        }
    }
}

impl Piece {
    fn ended(header: Header, text: String) -> Piece {
        Piece { channel: None, recipient: None, delta: String::new(), ended: Some(Message { header, text }) }
    }
}

impl UnifiedParser for Harmony {
    fn parse(&mut self, _: &str, ids: &[i64], _: Option<&[i64]>) -> (Option<String>, Option<String>, Vec<FunctionCall>) {
        if ids.iter().any(|&id| u32::try_from(id).is_err()) {
            self.failure = Some("out of range integral type conversion attempted");
            return (None, None, Vec::new());
        }
        let (mut stream, mut content) = (Stream::default(), String::new());
        let mut pieces = self.process(&mut stream, ids, &mut content);
        pieces.extend(self.flush(&mut stream, &mut content));
        let (mut reasoning, mut text, mut calls) = (Vec::new(), Vec::new(), Vec::new());
        for Message { header, text: body } in pieces.into_iter().filter_map(|p| p.ended) {
            if header.role != "assistant" {
                continue;
            }
            let recipient = normalize(header.recipient.as_deref());
            match classify(header.channel.as_deref(), recipient.as_deref()) {
                Segment::Reasoning if self.reasoning && !body.is_empty() => reasoning.push(body),
                Segment::Content if !body.is_empty() => text.push(body),
                Segment::Tool if self.tools => {
                    let recipient = recipient.unwrap_or_default();
                    let name = recipient.strip_prefix("functions.").unwrap_or(&recipient).to_string();
                    let arguments = Self::arguments(&header, &body);
                    calls.push(FunctionCall { id: None, name, arguments });
                }
                _ => {}
            }
        }
        let join = |parts: Vec<String>| (!parts.is_empty()).then(|| parts.join("\n")).filter(|s| !s.is_empty());
        (join(reasoning), join(text), calls)
    }

    fn parse_delta(&mut self, _: &str, ids: &[i64], _: Option<&[i64]>, finished: bool) -> Option<Delta> {
        if ids.iter().any(|&id| u32::try_from(id).is_err()) {
            self.failure = Some("invalid stream_state: derender failed");
            return None;
        }
        let mut stream = std::mem::take(&mut self.stream);
        let current = stream.machine.current();
        let mut previous = normalize(current.and_then(|h| h.recipient.as_deref()));
        // Streams need no message text: only deltas are sent.
        let mut content = String::new();
        let mut pieces = self.process(&mut stream, ids, &mut content);
        if finished {
            pieces.extend(self.flush(&mut stream, &mut content));
        }
        let (mut text, mut reasoning, mut calls) = (String::new(), String::new(), Vec::<DeltaToolCall>::new());
        for piece in pieces {
            if piece.ended.is_some() {
                previous = None;
                continue;
            }
            match classify(piece.channel.as_deref(), piece.recipient.as_deref()) {
                Segment::Reasoning if self.reasoning => reasoning.push_str(&piece.delta),
                Segment::Content => text.push_str(&piece.delta),
                Segment::Tool if self.tools => {
                    let recipient = piece.recipient.unwrap_or_default();
                    if previous.as_deref() != Some(recipient.as_str()) {
                        let name = recipient.strip_prefix("functions.").unwrap_or(&recipient).to_string();
                        let index = stream.next_tool_index;
                        calls.push(DeltaToolCall::opening(index, random_tool_call_id(), name, Some(piece.delta)));
                        stream.next_tool_index += 1;
                        previous = Some(recipient);
                    } else if !piece.delta.is_empty() {
                        let index = stream.next_tool_index - 1;
                        match calls.last_mut().and_then(|c| c.function.as_mut()) {
                            Some(f) => f.arguments.get_or_insert_with(String::new).push_str(&piece.delta),
                            None => calls.push(DeltaToolCall::arguments(index, piece.delta)),
                        }
                    }
                }
                _ => {}
            }
        }
        if finished {
            stream.next_tool_index = 0;
        }
        self.stream = stream;
        if !self.include_reasoning {
            reasoning.clear();
        }
        let some = |s: String| (!s.is_empty()).then_some(s);
        let delta = Delta { content: some(text), reasoning: some(reasoning), tool_calls: calls, ..Delta::default() };
        (delta.content.is_some() || delta.reasoning.is_some() || !delta.tool_calls.is_empty()).then_some(delta)
    }

    /// `GptOssReasoningParser.is_reasoning_end`: always.
    fn is_reasoning_end(&self, _: &[i64]) -> bool {
        true
    }

    fn failure(&self) -> Option<ApiError> {
        self.failure.map(ApiError::bad_request)
    }
}

impl crate::parse::Snapshot for Harmony {
    fn save_state(&self) -> Result<serde_json::Value, crate::parse::SnapshotError> {
        Ok(serde_json::to_value(&self.stream)?)
    }

    fn load_state(&mut self, state: serde_json::Value) -> Result<(), crate::parse::SnapshotError> {
        self.stream = serde_json::from_value(state)?;
        crate::parse::snapshot::check_index(self.stream.next_tool_index, "next_tool_index")
    }
}

/// Both names' factory.
struct Factory {
    framing: Framing,
}

impl UnifiedFactory for Factory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, selected: Selected) -> Box<dyn UnifiedParser> {
        Box::new(Harmony {
            framing: self.framing,
            model: model.clone(),
            reasoning: selected.reasoning,
            tools: selected.tools,
            include_reasoning: ctx.include_reasoning,
            stream: Stream::default(),
            failure: None,
        })
    }

    /// Harmony reads ids: the text's special tokens do not matter.
    fn keeps_special_tokens(&self) -> bool {
        false
    }

    fn reads_ids(&self) -> bool {
        true
    }

    fn output_format(&self, format: &RequestFormat) -> Option<serde_json::Value> {
        match format {
            RequestFormat::Format(f) => Some(tag::output_tag(f.clone())),
            _ => None,
        }
    }
}

impl ReasoningParserFactory for Factory {
    fn create(&self, _: &ChatContext, _: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(Placeholder)
    }
    fn unified(&self) -> Option<&dyn UnifiedFactory> {
        Some(self)
    }
}

impl ToolParserFactory for Factory {
    fn create(&self, _: &ChatContext, _: &Arc<Model>, _: bool) -> Box<dyn ToolParser> {
        Box::new(Placeholder)
    }
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Never
    }
    fn tag_model(&self) -> Option<&'static TagModel> {
        Some(&TAG)
    }
    /// Hosted tools reach the Harmony preamble, which names what it refuses.
    fn requires_function_tools(&self) -> bool {
        false
    }
    fn unified(&self) -> Option<&dyn UnifiedFactory> {
        Some(self)
    }
}

fn load(model: &Model) -> Result<Arc<Factory>, String> {
    if model.model_type.as_deref() != Some(MODEL_TYPE) {
        return Err(format!(
            "Harmony parsing needs a {MODEL_TYPE} model (vLLM parses Harmony only for model_type {MODEL_TYPE}; its stub parsers fail on any other model)"
        ));
    }
    let reason = "the vocabulary lacks Harmony's framing tokens";
    let [start, message, end, call, ret] =
        token_ids(model, ["<|start|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>"], reason)?;
    Ok(Arc::new(Factory { framing: Framing { start, message, stops: [ret, end, call] } }))
}

/// `HarmonyParser.__init__`'s refusal of any other parser.
fn foreign(flag: &str, name: &str) -> String {
    let wanted = if flag == "--tool-call-parser" { "GptOssToolParser" } else { "GptOssReasoningParser" };
    format!("Harmony requires {wanted}, got {flag} {name}.")
}

const NEEDS: &str = "a gpt_oss model (Harmony's framing tokens)";
static TOOL_FAMILY: ToolFamily = Family { names: &[TOOL], needs: NEEDS, load: |m| Ok(load(m)?) };
static REASONING_FAMILY: ReasoningFamily = Family { names: &[REASONING], needs: NEEDS, load: |m| Ok(load(m)?) };
static COMPOSITION: Composition =
    Composition { names: &[TOOL, REASONING], model_type: Some((MODEL_TYPE, foreign)), validate: |_, _, _| Ok(()) };

static TAG: TagModel = TagModel { name: "harmony", build: tag::tools_tag, default_level: StrictLevel::Auto };

pub(super) fn register(registry: &mut Registry) {
    registry.tag_model(&TAG);
    registry.tool_family(&TOOL_FAMILY);
    registry.reasoning_family(&REASONING_FAMILY);
    registry.composition(&COMPOSITION);
}
