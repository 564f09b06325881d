//! From melody's config to the variables its templates read
//! (TEMPLATING.md 3-4): tool calls numbered by first appearance, messages
//! validated, consecutive tool results grouped, tools and documents in the
//! templates' shapes.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::{Block, Config, Format, Message, ReasoningType, RenderError, Role};

/// serde_json's string encoding without the quotes (the templates paste
/// tool names and descriptions between literal quotes).
pub fn json_escape(s: &str) -> String {
    let quoted = Value::String(s.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// Compact JSON with a space after each `,` and `:` outside strings.
pub(super) fn add_spaces(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() + compact.len() / 8);
    let (mut in_string, mut escaped) = (false, false);
    for c in compact.chars() {
        out.push(c);
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else {
            match c {
                '"' => in_string = true,
                ',' | ':' => out.push(' '),
                _ => {}
            }
        }
    }
    out
}

fn parse_json(text: &str) -> Result<Value, RenderError> {
    serde_json::from_str(text).map_err(|e| RenderError::Json(e.to_string()))
}

/// Call ids in order of first appearance; documents take number 0.
fn number_calls(config: &Config) -> HashMap<&str, usize> {
    let mut index = HashMap::new();
    let mut next = usize::from(!config.documents.is_empty());
    for msg in &config.messages {
        let ids: Vec<&str> = match msg.role {
            Role::Tool => vec![msg.tool_call_id.as_deref().unwrap_or("")],
            _ => msg.tool_calls.iter().map(|c| c.id.as_str()).collect(),
        };
        for id in ids {
            index.entry(id).or_insert_with(|| {
                next += 1;
                next - 1
            });
        }
    }
    index
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "SYSTEM",
        Role::User => "USER",
        Role::Chatbot => "CHATBOT",
        Role::Tool => "tool",
    }
}

/// `{"type": T, "data": D, T: D}`.
fn block_value(kind: &str, data: &str) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), Value::from(kind));
    block.insert("data".into(), Value::from(data));
    block.insert(kind.into(), Value::from(data));
    Value::Object(block)
}

/// A tool result item as the template reads it (`document.data`).
fn result_item(block: &Block) -> Result<Value, RenderError> {
    let data = match block {
        Block::Text(text) => json!({ "content": text }),
        Block::Document(doc) => Value::Object(doc.clone()),
        Block::Image(placeholder) => json!({ "image_content": placeholder }),
        Block::Thinking(_) => {
            return Err(RenderError::Validation("thinking content type cannot be used in tool messages".into()))
        }
    };
    Ok(json!({"type": "document", "document": {"data": data}}))
}

/// One non-tool message in the template's shape.
fn chat_message(msg: &Message, index: &HashMap<&str, usize>) -> Result<Value, RenderError> {
    let mut calls = Vec::with_capacity(msg.tool_calls.len());
    for call in &msg.tool_calls {
        let number = index.get(call.id.as_str()).copied().unwrap_or_default();
        calls.push(json!({
            "id": number.to_string(),
            "type": "function",
            "function": {"name": json_escape(&call.name), "arguments": parse_json(&call.parameters)?},
        }));
    }
    let mut content = Vec::with_capacity(msg.content.len());
    for (j, block) in msg.content.iter().enumerate() {
        content.push(match block {
            // With calls, a leading text is the tool plan.
            Block::Text(text) if j == 0 && !calls.is_empty() => block_value("thinking", text),
            Block::Text(text) => block_value("text", text),
            Block::Thinking(text) => block_value("thinking", text),
            Block::Image(placeholder) => block_value("image", placeholder),
            Block::Document(_) => {
                return Err(RenderError::Validation(
                    "content type object is not supported for non-tool messages".into(),
                ))
            }
        });
    }
    Ok(json!({"role": role_name(msg.role), "tool_calls": calls, "content": content, "tool_results": []}))
}

/// Validation in melody's order, for message `i`.
fn check(i: usize, msg: &Message, seen: &mut Vec<String>) -> Result<(), RenderError> {
    let invalid = |m: String| Err(RenderError::Validation(m));
    if msg.role == Role::Tool {
        if msg.tool_call_id.is_none() {
            return invalid(format!("tool message[{i}] missing tool_call_id"));
        }
        return Ok(());
    }
    for call in &msg.tool_calls {
        if msg.role != Role::Chatbot {
            return invalid("tool calls are only supported for chatbot/assistant messages".into());
        }
        if call.id.is_empty() {
            return invalid(format!("message[{i}] has tool call with empty id"));
        }
        if seen.contains(&call.id) {
            return invalid(format!("message[{i}] has duplicate tool call id: {}", call.id));
        }
        seen.push(call.id.clone());
    }
    Ok(())
}

