//! Apertus (`apertus`, vLLM's `ApertusToolParser`): a JSON array of
//! one-key objects `[{"NAME": {args}}, ...]` between `<|tools_prefix|>` and
//! an optional `<|tools_suffix|>`; text before and after is content.
//!
//! Streams hold back a marker prefix, re-read the open array with
//! `partial_json_parser` (numbers only once final), and send each call's
//! name with empty arguments, then the arguments' growth with trailing
//! closers held back until the block ends, as vLLM does.

use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::call_stream::{common_prefix, skip_chars};
use crate::parse::family::{Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::{partial_loads, py_isspace, raw_decode, Allow};
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::dumps;
use crate::pycompat::truthy;
use crate::wire::response::{Delta, DeltaFunctionCall, DeltaToolCall};

const PREFIX: &str = "<|tools_prefix|>";
const SUFFIX: &str = "<|tools_suffix|>";

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// `raw_decode(text.lstrip())`: the value and where it ends in `text`.
fn decode_after_blanks(text: &str) -> Option<(Value, usize)> {
    let blank = text.len() - text.trim_start_matches(py_isspace).len();
    let chars: Vec<char> = text[blank..].chars().collect();
    let (value, n) = raw_decode(&chars)?;
    Some((value, blank + chars[..n].iter().map(|c| c.len_utf8()).sum::<usize>()))
}

/// A parsed block as the list of calls vLLM walks.
fn as_list(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        v if truthy(&v) => vec![v],
        _ => Vec::new(),
    }
}

/// The first `(name, arguments)` of a non-empty object.
fn first_item(obj: &Value) -> Option<(&String, &Value)> {
    obj.as_object().and_then(|o| o.iter().next())
}

#[derive(Default)]
struct ApertusParser {
    /// `buffered_delta_text`.
    buffered: String,
    /// The text from its last `<|tools_prefix|>` on (before any: its tail,
    /// where one may be starting).
    block: String,
    seen_prefix: bool,
    /// `current_tool_id`.
    current: i64,
    name_sent: bool,
    /// `streamed_args_for_tool`.
    streamed: Vec<String>,
}

crate::impl_snapshot!(ApertusParser { buffered, block, seen_prefix, current, name_sent, streamed });

/// vLLM's `IndexError` inside its `try`: the whole delta is dropped.
struct IndexError;

impl ApertusParser {
    fn new() -> Self {
        ApertusParser { current: -1, ..Default::default() }
    }

    /// `_buffer_delta_text`: the longest marker prefix at the end waits.
    fn buffer(&mut self, delta: &str) -> String {
        let text = std::mem::take(&mut self.buffered) + delta;
        for tag in [PREFIX, SUFFIX] {
            if text.ends_with(tag) {
                return text;
            }
            if let Some(i) = (1..tag.len()).rev().find(|&i| text.ends_with(&tag[..i])) {
                self.buffered = tag[..i].to_string();
                return text[..text.len() - i].to_string();
            }
        }
        text
    }

    fn track(&mut self, delta: &str) {
        self.block.push_str(delta);
        if let Some(i) = self.block.rfind(PREFIX) {
            self.block.drain(..i);
            self.seen_prefix = true;
        } else if !self.seen_prefix {
            let keep = self.block.char_indices().rev().nth(PREFIX.len() - 2).map_or(0, |(i, _)| i);
            self.block.drain(..keep);
        }
    }

    fn emit_name(&mut self, parsed: &[Value], index: usize, out: &mut Vec<DeltaToolCall>) -> Result<(), IndexError> {
        if let Some((name, _)) = first_item(parsed.get(index).ok_or(IndexError)?) {
            self.name_sent = true;
            let function = Some(DeltaFunctionCall { name: Some(name.clone()), arguments: Some(String::new()) });
            out.push(DeltaToolCall { id: Some(random_tool_call_id()), kind: Some("function"), index: index as i64, function });
        }
        Ok(())
    }

