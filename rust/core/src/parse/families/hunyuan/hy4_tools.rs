//! HY4's tool calls (`hy_v4`, vLLM's `HYV4ToolParser`):
//! `<tool_calls{S}><tool_call{S}>NAME<arg_key{S}>K</arg_key{S}>
//! <arg_value{S}>V</arg_value{S}></tool_call{S}></tool_calls{S}>` with no
//! separator, S the suffix read from the vocabulary.
//!
//! Batch is strict: a block whose tags do not pair up, a call without a
//! name or text left between arguments makes the whole output content.
//! The stream starts at the id of `<tool_calls{S}>` (at the marker's text
//! when a structural tag guided decoding, since the grammar may split it),
//! sends a call's name at its first `<arg_key{S}>` or its end, then JSON it
//! builds itself (string values as they grow), and drains every complete
//! call a delta holds. Lengths are counted in chars, as Python counts them.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::values::{object, parse_value, py_strip, types};
use crate::model::Model;
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::pycompat::json::{dumps_str, partial_tag_overlap};
use crate::pycompat::re::{escape, Pattern};
use crate::structured::format::{const_string, separated, sequence, tag};
use crate::structured::{Choice, TagTool};
use crate::wire::response::{Delta, DeltaToolCall};

/// The markers under one suffix, and the patterns vLLM builds from them.
pub struct Markers {
    suffix: String,
    calls_start: String,
    calls_end: String,
    call_start: String,
    call_end: String,
    key_start: String,
    key_end: String,
    value_start: String,
    value_end: String,
    calls_start_id: i64,
    call: Pattern,
    args: Pattern,
}

impl Markers {
    /// `Err`: vLLM's constructor error (the block markers are not tokens).
    pub fn load(model: &Model, suffix: &str) -> Result<Markers, String> {
        let m = |name: &str| format!("<{name}{suffix}>");
        let id = |t: &str| model.tokenizer.token_to_id(t).map(i64::from);
        let missing = "HYV4 tool extractor could not locate tool call start/end tokens in the tokenizer!";
        let (calls_start, calls_end) = (m("tool_calls"), m("/tool_calls"));
        let calls_start_id = id(&calls_start).ok_or(missing)?;
        id(&calls_end).ok_or(missing)?;
        let (call_start, call_end) = (m("tool_call"), m("/tool_call"));
        let (key_start, key_end, value_start, value_end) = (m("arg_key"), m("/arg_key"), m("arg_value"), m("/arg_value"));
        let e = |s: &str| escape(s);
        Ok(Markers {
            call: Pattern::new(&format!("(?s){}(.*?){}", e(&call_start), e(&call_end))),
            args: Pattern::new(&format!(
                "(?s){}(.*?){}{}(.*?){}",
                e(&key_start),
                e(&key_end),
                e(&value_start),
                e(&value_end)
            )),
            suffix: suffix.to_string(),
            calls_start,
            calls_end,
            call_start,
            call_end,
            key_start,
            key_end,
            value_start,
            value_end,
            calls_start_id,
        })
    }

