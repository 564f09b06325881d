//! Checkpoint-driven parsing (`vllm/parser/response_template.py`, names
//! `hf`): the tokenizer config's `response_template` says where thinking,
//! content and tool calls sit in the output. One scanner reads the prompt's
//! tail after the start anchor, then the output; thinking streams as
//! reasoning, content as content, and each tool region becomes whole calls
//! when it closes. `template`, `content` and `scan` are the format's
//! machinery, `grammar` the structural tags derived from it (both shared
//! with `beam`); this module is vLLM's serving layer on top.

mod content;
pub mod grammar;
mod scan;
mod template;

use self::template::Template;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::content::{tool_params, ToolParams};
use self::scan::{Event, Scanner};
use self::template::sorted_repr;
use crate::error::ApiError;
use crate::model::Model;
use crate::parse::family::{
    Composition, Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory,
};
use crate::parse::unified::{Grammar, GrammarRequest, Placeholder, Selected, UnifiedFactory, UnifiedParser};
use crate::parse::{random_tool_call_id, ChatContext, FunctionCall, ReasoningParser, Registry, ToolChoice, ToolParser};
use crate::structured::StrictLevel;
use crate::wire::response::{Delta, DeltaToolCall};

pub const THINKING: &str = "thinking";
pub const CONTENT: &str = "content";
pub const TOOLS: &str = "tool_calls";

/// The parser names that stand for the response-template parser.
pub const NAMES: [&str; 1] = ["hf"];

/// `validate_response_template_for_serving` then `_streaming_template`.
fn serving_template(raw: &Value) -> Result<Template, String> {
    let mut t = template::load(raw)?;
    let supported = [CONTENT, THINKING, TOOLS];
    let unsupported: Vec<&str> = t
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .filter(|n| !supported.contains(n))
        .chain(t.defaults.keys().map(String::as_str).filter(|k| *k != "role"))
        .collect();
    if !unsupported.is_empty() {
        return Err(format!(
            "response_template contains unsupported semantic fields: {}. Supported fields are: {}",
            sorted_repr(unsupported),
            sorted_repr(supported)
        ));
    }
    for name in [THINKING, CONTENT] {
        if let Some(f) = t.field(name) {
            if f.content != "text" || f.transform.is_some() || f.join.is_some() {
                return Err(format!(
                    "response_template field '{name}' uses semantics that cannot be streamed by the OpenAI serving adapter"
                ));
            }
        }
    }
    if t.field(CONTENT).is_none() && t.fields.iter().all(|f| f.open.is_some()) {
        // An empty implicit content field collects the text outside regions.
        let mut with_content = raw.clone();
        if let Some(fields) = with_content.get_mut("fields").and_then(Value::as_object_mut) {
            fields.insert(CONTENT.into(), Value::Object(Default::default()));
        }
        t = template::load(&with_content)?;
    }
    for f in &mut t.fields {
        f.valued = f.name == TOOLS;
    }
    Ok(t)
}

/// The tokenizer's `response_template` metadata.
fn raw_template(model: &Model) -> Option<&Value> {
    model.tokenizer_config.get("response_template").filter(|t| t.is_object())
}

/// `validate_tokenizer_response_template`: vLLM's startup checks, with the
/// parsers named as on the command line.
pub fn validate(model: &Model, reasoning: Option<&str>, tool: Option<&str>) -> Result<(), String> {
    let Some(raw) = raw_template(model) else {
        let selected: Vec<String> = [("--reasoning-parser", reasoning), ("--tool-call-parser", tool)]
            .iter()
            .filter_map(|(flag, name)| name.map(|n| format!("{flag} {n}")))
            .collect();
        return Err(format!(
            "{} requires `response_template` metadata in the tokenizer configuration",
            selected.join(" ")
        ));
    };
    let t = serving_template(raw).map_err(|e| format!("Invalid response_template metadata: {e}"))?;
    if let (Some(name), None) = (reasoning, t.field(THINKING)) {
        return Err(format!("--reasoning-parser {name} requires a response_template with a thinking field"));
    }
    if let (Some(name), None) = (tool, t.field(TOOLS)) {
        return Err(format!("--tool-call-parser {name} requires a response_template with a tool_calls field"));
    }
    Ok(())
}

