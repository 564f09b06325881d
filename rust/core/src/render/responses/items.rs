//! Responses input items and tools in chat-completions shape
//! (`construct_input_messages`, `construct_tool_dicts`), so the chat
//! render's template and tokenizer path takes them unchanged.

use serde_json::{json, Map, Value};

use crate::error::ApiError;

/// `flat_namespace_tool_name`: a namespaced function as the model sees it.
fn flat_name(namespace: &str, name: &str) -> String {
    format!("{namespace}__{name}")
}

/// `custom_tool_parameters`: the single-string shim a custom tool becomes.
fn custom_tool_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {"input": {"type": "string", "description": "The freeform text payload for this tool."}},
        "required": ["input"],
        "additionalProperties": false,
    })
}

/// A flat Responses function tool as a chat tool (`FunctionDefinition`:
/// `strict` / `defer_loading` only when set).
fn chat_tool(name: Value, description: Option<&Value>, parameters: Option<&Value>, tool: &Map<String, Value>) -> Value {
    let mut function = Map::new();
    function.insert("name".into(), name);
    function.insert("description".into(), description.cloned().unwrap_or(Value::Null));
    function.insert("parameters".into(), parameters.cloned().unwrap_or(Value::Null));
    for key in ["strict", "defer_loading"] {
        if let Some(v) = tool.get(key).filter(|v| !v.is_null()) {
            function.insert(key.into(), v.clone());
        }
    }
    json!({"type": "function", "function": Value::Object(function)})
}

/// `get_function_tools`: the function tools the model is shown, in request
/// order, as chat tools. Namespace functions are flattened, custom tools
/// become a one-string function, hosted tools are dropped.
pub fn chat_tools(tools: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for tool in tools.iter().filter_map(Value::as_object) {
        let name = || tool.get("name").cloned().unwrap_or(Value::Null);
        match tool.get("type").and_then(Value::as_str) {
            Some("function") => out.push(chat_tool(name(), tool.get("description"), tool.get("parameters"), tool)),
            Some("custom") => {
                let params = custom_tool_parameters();
                out.push(chat_tool(name(), tool.get("description"), Some(&params), &Map::new()));
            }
            Some("namespace") => {
                let namespace = tool.get("name").and_then(Value::as_str).unwrap_or("");
                let inner = tool.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
                for f in inner.iter().filter_map(Value::as_object) {
                    if f.get("type").and_then(Value::as_str) != Some("function") {
                        continue;
                    }
                    let local = f.get("name").and_then(Value::as_str).unwrap_or("");
                    let flat = Value::String(flat_name(namespace, local));
                    out.push(chat_tool(flat, f.get("description"), f.get("parameters"), f));
                }
            }
            _ => {}
        }
    }
    out
}

/// `construct_input_messages`: instructions as a system message, then the
/// input (a string is one user message).
pub fn input_messages(instructions: Option<&str>, input: &Value) -> Result<Vec<Value>, ApiError> {
    let mut messages: Vec<Value> = Vec::new();
    if let Some(text) = instructions.filter(|t| !t.is_empty()) {
        messages.push(json!({"role": "system", "content": text}));
    }
    match input {
        Value::String(s) => messages.push(json!({"role": "user", "content": s})),
        Value::Array(items) => {
            let mut built: Vec<Value> = Vec::new();
            for item in items {
                if let Some(message) = item_message(item, built.last_mut())? {
                    built.push(message);
                }
            }
            messages.extend(built);
        }
        _ => {}
    }
    Ok(messages)
}

fn unsupported(kind: &str) -> ApiError {
    ApiError::invalid_param(format!("Unsupported input item type: {kind} (parameter=input)"), "input")
}

