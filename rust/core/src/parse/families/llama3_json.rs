//! `llama3_json` / `llama4_json`: Llama 3.x JSON tool calls,
//! `{"name": …, "parameters": …}` (or `"arguments"`), several joined by
//! `"; "`, optionally after `<|python_tag|>` (vLLM's `Llama3JsonToolParser`).
//!
//! Batch reads every top-level JSON object in the text; streaming re-reads
//! the whole text with `partial_json_parser` at every chunk and sends what
//! changed, exactly as vLLM does, so the chunks match its own.

use serde_json::Value;

use std::sync::Arc;

use crate::model::Model;
use crate::parse::family::{Family, ToolFamily, ToolParserFactory};
use crate::structured::tool_tags::StrictLevel;
use crate::structured::format::{content, tag, triggered, Choice, TagModel, TagTool, THINK};
use crate::parse::Registry;
use crate::pycompat::truthy;
use crate::parse::partial_json::{partial_loads, raw_decode, Allow};
use crate::pycompat::json::dumps;
use crate::parse::call_stream::{common_prefix, skip_chars, CallStream};
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::wire::response::Delta;

const BOT: &str = "<|python_tag|>";

#[derive(Default)]
pub struct Llama3JsonParser {
    /// vLLM's bookkeeping; `prev` holds each call as last parsed.
    calls: CallStream,
    /// The text so far, for completing the answer at the finish.
    text: String,
}

impl Llama3JsonParser {
    pub fn new() -> Self {
        Self::default()
    }
}

/// `obj.get(key)` on a parsed call; `Err` where Python would raise (the
/// value is not a dict).
fn get<'a>(obj: &'a Value, key: &str) -> Result<Option<&'a Value>, ()> {
    obj.as_object().map(|o| o.get(key)).ok_or(())
}


/// Every JSON value in `text` from `start`, joined by two characters
/// (`"; "`), each with whether its own text is complete JSON. `None` when
/// one cannot be read yet, or is not something a call can be read from.
fn parse_calls(text: &[char], start: usize, allow: Allow) -> Option<(Vec<Value>, Vec<bool>)> {
    let (mut calls, mut complete) = (Vec::new(), Vec::new());
    let mut at = start;
    while at < text.len() {
        let rest = &text[at..];
        let (mut obj, end) = partial_loads(rest, allow)?;
        complete.push(crate::parse::partial_json::loads(&rest[..end]).is_ok());
        at += end + 2;
        // `"parameters" in obj`, then `obj["arguments"] = obj["parameters"]`.
        match &mut obj {
            Value::Object(o) => {
                if let Some(p) = o.get("parameters").cloned() {
                    if o.contains_key("arguments") {
                        return None;
                    }
                    o.insert("arguments".into(), p);
                }
            }
            Value::String(s) if s.contains("parameters") => return None,
            Value::Array(a) if a.iter().any(|x| x.as_str() == Some("parameters")) => return None,
            Value::String(_) | Value::Array(_) => {}
            _ => return None,
        }
        calls.push(obj);
    }
    Some((calls, complete))
}

