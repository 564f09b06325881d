//! HY3's tool calls (`hy_v3`, vLLM's `HYV3ToolParser`):
//! `<tool_calls{S}><tool_call{S}>NAME<tool_sep{S}><arg_key{S}>K</arg_key{S}>
//! <arg_value{S}>V</arg_value{S}></tool_call{S}></tool_calls{S}>` (S: the
//! checkpoint's `token_suffix`), values typed by the tool's schema.
//!
//! The stream starts at the id of `<tool_calls{S}>`, sends the name at
//! `<tool_sep{S}>`, then JSON fragments it builds itself: string values as
//! they grow, the closing `}` held until `</tool_call{S}>`. Lengths are
//! counted in chars, as Python counts them.

use std::sync::Arc;

use super::values::{object, parse_value, py_strip, types};
use crate::model::Model;
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::pycompat::json::dumps_str;
use crate::pycompat::re::Pattern;
use crate::wire::response::{Delta, DeltaToolCall};

/// The markers under one suffix, and the patterns vLLM builds from them
/// (the markers go in unescaped, as vLLM puts them).
pub struct Markers {
    calls_start: String,
    calls_end: String,
    call_start: String,
    call_end: String,
    sep: String,
    key_start: String,
    key_end: String,
    value_start: String,
    calls_start_id: i64,
    call: Pattern,
    portion: Pattern,
    args: Pattern,
}

impl Markers {
    /// `Err`: vLLM's constructor error (the block markers are not tokens).
    pub fn load(model: &Model, suffix: &str) -> Result<Markers, String> {
        let m = |name: &str| format!("<{name}{suffix}>");
        let id = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
        let missing = "HYV3 Tool parser could not locate tool call start/end tokens in the tokenizer!";
        let (calls_start, calls_end) = (m("tool_calls"), m("/tool_calls"));
        let calls_start_id = id(&calls_start).ok_or(missing)?;
        id(&calls_end).ok_or(missing)?;
        let (call_start, call_end, sep) = (m("tool_call"), m("/tool_call"), m("tool_sep"));
        let (key_start, key_end, value_start, value_end) = (m("arg_key"), m("/arg_key"), m("arg_value"), m("/arg_value"));
        Ok(Markers {
            call: Pattern::new(&format!("(?s){call_start}(.*?){sep}(.*?){call_end}")),
            portion: Pattern::new(&format!("(?s){call_start}(.*?){sep}(.*)")),
            args: Pattern::new(&format!("(?s){key_start}(.*?){key_end}\\s*{value_start}(.*?){value_end}")),
            calls_start,
            calls_end,
            call_start,
            call_end,
            sep,
            key_start,
            key_end,
            value_start,
            calls_start_id,
        })
    }
}

/// `_extract_tool_calls`: every closed call, then one left open after them.
fn extract_calls(m: &Markers, text: &str, ctx: &ChatContext) -> Vec<FunctionCall> {
    let mut tuples: Vec<(String, String)> = Vec::new();
    let pair = |g: &crate::pycompat::re::Match| (g.group(1).unwrap_or("").to_string(), g.group(2).unwrap_or("").to_string());
    let closed = m.call.finditer(text);
    if closed.is_empty() {
        tuples.extend(m.portion.finditer(text).iter().map(pair));
    } else {
        tuples.extend(closed.iter().map(pair));
        let rest = text.rsplit(m.call_end.as_str()).next().unwrap_or("");
        tuples.extend(m.portion.finditer(rest).iter().map(pair));
    }
    tuples
        .into_iter()
        .map(|(name, args)| {
            let name = py_strip(&name).to_string();
            let mut entries: Vec<(String, String)> = Vec::new();
            for a in m.args.finditer(py_strip(&args)) {
                let key = a.group(1).unwrap_or("").to_string();
                let value = parse_value(a.group(2).unwrap_or(""), ctx, &name, &key);
                match entries.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = value,
                    None => entries.push((key, value)),
                }
            }
            FunctionCall { id: None, name, arguments: object(&entries) }
        })
        .collect()
}

fn chars_from(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or("", |(i, _)| &s[i..])
}

fn chars_between(s: &str, from: usize, to: usize) -> String {
    s.chars().skip(from).take(to.saturating_sub(from)).collect()
}

pub struct Hy3Tools {
    m: Arc<Markers>,
    buffer: String,
    /// The block opener's id has been seen.
    started: bool,
    /// `</tool_call{S}></tool_calls{S}>` has been seen in the text, and the
    /// text's last chars (to find it across deltas).
    closed_seen: bool,
    tail: String,
    name: Option<String>,
    /// `_completed_args`: key, value as JSON (the first of a key kept).
    completed: Vec<(String, String)>,
    /// `_streamed_json_len`, in chars.
    streamed_len: usize,
    call_index: i64,
    call_id: String,
}

