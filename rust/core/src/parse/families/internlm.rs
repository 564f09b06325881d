//! InternLM2 / 2.5 (`internlm`, vLLM's `Internlm2ToolParser`): one call,
//! `<|action_start|><|plugin|>{"name": ..., "parameters": {...}}<|action_end|>`,
//! text before it is content. Streams re-read the call with
//! `partial_json_parser` at every chunk, as vLLM does. Where vLLM's batch
//! parser raises (a second marker, JSON that does not parse, a call without
//! a name), the request gets a 400 naming the Python error, as vLLM's
//! `ValueError`s do; vLLM answers the `KeyError` / `TypeError` cases with a
//! 500 (docs/divergences.md).

use std::sync::Arc;

use serde_json::Value;

use crate::error::ApiError;
use crate::model::Model;
use crate::parse::call_stream::{common_prefix, skip_chars, CallStream};
use crate::parse::family::{Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::{loads as strict_loads, partial_loads, Allow};
use crate::parse::plugin::FailureSlot;
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::pycompat::json::{dumps, loads, loads_error};
use crate::pycompat::truthy;
use crate::wire::response::{Delta, DeltaToolCall};

const ACTION: &str = "<|action_start|>";
const MARK: &str = "<|action_start|><|plugin|>";
const END: &str = "<|action_end|>";

#[derive(Default)]
struct InternlmParser {
    /// `position`: chars of the text so far already handled as content.
    position: usize,
    calls: CallStream,
    failure: FailureSlot,
}

crate::impl_snapshot!(InternlmParser { position } nested { calls });

/// `get_arguments`: `parameters`, else `arguments`, else none.
fn arguments(obj: &serde_json::Map<String, Value>) -> Option<&Value> {
    obj.get("parameters").or_else(|| obj.get("arguments"))
}


impl InternlmParser {
    /// The `try` block of vLLM's streaming method; `None` where it returns
    /// nothing (or raises).
    fn step(&mut self, action: &str, delta_text: &str) -> Option<Delta> {
        let allow = if self.calls.name_sent { Allow::ALL } else { Allow::NO_STRINGS };
        let chars: Vec<char> = action.chars().collect();
        let (mut call, end) = partial_loads(&chars, allow)?;
        if end != chars.len() {
            return None; // `json.loads` of the completed text: extra data.
        }
        let obj = call.as_object_mut()?;
        let complete = strict_loads(&chars).is_ok();
        let mut delta = None;
        if !self.calls.name_sent {
            if let Some(name) = obj.get("name").filter(|n| truthy(n)) {
                self.calls.current += 1;
                let name = name.as_str()?.to_string(); // pydantic refuses another type
                let index = self.calls.current;
                self.calls.name_sent = true;
                self.calls.streamed.push(String::new());
                delta = Some(Delta::tool_calls(vec![DeltaToolCall::opening(
                    index,
                    crate::parse::random_tool_call_id(),
                    name,
                    None,
                )]));
            }
        } else {
            let slot = usize::try_from(self.calls.current).ok()?;
            let prev = self.calls.prev.first()?.as_object().and_then(arguments).filter(|a| truthy(a)).cloned();
            let cur = arguments(obj).filter(|a| truthy(a)).cloned();
            match (cur, prev) {
                (None, _) => {}
                (Some(cur), None) => {
                    let cur_json = dumps(&cur);
                    let diff = match cur_json.find(delta_text) {
                        Some(at) => cur_json[..at + delta_text.len()].to_string(),
                        None if complete => cur_json,
                        None => return None,
                    };
                    self.calls.streamed.get_mut(slot)?.push_str(&diff);
                    delta = Some(Delta::tool_calls(vec![DeltaToolCall::arguments(slot as i64, diff)]));
                }
                (Some(cur), Some(prev)) => {
                    let (cur_json, prev_json) = (dumps(&cur), dumps(&prev));
                    let sent = self.calls.streamed.get(slot)?.chars().count();
                    let diff = if complete {
                        skip_chars(&cur_json, sent).to_string()
                    } else if cur_json != prev_json {
                        skip_chars(common_prefix(&prev_json, &cur_json), sent).to_string()
                    } else {
                        String::new()
                    };
                    self.calls.streamed.get_mut(slot)?.push_str(&diff);
                    delta = Some(Delta::tool_calls(vec![DeltaToolCall::arguments(slot as i64, diff)]));
                }
            }
        }
        let args = arguments(obj).cloned().unwrap_or(Value::Null);
        obj.insert("arguments".into(), args);
        self.calls.prev = vec![call];
        delta
    }
}

impl ToolParser for InternlmParser {
    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some((content, action)) = text.split_once(MARK) else { return not_called() };
        let fail = |message: String| {
            self.failure.record(ApiError::bad_request(message));
            not_called()
        };
        if action.contains(MARK) {
            return fail("too many values to unpack (expected 2)".into());
        }
        let action = action.split(END).next().unwrap_or("");
        // `action[action.find("{"):]`: without a brace, its last character.
        let action = match action.find('{') {
            Some(i) => &action[i..],
            None => action.char_indices().last().map_or("", |(i, _)| &action[i..]),
        };
        let Some(call) = loads(action) else { return fail(loads_error(action).unwrap_or_default()) };
        let Some(obj) = call.as_object() else {
            return fail("TypeError: the call is not a JSON object".into());
        };
        let Some(name) = obj.get("name") else { return fail("KeyError: 'name'".into()) };
        let Some(name) = name.as_str() else {
            return fail("1 validation error for FunctionCall\nname\n  Input should be a valid string".into());
        };
        let args = obj.get("parameters").or_else(|| obj.get("arguments")).cloned();
        let arguments = dumps(&args.unwrap_or_else(|| Value::Object(Default::default())));
        let content = (!content.is_empty()).then(|| content.to_string());
        Extracted { tools_called: true, calls: vec![FunctionCall { id: None, name: name.to_string(), arguments }], content }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        if !t.current.contains(ACTION) {
            self.position = t.current.chars().count();
            return Some(Delta::content(t.delta));
        }
        if self.calls.current > 0 {
            return Some(Delta::content(""));
        }
        let new = skip_chars(t.current, self.position);
        let (text, action) = new.split_once(MARK)?;
        if action.contains(MARK) {
            // vLLM's unpacking raises outside its `try`: the chunk fails.
            self.failure.record(ApiError::bad_request("invalid stream_state: derender failed"));
            return None;
        }
        if !text.is_empty() {
            self.position += text.chars().count();
            return Some(Delta::content(text));
        }
        let action = action.trim().split(END).next().unwrap_or("").to_string();
        self.step(&action, t.delta)
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }

    fn failure(&self) -> Option<ApiError> {
        self.failure.get()
    }
}

struct Internlm;

impl ToolParserFactory for Internlm {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(InternlmParser::default())
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

static TOOLS: ToolFamily = Family { names: &["internlm"], needs: "", load: |_| Ok(Arc::new(Internlm)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}