/// Batch: every top-level JSON object in the text is a call; any brace that
/// is not one (or lacks `name` / `arguments`) makes the whole text content.
fn batch(text: &str) -> Extracted {
    let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
    if !(text.contains(BOT) || text.contains('{')) {
        return not_called();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut calls = Vec::new();
    let mut end: Option<usize> = None;
    for start in (0..chars.len()).filter(|&i| chars[i] == '{') {
        // Braces inside an object already read are part of it.
        if end.is_some_and(|e| start <= e) {
            continue;
        }
        let Some((obj, n)) = raw_decode(&chars[start..]) else { return not_called() };
        end = Some(start + n);
        let Some(name) = obj.get("name") else { return not_called() };
        let Some(args) = obj.get("arguments").or_else(|| obj.get("parameters")) else { return not_called() };
        // `name` must be a string for the pydantic `FunctionCall`.
        let Some(name) = name.as_str() else { return not_called() };
        calls.push(FunctionCall { id: None, name: name.to_string(), arguments: dumps(args) });
    }
    if calls.is_empty() {
        return not_called();
    }
    Extracted { tools_called: true, calls, content: None }
}

impl ToolParser for Llama3JsonParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    /// Llama has an xgrammar structural-tag model, so vLLM (with strict tool
    /// calling, its default) treats required/named choices like "auto".
    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        batch(text)
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        self.text.clear();
        self.text.push_str(t.current);
        if !starts_calls(t.current) {
            return Some(Delta::content(t.delta));
        }
        // A name is only sent whole: strings may be partial once it is out.
        let allow = if self.calls.name_sent { Allow::ALL } else { Allow::NO_STRINGS };
        let text: Vec<char> = t.current.chars().collect();
        let start = if t.current.starts_with(BOT) { BOT.chars().count() } else { 0 };
        let (calls, complete) = parse_calls(&text, start, allow)?;
        if calls.is_empty() {
            return None;
        }
        // `tool_call_arr[self.current_tool_id]`, Python indexing.
        let current = self.calls.current;
        let index = if current < 0 { calls.len() as i64 + current } else { current };
        let call = calls.get(usize::try_from(index).ok()?)?;

        if calls.len() as i64 > current + 1 {
            // A new call begins: first flush what the completed JSON of the
            // previous one added but was not streamed.
            let mut delta = None;
            if let Ok(slot) = usize::try_from(current) {
                let args = get(call, "arguments").ok()?;
                if let Some(args) = args.filter(|a| truthy(a)) {
                    let sent = self.calls.streamed.get(slot)?.chars().count();
                    delta = self.calls.send_args(slot, skip_chars(&dumps(args), sent).to_string()).map(Delta::from);
                }
            }
            self.calls.begin(calls.len() as i64 - 1);
            return delta;
        }

        // The current call is one of those parsed here.
        let slot = usize::try_from(current).ok()?;
        let mut delta = None;
        if !self.calls.name_sent {
            if let Some(name) = get(call, "name").ok()?.filter(|n| truthy(n)) {
                let name = name.as_str()?.to_string();
                delta = Some(Delta::from(self.calls.open(name)));
                self.calls.mark_named(slot);
            }
        } else if let Some(args) = get(call, "arguments").ok()?.filter(|a| truthy(a)) {
            // vLLM's jump past skipped calls leaves no slot here (IndexError).
            let sent = self.calls.streamed.get(slot)?.chars().count();
            let now = dumps(args);
            let before = get(self.calls.prev.get(slot)?, "arguments").ok()?.filter(|a| truthy(a));
            let diff = if complete[slot] {
                Some(skip_chars(&now, sent).to_string())
            } else {
                before.map(dumps).filter(|b| *b != now).map(|b| skip_chars(common_prefix(&b, &now), sent).to_string())
            };
            if let Some(diff) = diff {
                delta = self.calls.send_args(slot, diff).map(Delta::from);
            }
        }
        self.calls.prev = calls;
        delta
    }

    /// Counted as sent, so the finish does not send it again.
    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.take_remaining()
    }

    /// Sends what vLLM's chunking kept from the batch answer; nothing when
    /// its stream already adds up to it.
    fn finish_streaming(&mut self) -> Option<Delta> {
        if !starts_calls(&self.text) {
            return None;
        }
        self.calls.finish_with(batch(&self.text))
    }

    /// Text that does not open with a call streams as content, as in vLLM's
    /// stream, where batch reads calls anywhere (`"Sure! {\"name\": …}"`).
    fn left_batch(&self) -> bool {
        !starts_calls(&self.text) && batch(&self.text).tools_called
    }
}

/// The stream reads calls only from text that opens with one.
fn starts_calls(text: &str) -> bool {
    text.starts_with(BOT) || text.starts_with('{')
}

// Registration.

struct Llama3Json;

impl ToolParserFactory for Llama3Json {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Llama3JsonParser::new())
    }

    fn tag_model(&self) -> Option<&'static TagModel> {
        Some(&TAG)
    }
}

static TAG: TagModel = TagModel { name: "llama", build: tag_for, default_level: StrictLevel::Auto };

