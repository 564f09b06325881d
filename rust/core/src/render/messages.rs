//! Chat messages as vLLM hands them to a template (`parse_chat_messages`
//! with the template's content format, then `_postprocess_messages`).

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::pycompat::json::loads;
use crate::template::ContentFormat;

/// The fields vLLM's content-part types declare; any other key of a text
/// part reaches an "openai"-format template as it is (`_collect_extra_fields`).
const KNOWN_PART_FIELDS: [&str; 18] = [
    "audio_embeds",
    "audio_url",
    "closed",
    "data",
    "file",
    "image_embeds",
    "image_pil",
    "image_url",
    "input_audio",
    "name",
    "prompt_cache_breakpoint",
    "refusal",
    "text",
    "thinking",
    "type",
    "uuid",
    "video_embeds",
    "video_url",
];

/// A system text part without Claude Code's billing header line; `None`
/// when nothing is left (`_strip_claude_code_billing_header`).
fn strip_billing(text: &str) -> Option<String> {
    match text.strip_prefix(BILLING_HEADER) {
        Some(_) => text.split_once('\n').map(|(_, rest)| rest.to_string()).filter(|r| !r.is_empty()),
        None => Some(text.to_string()),
    }
}

/// A content value as the "openai" format keeps it: a list of parts, text
/// parts as `{"type": "text", "text": ...}` with their extra fields.
fn content_parts(content: Option<&Value>, system: bool) -> Vec<Value> {
    let parts = match content {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
        Some(Value::Array(parts)) => parts.clone(),
        Some(other) => vec![other.clone()],
    };
    let text_part = |text: String, extra: Option<&Map<String, Value>>| {
        let mut part = Map::new();
        part.insert("type".into(), Value::String("text".into()));
        part.insert("text".into(), Value::String(text));
        for (k, v) in extra.into_iter().flatten() {
            if !KNOWN_PART_FIELDS.contains(&k.as_str()) {
                part.insert(k.clone(), v.clone());
            }
        }
        Value::Object(part)
    };
    let mut out = Vec::new();
    for part in parts {
        match part {
            Value::String(s) => {
                let s = if system { strip_billing(&s) } else { Some(s) };
                out.extend(s.map(|s| text_part(s, None)));
            }
            Value::Object(o) => {
                let kind = o.get("type").and_then(Value::as_str).unwrap_or("text");
                let key = match kind {
                    "text" | "input_text" | "output_text" => "text",
                    "thinking" => "thinking",
                    "refusal" => "refusal",
                    "tool_reference" => {
                        out.push(serde_json::json!({"type": "tool_reference", "name": o.get("name").cloned().unwrap_or(Value::Null)}));
                        continue;
                    }
                    _ => continue,
                };
                match o.get(key).and_then(Value::as_str) {
                    Some(text) if system && kind == "text" => {
                        out.extend(strip_billing(text).map(|t| text_part(t, Some(&o))))
                    }
                    Some(text) => out.push(text_part(text.to_string(), Some(&o))),
                    None if matches!(kind, "text" | "refusal") => {}
                    None => {
                        let mut part = Map::new();
                        part.insert("type".into(), Value::String("text".into()));
                        part.insert("text".into(), Value::Null);
                        out.push(Value::Object(part));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

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
                    // Thinking and refusal parts are text too, under their own key.
                    let key = o
                        .get("type")
                        .and_then(Value::as_str)
                        .filter(|kind| matches!(*kind, "thinking" | "refusal"))
                        .unwrap_or("text");
                    let text = o.get(key).and_then(Value::as_str)?;
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
pub fn conversation(messages: &[Value], format: ContentFormat) -> Result<Vec<Value>, ApiError> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let Some(msg) = m.as_object() else { continue };
        let role = msg.get("role").cloned().unwrap_or(Value::Null);
        let mut conv = Map::new();
        conv.insert("role".into(), role.clone());
        let system = role.as_str() == Some("system");
        let content = match format {
            ContentFormat::String => Value::String(content_text(msg.get("content"), system)),
            ContentFormat::OpenAi => {
                let parts = content_parts(msg.get("content"), system);
                let all_text = parts.iter().all(|p| p.get("type").and_then(Value::as_str) == Some("text"));
                if role.as_str() == Some("tool") && all_text {
                    // Tool results go to templates as one string.
                    let texts: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
                    Value::String(texts.join("\n"))
                } else {
                    Value::Array(parts)
                }
            }
        };
        conv.insert("content".into(), content);
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
        // DeepSeek-V4's encoder reads a message's `task`.
        if let Some(task @ Value::String(_)) = msg.get("task") {
            conv.insert("task".into(), task.clone());
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

/// The request's messages after vLLM's `_postprocess_messages`, which
/// parses assistant tool-call arguments in place (the Mistral renderer
/// hands these dicts to mistral_common).
pub fn with_parsed_arguments(messages: &[Value]) -> Result<Vec<Value>, ApiError> {
    let mut out = messages.to_vec();
    for m in out.iter_mut().filter_map(Value::as_object_mut) {
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        if let Some(Value::Array(calls)) = m.get("tool_calls") {
            let parsed = tool_calls(calls)?;
            m.insert("tool_calls".into(), Value::Array(parsed));
        }
    }
    Ok(out)
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