crate::impl_snapshot!(Hy3Tools {
    buffer,
    started,
    closed_seen,
    tail,
    name,
    completed,
    streamed_len,
    call_index,
    call_id
});

impl Hy3Tools {
    pub fn new(m: Arc<Markers>) -> Hy3Tools {
        Hy3Tools {
            m,
            buffer: String::new(),
            started: false,
            closed_seen: false,
            tail: String::new(),
            name: None,
            completed: Vec::new(),
            streamed_len: 0,
            call_index: -1,
            call_id: String::new(),
        }
    }

    /// Tracks whether the text so far holds the two end markers together.
    fn see_text(&mut self, delta: &str) {
        let closing = format!("{}{}", self.m.call_end, self.m.calls_end);
        let window = format!("{}{delta}", self.tail);
        self.closed_seen |= window.contains(&closing);
        let keep = closing.chars().count().saturating_sub(1);
        let n = window.chars().count();
        self.tail = chars_from(&window, n.saturating_sub(keep)).to_string();
    }

    /// `_drain_calls`: whole calls left in the buffer go out whole.
    fn drain_calls(&mut self, ctx: &ChatContext) -> Vec<DeltaToolCall> {
        let mut out = Vec::new();
        while let Some(start) = self.buffer.find(&self.m.call_start) {
            let Some(end) = self.buffer[start..].find(&self.m.call_end).map(|e| start + e + self.m.call_end.len()) else {
                break;
            };
            let whole = self.buffer[start..end].to_string();
            self.buffer.drain(..end);
            for call in extract_calls(&self.m, &whole, ctx) {
                self.call_index += 1;
                out.push(DeltaToolCall::opening(self.call_index, random_tool_call_id(), call.name, Some(call.arguments)));
            }
        }
        out
    }

    /// `_extract_streaming_incremental`.
    fn incremental(&mut self, name_delta: Option<Delta>, ctx: &ChatContext) -> Option<Delta> {
        let name = self.name.clone().unwrap_or_default();
        let buf = self.buffer.clone();
        let end = buf.find(&self.m.call_end);
        let (args_text, remaining) = match end {
            Some(e) => (&buf[..e], &buf[e + self.m.call_end.len()..]),
            None => (buf.as_str(), ""),
        };
        let matches = self.m.args.finditer(args_text);
        for a in &matches {
            let key = py_strip(a.group(1).unwrap_or("")).to_string();
            if !self.completed.iter().any(|(k, _)| *k == key) {
                let value = parse_value(a.group(2).unwrap_or(""), ctx, &name, &key);
                self.completed.push((key, value));
            }
        }
        let tail = &args_text[matches.last().map_or(0, |a| a.end)..];
        let mut partial: Option<(String, String)> = None;
        if let Some(ak) = tail.find(&self.m.key_start) {
            let key_from = ak + self.m.key_start.len();
            if let Some(ke) = tail[key_from..].find(&self.m.key_end).map(|e| key_from + e) {
                let key = py_strip(&tail[key_from..ke]).to_string();
                let only_string = types(ctx, &name, &key) == ["string"];
                if let Some(vs) = tail[ke..].find(&self.m.value_start).map(|v| ke + v) {
                    if only_string {
                        partial = Some((key, tail[vs + self.m.value_start.len()..].to_string()));
                    }
                }
            }
        }
        let mut diff: Option<String> = None;
        if end.is_some() {
            let fin = object(&self.completed);
            let len = fin.chars().count();
            if self.streamed_len < len {
                diff = Some(chars_from(&fin, self.streamed_len).to_string());
            }
            self.name = None;
            self.completed.clear();
            self.streamed_len = 0;
            self.buffer = remaining.to_string();
        } else {
            let mut parts: Vec<String> = self.completed.iter().map(|(k, v)| format!("{}: {v}", dumps_str(k))).collect();
            if let Some((key, value)) = &partial {
                let escaped = value
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n")
                    .replace('\r', "\\r")
                    .replace('\t', "\\t");
                parts.push(format!("{}: \"{escaped}", dumps_str(key)));
            }
            let snapshot = format!("{{{}}}", parts.join(", "));
            let upto = snapshot.chars().count() - 1;
            if upto > self.streamed_len {
                diff = Some(chars_between(&snapshot, self.streamed_len, upto));
                self.streamed_len = upto;
            }
        }
        let diff = diff.filter(|d| !d.is_empty());
        let mut delta = match (name_delta, diff) {
            (Some(nd), Some(diff)) => {
                let mut d = nd;
                if let Some(f) = d.tool_calls.first_mut().and_then(|tc| tc.function.as_mut()) {
                    f.arguments = Some(diff);
                }
                Some(d)
            }
            (Some(nd), None) => Some(nd),
            (None, Some(diff)) => Some(Delta::tool_calls(vec![DeltaToolCall::arguments(self.call_index, diff)])),
            (None, None) => None,
        };
        if end.is_some() {
            let extra = self.drain_calls(ctx);
            if !extra.is_empty() {
                delta.get_or_insert_with(Delta::default).tool_calls.extend(extra);
            }
        }
        delta
    }
}

