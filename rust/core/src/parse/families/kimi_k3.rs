//! Kimi K3's XTML output (`kimi_k3`: vLLM's `KimiK3ReasoningParser` and
//! `KimiK3ToolParser`, which `KimiK3Parser` composes):
//!
//! ```text
//! REASONING<|close|>think<|sep|><|open|>response<|sep|>TEXT<|close|>response<|sep|>
//! <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
//!   <|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|><|close|>call<|sep|>
//! <|close|>tools<|sep|><|close|>message<|sep|>
//! ```
//!
//! Both parsers work on the accumulated text, as vLLM's do: reasoning is
//! streamed up to a held-back partial marker, content from the response
//! channel, and each call whole once its block closes. The tool parser
//! reads every tool choice (`KimiK3Parser`: with `none` its calls are
//! dropped, its content kept). Spec: `tests/models/kimi_k3/RENDERER.md` 4-7.

use std::sync::{Arc, LazyLock};

use serde_json::{Map, Value};

use crate::model::Model;
use crate::parse::family::{Family, KeepSpecial, ReasoningFamily, ReasoningParserFactory, ToolFamily, ToolParserFactory};
use crate::parse::snapshot::{fields, Snapshot, SnapshotError};
use crate::parse::{
    random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, ReasoningParser, Registry, Texts, ToolChoice,
    ToolParser,
};
use crate::pycompat::json::{dumps_with, loads, partial_tag_overlap, DumpOptions};
use crate::pycompat::re::{Match, Pattern};
use crate::structured::format::{any_text, const_string, optional, or, sequence, separated, tag, Choice, TagModel, TagTool};
use crate::structured::format::content as json_content;
use crate::structured::tool_tags::StrictLevel;
use crate::wire::response::{Delta, DeltaToolCall};

const OPEN: &str = "<|open|>";
const CLOSE: &str = "<|close|>";
const SEP: &str = "<|sep|>";
const END_OF_MSG: &str = "<|end_of_msg|>";
const THINK_OPEN: &str = "<|open|>think<|sep|>";
const THINK_CLOSE: &str = "<|close|>think<|sep|>";
const RESPONSE_OPEN: &str = "<|open|>response<|sep|>";
const RESPONSE_CLOSE: &str = "<|close|>response<|sep|>";
const TOOLS_OPEN: &str = "<|open|>tools<|sep|>";
const TOOLS_CLOSE: &str = "<|close|>tools<|sep|>";
const MESSAGE_CLOSE: &str = "<|close|>message<|sep|>";

/// vLLM's matchers: a marker tolerates whitespace around its tag name.
struct Patterns {
    think_open: Pattern,
    think_close: Pattern,
    response_open: Pattern,
    response_close: Pattern,
    message_close: Pattern,
    tools_open: Pattern,
    tools_close: Pattern,
    /// `(attrs, body)` of each complete call block.
    call: Pattern,
    /// `(attrs, value)` of each complete argument block.
    argument: Pattern,
    attribute: Pattern,
    /// The body of the first complete response channel.
    response: Pattern,
}

