//! vLLM's `DelegatingParser` (reasoning first, then tool calls on what
//! follows) and `ChatStreamProcessor` (one per streamed choice), with the
//! batch message assembly rules of `message_assembly.py`.

use super::batch_completion::{self, Sent, Target};
use super::required::{named_streaming, parse_required, required_streaming};
use super::snapshot::{Snapshot, SnapshotError};
use super::unified::UnifiedParser;
use super::{random_tool_call_id, ChatContext, FunctionCall, Ids, ReasoningParser, Texts, ToolChoice, ToolParser};
use crate::pycompat::str::py_isspace;
use crate::wire::response::{Delta, DeltaToolCall, FunctionCall as WireFunctionCall, ToolCall};
use serde_json::{json, Value};

/// One parser instance: per request in batch, per choice in a stream.
pub struct DelegatingParser {
    reasoning: Option<Box<dyn ReasoningParser>>,
    tool: Option<Box<dyn ToolParser>>,
    enable_auto_tools: bool,
    // Streaming state (`StreamState` in vLLM).
    reasoning_ended: bool,
    tool_call_text_started: bool,
    prompt_reasoning_checked: bool,
    previous_text: String,
    previous_ids: Vec<i64>,
    function_name_returned: bool,
    /// Every configured parser is engine-based: they see deltas only.
    engine_based: bool,
    /// The text so far of a `"required"` tool choice on engine parsers.
    forced_text: String,
    /// What the tool phase sent, for parsers completed to the batch answer.
    sent: Sent,
    /// vLLM's response-template parser (`hf`), which replaces both phases.
    unified: Option<Box<dyn UnifiedParser>>,
    /// The stream has left batch's answer for good: calls parsed under
    /// `tool_choice: "none"` were dropped, as vLLM's stream drops them
    /// (batch may answer their markup as content), or its end could not be
    /// completed to batch's answer.
    left_batch: bool,
    /// Where a filtering reasoning parser's stream stands (see `Filter`).
    filter: Filter,
}

/// A filtering reasoning parser (MiniCPM-V without thinking) reads each
/// delta through its grammar, as batch reads the whole text, where vLLM's
/// stream hands the raw text on. The stream follows vLLM's raw text while
/// the grammar drops nothing (`pending`: raw text sent that the grammar
/// still holds, a tail that may open a marker). When the grammar drops a
/// marker inside one delta the stream reads as batch from then on; when it
/// drops one whose start already went out raw, it stays vLLM's raw text.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
enum Filter {
    Follow { pending: String },
    Batch,
    Raw,
}

/// The assembled fields of a batch assistant message.
pub struct MessageFields {
    pub reasoning: Option<String>,
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
}

impl DelegatingParser {
    pub fn new(
        reasoning: Option<Box<dyn ReasoningParser>>,
        tool: Option<Box<dyn ToolParser>>,
        enable_auto_tools: bool,
    ) -> Self {
        let engine_based =
            reasoning.as_ref().is_none_or(|r| r.engine_based()) && tool.as_ref().is_none_or(|t| t.engine_based());
        DelegatingParser {
            engine_based,
            forced_text: String::new(),
            sent: Sent::default(),
            reasoning,
            tool,
            enable_auto_tools,
            reasoning_ended: false,
            tool_call_text_started: false,
            prompt_reasoning_checked: false,
            previous_text: String::new(),
            previous_ids: Vec::new(),
            function_name_returned: false,
            unified: None,
            left_batch: false,
            filter: Filter::Follow { pending: String::new() },
        }
    }

    /// This parser with the response-template parser doing all the work.
    pub fn with_unified(mut self, unified: Box<dyn UnifiedParser>) -> Self {
        self.unified = Some(unified);
        self
    }

    /// Has the stream left batch's answer? For good (above); or the tool
    /// or reasoning parser says so (`ToolParser::left_batch`); or, still
    /// reasoning, batch finds calls in the text so far; or, on a parser
    /// completed to batch's answer at its end, what went out is no longer
    /// the start of that answer for the text so far. Rescans the text.
    pub fn left_batch(&self, ctx: &ChatContext) -> bool {
        if self.unified.is_some() {
            return false;
        }
        // The text so far, where a compact state keeps it: an answer must not
        // depend on what only a parser kept in memory has seen.
        let history = self.keeps_history();
        let text = if history { self.previous_text.as_str() } else { "" };
        let reasoning = || self.in_reasoning_phase() && self.reasoning.as_ref().is_some_and(|r| r.left_batch(text));
        let tool = || self.tool.as_ref().is_some_and(|t| self.tool_parser_streams(t.as_ref(), ctx) && t.left_batch());
        if self.left_batch || reasoning() || tool() {
            return true;
        }
        if !history {
            return false;
        }
        if self.in_reasoning_phase() && self.keeps_tool_calls(ctx) {
            // Still reasoning, the stream has sent no call; batch reads calls
            // from the content it splits off (Granite's reasoning never ends).
            let content = self.reasoning.as_ref().and_then(|r| r.extract_reasoning(text, ctx).1);
            return self.extract_tool_calls(content, ctx).0.is_some_and(|calls| !calls.is_empty());
        }
        if !self.completes_to_batch(ctx) {
            return false;
        }
        let (calls, content) = self.extract_tool_calls(Some(self.previous_text.clone()), ctx);
        let calls = self.answer_calls(calls, ctx);
        !self.sent.leads_to(&Target { content: content.as_deref().unwrap_or(""), calls: &calls })
    }