/// `_unsupported_tool_guarantee`: the 400 for a request asking what no
/// grammar enforces here (called only with tools and a tool choice not
/// `"none"`).
fn refuse_guarantees(strict: bool, required: bool, named: bool, parallel: bool) -> Result<(), ApiError> {
    let (guarantee, param) = if strict {
        ("strict tools", "tools")
    } else if required {
        ("required tool choice", "tool_choice")
    } else if named {
        ("named tool choice", "tool_choice")
    } else if !parallel {
        ("parallel_tool_calls=False", "parallel_tool_calls")
    } else {
        return Ok(());
    };
    Err(ApiError::invalid_param(
        format!(
            "response_template parsing cannot guarantee {guarantee} without a format-compatible structural grammar (parameter={param})"
        ),
        param,
    ))
}

/// Does a tool definition ask for strict arguments?
pub fn is_strict(tool: &Value) -> bool {
    let truthy = |v: Option<&Value>| v.is_some_and(crate::pycompat::truthy);
    truthy(tool.get("strict")) || truthy(tool.get("function").and_then(|f| f.get("strict")))
}

/// What one request's parser needs: the template, whether reasoning and
/// tool calls are parsed, and the tools' argument schemas.
pub struct Unified {
    template: Arc<Template>,
    model: Arc<Model>,
    parse_reasoning: bool,
    parse_tools: bool,
    include_reasoning: bool,
    thinking_disabled: bool,
    tools: ToolParams,
    stream: Option<Stream>,
}

/// One generation's streaming state (`_ResponseStream`).
#[derive(Clone, Serialize, Deserialize)]
struct Stream {
    scanner: Scanner,
    /// The region last opened and not yet closed, and the tail of its text
    /// so far (for `_closer_rest`).
    open: Option<usize>,
    open_tail: String,
    output_seen: bool,
    finalized: bool,
    next_index: i64,
}

#[derive(Default)]
struct Builder {
    reasoning: String,
    content: String,
    calls: Vec<DeltaToolCall>,
}

impl Builder {
    fn build(self) -> Option<Delta> {
        let some = |s: String| (!s.is_empty()).then_some(s);
        let d = Delta {
            reasoning: some(self.reasoning),
            content: some(self.content),
            tool_calls: self.calls,
            ..Delta::default()
        };
        (d.reasoning.is_some() || d.content.is_some() || !d.tool_calls.is_empty()).then_some(d)
    }
}

/// `_to_tool_calls`: each call's name and JSON arguments, or none at all
/// when one is incomplete.
fn calls_of(value: Option<&Value>) -> Vec<(String, String)> {
    let items = match value {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(v) => vec![v],
        None => vec![&Value::Null],
    };
    let mut calls = Vec::new();
    for item in items {
        let Some(Value::Object(function)) = item.get("function") else { return Vec::new() };
        let (Some(Value::String(name)), Some(arguments)) = (function.get("name"), function.get("arguments")) else {
            return Vec::new();
        };
        if name.is_empty() || arguments.is_null() {
            return Vec::new();
        }
        let arguments = match arguments {
            Value::String(s) => s.clone(),
            v => crate::pycompat::json::dumps(v),
        };
        calls.push((name.clone(), arguments));
    }
    calls
}

impl Unified {
    fn field_name(&self, i: usize) -> &str {
        &self.template.fields[i].name
    }

    fn new_stream(&self, prompt: Option<&[i64]>) -> Stream {
        let prefix = prompt.map(|p| self.model.decode(p)).unwrap_or_default();
        let (scanner, events) = Scanner::new(&self.template, &prefix, &self.tools);
        let mut s = Stream {
            scanner,
            open: None,
            open_tail: String::new(),
            output_seen: false,
            finalized: false,
            next_index: 0,
        };
        for e in &events {
            self.track(&mut s, e);
        }
        s
    }

