//! Step3's tool calls (`step3`, vLLM's `Step3ToolParser`): a block between
//! `<｜tool_calls_begin｜>` and `<｜tool_calls_end｜>` of calls
//! `<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
//! <steptml:parameter name="K">V</steptml:parameter>...</steptml:invoke>
//! <｜tool_call_end｜>`, values cast by the tool's schema.
//!
//! Streams follow vLLM's cursor machine exactly: one step per delta (the
//! rest of a delta waits for the next one), the name as soon as the invoke
//! tag is complete, the arguments whole at the call's end. Text after a
//! start-marker prefix that is not a marker goes out as content at once.

use std::sync::Arc;

use serde_json::Value;

use crate::model::Model;
use crate::parse::family::{KeepSpecial, ToolParserFactory};
use crate::parse::partial_json::py_isspace;
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Texts, ToolParser};
use crate::pycompat::json::dumps_str;
use crate::pycompat::num::{float_json, py_float, py_int};
use crate::wire::response::{Delta, DeltaToolCall};

const CALLS_BEGIN: &str = "<｜tool_calls_begin｜>";
const CALLS_END: &str = "<｜tool_calls_end｜>";
const CALL_BEGIN: &str = "<｜tool_call_begin｜>";
const CALL_END: &str = "<｜tool_call_end｜>";
const SEP: &str = "<｜tool_sep｜>";

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// `<OPEN"NAME">` at `at` (`NAME` is `[^"]+`): the name and the index after.
fn quoted_tag<'a>(text: &'a str, at: usize, open: &str) -> Option<(&'a str, usize)> {
    let rest = text[at..].strip_prefix(open)?;
    let name_len = rest.find('"')?;
    let after = rest[name_len..].strip_prefix("\">")?;
    (name_len > 0).then(|| (&rest[..name_len], text.len() - after.len()))
}

/// `_parse_steptml_invoke`: the first complete invoke tag's name, and every
/// `<steptml:parameter name="K">V</steptml:parameter>` anywhere (values
/// stripped; a repeated key keeps its first place and its last value).
fn parse_invoke(text: &str) -> Option<(String, Vec<(String, String)>)> {
    const INVOKE: &str = "<steptml:invoke name=\"";
    const PARAM: &str = "<steptml:parameter name=\"";
    const PARAM_END: &str = "</steptml:parameter>";
    let name = text.match_indices(INVOKE).find_map(|(at, _)| quoted_tag(text, at, INVOKE))?.0;
    let mut params: Vec<(String, String)> = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(PARAM) {
        let at = from + found;
        let matched = quoted_tag(text, at, PARAM)
            .and_then(|(key, start)| text[start..].find(PARAM_END).map(|len| (key, start, start + len)));
        let Some((key, start, end)) = matched else {
            from = at + PARAM.len();
            continue;
        };
        let value = py_strip(&text[start..end]).to_string();
        match params.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => params.push((key.to_string(), value)),
        }
        from = end + PARAM_END.len();
    }
    Some((name.to_string(), params))
}

/// One argument after `_cast_arguments`, as `json.dumps` prints it.
fn cast(value: &str, kind: Option<&str>) -> String {
    let text = match kind {
        Some("integer") => py_int(value),
        Some("number") => py_float(value).map(float_json),
        Some("boolean") => match value.to_lowercase().as_str() {
            b @ ("true" | "false") => Some(b.to_string()),
            _ => None,
        },
        Some("null") if value.to_lowercase() == "null" => Some("null".to_string()),
        _ => None,
    };
    text.unwrap_or_else(|| dumps_str(value))
}

/// The call's arguments as JSON, cast by the schema of the request's tool
/// of that name (strings where there is none).
fn arguments(name: &str, params: &[(String, String)], ctx: &ChatContext) -> String {
    let properties = ctx.tool_parameters(name).and_then(|p| p.get("properties"));
    let kind = |key: &str| properties.and_then(|p| p.get(key)).and_then(|p| p.get("type")).and_then(Value::as_str);
    let items: Vec<String> =
        params.iter().map(|(k, v)| format!("{}: {}", dumps_str(k), cast(v, kind(k)))).collect();
    format!("{{{}}}", items.join(", "))
}

