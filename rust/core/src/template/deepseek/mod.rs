//! DeepSeek's prompt encoders: vLLM's `deepseek_v32` and `deepseek_v4`
//! tokenizer modes write the conversation with code (DeepSeek's
//! `encoding_dsv32.py` / `encoding_dsv4.py`), not with a Jinja template.
//! What they share: the markers, tool calls written in DSML, and Python's
//! `str()` and truthiness of the message values they read.

pub mod v32;
pub mod v4;
pub mod v41;

use serde_json::Value;

use crate::pycompat::json::dumps;
use crate::pycompat::repr::repr_value;
use crate::pycompat::truthy;

const BOS: &str = "<｜begin▁of▁sentence｜>";
const EOS: &str = "<｜end▁of▁sentence｜>";
const USER: &str = "<｜User｜>";
const ASSISTANT: &str = "<｜Assistant｜>";
const THINK_START: &str = "<think>";
const THINK_END: &str = "</think>";
const DSML: &str = "｜DSML｜";

/// Why an encoder stopped, as the Python exception vLLM answers with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// A `ValueError` or `TypeError`: vLLM answers 400 with its text.
    #[error("{0}")]
    Invalid(String),
    /// An `IndexError` or `KeyError` vLLM does not catch: it answers 500.
    #[error("{0}")]
    Internal(String),
}

/// A version's DSML tag names (V4.1 spells them with a leading space).
struct Tags {
    block: &'static str,
    invoke: &'static str,
    parameter: &'static str,
}

const V32_TAGS: Tags = Tags { block: "function_calls", invoke: "invoke", parameter: "parameter" };
const V4_TAGS: Tags = Tags { block: "tool_calls", invoke: "invoke", parameter: "parameter" };

/// `"\n\n<DSML>{block}>\n" + invokes + "\n</DSML>{block}>"`: an assistant
/// message's calls, each `<DSML>invoke name="N">` over its parameters
/// (strings as written, anything else as JSON).
fn push_tool_calls(calls: &Value, tags: &Tags, prompt: &mut String) -> Result<(), EncodeError> {
    let Value::Array(calls) = calls else {
        return Err(EncodeError::Invalid("tool_calls must be a list".into()));
    };
    let Tags { block, invoke, parameter } = tags;
    prompt.push_str(&format!("\n\n<{DSML}{block}>\n"));
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            prompt.push('\n');
        }
        let function = call.get("function");
        let name = function.and_then(|f| f.get("name"));
        prompt.push_str(&format!("<{DSML}{invoke} name=\"{}\">\n", py_str(name)));
        let arguments = function.and_then(|f| f.get("arguments")).and_then(Value::as_object);
        for (j, (key, value)) in arguments.into_iter().flatten().enumerate() {
            if j > 0 {
                prompt.push('\n');
            }
            let (is_str, text) = match value {
                Value::String(s) => ("true", s.clone()),
                other => ("false", dumps(other)),
            };
            prompt
                .push_str(&format!("<{DSML}{parameter} name=\"{key}\" string=\"{is_str}\">{text}</{DSML}{parameter}>"));
        }
        prompt.push_str(&format!("\n</{DSML}{invoke}>"));
    }
    prompt.push_str(&format!("\n</{DSML}{block}>"));
    Ok(())
}

/// V4's and V4.1's `TOOLS_TEMPLATE` up to the schemas.
const TOOLS_HEAD: &str = r#"## Tools

You have access to a set of tools to help answer the user's question. You can invoke tools by writing a "<{dsml}{block}>" block like the following:

<{dsml}{block}>
<{dsml}{invoke} name="$TOOL_NAME">
<{dsml}{param} name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{dsml}{param}>
...
</{dsml}{invoke}>
<{dsml}{invoke} name="$TOOL_NAME2">
...
</{dsml}{invoke}>
</{dsml}{block}>

String parameters should be specified as is and set `string="true"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string="false"`.

If thinking_mode is enabled (triggered by {think}), you MUST output your complete reasoning inside {think}...{/think} BEFORE any tool calls or final response.

Otherwise, output directly after {/think} with tool calls or final response.

### Available Tool Schemas