    /// `_track`, plus the tail `_closer_rest` reads.
    fn track(&self, s: &mut Stream, e: &Event) {
        match e {
            Event::Open { field, .. } => {
                s.open = Some(*field);
                s.open_tail.clear();
            }
            Event::Chunk { text, .. } if s.open.is_some() => {
                s.open_tail.push_str(text);
                let keep = 256;
                if s.open_tail.len() > 2 * keep {
                    let mut cut = s.open_tail.len() - keep;
                    while !s.open_tail.is_char_boundary(cut) {
                        cut += 1;
                    }
                    s.open_tail.drain(..cut);
                }
            }
            Event::Close { .. } | Event::Malformed { .. } => s.open = None,
            Event::Chunk { .. } => {}
        }
    }

    /// `_closer_rest`: the rest of a literal closer the output stopped in,
    /// when only the next message's start anchor (which ends it) is missing.
    fn closer_rest(&self, s: &Stream) -> String {
        let Some(open) = s.open else { return String::new() };
        let Some(closers) = &self.template.fields[open].close.as_ref().and_then(|d| d.literals.clone()) else {
            return String::new();
        };
        let anchors = self.template.anchor.literals.clone().unwrap_or_default();
        let text = format!("{}{}", s.open_tail, s.scanner.held());
        for closer in closers {
            let chars: Vec<char> = closer.chars().collect();
            for anchor in anchors.iter().filter(|a| !a.is_empty() && closer.ends_with(a.as_str()) && closer != *a) {
                let n = anchor.chars().count();
                for cut in (chars.len() - n..chars.len()).rev() {
                    let head: String = chars[..cut].iter().collect();
                    if text.ends_with(&head) {
                        return chars[cut..].iter().collect();
                    }
                }
            }
        }
        String::new()
    }

    fn route(&self, s: &mut Stream, events: Vec<Event>, out: &mut Builder) {
        for e in events {
            self.track(s, &e);
            let (field, text) = match &e {
                Event::Open { field, text, .. }
                | Event::Close { field, text, .. }
                | Event::Malformed { field, text } => (*field, text),
                Event::Chunk { field, text } => (*field, text),
            };
            match self.field_name(field) {
                TOOLS if !self.parse_tools => out.content.push_str(text),
                TOOLS => {
                    if let Event::Close { value, .. } = &e {
                        for (name, arguments) in calls_of(value.as_ref()) {
                            let id = random_tool_call_id();
                            out.calls.push(DeltaToolCall::opening(s.next_index, id, name, Some(arguments)));
                            s.next_index += 1;
                        }
                    }
                }
                // Reasoning a request leaves out is dropped, not made content.
                THINKING if matches!(e, Event::Chunk { .. }) && self.parse_reasoning && self.include_reasoning => {
                    out.reasoning.push_str(text)
                }
                THINKING if self.parse_reasoning => {}
                THINKING | CONTENT if matches!(e, Event::Chunk { .. }) => out.content.push_str(text),
                _ => {}
            }
        }
    }

    /// `_ResponseStream.feed`.
    fn feed(&self, s: &mut Stream, text: &str, finished: bool) -> Option<Delta> {
        if s.finalized {
            return None;
        }
        let mut out = Builder::default();
        s.output_seen |= !text.is_empty();
        let events = s.scanner.feed(&self.template, &self.tools, text, false);
        self.route(s, events, &mut out);
        if finished {
            s.finalized = true;
            if s.output_seen {
                let rest = self.closer_rest(s);
                let mut events = s.scanner.feed(&self.template, &self.tools, &rest, false);
                events.extend(s.scanner.feed(&self.template, &self.tools, "", true));
                self.route(s, events, &mut out);
            }
        }
        out.build()
    }
}

impl UnifiedParser for Unified {
    /// `Parser.parse`: `(reasoning, content, calls)`.
    fn parse(
        &mut self,
        text: &str,
        _: &[i64],
        prompt: Option<&[i64]>,
    ) -> (Option<String>, Option<String>, Vec<FunctionCall>) {
        let mut s = self.new_stream(prompt);
        let Some(d) = self.feed(&mut s, text, true) else { return (None, None, Vec::new()) };
        let calls = d
            .tool_calls
            .into_iter()
            .filter_map(|c| {
                let f = c.function?;
                Some(FunctionCall {
                    id: c.id,
                    name: f.name.unwrap_or_default(),
                    arguments: f.arguments.unwrap_or_else(|| "{}".into()),
                })
            })
            .collect();
        (d.reasoning, d.content, calls)
    }

