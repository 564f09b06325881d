//! Inkling's chat encoding (vLLM's `inkling` mode,
//! `renderers/inkling_encoding.py`): no template and no text form, a chat is
//! written straight to token ids, one typed block per content part:
//!
//! ```text
//! <|message_ROLE|>[author]<|content_KIND|>text<|end_message|>
//! ```
//!
//! with the tools declared first, a thinking-effort system block before the
//! first conversational message, every assistant turn closed by
//! `<|content_model_end_sampling|>`, and `<|message_model|>` as the
//! generation prompt. The rules and the cases that show them are in
//! `tests/models/inkling/RENDERER.md`.

use serde_json::{json, Map, Value};

use crate::pycompat::json::{dumps_str, dumps_with, DumpOptions};
use crate::pycompat::repr::{repr_float, repr_str};

/// The block markers the encoding writes, by the spellings its vocabulary
/// may use (the Hugging Face vocabulary names the XML slot an unused token).
const MARKERS: [(Marker, &[&str]); 13] = [
    (Marker::User, &["<|message_user|>"]),
    (Marker::Model, &["<|message_model|>"]),
    (Marker::System, &["<|message_system|>"]),
    (Marker::Tool, &["<|message_tool|>"]),
    (Marker::Text, &["<|content_text|>"]),
    (Marker::Image, &["<|content_image|>"]),
    (Marker::EndSampling, &["<|content_model_end_sampling|>"]),
    (Marker::Thinking, &["<|content_thinking|>"]),
    (Marker::AudioInput, &["<|content_audio_input|>"]),
    (Marker::Xml, &["<|content_xml|>", "<|unused_200024|>"]),
    (Marker::InvokeToolJson, &["<|content_invoke_tool_json|>"]),
    (Marker::EndMessage, &["<|end_message|>"]),
    (Marker::AudioEnd, &["<|audio_end|>"]),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    User,
    Model,
    System,
    Tool,
    Text,
    Image,
    EndSampling,
    Thinking,
    AudioInput,
    Xml,
    InvokeToolJson,
    EndMessage,
    AudioEnd,
}

/// What a block holds after its role marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    Xml,
    InvokeToolJson,
    Image,
    Audio,
}

/// The named reasoning efforts (`_NAMED_REASONING_EFFORT`).
const EFFORTS: [(&str, f64); 7] =
    [("none", 0.0), ("minimal", 0.1), ("low", 0.2), ("medium", 0.7), ("high", 0.9), ("xhigh", 0.99), ("max", 0.99)];
const DEFAULT_EFFORT: f64 = 0.9;
const MAX_EFFORT: f64 = 0.99;

/// Why a chat cannot be written: vLLM answers each 400 with its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EncodeError(pub String);

/// The vocabulary's ids for the markers, found when the model loads.
#[derive(Debug, Clone)]
pub struct Markers {
    ids: Vec<(Marker, u32)>,
}

impl Markers {
    /// Each marker's id by its first spelling in the vocabulary; the
    /// missing ones are named (vLLM's renderer then fails to start).
    pub fn find(id_of: impl Fn(&str) -> Option<u32>) -> Result<Markers, String> {
        let mut ids = Vec::with_capacity(MARKERS.len());
        let mut missing = Vec::new();
        for (marker, spellings) in MARKERS {
            match spellings.iter().find_map(|s| id_of(s)) {
                Some(id) => ids.push((marker, id)),
                None => missing.push(repr_str(spellings[0])),
            }
        }
        if !missing.is_empty() {
            return Err(format!("Inkling tokenizer is missing special tokens: [{}]", missing.join(", ")));
        }
        Ok(Markers { ids })
    }

    fn id(&self, marker: Marker) -> u32 {
        self.ids.iter().find(|(m, _)| *m == marker).map_or(0, |(_, id)| *id)
    }
}

/// The renderer's keywords: the effort (`None`: no effort block) and
/// whether the generation prompt is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    pub effort: Option<f64>,
    pub add_generation_prompt: bool,
}

