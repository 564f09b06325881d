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
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::wire::response::{Delta, DeltaFunctionCall, DeltaToolCall};

const BOT: &str = "<|python_tag|>";

#[derive(Default)]
pub struct Llama3JsonParser {
    /// The calls as last parsed (`prev_tool_call_arr`).
    prev: Vec<Value>,
    /// The call being streamed (`current_tool_id`, -1 before the first).
    current: isize,
    name_sent: bool,
    streamed_args: Vec<String>,
    /// Per call: whether its name went out, and the text last parsed
    /// (for completing the answer at the finish).
    named: Vec<bool>,
    text: String,
}

impl Llama3JsonParser {
    pub fn new() -> Self {
        Llama3JsonParser { current: -1, ..Default::default() }
    }
}


/// `obj.get(key)` on a parsed call; `Err` where Python would raise (the
/// value is not a dict).
fn get<'a>(obj: &'a Value, key: &str) -> Result<Option<&'a Value>, ()> {
    obj.as_object().map(|o| o.get(key)).ok_or(())
}

fn args_delta(index: isize, arguments: String) -> Delta {
    Delta {
        tool_calls: vec![DeltaToolCall {
            id: None,
            kind: None,
            index: index as i64,
            function: Some(DeltaFunctionCall { name: None, arguments: Some(arguments) }),
        }],
        ..Default::default()
    }
}

/// The longest common prefix of two strings (`find_common_prefix`).
fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let end = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or_else(|| a.chars().zip(b.chars()).map(|(x, _)| x.len_utf8()).sum(), |((i, _), _)| i);
    &a[..end]
}

fn skip_chars(s: &str, n: usize) -> String {
    s.chars().skip(n).collect()
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
        if !(t.current.starts_with(BOT) || t.current.starts_with('{')) {
            return Some(Delta { content: Some(t.delta.to_string()), ..Default::default() });
        }
        // A name is only sent whole: strings may be partial once it is out.
        let allow = if self.name_sent { Allow::ALL } else { Allow::NO_STRINGS };
        let text: Vec<char> = t.current.chars().collect();
        let start = if t.current.starts_with(BOT) { BOT.chars().count() } else { 0 };
        let (calls, complete) = parse_calls(&text, start, allow)?;
        if calls.is_empty() {
            return None;
        }
        // `tool_call_arr[self.current_tool_id]`, Python indexing.
        let index = if self.current < 0 { calls.len() as isize + self.current } else { self.current };
        let call = calls.get(usize::try_from(index).ok()?)?;

        if calls.len() as isize > self.current + 1 {
            // A new call begins: first flush what the completed JSON of the
            // previous one added but was not streamed.
            let mut delta = None;
            if self.current >= 0 {
                let args = get(call, "arguments").ok()?;
                if let Some(args) = args.filter(|a| truthy(a)) {
                    let slot = self.current as usize;
                    let sent = self.streamed_args.get_mut(slot)?;
                    let diff = skip_chars(&dumps(args), sent.chars().count());
                    sent.push_str(&diff);
                    delta = Some(args_delta(self.current, diff));
                }
            }
            self.current = calls.len() as isize - 1;
            self.name_sent = false;
            self.streamed_args.push(String::new());
            return delta;
        }

        let slot = self.current as usize;
        let mut delta = None;
        if !self.name_sent {
            if let Some(name) = get(call, "name").ok()?.filter(|n| truthy(n)) {
                let name = name.as_str()?.to_string();
                delta = Some(Delta {
                    tool_calls: vec![DeltaToolCall {
                        id: Some(random_tool_call_id()),
                        kind: Some("function"),
                        index: self.current as i64,
                        function: Some(DeltaFunctionCall { name: Some(name), arguments: None }),
                    }],
                    ..Default::default()
                });
                self.name_sent = true;
                if self.named.len() <= slot {
                    self.named.resize(slot + 1, false);
                }
                self.named[slot] = true;
            }
        } else if let Some(args) = get(call, "arguments").ok()?.filter(|a| truthy(a)) {
            // vLLM's jump past skipped calls leaves no slot here (IndexError).
            let sent = self.streamed_args.get(slot)?.chars().count();
            let now = dumps(args);
            let before = get(self.prev.get(slot)?, "arguments").ok()?.filter(|a| truthy(a));
            let diff = if complete[slot] {
                Some(skip_chars(&now, sent))
            } else {
                before.map(dumps).filter(|b| *b != now).map(|b| skip_chars(common_prefix(&b, &now), sent))
            };
            if let Some(diff) = diff {
                self.streamed_args[slot].push_str(&diff);
                delta = Some(args_delta(self.current, diff));
            }
        }
        self.prev = calls;
        delta
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        let Some(last) = self.prev.last() else { return String::new() };
        let expected = match last.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => dumps(v),
            None => "{}".to_string(),
        };
        let index = self.prev.len() - 1;
        let actual = self.streamed_args.get(index).map_or("", String::as_str);
        let rest = expected.strip_prefix(actual).unwrap_or("").to_string();
        // It is streamed now: record it, so the finish sees it as sent.
        if self.streamed_args.len() <= index {
            self.streamed_args.resize(index + 1, String::new());
        }
        self.streamed_args[index].push_str(&rest);
        rest
    }

    /// Sends what vLLM's chunking kept from the batch answer; nothing when
    /// its stream already adds up to it.
    fn finish_streaming(&mut self) -> Option<Delta> {
        let text = std::mem::take(&mut self.text);
        if !(text.starts_with(BOT) || text.starts_with('{')) {
            return None;
        }
        let target = batch(&text);
        if !target.tools_called {
            // Held as a call that never came: it is content, as in batch,
            // unless part of a call already went out.
            let silent = !self.named.contains(&true) && self.streamed_args.iter().all(String::is_empty);
            return silent.then(|| Delta { content: target.content, ..Default::default() });
        }
        let mut out = Vec::new();
        for (i, call) in target.calls.into_iter().enumerate() {
            let named = self.named.get(i).copied().unwrap_or(false);
            let sent = self.streamed_args.get(i).map_or("", String::as_str);
            // What went out differs from the answer: it cannot be taken back.
            let Some(rest) = call.arguments.strip_prefix(sent).map(str::to_string) else { continue };
            // An empty argument stream reads as `{}`: vLLM's stream sends
            // none for an empty object, and its batch answer agrees with that.
            let reads_as_empty = sent.is_empty() && call.arguments == "{}";
            if named && (rest.is_empty() || reads_as_empty) {
                continue;
            }
            out.push(DeltaToolCall {
                id: (!named).then(random_tool_call_id),
                kind: (!named).then_some("function"),
                index: i as i64,
                function: Some(DeltaFunctionCall {
                    name: (!named).then(|| call.name.clone()),
                    arguments: (!rest.is_empty()).then_some(rest),
                }),
            });
            if self.named.len() <= i {
                self.named.resize(i + 1, false);
            }
            if self.streamed_args.len() <= i {
                self.streamed_args.resize(i + 1, String::new());
            }
            self.named[i] = true;
            self.streamed_args[i] = call.arguments;
        }
        (!out.is_empty()).then(|| Delta { tool_calls: out, ..Default::default() })
    }
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

crate::impl_snapshot!(Llama3JsonParser { prev, current, name_sent, streamed_args, named, text }
    check |p| crate::parse::snapshot::check_index(p.current, "current"));
