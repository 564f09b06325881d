//! Forced tool choice: `"required"` (the output is a JSON array of
//! `{"name", "parameters"}`) and a named function (the output *is* the
//! arguments), batch and streaming, as vLLM's `tool_parsers/streaming.py`.

use serde_json::Value;

use super::{random_tool_call_id, FunctionCall};
use crate::pycompat::json::{dumps, loads};
use crate::wire::response::{Delta, DeltaFunctionCall, DeltaToolCall};

/// Batch `"required"`: the calls of a JSON array of function definitions
/// (none when the text is not such an array).
pub fn parse_required(content: &str) -> Vec<FunctionCall> {
    let Some(Value::Array(items)) = loads(content) else { return Vec::new() };
    let mut calls = Vec::with_capacity(items.len());
    for item in &items {
        let Some(obj) = item.as_object() else { return Vec::new() };
        let Some(name) = obj.get("name").and_then(Value::as_str) else { return Vec::new() };
        let params = match obj.get("parameters") {
            None | Some(Value::Null) => Value::Null,
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return Vec::new(),
        };
        calls.push(FunctionCall { id: None, name: name.to_string(), arguments: dumps(&params) });
    }
    calls
}

/// Streaming named tool choice: the first delta names the function, every
/// delta's text is argument text.
pub fn named_streaming(delta_text: &str, function_name: &str, name_returned: bool) -> (Delta, bool) {
    let arguments = delta_text.to_string();
    let call = if name_returned {
        DeltaToolCall::arguments(0, arguments)
    } else {
        DeltaToolCall::opening(0, random_tool_call_id(), function_name.to_string(), Some(arguments))
    };
    (call.into(), true)
}

#[derive(Default, Clone)]
struct Span {
    name: Option<String>,
    name_end: Option<usize>,
    args_start: Option<usize>,
    args_end: Option<usize>,
}

impl Span {
    fn ready(&self) -> bool {
        self.name.is_some() && self.args_start.is_some()
    }
    fn ready_at(&self, len: usize) -> bool {
        self.name.is_some() && self.name_end.is_some_and(|e| e <= len) && self.args_start.is_some_and(|s| s < len)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Key,
    Colon,
    Value,
    InString,
    InContainer,
    InScalar,
    After,
}

/// `_scan_required_tool_calls`: element spans of a (partial) array, in chars.
fn scan(chars: &[char]) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    let mut depth: i64 = 0;
    let (mut in_string, mut escaped) = (false, false);
    let mut string_start = 0;
    let mut cur: Option<usize> = None;
    let mut expect = Expect::Key;
    let mut key: Option<String> = None;
    let mut value_start = 0;
    let text = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    let end_value = |spans: &mut Vec<Span>,
                     cur: usize,
                     key: &Option<String>,
                     expect: &mut Expect,
                     value_start: usize,
                     pos: usize| {
        if key.as_deref() == Some("parameters") {
            spans[cur].args_end = Some(pos);
        } else if key.as_deref() == Some("name") && *expect == Expect::InString {
            match loads(&text(value_start, pos)).and_then(|v| v.as_str().map(str::to_string)) {
                Some(n) => {
                    spans[cur].name = Some(n);
                    spans[cur].name_end = Some(pos);
                }
                None => spans[cur].name = None,
            }
        }
        *expect = Expect::After;
    };
    for (i, &ch) in chars.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_string = false;
                if let (2, Some(c)) = (depth, cur) {
                    if expect == Expect::Key {
                        key = Some(text(string_start + 1, i));
                        expect = Expect::Colon;
                    } else if expect == Expect::InString {
                        end_value(&mut spans, c, &key, &mut expect, value_start, i + 1);
                    }
                }
            }
            continue;
        }
        if ch == '"' {
            in_string = true;
            string_start = i;
            if depth == 2 && cur.is_some() && expect == Expect::Value {
                value_start = i;
                if key.as_deref() == Some("parameters") {
                    spans[cur.unwrap_or(0)].args_start = Some(i);
                }
                expect = Expect::InString;
            }
            continue;
        }
        if ch == '{' || ch == '[' {
            if depth == 0 {
                if ch != '[' {
                    return spans;
                }
            } else if depth == 1 {
                if ch != '{' {
                    return spans;
                }
                spans.push(Span::default());
                cur = Some(spans.len() - 1);
                expect = Expect::Key;
                key = None;
            } else if depth == 2 && cur.is_some() && expect == Expect::Value {
                value_start = i;
                if key.as_deref() == Some("parameters") {
                    spans[cur.unwrap_or(0)].args_start = Some(i);
                }
                expect = Expect::InContainer;
            }
            depth += 1;
            continue;
        }
        if ch == '}' || ch == ']' {
            if let (2, Some(c), Expect::InScalar) = (depth, cur, expect) {
                end_value(&mut spans, c, &key, &mut expect, value_start, i);
            }
            depth -= 1;
            if let (2, Some(c), Expect::InContainer) = (depth, cur, expect) {
                end_value(&mut spans, c, &key, &mut expect, value_start, i + 1);
            } else if depth == 1 {
                cur = None;
            } else if depth <= 0 {
                return spans;
            }
            continue;
        }
        let Some(c) = cur.filter(|_| depth == 2) else { continue };
        if ch == ':' {
            if expect == Expect::Colon {
                expect = Expect::Value;
            }
        } else if ch == ',' {
            if expect == Expect::InScalar {
                end_value(&mut spans, c, &key, &mut expect, value_start, i);
            }
            expect = Expect::Key;
            key = None;
        } else if ch.is_whitespace() {
            if expect == Expect::InScalar {
                end_value(&mut spans, c, &key, &mut expect, value_start, i);
            }
        } else if expect == Expect::Value {
            value_start = i;
            if key.as_deref() == Some("parameters") {
                spans[c].args_start = Some(i);
            }
            expect = Expect::InScalar;
        }
    }
    spans
}

/// Streaming `"required"`: every element with something unsent, in order.
pub fn required_streaming(previous: &str, current: &str) -> (Option<Delta>, bool) {
    if current.is_empty() {
        return (None, false);
    }
    let chars: Vec<char> = current.chars().collect();
    let spans = scan(&chars);
    let sent = previous.chars().count();
    let mut calls = Vec::new();
    for (index, span) in spans.iter().enumerate() {
        if !span.ready() {
            break;
        }
        let start = span.args_start.unwrap_or(0);
        let end = span.args_end.unwrap_or(chars.len());
        if span.ready_at(sent) {
            let from = end.min(sent);
            if from < end {
                calls.push(DeltaToolCall::arguments(index as i64, chars[from..end].iter().collect()));
            }
            continue;
        }
        calls.push(DeltaToolCall {
            id: Some(random_tool_call_id()),
            kind: Some("function"),
            index: index as i64,
            function: Some(DeltaFunctionCall {
                name: span.name.clone(),
                arguments: Some(chars[start..end].iter().collect()),
            }),
        });
    }
    let returned = spans.iter().any(Span::ready);
    if calls.is_empty() {
        return (None, returned);
    }
    (Some(Delta::tool_calls(calls)), returned)
}