impl Options {
    /// `_resolve_reasoning_effort` over the keywords: none given is 0.9, a
    /// name is its number, a number is itself, anything else means no block.
    pub fn from_kwargs(kwargs: &Map<String, Value>) -> Result<Options, EncodeError> {
        if kwargs.get("continue_final_message").is_some_and(crate::pycompat::truthy) {
            return Err(EncodeError("Inkling renderer does not support continue_final_message".into()));
        }
        let effort = match kwargs.get("reasoning_effort") {
            None | Some(Value::Null) => Some(DEFAULT_EFFORT),
            Some(Value::String(name)) => EFFORTS.iter().find(|(n, _)| n == name).map(|(_, e)| *e),
            Some(Value::Number(n)) => n.as_f64(),
            Some(_) => None,
        };
        let add_generation_prompt = kwargs.get("add_generation_prompt").is_none_or(crate::pycompat::truthy);
        Ok(Options { effort, add_generation_prompt })
    }
}

/// `render_inkling_messages`: the request's messages (tool-call arguments
/// as vLLM's parsing left them) and the `tools` keyword, as ids; `encode`
/// is the tokenizer's text encoding (added tokens recognised).
pub fn render(
    messages: &[Value],
    tools: Option<&Value>,
    options: Options,
    markers: &Markers,
    encode: &dyn Fn(&str) -> Vec<u32>,
) -> Result<Vec<u32>, EncodeError> {
    let mut w = Writer { ids: Vec::new(), markers, encode };
    // The request's tools, then each developer message's own.
    let mut declared: Vec<Value> = tools.and_then(Value::as_array).cloned().unwrap_or_default();
    for m in messages.iter().filter(|m| role_of(m) == Some("developer")) {
        if let Some(Value::Array(own)) = m.get("tools") {
            declared.extend(own.iter().cloned());
        }
    }
    if !declared.is_empty() {
        w.block(Marker::System, Some("tool_declare"), Kind::Xml, &declare_json(&declared)?);
    }
    let mut effort = options.effort;
    let mut call_names: Vec<(String, String)> = Vec::new();
    for message in messages {
        let role = expect_role(message)?;
        if !matches!(role, "system" | "developer") {
            if let Some(e) = effort.take() {
                w.block(Marker::System, None, Kind::Text, &effort_text(e)?);
            }
        }
        let marker = role_marker(role);
        if role == "tool" {
            let name = match message.get("name").filter(|n| crate::pycompat::truthy(n)) {
                Some(n) => py_str(n),
                None => {
                    let id = message.get("tool_call_id").filter(|i| crate::pycompat::truthy(i)).map(py_str);
                    let id = id.unwrap_or_default();
                    call_names.iter().rev().find(|(i, _)| *i == id).map(|(_, n)| n.clone()).unwrap_or_default()
                }
            };
            let text = flatten_text(message.get("content"))?;
            w.block(marker, Some(&name), Kind::Text, &text);
            continue;
        }
        if role == "assistant" {
            let reasoning = match message.get("reasoning") {
                None | Some(Value::Null) => message.get("reasoning_content"),
                given => given,
            };
            match reasoning {
                Some(Value::String(r)) if !r.is_empty() => w.block(marker, None, Kind::Thinking, r),
                Some(r) if crate::pycompat::truthy(r) => {
                    return Err(EncodeError(
                        "assistant reasoning_content must be a string for Inkling rendering".into(),
                    ))
                }
                _ => {}
            }
        }
        for (kind, text) in parts(message.get("content"))? {
            w.block(marker, None, kind, &text);
        }
        if role == "assistant" {
            let calls = message.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            for call in calls {
                let (name, args) = call_name_and_args(call)?;
                if let Some(id) = call.get("id").filter(|i| crate::pycompat::truthy(i)) {
                    call_names.push((py_str(id), name.clone()));
                }
                let body = format!("{{\"name\":{},\"args\":{}}}", dumps_str(&name), canonical(&args));
                w.block(Marker::Model, Some(&name), Kind::InvokeToolJson, &body);
            }
            w.marker(Marker::EndSampling);
        }
    }
    if let Some(e) = effort {
        w.block(Marker::System, None, Kind::Text, &effort_text(e)?);
    }
    if options.add_generation_prompt {
        w.marker(Marker::Model);
    }
    Ok(w.ids)
}

struct Writer<'a> {
    ids: Vec<u32>,
    markers: &'a Markers,
    encode: &'a dyn Fn(&str) -> Vec<u32>,
}