    /// Does the tool parser read the stream (`tool_phase`), or do forced
    /// choices and `tool_choice: "none"` pass it by?
    fn tool_parser_streams(&self, tool: &dyn ToolParser, ctx: &ChatContext) -> bool {
        match ctx.tool_choice {
            ToolChoice::None => self.engine_based,
            ToolChoice::Named(_) | ToolChoice::Required => !tool.supports_required_and_named(),
            _ => true,
        }
    }

    /// Batch's calls as the stream answers them.
    fn answer_calls(&self, calls: Option<Vec<FunctionCall>>, ctx: &ChatContext) -> Vec<FunctionCall> {
        let mut calls = calls.unwrap_or_default();
        if !ctx.parallel_tool_calls {
            calls.truncate(1);
        }
        calls
    }

    /// The first error a plugin parser raised, reasoning first.
    pub fn failure(&self) -> Option<crate::error::ApiError> {
        if let Some(u) = &self.unified {
            return u.failure();
        }
        let reasoning = self.reasoning.as_ref().and_then(|r| r.failure());
        reasoning.or_else(|| self.tool.as_ref().and_then(|t| t.failure()))
    }

    /// A unified parser takes `token` (after `before`) as markup that shows
    /// no text (`UnifiedParser::takes_as_markup`).
    pub fn takes_as_markup(&self, before: &str, token: &str, prompt: Option<&[i64]>) -> bool {
        if let Some(u) = &self.unified {
            return u.takes_as_markup(before, token, prompt);
        }
        // Every configured parser drops the token, whichever phase reads it.
        (self.reasoning.is_some() || self.tool.is_some())
            && self.reasoning.as_ref().is_none_or(|r| r.drops_token(token))
            && self.tool.as_ref().is_none_or(|t| t.drops_token(token))
    }

    pub fn has_tool_parser(&self) -> bool {
        self.tool.is_some()
    }

    /// Would vLLM's stream, given `prompt`, take reasoning as ended before
    /// the output (a unified parser reads the prompt its own way)?
    pub fn prompt_ends_reasoning(&self, prompt: &[i64]) -> bool {
        self.unified.is_none() && self.reasoning.as_ref().is_some_and(|r| r.is_reasoning_end(prompt))
    }

