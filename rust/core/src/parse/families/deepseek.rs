//! `deepseek_v3` / `deepseek_v31` tool calls (vLLM's legacy
//! `DeepSeekV3ToolParser` / `DeepSeekV31ToolParser`):
//!
//! * V3: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`
//! * V3.1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`
//!
//! Batch reproduces vLLM's regexes by hand; streaming counts the call markers
//! by token id and diffs the raw argument text, with vLLM's quirks (a
//! one-token call opener sends nothing, the closing chunk re-sends the text
//! up to the last `"}` of its delta).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::model::Model;
use crate::parse::family::{token_ids, Family, ReasoningFamily, ToolFamily, ToolParserFactory};
use crate::structured::tool_tags::StrictLevel;
use crate::structured::format::{content, separated, tag, triggered, Choice, TagModel, TagTool, THINK};
use crate::parse::think::{Switch, ThinkFamily};
use crate::parse::Registry;
use crate::parse::call_stream::CallStream;
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::wire::response::{Delta, DeltaToolCall};

pub const CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
pub const CALLS_END: &str = "<｜tool▁calls▁end｜>";
pub const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
pub const CALL_END: &str = "<｜tool▁call▁end｜>";
const SEP: &str = "<｜tool▁sep｜>";
/// V3's argument fence, opening and closing (`\n```<｜tool▁call▁end｜>`).
const FENCE_OPEN: &str = "\n```json\n";
const FENCE_CLOSE: &str = "\n```";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    V3,
    V31,
}

/// The marker token ids the streaming parser counts.
#[derive(Debug, Clone, Copy)]
pub struct MarkerIds {
    pub calls_begin: i64,
    pub call_begin: Option<i64>,
    pub call_end: Option<i64>,
}

/// An entry of vLLM's `prev_tool_call_arr`: the arguments as parsed, or
/// no key. Only the arguments are read back.
pub(super) fn seen(arguments: Option<String>) -> Value {
    match arguments {
        Some(arguments) => json!({ "arguments": arguments }),
        None => json!({}),
    }
}

fn seen_arguments(entry: &Value) -> Option<String> {
    entry.get("arguments").and_then(Value::as_str).map(str::to_string)
}

pub struct DeepSeekToolParser {
    pub(super) format: Format,
    pub(super) ids: MarkerIds,
    /// vLLM's bookkeeping; `named` is by call opener.
    pub(super) calls: CallStream,
    /// Content sent so far in the tool phase.
    pub(super) content_sent: String,
}

impl DeepSeekToolParser {
    pub fn new(format: Format, ids: MarkerIds) -> Self {
        DeepSeekToolParser { format, ids, calls: CallStream::new(), content_sent: String::new() }
    }
}