static RE: LazyLock<Patterns> = LazyLock::new(|| {
    let open = |name: &str| Pattern::new(&format!(r"<\|open\|>\s*{name}\s*<\|sep\|>"));
    let close = |name: &str| Pattern::new(&format!(r"<\|close\|>\s*{name}\s*<\|sep\|>"));
    let block = |name: &str| {
        Pattern::new(&format!(
            r"<\|open\|>\s*{name}\s+((?:(?!<\|sep\|>).)*?)<\|sep\|>([\s\S]*?)<\|close\|>\s*{name}\s*<\|sep\|>"
        ))
    };
    Patterns {
        think_open: open("think"),
        think_close: close("think"),
        response_open: open("response"),
        response_close: close("response"),
        message_close: close("message"),
        tools_open: open("tools"),
        tools_close: close("tools"),
        call: block("call"),
        argument: block("argument"),
        attribute: Pattern::new(r#"(\w+)="([^"]*)""#),
        response: Pattern::new(r"<\|open\|>\s*response\s*<\|sep\|>([\s\S]*?)<\|close\|>\s*response\s*<\|sep\|>"),
    }
});

/// `pattern.search(text, pos)`, spans in `text`.
fn search_from(pattern: &Pattern, text: &str, pos: usize) -> Option<(usize, usize)> {
    pattern.search(&text[pos..]).map(|m| (pos + m.start, pos + m.end))
}

fn span(m: Option<Match>) -> Option<(usize, usize)> {
    m.map(|m| (m.start, m.end))
}

fn nonempty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

/// `text` up to a suffix that may still become one of `markers`.
fn held_back<'t>(text: &'t str, markers: &[&str]) -> &'t str {
    let overlap = markers.iter().map(|m| partial_tag_overlap(text, m)).max().unwrap_or(0);
    &text[..text.len() - overlap]
}

/// What follows `before` in `now`: the whole of `now` when it does not
/// start with it (vLLM's prefix diff).
fn after_prefix(now: &str, before: &str) -> String {
    now.strip_prefix(before).unwrap_or(now).to_string()
}

// Reasoning.

/// The think markers as token ids (each several tokens).
struct MarkerIds {
    think_open: Vec<i64>,
    think_close: Vec<i64>,
}

impl MarkerIds {
    fn of(model: &Model) -> MarkerIds {
        let ids = |s: &str| -> Vec<i64> {
            model.tokenizer.encode(s, false).map(|e| e.get_ids().iter().map(|&i| i64::from(i)).collect()).unwrap_or_default()
        };
        MarkerIds { think_open: ids(THINK_OPEN), think_close: ids(THINK_CLOSE) }
    }
}

/// The start of the last occurrence of `needle` in `haystack`.
fn last_index(haystack: &[i64], needle: &[i64]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    (0..=haystack.len() - needle.len()).rev().find(|&i| haystack[i..].starts_with(needle))
}

/// Whether `close` occurs later in `ids` than `open` (`_newest_marker` is 0).
fn close_is_newest(ids: &[i64], close: &[i64], open: &[i64]) -> bool {
    let shortest = close.len().min(open.len());
    if shortest == 0 || ids.len() < shortest {
        return false;
    }
    for i in (0..=ids.len() - shortest).rev() {
        if ids[i..].starts_with(close) {
            return true;
        }
        if ids[i..].starts_with(open) {
            return false;
        }
    }
    false
}

struct Reasoning {
    thinking: bool,
    /// Tools offered and not turned off: the tool parser unwraps the rest.
    keep_channels: bool,
    ids: Arc<MarkerIds>,
}

impl Reasoning {
    /// `_strip_content_wrapper`.
    fn strip_wrapper(text: &str) -> String {
        let open = span(RE.response_open.search(text));
        let close = search_from(&RE.response_close, text, open.map_or(0, |o| o.1));
        let text = match (open, close) {
            (Some(o), Some(c)) => text[o.1..c.0].to_string(),
            (Some(o), None) => text[o.1..].to_string(),
            _ => RE.response_close.remove(&RE.response_open.remove(text)),
        };
        RE.message_close.remove(&text)
    }

    /// `_content_after_reasoning`.
    fn content_after(&self, text: &str) -> Option<String> {
        if self.keep_channels {
            return nonempty(text);
        }
        nonempty(&Self::strip_wrapper(text))
    }

    /// `_reasoning_text_ready_to_emit`.
    fn ready(text: &str) -> &str {
        let text = match RE.think_open.search(text) {
            Some(m) => &text[m.end..],
            None => text,
        };
        held_back(text, &[THINK_OPEN, THINK_CLOSE])
    }
}