    /// `is_reasoning_end` over ids (e.g. the rendered prompt).
    pub fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        if let Some(u) = self.unified.as_ref().filter(|_| self.reasoning.is_some()) {
            return u.is_reasoning_end(ids);
        }
        self.reasoning.as_ref().is_some_and(|r| r.is_reasoning_end(ids))
    }

    /// `is_reasoning_end` as vLLM answers it: `None` where its parser
    /// leaves the method unimplemented.
    pub fn reasoning_end(&self, ids: &[i64]) -> Option<bool> {
        let ended = self.is_reasoning_end(ids);
        self.reasoning.as_ref().is_none_or(|r| r.reports_reasoning_end()).then_some(ended)
    }

    /// `keeps_tool_calls`: are extracted calls returned for this request?
    pub fn keeps_tool_calls(&self, ctx: &ChatContext) -> bool {
        if ctx.forces_tool_calls() {
            return true;
        }
        let auto_tools = self.enable_auto_tools && self.tool.is_some();
        auto_tools && ctx.tool_choice == ToolChoice::Auto && !ctx.tools.is_empty()
    }

    /// Batch: `Parser.parse` then `assemble_chat_message_fields`; `ids`:
    /// the choice's output ids.
    pub fn parse_message(
        &mut self,
        text: &str,
        ids: &[i64],
        ctx: &ChatContext,
        prompt_ids: Option<&[i64]>,
    ) -> MessageFields {
        if let Some(u) = &mut self.unified {
            let (reasoning, content, calls) = u.parse(text, ids, prompt_ids);
            return self.assemble(reasoning, content, Some(calls), ctx);
        }
        if let (Some(r), Some(p)) = (&mut self.reasoning, prompt_ids) {
            r.set_prompt_token_ids(p);
        }
        let (reasoning, content) = match &self.reasoning {
            Some(r) => r.extract_reasoning(text, ctx),
            None => (None, Some(text.to_string())),
        };
        let (calls, content) = self.extract_tool_calls(content, ctx);
        let (reasoning, content) = match &self.reasoning {
            Some(r) => (r.rewrite_text(reasoning), r.rewrite_text(content)),
            None => (reasoning, content),
        };
        self.assemble(reasoning, content, calls, ctx)
    }

    /// `assemble_chat_message_fields`.
    fn assemble(
        &self,
        reasoning: Option<String>,
        content: Option<String>,
        calls: Option<Vec<FunctionCall>>,
        ctx: &ChatContext,
    ) -> MessageFields {
        let reasoning = if ctx.include_reasoning { reasoning } else { None };
        if !self.keeps_tool_calls(ctx) {
            return MessageFields { reasoning, content, tool_calls: Vec::new() };
        }
        let content = if ctx.forces_tool_calls() { Some(content.unwrap_or_default()) } else { content };
        let mut calls = calls.unwrap_or_default();
        if !ctx.parallel_tool_calls {
            calls.truncate(1);
        }
        let tool_calls = calls
            .into_iter()
            .map(|c| ToolCall {
                id: c.id.unwrap_or_else(random_tool_call_id),
                kind: "function",
                function: WireFunctionCall { name: c.name, arguments: c.arguments },
            })
            .collect();
        MessageFields { reasoning, content, tool_calls }
    }

    /// `_extract_tool_calls`: `(calls, content)`; `None` calls = "no calls"
    /// from the auto path.
    fn extract_tool_calls(
        &self,
        content: Option<String>,
        ctx: &ChatContext,
    ) -> (Option<Vec<FunctionCall>>, Option<String>) {
        let Some(tool) = &self.tool else { return (Some(Vec::new()), content) };
        if tool.parses_every_choice() && self.enable_auto_tools {
            let info = tool.extract_tool_calls(content.as_deref().unwrap_or(""), ctx);
            if ctx.tool_choice == ToolChoice::None {
                return (Some(Vec::new()), info.content);
            }
            if !info.tools_called {
                return (None, info.content);
            }
            let content = info.content.filter(|c| c.is_empty() || !c.trim_matches(py_isspace).is_empty());
            return (Some(info.calls), content);
        }
        if ctx.tool_choice == ToolChoice::None {
            if self.engine_based {
                // Engine parsers still strip tool markup from the content.
                let info = tool.extract_tool_calls(content.as_deref().unwrap_or(""), ctx);
                return (Some(Vec::new()), info.content);
            }
            return (Some(Vec::new()), content);
        }
        let supports = tool.supports_required_and_named();
        let named = matches!(ctx.tool_choice, ToolChoice::Named(_));
        let required = ctx.tool_choice == ToolChoice::Required;
        let auto = self.enable_auto_tools
            && (matches!(ctx.tool_choice, ToolChoice::Auto | ToolChoice::Null) || (!supports && (named || required)));
        let blank = |c: &Option<String>| c.as_deref().is_none_or(|s| s.trim().is_empty());
        if let (true, ToolChoice::Named(name)) = (supports, &ctx.tool_choice) {
            if blank(&content) {
                return (Some(Vec::new()), None);
            }
            let call = FunctionCall { id: None, name: name.clone(), arguments: content.unwrap_or_default() };
            return (Some(vec![call]), None);
        }
        if supports && required {
            return (Some(parse_required(content.as_deref().unwrap_or(""))), None);
        }
        if auto {
            let info = tool.extract_tool_calls(content.as_deref().unwrap_or(""), ctx);
            if info.tools_called {
                // Whitespace alone is no content; an empty string stays (xlam's).
                let content = info.content.filter(|c| c.is_empty() || !c.trim().is_empty());
                return (Some(info.calls), content);
            }
            if (required || named) && blank(&content) {
                return (Some(Vec::new()), None);
            }
            if self.engine_based {
                // Engine parsers drop incomplete markup from the content.
                return (None, info.content.filter(|c| !c.is_empty()));
            }
            return (None, content);
        }
        (Some(Vec::new()), content)
    }

    /// `DelegatingParser.parse_delta` (legacy, text-accumulating parsers).
    pub fn parse_delta(
        &mut self,
        delta_text: &str,
        delta_ids: &[i64],
        ctx: &ChatContext,
        prompt_ids: Option<&[i64]>,
        finished: bool,
    ) -> Option<Delta> {
        if let Some(u) = &mut self.unified {
            return u.parse_delta(delta_text, delta_ids, prompt_ids, finished);
        }
        // The content so far, for a reasoning parser that recomputes it
        // (`streamed_content`) once reasoning has ended.
        let content_before = (self.restreams_content() && self.reasoning_ended).then(|| self.previous_text.clone());
        if !self.prompt_reasoning_checked
            && prompt_ids.is_none()
            && self.reasoning.as_ref().is_some_and(|r| r.passthrough() || r.ended_before_output())
        {
            self.prompt_reasoning_checked = true;
            self.reasoning_ended = true;
        }
        if !self.prompt_reasoning_checked {
            if let Some(prompt) = prompt_ids {
                self.prompt_reasoning_checked = true;
                if let Some(r) = &mut self.reasoning {
                    r.set_prompt_token_ids(prompt);
                }
                match &mut self.reasoning {
                    None => self.reasoning_ended = true,
                    Some(r) if r.is_reasoning_end(prompt) => self.reasoning_ended = true,
                    Some(r) => r.adjust_initial_state_from_prompt(prompt),
                }
            }
        }
        let filtered = self.filter_content(delta_text, delta_ids, finished);
        let (delta_text, delta_ids) = match &filtered {
            Some(text) => (text.as_str(), &[][..]),
            None => (delta_text, delta_ids),
        };
        let (mut delta_text, mut delta_ids) = self.without_dropped_end_markers(delta_text, delta_ids);
        let (mut current_text, mut current_ids) = if self.engine_based {
            (delta_text.clone(), delta_ids.clone())
        } else {
            (
                format!("{}{}", self.previous_text, delta_text),
                self.previous_ids.iter().chain(&delta_ids).copied().collect(),
            )
        };
        let mut message: Option<Delta> = None;
        let mut transitioned = false;

        if self.in_reasoning_phase() {
            if let Some(r) = &mut self.reasoning {
                let texts = Texts { previous: &self.previous_text, current: &current_text, delta: &delta_text };
                let ids = Ids { previous: &self.previous_ids, current: &current_ids, delta: &delta_ids };
                message = r.extract_reasoning_streaming(&texts, &ids);
                let transition = if r.engine_based() {
                    r.engine_confirmed_end()
                } else {
                    r.is_reasoning_end_streaming(&current_ids, &delta_ids)
                };
                if transition {
                    self.reasoning_ended = true;
                    transitioned = true;
                    current_ids = r.extract_content_ids(&delta_ids);
                    // An engine holds back text after its end marker: flush it.
                    let flushed = if r.engine_based() { r.finish_streaming() } else { None };
                    current_text = message.as_ref().and_then(|m| m.content.clone()).unwrap_or_default()
                        + flushed.as_ref().and_then(|f| f.content.as_deref()).unwrap_or("");
                    if !self.engine_based {
                        delta_text = current_text.clone();
                    } else if self.tool.is_some() {
                        // The tool phase below consumes the text.
                        if let Some(m) = &mut message {
                            m.content = None;
                        }
                    } else if !current_text.is_empty() {
                        message.get_or_insert_with(Delta::default).content = Some(current_text.clone());
                    }
                }
            }
        }

        if self.in_tool_phase() {
            if !self.tool_call_text_started {
                self.tool_call_text_started = true;
                self.previous_text.clear();
                self.previous_ids.clear();
                delta_text = current_text.clone();
                delta_ids = current_ids.clone();
            }
            let reasoning_here = message.as_ref().and_then(|m| m.reasoning.clone());
            message = self.tool_phase(&current_text, &current_ids, &delta_text, &delta_ids, ctx);
            if let Some(m) = message.as_ref().filter(|_| !finished && self.completes_to_batch(ctx)) {
                self.sent.record(m);
            }
            if let Some(r) = reasoning_here.filter(|r| !r.is_empty()) {
                match &mut message {
                    None => message = Some(Delta { reasoning: Some(r), ..Default::default() }),
                    Some(m) if m.reasoning.as_deref().is_none_or(str::is_empty) => m.reasoning = Some(r),
                    Some(_) => {}
                }
            }
        }

        if message.is_none() && !transitioned && !self.in_reasoning_phase() && !self.in_tool_phase() {
            message = Some(Delta::content(delta_text.clone()));
        }
        if self.engine_based {
            self.previous_text.clear();
            self.previous_ids.clear();
        } else {
            self.previous_text = current_text;
            self.previous_ids = current_ids;
        }

        if finished {
            // `finalize_generation`: a stream whose reasoning never ended may
            // get fallback content, then the unstreamed tool arguments.
            let promoted = match &self.reasoning {
                Some(r) if !self.reasoning_ended => {
                    r.streaming_fallback_content(&self.previous_text, ctx).filter(|c| !c.is_empty())
                }
                _ => None,
            };
            if let Some(promoted) = promoted {
                let m = message.get_or_insert_with(Delta::default);
                m.content = Some(m.content.take().unwrap_or_default() + &promoted);
            }
            let before_append = message.clone();
            if let (Some(tool), Some(m)) = (&mut self.tool, message.as_mut()) {
                append_unstreamed_args(tool.as_mut(), m);
            }
            if self.completes_to_batch(ctx) {
                let (calls, content) = self.extract_tool_calls(Some(self.previous_text.clone()), ctx);
                let calls = self.answer_calls(calls, ctx);
                let target = Target { content: content.as_deref().unwrap_or(""), calls: &calls };
                let reached;
                (message, reached) = batch_completion::finish(&self.sent, message, before_append, &target);
                self.left_batch |= !reached;
            }
        }
        if finished {
            // `_flush_engine_parsers`: engines flush what they hold (a reasoning
            // engine only while reasoning has not ended).
            let mut flushes = Vec::new();
            if !self.reasoning_ended {
                flushes.extend(self.reasoning.as_mut().filter(|r| r.engine_based()).and_then(|r| r.finish_streaming()));
            }
            // Legacy tool parsers may flush too (pythonic's batch-equal end).
            flushes.extend(self.tool.as_mut().and_then(|t| t.finish_streaming()));
            for flush in flushes {
                let m = message.get_or_insert_with(Delta::default);
                if let Some(c) = flush.content.filter(|c| !c.is_empty()) {
                    m.content = Some(m.content.take().unwrap_or_default() + &c);
                }
                if let Some(r) = flush.reasoning.filter(|r| !r.is_empty()) {
                    m.reasoning = Some(m.reasoning.take().unwrap_or_default() + &r);
                }
                m.tool_calls.extend(flush.tool_calls);
            }
        }
        if !ctx.include_reasoning {
            if let Some(m) = &mut message {
                m.reasoning = None;
                if m.content.as_deref().is_none_or(str::is_empty) && m.tool_calls.is_empty() {
                    message = None;
                }
            }
        }
        if let (true, Some(r), Some(m)) =
            (self.restreams_content() && self.reasoning_ended, &self.reasoning, &mut message)
        {
            m.content = r.streamed_content(content_before.as_deref().unwrap_or(""), &self.previous_text);
            if m.role.is_none() && m.content.is_none() && m.reasoning.is_none() && m.tool_calls.is_empty() {
                message = None;
            }
        }
        match &mut self.reasoning {
            Some(r) => r.rewrite_delta(message, finished),
            None => message,
        }
    }

    /// Without a tool parser, the reasoning parser recomputes the content
    /// streamed after reasoning from the whole text (`streamed_content`).
    fn restreams_content(&self) -> bool {
        self.tool.is_none() && !self.engine_based && self.reasoning.as_ref().is_some_and(|r| r.restreams_content())
    }

    /// The text a filtering reasoning parser hands to the tool phase: `None`
    /// for the delta as it is (other parsers, and a stream on vLLM's raw
    /// text), else what the grammar leaves of it (and, at the end, of what
    /// it held back).
    fn filter_content(&mut self, text: &str, ids: &[i64], finished: bool) -> Option<String> {
        let r = self.reasoning.as_mut().filter(|r| r.filters_content())?;
        self.prompt_reasoning_checked = true;
        self.reasoning_ended = true;
        if self.filter == Filter::Raw {
            return None;
        }
        let texts = Texts { previous: "", current: text, delta: text };
        let ids = Ids { previous: &[], current: ids, delta: ids };
        let mut content = r.extract_reasoning_streaming(&texts, &ids).and_then(|d| d.content).unwrap_or_default();
        if finished {
            content += &r.finish_streaming().and_then(|d| d.content).unwrap_or_default();
        }
        let Filter::Follow { pending } = &mut self.filter else { return Some(content) };
        let seen = format!("{pending}{text}");
        match seen.strip_prefix(content.as_str()) {
            // The grammar kept everything so far (it may hold a marker's start).
            Some(rest) if rest.is_empty() || (!finished && r.may_hold(rest)) => {
                *pending = rest.to_string();
                None
            }
            // It dropped a marker inside this delta: batch's reading.
            _ if pending.is_empty() => {
                self.filter = Filter::Batch;
                Some(content)
            }
            // It dropped one that began in text sent raw: vLLM's stream.
            _ => {
                self.filter = Filter::Raw;
                None
            }
        }
    }

    /// After a reasoning engine's reasoning ended, it drops a repeated end
    /// marker from the content (batch never shows it); vLLM hands later
    /// deltas to a legacy tool parser (or the content) raw, so its stream
    /// keeps the marker. Drop it here, as batch does. (An engine tool parser
    /// drops it itself.)
    fn without_dropped_end_markers(&self, text: &str, ids: &[i64]) -> (String, Vec<i64>) {
        let marker = self
            .reasoning
            .as_ref()
            .filter(|r| self.reasoning_ended && r.engine_based() && !r.passthrough())
            .filter(|_| !self.tool.as_ref().is_some_and(|t| t.engine_based()))
            .and_then(|r| r.end_marker_dropped_after_end());
        let Some((id, marker)) = marker.filter(|(id, m)| ids.contains(id) && text.contains(m)) else {
            return (text.to_string(), ids.to_vec());
        };
        let kept_ids: Vec<i64> = ids.iter().copied().filter(|x| *x != id).collect();
        let count = ids.len() - kept_ids.len();
        (text.replacen(marker, "", count), kept_ids)
    }

    fn in_reasoning_phase(&self) -> bool {
        self.reasoning.is_some() && !self.reasoning_ended
    }

    fn in_tool_phase(&self) -> bool {
        self.tool.is_some() && self.reasoning_ended
    }

    /// Is this stream's tool phase completed to the batch answer at its end
    /// (`batch_completion`)? Only for parsers that ask for it, on the auto
    /// path, once the tool phase has begun.
    fn completes_to_batch(&self, ctx: &ChatContext) -> bool {
        let asks = self.tool.as_ref().is_some_and(|t| t.completes_to_batch());
        let auto = matches!(ctx.tool_choice, ToolChoice::Auto | ToolChoice::Null);
        asks && auto && self.tool_call_text_started && self.keeps_tool_calls(ctx)
    }

    /// `_extract_tool_calls_streaming`: dispatch on `tool_choice`.
    fn tool_phase(
        &mut self,
        current_text: &str,
        current_ids: &[i64],
        delta_text: &str,
        delta_ids: &[i64],
        ctx: &ChatContext,
    ) -> Option<Delta> {
        let tool = self.tool.as_mut()?;
        if ctx.tool_choice == ToolChoice::None {
            if self.engine_based || tool.parses_every_choice() {
                let texts = Texts { previous: &self.previous_text, current: current_text, delta: delta_text };
                let ids = Ids { previous: &self.previous_ids, current: current_ids, delta: delta_ids };
                let mut d = tool.extract_tool_calls_streaming(&texts, &ids, ctx);
                if let Some(m) = d.as_mut().filter(|m| !m.tool_calls.is_empty()) {
                    self.left_batch = true;
                    m.tool_calls.clear();
                }
                return d;
            }
            return (!delta_text.is_empty()).then(|| Delta::content(delta_text));
        }
        let supports = tool.supports_required_and_named();
        if let (true, ToolChoice::Named(name)) = (supports, &ctx.tool_choice) {
            let (d, returned) = named_streaming(delta_text, name, self.function_name_returned);
            self.function_name_returned = returned;
            return Some(d);
        }
        if supports && ctx.tool_choice == ToolChoice::Required {
            // The JSON array spans chunks: scan the whole text so far. (vLLM
            // hands engine parsers only the delta here and so finds no call;
            // batch finds them, and so does this.)
            let previous = if self.engine_based { self.forced_text.clone() } else { self.previous_text.clone() };
            let current = if self.engine_based { format!("{previous}{delta_text}") } else { current_text.to_string() };
            let (d, returned) = required_streaming(&previous, &current);
            self.forced_text = current;
            self.function_name_returned = returned;
            return d;
        }
        self.function_name_returned = false;
        let texts = Texts { previous: &self.previous_text, current: current_text, delta: delta_text };
        let ids = Ids { previous: &self.previous_ids, current: current_ids, delta: delta_ids };
        tool.extract_tool_calls_streaming(&texts, &ids, ctx)
    }
}

