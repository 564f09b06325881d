//! Chat prompts of vLLM's `cohere` tokenizer mode (`CohereRenderer`): the
//! conversation parsed with the "openai" content format, mapped onto
//! cohere-melody's config (`_build_render_config`), written by melody's
//! templates (`template::cohere`), then tokenized as a plain prompt.

use serde_json::{Map, Value};

use super::messages;
use crate::error::ApiError;
use crate::model::TokenizerMode;
use crate::parse::context::ChatContext;
use crate::pycompat::json::{dumps_with, DumpOptions};
use crate::pycompat::repr::{repr_str, repr_value};
use crate::pycompat::{truthy, type_name};
use crate::served::Core;
use crate::template::cohere::{self, Block, Config, Format, Message, ReasoningType, Role, Tool, ToolCall};
use crate::template::ContentFormat;

/// The kwargs the renderer reads itself; the rest become template variables.
const CONSUMED: [&str; 23] = [
    "cohere_format",
    "template_id",
    "template_jinja",
    "template",
    "use_jinja",
    "documents",
    "available_tools",
    "tools",
    "reasoning_type",
    "thinking",
    "dev_instruction",
    "response_format",
    "json_schema",
    "json_mode",
    "safety_mode",
    "citation_quality",
    "citation_options",
    "skip_preamble",
    "grounding",
    "platform_instruction",
    "_messages_citations",
    "_position_to_source",
    "_tool_message_v2_content",
];

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message)
}

/// Python's `str()` of a JSON value.
fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => repr_value(other),
    }
}

/// melody's config error for a field of the wrong JSON type (serde's wording).
fn wrong_type<T: serde::de::DeserializeOwned>(path: &str, value: &Value) -> Result<T, ApiError> {
    serde_json::from_value(value.clone()).map_err(|e| bad(format!("Invalid config: {path}: {e}")))
}

/// A case-insensitive melody enum, upper-cased as its templates read it.
fn setting(path: &str, kind: &str, value: &str, allowed: &[&'static str]) -> Result<&'static str, ApiError> {
    let lower = value.to_lowercase();
    allowed.iter().find(|a| **a == lower).map(|a| upper(a)).ok_or_else(|| {
        bad(format!("Invalid config: {path}: invalid {kind} '{value}', expected one of: {}", allowed.join(", ")))
    })
}

fn upper(value: &str) -> &'static str {
    match value {
        "enabled" => "ENABLED",
        "disabled" => "DISABLED",
        "none" => "NONE",
        "strict" => "STRICT",
        "contextual" => "CONTEXTUAL",
        "off" => "OFF",
        "on" => "ON",
        _ => "UNKNOWN",
    }
}

/// Python iteration over a JSON value (`for d in documents`).
fn py_iter(value: &Value) -> Result<Vec<Value>, ApiError> {
    match value {
        Value::Array(items) => Ok(items.clone()),
        Value::String(s) => Ok(s.chars().map(|c| Value::String(c.to_string())).collect()),
        Value::Object(o) => Ok(o.keys().map(|k| Value::String(k.clone())).collect()),
        other => Err(bad(format!("'{}' object is not iterable", type_name(other)))),
    }
}

fn role(value: Option<&Value>) -> Result<Role, ApiError> {
    let name = value.and_then(Value::as_str).unwrap_or("user").to_lowercase();
    match name.as_str() {
        "assistant" | "chatbot" => Ok(Role::Chatbot),
        "developer" | "system" => Ok(Role::System),
        "user" => Ok(Role::User),
        "tool" => Ok(Role::Tool),
        _ => Err(bad(format!(
            "Unsupported message role for the cohere renderer: {}. Expected one of: system, developer, user, assistant, chatbot, tool.",
            repr_str(&name)
        ))),
    }
}

/// `_content_blocks`: a conversation message's content as melody blocks.
fn blocks(content: Option<&Value>) -> Vec<Block> {
    let parts = match content {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::String(s)) => return vec![Block::Text(s.clone())],
        Some(Value::Array(parts)) => parts,
        Some(other) => return vec![Block::Text(py_str(other))],
    };
    let text_of = |v: Option<&Value>| v.map(py_str).unwrap_or_default();
    parts
        .iter()
        .map(|part| {
            let Some(p) = part.as_object() else { return Block::Text(py_str(part)) };
            match p.get("type").and_then(Value::as_str).unwrap_or("text") {
                "text" | "input_text" | "output_text" | "refusal" => Block::Text(text_of(p.get("text"))),
                "thinking" => Block::Thinking(text_of(p.get("thinking"))),
                "image" => Block::Image(p.get("template_placeholder").map_or("<image>".into(), py_str)),
                "document" => match p.get("document") {
                    Some(Value::Object(doc)) => Block::Document(doc.clone()),
                    other => Block::Text(ascii_dumps(other.unwrap_or(&Value::Null))),
                },
                "tool_reference" => {
                    Block::Text(p.get("name").filter(|n| truthy(n)).or(p.get("text")).map(py_str).unwrap_or_default())
                }
                kind => {
                    let text = p.get("text").filter(|t| truthy(t)).or(p.get(kind)).filter(|t| truthy(t));
                    Block::Text(match text {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => ascii_dumps(other),
                        None => String::new(),
                    })
                }
            }
        })
        .collect()
}