    /// `(name, arguments text)` of a call body: the name runs to the first
    /// `<arg_key>`.
    fn split_body<'b>(&self, body: &'b str) -> (&'b str, &'b str) {
        match body.find(&self.key_start) {
            Some(at) => (py_strip(&body[..at]), py_strip(&body[at..])),
            None => (py_strip(body), ""),
        }
    }

    /// `_extract_tool_calls_strict`; `None` where vLLM raises.
    fn extract_strict(&self, text: &str, ctx: &ChatContext) -> Option<Vec<FunctionCall>> {
        let start = text.find(&self.calls_start)?;
        let end = text.find(&self.calls_end)?;
        let block = text.get(start + self.calls_start.len()..end.max(start + self.calls_start.len()))?;
        let opened = block.matches(self.call_start.as_str()).count();
        if opened != block.matches(self.call_end.as_str()).count() {
            return None;
        }
        let bodies = self.call.findall(block);
        if opened != bodies.len() {
            return None;
        }
        let mut calls = Vec::new();
        for body in bodies {
            let (name, args) = self.split_body(body);
            let count = |s: &str| args.matches(s).count();
            if name.is_empty()
                || count(&self.key_start) != count(&self.key_end)
                || count(&self.value_start) != count(&self.value_end)
                || !py_strip(&self.args.remove(args)).is_empty()
            {
                return None;
            }
            let mut entries: Vec<(String, String)> = Vec::new();
            for a in self.args.finditer(args) {
                let key = a.group(1).unwrap_or("").to_string();
                let value = parse_value(a.group(2).unwrap_or(""), ctx, name, &key);
                match entries.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = value,
                    None => entries.push((key, value)),
                }
            }
            calls.push(FunctionCall { id: None, name: name.to_string(), arguments: object(&entries) });
        }
        (!calls.is_empty()).then_some(calls)
    }

    /// `get_hy_v4_structural_tag`, which vLLM builds only when a call is
    /// forced: `auto` decodes freely. `None` where vLLM's builder fails
    /// (required keys that are not strings).
    pub fn tag(&self, tools: &[TagTool], choice: Choice) -> Option<Value> {
        if choice == Choice::Auto {
            return None;
        }
        let s = &self.suffix;
        let pair = |key: &str| {
            sequence(vec![
                const_string(&format!("<arg_key{s}>")),
                const_string(key),
                const_string(&format!("</arg_key{s}>")),
                const_string(&format!("<arg_value{s}>")),
                json!({"type": "any_text", "excludes": [], "max_tokens": null, "max_chars": null}),
                const_string(&format!("</arg_value{s}>")),
            ])
        };
        let mut tags = Vec::new();
        for tool in tools {
            let (required, optional) = argument_keys(tool.parameters)?;
            let mut elements: Vec<Value> = required.iter().map(|k| pair(k)).collect();
            let mut optional: Vec<Value> = optional.iter().map(|k| pair(k)).collect();
            if optional.len() == 1 {
                elements.push(json!({"type": "star", "content": optional.remove(0)}));
            } else if !optional.is_empty() {
                elements.push(json!({"type": "star", "content": {"type": "or", "elements": optional}}));
            }
            let content = if elements.is_empty() {
                json!({"type": "any_text", "excludes": [], "max_tokens": null, "max_chars": null})
            } else {
                sequence(elements)
            };
            tags.push(tag(&format!("{}{}", self.call_start, tool.name), content, &self.call_end));
        }
        Some(sequence(vec![
            const_string(&self.calls_start),
            separated(tags, "", choice == Choice::Forced),
            const_string(&self.calls_end),
        ]))
    }
}

/// `_hy_v4_argument_keys`: required keys (declared ones in property order,
/// then the rest), and the optional ones.
fn argument_keys(parameters: Option<&Value>) -> Option<(Vec<String>, Vec<String>)> {
    let empty = Map::new();
    let params = parameters.and_then(Value::as_object).unwrap_or(&empty);
    let properties = params.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required: Vec<String> = match params.get("required") {
        Some(Value::Array(keys)) => keys.iter().map(|k| k.as_str().map(str::to_string)).collect::<Option<_>>()?,
        _ => Vec::new(),
    };
    let mut first: Vec<String> = properties.keys().filter(|k| required.contains(k)).cloned().collect();
    first.extend(required.iter().filter(|k| !properties.contains_key(*k)).cloned());
    let rest = properties.keys().filter(|k| !required.contains(k)).cloned().collect();
    Some((first, rest))
}

fn chars_from(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or("", |(i, _)| &s[i..])
}

fn chars_between(s: &str, from: usize, to: usize) -> String {
    s.chars().skip(from).take(to.saturating_sub(from)).collect()
}