/// The streaming state of a `DelegatingParser` and its parsers, as a value.
impl DelegatingParser {
    /// Will the text before each delta be read (by a legacy parser of the
    /// current phase, by the `"required"` path that rescans it, or at the
    /// end to complete the stream to the batch answer)? A compact stream
    /// then carries it. The tool phase starts afresh.
    fn keeps_history(&self) -> bool {
        let reads = match self.in_reasoning_phase() {
            true => self.reasoning.as_ref().is_some_and(|r| r.reads_history()),
            false => self
                .tool
                .as_ref()
                .is_some_and(|t| t.reads_history() || t.supports_required_and_named() || t.completes_to_batch()),
        };
        (!self.engine_based && reads && self.unified.is_none()) || self.restreams_content()
    }

    /// `None` when a parser cannot be serialized (a plugin).
    pub fn save_state(&mut self) -> Option<Value> {
        let history = self.keeps_history();
        let part = |p: Option<&mut dyn Snapshot>| p.map(|s| s.save_state().ok());
        // The response-template parser's state stands in the reasoning slot.
        let reasoning = match (self.unified.as_mut(), self.reasoning.as_mut()) {
            (Some(u), _) => u.save_state().ok()?,
            (None, Some(r)) => part(r.snapshot())??,
            (None, None) => Value::Null,
        };
        // A unified parser's state is the whole parser's: the slots' placeholders have none.
        let tool = match self.tool.as_mut().filter(|_| self.unified.is_none()) {
            Some(t) => part(t.snapshot())??,
            None => Value::Null,
        };
        Some(json!([
            self.reasoning_ended,
            self.tool_call_text_started,
            self.prompt_reasoning_checked,
            self.function_name_returned,
            self.forced_text,
            if history { self.previous_text.as_str() } else { "" },
            if history { self.previous_ids.as_slice() } else { &[] },
            reasoning,
            tool,
            self.sent,
            self.left_batch,
            self.filter,
        ]))
    }