/// `_normalize_tool_call`: arguments as JSON text.
fn tool_call(call: &Value) -> ToolCall {
    let function = call.get("function").filter(|f| truthy(f));
    let field = |key: &str| function.and_then(|f| f.get(key));
    let name = field("name").filter(|n| truthy(n)).or(call.get("name").filter(|n| truthy(n)));
    let args = match field("arguments").filter(|a| !a.is_null()) {
        Some(a) => a.clone(),
        None => call.get("arguments").cloned().unwrap_or(Value::Object(Map::new())),
    };
    let parameters = match args {
        Value::String(s) => s,
        other => crate::pycompat::json::dumps(&other),
    };
    ToolCall {
        id: call.get("id").filter(|i| truthy(i)).map(py_str).unwrap_or_default(),
        name: name.map(py_str).unwrap_or_default(),
        parameters,
    }
}

fn melody_messages(conversation: &[Value]) -> Result<Vec<Message>, ApiError> {
    let mut out = Vec::with_capacity(conversation.len());
    for msg in conversation {
        let role = role(msg.get("role"))?;
        let mut content = blocks(msg.get("content"));
        let reasoning = msg.get("reasoning").filter(|r| truthy(r)).or(msg.get("reasoning_content"));
        if let Some(r) = reasoning.filter(|r| truthy(r)) {
            if role == Role::Chatbot {
                content.insert(0, Block::Thinking(py_str(r)));
            }
        }
        let calls = msg.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        out.push(Message {
            role,
            content,
            tool_calls: calls.iter().map(tool_call).collect(),
            tool_call_id: msg.get("tool_call_id").filter(|i| truthy(i)).map(py_str),
        });
    }
    Ok(out)
}

/// `_document_to_melody`.
fn document(doc: &Value) -> Result<Map<String, Value>, ApiError> {
    match doc {
        Value::String(s) => Ok(Map::from_iter([("text".to_string(), Value::String(s.clone()))])),
        Value::Object(o) => match o.get("data") {
            Some(Value::Object(data)) => {
                let mut payload = data.clone();
                if let Some(id) = o.get("id").filter(|i| !i.is_null()) {
                    payload.entry("id").or_insert_with(|| id.clone());
                }
                Ok(payload)
            }
            _ => Ok(o.clone()),
        },
        other => Err(bad(format!("Unsupported document type: {}", type_name(other)))),
    }
}

