//! GigaChat 3 (`gigachat3`, vLLM's `GigaChat3ToolParser`): one JSON call
//! `{"name": ..., "arguments": {...}}` after `function call<|role_sep|>\n`
//! or `<|function_call|>`; content is the text before `<|message_sep|>` or
//! `<|function_call|>`. Streams find the name and the arguments with
//! regexes over the call's text and send the arguments' growth, holding
//! back a closing brace that may be the call's own.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::ApiError;
use crate::model::Model;
use crate::parse::call_stream::CallStream;
use crate::parse::family::{Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::py_isspace;
use crate::parse::plugin::FailureSlot;
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads_lenient};
use crate::wire::response::{Delta, DeltaToolCall};

const ROLE_CALL: &str = "function call<|role_sep|>\n";
const CALL: &str = "<|function_call|>";
const MESSAGE_SEP: &str = "<|message_sep|>";
const EOS: &str = "</s>";

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// `REGEX_FUNCTION_CALL.search`: where the call's text starts.
fn call_start(text: &str) -> Option<usize> {
    let at = |m: &'static str| text.find(m).map(|i| (i, i + m.len()));
    [at(ROLE_CALL), at(CALL)].into_iter().flatten().min().map(|(_, end)| end)
}

/// `REGEX_CONTENT_PATTERN.search`: the text before the first separator.
fn content_before_separator(text: &str) -> Option<&str> {
    [text.find(MESSAGE_SEP), text.find(CALL)].into_iter().flatten().min().map(|i| &text[..i])
}

/// After `"KEY"\s*:\s*` somewhere in `text`: the first such place.
fn after_key<'a>(text: &'a str, key: &str) -> impl Iterator<Item = &'a str> + 'a {
    let quoted = format!("\"{key}\"");
    let len = quoted.len();
    text.match_indices(&quoted).map(|(i, _)| i + len).collect::<Vec<_>>().into_iter().filter_map(move |i| {
        let rest = text[i..].trim_start_matches(py_isspace).strip_prefix(':')?;
        Some(rest.trim_start_matches(py_isspace))
    })
}

/// `NAME_REGEX`: `"name"\s*:\s*"([^"]*)"`.
fn name_of(text: &str) -> Option<&str> {
    after_key(text, "name").find_map(|rest| {
        let rest = rest.strip_prefix('"')?;
        rest.find('"').map(|end| &rest[..end])
    })
}

/// `ARGS_REGEX` and the trimming around it: the arguments text so far,
/// without `</s>` and without the call's closing brace once the rest reads
/// as JSON.
fn arguments_of(text: &str) -> Option<String> {
    let args = py_strip(after_key(text, "arguments").next()?);
    let args = args.strip_suffix(EOS).unwrap_or(args);
    if let Some(body) = args.strip_suffix('}') {
        let candidate = py_strip(body);
        if loads_lenient(candidate).is_some() {
            return Some(candidate.to_string());
        }
    }
    Some(args.to_string())
}

#[derive(Default)]
struct GigaChat3Parser {
    /// Before a call marker: the text's tail a marker may be starting in.
    scan: String,
    /// `m_func.group(1)`: the text after the first call marker.
    call: Option<String>,
    tool_started: bool,
    end_content: bool,
    /// `prev_tool_call_arr[0]["arguments_str"]`.
    args_sent: String,
    calls: CallStream,
    failure: FailureSlot,
}

crate::impl_snapshot!(GigaChat3Parser { scan, call, tool_started, end_content, args_sent } nested { calls });

impl GigaChat3Parser {
    fn read(&mut self, delta: &str) {
        if let Some(call) = &mut self.call {
            call.push_str(delta);
            return;
        }
        let text = std::mem::take(&mut self.scan) + delta;
        match call_start(&text) {
            Some(start) => self.call = Some(text[start..].to_string()),
            None => {
                let keep = text.char_indices().rev().nth(ROLE_CALL.chars().count() - 1).map_or(0, |(i, _)| i);
                self.scan = text[keep..].to_string();
            }
        }
    }

