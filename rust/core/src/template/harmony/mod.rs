//! OpenAI's Harmony format, the prompt vLLM 0.33.0 renders for every
//! `gpt_oss` model instead of a chat template (`_make_request_with_harmony`,
//! `harmony_utils.py`): a system message (identity, knowledge cutoff, date,
//! reasoning effort, channels), a developer message (instructions, the
//! `functions` namespace as TypeScript), the conversation as Harmony
//! messages, then `<|start|>assistant`.

mod message;
pub mod responses;
mod schema;

use serde_json::Value;
use tokenizers::Tokenizer;

pub use self::message::Message;
use self::message::{Encoder, Framing};
use crate::error::ApiError;
use crate::model::Model;

const IDENTITY: &str = "You are ChatGPT, a large language model trained by OpenAI.";
const KNOWLEDGE_CUTOFF: &str = "2024-06";
const CHANNELS: &str = "# Valid channels: analysis, commentary, final. Channel must be included for every message.";
const FUNCTIONS_CHANNEL: &str = "Calls to these tools must go to the commentary channel: 'functions'.";
/// Request tool types that are hosted, not functions: left out.
const HOSTED_TOOLS: [&str; 3] = ["web_search_preview", "code_interpreter", "container"];
const ROLES: [&str; 5] = ["user", "assistant", "system", "developer", "tool"];
/// `REASONING_EFFORT`'s keys, in its order.
const EFFORTS: [&str; 3] = ["high", "medium", "low"];

/// The Harmony renderer of a `gpt_oss` model.
pub struct Harmony {
    /// The model's tokenizer, reading special-token text as plain text
    /// (`encode_ordinary`).
    tokenizer: Tokenizer,
    framing: Framing,
}

/// A function tool for the developer message.
#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub description: String,
    pub parameters: Option<Value>,
}

impl Harmony {
    /// The renderer, for a `gpt_oss` model with Harmony's framing tokens.
    pub fn load(model: &Model) -> Option<Harmony> {
        if model.model_type.as_deref() != Some("gpt_oss") {
            return None;
        }
        let id = |t: &str| model.tokenizer.token_to_id(t);
        let framing = Framing {
            start: id("<|start|>")?,
            end: id("<|end|>")?,
            message: id("<|message|>")?,
            channel: id("<|channel|>")?,
            constrain: id("<|constrain|>")?,
            call: id("<|call|>")?,
        };
        let mut tokenizer = model.tokenizer.clone();
        tokenizer.set_encode_special_tokens(true);
        Some(Harmony { tokenizer, framing })
    }

    /// `render_for_completion`: the messages (analysis before the last
    /// final answer dropped), then `<|start|>assistant`.
    pub fn render(&self, messages: &[Message]) -> Vec<u32> {
        let last_final = messages.iter().rposition(|m| m.role == "assistant" && m.channel.as_deref() == Some("final"));
        let encoder = Encoder { tokenizer: &self.tokenizer, framing: self.framing };
        let mut out = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            if last_final.is_some_and(|f| i < f) && m.channel.as_deref() == Some("analysis") {
                continue;
            }
            encoder.render(m, &mut out);
        }
        out.push(self.framing.start);
        if let Ok(e) = self.tokenizer.encode("assistant", false) {
            out.extend_from_slice(e.get_ids());
        }
        out
    }
}

/// `build_harmony_preamble`: the system message, and the developer message
/// when there are instructions or tools (`tools`: the request's, when they
/// are rendered). `effort`: the request's reasoning effort, checked.
pub fn preamble(
    instructions: Option<String>,
    tools: Option<&[Value]>,
    effort: Option<&str>,
) -> Result<Vec<Message>, ApiError> {
    let effort = match effort {
        None => "medium",
        Some(e) if EFFORTS.contains(&e) => e,
        Some(e) => {
            return Err(ApiError::invalid_param(
                format!("reasoning_effort='{e}' is not supported by Harmony. Supported values are: high, medium, low. (parameter=reasoning_effort)"),
                "reasoning_effort",
            ))
        }
    };
    let functions = functions(tools.unwrap_or(&[]))?;
    let mut channels = CHANNELS.to_string();
    if !functions.is_empty() {
        channels.push('\n');
        channels.push_str(FUNCTIONS_CHANNEL);
    }
    let system = format!(
        "{IDENTITY}\nKnowledge cutoff: {KNOWLEDGE_CUTOFF}\nCurrent date: {}\n\nReasoning: {effort}\n\n{channels}",
        start_date()
    );
    let mut messages = vec![Message::new("system", system)];
    if instructions.as_deref().is_some_and(|i| !i.is_empty()) || tools.is_some_and(|t| !t.is_empty()) {
        messages.push(Message::new("developer", developer_text(instructions.as_deref(), &functions)));
    }
    Ok(messages)
}

/// The developer message's text: `# Instructions` and the tools section.
fn developer_text(instructions: Option<&str>, tools: &[Function]) -> String {
    let mut sections = Vec::new();
    if let Some(i) = instructions {
        sections.push("# Instructions".to_string());
        sections.push(i.to_string());
    }
    if !tools.is_empty() {
        let mut lines = vec!["## functions\n".to_string(), "namespace functions {\n".to_string()];
        for tool in tools {
            lines.extend(tool.description.lines().map(|l| format!("// {l}")));
            lines.push(match &tool.parameters {
                Some(p) => format!("type {} = (_: {}) => any;\n", tool.name, schema::typescript(p, "")),
                None => format!("type {} = () => any;\n", tool.name),
            });
        }
        lines.push("} // namespace functions".to_string());
        sections.push(format!("# Tools\n\n{}", lines.join("\n")));
    }
    sections.join("\n\n")
}