impl Writer<'_> {
    fn marker(&mut self, marker: Marker) {
        self.ids.push(self.markers.id(marker));
    }

    fn text(&mut self, text: &str) {
        self.ids.extend((self.encode)(text));
    }

    /// `_append_message`.
    fn block(&mut self, role: Marker, author: Option<&str>, kind: Kind, text: &str) {
        self.marker(role);
        if let Some(author) = author.filter(|a| !a.is_empty()) {
            self.text(author);
        }
        match kind {
            Kind::Image => self.marker(Marker::Image),
            Kind::Audio => {
                self.marker(Marker::AudioInput);
                self.marker(Marker::AudioEnd);
            }
            _ => {
                self.marker(match kind {
                    Kind::Thinking => Marker::Thinking,
                    Kind::Xml => Marker::Xml,
                    Kind::InvokeToolJson => Marker::InvokeToolJson,
                    _ => Marker::Text,
                });
                self.text(text);
            }
        }
        self.marker(Marker::EndMessage);
    }
}

fn role_of(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

fn role_marker(role: &str) -> Marker {
    match role {
        "user" => Marker::User,
        "assistant" => Marker::Model,
        "tool" => Marker::Tool,
        _ => Marker::System,
    }
}

/// `_expect_role`.
fn expect_role(message: &Value) -> Result<&str, EncodeError> {
    match role_of(message) {
        Some(r @ ("user" | "assistant" | "system" | "developer" | "tool")) => Ok(r),
        _ => {
            let shown = message.get("role").map_or_else(|| "None".to_string(), crate::pycompat::repr::repr_value);
            Err(EncodeError(format!(
                "unsupported Inkling message role {shown}; expected one of ['assistant', 'developer', 'system', 'tool', 'user']"
            )))
        }
    }
}

/// `str(value)`.
fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => crate::pycompat::repr::repr_value(other),
    }
}

/// `_iter_render_parts`: one (kind, text) per content part.
fn parts(content: Option<&Value>) -> Result<Vec<(Kind, String)>, EncodeError> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) if s.is_empty() => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![(Kind::Text, s.clone())]),
        Some(Value::Array(items)) => items.iter().map(part).collect(),
        Some(_) => Err(EncodeError("message content must be a string or a sequence of parts".into())),
    }
}

fn part(item: &Value) -> Result<(Kind, String), EncodeError> {
    let part = match item {
        Value::String(s) => return Ok((Kind::Text, s.clone())),
        Value::Object(o) => o,
        other => {
            let kind = match other {
                Value::Null => "NoneType",
                Value::Bool(_) => "bool",
                Value::Number(n) if n.is_f64() => "float",
                Value::Number(_) => "int",
                _ => "list",
            };
            return Err(EncodeError(format!("content part must be mapping, got {kind}")));
        }
    };
    match part.get("type") {
        None | Some(Value::Null) => Ok((Kind::Text, text_of(part))),
        Some(Value::String(t)) => match t.as_str() {
            "text" | "input_text" => Ok((Kind::Text, text_of(part))),
            "image" | "input_image" | "image_url" => Ok((Kind::Image, String::new())),
            "audio" | "input_audio" | "audio_url" => Ok((Kind::Audio, String::new())),
            other => Err(EncodeError(format!("unsupported content part type: {}", repr_str(other)))),
        },
        Some(other) => {
            Err(EncodeError(format!("unsupported content part type: {}", crate::pycompat::repr::repr_value(other))))
        }
    }
}

fn text_of(part: &Map<String, Value>) -> String {
    part.get("text").and_then(Value::as_str).unwrap_or_default().to_string()
}

/// `_flatten_text_content`: a tool result's text parts joined as they are.
fn flatten_text(content: Option<&Value>) -> Result<String, EncodeError> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        other => {
            let mut text = String::new();
            for (kind, t) in parts(other)? {
                if kind != Kind::Text {
                    let name = if kind == Kind::Image { "image" } else { "audio" };
                    return Err(EncodeError(format!(
                        "Inkling tool response content must be text, got a part of kind '{name}'"
                    )));
                }
                text.push_str(&t);
            }
            Ok(text)
        }
    }
}

