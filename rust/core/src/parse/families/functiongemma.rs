//! FunctionGemma (`functiongemma`, vLLM's `FunctionGemmaToolParser`):
//! `<start_function_call>call:NAME{key:<escape>value<escape>,...}
//! <end_function_call>`, each value read as JSON where it parses.
//!
//! Streams follow vLLM's method, which counts markers in the text before
//! the delta and after it; its "current text" is the caller's previous text
//! plus the delta minus a held-back marker prefix, so a held prefix can be
//! counted twice, as vLLM counts it. The parser reads that history.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::model::Model;
use crate::parse::call_stream::{skip_chars, CallStream};
use crate::parse::family::{Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::py_isspace;
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads};
use crate::wire::response::{Delta, DeltaToolCall};

const START: &str = "<start_function_call>";
const END: &str = "<end_function_call>";
const ESCAPE: &str = "<escape>";

/// Python's `\w`.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `call:NAME{` at the start of `text`: the name and the index after `{`.
fn call_head(text: &str) -> Option<(&str, usize)> {
    let rest = text.strip_prefix("call:")?;
    let name_len = rest.len() - rest.trim_start_matches(is_word).len();
    let after = rest[name_len..].strip_prefix('{')?;
    (name_len > 0).then(|| (&rest[..name_len], text.len() - after.len()))
}

/// One `tool_call_regex.findall` match: the name, the arguments text, and
/// whether the closed form (`}<end_function_call>`) matched.
struct CallMatch<'a> {
    name: &'a str,
    args: &'a str,
    closed: bool,
}

/// `tool_call_regex.findall`: the closed form where `}<end_function_call>`
/// follows, else the open one, which takes the rest of the text.
fn find_calls(text: &str) -> Vec<CallMatch<'_>> {
    let closer = format!("}}{END}");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(START) {
        let at = from + found + START.len();
        let Some((name, open)) = call_head(&text[at..]) else {
            from = at - START.len() + 1;
            continue;
        };
        let open = at + open;
        match text[open..].find(&closer) {
            Some(len) => {
                out.push(CallMatch { name, args: &text[open..open + len], closed: true });
                from = open + len + closer.len();
            }
            None => {
                out.push(CallMatch { name, args: &text[open..], closed: false });
                break;
            }
        }
    }
    out
}

/// `_parse_arguments`: each `KEY:<escape>VALUE<escape>`, the value as JSON
/// where it parses, else as text.
fn parse_arguments(text: &str) -> Map<String, Value> {
    let mut args = Map::new();
    let mut i = 0;
    while i < text.len() {
        let Some(c) = text[i..].chars().next() else { break };
        if !is_word(c) {
            i += c.len_utf8();
            continue;
        }
        let key_end = text.len() - text[i..].trim_start_matches(is_word).len();
        let value = text[key_end..].strip_prefix(':').and_then(|r| r.strip_prefix(ESCAPE));
        let closed = value.and_then(|v| v.find(ESCAPE).map(|len| (&v[..len], text.len() - v.len() + len)));
        match closed {
            Some((value, close)) => {
                let parsed = loads(value).unwrap_or_else(|| Value::String(value.to_string()));
                args.insert(text[i..key_end].to_string(), parsed);
                i = close + ESCAPE.len();
            }
            None => i = key_end,
        }
    }
    args
}

#[derive(Default)]
struct FunctionGemmaParser {
    /// `buffered_delta_text`: a marker prefix held back.
    buffered: String,
    calls: CallStream,
}

crate::impl_snapshot!(FunctionGemmaParser { buffered } nested { calls });

impl FunctionGemmaParser {
    /// `_buffer_delta_text`.
    fn buffer(&mut self, delta: &str) -> String {
        let combined = std::mem::take(&mut self.buffered) + delta;
        if combined.ends_with(START) || combined.ends_with(END) {
            return combined;
        }
        for tag in [START, END] {
            if let Some(i) = (1..tag.len()).find(|&i| combined.ends_with(&tag[..i])) {
                self.buffered = tag[..i].to_string();
                return combined[..combined.len() - i].to_string();
            }
        }
        combined
    }

    /// The current call as `(index, slot)`, where vLLM's list indexing works.
    fn slot(&self) -> Option<usize> {
        usize::try_from(self.calls.current).ok().filter(|&i| i < self.calls.prev.len())
    }

    /// Arguments as JSON: what they add to those streamed, if longer.
    fn send_args(&mut self, index: usize, args: Map<String, Value>) -> Option<Delta> {
        let text = dumps(&Value::Object(args.clone()));
        let sent = self.calls.streamed.get(index)?.chars().count();
        if text.chars().count() <= sent {
            return None;
        }
        let diff = skip_chars(&text, sent).to_string();
        self.calls.streamed[index] = text;
        self.calls.prev[index]["arguments"] = Value::Object(args);
        Some(Delta::tool_calls(vec![DeltaToolCall::arguments(index as i64, diff)]))
    }