#[derive(Default)]
struct Step3ToolParser {
    /// `current_text[position:]`.
    unprocessed: String,
    block_started: bool,
    block_finished: bool,
    /// `current_tool_id`.
    current: Option<usize>,
    name_sent: bool,
    /// `prev_tool_call_arr`: whether each call finished.
    finished: Vec<bool>,
}

crate::impl_snapshot!(Step3ToolParser { unprocessed, block_started, block_finished, current, name_sent, finished });

impl Step3ToolParser {
    fn consume(&mut self, n: usize) {
        self.unprocessed.drain(..n);
    }

    fn content(&mut self, n: usize) -> Option<Delta> {
        let content: String = self.unprocessed.drain(..n).collect();
        Some(Delta { content: Some(content), ..Default::default() })
    }

    /// One run of vLLM's `while True` loop over the unprocessed text.
    fn step(&mut self, ctx: &ChatContext) -> Option<Delta> {
        loop {
            if self.unprocessed.is_empty() {
                return None;
            }
            if self.block_finished {
                return self.content(self.unprocessed.len());
            }
            if !self.block_started {
                if self.unprocessed.starts_with(CALLS_BEGIN) {
                    self.consume(CALLS_BEGIN.len());
                    self.block_started = true;
                    continue;
                }
                return match self.unprocessed.find(CALLS_BEGIN) {
                    None if CALLS_BEGIN.starts_with(py_strip(&self.unprocessed)) => None,
                    None => self.content(self.unprocessed.len()),
                    Some(at) => self.content(at),
                };
            }
            let lead = self.unprocessed.len() - self.unprocessed.trim_start_matches(py_isspace).len();
            self.consume(lead);
            if self.unprocessed.starts_with(CALLS_END) {
                self.consume(CALLS_END.len());
                self.block_finished = true;
                self.current = None;
                continue;
            }
            let open = self.current.map(|i| !self.finished[i]);
            if open != Some(true) {
                if self.unprocessed.starts_with(CALL_BEGIN) {
                    self.consume(CALL_BEGIN.len());
                    let next = self.current.map_or(0, |i| i + 1);
                    self.current = Some(next);
                    self.name_sent = false;
                    self.finished.resize(self.finished.len().max(next + 1), false);
                    self.finished[next] = false;
                    continue;
                }
                // A call-begin prefix waits; anything else is stuck for good.
                return None;
            }
            return self.call_step(ctx);
        }
    }

    /// Inside a call: its name once the invoke tag is complete, its
    /// arguments at its end marker.
    fn call_step(&mut self, ctx: &ChatContext) -> Option<Delta> {
        let index = self.current?;
        let end = self.unprocessed.find(CALL_END);
        let body = &self.unprocessed[..end.unwrap_or(self.unprocessed.len())];
        if end.is_none() && CALL_END.starts_with(body) {
            return None;
        }
        let (name, params) = parse_invoke(body)?;
        let call = |c: DeltaToolCall| Some(Delta { tool_calls: vec![c], ..Default::default() });
        if !self.name_sent {
            self.name_sent = true;
            return call(DeltaToolCall::opening(index as i64, random_tool_call_id(), name, None));
        }
        let end = end?;
        self.consume(end + CALL_END.len());
        self.finished[index] = true;
        if params.is_empty() {
            return None;
        }
        call(DeltaToolCall::arguments(index as i64, arguments(&name, &params, ctx)))
    }
}

impl ToolParser for Step3ToolParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some((pre, rest)) = text.split_once(CALLS_BEGIN) else { return not_called() };
        let Some((block, post)) = rest.split_once(CALLS_END) else { return not_called() };
        let content = py_strip(&format!("{pre}{post}")).to_string();
        let calls: Vec<FunctionCall> = block
            .split(CALL_BEGIN)
            .filter_map(|part| {
                let (call, _) = part.split_once(CALL_END)?;
                let (kind, invoke) = call.split_once(SEP)?;
                if py_strip(kind) != "function" {
                    return None;
                }
                let (name, params) = parse_invoke(invoke)?;
                let arguments = arguments(&name, &params, ctx);
                Some(FunctionCall { id: None, name, arguments })
            })
            .collect();
        if calls.is_empty() {
            return not_called();
        }
        Extracted { tools_called: true, calls, content: (!content.is_empty()).then_some(content) }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, ctx: &ChatContext) -> Option<Delta> {
        self.unprocessed.push_str(t.delta);
        self.step(ctx)
    }

    /// vLLM's calls carry `parameters`, never `arguments`, and nothing is
    /// counted as streamed: the base method owes `{}` once a call began.
    fn remaining_unstreamed_args(&mut self) -> String {
        if self.finished.is_empty() {
            String::new()
        } else {
            "{}".to_string()
        }
    }

    fn remaining_args_index(&self) -> Option<i64> {
        (self.finished.len() as i64).checked_sub(1)
    }

    fn reads_history(&self) -> bool {
        false
    }
}

