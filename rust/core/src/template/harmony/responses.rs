//! A Responses request's input as Harmony messages (vLLM's
//! `_render_responses_with_harmony`, `response_input_to_harmony`).

use serde_json::Value;

use super::{developer_text, flatten, Message, ROLES};
use crate::error::ApiError;

/// Hosted tool types (`MCP_BUILTIN_TOOLS`): a request with only these has
/// no custom tools.
const BUILTIN_TYPES: [&str; 3] = ["code_interpreter", "web_search_preview", "container"];

fn input_error(message: String) -> ApiError {
    input_error_plain(format!("{message} (parameter=input)"))
}

/// pydantic's refusal of a non-text tool output as a Harmony message's
/// content (its `input_value` repr cut to 25 + 24 chars).
fn content_error(output: &Value) -> ApiError {
    let sorted = |v: &Value| match v {
        Value::Object(o) => {
            let mut keys: Vec<_> = o.iter().collect();
            keys.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(keys.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        }
        v => v.clone(),
    };
    let value = match output {
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        v => v.clone(),
    };
    let repr = crate::pycompat::repr::repr_value(&value);
    let chars: Vec<char> = repr.chars().collect();
    let shown = if chars.len() > 50 {
        format!("{}...{}", chars[..25].iter().collect::<String>(), chars[chars.len() - 24..].iter().collect::<String>())
    } else {
        repr
    };
    let kind = if output.is_array() { "list" } else { "dict" };
    input_error_plain(format!(
        "1 validation error for Message\ncontent.0\n  Input should be a valid dictionary or instance of Content [type=model_type, input_value={shown}, input_type={kind}]\n    For further information visit https://errors.pydantic.dev/2.14/v/model_type"
    ))
}

fn input_error_plain(message: String) -> ApiError {
    ApiError { status: 400, kind: "invalid_request_error", message, param: Some("input".into()) }
}

/// A named function choice must name a top-level function tool: Harmony's
/// structural tag sees the request's own tools, where a namespace's
/// function goes by `NAMESPACE__NAME` and is no function tool.
pub fn check_named_choice(tools: &[Value], choice: Option<&Value>) -> Result<(), ApiError> {
    let Some(choice) = choice.filter(|c| c.get("type").and_then(Value::as_str) == Some("function")) else {
        return Ok(());
    };
    let name = str_field(choice, "name");
    let is_function = |t: &Value| str_field(t, "type") == "function" && str_field(t, "name") == name;
    if tools.iter().any(is_function) {
        return Ok(());
    }
    let namespace = tools.iter().find(|t| {
        str_field(t, "type") == "namespace"
            && t.get("tools").and_then(Value::as_array).is_some_and(|inner| inner.iter().any(is_function))
    });
    let shown = namespace.map_or(name.to_string(), |ns| format!("{}__{name}", str_field(ns, "name")));
    Err(ApiError::bad_request(format!("The tool with name '{shown}' is not found in the tools list.")))
}

/// `has_custom_tools(extract_tool_types(tools))`: MCP tools count only
/// under allow-listed labels (none here).
pub fn has_custom_tools(tools: &[Value]) -> bool {
    tools.iter().any(|t| match t.get("type").and_then(Value::as_str) {
        Some("mcp") => false,
        Some(kind) => !BUILTIN_TYPES.contains(&kind),
        None => true,
    })
}

/// The leading system or developer item's text (when the request gives
/// no instructions), and the input left to render.
pub fn split_instructions(input: &Value, instructions_given: bool) -> (Option<String>, &[Value]) {
    let items = input.as_array().map_or(&[][..], Vec::as_slice);
    match items.first() {
        Some(first) if !instructions_given && is_instruction(first) => (flatten(first.get("content")), &items[1..]),
        _ => (None, items),
    }
}

/// The input as messages: a string is one user message, else each item.
pub fn input_messages(input: &Value, items: &[Value]) -> Result<Vec<Message>, ApiError> {
    if let Value::String(s) = input {
        return Ok(vec![Message::new("user", s.clone())]);
    }
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        out.extend(item_message(item, &items[..i])?);
    }
    Ok(out)
}

fn is_instruction(item: &Value) -> bool {
    matches!(item.get("role").and_then(Value::as_str), Some("system" | "developer"))
}

fn str_field<'a>(item: &'a Value, key: &str) -> &'a str {
    item.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `response_input_to_harmony`; `before`: the items before this one (a
/// call's output names the call it answers).
fn item_message(item: &Value, before: &[Value]) -> Result<Option<Message>, ApiError> {
    match item.get("type").and_then(Value::as_str).unwrap_or("message") {
        "message" => {
            let role = str_field(item, "role");
            let content = item.get("content");
            if matches!(role, "system" | "developer") {
                let text = flatten(content).filter(|t| !t.is_empty());
                return Ok(text.map(|t| Message::new("developer", developer_text(Some(&t), &[]))));
            }
            let Some(&role) = ROLES.iter().find(|r| **r == role) else {
                return Err(super::unknown_role(role));
            };
            let parts = match content {
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(parts)) => parts.iter().map(|p| str_field(p, "text").to_string()).collect(),
                _ => Vec::new(),
            };
            let m = Message { role, parts, ..Message::default() };
            Ok(Some(if role == "assistant" { m.on("final") } else { m }))
        }
        "function_call_output" => {
            let call_id = str_field(item, "call_id");
            let call = before.iter().rev().find(|b| {
                b.get("type").and_then(Value::as_str) == Some("function_call") && str_field(b, "call_id") == call_id
            });
            let Some(call) = call else { return Err(input_error(format!("No call message found for {call_id}"))) };
            let output = match item.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => return Err(content_error(other)),
                None => String::new(),
            };
            let mut m = Message::new("tool", output).on("commentary").to("assistant".into());
            m.name = Some(format!("functions.{}", str_field(call, "name")));
            Ok(Some(m))
        }
        "reasoning" => {
            let texts: Vec<&str> = item
                .get("content")
                .and_then(Value::as_array)
                .map_or(Vec::new(), |c| c.iter().map(|p| str_field(p, "text")).collect());
            Ok((!texts.is_empty()).then(|| Message::new("assistant", texts.join("\n")).on("analysis")))
        }
        "function_call" => {
            let mut m = Message::new("assistant", str_field(item, "arguments"))
                .on("commentary")
                .to(format!("functions.{}", str_field(item, "name")));
            m.content_type = Some("json".into());
            Ok(Some(m))
        }
        other => Err(input_error(format!("Unknown input type: {other}"))),
    }
}
