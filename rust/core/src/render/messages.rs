//! Chat messages as vLLM hands them to a template (`parse_chat_messages`
//! with the template's content format, then `_postprocess_messages`).

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::pycompat::json::loads;
use crate::template::ContentFormat;
use crate::wire::message_union::{self, walk_parts, Walk};

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
            // An empty text is no part (vLLM keeps only truthy parts).
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
    }
}

const BILLING_HEADER: &str = "x-anthropic-billing-header";

/// Part types vLLM reads as text, and the ones whose missing text drops
/// the part (`TEXT_PART_TYPES`, `PART_TYPES_TO_SKIP_NONE_CONTENT`).
const TEXT_TYPES: [&str; 5] = ["text", "input_text", "output_text", "refusal", "thinking"];
/// Every part type vLLM's parser knows (`MM_PARSER_MAP`), sorted as its
/// error lists them.
const KNOWN_TYPES: [&str; 16] = [
    "audio_embeds",
    "audio_url",
    "image_embeds",
    "image_pil",
    "image_url",
    "input_audio",
    "input_image",
    "input_text",
    "output_text",
    "prompt_embeds",
    "refusal",
    "text",
    "thinking",
    "tool_reference",
    "video_embeds",
    "video_url",
];
/// Keys that make a part without a `type` a media part, in the order
/// vLLM tests them.
const MEDIA_KEYS: [&str; 9] = [
    "image_url",
    "image_pil",
    "image_embeds",
    "audio_embeds",
    "video_embeds",
    "prompt_embeds",
    "audio_url",
    "input_audio",
    "video_url",
];

/// Where a list of messages came from: a chat request's own `messages`,
/// which vLLM validated (lazily, in part) and its chat parser walks, or
/// messages derender converted from another API's input.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Request,
    Converted,
}

/// vLLM's pass over the content parts (`parse_chat_message_content_part`),
/// up to the first media part, which the caller refuses: the 400s of parts
/// it cannot read, and, when texts are joined into one string (`join`, the
/// "string" content format), the `TypeError` of a text that is not a
/// string.
pub fn check_content_parts(messages: &[Value], join: bool) -> Result<(), ApiError> {
    let mut collected = 0usize;
    let mut bad_text: Option<ApiError> = None;
    walk_parts(messages, |part| {
        let Some(part) = part else {
            collected = 0;
            return bad_text.take().map_or(Ok(Walk::Next), Err);
        };
        let text = match part {
            Value::Object(o) => match part_text(o)? {
                PartText::Media => return Ok(Walk::Stop),
                PartText::Text(t) => t,
            },
            other => Some(other),
        };
        if let Some(t) = text.filter(|t| crate::pycompat::truthy(t)) {
            if join && !t.is_string() && bad_text.is_none() {
                bad_text = Some(ApiError::bad_request(format!(
                    "sequence item {collected}: expected str instance, {} found",
                    crate::pycompat::type_name(t)
                )));
            }
            collected += 1;
        }
        Ok(Walk::Next)
    })
}

enum PartText<'a> {
    /// What the part adds to the message's texts (`None`: nothing).
    Text(Option<&'a Value>),
    Media,
}

/// `parse_chat_message_content_mm_part` for a text-only model.
fn part_text(o: &Map<String, Value>) -> Result<PartText<'_>, ApiError> {
    let kind = o.get("type").filter(|t| !t.is_null());
    let uuid = o.get("uuid").filter(|u| !u.is_null());
    if let (Some(Value::String(kind)), None) = (kind, uuid) {
        if KNOWN_TYPES.contains(&kind.as_str()) {
            message_union::check_media_part(kind, &Value::Object(o.clone()))?;
            let key = match kind.as_str() {
                "thinking" => "thinking",
                "refusal" => "refusal",
                "tool_reference" => "name",
                k if TEXT_TYPES.contains(&k) => "text",
                _ => return Ok(PartText::Media),
            };
            return Ok(PartText::Text(o.get(key)));
        }
    }
    if kind.is_none() || uuid.is_some() {
        if MEDIA_KEYS.iter().any(|k| o.contains_key(*k)) {
            return Ok(PartText::Media);
        }
        if o.contains_key("tool_reference") {
            return Ok(PartText::Text(o.get("name")));
        }
        return Err(ApiError::invalid_param("Missing 'type' field in multimodal part. (parameter=type)", "type"));
    }
    match kind {
        Some(Value::String(kind)) => Err(ApiError::invalid_param(
            format!(
                "Unsupported chat content part type: {}. Supported types: {}. (parameter=type, value={kind})",
                crate::pycompat::repr::repr_str(kind),
                KNOWN_TYPES.join(", ")
            ),
            "type",
        )),
        _ => Err(ApiError::invalid_param("Invalid 'type' field in multimodal part. (parameter=type)", "type")),
    }
}

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
        // Chat requests rename `reasoning_content` to `reasoning` when that is
        // null or absent; /tokenize requests drop it first (`without_reasoning_content`).
        let given = |key: &str| msg.get(key).filter(|r| !r.is_null());
        let reasoning = given("reasoning").or_else(|| given("reasoning_content"));
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

/// A /tokenize request's messages as vLLM's conversation reads them: its
/// request model does not rename `reasoning_content` (chat's does), and the
/// conversation reads `reasoning` alone.
pub fn without_reasoning_content(o: &crate::wire::request::Obj) -> crate::wire::request::Obj {
    let mut o = o.clone();
    if let Some(Value::Array(messages)) = o.get_mut("messages") {
        for m in messages.iter_mut().filter_map(Value::as_object_mut) {
            m.remove("reasoning_content");
        }
    }
    o
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