impl ReasoningParser for Reasoning {
    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        if !self.thinking {
            return (None, self.content_after(text));
        }
        let open = span(RE.think_open.search(text));
        let start = open.map_or(0, |o| o.1);
        let close = search_from(&RE.think_close, text, start);
        if open.is_none() && close.is_none() && RE.response_open.search(text).is_some() {
            return (None, self.content_after(text));
        }
        match close {
            Some((c0, c1)) => (nonempty(&text[start..c0]), self.content_after(&text[c1..])),
            None => (nonempty(&text[start..]), None),
        }
    }

    fn is_reasoning_end(&self, ids: &[i64]) -> bool {
        !self.thinking || close_is_newest(ids, &self.ids.think_close, &self.ids.think_open)
    }

    /// Only the delta and enough ids before it to hold a marker.
    fn is_reasoning_end_streaming(&self, current: &[i64], delta: &[i64]) -> bool {
        if !self.thinking {
            return true;
        }
        if delta.is_empty() {
            return false;
        }
        let carry = self.ids.think_close.len().max(self.ids.think_open.len()).saturating_sub(1);
        let head = current.len().saturating_sub(delta.len());
        let window: Vec<i64> = current[head.saturating_sub(carry)..head].iter().chain(delta).copied().collect();
        close_is_newest(&window, &self.ids.think_close, &self.ids.think_open)
    }

    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64> {
        if !self.thinking {
            return ids.to_vec();
        }
        match last_index(ids, &self.ids.think_close) {
            Some(i) => ids[i + self.ids.think_close.len()..].to_vec(),
            None => Vec::new(),
        }
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, _ids: &Ids) -> Option<Delta> {
        if !self.thinking || RE.think_close.search(t.previous).is_some() {
            return Some(Delta::content(t.delta));
        }
        if let Some(close) = RE.think_close.search(t.current) {
            let start = RE.think_open.search(t.current).map_or(0, |m| m.end);
            let reasoning = t.current.get(start..close.start).unwrap_or("");
            let sent = Self::ready(t.previous);
            let delta = after_prefix(reasoning, sent);
            return Some(Delta {
                reasoning: nonempty(&delta),
                content: nonempty(&t.current[close.end..]),
                ..Default::default()
            });
        }
        let delta = after_prefix(Self::ready(t.current), Self::ready(t.previous));
        nonempty(&delta).map(|r| Delta { reasoning: Some(r), ..Default::default() })
    }

    fn restreams_content(&self) -> bool {
        true
    }

    /// `strip_content_streaming`: the text so far, wrapper markers stripped
    /// and partial ones held back, past what the text before gave.
    fn streamed_content(&self, previous: &str, current: &str) -> Option<String> {
        nonempty(&after_prefix(&content_ready(current), &content_ready(previous)))
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

/// `_content_ready_to_emit`: after the response opener, close markers
/// removed, a partial marker held back.
fn content_ready(text: &str) -> String {
    let text = match RE.response_open.search(text) {
        Some(m) => &text[m.end..],
        None => text,
    };
    let text = RE.message_close.remove(&RE.response_close.remove(text));
    held_back(&text, &[RESPONSE_OPEN, RESPONSE_CLOSE, MESSAGE_CLOSE]).to_string()
}

/// The parser keeps nothing of its own between chunks: it reads the text.
impl Snapshot for Reasoning {
    fn save_state(&self) -> Result<Value, SnapshotError> {
        Ok(Value::Array(Vec::new()))
    }
    fn load_state(&mut self, state: Value) -> Result<(), SnapshotError> {
        fields(state, 0, "kimi_k3 reasoning").map(|_| ())
    }
}

struct ReasoningFactory(Arc<MarkerIds>);

impl ReasoningParserFactory for ReasoningFactory {
    fn create(&self, ctx: &ChatContext, _model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        // `thinking`, else `enable_thinking`, else on (Python truthiness).
        let kw = &ctx.template_kwargs;
        let switch = kw.get("thinking").filter(|v| !v.is_null()).or_else(|| kw.get("enable_thinking"));
        let thinking = switch.is_none_or(crate::pycompat::truthy);
        let keep_channels = !ctx.tools.is_empty() && ctx.tool_choice != ToolChoice::None;
        Box::new(Reasoning { thinking, keep_channels, ids: self.0.clone() })
    }
    fn keep_special_tokens(&self) -> bool {
        true
    }
    fn keeps_special_token_spacing(&self) -> bool {
        false
    }
}

// Tool calls.

/// `_attrs`: each `key="value"`, unescaped.
fn attributes(text: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for m in RE.attribute.finditer(text) {
        let value = m.group(2).unwrap_or("").replace("&quot;", "\"").replace("&amp;", "&");
        out.insert(m.group(1).unwrap_or("").to_string(), Value::String(value));
    }
    out
}

/// `_decode_call`: the call's name and its arguments as JSON text; a
/// block without a name is dropped.
fn decode_call(attrs: &str, body: &str) -> Option<(String, String)> {
    let call = attributes(attrs);
    let name = call.get("tool").and_then(Value::as_str).unwrap_or("").to_string();
    let mut arguments = Map::new();
    for m in RE.argument.finditer(body) {
        let attrs = attributes(m.group(1).unwrap_or(""));
        let key = attrs.get("key").and_then(Value::as_str).unwrap_or("").to_string();
        let raw = m.group(2).unwrap_or("");
        let value = match attrs.get("type").and_then(Value::as_str).unwrap_or("string") {
            "string" => Value::String(raw.to_string()),
            _ => loads(raw).unwrap_or_else(|| Value::String(raw.to_string())),
        };
        arguments.insert(key, value);
    }
    if name.is_empty() {
        return None;
    }
    Some((name, dumps_with(&Value::Object(arguments), &DumpOptions::default())))
}

/// Every complete call in a tools section.
fn calls_in(section: &str) -> Vec<(String, String)> {
    RE.call
        .finditer(section)
        .iter()
        .filter_map(|m| decode_call(m.group(1).unwrap_or(""), m.group(2).unwrap_or("")))
        .collect()
}

/// `_strip_response_content`.
fn strip_response(text: &str) -> Option<String> {
    let text = match span(RE.response_open.search(text)) {
        Some((_, end)) => match search_from(&RE.response_close, text, end) {
            Some((start, _)) => text[end..start].to_string(),
            None => text[end..].to_string(),
        },
        None => RE.response_close.remove(text),
    };
    nonempty(&RE.message_close.remove(&text))
}

/// `_content`: the first complete response channel, else `before`
/// without its markers.
fn content_of(output: &str, before: &str) -> Option<String> {
    match RE.response.search(output) {
        Some(m) => nonempty(m.group(1).unwrap_or("")),
        None => strip_response(before),
    }
}

#[derive(Default)]
struct Tools {
    /// Where the response text streamed so far ends (in the tool phase's text).
    sent_content: usize,
    sent_calls: usize,
}

crate::impl_snapshot!(Tools { sent_content, sent_calls } check |t: &Tools| crate::parse::snapshot::check_index(t.sent_calls, "sent_calls"));

impl Tools {
    /// `_extract_response_content`: the response text now safe to send.
    fn response_content(&mut self, current: &str) -> Option<String> {
        let body_start = RE.response_open.search(current).map_or(0, |m| m.end);
        let tools = search_from(&RE.tools_open, current, body_start).map(|s| s.0);
        let close = search_from(&RE.response_close, current, body_start).map(|s| s.0);
        let sendable = match tools.into_iter().chain(close).min() {
            Some(i) => i,
            None => current.len() - held_back_len(current),
        };
        if sendable <= body_start {
            return None;
        }
        self.sent_content = self.sent_content.max(body_start);
        if sendable <= self.sent_content {
            return None;
        }
        let content = current.get(self.sent_content..sendable).unwrap_or("").to_string();
        self.sent_content = sendable;
        nonempty(&content)
    }
}

fn held_back_len(text: &str) -> usize {
    text.len() - held_back(text, &[RESPONSE_OPEN, RESPONSE_CLOSE, TOOLS_OPEN]).len()
}

impl ToolParser for Tools {
    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let Some((open_start, open_end)) = span(RE.tools_open.search(text)) else {
            return Extracted { tools_called: false, calls: Vec::new(), content: content_of(text, text) };
        };
        let before = &text[..open_start];
        let section = match search_from(&RE.tools_close, text, open_end) {
            Some((close, _)) => &text[open_end..close],
            None => &text[open_end..],
        };
        let calls: Vec<FunctionCall> = calls_in(section)
            .into_iter()
            .map(|(name, arguments)| FunctionCall { id: None, name, arguments })
            .collect();
        Extracted { tools_called: !calls.is_empty(), calls, content: content_of(text, before) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let content = self.response_content(t.current);
        let text_only = |content: Option<String>| content.map(Delta::content);
        let Some(open) = RE.tools_open.search(t.current) else { return text_only(content) };
        let calls = calls_in(&t.current[open.end..]);
        if calls.len() <= self.sent_calls {
            return text_only(content);
        }
        let first = self.sent_calls;
        self.sent_calls = calls.len();
        let deltas = calls
            .into_iter()
            .enumerate()
            .skip(first)
            .map(|(i, (name, arguments))| DeltaToolCall::opening(i as i64, random_tool_call_id(), name, Some(arguments)))
            .collect();
        Some(Delta { content, tool_calls: deltas, ..Default::default() })
    }

    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn parses_every_choice(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

struct ToolsFactory;

impl ToolParserFactory for ToolsFactory {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Tools::default())
    }
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Always
    }
    fn keeps_special_token_spacing(&self) -> bool {
        false
    }
    fn tag_model(&self) -> Option<&'static TagModel> {
        Some(&TAG)
    }
}