    pub fn load_state(&mut self, state: Value) -> Result<(), SnapshotError> {
        let mut items = super::snapshot::fields(state, 12, "DelegatingParser")?;
        let mut next = || items.next().unwrap_or(Value::Null);
        self.reasoning_ended = serde_json::from_value(next())?;
        self.tool_call_text_started = serde_json::from_value(next())?;
        self.prompt_reasoning_checked = serde_json::from_value(next())?;
        self.function_name_returned = serde_json::from_value(next())?;
        self.forced_text = serde_json::from_value(next())?;
        self.previous_text = serde_json::from_value(next())?;
        self.previous_ids = serde_json::from_value(next())?;
        let (reasoning, tool) = (next(), next());
        self.sent = serde_json::from_value(next())?;
        self.left_batch = serde_json::from_value(next())?;
        self.filter = serde_json::from_value(next())?;
        if let Some(u) = self.unified.as_mut() {
            return u.load_state(reasoning);
        }
        match self.reasoning.as_mut() {
            Some(r) => r.snapshot().ok_or(SnapshotError::Unsupported)?.load_state(reasoning)?,
            None if reasoning.is_null() => {}
            None => return Err(SnapshotError::Shape("a reasoning parser state without a reasoning parser".into())),
        }
        match self.tool.as_mut() {
            Some(t) => t.snapshot().ok_or(SnapshotError::Unsupported)?.load_state(tool)?,
            None if tool.is_null() => {}
            None => return Err(SnapshotError::Shape("a tool parser state without a tool parser".into())),
        }
        Ok(())
    }
}

