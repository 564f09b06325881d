//! `POST /v1/messages/render`: an Anthropic Messages request becomes the chat
//! request vLLM's `AnthropicServingMessages.to_chat_completion_request`
//! builds, which then renders like `/v1/chat/completions/render`.
//!
//! The body is first checked as pydantic checks `AnthropicMessagesRequest`
//! (`anthropic_check`), so a bad one gets vLLM's 400. Two facts about the
//! template are probed once, on first use: whether inline system messages
//! must be merged into the leading one, and which `reasoning_effort`
//! `thinking: {"type": "disabled"}` maps to.

use serde_json::{json, Map, Value};

use super::anthropic_check::{check, Block, Content, Message, Request, Thinking, Tool, ToolChange};
use super::body_object;
use crate::error::ApiError;
use crate::pycompat::json::{dumps_with, DumpOptions};
use crate::pycompat::repr::{repr_float, repr_str};
use crate::served::Core;
use crate::template::Probes;
use crate::wire::request::{request_prechecks, Api, Obj};

const BILLING_HEADER: &str = "x-anthropic-billing-header";
/// `AnthropicEffort`, in the order the disabled-thinking probe tries them.
const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

impl Core {
    /// `POST /v1/messages/render`.
    pub fn messages_render(&self, body: Option<&Value>, header_request_id: Option<&str>) -> Result<Value, ApiError> {
        let o = body_object(body)?;
        let req = check(o)?;
        let probes = self.anthropic_probes.get_or_init(|| self.probe_template());
        let disabled = self.settings.anthropic_disabled_thinking_effort.as_deref();
        let effort = matches!(req.thinking, Some(Thinking::Disabled))
            .then(|| disabled.unwrap_or(probes.disabled_thinking_effort));
        // The `ChatCompletionRequest(...)` constructor validates only the
        // fields it is built with; the rest are set afterwards, unchecked.
        let mut chat = base_request(o, &req, probes.merge_inline_system)?;
        request_prechecks(&chat, Api::Chat)?;
        finish_request(&mut chat, &req, effort)?;
        self.chat_render_checked(&chat, header_request_id)
    }

    fn probe_template(&self) -> Probes {
        Probes {
            merge_inline_system: self.probe_merge_inline_system(),
            disabled_thinking_effort: self.probe_disabled_effort(),
        }
    }

    /// `_detect_merge_inline_system`: render `[system, user, system, user]`
    /// in a bare Jinja environment; an error means merge.
    fn probe_merge_inline_system(&self) -> bool {
        let source = self.settings.chat_template.as_deref().or(self.model.chat_template.as_deref());
        let Some(source) = source.filter(|s| !s.is_empty()) else { return true };
        let t = json!({"role": "system", "content": "t"});
        let u = json!({"role": "user", "content": "t"});
        let vars = json!({"messages": [t, u, t, u], "add_generation_prompt": false});
        crate::template::ChatTemplate::bare(source).and_then(|t| t.render(&vars)).is_err()
    }

    /// `DisabledThinkingEffortResolver._probe`: `"low"` when the template
    /// rejects `reasoning_effort="none"` or renders it like a real effort.
    fn probe_disabled_effort(&self) -> &'static str {
        let render = |effort: &str| {
            let body = json!({"messages": [{"role": "user", "content": "Hi"}], "reasoning_effort": effort});
            self.chat_render(Some(&body), Some("probe")).ok().map(|r| r["token_ids"].clone())
        };
        let Some(none) = render("none") else { return "low" };
        if EFFORTS.iter().any(|e| render(e).as_ref() == Some(&none)) {
            "low"
        } else {
            "none"
        }
    }
}