    fn streaming(&mut self, previous: &str, delta: &str) -> Option<Delta> {
        let delta = self.buffer(delta);
        let current = format!("{previous}{delta}");
        if !current.contains(START) {
            return (!delta.is_empty()).then(|| Delta::content(delta));
        }
        let (starts, ends) = (current.matches(START).count(), current.matches(END).count());
        let (prev_starts, prev_ends) = (previous.matches(START).count(), previous.matches(END).count());
        if starts > prev_starts && starts > ends {
            self.calls.begin(self.calls.current + 1);
            self.calls.prev.push(json!({}));
            return None;
        }
        if starts > ends {
            let last = current.rfind(START).map_or(0, |i| i + START.len());
            let func = current[last..].strip_prefix("call:")?;
            let (name, args) = func.split_once('{')?;
            if !self.calls.name_sent && !name.is_empty() {
                self.calls.name_sent = true;
                let index = self.slot()?;
                self.calls.prev[index] = json!({"name": name, "arguments": {}});
                return Some(Delta::tool_calls(vec![self.calls.open(name.to_string())]));
            }
            if self.calls.name_sent && !args.is_empty() {
                let args = parse_arguments(args);
                if !args.is_empty() {
                    return self.send_args(self.slot()?, args);
                }
            }
            return None;
        }
        if ends > prev_ends {
            let index = self.slot()?;
            let call = find_calls(&current).into_iter().nth(index).filter(|m| m.closed)?;
            let args = parse_arguments(call.args);
            self.calls.prev[index]["arguments"] = Value::Object(args.clone());
            if args.is_empty() {
                return None;
            }
            return self.send_args(index, args);
        }
        (!delta.is_empty()).then(|| Delta::content(delta))
    }
}

impl ToolParser for FunctionGemmaParser {
    fn completes_to_batch(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some(start) = text.find(START) else { return not_called() };
        let calls: Vec<FunctionCall> = find_calls(text)
            .into_iter()
            .map(|m| FunctionCall {
                id: None,
                name: m.name.to_string(),
                arguments: dumps(&Value::Object(parse_arguments(m.args))),
            })
            .collect();
        if calls.is_empty() {
            return not_called();
        }
        let content = text[..start].trim_matches(py_isspace);
        Extracted { tools_called: true, calls, content: (!content.is_empty()).then(|| content.to_string()) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        self.streaming(t.previous, t.delta)
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }
}

struct FunctionGemma;

impl ToolParserFactory for FunctionGemma {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(FunctionGemmaParser::default())
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

static TOOLS: ToolFamily = Family { names: &["functiongemma"], needs: "", load: |_| Ok(Arc::new(FunctionGemma)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_read_json_values_and_keep_the_first_key_position() {
        let args = parse_arguments("a:<escape>1<escape>,b:<escape>x y<escape>,a:<escape>[2]<escape>,c:<escape>open");
        assert_eq!(dumps(&Value::Object(args)), r#"{"a": [2], "b": "x y"}"#);
    }

    #[test]
    fn batch_reads_closed_and_open_calls() {
        let ctx = ChatContext::from_request(&Map::new(), &Default::default());
        let text = " hi <start_function_call>call:f{a:<escape>1<escape>}<end_function_call>\
            <start_function_call>call:g{b:<escape>2<escape>";
        let got = FunctionGemmaParser::default().extract_tool_calls(text, &ctx);
        assert_eq!(got.content.as_deref(), Some("hi"));
        let calls: Vec<(&str, &str)> = got.calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(calls, [("f", r#"{"a": 1}"#), ("g", r#"{"b": 2}"#)]);
    }

    #[test]
    fn streams_the_name_then_growing_arguments() {
        let ctx = ChatContext::from_request(&Map::new(), &Default::default());
        let mut p = FunctionGemmaParser::default();
        let chunks = ["ok ", "<start_function_call>", "call:f{", "a:<escape>1<escape>", ",b:<escape>2<escape>}", "<end_function_call>"];
        let mut previous = String::new();
        let mut out = Vec::new();
        for c in chunks {
            let ids = Ids { previous: &[], current: &[], delta: &[] };
            let current = format!("{previous}{c}");
            out.push(p.extract_tool_calls_streaming(&Texts { previous: &previous, current: &current, delta: c }, &ids, &ctx));
            previous = current;
        }
        let args: Vec<String> =
            out.iter().flatten().flat_map(|d| d.tool_calls.iter().filter_map(|c| c.function.as_ref()?.arguments.clone())).collect();
        assert_eq!(out[0].as_ref().and_then(|d| d.content.as_deref()), Some("ok "));
        assert!(out[1].is_none());
        // vLLM diffs by length, not by prefix: the closing brace sent with
        // the first argument stands where the comma should be.
        assert_eq!(args, [r#"{"a": 1}"#, r#" "b": 2}"#]);
    }
}