/// `ChatStreamProcessor`: one choice's stream, chunk by chunk.
pub struct ChatStreamProcessor {
    pub parser: DelegatingParser,
    keep_tool_calls: bool,
    num_output_tokens: usize,
    pub tools_streamed: bool,
    /// The stream has dropped calls the request cannot take, or had left
    /// batch's answer when it finished.
    left_batch: bool,
    /// The prompt closes reasoning, which vLLM's stream reads (it then
    /// streams the whole output as content) and this one, as batch, does not.
    prompt_closed_reasoning: bool,
    /// The stream has sent what vLLM's would not: reasoning that vLLM's
    /// stream, having read the prompt, sends as content.
    left_vllm: bool,
}

impl ChatStreamProcessor {
    /// The processor's state (`None`: a parser cannot be serialized).
    pub fn save_state(&mut self) -> Option<Value> {
        let parser = self.parser.save_state()?;
        let flags = [self.left_batch, self.prompt_closed_reasoning, self.left_vllm];
        Some(json!([self.num_output_tokens, self.tools_streamed, parser, flags]))
    }

    pub fn load_state(&mut self, state: Value) -> Result<(), SnapshotError> {
        let mut items = super::snapshot::fields(state, 4, "ChatStreamProcessor")?;
        let mut next = || items.next().unwrap_or(Value::Null);
        self.num_output_tokens = serde_json::from_value(next())?;
        self.tools_streamed = serde_json::from_value(next())?;
        self.parser.load_state(next())?;
        [self.left_batch, self.prompt_closed_reasoning, self.left_vllm] = serde_json::from_value(next())?;
        Ok(())
    }

