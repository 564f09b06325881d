//! IBM Granite 4 (`granite4`, vLLM's `Granite4ToolParser`): JSON calls
//! between `<tool_call>` and `</tool_call>`, text around them is content.
//! Streams send each call whole once its end marker arrives, with vLLM's
//! cursor state machine reproduced as it is: after a call that opened and
//! closed in one step it still believes it is inside a call, so the text
//! before the next call's start marker is dropped; a call whose JSON is not
//! an object with `name` and `arguments` breaks the stream for good.

use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::family::{Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads, partial_tag_overlap};
use crate::wire::response::{Delta, DeltaFunctionCall, DeltaToolCall};

const START: &str = "<tool_call>";
const END: &str = "</tool_call>";

/// `dump_args`: strings and null as they are, anything else as JSON.
fn dump_args(args: &Value) -> Option<String> {
    match args {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(dumps(other)),
    }
}

/// A call's JSON as `(name, arguments)`; `Err(appended)` where Python
/// raises, with whether the call had reached `prev_tool_call_arr` (a dict).
fn parse_call(json: &Value, batch: bool) -> Result<(Option<String>, Option<String>), bool> {
    let obj = json.as_object().ok_or(false)?;
    let (Some(name), Some(args)) = (obj.get("name"), obj.get("arguments")) else { return Err(true) };
    let name = match name {
        Value::String(s) => Some(s.clone()),
        Value::Null if !batch => None,
        _ => return Err(true),
    };
    let arguments = dump_args(args);
    if batch && arguments.is_none() {
        return Err(true);
    }
    Ok((name, arguments))
}

#[derive(Default)]
struct Granite4Parser {
    look_ahead: String,
    in_tc: bool,
    /// `current_tool_id + 1`: calls sent.
    sent: usize,
    /// `prev_tool_call_arr` got ahead of the calls sent (a call failed after
    /// it was recorded): vLLM's consistency assert then fails on every
    /// later delta.
    broken: bool,
    /// The last call's arguments as recorded and as sent (`None`: null).
    last_args: Option<(Option<String>, String)>,
}

crate::impl_snapshot!(Granite4Parser { look_ahead, in_tc, sent, broken, last_args });

/// One `_tool_extraction_step`: `(done, content, call text)`.
fn step(p: &mut Granite4Parser, text: &str) -> (bool, String, String) {
    let start = text.find(START);
    let partial = partial_tag_overlap(text, START);
    let end = text.find(END).filter(|&e| e > 0);
    let Some(start) = start else {
        if partial > 0 {
            let cut = text.char_indices().rev().nth(partial - 1).map_or(0, |(i, _)| i);
            p.look_ahead = text[cut..].to_string();
            return (true, text[..cut].to_string(), String::new());
        }
        return (true, text.to_string(), String::new());
    };
    let start_end = start + START.len();
    let slice = |from: usize, to: usize| text.get(from..to.max(from)).unwrap_or("").to_string();
    if !p.in_tc {
        p.in_tc = true;
        let content = text[..start].to_string();
        return match end {
            Some(end) => {
                p.look_ahead = text[end + END.len()..].to_string();
                (false, content, slice(start_end, end))
            }
            None => {
                p.look_ahead = text[start..].to_string();
                (true, content, String::new())
            }
        };
    }
    // Inside a call: the end marker at position 0 counts here, too.
    match text.find(END) {
        None => {
            p.look_ahead = text.to_string();
            (true, String::new(), String::new())
        }
        Some(end) => {
            p.in_tc = false;
            p.look_ahead = text[end + END.len()..].to_string();
            (false, String::new(), slice(start_end, end))
        }
    }
}

impl Granite4Parser {
    /// `_collect_results` and the deltas: `None` where vLLM's `try` fails.
    fn deltas(&mut self, content: String, calls: Vec<String>) -> Option<Delta> {
        let parsed: Vec<Value> = calls.iter().map(|c| loads(c)).collect::<Option<_>>()?;
        let mut out = Vec::new();
        for json in &parsed {
            match parse_call(json, false) {
                Ok((name, arguments)) => {
                    let index = self.sent as i64;
                    self.sent += 1;
                    self.last_args = Some((arguments.clone(), arguments.clone().unwrap_or_default()));
                    let function = Some(DeltaFunctionCall { name, arguments });
                    out.push(DeltaToolCall { id: Some(random_tool_call_id()), kind: Some("function"), index, function });
                }
                Err(recorded) => {
                    self.broken |= recorded || !out.is_empty();
                    return None;
                }
            }
        }
        if self.broken {
            return None;
        }
        let content = (!content.is_empty()).then_some(content);
        (content.is_some() || !out.is_empty()).then(|| Delta { content, tool_calls: out, ..Default::default() })
    }
}