/// `VLLM_SYSTEM_START_DATE`, else today (local time is UTC here).
fn start_date() -> String {
    match std::env::var("VLLM_SYSTEM_START_DATE") {
        Ok(date) if !date.is_empty() => date,
        _ => super::strftime_now("%Y-%m-%d".into()),
    }
}

/// The request's function tools (`get_developer_message`): hosted tools
/// are left out, any other type refused.
fn functions(tools: &[Value]) -> Result<Vec<Function>, ApiError> {
    let mut out = Vec::new();
    for tool in tools {
        let kind = tool.get("type").and_then(Value::as_str).unwrap_or("function");
        if HOSTED_TOOLS.contains(&kind) {
            continue;
        }
        if kind != "function" {
            return Err(ApiError::invalid_param(
                format!("tool type '{kind}' is not supported. (parameter=tools)"),
                "tools",
            ));
        }
        let f = tool.get("function").unwrap_or(tool);
        out.push(Function {
            name: f.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
            description: f.get("description").and_then(Value::as_str).unwrap_or("").to_string(),
            parameters: f.get("parameters").filter(|p| !p.is_null()).cloned(),
        });
    }
    Ok(out)
}

/// `flatten_input_text_content`: a string, or a list's text parts joined.
pub fn flatten(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let texts: Vec<&str> = items
                .iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        _ => None,
    }
}

/// `extract_instructions_from_messages`: a leading system or developer
/// message's text, and the rest.
pub fn split_instructions(messages: &[Value]) -> (Option<String>, &[Value]) {
    match messages.first() {
        Some(m) if matches!(m.get("role").and_then(Value::as_str), Some("system" | "developer")) => {
            (flatten(m.get("content")), &messages[1..])
        }
        _ => (None, messages),
    }
}

/// pydantic's refusal of a role Harmony's `Author` does not know.
fn unknown_role(role: &str) -> ApiError {
    ApiError::bad_request(format!(
        "1 validation error for Author\nrole\n  Input should be 'user', 'assistant', 'system', 'developer' or 'tool' [type=enum, input_value={}, input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/enum",
        crate::pycompat::repr::repr_str(role)
    ))
}

/// `parse_chat_inputs_to_harmony_messages`.
pub fn chat_messages(messages: &[Value]) -> Result<Vec<Message>, ApiError> {
    let mut names = std::collections::HashMap::new();
    for m in messages {
        for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or("");
            names.insert(call.get("id").and_then(Value::as_str).unwrap_or("").to_string(), name.to_string());
        }
    }
    let mut out = Vec::new();
    for m in messages {
        chat_message(m, &names, &mut out)?;
    }
    Ok(out)
}

fn chat_message(
    m: &Value,
    names: &std::collections::HashMap<String, String>,
    out: &mut Vec<Message>,
) -> Result<(), ApiError> {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    // `reasoning_content` is the deprecated name request validation renames.
    let reasoning = [m.get("reasoning"), m.get("reasoning_content")]
        .into_iter()
        .flatten()
        .find(|r| !r.is_null())
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty());
    let calls = m.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty());
    if let (Some(calls), "assistant") = (calls, role) {
        if let Some(text) = flatten(m.get("content")).filter(|t| !t.is_empty()) {
            out.push(Message::new("assistant", text).on("commentary"));
        }
        if let Some(r) = reasoning {
            out.push(Message::new("assistant", r).on("analysis"));
        }
        for call in calls {
            let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or("");
            let arguments = match call.pointer("/function/arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(v) => crate::pycompat::json::dumps(v),
            };
            let mut msg = Message::new("assistant", arguments).on("commentary").to(format!("functions.{name}"));
            msg.content_type = Some("json".into());
            out.push(msg);
        }
        return Ok(());
    }
    if role == "tool" {
        let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
        let name = names.get(id).map_or("", String::as_str);
        let mut msg =
            Message::new("tool", flatten(m.get("content")).unwrap_or_default()).on("commentary").to("assistant".into());
        msg.name = Some(format!("functions.{name}"));
        out.push(msg);
        return Ok(());
    }
    if let (Some(r), "assistant") = (reasoning, role) {
        out.push(Message::new("assistant", r).on("analysis"));
    }
    let parts: Vec<String> = match m.get("content") {
        Some(Value::Array(items)) if !items.is_empty() => {
            items.iter().map(|p| p.get("text").and_then(Value::as_str).unwrap_or("").to_string()).collect()
        }
        Some(Value::String(s)) => vec![s.clone()],
        _ => vec![String::new()],
    };
    match role {
        "assistant" if !parts[0].is_empty() => {
            out.push(Message { role: "assistant", parts, ..Message::default() }.on("final"));
        }
        "assistant" => {}
        "system" | "developer" => {
            if let Some(text) = flatten(m.get("content")) {
                out.push(Message::new("developer", developer_text(Some(&text), &[])));
            }
        }
        _ => {
            let Some(&role) = ROLES.iter().find(|r| **r == role) else { return Err(unknown_role(role)) };
            out.push(Message { role, parts, ..Message::default() });
        }
    }
    Ok(())
}