/// `_tool_to_melody`, then melody's own field checks.
fn tool(i: usize, value: &Value) -> Result<Tool, ApiError> {
    let Some(t) = value.as_object() else {
        return Err(bad(format!("Unsupported tool type: {}", type_name(value))));
    };
    let function = match t.get("function") {
        Some(Value::Object(f)) => f,
        _ => t,
    };
    let name = function.get("name").cloned().unwrap_or(Value::String(String::new()));
    let description = function.get("description").filter(|d| truthy(d)).cloned().unwrap_or(Value::from(""));
    let parameters = function.get("parameters").filter(|p| truthy(p)).cloned().unwrap_or(Value::Object(Map::new()));
    Ok(Tool {
        name: wrong_type(&format!("available_tools[{i}].name"), &name)?,
        description: wrong_type(&format!("available_tools[{i}].description"), &description)?,
        parameters: wrong_type(&format!("available_tools[{i}].parameters"), &parameters)?,
    })
}

/// `_normalize_cmd4_grounding`.
fn grounding(value: &Value) -> Result<&'static str, ApiError> {
    let Value::String(s) = value else {
        return Err(bad(format!("'{}' object has no attribute 'lower'", type_name(value))));
    };
    match s.to_lowercase().as_str() {
        "fast" | "accurate" | "on" | "enabled" => Ok("ENABLED"),
        "off" | "disabled" => Ok("DISABLED"),
        "unknown" => Ok("UNKNOWN"),
        _ => Err(bad(format!(
            "Unrecognized cmd4 grounding value: {}. Expected one of ENABLED / DISABLED / FAST / ACCURATE / OFF (from citation_options.mode), or the direct melody values enabled / disabled / unknown.",
            repr_str(s)
        ))),
    }
}

/// `json.dumps` with its defaults (ASCII only).
fn ascii_dumps(value: &Value) -> String {
    dumps_with(value, &DumpOptions { ensure_ascii: true, ..Default::default() })
}

/// A schema as melody takes it: text, or `json.dumps` of an object.
fn schema_text(schema: &Value) -> String {
    match schema {
        Value::String(s) => s.clone(),
        other => ascii_dumps(other),
    }
}