/// `_thinking_effort_text`: two decimals, trailing zeros dropped.
fn effort_text(effort: f64) -> Result<String, EncodeError> {
    if !(0.0..=MAX_EFFORT).contains(&effort) {
        return Err(EncodeError(format!(
            "Inkling reasoning_effort must be in [0.0, 0.99], got {}",
            repr_float(effort)
        )));
    }
    let fixed = format!("{effort:.2}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    let text = if matches!(trimmed, "0" | "-0") { "0.0" } else { trimmed };
    Ok(format!("Thinking effort level: {text}"))
}

/// `_canonical_json`: keys sorted at every level, no spaces, raw UTF-8.
fn canonical(value: &Value) -> String {
    let opts = DumpOptions { separators: Some((",".into(), ":".into())), sort_keys: true, ..DumpOptions::default() };
    dumps_with(value, &opts)
}

/// `_tool_declare_json`: each tool as its description, name, parameters
/// and type.
fn declare_json(tools: &[Value]) -> Result<String, EncodeError> {
    let mut specs = Vec::with_capacity(tools.len());
    for tool in tools {
        let Value::Object(tool) = tool else {
            return Err(EncodeError(format!("expected mapping, got {}", crate::pycompat::type_name(tool))));
        };
        let function = match tool.get("function") {
            None => Map::new(),
            Some(Value::Object(f)) => f.clone(),
            Some(other) => {
                return Err(EncodeError(format!("expected mapping, got {}", crate::pycompat::type_name(other))))
            }
        };
        let name = function.get("name").cloned().ok_or_else(|| EncodeError("'name'".into()))?;
        let or = |key: &str, default: Value| {
            function.get(key).filter(|v| crate::pycompat::truthy(v)).cloned().unwrap_or(default)
        };
        specs.push(json!({
            "description": or("description", json!("")),
            "name": name,
            "parameters": or("parameters", json!({})),
            "type": tool.get("type").cloned().unwrap_or_else(|| json!("function")),
        }));
    }
    Ok(canonical(&Value::Array(specs)))
}

/// `_tool_call_name_and_args`: the name must be a string, the arguments
/// an object (a JSON string of one is read).
fn call_name_and_args(call: &Value) -> Result<(String, Value), EncodeError> {
    let Value::Object(call) = call else {
        return Err(EncodeError(format!("expected mapping, got {}", crate::pycompat::type_name(call))));
    };
    let function = match call.get("function") {
        None => Map::new(),
        Some(Value::Object(f)) => f.clone(),
        Some(other) => return Err(EncodeError(format!("expected mapping, got {}", crate::pycompat::type_name(other)))),
    };
    let Some(Value::String(name)) = function.get("name") else {
        return Err(EncodeError("tool call function name must be a string".into()));
    };
    let args = match function.get("arguments").filter(|a| crate::pycompat::truthy(a)) {
        None => json!({}),
        Some(Value::String(s)) if s.trim().is_empty() => json!({}),
        Some(Value::String(s)) => crate::pycompat::json::loads(s).unwrap_or(Value::Null),
        Some(other) => other.clone(),
    };
    if !args.is_object() {
        return Err(EncodeError("tool call function arguments must decode to an object".into()));
    }
    Ok((name.clone(), args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effort_text_rounds_as_python_formats() {
        let text = |e: f64| effort_text(e).unwrap().trim_start_matches("Thinking effort level: ").to_string();
        assert_eq!(text(0.5), "0.5");
        assert_eq!(text(0.05), "0.05");
        assert_eq!(text(0.004), "0.0");
        assert_eq!(text(0.005), "0.01");
        assert_eq!(text(0.125), "0.12");
        assert_eq!(text(0.135), "0.14");
        assert_eq!(text(0.0), "0.0");
        assert_eq!(text(0.99), "0.99");
        assert_eq!(effort_text(1.0).unwrap_err().0, "Inkling reasoning_effort must be in [0.0, 0.99], got 1.0");
        assert_eq!(effort_text(1e20).unwrap_err().0, "Inkling reasoning_effort must be in [0.0, 0.99], got 1e+20");
    }

    #[test]
    fn blocks_are_framed_by_markers_around_the_encoded_text() {
        let markers =
            Markers::find(|s| MARKERS.iter().position(|(_, sp)| sp.contains(&s)).map(|i| 1000 + i as u32)).unwrap();
        let encode = |t: &str| t.bytes().map(u32::from).collect::<Vec<u32>>();
        let messages = json!([{"role": "user", "content": "a"}]);
        let options = Options { effort: None, add_generation_prompt: true };
        let ids = render(messages.as_array().unwrap(), None, options, &markers, &encode).unwrap();
        // user, text, "a", end; then the model marker.
        assert_eq!(ids, vec![1000, 1004, 97, 1011, 1001]);
    }
}