// The structural tag (`get_kimi_k3_structural_tag`).

/// `_K3_JSON_TO_XTML_TYPE` (integer is a number).
fn xtml_type(json_type: &str) -> Option<&'static str> {
    Some(match json_type {
        "string" => "string",
        "integer" | "number" => "number",
        "boolean" => "boolean",
        "null" => "null",
        "object" => "object",
        "array" => "array",
        _ => return None,
    })
}

fn escape(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;")
}

/// Any attributes, a raw value.
fn permissive_argument() -> Value {
    let head = serde_json::json!({"type": "regex", "pattern": r"[^<]*<\|sep\|>"});
    tag(&format!("{OPEN}argument "), sequence(vec![head, any_text(&[CLOSE])]), &format!("{CLOSE}argument{SEP}"))
}

/// `_k3_argument_tag`: `None` for a property without one known type.
fn argument_tag(key: &str, prop: &Value, defs: &Map<String, Value>) -> Option<Value> {
    let xtml = xtml_type(prop.get("type")?.as_str()?)?;
    let begin = format!("{OPEN}argument key=\"{}\" type=\"{xtml}\"{SEP}", escape(key));
    let content = if xtml == "string" {
        let choices = match prop.get("enum") {
            None => prop.get("const").filter(|c| c.is_string()).map(|c| vec![c.clone()]),
            Some(Value::Array(values)) => Some(values.clone()),
            Some(_) => None,
        };
        let usable = choices.filter(|v| {
            !v.is_empty() && v.len() <= 256 && v.iter().all(|s| s.as_str().is_some_and(|s| !s.contains("<|")))
        });
        match usable {
            Some(values) => {
                let mut branches: Vec<Value> = values.iter().filter_map(Value::as_str).map(const_string).collect();
                if branches.len() == 1 {
                    branches.remove(0)
                } else {
                    or(branches)
                }
            }
            None => match bounded_string(prop) {
                Some(pattern) => serde_json::json!({"type": "regex", "pattern": pattern}),
                None => any_text(&[CLOSE]),
            },
        }
    } else {
        let mut embedded = prop.clone();
        if let Some(o) = embedded.as_object_mut() {
            for (k, v) in defs {
                o.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        json_content(embedded, "json")
    };
    Some(tag(&begin, content, &format!("{CLOSE}argument{SEP}")))
}

/// `_k3_bounded_string_regex`: a length bound the raw string channel can
/// carry (values never hold the `<|` marker prefix).
fn bounded_string(prop: &Value) -> Option<String> {
    let int = |v: Option<&Value>| v.filter(|v| v.is_i64() || v.is_u64()).and_then(Value::as_i64);
    let max = int(prop.get("maxLength")).filter(|m| (0..=4096).contains(m))?;
    let min = match prop.get("minLength") {
        None => 0,
        v => int(v).filter(|m| (0..=max).contains(m)).unwrap_or(0),
    };
    Some(format!("(?:[^<]|<[^|]){{{min},{max}}}"))
}

/// `_k3_arguments_block`.
fn arguments_block(parameters: &Value) -> Value {
    let star = |content| serde_json::json!({"type": "star", "content": content});
    let Some(params) = parameters.as_object() else { return star(permissive_argument()) };
    let Some(props) = params.get("properties").and_then(Value::as_object).filter(|p| !p.is_empty()) else {
        return star(permissive_argument());
    };
    let defs: Map<String, Value> = ["$defs", "definitions"]
        .iter()
        .filter_map(|k| params.get(*k).filter(|v| v.is_object()).map(|v| (k.to_string(), v.clone())))
        .collect();
    let mut tags: Vec<Value> =
        props.iter().map(|(k, p)| argument_tag(k, p, &defs).unwrap_or_else(permissive_argument)).collect();
    let inner = if tags.len() == 1 { tags.remove(0) } else { or(tags) };
    let required = params.get("required").and_then(Value::as_array).is_some_and(|r| !r.is_empty());
    if required {
        serde_json::json!({"type": "plus", "content": inner})
    } else {
        star(inner)
    }
}

fn call_tag(tool: &TagTool) -> Value {
    let begin = format!("{OPEN}call tool=\"{}\" index=\"", escape(tool.name));
    let index = serde_json::json!({"type": "regex", "pattern": "[0-9]+"});
    let content = sequence(vec![index, const_string(&format!("\"{SEP}")), arguments_block(&tool.schema())]);
    tag(&begin, content, &format!("{CLOSE}call{SEP}"))
}

fn tools_channel(tools: &[TagTool]) -> Value {
    tag(TOOLS_OPEN, separated(tools.iter().map(call_tag).collect(), "", false), TOOLS_CLOSE)
}

fn tag_for(tools: &[TagTool], choice: Choice) -> Value {
    let mut elements = vec![
        optional(const_string(RESPONSE_OPEN)),
        tag("", any_text(&[OPEN, CLOSE, END_OF_MSG]), RESPONSE_CLOSE),
    ];
    if !tools.is_empty() {
        elements.push(match choice {
            Choice::Auto => optional(tools_channel(tools)),
            Choice::Forced => tools_channel(&tools[..1]),
            Choice::Required => tools_channel(tools),
        });
    }
    elements.push(optional(const_string(MESSAGE_CLOSE)));
    sequence(elements)
}

static TAG: TagModel = TagModel { name: "kimi_k3", build: tag_for, default_level: StrictLevel::Auto };

static REASONING: ReasoningFamily =
    Family { names: &["kimi_k3"], needs: "", load: |model| Ok(Arc::new(ReasoningFactory(Arc::new(MarkerIds::of(model))))) };

static TOOLS: ToolFamily = Family { names: &["kimi_k3"], needs: "", load: |_| Ok(Arc::new(ToolsFactory)) };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ChatContext {
        ChatContext::from_request(&Map::new(), &Default::default())
    }

    fn reasoning(keep_channels: bool) -> Reasoning {
        Reasoning { thinking: true, keep_channels, ids: Arc::new(MarkerIds { think_open: vec![1, 2, 3], think_close: vec![4, 2, 3] }) }
    }

    #[test]
    fn batch_splits_the_think_channel_and_unwraps_the_response() {
        let out = "plan<|close|>think<|sep|><|open|>response<|sep|>Hi<|close|>response<|sep|><|close|>message<|sep|>";
        let r = reasoning(false).extract_reasoning(out, &ctx());
        assert_eq!(r, (Some("plan".into()), Some("Hi".into())));
        // An output that opens the response without thinking is all content.
        let r = reasoning(false).extract_reasoning("<|open|>response<|sep|>Hi", &ctx());
        assert_eq!(r, (None, Some("Hi".into())));
    }

    #[test]
    fn reasoning_end_is_the_newest_marker() {
        let r = reasoning(false);
        assert!(r.is_reasoning_end(&[1, 2, 3, 9, 4, 2, 3]));
        assert!(!r.is_reasoning_end(&[4, 2, 3, 1, 2, 3, 9]));
        assert!(r.is_reasoning_end_streaming(&[9, 4, 2, 3], &[2, 3]));
        assert_eq!(r.extract_content_ids(&[4, 2, 3, 7]), vec![7]);
    }

    #[test]
    fn calls_decode_typed_arguments() {
        let out = "<|open|>tools<|sep|><|open|>call tool=\"f&amp;g\" index=\"1\"<|sep|><|open|>argument key=\"n\" type=\"number\"<|sep|>2<|close|>argument<|sep|><|open|>argument key=\"s\" type=\"string\"<|sep|>2<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
        let got = Tools::default().extract_tool_calls(out, &ctx());
        assert!(got.tools_called);
        assert_eq!(got.calls[0].name, "f&g");
        assert_eq!(got.calls[0].arguments, r#"{"n": 2, "s": "2"}"#);
        assert_eq!(got.content, None);
    }

    #[test]
    fn streamed_content_holds_partial_markers_and_calls_come_whole() {
        let mut tools = Tools::default();
        let mut text = String::new();
        let mut out = Vec::new();
        for piece in ["<|open|>response<|sep|>Hi", "<|close|>resp", "onse<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>", "<|close|>call<|sep|>"] {
            let previous = text.clone();
            text.push_str(piece);
            let t = Texts { previous: &previous, current: &text, delta: piece };
            let d = tools.extract_tool_calls_streaming(&t, &Ids { previous: &[], current: &[], delta: &[] }, &ctx());
            out.push(d.map(|d| (d.content, d.tool_calls.len())));
        }
        assert_eq!(out, vec![Some((Some("Hi".into()), 0)), None, None, Some((None, 1))]);
    }

    #[test]
    fn the_tag_offers_the_response_then_the_tools() {
        let params = serde_json::json!({"type": "object", "properties": {"unit": {"type": "string", "enum": ["c"]}, "n": {"type": "integer"}}, "required": ["unit"]});
        let tool = TagTool { name: "f", parameters: Some(&params), strict: true };
        let tag = tag_for(&[tool], Choice::Required);
        let tools = &tag["elements"][2];
        assert_eq!(tools["begin"], TOOLS_OPEN);
        let args = &tools["content"]["tags"][0]["content"]["elements"][2];
        assert_eq!(args["type"], "plus");
        assert_eq!(args["content"]["elements"][0]["content"], const_string("c"));
        assert_eq!(args["content"]["elements"][1]["begin"], "<|open|>argument key=\"n\" type=\"number\"<|sep|>");
    }
}