impl DeepSeekToolParser {
    /// vLLM's `extract_tool_calls_streaming`, quirks included.
    fn vllm_step(&mut self, t: &Texts, ids: &Ids) -> Option<Delta> {
        if !ids.current.contains(&self.ids.calls_begin) {
            return Some(Delta::content(t.delta));
        }
        let mut delta_text = t.delta.replace(CALLS_BEGIN, "").replace(CALLS_END, "");
        let count = |s: &[i64], id: Option<i64>| id.map_or(0, |id| s.iter().filter(|&&x| x == id).count());
        let prev_start = count(ids.previous, self.ids.call_begin);
        let prev_end = count(ids.previous, self.ids.call_end);
        let cur_start = count(ids.current, self.ids.call_begin);
        let cur_end = count(ids.current, self.ids.call_end);

        // Plain text, or text after a closed call.
        if cur_start == cur_end && prev_end == cur_end && !delta_text.contains(CALL_END) {
            return Some(Delta::content(delta_text));
        }
        let mut portion: Option<String> = None;
        let mut text_portion: Option<String> = None;
        if delta_text.contains(CALL_END) {
            // vLLM appends the delta to a current text that already ends with it.
            let full = format!("{}{}", t.current, delta_text);
            portion = Some(first_part(after_last(&full, CALL_BEGIN), CALL_END).trim_end().to_string());
            delta_text = first_part(&delta_text, CALL_END).trim_end().to_string();
            text_portion = Some(delta_text.trim_start().to_string());
        }

        if cur_start > cur_end && cur_start > prev_start {
            // A new call: a lone opener token carries no text yet.
            portion = (ids.delta.len() > 1).then(|| after_last(t.current, CALL_BEGIN).to_string());
            text_portion = None;
            self.calls.begin(self.calls.current + 1);
        } else if cur_start > cur_end && cur_start == prev_start {
            portion = Some(after_last(t.current, CALL_BEGIN).to_string());
            text_portion = None;
        } else if cur_start == cur_end {
            // The call closes: send the delta up to its last `"}` if any
            // arguments were seen.
            if self.calls.prev.is_empty() {
                return None;
            }
            let index = usize::try_from(self.calls.current).ok()?;
            if truthy(&seen_arguments(self.calls.prev.get(index)?)) {
                let end = delta_text.rfind("\"}")?;
                let diff = format!("{}\"}}", &delta_text[..end]);
                return self.calls.send_args(index, diff).map(Delta::from);
            }
        } else {
            // More call ends than starts.
            return Some(Delta::content(delta_text.replace(CALL_BEGIN, "").replace(CALL_END, "")));
        }

        let (mut name, mut parsed) = (None, None);
        if let Some(p) = portion.as_deref().filter(|p| !p.is_empty()) {
            let (n, args) = match self.format.match_portion(p) {
                Some(found) => found,
                None => (self.format.match_name(p)?, String::new()),
            };
            (name, parsed) = (Some(n), Some(args));
        }

        if !self.calls.name_sent {
            let name = name.filter(|n| !n.is_empty())?;
            return Some(self.calls.open(name).into());
        }
        if portion.is_none() {
            return text_portion.map(|_| Delta::content(delta_text));
        }

        let index = usize::try_from(self.calls.current).ok()?;
        if self.calls.prev.len() <= index {
            self.calls.prev.push(seen(None));
        }
        // An index past the list is vLLM's IndexError: nothing is sent.
        let prev_args = seen_arguments(self.calls.prev.get(index)?);
        let cur_args = parsed.clone();
        let delta = match (truthy(&prev_args), truthy(&cur_args)) {
            (false, true) => {
                let args = cur_args.unwrap_or_default();
                *self.calls.streamed.get_mut(index)? = args.clone();
                Some(DeltaToolCall::arguments(self.calls.current, args).into())
            }
            (true, true) => {
                let (prev, cur) = (prev_args.unwrap_or_default(), cur_args.unwrap_or_default());
                if cur.len() > prev.len() && cur.starts_with(&prev) {
                    let diff = cur[prev.len()..].to_string();
                    *self.calls.streamed.get_mut(index)? = cur;
                    Some(DeltaToolCall::arguments(self.calls.current, diff).into())
                } else {
                    None
                }
            }
            _ => None,
        };
        if index + 1 == self.calls.prev.len() {
            self.calls.prev[index] = seen(parsed);
        } else {
            self.calls.prev.push(seen(parsed));
        }
        delta
    }
}

/// The text up to the first newline (what a regex `.` can span).
fn first_line(s: &str) -> &str {
    s.split('\n').next().unwrap_or("")
}

/// `str.split(sep)[-1]`.
fn after_last<'a>(s: &'a str, sep: &str) -> &'a str {
    s.rfind(sep).map_or(s, |i| &s[i + sep.len()..])
}

/// V3 batch `tool_call_regex` anchored just after a `<｜tool▁call▁begin｜>`:
/// `(type, name, arguments, match length)`. `type` and `name` share the
/// first line, split at its last separator; the arguments run lazily to the
/// first fence close.
pub(super) fn match_v3_call(body: &str) -> Option<(&str, &str, &str, usize)> {
    let line_end = body.find('\n')?;
    let line = &body[..line_end];
    let sep = line.rfind(SEP)?;
    let args_start = line_end + body[line_end..].strip_prefix(FENCE_OPEN).map(|_| FENCE_OPEN.len())?;
    let close = format!("{FENCE_CLOSE}{CALL_END}");
    let args_len = body[args_start..].find(&close)?;
    let args = &body[args_start..args_start + args_len];
    Some((&line[..sep], &line[sep + SEP.len()..], args, args_start + args_len + close.len()))
}

/// V3.1 batch `tool_call_regex` after `<｜tool▁call▁begin｜>`: the name
/// runs lazily to the first separator on its line, the arguments lazily to
/// the next call end.
pub(super) fn match_v31_call(body: &str) -> Option<(&str, &str, usize)> {
    let sep = first_line(body).find(SEP)?;
    let args_start = sep + SEP.len();
    let len = body[args_start..].find(CALL_END)?;
    Some((&body[..sep], &body[args_start..args_start + len], args_start + len + CALL_END.len()))
}