impl ToolParser for Granite4Parser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let (mut content, mut calls, mut in_tc, mut cut) = (String::new(), Vec::new(), false, 0);
        let mut rest = 0;
        loop {
            let next = [START, END].iter().filter_map(|m| text[rest..].find(m).map(|i| (rest + i, *m))).min();
            let Some((at, marker)) = next else { break };
            if marker == START {
                if in_tc {
                    return not_called();
                }
                content.push_str(&text[cut..at]);
                in_tc = true;
            } else {
                if !in_tc || at == cut {
                    return not_called();
                }
                let Some(json) = loads(&text[cut..at]) else { return not_called() };
                match parse_call(&json, true) {
                    Ok((Some(name), Some(arguments))) => calls.push(FunctionCall { id: None, name, arguments }),
                    _ => return not_called(),
                }
                in_tc = false;
            }
            cut = at + marker.len();
            rest = cut;
        }
        if in_tc {
            return not_called();
        }
        content.push_str(&text[cut..]);
        Extracted { tools_called: !calls.is_empty(), calls, content: (!content.is_empty()).then_some(content) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let (mut content, mut calls) = (String::new(), Vec::new());
        let mut delta = t.delta.to_string();
        loop {
            let text = std::mem::take(&mut self.look_ahead) + &delta;
            let (done, text_part, call) = step(self, &text);
            content.push_str(&text_part);
            if !call.is_empty() {
                calls.push(call);
            }
            delta.clear();
            if done {
                break;
            }
        }
        self.deltas(content, calls)
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        match &self.last_args {
            Some((expected, sent)) => {
                let expected = expected.clone().unwrap_or_else(|| "null".to_string());
                expected.strip_prefix(sent.as_str()).unwrap_or("").to_string()
            }
            None => String::new(),
        }
    }

    fn reads_history(&self) -> bool {
        false
    }
}

struct Granite4;

impl ToolParserFactory for Granite4 {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Granite4Parser::default())
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

static TOOLS: ToolFamily = Family { names: &["granite4"], needs: "", load: |_| Ok(Arc::new(Granite4)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    type Call = (Option<String>, Option<String>);

    /// Stream `chunks`: the content and `(name, arguments)` sent.
    fn stream(chunks: &[&str]) -> (String, Vec<Call>) {
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        let mut parser = Granite4Parser::default();
        let (mut content, mut calls) = (String::new(), Vec::new());
        for chunk in chunks {
            let texts = Texts { previous: "", current: "", delta: chunk };
            let ids = Ids { previous: &[], current: &[], delta: &[] };
            if let Some(d) = parser.extract_tool_calls_streaming(&texts, &ids, &ctx) {
                content += d.content.as_deref().unwrap_or("");
                calls.extend(d.tool_calls.into_iter().filter_map(|c| c.function).map(|f| (f.name, f.arguments)));
            }
        }
        (content, calls)
    }

    fn call(name: &str, args: &str) -> Call {
        (Some(name.into()), Some(args.into()))
    }

    const F: &str = r#"<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>"#;

    #[test]
    fn batch_keeps_the_text_around_calls_and_rejects_unbalanced_markers() {
        let ctx = ChatContext::from_request(&serde_json::Map::new(), &Default::default());
        let got = Granite4Parser::default().extract_tool_calls(&format!("a {F} b"), &ctx);
        assert!(got.tools_called);
        assert_eq!(got.content.as_deref(), Some("a  b"));
        assert_eq!((got.calls[0].name.as_str(), got.calls[0].arguments.as_str()), ("f", r#"{"a": 1}"#));
        for bad in [format!("{F}</tool_call>"), "<tool_call></tool_call>".into(), "<tool_call>{}".into()] {
            let got = Granite4Parser::default().extract_tool_calls(&bad, &ctx);
            assert!(!got.tools_called && got.content.as_deref() == Some(bad.as_str()), "{bad}");
        }
    }

    #[test]
    fn streams_send_whole_calls_and_hold_a_partial_start_marker() {
        assert_eq!(stream(&["a <tool", "_call>{\"name\": \"f\", \"argu", "ments\": {\"a\": 1}}</tool_call> b"]), (
            "a  b".into(),
            vec![call("f", r#"{"a": 1}"#)]
        ));
    }

    #[test]
    fn after_a_call_read_in_one_step_text_before_the_next_start_marker_is_lost() {
        // vLLM leaves `in_tc` set after a call that opened and closed in one
        // step, so the next chunk holding a start marker is read as inside a call.
        let next = r#" hi <tool_call>{"name": "g", "arguments": {}}</tool_call>"#;
        assert_eq!(stream(&[F, next]), (String::new(), vec![call("f", r#"{"a": 1}"#), call("g", "{}")]));
        assert_eq!(stream(&[&format!("{F}{next}")]).0, "");
        // Text in a chunk of its own goes out.
        let (start, rest) = next.split_at(4);
        assert_eq!(stream(&[F, start, rest]).0, " hi ");
    }

    #[test]
    fn a_call_that_is_not_an_object_with_name_and_arguments_ends_the_stream() {
        let (content, calls) = stream(&[r#"<tool_call>{"name": "f"}</tool_call>"#, " text", F]);
        assert_eq!((content.as_str(), calls.len()), ("", 0));
        // JSON that does not parse loses only its own chunk.
        assert_eq!(stream(&["<tool_call>{oops}</tool_call>", " text"]).0, " text");
    }
}