    fn call_delta(&mut self) -> Option<Delta> {
        let tail = py_strip(self.call.as_deref()?);
        let name = name_of(tail).map(str::to_string);
        let args = arguments_of(tail);
        if self.calls.prev.is_empty() {
            self.calls.prev.push(json!({}));
            self.calls.current = 0;
        }
        if !self.calls.name_sent {
            let name = name.filter(|n| !n.is_empty())?;
            self.calls.prev[0]["name"] = Value::String(name.clone());
            let opening = self.calls.open(name);
            return Some(Delta::tool_calls(vec![opening]));
        }
        let args = args?;
        let diff = if self.args_sent.is_empty() { args.as_str() } else { args.strip_prefix(self.args_sent.as_str())? };
        if diff.is_empty() {
            return None;
        }
        let diff = diff.to_string();
        self.calls.prev[0]["arguments"] = loads_lenient(&args).unwrap_or_else(|| json!({}));
        self.calls.streamed = vec![args.clone()];
        self.args_sent = args;
        Some(Delta::tool_calls(vec![DeltaToolCall::arguments(0, diff)]))
    }
}

impl ToolParser for GigaChat3Parser {
    fn completes_to_batch(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let text = match text.trim_end_matches(py_isspace).ends_with(EOS) {
            true => &text[..text.rfind(EOS).unwrap_or(text.len())],
            false => text,
        };
        let mut call = None;
        if let Some(start) = call_start(text) {
            let Some(json) = loads_lenient(&text[start..]) else {
                return Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
            };
            call = json.as_object().filter(|o| o.contains_key("name") && o.get("arguments").is_some_and(Value::is_object)).cloned();
        }
        let content = content_before_separator(text).unwrap_or(text);
        let content = (!content.is_empty()).then(|| content.to_string());
        let Some(call) = call else { return Extracted { tools_called: false, calls: Vec::new(), content } };
        let Some(name) = call.get("name").and_then(Value::as_str) else {
            self.failure.record(ApiError::bad_request(
                "1 validation error for FunctionCall\nname\n  Input should be a valid string",
            ));
            return Extracted { tools_called: false, calls: Vec::new(), content };
        };
        let arguments = dumps(&call["arguments"]);
        Extracted { tools_called: true, calls: vec![FunctionCall { id: None, name: name.to_string(), arguments }], content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        self.read(t.delta);
        if !self.tool_started {
            let content = match content_before_separator(t.delta) {
                Some(before) => {
                    self.end_content = true;
                    before
                }
                None if !self.end_content => t.delta,
                None => "",
            };
            self.tool_started = self.call.is_some();
            if !content.is_empty() {
                return Some(Delta::content(content));
            }
        }
        self.call_delta()
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }

    fn reads_history(&self) -> bool {
        false
    }

    fn failure(&self) -> Option<ApiError> {
        self.failure.get()
    }
}

struct GigaChat3;

impl ToolParserFactory for GigaChat3 {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(GigaChat3Parser::default())
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

static TOOLS: ToolFamily = Family { names: &["gigachat3"], needs: "", load: |_| Ok(Arc::new(GigaChat3)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(chunks: &[&str]) -> Vec<Option<Delta>> {
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        let mut parser = GigaChat3Parser::default();
        let ids = Ids { previous: &[], current: &[], delta: &[] };
        chunks.iter().map(|c| parser.extract_tool_calls_streaming(&Texts { previous: "", current: "", delta: c }, &ids, &ctx)).collect()
    }

    #[test]
    fn batch_reads_one_call_and_the_content_before_the_separator() {
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        let p = GigaChat3Parser::default();
        let got = p.extract_tool_calls("Hi<|message_sep|>function call<|role_sep|>\n{\"name\": \"f\", \"arguments\": {\"a\": \"x\ny\"}}</s>", &ctx);
        assert!(got.tools_called);
        assert_eq!(got.content.as_deref(), Some("Hi"));
        assert_eq!(got.calls[0].arguments, r#"{"a": "x\ny"}"#);
        let got = p.extract_tool_calls("<|function_call|>{\"name\": \"f\", \"arguments\": [1]}", &ctx);
        assert!(!got.tools_called && got.content.is_none());
    }

    #[test]
    fn streams_the_name_then_the_arguments_without_the_closing_brace() {
        let out = stream(&["Hi", "<|function_call|>", "{\"name\": \"f\", ", "\"arguments\": {\"a\": 1", "}}", "</s>"]);
        let args: Vec<String> = out
            .iter()
            .flatten()
            .flat_map(|d| d.tool_calls.iter().filter_map(|c| c.function.as_ref()?.arguments.clone()))
            .collect();
        assert_eq!(out[0].as_ref().and_then(|d| d.content.as_deref()), Some("Hi"));
        assert_eq!(out[2].as_ref().map(|d| d.tool_calls.len()), Some(1));
        assert_eq!(args, ["{\"a\": 1", "}"]);
    }
}