/// `_build_render_config`.
fn config(
    conversation: &[Value],
    kwargs: &Map<String, Value>,
    chat_template: Option<&str>,
) -> Result<Config, ApiError> {
    let format = match kwargs.get("cohere_format") {
        None => Format::Cmd4,
        Some(Value::String(f)) if f == "cmd4" => Format::Cmd4,
        Some(Value::String(f)) if f == "cmd3" => Format::Cmd3,
        Some(other) => {
            return Err(bad(format!("Invalid cohere_format={}; expected one of ('cmd3', 'cmd4')", repr_value(other))))
        }
    };
    for key in ["template_jinja", "template"] {
        if kwargs.get(key).is_some_and(|v| !v.is_null()) {
            return Err(bad(format!(
                "chat_template_kwargs.'{key}' is not accepted in vLLM (it is a Cohere-only field); pass the template body via the standard 'chat_template' request field instead (requires --trust-request-chat-template)."
            )));
        }
    }
    let get = |key: &str| kwargs.get(key).filter(|v| !v.is_null());
    let mut c = Config::new(format);
    c.messages = melody_messages(conversation)?;
    if let Some(id) = kwargs.get("template_id").filter(|v| truthy(v)) {
        c.template_id = Some(wrong_type("template_id", id)?);
    }
    c.template_jinja = chat_template.filter(|t| !t.is_empty()).map(str::to_string);
    if let Some(docs) = kwargs.get("documents").filter(|d| truthy(d)) {
        c.documents = py_iter(docs)?.iter().map(document).collect::<Result<_, _>>()?;
    }
    let tools = kwargs.get("available_tools").filter(|t| truthy(t)).or(kwargs.get("tools").filter(|t| truthy(t)));
    if let Some(tools) = tools {
        c.tools = py_iter(tools)?.iter().enumerate().map(|(i, t)| tool(i, t)).collect::<Result<_, _>>()?;
    }
    let reasoning = match (get("reasoning_type"), kwargs.get("thinking")) {
        (Some(rt), _) => Some(py_str(rt)),
        (None, Some(thinking)) => {
            let t = match thinking {
                Value::Object(o) => o.get("type"),
                other => Some(other),
            };
            t.and_then(Value::as_str).filter(|t| matches!(*t, "enabled" | "disabled")).map(str::to_string)
        }
        _ => None,
    };
    if let Some(r) = reasoning {
        let allowed = ["unknown", "enabled", "disabled"];
        c.reasoning = Some(match setting("reasoning_type", "ReasoningType", &r, &allowed)? {
            "ENABLED" => ReasoningType::Enabled,
            "DISABLED" => ReasoningType::Disabled,
            _ => ReasoningType::Unknown,
        });
    }
    c.dev_instruction = get("dev_instruction").map(py_str);
    if let Some(rf) = get("response_format") {
        let Some(rf) = rf.as_object() else {
            return Err(bad("dictionary update sequence element #0 has length 1; 2 is required"));
        };
        match rf.get("type").and_then(Value::as_str) {
            Some("json_object") => c.json_mode = true,
            Some("json_schema" | "json") => {
                let mut schema = rf.get("schema").filter(|s| truthy(s)).or(rf.get("json_schema"));
                if let Some(inner) = schema.and_then(Value::as_object).and_then(|s| s.get("schema")) {
                    schema = Some(inner);
                }
                c.json_schema = schema.filter(|s| !s.is_null()).map(schema_text);
            }
            _ => {}
        }
    }
    if let Some(js) = get("json_schema") {
        c.json_schema = Some(schema_text(js));
    }
    if let Some(mode) = kwargs.get("json_mode") {
        c.json_mode = truthy(mode);
    }
    match format {
        Format::Cmd3 => {
            if let Some(sm) = get("safety_mode") {
                let allowed = ["unknown", "none", "strict", "contextual"];
                c.safety_mode = Some(setting("safety_mode", "SafetyMode", &py_str(sm).to_lowercase(), &allowed)?);
            }
            let mut quality = get("citation_quality").map(py_str);
            if quality.is_none() {
                let mode = kwargs.get("citation_options").filter(|o| truthy(o)).and_then(|o| o.get("mode"));
                quality = mode
                    .filter(|m| !m.is_null())
                    .map(|m| if py_str(m).to_lowercase() != "off" { "on" } else { "off" }.to_string());
            }
            if let Some(q) = quality {
                c.citation_quality =
                    setting("citation_quality", "CitationQuality", &q.to_lowercase(), &["unknown", "off", "on"])?;
            }
            if let Some(skip) = kwargs.get("skip_preamble") {
                c.skip_preamble = truthy(skip);
            }
        }
        Format::Cmd4 => {
            if let Some(g) = get("grounding") {
                c.grounding = grounding(g)?;
            } else if let Some(options) = kwargs.get("citation_options").filter(|o| truthy(o)) {
                if let Some(mode) = options.as_object().and_then(|o| o.get("mode")).filter(|m| !m.is_null()) {
                    c.grounding = grounding(mode)?;
                }
            }
            c.platform_instruction = get("platform_instruction").map(py_str);
        }
    }
    c.extra =
        kwargs.iter().filter(|(k, _)| !CONSUMED.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    Ok(c)
}

impl Core {
    pub(crate) fn writes_cohere(&self) -> bool {
        self.model.mode == TokenizerMode::Cohere
    }

    /// `CohereRenderer.render_messages` up to the prompt text.
    pub(crate) fn cohere_prompt(
        &self,
        messages: &[Value],
        ctx: &ChatContext,
        tools: Option<&[Value]>,
        chat_template: Option<&str>,
    ) -> Result<String, ApiError> {
        let conversation = messages::conversation(messages, ContentFormat::OpenAi)?;
        // The chat parameters' defaults under the request's kwargs.
        let mut kwargs = Map::new();
        if let Some(tools) = super::tools_keyword(ctx, tools) {
            kwargs.insert("tools".into(), tools);
        }
        kwargs.insert("tokenize".into(), Value::Bool(false));
        for (k, v) in &ctx.template_kwargs {
            kwargs.insert(k.clone(), v.clone());
        }
        let config = config(&conversation, &kwargs, chat_template)?;
        cohere::render(&config).map_err(|e| bad(e.to_string()))
    }
}