static TOOLS: ToolFamily =
    Family { names: &["llama3_json", "llama4_json"], needs: "", load: |_| Ok(Arc::new(Llama3Json)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}

/// Llama 3 JSON (`{"name": "NAME", "parameters": {...}}`).
fn tag_for(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = tools
        .iter()
        .map(|t| tag(&format!("{{\"name\": \"{}\", \"parameters\": ", t.name), content(t.schema(), "json"), "}"));
    match choice {
        Choice::Forced => tags.next().unwrap_or(Value::Null),
        _ => triggered(&["{\"name\": "], tags.collect(), choice == Choice::Required, &THINK),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(text: &str) -> Extracted {
        Llama3JsonParser::new()
            .extract_tool_calls(text, &ChatContext::from_request(&Default::default(), &Default::default()))
    }

    /// Feed `text` in the given pieces; the assembled (name, arguments) per call.
    fn stream(pieces: &[&str]) -> Vec<(String, String)> {
        let mut p = Llama3JsonParser::new();
        let ctx = ChatContext::from_request(&Default::default(), &Default::default());
        let mut calls: Vec<(String, String)> = Vec::new();
        let mut previous = String::new();
        let mut last_had_calls = false;
        for piece in pieces {
            let current = format!("{previous}{piece}");
            let texts = Texts { previous: &previous, current: &current, delta: piece };
            let ids = Ids { previous: &[], current: &[], delta: &[] };
            if let Some(d) = p.extract_tool_calls_streaming(&texts, &ids, &ctx) {
                last_had_calls = !d.tool_calls.is_empty();
                for tc in d.tool_calls {
                    let i = tc.index as usize;
                    if calls.len() <= i {
                        calls.resize(i + 1, (String::new(), String::new()));
                    }
                    let f = tc.function.expect("function");
                    calls[i].0 += f.name.as_deref().unwrap_or("");
                    calls[i].1 += f.arguments.as_deref().unwrap_or("");
                }
            }
            previous = current;
        }
        if last_had_calls {
            if let Some(last) = calls.last_mut() {
                last.1 += &p.remaining_unstreamed_args();
            }
        }
        for tc in p.finish_streaming().map(|d| d.tool_calls).unwrap_or_default() {
            let i = tc.index as usize;
            if calls.len() <= i {
                calls.resize(i + 1, (String::new(), String::new()));
            }
            let f = tc.function.expect("function");
            calls[i].0 += f.name.as_deref().unwrap_or("");
            calls[i].1 += f.arguments.as_deref().unwrap_or("");
        }
        calls
    }

    const ONE: &str = r#"{"name": "get_weather", "parameters": {"city": "Paris", "days": [1, 2]}}"#;
    const TWO: &str = r#"{"name": "a", "arguments": {"x": "é \"q\""}}; {"name": "b", "parameters": {"y": 2.50}}"#;

    #[test]
    fn batch_reads_each_object_and_falls_back_whole() {
        let e = batch(&format!("{BOT}{TWO}"));
        assert!(e.tools_called && e.content.is_none());
        let got: Vec<_> = e.calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(got, [("a", r#"{"x": "é \"q\""}"#), ("b", r#"{"y": 2.5}"#)]);
        // A missing key, or any brace that is not JSON, returns the text.
        for text in [r#"{"name": "a"}"#, r#"{"arguments": {}}"#, "use {braces} here", "plain"] {
            let e = batch(text);
            assert!(!e.tools_called && e.content.as_deref() == Some(text), "{text}");
        }
        // Text around a call is dropped.
        let e = batch(&format!("Sure: {ONE} done"));
        assert!(e.tools_called && e.content.is_none());
    }

    #[test]
    fn streaming_is_chunking_invariant() {
        for text in [ONE.to_string(), TWO.to_string(), format!("{BOT}{ONE}")] {
            let whole = batch(&text);
            let want: Vec<(String, String)> =
                whole.calls.iter().map(|c| (c.name.clone(), c.arguments.clone())).collect();
            let chars: Vec<String> = text.chars().map(String::from).collect();
            let one_by_one: Vec<&str> = chars.iter().map(String::as_str).collect();
            assert_eq!(stream(&one_by_one), want, "char by char: {text}");
            let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
            for cut in cuts {
                let (a, b) = text.split_at(cut);
                assert_eq!(stream(&[a, b]), want, "split at {cut}: {text}");
            }
        }
    }

    #[test]
    fn an_empty_object_call_gets_no_arguments_at_the_finish() {
        // vLLM streams nothing for `"parameters": {}` between two calls; the
        // finish must not add a `{}` delta that its chunks do not have.
        let text = r#"{"name": "a", "parameters": {"q": "1"}}; {"name": "b", "parameters": {}}; {"name": "c", "parameters": {"q": "2"}}"#;
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let one_by_one: Vec<&str> = chars.iter().map(String::as_str).collect();
        let got = stream(&one_by_one);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(got[1].1, "");
        assert_eq!((got[0].1.as_str(), got[2].1.as_str()), (r#"{"q": "1"}"#, r#"{"q": "2"}"#));
    }

    #[test]
    fn text_first_streams_as_content() {
        let mut p = Llama3JsonParser::new();
        let texts = Texts { previous: "", current: "Hi {", delta: "Hi {" };
        let ids = Ids { previous: &[], current: &[], delta: &[] };
        let d = p
            .extract_tool_calls_streaming(
                &texts,
                &ids,
                &ChatContext::from_request(&Default::default(), &Default::default()),
            )
            .expect("delta");
        assert_eq!(d.content.as_deref(), Some("Hi {"));
    }
}

crate::impl_snapshot!(Llama3JsonParser { text } nested { calls });