    pub fn new(parser: DelegatingParser, ctx: &ChatContext) -> Self {
        let keep_tool_calls = parser.keeps_tool_calls(ctx);
        ChatStreamProcessor {
            parser,
            keep_tool_calls,
            num_output_tokens: 0,
            tools_streamed: false,
            left_batch: false,
            prompt_closed_reasoning: false,
            left_vllm: false,
        }
    }

    /// The stream reads reasoning as batch does, without the prompt; note
    /// whether vLLM's stream, which reads it, finds reasoning closed there.
    pub fn note_unread_prompt(&mut self, prompt: &[i64]) {
        if self.num_output_tokens == 0 {
            self.prompt_closed_reasoning = self.parser.prompt_ends_reasoning(prompt);
        }
    }

    /// Has the stream sent what vLLM's stream would not? Then a stop token
    /// before a finish that comes alone is held, as batch drops it.
    pub fn left_vllm(&self) -> bool {
        self.left_vllm
    }

    /// Does the stream follow vLLM's on the points where derender otherwise
    /// answers as batch (a stop token before the finish, a stop string on
    /// the final chunk, usage without the request's `prompt_tokens`)? Once
    /// its text has left batch's answer it can only be vLLM's stream, and
    /// a stream that is one answer on the text and the other on those
    /// points would be neither. Asked only at those points: a parser may
    /// rescan its text to answer.
    pub fn follows_vllm(&self, ctx: &ChatContext) -> bool {
        self.left_batch || self.parser.left_batch(ctx)
    }