    /// `Parser.parse_delta`.
    fn parse_delta(&mut self, text: &str, _: &[i64], prompt: Option<&[i64]>, finished: bool) -> Option<Delta> {
        let mut s = match self.stream.take() {
            Some(s) => s,
            None => self.new_stream(prompt),
        };
        let d = self.feed(&mut s, text, finished);
        self.stream = Some(s);
        d
    }

    /// On copies of the stream: the answer ends the same whether the token
    /// comes before the finish or not (batch drops a final stop token).
    fn takes_as_markup(&self, before: &str, token: &str, prompt: Option<&[i64]>) -> bool {
        let mut base = match &self.stream {
            Some(s) => s.clone(),
            None => self.new_stream(prompt),
        };
        if base.finalized {
            return false;
        }
        let _ = self.feed(&mut base, before, false);
        let answer = |deltas: Vec<Option<Delta>>| {
            let mut out = (String::new(), String::new(), Vec::new());
            for d in deltas.into_iter().flatten() {
                out.0.push_str(d.reasoning.as_deref().unwrap_or_default());
                out.1.push_str(d.content.as_deref().unwrap_or_default());
                out.2.extend(d.tool_calls.into_iter().filter_map(|c| c.function).map(|f| (f.name, f.arguments)));
            }
            out
        };
        let mut with = base.clone();
        let with = answer(vec![self.feed(&mut with, token, false), self.feed(&mut with, "", true)]);
        let without = answer(vec![self.feed(&mut base, "", true)]);
        with == without
    }

    /// `is_reasoning_end` (`_reasoning_has_ended`) on prompt ids.
    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        let t = &self.template;
        let Some(thinking) = t.index(THINKING) else { return true };
        if t.fields[thinking].repeats {
            return false;
        }
        let prefix = self.model.decode(ids);
        let (mut scanner, events) = Scanner::new(t, &prefix, &self.tools);
        let (mut active, mut closed) = (None, false);
        for e in &events {
            match e {
                Event::Open { field, .. } => active = Some(*field),
                Event::Close { field, .. } | Event::Malformed { field, .. } => {
                    closed |= *field == thinking;
                    active = None;
                }
                Event::Chunk { .. } => {}
            }
        }
        let answer_field = |f: usize| matches!(self.field_name(f), CONTENT | TOOLS);
        if closed || active.is_some_and(answer_field) {
            return true;
        }
        // A NUL cannot be in the output: it settles what the prompt's end holds.
        for e in scanner.feed(t, &self.tools, "\0", false) {
            match e {
                Event::Open { field, width, .. } if answer_field(field) && width > 0 => return true,
                Event::Open { field, .. } if field == thinking => return false,
                Event::Close { field, .. } | Event::Malformed { field, .. } if field == thinking => return true,
                _ => {}
            }
        }
        if active == Some(thinking) {
            return false;
        }
        self.thinking_disabled
    }
}

crate::impl_snapshot!(Unified { stream });

/// The parser family's factory (both names: reasoning and tools).
/// A family built on the response template that constrains every request
/// with its own grammar (Beam's `adjust_request`); forced choices are then
/// the grammar's to enforce, so none is refused up front.
pub type Constrain = fn(&Factory, &GrammarRequest, Selected, Option<StrictLevel>) -> Result<Option<Grammar>, ApiError>;

pub struct Factory {
    template: Arc<Template>,
    constrain: Option<Constrain>,
}

impl Factory {
    /// The serving template (`_streaming_template`).
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// `_open_field`: the field the prompt leaves open with its explicit
    /// opener, if any.
    pub fn open_field(&self, prefix: &str) -> Option<&str> {
        let (_, events) = Scanner::new(&self.template, prefix, &ToolParams::new());
        let mut open = None;
        for e in &events {
            match e {
                Event::Open { field, width, .. } if *width > 0 => open = Some(*field),
                Event::Close { .. } | Event::Malformed { .. } => open = None,
                _ => {}
            }
        }
        open.map(|f| self.template.fields[f].name.as_str())
    }

    /// `_starts_message`: output after `prefix` starts the assistant message.
    pub fn starts_message(&self, prefix: &str) -> bool {
        self.template.last_anchor_end(prefix) == Some(prefix.len())
    }
}