/// `findall` of a call regex: scan each `<｜tool▁call▁begin｜>`, resuming
/// after a match or one marker further after a failed attempt.
fn find_calls<'a, T>(text: &'a str, matcher: impl Fn(&'a str) -> Option<(T, usize)>) -> Vec<T> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = text[pos..].find(CALL_BEGIN) {
        let body_start = pos + i + CALL_BEGIN.len();
        match matcher(&text[body_start..]) {
            Some((m, len)) => {
                out.push(m);
                pos = body_start + len;
            }
            None => pos = body_start,
        }
    }
    out
}

impl Format {
    /// `stream_tool_call_portion_regex.match`: `(name, arguments)`.
    fn match_portion(self, p: &str) -> Option<(String, String)> {
        match self {
            Format::V3 => {
                let line_end = p.find('\n')?;
                let sep = p[..line_end].rfind(SEP)?;
                let rest = p[line_end..].strip_prefix(FENCE_OPEN)?;
                // `[\s\S]*[^\n`]`: the longest run ending in another character.
                let args = rest.trim_end_matches(['\n', '`']);
                (!args.is_empty()).then(|| (p[sep + SEP.len()..line_end].to_string(), args.to_string()))
            }
            Format::V31 => {
                let sep = first_line(p).rfind(SEP)?;
                Some((p[..sep].to_string(), p[sep + SEP.len()..].to_string()))
            }
        }
    }

    /// `stream_tool_call_name_regex.match`. (V3.1's never runs where the
    /// portion regex failed: both need a separator on the first line.)
    fn match_name(self, p: &str) -> Option<String> {
        match self {
            Format::V3 => {
                let line_end = p.find('\n')?;
                let sep = p[..line_end].rfind(SEP)?;
                Some(p[sep + SEP.len()..line_end].to_string())
            }
            Format::V31 => None,
        }
    }
}

fn truthy(s: &Option<String>) -> bool {
    s.as_deref().is_some_and(|s| !s.is_empty())
}

impl ToolParser for DeepSeekToolParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    /// Both formats have an xgrammar structural-tag model: vLLM (strict tool
    /// calling by default) parses required/named choices like "auto".
    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some(first) = text.find(CALLS_BEGIN) else { return not_called() };
        let calls: Vec<FunctionCall> = match self.format {
            Format::V3 => {
                let found = find_calls(text, |b| match_v3_call(b).map(|(t, n, a, len)| ((t, n, a), len)));
                // `ToolCall(type=…)` only validates the literal "function".
                if found.iter().any(|(kind, _, _)| *kind != "function") {
                    return not_called();
                }
                found
                    .into_iter()
                    .map(|(_, n, a)| FunctionCall { id: None, name: n.to_string(), arguments: a.to_string() })
                    .collect()
            }
            Format::V31 => find_calls(text, |b| match_v31_call(b).map(|(n, a, len)| ((n, a), len)))
                .into_iter()
                .map(|(n, a)| FunctionCall { id: None, name: n.to_string(), arguments: a.to_string() })
                .collect(),
        };
        let mut content = text[..first].to_string();
        if self.format == Format::V3 {
            if let Some(end) = text.rfind(CALLS_END) {
                content.push_str(&text[end + CALLS_END.len()..]);
            }
        }
        Extracted { tools_called: true, calls, content: (!content.is_empty()).then_some(content) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let (before, streamed_before) = (self.calls.current, self.calls.streamed.clone());
        let delta = self.vllm_step(t, ids);
        self.repair(delta, before, &streamed_before, t, ids)
    }

    /// The base `get_remaining_unstreamed_args`: a last call without an
    /// `arguments` key counts as `{}`.
    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }

    /// With several call markers in one chunk the repaired stream is ahead
    /// of vLLM's bookkeeping: the last recorded call need not be the last
    /// call of the final delta.
    fn remaining_args_index(&self) -> Option<i64> {
        self.calls.remaining_index()
    }
}

/// `str.split(sep)[0]`.
fn first_part<'a>(s: &'a str, sep: &str) -> &'a str {
    s.find(sep).map_or(s, |i| &s[..i])
}

// Registration: the `deepseek_v3` / `deepseek_v31` tool parsers, and the
// `deepseek_r1` (alias `step5`) and `deepseek_v3` reasoning parsers.

struct DeepSeekTools {
    format: Format,
    ids: MarkerIds,
}

impl ToolParserFactory for DeepSeekTools {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(DeepSeekToolParser::new(self.format, self.ids))
    }

    fn tag_model(&self) -> Option<&'static TagModel> {
        Some(match self.format {
            Format::V3 => &V3_TAG,
            Format::V31 => &V31_TAG,
        })
    }
}