/// `_construct_message_from_response_item`: a new message, or `None` when the
/// item was merged into the previous assistant message.
fn item_message(item: &Value, prev: Option<&mut Value>) -> Result<Option<Value>, ApiError> {
    let Some(obj) = item.as_object() else { return Err(unsupported("None")) };
    let prev = prev.filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"));
    let kind = obj.get("type").and_then(Value::as_str);
    let role = obj.get("role").and_then(Value::as_str);
    let str_of = |k: &str| obj.get(k).cloned().unwrap_or(Value::Null);
    let call = match kind {
        Some("function_call") => {
            let name = match (obj.get("namespace").and_then(Value::as_str), obj.get("name").and_then(Value::as_str)) {
                (Some(ns), Some(n)) if !ns.is_empty() => Value::String(flat_name(ns, n)),
                _ => str_of("name"),
            };
            Some(
                json!({"id": str_of("call_id"), "function": {"name": name, "arguments": str_of("arguments")}, "type": "function"}),
            )
        }
        Some("custom_tool_call") => {
            let input = obj.get("input").and_then(Value::as_str).unwrap_or("");
            let arguments = crate::pycompat::json::dumps(&json!({"input": input}));
            Some(
                json!({"id": str_of("call_id"), "function": {"name": str_of("name"), "arguments": arguments}, "type": "function"}),
            )
        }
        _ => None,
    };
    if let Some(call) = call {
        if let Some(prev) = prev {
            match prev.get_mut("tool_calls") {
                None | Some(Value::Null) => {
                    prev["tool_calls"] = Value::Array(vec![call]);
                    return Ok(None);
                }
                Some(Value::Array(calls)) => {
                    calls.push(call);
                    return Ok(None);
                }
                Some(_) => {}
            }
        }
        return Ok(Some(json!({"role": "assistant", "tool_calls": [call]})));
    }
    match kind {
        Some("reasoning") => {
            if obj.get("encrypted_content").is_some_and(|c| c.as_str().is_some_and(|s| !s.is_empty())) {
                return Err(ApiError::invalid_param("Encrypted content is not supported. (parameter=input)", "input"));
            }
            let first_text = |k: &str| {
                obj.get(k).and_then(Value::as_array).and_then(|a| a.first()).and_then(|c| c.get("text")).cloned()
            };
            let reasoning =
                first_text("content").or_else(|| first_text("summary")).unwrap_or(Value::String(String::new()));
            if let Some(prev) = prev {
                if prev.get("reasoning").is_none_or(Value::is_null) {
                    prev["reasoning"] = reasoning;
                    return Ok(None);
                }
            }
            return Ok(Some(json!({"role": "assistant", "reasoning": reasoning})));
        }
        Some("function_call_output") | Some("custom_tool_call_output") => {
            return Ok(Some(json!({"role": "tool", "content": str_of("output"), "tool_call_id": str_of("call_id")})));
        }
        _ => {}
    }
    if role == Some("assistant") {
        // An output message (list content) or an easy message: its first text.
        let text = match obj.get("content") {
            Some(Value::String(s)) => Some(Value::String(s.clone())),
            Some(Value::Array(parts)) => parts.first().map(|p| p.get("text").cloned().unwrap_or(Value::Null)),
            _ => None,
        };
        if let Some(text) = text {
            if let Some(prev) = prev {
                if prev.get("content").is_none_or(Value::is_null) {
                    prev["content"] = text;
                    return Ok(None);
                }
            }
            return Ok(Some(json!({"role": "assistant", "content": text})));
        }
    }
    if obj.contains_key("role") {
        return Ok(Some(item.clone()));
    }
    Err(unsupported(kind.unwrap_or("None")))
}

/// Whether a message carries an image, file or audio part (which only a
/// multimodal model can render).
pub fn has_media(messages: &[Value]) -> bool {
    messages.iter().filter_map(|m| m.get("content").and_then(Value::as_array)).flatten().any(|part| {
        matches!(part.get("type").and_then(Value::as_str), Some("input_image" | "input_file" | "input_audio"))
    })
}

/// `should_continue_final_message`: the last item is an unfinished assistant
/// message or reasoning item.
pub fn continues_final_message(input: &Value) -> bool {
    let Some(last) = input.as_array().and_then(|a| a.last()).and_then(Value::as_object) else { return false };
    let kind = last.get("type").and_then(Value::as_str).unwrap_or("message");
    matches!(kind, "message" | "reasoning")
        && matches!(last.get("status").and_then(Value::as_str), Some("in_progress" | "incomplete"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_merge_into_the_reasoning_message_and_outputs_become_tool_messages() {
        let input = json!([
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs", "summary": [], "content": [{"type": "reasoning_text", "text": "think"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "g", "namespace": "ns", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "1"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
        ]);
        let m = input_messages(Some("sys"), &input).unwrap();
        assert_eq!(m.len(), 5);
        assert_eq!(m[0], json!({"role": "system", "content": "sys"}));
        assert_eq!(m[2]["reasoning"], "think");
        assert_eq!(m[2]["tool_calls"][1]["function"]["name"], "ns__g");
        assert_eq!(m[3], json!({"role": "tool", "content": "1", "tool_call_id": "c1"}));
        assert_eq!(m[4], json!({"role": "assistant", "content": "done"}));
    }

    #[test]
    fn encrypted_reasoning_is_refused() {
        let input = json!([{"type": "reasoning", "summary": [], "encrypted_content": "x"}]);
        assert_eq!(input_messages(None, &input).unwrap_err().param.as_deref(), Some("input"));
    }

    #[test]
    fn tools_are_flattened_to_chat_functions() {
        let tools = json!([
            {"type": "function", "name": "a", "parameters": {}, "strict": true},
            {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "b"}]},
            {"type": "custom", "name": "c"},
            {"type": "web_search"},
        ]);
        let out = chat_tools(tools.as_array().unwrap());
        let names: Vec<&str> = out.iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a", "ns__b", "c"]);
        assert_eq!(out[0]["function"]["strict"], true);
        assert_eq!(out[2]["function"]["parameters"]["required"], json!(["input"]));
    }

    #[test]
    fn unfinished_assistant_messages_are_continued() {
        assert!(continues_final_message(&json!([{"role": "assistant", "content": "x", "status": "in_progress"}])));
        assert!(!continues_final_message(&json!([{"type": "function_call", "status": "in_progress"}])));
        assert!(!continues_final_message(&json!("text")));
    }
}