    /// Parse one chunk; returns the delta (if any) and the chat finish reason.
    pub fn step(
        &mut self,
        text: &str,
        ids: &[i64],
        finish_reason: Option<&str>,
        prompt_ids: Option<&[i64]>,
        ctx: &ChatContext,
    ) -> (Option<Delta>, Option<String>) {
        let mut delta = if text.is_empty() && ids.is_empty() && self.num_output_tokens == 0 {
            Some(Delta::default())
        } else {
            let mut d = self.parser.parse_delta(text, ids, ctx, prompt_ids, finish_reason.is_some());
            if let Some(m) = &mut d {
                if !m.tool_calls.is_empty() {
                    if self.keep_tool_calls {
                        self.tools_streamed = true;
                    } else {
                        // vLLM's stream drops them, where batch answers the
                        // markup as content: the stream can only be vLLM's.
                        self.left_batch = true;
                        m.tool_calls.clear();
                        if m.content.as_deref().is_none_or(str::is_empty)
                            && m.reasoning.as_deref().is_none_or(str::is_empty)
                        {
                            d = None;
                        }
                    }
                }
            }
            d
        };
        self.num_output_tokens += ids.len();
        if self.prompt_closed_reasoning
            && delta.as_ref().is_some_and(|d| d.reasoning.as_deref().is_some_and(|r| !r.is_empty()))
        {
            self.left_vllm = true;
        }
        if finish_reason.is_some() {
            // Kept for the usage chunk that may follow the finish.
            self.left_batch |= self.parser.left_batch(ctx);
        }
        if let Some(m) = &mut delta {
            if !ctx.parallel_tool_calls {
                m.tool_calls.retain(|t| t.index == 0);
            }
        }
        let finish = finish_reason.map(|f| resolve_finish_reason(Some(f), ctx, self.tools_streamed));
        (delta, finish)
    }
}

/// `resolve_finish_reason`: `tool_calls` when calls were made, the engine
/// stopped by itself and the tool was not forced by name.
pub fn resolve_finish_reason(engine: Option<&str>, ctx: &ChatContext, tool_calls_made: bool) -> String {
    let fr = engine.unwrap_or("stop");
    if tool_calls_made && fr == "stop" && !matches!(ctx.tool_choice, ToolChoice::Named(_)) {
        return "tool_calls".to_string();
    }
    fr.to_string()
}

/// `_append_unstreamed_tool_args`: the arguments the tool parser parsed but
/// did not stream go to the final delta's last call, or, when they belong
/// to another call, to that call.
fn append_unstreamed_args(tool: &mut dyn ToolParser, message: &mut Delta) {
    let Some(last) = message.tool_calls.last_mut() else { return };
    if last.function.is_none() {
        return;
    }
    let rest = tool.remaining_unstreamed_args();
    let other = tool.remaining_args_index().filter(|&i| i >= 0 && i != last.index && !rest.is_empty());
    match other {
        Some(index) => {
            message.tool_calls.push(DeltaToolCall::arguments(index, rest));
            message.tool_calls.sort_by_key(|tc| tc.index);
        }
        None => {
            if let Some(f) = &mut last.function {
                f.arguments = Some(format!("{}{}", f.arguments.as_deref().unwrap_or(""), rest));
            }
        }
    }
}