"#;
const TOOLS_TAIL: &str =
    "\n\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n";

/// V4's and V4.1's system or developer message extras: the tools block and
/// the response format.
fn push_extras(tools: Option<&[Value]>, response_format: Option<&Value>, tags: &Tags, prompt: &mut String) {
    if let Some(tools) = tools {
        prompt.push_str("\n\n");
        let head = TOOLS_HEAD
            .replace("{dsml}", DSML)
            .replace("{block}", tags.block)
            .replace("{invoke}", tags.invoke)
            .replace("{param}", tags.parameter)
            .replace("{think}", THINK_START)
            .replace("{/think}", THINK_END);
        prompt.push_str(&head);
        prompt.push_str(&tool_schemas(tools));
        prompt.push_str(TOOLS_TAIL);
    }
    if let Some(rf) = response_format {
        prompt.push_str("\n\n");
        push_response_format(rf, prompt);
    }
}

/// `[tool["function"] for tool in tools]`.
fn tools_from_openai_format(tools: &Value) -> Result<Vec<Value>, EncodeError> {
    let Value::Array(tools) = tools else {
        // Iterating a str or dict yields strings, which cannot be indexed by key.
        return Err(EncodeError::Invalid("string indices must be integers, not 'str'".into()));
    };
    tools
        .iter()
        .map(|tool| match tool {
            Value::Object(o) => o.get("function").cloned().ok_or_else(|| EncodeError::Internal("'function'".into())),
            other => Err(EncodeError::Invalid(not_subscriptable(other))),
        })
        .collect()
}

/// The schemas, one JSON line per function.
fn tool_schemas(functions: &[Value]) -> String {
    functions.iter().map(dumps).collect::<Vec<_>>().join("\n")
}

fn push_response_format(rf: &Value, prompt: &mut String) {
    prompt.push_str("## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n");
    prompt.push_str(&dumps(rf));
}

fn role(msg: &Value) -> Option<&str> {
    msg.get("role").and_then(Value::as_str)
}

/// `drop_thinking_messages`: before the last user turn (`last_user`),
/// assistant messages lose their reasoning (the `reasoning` key) and
/// messages of roles other than `keep` (and assistant) are dropped.
fn drop_thinking_messages(messages: &[Value], keep: &[&str], last_user: isize, reasoning: &str) -> Vec<Value> {
    let mut kept = Vec::with_capacity(messages.len());
    for (index, msg) in messages.iter().enumerate() {
        let role = role(msg);
        if role.is_some_and(|r| keep.contains(&r)) || index as isize >= last_user {
            kept.push(msg.clone());
        } else if role == Some("assistant") {
            let mut msg = msg.clone();
            if let Some(o) = msg.as_object_mut() {
                o.remove(reasoning);
            }
            kept.push(msg);
        }
    }
    kept
}

/// The index of the last user or developer message, -1 when none.
fn last_user_index(messages: &[Value]) -> isize {
    messages.iter().rposition(|m| matches!(role(m), Some("user" | "developer"))).map_or(-1, |i| i as isize)
}

/// `str(value)` in Python (a missing key is `None`).
fn py_str(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(v) => repr_value(v),
        None => "None".into(),
    }
}

/// `value or ""`.
fn str_or_empty(value: Option<&Value>) -> String {
    value.filter(|v| truthy(v)).map(|v| py_str(Some(v))).unwrap_or_default()
}

/// `len(value)` where Python has one.
fn py_len(value: &Value) -> Option<usize> {
    match value {
        Value::Array(a) => Some(a.len()),
        Value::Object(o) => Some(o.len()),
        Value::String(s) => Some(s.chars().count()),
        _ => None,
    }
}

/// The `TypeError` of `value["function"]` for a value that is not a dict.
fn not_subscriptable(value: &Value) -> String {
    let kind = match value {
        Value::String(_) => return "string indices must be integers, not 'str'".into(),
        Value::Array(_) => return "list indices must be integers or slices, not str".into(),
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        _ => "int",
    };
    format!("'{kind}' object is not subscriptable")
}

/// The error texts quote messages as Python prints a dict.
fn repr(msg: &Value) -> String {
    repr_value(msg)
}