    /// `_get_tool_diff`.
    fn diff(&mut self, parsed: &[Value], index: usize, is_final: bool) -> Result<Option<DeltaToolCall>, IndexError> {
        let Some((_, args)) = first_item(parsed.get(index).ok_or(IndexError)?) else { return Ok(None) };
        if args.is_null() {
            return Ok(None);
        }
        let mut json = dumps(args);
        if !is_final {
            let kept = json.trim_end_matches(['}', '"', ']', ' ', ',']).len();
            json.truncate(kept);
        }
        let sent = self.streamed.get(index).ok_or(IndexError)?;
        if json == *sent {
            return Ok(None);
        }
        let prefix = common_prefix(sent, &json);
        if prefix.len() < sent.len() {
            self.streamed[index] = prefix.to_string();
            return Ok(None);
        }
        let diff = skip_chars(&json, sent.chars().count()).to_string();
        if diff.is_empty() {
            return Ok(None);
        }
        self.streamed[index] = json;
        Ok(Some(DeltaToolCall::arguments(index as i64, diff)))
    }

    /// `_parse_and_diff_json`.
    fn calls(&mut self, json: &str, is_final: bool) -> Result<Vec<DeltaToolCall>, IndexError> {
        let chars: Vec<char> = json.chars().collect();
        let allow = if is_final { Allow::ALL } else { Allow::NO_NUMBERS };
        let Some((parsed, _)) = partial_loads(&chars, allow) else { return Ok(Vec::new()) };
        let parsed = as_list(parsed);
        let mut out = Vec::new();
        let latest = parsed.len() as i64 - 1;
        while self.current < latest {
            if let Ok(index) = usize::try_from(self.current) {
                if !self.name_sent {
                    self.emit_name(&parsed, index, &mut out)?;
                }
                out.extend(self.diff(&parsed, index, true)?);
            }
            self.current += 1;
            self.name_sent = false;
            let needed = self.current as usize + 1;
            if self.streamed.len() < needed {
                self.streamed.resize(needed, String::new());
            }
        }
        if let Ok(index) = usize::try_from(self.current) {
            if !self.name_sent {
                self.emit_name(&parsed, index, &mut out)?;
            }
            out.extend(self.diff(&parsed, index, is_final)?);
        }
        Ok(out)
    }

    /// `_extract_streaming` over the block from its last prefix.
    fn in_block(&mut self, delta: &str) -> Result<Option<Delta>, IndexError> {
        let current = self.block.clone();
        let suffix = current.rfind(SUFFIX).filter(|&i| i > 0);
        let mut inside = suffix.is_none();
        let mut json_end = None;
        if inside {
            if let Some((_, end)) = decode_after_blanks(&current[PREFIX.len()..]) {
                json_end = Some(PREFIX.len() + end);
                inside = false;
            }
        }
        let just_finished = delta.contains(SUFFIX) || json_end.is_some();
        if !inside && !just_finished {
            let text = delta.replace(PREFIX, "").replace(SUFFIX, "");
            return Ok((!text.is_empty()).then(|| Delta::content(text)));
        }
        let mut content = String::new();
        if let Some((before, _)) = delta.split_once(PREFIX) {
            content += &before.replace(SUFFIX, "");
        }
        if just_finished {
            match json_end {
                Some(end) => {
                    // In characters: the delta is the held-back one, the
                    // text the caller's.
                    let (n, d) = (current.chars().count(), delta.chars().count());
                    let from = current[..end].chars().count().max(n.saturating_sub(d));
                    content += &skip_chars(&current, from).replace(SUFFIX, "");
                }
                None => content += delta.rsplit(SUFFIX).next().unwrap_or(""),
            }
        }
        let json = &current[PREFIX.len()..suffix.or(json_end).unwrap_or(current.len())];
        let calls = self.calls(json, !inside)?;
        // vLLM builds `DeltaMessage(tool_calls=None)` when no call moved,
        // which pydantic refuses; the exception drops the delta, content
        // and all.
        if calls.is_empty() {
            return Ok(None);
        }
        Ok(Some(Delta { content: (!content.is_empty()).then_some(content), tool_calls: calls, ..Default::default() }))
    }
}

