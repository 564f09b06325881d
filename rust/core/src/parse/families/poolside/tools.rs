//! Laguna's tool calls (`poolside_v1`, vLLM's `PoolsideV1ToolParser`):
//! `<tool_call>NAME\n<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>`,
//! values kept as written where the tool's schema says string, else read as
//! JSON or a Python literal.
//!
//! The stream is vLLM's buffer machine: the name goes out at its first
//! `\n`, `<arg_key>` or `</tool_call>`; a string value streams as it grows
//! (JSON-escaped), other values go out whole; the first of a repeated key
//! wins (batch keeps the last).

use std::sync::LazyLock;

use serde_json::Value;

use crate::parse::partial_json::{partial_loads, Allow};
use crate::parse::pyast::literal_eval;
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolChoice, ToolParser};
use crate::pycompat::json::{dumps, dumps_str, loads};
use crate::pycompat::re::Pattern;
use crate::pycompat::str::py_isspace;
use crate::wire::response::{Delta, DeltaToolCall};

const CALL_START: &str = "<tool_call>";
const CALL_END: &str = "</tool_call>";
const KEY_START: &str = "<arg_key>";
const KEY_END: &str = "</arg_key>";
const VALUE_START: &str = "<arg_value>";
const VALUE_END: &str = "</arg_value>";

static CALL: LazyLock<Pattern> = LazyLock::new(|| Pattern::new(r"(?s)<tool_call>.*?</tool_call>"));
static DETAIL: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"(?s)<tool_call>\s*([^\n<]+?)\s*\n?\s*(<arg_key>.*?)?</tool_call>"));
static ARG: LazyLock<Pattern> =
    LazyLock::new(|| Pattern::new(r"(?s)<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>"));

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// `_is_string_type`: the tool's property has type `"string"`.
fn is_string_type(ctx: &ChatContext, tool: &str, key: &str) -> bool {
    let props = ctx.tool_parameters(tool).and_then(|p| p.get("properties"));
    props.and_then(|p| p.get(key)).and_then(|s| s.get("type")).and_then(Value::as_str) == Some("string")
}

/// `json.dumps(_deserialize(value))`: JSON, else a Python literal, else
/// the text itself.
fn deserialized(value: &str) -> String {
    if let Some(v) = loads(value) {
        return dumps(&v);
    }
    literal_eval(value).and_then(|v| v.dumps().ok()).unwrap_or_else(|| dumps_str(value))
}

/// `json.dumps(s)[1:-1]`: a string's JSON-escaped body.
fn escaped(s: &str) -> String {
    let quoted = dumps_str(s);
    quoted[1..quoted.len() - 1].to_string()
}

/// `s.find(pat)` from the start, as a byte offset.
fn find(s: &str, pat: &str) -> Option<usize> {
    s.find(pat)
}