/// The markers are counted by token id.
fn marker_ids(model: &Model) -> Result<MarkerIds, String> {
    let [calls_begin, _] =
        token_ids(model, [CALLS_BEGIN, CALLS_END], "could not locate tool call start/end tokens in the tokenizer")?;
    let token = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
    Ok(MarkerIds { calls_begin, call_begin: token(CALL_BEGIN), call_end: token(CALL_END) })
}

const TOOL_NEEDS: &str = "<｜tool▁calls▁begin｜>, <｜tool▁calls▁end｜> as single tokens";

static V3_TOOLS: ToolFamily = Family {
    names: &["deepseek_v3"],
    needs: TOOL_NEEDS,
    load: |model| Ok(Arc::new(DeepSeekTools { format: Format::V3, ids: marker_ids(model)? })),
};

static V31_TOOLS: ToolFamily = Family {
    names: &["deepseek_v31"],
    needs: TOOL_NEEDS,
    load: |model| Ok(Arc::new(DeepSeekTools { format: Format::V31, ids: marker_ids(model)? })),
};

static V3_TAG: TagModel =
    TagModel { name: "deepseek_r1", build: |tools, choice| tag_for(true, tools, choice), default_level: StrictLevel::Auto };

static V31_TAG: TagModel = TagModel {
    name: "deepseek_v3_1",
    build: |tools, choice| tag_for(false, tools, choice),
    default_level: StrictLevel::Auto,
};

pub(super) fn think_ids(model: &Model) -> Result<[i64; 2], String> {
    token_ids(model, ["<think>", "</think>"], "could not locate think start/end tokens in the tokenizer")
}

pub(super) const THINK_NEEDS: &str = "<think>, </think> as single tokens";

static R1_REASONING: ReasoningFamily = Family {
    names: &["deepseek_r1", "step5"],
    needs: THINK_NEEDS,
    load: |model| Ok(Arc::new(ThinkFamily::think(think_ids(model)?, Switch::Always))),
};

static V3_REASONING: ReasoningFamily = Family {
    names: &["deepseek_v3"],
    needs: THINK_NEEDS,
    load: |model| Ok(Arc::new(ThinkFamily::think(think_ids(model)?, Switch::OnRequest))),
};

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&V3_TOOLS);
    registry.tool_family(&V31_TOOLS);
    registry.tag_model(&V3_TAG);
    registry.tag_model(&V31_TAG);
    registry.reasoning_family(&R1_REASONING);
    registry.reasoning_family(&V3_REASONING);
}