impl ToolParser for Hy3Tools {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        let Some(at) = text.find(&self.m.calls_start) else {
            return Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        };
        let content = (at > 0).then(|| text[..at].to_string());
        // A block is a tool turn even where no call reads.
        Extracted { tools_called: true, calls: extract_calls(&self.m, text, ctx), content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        self.started |= ids.delta.contains(&self.m.calls_start_id);
        self.see_text(t.delta);
        if !self.started {
            return Some(Delta::content(t.delta));
        }
        let mut content: Option<String> = None;
        match t.delta.rsplit_once(self.m.calls_start.as_str()) {
            Some(_) => {
                let mut parts = t.delta.split(self.m.calls_start.as_str());
                content = parts.next().filter(|p| !p.is_empty()).map(str::to_string);
                self.buffer.push_str(t.delta.rsplit(self.m.calls_start.as_str()).next().unwrap_or(""));
            }
            None => self.buffer.push_str(t.delta),
        }
        if self.closed_seen && !self.buffer.contains(&self.m.call_end) {
            self.buffer.push_str(&self.m.call_end);
            self.buffer.push_str(&self.m.calls_end);
        }
        let start = self.buffer.find(&self.m.call_start);
        if start.is_none() && self.name.is_none() {
            if content.is_some() {
                return Some(Delta { content, ..Default::default() });
            }
            self.buffer.clear();
            return None;
        }
        let mut name_delta = None;
        if self.name.is_none() {
            let start = start.unwrap_or(0);
            let Some(sep) = self.buffer.find(&self.m.sep) else {
                self.buffer.drain(..start);
                return content.map(|c| Delta { content: Some(c), ..Default::default() });
            };
            let name_from = start + self.m.call_start.len();
            let name = if sep > name_from { py_strip(&self.buffer[name_from..sep]).to_string() } else { String::new() };
            self.buffer.drain(..sep + self.m.sep.len());
            self.name = Some(name.clone());
            self.call_index += 1;
            self.call_id = random_tool_call_id();
            let opening = DeltaToolCall::opening(self.call_index, self.call_id.clone(), name, None);
            let d = Delta { content, tool_calls: vec![opening], ..Default::default() };
            if !self.buffer.contains(&self.m.call_end) {
                return Some(d);
            }
            name_delta = Some(d);
        }
        self.incremental(name_delta, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (Arc<Markers>, ChatContext) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/models/hy_v3");
        let model = Model::load_dir(&dir).expect("the hy_v3 fixture");
        let markers = Arc::new(Markers::load(&model, ":opensource").expect("markers"));
        let tools = serde_json::json!([{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"n": {"type": "int64"}, "s": {"type": "string"}}
        }}}]);
        let req = serde_json::json!({"tools": tools});
        (markers, ChatContext::from_request(req.as_object().expect("object"), &Default::default()))
    }

    #[test]
    fn batch_types_values_by_schema_aliases() {
        let (m, ctx) = setup();
        let text = "ok<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource>\
                    <arg_key:opensource>n</arg_key:opensource><arg_value:opensource>7</arg_value:opensource>\
                    <arg_key:opensource>s</arg_key:opensource><arg_value:opensource>7</arg_value:opensource>\
                    </tool_call:opensource></tool_calls:opensource>";
        let got = Hy3Tools::new(m.clone()).extract_tool_calls(text, &ctx);
        assert_eq!(got.calls[0].arguments, r#"{"n": 7, "s": "7"}"#);
        assert_eq!(got.content.as_deref(), Some("ok"));
        // A block without a separator is a tool turn without calls.
        let bare = "<tool_calls:opensource><tool_call:opensource>f</tool_call:opensource>";
        let got = Hy3Tools::new(m).extract_tool_calls(bare, &ctx);
        assert!(got.tools_called && got.calls.is_empty() && got.content.is_none());
    }
}