impl ToolParser for ApertusParser {
    fn completes_to_batch(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some(start) = text.find(PREFIX) else { return not_called() };
        let body = start + PREFIX.len();
        // `(.*?)(?:SUFFIX|$)`: `$` also matches before a final newline.
        let (group_end, match_end) = match text[body..].find(SUFFIX) {
            Some(i) => (body + i, body + i + SUFFIX.len()),
            None if text.ends_with('\n') && text.len() > body => (text.len() - 1, text.len() - 1),
            None => (text.len(), text.len()),
        };
        let group = &text[body..group_end];
        let (parsed, trailing) = match decode_after_blanks(group) {
            Some((value, end)) => (value, &group[end..]),
            None => {
                let chars: Vec<char> = group.chars().collect();
                let Some((value, _)) = partial_loads(&chars, Allow::ALL) else { return not_called() };
                (value, "")
            }
        };
        let calls = as_list(parsed)
            .iter()
            .filter_map(first_item)
            .map(|(name, args)| FunctionCall { id: None, name: name.clone(), arguments: dumps(args) })
            .collect();
        let mut content = py_strip(&text[..start]).to_string();
        for extra in [trailing.replace(SUFFIX, ""), text[match_end..].replace(SUFFIX, "")] {
            let extra = py_strip(&extra);
            if !extra.is_empty() {
                content = py_strip(&format!("{content}\n{extra}")).to_string();
            }
        }
        Extracted { tools_called: true, calls, content: (!content.is_empty()).then_some(content) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        self.track(t.delta);
        let delta = self.buffer(t.delta);
        if delta.is_empty() {
            return None;
        }
        if !self.seen_prefix {
            return Some(Delta::content(delta));
        }
        self.in_block(&delta).unwrap_or(None)
    }

    fn reads_history(&self) -> bool {
        false
    }
}

struct Apertus;

impl ToolParserFactory for Apertus {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(ApertusParser::new())
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

static TOOLS: ToolFamily = Family { names: &["apertus"], needs: "", load: |_| Ok(Arc::new(Apertus)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    type Sent = (i64, Option<String>, Option<String>);

    fn stream(chunks: &[&str]) -> (String, Vec<Sent>) {
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        let mut p = ApertusParser::new();
        let (mut content, mut calls) = (String::new(), Vec::new());
        for c in chunks {
            let ids = Ids { previous: &[], current: &[], delta: &[] };
            if let Some(d) = p.extract_tool_calls_streaming(&Texts { previous: "", current: "", delta: c }, &ids, &ctx) {
                content += d.content.as_deref().unwrap_or("");
                for t in d.tool_calls {
                    let (name, args) = t.function.map(|f| (f.name, f.arguments)).unwrap_or_default();
                    calls.push((t.index, name, args));
                }
            }
        }
        (content, calls)
    }

    #[test]
    fn batch_joins_the_text_around_the_block() {
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        let text = "Checking. <|tools_prefix|>[{\"f\": {\"a\": 1}}, {\"g\": {}}] extra<|tools_suffix|> after";
        let got = ApertusParser::new().extract_tool_calls(text, &ctx);
        assert_eq!(got.content.as_deref(), Some("Checking.\nextra\nafter"));
        let calls: Vec<(&str, &str)> = got.calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(calls, [("f", r#"{"a": 1}"#), ("g", "{}")]);
    }

    #[test]
    fn streams_names_with_empty_arguments_then_the_growth() {
        let (content, calls) =
            stream(&["Hi <|tools_", "prefix|>[{\"f\": {\"a\": 1", "2, \"b\": \"x", "\"}}]", "<|tools_suffix|>"]);
        assert_eq!(content, "Hi ");
        let args: String = calls.iter().filter_map(|c| c.2.clone()).collect();
        assert_eq!(calls[0], (0, Some("f".into()), Some(String::new())));
        assert_eq!(args, r#"{"a": 12, "b": "x"}"#);
    }

    #[test]
    fn text_in_the_prefix_delta_is_dropped_until_a_call_moves() {
        // vLLM's delta without a call fails pydantic and is dropped whole.
        let (content, calls) = stream(&["Sure.", " one.\n\n<|tools_prefix|>\n{\"", "f\": {\"a\": 1}}"]);
        assert_eq!(content, "Sure.");
        assert_eq!(calls[0], (0, Some("f".into()), Some(String::new())));
    }
}