impl UnifiedFactory for Factory {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, selected: Selected) -> Box<dyn UnifiedParser> {
        let enabled = match ctx.tool_choice {
            ToolChoice::None => false,
            ToolChoice::Required | ToolChoice::Named(_) => true,
            ToolChoice::Auto | ToolChoice::Null => selected.auto,
        };
        let thinking = ctx.template_kwargs.get("enable_thinking").is_none_or(crate::pycompat::truthy);
        Box::new(Unified {
            template: self.template.clone(),
            model: model.clone(),
            parse_reasoning: selected.reasoning,
            parse_tools: selected.tools && enabled,
            include_reasoning: ctx.include_reasoning,
            thinking_disabled: !thinking,
            tools: tool_params(&ctx.tools),
            stream: None,
        })
    }

    /// The template does not mark special tokens off with spaces.
    fn keeps_special_token_spacing(&self) -> bool {
        false
    }

    fn check_request(&self, ctx: &ChatContext, tools_given: bool, strict: bool, named: bool) -> Result<(), ApiError> {
        if !tools_given || ctx.tool_choice == ToolChoice::None || self.constrain.is_some() {
            return Ok(());
        }
        let required = ctx.tool_choice == ToolChoice::Required;
        refuse_guarantees(strict, required, named, ctx.parallel_tool_calls)
    }

    fn grammar(
        &self,
        request: &GrammarRequest,
        selected: Selected,
        level: Option<StrictLevel>,
    ) -> Result<Option<Grammar>, ApiError> {
        match self.constrain {
            Some(constrain) => constrain(self, request, selected, level),
            None => Ok(None),
        }
    }
}

/// The factory for `model`'s response template, constraining requests
/// with `constrain` when given.
pub fn load(model: &Model, constrain: Option<Constrain>) -> Result<Arc<Factory>, String> {
    let raw = raw_template(model).ok_or("no response_template")?;
    let template = serving_template(raw)?;
    Ok(Arc::new(Factory { template: Arc::new(template), constrain }))
}

impl ReasoningParserFactory for Factory {
    fn create(&self, _: &ChatContext, _: &Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(Placeholder)
    }
    fn keep_special_tokens(&self) -> bool {
        true
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
        KeepSpecial::Always
    }
    /// No grammar: forced choices are refused at render, parsed like
    /// `"auto"` when they reach derender.
    fn native_forced_choices(&self) -> bool {
        true
    }
    fn unified(&self) -> Option<&dyn UnifiedFactory> {
        Some(self)
    }
}

static REASONING: ReasoningFamily =
    Family { names: &NAMES, needs: "a response_template", load: |m| Ok(load(m, None)?) };
static TOOL: ToolFamily = Family { names: &NAMES, needs: "a response_template", load: |m| Ok(load(m, None)?) };

static COMPOSITION: Composition = Composition { names: &NAMES, model_type: None, validate };

pub(super) fn register(registry: &mut Registry) {
    registry.composition(&COMPOSITION);
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOL);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Beam's `_open_field` and `_starts_message` on prompt ends, as vLLM
    /// answers them: an opener at the very end is held (nothing committed).
    #[test]
    fn prompt_ends_read_as_vllms_parser_reads_them() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/models/beam/tokenizer_config.json");
        let config: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
        let factory = Factory {
            template: Arc::new(serving_template(&config["response_template"]).expect("template")),
            constrain: None,
        };
        let s = "<|start|>assistant";
        for (tail, open, start) in [
            ("<|channel|>final<|message|>", None, false),
            ("<|channel|>final<|message|>x", Some(CONTENT), false),
            ("<|channel|>analysis<|message|>", None, false),
            ("<|channel|>analysis<|message|>R", Some(THINKING), false),
            (" to=f<|channel|>analysis<|message|>", None, false),
            (" to=f<|channel|>analysis <|constrain|>xml<|message|>", None, false),
            ("", None, true),
            ("<|channel|>analysis<|message|><|end|>", None, false),
        ] {
            let prefix = format!("{s}{tail}");
            assert_eq!(factory.open_field(&prefix), open, "{prefix}");
            assert_eq!(factory.starts_message(&prefix), start, "{prefix}");
        }
    }
}