/// DeepSeek `deepseek_r1` (V3: fenced JSON, calls separated by a newline)
/// and `deepseek_v3_1`.
fn tag_for(v3: bool, tools: &[TagTool], choice: Choice) -> Value {
    let sep = "<｜tool▁sep｜>";
    let open = |name: &str| {
        if v3 {
            format!("{CALL_BEGIN}function{sep}{name}\n```json\n")
        } else {
            format!("{CALL_BEGIN}{name}{sep}")
        }
    };
    let (close, separator) = if v3 { (format!("\n```{CALL_END}"), "\n") } else { (CALL_END.to_string(), "") };
    let tags = tools.iter().map(|t| tag(&open(t.name), content(t.schema(), "json"), &close));
    match choice {
        Choice::Forced => match tools.first() {
            Some(t) => tag(
                &format!("{CALLS_BEGIN}{}", open(t.name)),
                content(t.schema(), "json"),
                &format!("{close}{CALLS_END}"),
            ),
            None => Value::Null,
        },
        Choice::Required => tag(CALLS_BEGIN, separated(tags.collect(), separator, false), CALLS_END),
        Choice::Auto => {
            let calls = tag(CALLS_BEGIN, separated(tags.collect(), separator, false), CALLS_END);
            triggered(&[CALLS_BEGIN], vec![calls], false, &THINK)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const IDS: MarkerIds = MarkerIds { calls_begin: 1, call_begin: Some(3), call_end: Some(4) };

    fn ctx() -> ChatContext {
        ChatContext::from_request(&serde_json::Map::new(), &Default::default())
    }

    fn v3_call(name: &str, args: &str) -> String {
        format!("{CALL_BEGIN}function{SEP}{name}\n```json\n{args}\n```{CALL_END}")
    }

    fn v31_call(name: &str, args: &str) -> String {
        format!("{CALL_BEGIN}{name}{SEP}{args}{CALL_END}")
    }

    /// Markers as single tokens, every other character a token of its own.
    fn tokenize(text: &str) -> Vec<(String, i64)> {
        let markers = [(CALLS_BEGIN, 1), (CALLS_END, 2), (CALL_BEGIN, 3), (CALL_END, 4), (SEP, 5)];
        let mut out = Vec::new();
        let mut rest = text;
        'outer: while let Some(c) = rest.chars().next() {
            for (m, id) in markers {
                if let Some(r) = rest.strip_prefix(m) {
                    out.push((m.to_string(), id));
                    rest = r;
                    continue 'outer;
                }
            }
            out.push((c.to_string(), 100));
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    /// Stream `text` in chunks ending at `cuts` (token positions) and
    /// assemble content and calls, with the finish flush on the last chunk.
    fn assemble(format: Format, text: &str, cuts: &[usize]) -> (String, Vec<(String, String)>) {
        let tokens = tokenize(text);
        let mut p = DeepSeekToolParser::new(format, IDS);
        let (mut prev_text, mut prev_ids) = (String::new(), Vec::new());
        let mut content = String::new();
        let mut calls: BTreeMap<i64, (String, String)> = BTreeMap::new();
        let mut start = 0;
        for (k, &end) in cuts.iter().chain([tokens.len()].iter()).enumerate() {
            let chunk = &tokens[start..end.max(start)];
            start = end.max(start);
            let delta: String = chunk.iter().map(|(t, _)| t.as_str()).collect();
            let delta_ids: Vec<i64> = chunk.iter().map(|(_, i)| *i).collect();
            let cur_text = format!("{prev_text}{delta}");
            let cur_ids: Vec<i64> = prev_ids.iter().chain(&delta_ids).copied().collect();
            let texts = Texts { previous: &prev_text, current: &cur_text, delta: &delta };
            let ids = Ids { previous: &prev_ids, current: &cur_ids, delta: &delta_ids };
            let mut d = p.extract_tool_calls_streaming(&texts, &ids, &ctx());
            if k == cuts.len() {
                if let Some(f) = d.as_mut().and_then(|d| d.tool_calls.last_mut()).and_then(|t| t.function.as_mut()) {
                    f.arguments =
                        Some(format!("{}{}", f.arguments.as_deref().unwrap_or(""), p.remaining_unstreamed_args()));
                }
            }
            if let Some(d) = d {
                content.push_str(d.content.as_deref().unwrap_or(""));
                for tc in d.tool_calls {
                    let entry = calls.entry(tc.index).or_default();
                    if let Some(f) = tc.function {
                        entry.0.push_str(f.name.as_deref().unwrap_or(""));
                        entry.1.push_str(f.arguments.as_deref().unwrap_or(""));
                    }
                }
            }
            (prev_text, prev_ids) = (cur_text, cur_ids);
        }
        (content, calls.into_values().collect())
    }

    fn batch(format: Format, text: &str) -> (String, Vec<(String, String)>) {
        let e = DeepSeekToolParser::new(format, IDS).extract_tool_calls(text, &ctx());
        let content = e.content.filter(|c| !c.trim().is_empty()).unwrap_or_default();
        (content, e.calls.into_iter().map(|c| (c.name, c.arguments)).collect())
    }

    /// Arguments compared as parsed JSON, as clients read them (none
    /// streamed reads as `{}`).
    fn parsed(r: (String, Vec<(String, String)>)) -> (String, Vec<(String, Option<serde_json::Value>)>) {
        let args = |a: String| crate::pycompat::json::loads(if a.is_empty() { "{}" } else { &a });
        (r.0, r.1.into_iter().map(|(n, a)| (n, args(a))).collect())
    }

    fn samples() -> Vec<(Format, String)> {
        let v3 = |calls: &[String]| format!("{CALLS_BEGIN}{}{CALLS_END}", calls.concat());
        let v31 = |calls: &[String]| format!("{CALLS_BEGIN}{}{CALLS_END}", calls.concat());
        vec![
            (Format::V3, v3(&[v3_call("get_weather", r#"{"city": "Oslo"}"#)])),
            (
                Format::V3,
                format!(
                    "Let me check.\n\n{}",
                    v3(&[v3_call("a", r#"{"n": 2}"#), v3_call("b", "{\n  \"q\": \"x \\\"y\\\"\"\n}")])
                ),
            ),
            (Format::V3, format!("{} Done.", v3(&[v3_call("f", r#"{"to": ["c"], "k": {"x": 1.5}}"#)]))),
            (Format::V31, v31(&[v31_call("get_weather", r#"{"city": "Oslo"}"#)])),
            (Format::V31, format!("Sure.\n{}", v31(&[v31_call("a", r#"{"n": 2}"#), v31_call("b", "{\n \"q\": 1\n}")]))),
            (Format::V31, v31(&[v31_call("noargs", "{}")])),
        ]
    }

    #[test]
    fn v3_batch_reads_fenced_calls_and_keeps_text_around_the_block() {
        let text = format!(
            "Hi{CALLS_BEGIN}{}{}{CALLS_END} bye",
            v3_call("a", r#"{"x": 1}"#),
            v3_call("b", "{\n  \"y\": 2\n}")
        );
        let e = DeepSeekToolParser::new(Format::V3, IDS).extract_tool_calls(&text, &ctx());
        assert!(e.tools_called);
        assert_eq!(e.calls.len(), 2);
        assert_eq!((e.calls[0].name.as_str(), e.calls[0].arguments.as_str()), ("a", r#"{"x": 1}"#));
        assert_eq!(e.calls[1].arguments, "{\n  \"y\": 2\n}");
        assert_eq!(e.content.as_deref(), Some("Hi bye"));
    }

    #[test]
    fn v3_batch_rejects_a_type_other_than_function_and_finds_no_unfenced_call() {
        let text = format!("{CALLS_BEGIN}{CALL_BEGIN}tool{SEP}a\n```json\n{{}}\n```{CALL_END}{CALLS_END}");
        let e = DeepSeekToolParser::new(Format::V3, IDS).extract_tool_calls(&text, &ctx());
        assert!(!e.tools_called);
        assert_eq!(e.content.as_deref(), Some(text.as_str()));
        let text = format!("x{CALLS_BEGIN}{CALL_BEGIN}function{SEP}a\n{{}}{CALL_END}{CALLS_END}");
        let e = DeepSeekToolParser::new(Format::V3, IDS).extract_tool_calls(&text, &ctx());
        assert!(e.tools_called && e.calls.is_empty());
        assert_eq!(e.content.as_deref(), Some("x"));
    }

    #[test]
    fn v31_batch_takes_the_first_separator_and_drops_text_after_the_calls() {
        let text =
            format!("Hi{CALLS_BEGIN}{}{}{CALLS_END} bye", v31_call("a", r#"{"x": 1}"#), v31_call("b", r#"{"y": 2}"#));
        let e = DeepSeekToolParser::new(Format::V31, IDS).extract_tool_calls(&text, &ctx());
        assert_eq!(e.calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(e.calls[1].arguments, r#"{"y": 2}"#);
        assert_eq!(e.content.as_deref(), Some("Hi"));
    }

    #[test]
    fn v3_one_token_per_chunk_streams_name_then_argument_text() {
        let text = format!("{CALLS_BEGIN}{}{CALLS_END}", v3_call("f", r#"{"a": "b"}"#));
        let n = tokenize(&text).len();
        let (content, calls) = assemble(Format::V3, &text, &(1..n).collect::<Vec<_>>());
        assert_eq!(content, "");
        assert_eq!(calls, [("f".to_string(), r#"{"a": "b"}"#.to_string())]);
    }

    #[test]
    fn streams_assemble_to_the_batch_answer_for_any_chunking() {
        for (format, text) in samples() {
            let expected = parsed(batch(format, &text));
            let n = tokenize(&text).len();
            let one_each: Vec<usize> = (1..n).collect();
            assert_eq!(parsed(assemble(format, &text, &one_each)), expected, "one token each: {text:?}");
            assert_eq!(parsed(assemble(format, &text, &[])), expected, "all at once: {text:?}");
            for cut in 1..n {
                assert_eq!(parsed(assemble(format, &text, &[cut])), expected, "split at {cut}: {text:?}");
            }
        }
    }

    #[test]
    fn three_way_splits_with_several_calls_closing_in_one_chunk_assemble_to_batch() {
        // A chunk that closes every open call and holds a whole later call:
        // vLLM's step reads the later call's text as the current call's.
        for (format, text) in samples() {
            let expected = parsed(batch(format, &text));
            let n = tokenize(&text).len();
            for a in 1..n {
                for b in a + 1..n {
                    assert_eq!(parsed(assemble(format, &text, &[a, b])), expected, "cuts {a},{b}: {text:?}");
                }
            }
        }
    }
}

crate::impl_snapshot!(DeepSeekToolParser { content_sent } nested { calls });