pub(super) struct Step3Tools;

impl ToolParserFactory for Step3Tools {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Step3ToolParser::default())
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map};

    use super::*;

    fn ctx() -> ChatContext {
        let tools = json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
            "properties": {"n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"}}}}}]);
        let req: Map<String, Value> = json!({"tools": tools}).as_object().cloned().unwrap_or_default();
        ChatContext::from_request(&req, &Default::default())
    }

    fn call(name: &str, params: &str) -> String {
        format!("{CALL_BEGIN}function{SEP}<steptml:invoke name=\"{name}\">{params}</steptml:invoke>{CALL_END}")
    }

    const P: &str = "<steptml:parameter name=\"n\"> 1_0 </steptml:parameter>\
        <steptml:parameter name=\"x\">2</steptml:parameter><steptml:parameter name=\"b\">True</steptml:parameter>\
        <steptml:parameter name=\"s\">\n hi \n</steptml:parameter>";

    #[test]
    fn batch_casts_by_the_schema_and_strips_the_content() {
        let text = format!("Sure. {CALLS_BEGIN}{}{}{CALLS_END} ", call("f", P), call("g", P));
        let got = Step3ToolParser::default().extract_tool_calls(&text, &ctx());
        assert_eq!(got.content.as_deref(), Some("Sure."));
        let args: Vec<&str> = got.calls.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(args, [r#"{"n": 10, "x": 2.0, "b": true, "s": "hi"}"#, r#"{"n": "1_0", "x": "2", "b": "True", "s": "hi"}"#]);
        let open = format!("a{CALLS_BEGIN}{}", call("f", P));
        assert!(!Step3ToolParser::default().extract_tool_calls(&open, &ctx()).tools_called);
    }

    #[test]
    fn python_numbers() {
        assert_eq!(cast("nan", Some("number")), "NaN");
        assert_eq!(cast(" -007 ", Some("integer")), "-7");
    }

    /// Stream `chunks`: per chunk, the content and the tool-call deltas.
    type Sent = (i64, Option<String>, Option<String>);

    fn stream(chunks: &[&str]) -> (Vec<Option<String>>, Vec<Sent>, String) {
        let ctx = ctx();
        let mut parser = Step3ToolParser::default();
        let (mut content, mut calls) = (Vec::new(), Vec::new());
        for chunk in chunks {
            let texts = Texts { previous: "", current: "", delta: chunk };
            let d = parser.extract_tool_calls_streaming(&texts, &Ids { previous: &[], current: &[], delta: &[] }, &ctx);
            content.push(d.as_ref().and_then(|d| d.content.clone()));
            for c in d.map(|d| d.tool_calls).unwrap_or_default() {
                let (name, args) = c.function.map(|f| (f.name, f.arguments)).unwrap_or_default();
                calls.push((c.index, name, args));
            }
        }
        (content, calls, parser.remaining_unstreamed_args())
    }

    #[test]
    fn streams_one_step_per_delta() {
        let body = call("f", "<steptml:parameter name=\"n\">3</steptml:parameter>");
        let (content, calls, rest) = stream(&["Hi ", CALLS_BEGIN, &body, "", CALLS_END, " bye"]);
        // The name went out with the body; its arguments waited for the
        // next (empty) delta.
        assert_eq!(content, [Some("Hi ".into()), None, None, None, None, Some(" bye".into())]);
        assert_eq!(calls, [(0, Some("f".into()), None), (0, None, Some(r#"{"n": 3}"#.into()))]);
        assert_eq!(rest, "{}");
        // All in one delta: only the text before the block.
        let (content, calls, _) = stream(&[&format!("Hi {CALLS_BEGIN}{body}{CALLS_END}")]);
        assert_eq!((content, calls.len()), (vec![Some("Hi ".into())], 0));
    }
}