/// How many chars at the end of `s` start `tag` (the longest, shorter than
/// the tag): vLLM's loop over `tag[:i]` for `i` from 1 takes the first hit.
fn held_prefix(s: &str, tag: &str) -> usize {
    (1..tag.len()).find(|&i| s.ends_with(&tag[..i])).unwrap_or(0)
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct CallState {
    id: String,
    /// `streamed_args_for_tool`.
    streamed: String,
    /// `prev_tool_call_arr`: `{"name", "arguments"}` as last read.
    prev: Value,
    started: bool,
    closed: bool,
    seen: Vec<String>,
}

#[derive(Default)]
pub struct PoolsideTools {
    buffer: String,
    in_call: bool,
    name: Option<String>,
    name_sent: bool,
    pending_key: Option<String>,
    streaming_string: bool,
    calls: Vec<CallState>,
}

crate::impl_snapshot!(PoolsideTools { buffer, in_call, name, name_sent, pending_key, streaming_string, calls });

/// The deltas of one streamed chunk, one per call index.
#[derive(Default)]
struct Pending(Vec<DeltaToolCall>);

impl Pending {
    fn slot(&mut self, index: usize) -> &mut DeltaToolCall {
        let at = match self.0.iter().position(|d| d.index == index as i64) {
            Some(at) => at,
            None => {
                self.0.push(DeltaToolCall::arguments(index as i64, String::new()));
                self.0.len() - 1
            }
        };
        &mut self.0[at]
    }
}

impl PoolsideTools {
    fn current(&mut self) -> Option<&mut CallState> {
        self.calls.last_mut()
    }

    fn begin_call(&mut self) {
        self.calls.push(CallState { id: random_tool_call_id(), prev: Value::Object(Default::default()), ..Default::default() });
        self.name_sent = false;
        self.name = None;
        self.pending_key = None;
        self.streaming_string = false;
        self.in_call = true;
    }

    fn finish_call(&mut self) {
        self.in_call = false;
        self.name = None;
        self.pending_key = None;
        self.streaming_string = false;
    }

    fn update_name(&mut self, pending: &mut Pending, name: &str) {
        let index = self.calls.len() - 1;
        let Some(call) = self.current() else { return };
        call.prev = serde_json::json!({"name": name, "arguments": {}});
        let id = call.id.clone();
        let d = pending.slot(index);
        d.id = Some(id);
        d.kind = Some("function");
        if let Some(f) = &mut d.function {
            f.name = Some(name.to_string());
        }
    }

    /// `_update_tool_args`: the fragment goes out; the arguments read so
    /// far (completed as partial JSON) are what the stream owes at its end.
    fn update_args(&mut self, pending: &mut Pending, fragment: &str) {
        let index = self.calls.len() - 1;
        let Some(call) = self.current() else { return };
        let chars: Vec<char> = call.streamed.chars().collect();
        if let Some((parsed, _)) = partial_loads(&chars, Allow::ALL) {
            if let Some(obj) = call.prev.as_object_mut() {
                obj.insert("arguments".into(), parsed);
            }
        }
        if let Some(f) = &mut pending.slot(index).function {
            f.arguments = Some(f.arguments.take().unwrap_or_default() + fragment);
        }
    }

    /// `_append_arg_fragment` for a value that is not a string.
    fn arg_fragment(&mut self, key: &str, raw: &str) -> Option<String> {
        let key = py_strip(key);
        let call = self.calls.last_mut()?;
        if key.is_empty() || call.seen.iter().any(|k| k == key) {
            return None;
        }
        let sep = if call.started { ", " } else { "{" };
        let fragment = format!("{sep}{}: {}", dumps_str(key), deserialized(raw));
        call.started = true;
        call.seen.push(key.to_string());
        call.streamed.push_str(&fragment);
        Some(fragment)
    }

    fn close_args(&mut self) -> Option<String> {
        let call = self.calls.last_mut()?;
        if call.closed {
            return None;
        }
        call.closed = true;
        if call.started {
            call.streamed.push('}');
            Some("}".into())
        } else {
            call.streamed = "{}".into();
            Some("{}".into())
        }
    }

    /// One step of vLLM's loop; `false` when it waits for more text.
    fn step(&mut self, ctx: &ChatContext, pending: &mut Pending, content: &mut Option<String>) -> bool {
        if !self.in_call {
            match find(&self.buffer, CALL_START) {
                None => {
                    let held = held_prefix(&self.buffer, CALL_START);
                    let out: String = self.buffer.drain(..self.buffer.len() - held).collect();
                    if !out.is_empty() {
                        content.get_or_insert_with(String::new).push_str(&out);
                    }
                    return false;
                }
                Some(at) => {
                    let before: String = self.buffer.drain(..at).collect();
                    if !before.is_empty() {
                        content.get_or_insert_with(String::new).push_str(&before);
                    }
                    self.buffer.drain(..CALL_START.len());
                    self.begin_call();
                    return true;
                }
            }
        }
        if !self.name_sent {
            let cut = [find(&self.buffer, "\n"), find(&self.buffer, KEY_START), find(&self.buffer, CALL_END)];
            let Some(at) = cut.iter().flatten().min().copied() else { return false };
            let name = py_strip(&self.buffer[..at]).to_string();
            if name.is_empty() && Some(at) == cut[2] {
                // `<tool_call></tool_call>`: no call at all.
                self.buffer.drain(..at + CALL_END.len());
                self.finish_call();
                self.calls.pop();
                return true;
            }
            let skip = if Some(at) == cut[0] { at + 1 } else { at };
            self.buffer.drain(..skip);
            self.name = Some(name.clone());
            self.name_sent = true;
            self.update_name(pending, &name);
            return true;
        }
        if self.streaming_string {
            if let Some(end) = find(&self.buffer, VALUE_END) {
                let raw: String = self.buffer.drain(..end).collect();
                self.buffer.drain(..VALUE_END.len());
                self.streaming_string = false;
                self.pending_key = None;
                let fragment = escaped(&raw) + "\"";
                if let Some(call) = self.current() {
                    call.streamed.push_str(&fragment);
                }
                self.update_args(pending, &fragment);
                return true;
            }
            let safe = self.buffer.len() - held_prefix(&self.buffer, VALUE_END);
            if safe > 0 {
                let raw: String = self.buffer.drain(..safe).collect();
                let fragment = escaped(&raw);
                if !fragment.is_empty() {
                    if let Some(call) = self.current() {
                        call.streamed.push_str(&fragment);
                    }
                    self.update_args(pending, &fragment);
                }
            }
            return false;
        }
        if let Some(key) = self.pending_key.clone() {
            let Some(at) = find(&self.buffer, VALUE_START) else { return false };
            self.buffer.drain(..at);
            let key = py_strip(&key).to_string();
            let name = self.name.clone().unwrap_or_default();
            if is_string_type(ctx, &name, &key) {
                self.buffer.drain(..VALUE_START.len());
                let Some(call) = self.calls.last_mut() else { return false };
                if call.seen.contains(&key) {
                    self.pending_key = None;
                    return true;
                }
                call.seen.push(key.clone());
                let sep = if call.started { ", " } else { "{" };
                let fragment = format!("{sep}{}: \"", dumps_str(&key));
                call.started = true;
                call.streamed.push_str(&fragment);
                self.streaming_string = true;
                self.update_args(pending, &fragment);
                return true;
            }
            let Some(end) = find(&self.buffer, VALUE_END) else { return false };
            let raw = py_strip(&self.buffer[VALUE_START.len()..end]).to_string();
            self.buffer.drain(..end + VALUE_END.len());
            self.pending_key = None;
            if let Some(fragment) = self.arg_fragment(&key, &raw) {
                self.update_args(pending, &fragment);
            }
            return true;
        }
        let end = find(&self.buffer, CALL_END);
        let key_at = find(&self.buffer, KEY_START);
        if let Some(end) = end.filter(|e| key_at.is_none_or(|k| *e < k)) {
            self.buffer.drain(..end + CALL_END.len());
            let fragment = self.close_args();
            if let (Some(name), Some(call)) = (self.name.clone(), self.calls.last_mut()) {
                if let Some(args) = loads(&call.streamed) {
                    call.prev = serde_json::json!({"name": name, "arguments": args});
                }
            }
            self.finish_call();
            if let Some(f) = fragment {
                self.update_args(pending, &f);
            }
            return true;
        }
        let Some(at) = key_at else { return false };
        self.buffer.drain(..at);
        let Some(key_end) = find(&self.buffer, KEY_END) else { return false };
        self.pending_key = Some(self.buffer[KEY_START.len()..key_end].to_string());
        self.buffer.drain(..key_end + KEY_END.len());
        true
    }
}

impl ToolParser for PoolsideTools {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        let mut calls = Vec::new();
        for m in CALL.finditer(text) {
            let Some(detail) = DETAIL.search(&text[m.start..m.end]) else { continue };
            let name = py_strip(detail.group(1).unwrap_or("")).to_string();
            // A dict: a repeated key keeps its first place and its last value.
            let mut args: Vec<(String, String)> = Vec::new();
            for pair in detail.group(2).map(|a| ARG.finditer(a)).unwrap_or_default() {
                let key = py_strip(pair.group(1).unwrap_or("")).to_string();
                let value = pair.group(2).unwrap_or("");
                let json =
                    if is_string_type(ctx, &name, &key) { dumps_str(value) } else { deserialized(py_strip(value)) };
                match args.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = json,
                    None => args.push((key, json)),
                }
            }
            let body: Vec<String> = args.iter().map(|(k, v)| format!("{}: {v}", dumps_str(k))).collect();
            calls.push(FunctionCall { id: None, name, arguments: format!("{{{}}}", body.join(", ")) });
        }
        if calls.is_empty() {
            return Extracted { tools_called: false, calls, content: Some(text.to_string()) };
        }
        let before = text.find(CALL_START).map_or(text, |at| &text[..at]);
        let content = (!py_strip(before).is_empty()).then(|| before.to_string());
        Extracted { tools_called: true, calls, content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        if ctx.tools.is_empty() || ctx.tool_choice == ToolChoice::None {
            return (!t.delta.is_empty()).then(|| Delta::content(t.delta));
        }
        self.buffer.push_str(t.delta);
        let mut pending = Pending::default();
        let mut content = None;
        while self.step(ctx, &mut pending, &mut content) {}
        if content.is_none() && pending.0.is_empty() {
            // The empty delta carries the chunk's logprobs.
            return ctx.logprobs.then(|| Delta::content(""));
        }
        Some(Delta { content, tool_calls: pending.0, ..Default::default() })
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        let Some(call) = self.calls.last() else { return String::new() };
        let expected = match call.prev.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => dumps(v),
            None => "{}".into(),
        };
        expected.strip_prefix(call.streamed.as_str()).unwrap_or("").to_string()
    }

    fn supports_required_and_named(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ChatContext {
        let tools = serde_json::json!([{"type": "function", "function": {"name": "weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}
        }}}]);
        let req = serde_json::json!({"tools": tools});
        ChatContext::from_request(req.as_object().expect("object"), &Default::default())
    }

    const CALL: &str = "<tool_call>weather\n<arg_key>city</arg_key><arg_value> Oslo</arg_value>\
                        <arg_key>days</arg_key><arg_value>(3)</arg_value></tool_call>";

    #[test]
    fn batch_keeps_strings_verbatim_and_reads_other_values() {
        let got = PoolsideTools::default().extract_tool_calls(&format!("Sure. {CALL} bye"), &ctx());
        assert_eq!(got.calls[0].arguments, r#"{"city": " Oslo", "days": 3}"#);
        assert_eq!(got.content.as_deref(), Some("Sure. "));
        let open = "<tool_call>weather\n<arg_key>city</arg_key>";
        assert_eq!(PoolsideTools::default().extract_tool_calls(open, &ctx()).content.as_deref(), Some(open));
    }

    #[test]
    fn stream_sends_the_name_then_the_string_as_it_grows() {
        let ctx = ctx();
        let mut p = PoolsideTools::default();
        let mut args = String::new();
        let mut names = Vec::new();
        for chunk in ["<tool_ca", "ll>weather\n<arg_key>city</arg_key><arg_value> Os", "lo</arg_value>", "</tool_call>"] {
            let texts = Texts { previous: "", current: "", delta: chunk };
            let ids = Ids { previous: &[], current: &[], delta: &[] };
            for tc in p.extract_tool_calls_streaming(&texts, &ids, &ctx).map(|d| d.tool_calls).unwrap_or_default() {
                let f = tc.function.expect("a function delta");
                names.extend(f.name);
                args.push_str(f.arguments.as_deref().unwrap_or(""));
            }
        }
        assert_eq!(names, ["weather"]);
        assert_eq!(args, r#"{"city": " Oslo"}"#);
        assert_eq!(p.remaining_unstreamed_args(), "");
    }
}