/// `s` without its last `n` chars.
fn drop_last_chars(s: &str, n: usize) -> &str {
    let keep = s.chars().count().saturating_sub(n);
    s.char_indices().nth(keep).map_or(s, |(i, _)| &s[..i])
}

pub struct Hy4Tools {
    m: Arc<Markers>,
    buffer: String,
    /// The block opener's id (or, guided, its text) has been seen.
    started: bool,
    /// The text's last chars: to find the block opener and
    /// `</tool_call{S}></tool_calls{S}>` across deltas.
    tail: String,
    /// `</tool_call{S}></tool_calls{S}>` has been in the text.
    closed_seen: bool,
    /// `_streaming_tool_name`.
    name: Option<String>,
    /// `_completed_args`: key, value as JSON (the first of a key kept).
    completed: Vec<(String, String)>,
    /// `_streamed_json_len`, in chars.
    streamed_len: usize,
    call_index: i64,
}

crate::impl_snapshot!(Hy4Tools { buffer, started, tail, closed_seen, name, completed, streamed_len, call_index });

impl Hy4Tools {
    pub fn new(m: Arc<Markers>) -> Hy4Tools {
        Hy4Tools {
            m,
            buffer: String::new(),
            started: false,
            tail: String::new(),
            closed_seen: false,
            name: None,
            completed: Vec::new(),
            streamed_len: 0,
            call_index: -1,
        }
    }

    /// The previous text's tail and this delta; the tail moves on.
    fn window(&mut self, delta: &str) -> (String, usize) {
        let closing = format!("{}{}", self.m.call_end, self.m.calls_end);
        let window = format!("{}{delta}", self.tail);
        let tail_len = self.tail.len();
        self.closed_seen |= window.contains(&closing);
        let keep = closing.chars().count().saturating_sub(1);
        self.tail = chars_from(&window, window.chars().count().saturating_sub(keep)).to_string();
        (window, tail_len)
    }

    /// Guided decoding: the opener is found in the text. Before it, the
    /// delta's text up to a possible start of it is content (what an
    /// earlier delta held back is not sent, as in vLLM).
    fn guided(&mut self, window: &str, tail_len: usize, delta: &str) -> Result<Option<String>, Option<Delta>> {
        if self.started {
            self.buffer.push_str(delta);
            return Ok(None);
        }
        let marker = &self.m.calls_start;
        let Some(at) = window.find(marker.as_str()) else {
            let safe = drop_last_chars(window, partial_tag_overlap(window, marker)).len();
            let content = window.get(tail_len..safe.max(tail_len)).unwrap_or("");
            return Err((!content.is_empty()).then(|| Delta::content(content)));
        };
        self.started = true;
        self.buffer.push_str(&window[at + marker.len()..]);
        let content = window.get(tail_len..at.max(tail_len)).unwrap_or("");
        Ok((!content.is_empty()).then(|| content.to_string()))
    }

    /// Phase 2, `_extract_streaming_incremental`: the current call's
    /// arguments so far; `opening` is the name found in this pass.
    fn incremental(&mut self, opening: Option<String>, ctx: &ChatContext) -> Option<DeltaToolCall> {
        let name = self.name.clone().unwrap_or_default();
        let buf = std::mem::take(&mut self.buffer);
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
        let diff = if end.is_some() {
            let fin = object(&self.completed);
            let diff = (self.streamed_len < fin.chars().count()).then(|| chars_from(&fin, self.streamed_len).to_string());
            self.name = None;
            self.completed.clear();
            self.streamed_len = 0;
            self.buffer = remaining.to_string();
            diff
        } else {
            let tail = &args_text[matches.last().map_or(0, |a| a.end)..];
            let mut parts: Vec<String> = self.completed.iter().map(|(k, v)| format!("{}: {v}", dumps_str(k))).collect();
            if let Some((key, value)) = self.open_string(tail, ctx, &name) {
                let quoted = dumps_str(&value);
                parts.push(format!("{}: \"{}", dumps_str(&key), &quoted[1..quoted.len() - 1]));
            }
            self.buffer = buf.clone();
            let snapshot = format!("{{{}}}", parts.join(", "));
            let upto = snapshot.chars().count() - 1;
            (upto > self.streamed_len).then(|| {
                let diff = chars_between(&snapshot, self.streamed_len, upto);
                self.streamed_len = upto;
                diff
            })
        };
        let diff = diff.filter(|d| !d.is_empty());
        match (opening, diff) {
            (Some(name), diff) => Some(DeltaToolCall::opening(self.call_index, random_tool_call_id(), name, diff)),
            (None, Some(diff)) => Some(DeltaToolCall::arguments(self.call_index, diff)),
            (None, None) => None,
        }
    }