/// The template's `messages`: a run of tool messages becomes one message per
/// result slot. A call id keeps the slot it got in the run it first
/// appeared in (melody's map is global), so a later run that repeats it
/// adds to that slot number of its own run.
fn messages(config: &Config) -> Result<Vec<Value>, RenderError> {
    let index = number_calls(config);
    let mut out = Vec::with_capacity(config.messages.len());
    let mut seen = Vec::new();
    // The current run of tool results: (number, items) per slot.
    let mut run: Vec<(usize, Vec<Value>)> = Vec::new();
    let mut slot_of: HashMap<&str, usize> = HashMap::new();
    let flush = |run: &mut Vec<(usize, Vec<Value>)>, out: &mut Vec<Value>| {
        for (number, items) in run.drain(..) {
            out.push(json!({"role": "tool", "tool_call_id": number, "content": items}));
        }
    };
    for (i, msg) in config.messages.iter().enumerate() {
        check(i, msg, &mut seen)?;
        if msg.role != Role::Tool {
            flush(&mut run, &mut out);
            out.push(chat_message(msg, &index)?);
            continue;
        }
        let id = msg.tool_call_id.as_deref().unwrap_or_default();
        if !slot_of.contains_key(id) {
            slot_of.insert(id, run.len());
            run.push((index.get(id).copied().unwrap_or_default(), Vec::new()));
        }
        let slot = slot_of.get(id).copied().unwrap_or_default();
        let Some((_, items)) = run.get_mut(slot) else {
            // melody panics on the stale slot; derender refuses instead.
            return Err(RenderError::Validation(format!(
                "tool message[{i}] repeats tool_call_id {id:?} from an earlier run of tool messages"
            )));
        };
        for block in &msg.content {
            items.push(result_item(block)?);
        }
    }
    flush(&mut run, &mut out);
    Ok(out)
}

fn optional(text: &Option<String>) -> Value {
    text.clone().map_or(Value::Null, Value::String)
}

/// The variables `render_cmd4` / `render_cmd3` give the template.
pub(super) fn variables(config: &Config) -> Result<Map<String, Value>, RenderError> {
    let messages = messages(config)?;
    let tools: Vec<Value> = config
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": json_escape(&t.name),
                "description": json_escape(&t.description),
                "parameters": t.parameters,
            }})
        })
        .collect();
    let documents: Vec<Value> = config.documents.iter().cloned().map(Value::Object).collect();
    let mut vars = config.extra.clone();
    let mut set = |key: &str, value: Value| {
        vars.insert(key.to_string(), value);
    };
    let instruction = optional(&config.dev_instruction);
    match config.format {
        Format::Cmd4 => {
            set("developer_instruction", instruction.clone());
            set("platform_instruction_override", optional(&config.platform_instruction));
            set("grounding", Value::from(config.grounding));
        }
        Format::Cmd3 => {
            set("preamble", instruction.clone());
            set("citation_mode", Value::from(config.citation_quality));
            set("safety_mode", config.safety_mode.map_or(Value::Null, Value::from));
            if let Some(kind) = config.reasoning {
                set("reasoning_options", json!({"enabled": kind == ReasoningType::Enabled}));
            }
            set("skip_preamble", Value::Bool(config.skip_preamble));
            set("skip_thinking", Value::Bool(config.reasoning == Some(ReasoningType::Disabled)));
        }
    }
    set("messages", Value::Array(messages));
    set("documents", Value::Array(documents));
    set("available_tools", Value::Array(tools.clone()));
    set("response_prefix", Value::from(""));
    set("json_schema", optional(&config.json_schema));
    set("json_mode", Value::Bool(config.json_mode));
    set("add_generation_prompt", Value::Bool(true));
    set("bos_token", Value::from("<BOS_TOKEN>"));
    set("regen_tool_call_ids", Value::Bool(false));
    set("convert_first_system_msg", Value::Bool(false));
    set("tools", Value::Array(tools));
    if let Some(kind) = config.reasoning {
        set("reasoning", Value::Bool(kind == ReasoningType::Enabled));
    }
    if config.json_mode || config.json_schema.is_some() {
        let format = match &config.json_schema {
            Some(schema) => json!({"type": "json_object", "schema": schema}),
            None => json!({"type": "json_object"}),
        };
        set("response_format", format);
    }
    set("developer_preamble", instruction);
    match config.format {
        Format::Cmd4 => set("enable_citations", Value::Bool(config.grounding == "ENABLED")),
        Format::Cmd3 if config.citation_quality != "OFF" => set("enable_citations", Value::Bool(true)),
        Format::Cmd3 => {}
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_go_after_separators_outside_strings_only() {
        assert_eq!(add_spaces(r#"{"a":[1,2],"b":"x, y: \"z\\"}"#), r#"{"a": [1, 2], "b": "x, y: \"z\\"}"#);
    }

    #[test]
    fn escapes_are_serde_json_s_without_quotes() {
        assert_eq!(json_escape("a\"b\\c\n\u{1}é<"), "a\\\"b\\\\c\\n\\u0001é<");
    }
}
