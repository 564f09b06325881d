//! AI21 Jamba (`jamba`, vLLM's `JambaToolParser`): a JSON list of calls
//! between `<tool_calls>` and `</tool_calls>` (special tokens), text before
//! it is content. Streams re-read the list with `partial_json_parser` at
//! every chunk and diff each call's re-serialised arguments, as vLLM does.

use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::call_stream::{intermediate_diff, json_call, py_get, CallStream};
use crate::parse::family::{token_ids, Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::{loads as strict_loads, partial_loads, Allow};
use crate::parse::{random_tool_call_id, ChatContext, Extracted, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads};
use crate::pycompat::truthy;
use crate::wire::response::{Delta, DeltaToolCall};

const START: &str = "<tool_calls>";
const END: &str = "</tool_calls>";

struct JambaParser {
    start_id: i64,
    calls: CallStream,
}

crate::impl_snapshot!(JambaParser {} nested { calls });


/// The parsed list as Python indexes it: a string's items are its
/// characters; anything but a list or a string raises.
fn items(parsed: Value) -> Option<Vec<Value>> {
    match parsed {
        Value::Array(items) => Some(items),
        Value::String(s) => Some(s.chars().map(|c| Value::String(c.to_string())).collect()),
        _ => None,
    }
}

impl JambaParser {
    /// The `try` block of vLLM's streaming method; `None` where it returns
    /// nothing or raises.
    fn step(&mut self, current: &str, delta_text: &str) -> Option<Delta> {
        let allow = if self.calls.name_sent { Allow::ALL } else { Allow::NO_STRINGS };
        let body = current.rsplit(START).next().unwrap_or("").split(END).next().unwrap_or("");
        let chars: Vec<char> = body.chars().collect();
        let (parsed, end) = partial_loads(&chars, allow)?;
        if end != chars.len() {
            return None; // `json.loads` of the completed text: extra data.
        }
        let list = items(parsed)?;
        if list.is_empty() {
            return None;
        }
        let n = list.len() as i64;
        let cursor = self.calls.current;
        let at = |i: i64| list.get(usize::try_from(if i < 0 { n + i } else { i }).ok()?);
        let call = at(cursor)?;
        if n > cursor + 1 {
            // A new call starts: first what the last one's completed JSON
            // added and was not streamed.
            let mut delta = None;
            if let Ok(slot) = usize::try_from(cursor) {
                if let Some(args) = py_get(call, "arguments")?.filter(|a| truthy(a)) {
                    let sent = self.calls.streamed.get(slot)?.clone();
                    let diff = dumps(args).replace(&sent, "");
                    delta = self.calls.send_args(slot, diff).map(Delta::from);
                }
            }
            self.calls.begin(n - 1);
            return delta;
        }
        let slot = usize::try_from(cursor).ok()?;
        let mut delta = None;
        if !self.calls.name_sent {
            if let Some(name) = py_get(call, "name")?.filter(|v| truthy(v)) {
                let name = name.as_str()?.to_string(); // pydantic refuses another type
                delta = Some(Delta::tool_calls(vec![DeltaToolCall::opening(cursor, random_tool_call_id(), name, None)]));
                self.calls.name_sent = true;
            }
        } else {
            let prev = py_get(self.calls.prev.get(slot)?, "arguments")?.filter(|a| truthy(a)).cloned();
            let cur = py_get(call, "arguments")?.filter(|a| truthy(a));
            match (cur, prev) {
                (None, _) => {}
                (Some(cur), None) => {
                    let cur_json = dumps(cur);
                    let new_text = delta_text.replace('\'', "\"");
                    let diff = match cur_json.find(&new_text) {
                        Some(i) => cur_json[..i + new_text.len()].to_string(),
                        None if strict_loads(&chars).is_ok() => cur_json,
                        None => return None,
                    };
                    delta = self.calls.send_args(slot, diff).map(Delta::from);
                }
                (Some(cur), Some(prev)) => {
                    let diff = intermediate_diff(&dumps(cur), &dumps(&prev));
                    delta = self.calls.send_args(slot, diff).map(Delta::from);
                }
            }
        }
        self.calls.prev = list;
        delta
    }
}

impl ToolParser for JambaParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some(start) = text.find(START) else { return not_called() };
        // `<tool_calls>(.*?)</tool_calls>`, the first match.
        let body = &text[start + START.len()..];
        let Some(body) = body.find(END).map(|e| &body[..e]) else { return not_called() };
        let Some(list) = loads(body).and_then(items) else { return not_called() };
        let mut calls = Vec::new();
        for call in &list {
            let Some(call) = json_call(call) else { return not_called() };
            calls.push(call);
        }
        let content = &text[..start];
        let content = (!content.is_empty() && content != " ").then(|| content.to_string());
        Extracted { tools_called: true, calls, content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        if !t.current.contains(START) {
            return Some(Delta::content(t.delta));
        }
        if ids.delta == [self.start_id] {
            return None;
        }
        self.step(t.current, t.delta)
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }
}

struct Jamba {
    start_id: i64,
}

impl ToolParserFactory for Jamba {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(JambaParser { start_id: self.start_id, calls: CallStream::new() })
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

static TOOLS: ToolFamily = Family {
    names: &["jamba"],
    needs: "<tool_calls>, </tool_calls> as single tokens",
    load: |model: &Model| {
        let reason = "Jamba Tool parser could not locate tool calls start/end tokens in the tokenizer!";
        let [start_id, _] = token_ids(model, [START, END], reason)?;
        Ok(Arc::new(Jamba { start_id }))
    },
};

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}