    /// The key and value so far of a string argument still open at the end
    /// of `tail` (a possible start of `</arg_value>` held back).
    fn open_string(&self, tail: &str, ctx: &ChatContext, name: &str) -> Option<(String, String)> {
        let m = &self.m;
        let key_from = tail.find(&m.key_start)? + m.key_start.len();
        let key_end = key_from + tail[key_from..].find(&m.key_end)?;
        let key = py_strip(&tail[key_from..key_end]).to_string();
        let value_from = key_end + tail[key_end..].find(&m.value_start)? + m.value_start.len();
        if types(ctx, name, &key) != ["string"] {
            return None;
        }
        let raw = &tail[value_from..];
        Some((key, drop_last_chars(raw, partial_tag_overlap(raw, &m.value_end)).to_string()))
    }

    /// The drain loop: every call the buffer completes, the name of one
    /// it opens.
    fn drain(&mut self, ctx: &ChatContext) -> Vec<DeltaToolCall> {
        let mut calls = Vec::new();
        loop {
            let start = self.buffer.find(&self.m.call_start);
            let mut opening = None;
            if self.name.is_none() {
                let Some(start) = start else {
                    // Keep only what may start a call opener.
                    let keep = partial_tag_overlap(&self.buffer, &self.m.call_start);
                    self.buffer = chars_from(&self.buffer, self.buffer.chars().count() - keep).to_string();
                    break;
                };
                let after = |pat: &str| self.buffer[start..].find(pat).map(|i| start + i);
                let Some(name_end) = after(&self.m.key_start).or_else(|| after(&self.m.call_end)) else {
                    self.buffer.drain(..start);
                    break;
                };
                let name_from = start + self.m.call_start.len();
                let name = py_strip(self.buffer.get(name_from..name_end).unwrap_or("")).to_string();
                self.buffer.drain(..name_end);
                self.name = Some(name.clone());
                self.call_index += 1;
                if !self.buffer.contains(&self.m.call_end) {
                    calls.push(DeltaToolCall::opening(self.call_index, random_tool_call_id(), name, None));
                    break;
                }
                opening = Some(name);
            }
            calls.extend(self.incremental(opening, ctx));
            // Only a finished call followed by another goes on (a literal
            // opener inside an open string would spin).
            if !(self.name.is_none() && self.buffer.starts_with(&self.m.call_start)) {
                break;
            }
        }
        calls
    }
}

