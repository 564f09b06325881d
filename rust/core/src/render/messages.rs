//! Chat messages as vLLM hands them to a template (`parse_chat_messages`
//! with the "string" content format, then `_postprocess_messages`).

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::pycompat::json::loads;

/// The text of a content value: a string as is, a list of parts joined by
/// newlines, nothing for `null`. A system message loses Claude Code's
/// billing header line (`_strip_claude_code_billing_header`).
fn content_text(content: Option<&Value>, system: bool) -> String {
    let strip = |text: &str| -> Option<String> {
        match text.strip_prefix(BILLING_HEADER) {
            Some(_) if system => text.split_once('\n').map(|(_, rest)| rest.to_string()).filter(|r| !r.is_empty()),
            _ => Some(text.to_string()),
        }
    };
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => strip(s).unwrap_or_default(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => strip(s),
                Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("tool_reference") => {
                    o.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).map(str::to_string)
                }
                Value::Object(o) => {
                    let text = o.get("text").and_then(Value::as_str)?;
                    if o.get("type").and_then(Value::as_str) == Some("text") {
                        strip(text)
                    } else {
                        Some(text.to_string())
                    }
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
    }
}

const BILLING_HEADER: &str = "x-anthropic-billing-header";

/// The conversation a template sees.
pub fn conversation(messages: &[Value]) -> Result<Vec<Value>, ApiError> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let Some(msg) = m.as_object() else { continue };
        let role = msg.get("role").cloned().unwrap_or(Value::Null);
        let mut conv = Map::new();
        conv.insert("role".into(), role.clone());
        let system = role.as_str() == Some("system");
        conv.insert("content".into(), Value::String(content_text(msg.get("content"), system)));
        let reasoning = msg.get("reasoning").or_else(|| msg.get("reasoning_content")).filter(|r| !r.is_null());
        match role.as_str() {
            Some("assistant") => {
                if let Some(Value::Array(calls)) = msg.get("tool_calls") {
                    if !calls.is_empty() {
                        conv.insert("tool_calls".into(), Value::Array(tool_calls(calls)?));
                    }
                }
                if let Some(r) = reasoning {
                    conv.insert("reasoning".into(), r.clone());
                    conv.insert("reasoning_content".into(), r.clone());
                }
            }
            Some("tool") => {
                if let Some(id) = msg.get("tool_call_id") {
                    conv.insert("tool_call_id".into(), id.clone());
                }
            }
            _ => {}
        }
        if let Some(name @ Value::String(_)) = msg.get("name") {
            conv.insert("name".into(), name.clone());
        }
        if role.as_str() == Some("developer") {
            conv.insert("tools".into(), msg.get("tools").cloned().unwrap_or(Value::Null));
        }
        out.push(Value::Object(conv));
    }
    Ok(out)
}

/// For a template that does not know the `developer` role: developer
/// messages become system ones (without their tools), and when a system
/// message then sits anywhere but first, all of them merge into one leading
/// message, their texts joined by blank lines (`_convert_developer_to_system`,
/// `_consolidate_system_messages`).
pub fn developer_as_system(conversation: Vec<Value>) -> Vec<Value> {
    let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_string);
    if !conversation.iter().any(|m| role(m).as_deref() == Some("developer")) {
        return conversation;
    }
    let converted: Vec<Value> = conversation
        .into_iter()
        .map(|mut m| {
            if let Some(o) = m.as_object_mut().filter(|o| o.get("role").and_then(Value::as_str) == Some("developer")) {
                o.insert("role".into(), Value::String("system".into()));
                o.remove("tools");
            }
            m
        })
        .collect();
    let (mut texts, mut rest, mut merge) = (Vec::new(), Vec::new(), false);
    for (i, m) in converted.iter().enumerate() {
        if role(m).as_deref() == Some("system") {
            merge |= i > 0 || !texts.is_empty();
            let text = content_text(m.get("content"), false);
            if !text.is_empty() {
                texts.push(text);
            }
        } else {
            rest.push(m.clone());
        }
    }
    if !merge {
        return converted;
    }
    let mut merged = Map::new();
    merged.insert("role".into(), Value::String("system".into()));
    merged.insert("content".into(), Value::String(texts.join("\n\n")));
    std::iter::once(Value::Object(merged)).chain(rest).collect()
}

/// `_postprocess_messages`: tool-call arguments become objects.
fn tool_calls(calls: &[Value]) -> Result<Vec<Value>, ApiError> {
    let mut out = Vec::with_capacity(calls.len());
    for item in calls {
        let Some(obj) = item.as_object() else {
            return Err(ApiError::invalid_param(
                "assistant tool_calls entries must be objects. (parameter=tool_calls)",
                "tool_calls",
            ));
        };
        let mut obj = obj.clone();
        let kind_ok = obj.get("type").is_none_or(|t| t.as_str() == Some("function"));
        let Some(Value::Object(function)) = obj.get_mut("function") else {
            return Err(unsupported_call());
        };
        if !kind_ok {
            return Err(unsupported_call());
        }
        let parsed = match function.get("arguments") {
            Some(Value::Object(o)) => Value::Object(o.clone()),
            Some(Value::String(s)) if !s.is_empty() => match loads(s) {
                Some(Value::Object(o)) => Value::Object(o),
                _ => Value::Object(Map::new()),
            },
            _ => Value::Object(Map::new()),
        };
        function.insert("arguments".into(), parsed);
        out.push(Value::Object(obj));
    }
    Ok(out)
}

fn unsupported_call() -> ApiError {
    ApiError::invalid_param(
        "chat completions only support assistant tool_calls of type 'function'. (parameter=tool_calls)",
        "tool_calls",
    )
}

/// A tool as `ChatCompletionToolsParam.model_dump()` gives it to templates:
/// `type`, then `function` with `name`, `description`, `parameters` and
/// `strict` / `defer_loading` only when set.
pub fn tool_dict(tool: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), tool.get("type").cloned().unwrap_or(Value::String("function".into())));
    let f = tool.get("function").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut func = Map::new();
    func.insert("name".into(), f.get("name").cloned().unwrap_or(Value::Null));
    func.insert("description".into(), f.get("description").cloned().unwrap_or(Value::Null));
    func.insert("parameters".into(), f.get("parameters").cloned().unwrap_or(Value::Null));
    for key in ["strict", "defer_loading"] {
        if let Some(v) = f.get(key).filter(|v| !v.is_null()) {
            func.insert(key.into(), v.clone());
        }
    }
    out.insert("function".into(), Value::Object(func));
    Value::Object(out)
}