/// `_convert_system_message` + `_convert_messages` + `_build_base_request`:
/// the fields the chat request is constructed with.
fn base_request(o: &Obj, req: &Request, merge_inline_system: bool) -> Result<Obj, ApiError> {
    let mut messages = Vec::new();
    let mut system_parts: Vec<String> = Vec::new();
    match &req.system {
        Some(Content::Text(s)) if !s.is_empty() => system_parts.push(s.clone()),
        Some(Content::Blocks(blocks)) => {
            for b in blocks {
                match b.str_field("text") {
                    Some(text) if b.kind == "text" && !text.is_empty() && !text.starts_with(BILLING_HEADER) => {
                        system_parts.push(text.to_string())
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    if merge_inline_system {
        system_parts.extend(req.messages.iter().filter(|m| m.role == "system").filter_map(system_text));
    }
    if !system_parts.is_empty() {
        messages.push(json!({"role": "system", "content": system_parts.concat()}));
    }
    for msg in &req.messages {
        if msg.role == "system" {
            if let Some(text) = system_text(msg).filter(|_| !merge_inline_system) {
                messages.push(json!({"role": "system", "content": text}));
            }
            continue;
        }
        let mut out = Map::new();
        out.insert("role".into(), Value::String(msg.role.clone()));
        match &msg.content {
            Content::Text(s) => {
                out.insert("content".into(), Value::String(s.clone()));
            }
            Content::Blocks(blocks) => convert_blocks(blocks, &msg.role, &mut out, &mut messages),
        }
        if msg.role != "user" || out.contains_key("content") {
            messages.push(Value::Object(out));
        }
    }

    let mut chat = Map::new();
    let copy = |chat: &mut Obj, from: &str, to: &str| {
        if let Some(v) = o.get(from).filter(|v| !v.is_null()) {
            chat.insert(to.into(), v.clone());
        }
    };
    chat.insert("model".into(), Value::String(req.model.clone()));
    chat.insert("messages".into(), Value::Array(messages));
    chat.insert("max_tokens".into(), Value::from(req.max_tokens));
    chat.insert("max_completion_tokens".into(), Value::from(req.max_tokens));
    if let Some(stop) = &req.stop_sequences {
        chat.insert("stop".into(), json!(stop));
    }
    for (key, v) in [("temperature", req.temperature), ("top_p", req.top_p)] {
        if let Some(x) = v {
            chat.insert(key.into(), json!(x));
        }
    }
    if let Some(k) = req.top_k {
        chat.insert("top_k".into(), Value::from(k));
    }
    if let Some(w) = req.watermarking {
        chat.insert("watermarking".into(), Value::Bool(w));
    }
    for key in ["cache_salt", "kv_transfer_params", "ec_transfer_params", "vllm_xargs", "chat_template_kwargs"] {
        copy(&mut chat, key, key);
    }
    Ok(chat)
}

/// `_extract_system_text`: a system message's text without billing headers.
fn system_text(msg: &Message) -> Option<String> {
    match &msg.content {
        Content::Text(s) => (!s.starts_with(BILLING_HEADER) && !s.is_empty()).then(|| s.clone()),
        Content::Blocks(blocks) => {
            let parts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.kind == "text")
                .filter_map(|b| b.str_field("text"))
                .filter(|t| !t.is_empty() && !t.starts_with(BILLING_HEADER))
                .collect();
            let text = parts.concat();
            (!text.is_empty()).then_some(text)
        }
    }
}

/// `_convert_message_content`: blocks → content parts, tool calls and
/// reasoning; a user's tool results become tool messages ahead of it.
fn convert_blocks(blocks: &[Block], role: &str, out: &mut Obj, messages: &mut Vec<Value>) {
    let mut parts: Vec<Value> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut reasoning = String::new();
    let mut has_reasoning = false;
    for b in blocks {
        match b.kind.as_str() {
            "text" => {
                if let Some(text) = b.str_field("text").filter(|t| !t.is_empty()) {
                    parts.push(json!({"type": "text", "text": text}));
                }
            }
            "image" => {
                if let Some(source) = b.obj.get("source").and_then(Value::as_object).filter(|s| !s.is_empty()) {
                    parts.push(json!({"type": "image_url", "image_url": {"url": image_url(source)}}));
                }
            }
            "thinking" => {
                if let Some(t) = b.str_field("thinking") {
                    reasoning.push_str(t);
                    has_reasoning = true;
                }
            }
            "tool_use" => calls.push(tool_call(b)),
            "tool_result" if role == "user" => user_tool_result(b, messages),
            "tool_result" => {
                let text = match b.obj.get("content") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(v) if is_empty_container(v) => String::new(),
                    Some(v) => py_str(v),
                };
                parts.push(json!({"type": "text", "text": format!("Tool result: {text}")}));
            }
            // redacted_thinking is opaque; tool_reference, tool_addition and
            // tool_removal are read elsewhere.
            _ => {}
        }
    }
    if has_reasoning {
        out.insert("reasoning".into(), Value::String(reasoning));
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if parts.len() == 1 && parts[0]["type"] == "text" {
        out.insert("content".into(), parts[0]["text"].clone());
    } else if !parts.is_empty() {
        out.insert("content".into(), Value::Array(parts));
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// `_convert_image_source_to_url`: a URL as is, anything else as a data URI.
fn image_url(source: &Obj) -> String {
    let get = |k: &str, default: &str| source.get(k).and_then(Value::as_str).unwrap_or(default).to_string();
    if source.get("type").and_then(Value::as_str) == Some("url") {
        return get("url", "");
    }
    format!("data:{};base64,{}", get("media_type", "image/jpeg"), get("data", ""))
}

/// `_convert_tool_use_block`.
const ASCII: DumpOptions = DumpOptions { indent: None, separators: None, sort_keys: false, ensure_ascii: true };

fn tool_call(b: &Block) -> Value {
    let id = b
        .str_field("id")
        .filter(|s| !s.is_empty())
        .map_or_else(|| format!("call_{}", crate::ids::now()), str::to_string);
    let input = b.obj.get("input").filter(|v| !is_empty_container(v) && !v.is_null()).cloned().unwrap_or(json!({}));
    json!({
        "id": id,
        "type": "function",
        // `json.dumps(block.input or {})`: Python's separators, ASCII only.
        "function": {"name": b.str_field("name").unwrap_or(""), "arguments": dumps_with(&input, &ASCII)},
    })
}

/// `_convert_user_tool_result`: a tool message, then a user message with
/// any images, then a tool message with any tool references.
fn user_tool_result(b: &Block, messages: &mut Vec<Value>) {
    let call_id = b.str_field("tool_use_id").unwrap_or("");
    let mut text = String::new();
    let mut images = Vec::new();
    let mut refs = Vec::new();
    match b.obj.get("content") {
        Some(Value::String(s)) => text = s.clone(),
        Some(Value::Array(items)) => {
            let mut texts = Vec::new();
            for item in items.iter().filter_map(Value::as_object) {
                match item.get("type").and_then(Value::as_str) {
                    Some("text") => texts.push(item.get("text").and_then(Value::as_str).unwrap_or("").to_string()),
                    Some("image") => {
                        let empty = Map::new();
                        let source = item.get("source").and_then(Value::as_object).unwrap_or(&empty);
                        let url = image_url(source);
                        if !url.is_empty() {
                            images.push(json!({"type": "image_url", "image_url": {"url": url}}));
                        }
                    }
                    Some("tool_reference") => {
                        let name = [item.get("tool_name"), item.get("name")]
                            .into_iter()
                            .flatten()
                            .find(|v| v.as_str().is_some_and(|s| !s.is_empty()));
                        if let Some(name) = name {
                            refs.push(json!({"type": "tool_reference", "name": name}));
                        }
                    }
                    _ => {}
                }
            }
            text = texts.join("\n");
        }
        _ => {}
    }
    messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
    if !images.is_empty() {
        messages.push(json!({"role": "user", "content": images}));
    }
    if !refs.is_empty() {
        messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": refs}));
    }
}

/// The fields vLLM sets on the built chat request: streaming options,
/// output config, thinking, tool choice and tools.
fn finish_request(chat: &mut Obj, req: &Request, disabled_effort: Option<&str>) -> Result<(), ApiError> {
    if req.stream {
        chat.insert("stream".into(), Value::Bool(true));
        chat.insert("stream_options".into(), json!({"include_usage": true, "continuous_usage_stats": true}));
    }
    if let Some(schema) = &req.output_schema {
        chat.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": "json_schema", "schema": schema}}),
        );
    }
    if let Some(effort) = &req.output_effort {
        chat.insert("reasoning_effort".into(), Value::String(effort.clone()));
    }
    match &req.thinking {
        Some(Thinking::Disabled) => {
            chat.insert("reasoning_effort".into(), Value::String(disabled_effort.unwrap_or("none").to_string()));
        }
        Some(Thinking::Enabled(budget)) => {
            chat.insert("thinking_token_budget".into(), Value::from(*budget));
        }
        _ => {}
    }
    // `req.tool_choice = None` (an explicit null) when the request has none.
    chat.insert("tool_choice".into(), Value::Null);
    if let Some(tc) = &req.tool_choice {
        chat.insert("parallel_tool_calls".into(), Value::Bool(!tc.disable_parallel_tool_use));
        let choice = match tc.kind.as_str() {
            "any" => json!("required"),
            "tool" => json!({"type": "function", "function": {"name": tc.name.clone().unwrap_or_default()}}),
            other => json!(other),
        };
        chat.insert("tool_choice".into(), choice);
    }
    if let Some(tools) = resolve_tools(req)? {
        let converted: Vec<Value> = tools.iter().map(chat_tool).collect();
        if chat.get("tool_choice").is_none_or(Value::is_null) {
            chat.insert("tool_choice".into(), json!("auto"));
        }
        chat.insert("tools".into(), Value::Array(converted));
    }
    Ok(())
}

/// `ChatCompletionToolsParam` for one Anthropic tool.
fn chat_tool(t: &Tool) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), Value::String(t.name.clone()));
    f.insert("description".into(), t.description.clone().map_or(Value::Null, Value::String));
    f.insert("parameters".into(), Value::Object(t.input_schema.clone()));
    f.insert("strict".into(), t.strict.map_or(Value::Null, Value::Bool));
    f.insert("defer_loading".into(), t.defer_loading.map_or(Value::Null, Value::Bool));
    json!({"type": "function", "function": f})
}

/// `_resolve_tools`: the tools in effect after the conversation's
/// `tool_addition` / `tool_removal` blocks.
fn resolve_tools(req: &Request) -> Result<Option<Vec<Tool>>, ApiError> {
    let changes: Vec<(&str, &ToolChange)> = req
        .messages
        .iter()
        .filter_map(|m| match &m.content {
            Content::Blocks(b) => Some(b),
            Content::Text(_) => None,
        })
        .flatten()
        .filter_map(|b| b.tool.as_ref().map(|t| (b.kind.as_str(), t)))
        .collect();
    if changes.is_empty() {
        return Ok(req.tools.clone());
    }
    // Insertion-ordered, like the dict vLLM builds.
    let mut tools: Vec<Tool> = Vec::new();
    for t in req.tools.iter().flatten() {
        upsert(&mut tools, t.clone());
    }
    let mut removed: Vec<String> = Vec::new();
    for (kind, change) in changes {
        let name = match change {
            ToolChange::Definition(def) => {
                upsert(&mut tools, def.clone());
                def.name.clone()
            }
            ToolChange::Reference(name) => {
                let Some(tool) = tools.iter_mut().find(|t| &t.name == name) else {
                    return Err(ApiError::bad_request(format!(
                        "{kind} references tool {}, which is not declared in tools",
                        repr_str(name)
                    )));
                };
                if kind == "tool_addition" {
                    tool.defer_loading = None;
                }
                name.clone()
            }
        };
        if kind == "tool_removal" {
            if !removed.contains(&name) {
                removed.push(name);
            }
        } else {
            removed.retain(|n| n != &name);
        }
    }
    Ok(Some(tools.into_iter().filter(|t| !removed.contains(&t.name)).collect()))
}

fn upsert(tools: &mut Vec<Tool>, tool: Tool) {
    match tools.iter_mut().find(|t| t.name == tool.name) {
        Some(slot) => *slot = tool,
        None => tools.push(tool),
    }
}

/// Python's `str()` of a JSON value (`str(block.content)` of a list).
fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) if n.is_f64() => repr_float(n.as_f64().unwrap_or(0.0)),
        Value::Number(n) => n.to_string(),
        Value::String(s) => repr_str(s),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => {
            let items: Vec<String> = o.iter().map(|(k, v)| format!("{}: {}", repr_str(k), py_repr(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}