impl ToolParser for Hy4Tools {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    /// Forced choices are read in the model's own markup.
    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        if !text.contains(&self.m.calls_start) {
            return Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        }
        match self.m.extract_strict(text, ctx) {
            Some(calls) => {
                let content = text.split(self.m.calls_start.as_str()).next().filter(|c| !c.is_empty());
                Extracted { tools_called: true, calls, content: content.map(str::to_string) }
            }
            // Malformed markup is content, whole.
            None => Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) },
        }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        let (window, tail_len) = self.window(t.delta);
        let content = if ctx.structural_tag {
            match self.guided(&window, tail_len, t.delta) {
                Ok(content) => content,
                Err(early) => return early,
            }
        } else {
            self.started |= ids.delta.contains(&self.m.calls_start_id);
            if !self.started {
                return Some(Delta::content(t.delta));
            }
            let mut parts = t.delta.split(self.m.calls_start.as_str());
            let first = parts.next().unwrap_or("");
            match parts.last() {
                Some(last) => {
                    self.buffer.push_str(last);
                    (!first.is_empty()).then(|| first.to_string())
                }
                None => {
                    self.buffer.push_str(t.delta);
                    None
                }
            }
        };
        if self.closed_seen && !self.buffer.contains(&self.m.call_end) {
            self.buffer.push_str(&self.m.call_end);
            self.buffer.push_str(&self.m.calls_end);
        }
        let calls = self.drain(ctx);
        (content.is_some() || !calls.is_empty()).then(|| Delta { content, tool_calls: calls, ..Default::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: &str = ":opensource";

    fn setup(extra: serde_json::Value) -> (Arc<Markers>, ChatContext) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/models/hy_v4");
        let model = Model::load_dir(&dir).expect("the hy_v4 fixture");
        let markers = Arc::new(Markers::load(&model, S).expect("markers"));
        let tools = json!([{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"n": {"type": "int64"}, "s": {"type": "string"}}, "required": ["s"]
        }}}]);
        let mut req = json!({"tools": tools});
        if let (Some(r), Some(e)) = (req.as_object_mut(), extra.as_object()) {
            r.extend(e.clone());
        }
        (markers, ChatContext::from_request(req.as_object().expect("object"), &Default::default()))
    }

    fn call(name: &str, args: &[(&str, &str)]) -> String {
        let args: String = args
            .iter()
            .map(|(k, v)| format!("<arg_key{S}>{k}</arg_key{S}><arg_value{S}>{v}</arg_value{S}>"))
            .collect();
        format!("<tool_call{S}>{name}{args}</tool_call{S}>")
    }

    #[test]
    fn batch_is_strict_about_the_markup() {
        let (m, ctx) = setup(json!({}));
        let parser = Hy4Tools::new(m);
        let good = format!("hi<tool_calls{S}>{}</tool_calls{S}>", call("f", &[("n", "7"), ("s", "7")]));
        let got = parser.extract_tool_calls(&good, &ctx);
        assert!(got.tools_called);
        assert_eq!(got.calls[0].arguments, r#"{"n": 7, "s": "7"}"#);
        assert_eq!(got.content.as_deref(), Some("hi"));
        for bad in [
            format!("<tool_calls{S}>{}", call("f", &[])),
            format!("<tool_calls{S}>{}</tool_calls{S}>", call("", &[("s", "x")])),
            format!("<tool_calls{S}>{}</tool_calls{S}>", call("f", &[("s", "x"), ("n", "1")]).replace(&format!("</arg_value{S}><arg_key"), &format!("</arg_value{S}>junk<arg_key"))),
            format!("<tool_calls{S}><tool_call{S}>f</tool_calls{S}>"),
        ] {
            let got = parser.extract_tool_calls(&bad, &ctx);
            assert!(!got.tools_called, "{bad}");
            assert_eq!(got.content.as_deref(), Some(bad.as_str()));
        }
    }

    /// Stream `pieces` (the block opener as its own id when `ids`) and
    /// collect content and `(index, name, arguments)` per call.
    fn stream(pieces: &[&str], ctx: &ChatContext, m: Arc<Markers>) -> (String, Vec<(String, String)>) {
        let mut p = Hy4Tools::new(m.clone());
        let (mut content, mut calls) = (String::new(), Vec::<(String, String)>::new());
        for piece in pieces {
            let delta: Vec<i64> = if piece.contains(&m.calls_start) { vec![m.calls_start_id] } else { vec![1] };
            let ids = Ids { previous: &[], current: &delta, delta: &delta };
            let texts = Texts { previous: "", current: piece, delta: piece };
            let Some(d) = p.extract_tool_calls_streaming(&texts, &ids, ctx) else { continue };
            content.push_str(d.content.as_deref().unwrap_or(""));
            for tc in d.tool_calls {
                let f = tc.function.expect("a function");
                if let Some(name) = f.name {
                    calls.push((name, String::new()));
                }
                if let (Some(last), Some(args)) = (calls.last_mut(), f.arguments) {
                    last.1.push_str(&args);
                }
            }
        }
        (content, calls)
    }

    #[test]
    fn streams_drain_every_call_a_delta_completes() {
        let (m, ctx) = setup(json!({}));
        let two = format!("{}{}", call("f", &[("s", "a\"b")]), call("g", &[]));
        let opener = format!("ok<tool_calls{S}>");
        let end = format!("</tool_calls{S}>");
        let (content, calls) = stream(&[&opener, &two, &end], &ctx, m);
        assert_eq!(content, "ok");
        assert_eq!(calls, vec![("f".into(), r#"{"s": "a\"b"}"#.into()), ("g".into(), "{}".into())]);
    }

    #[test]
    fn string_values_stream_as_they_grow() {
        let (m, ctx) = setup(json!({}));
        let opener = format!("<tool_calls{S}>");
        let name = format!("<tool_call{S}>f<arg_key{S}>");
        let head = format!("s</arg_key{S}><arg_value{S}>ab</arg_va");
        let rest = format!("lue{S}></tool_call{S}></tool_calls{S}>");
        let mut p = Hy4Tools::new(m.clone());
        let mut sent = Vec::new();
        for piece in [opener.as_str(), name.as_str(), head.as_str(), rest.as_str()] {
            let delta = [if piece == opener { m.calls_start_id } else { 1 }];
            let ids = Ids { previous: &[], current: &delta, delta: &delta };
            let texts = Texts { previous: "", current: piece, delta: piece };
            let d = p.extract_tool_calls_streaming(&texts, &ids, &ctx);
            sent.push(d.and_then(|d| d.tool_calls.first().and_then(|t| t.function.clone())).and_then(|f| f.arguments));
        }
        // The name goes alone; the partial `</arg_va` is held back; the rest
        // closes the string.
        assert_eq!(sent, vec![None, None, Some(r#"{"s": "ab"#.to_string()), Some("\"}".to_string())]);
    }

    #[test]
    fn guided_streams_find_the_opener_in_the_text() {
        let (m, ctx) = setup(json!({"structured_outputs": {"structural_tag": "{}"}}));
        let opener = format!("hi<tool_calls{S}>");
        let (first, second) = opener.split_at(6);
        let body = format!("{}</tool_calls{S}>", call("f", &[("s", "x")]));
        let (content, calls) = stream(&[first, second, &body], &ctx, m);
        // `<tool` was held back while it could start the opener.
        assert_eq!(content, "hi");
        assert_eq!(calls, vec![("f".into(), r#"{"s": "x"}"#.into())]);
    }

    #[test]
    fn the_tag_is_built_for_forced_calls_only() {
        let (m, _) = setup(json!({}));
        let params = json!({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["b", "z"]});
        let tools = [TagTool { name: "f", parameters: Some(&params), strict: false }];
        assert_eq!(m.tag(&tools, Choice::Auto), None);
        let tag = m.tag(&tools, Choice::Forced).expect("a tag");
        let call = &tag["elements"][1]["tags"][0];
        assert_eq!(call["begin"], format!("<tool_call{S}>f"));
        let keys: Vec<&Value> = call["content"]["elements"].as_array().expect("elements").iter().collect();
        assert_eq!(keys[0]["elements"][1]["value"], "b");
        assert_eq!(keys[1]["elements"][1]["value"], "z");
        assert_eq!(keys[2]["type"], "star");
        assert_eq!(keys[2]["content"]["type"], "or");
        assert_eq!(tag["elements"][1]["stop_after_first"], true);
    }
}
