//! `K2HorizonToolParser`: one `<ifm|tool_calls>` group of
//! `<ifm|tool_call>` bodies, each a JSON object or a name with XML
//! arguments (optionally typed). Any error leaves the whole text as content.
//! Streams hold text that may become the group's opener, then send the
//! group's calls at once when it closes.

use serde_json::{Map, Value};

use super::TOOL_CALLS_START;
use crate::error::ApiError;
use crate::parse::coerce::{coerce_str, schema_types};
use crate::parse::plugin::FailureSlot;
use crate::parse::{ChatContext, Extracted, FunctionCall, Ids, Snapshot, Texts, ToolChoice, ToolParser};
use crate::pycompat::json::{dumps, loads, partial_tag_overlap};
use crate::pycompat::re::Pattern;
use crate::pycompat::repr::repr_value;
use crate::wire::response::{Delta, DeltaToolCall};

const TOOL_CALLS_END: &str = "</ifm|tool_calls>";
const ARG_KEY_START: &str = "<ifm|arg_key>";
const ARG_MARKERS: [&str; 6] = [
    ARG_KEY_START,
    "</ifm|arg_key>",
    "<ifm|arg_type>",
    "</ifm|arg_type>",
    "<ifm|arg_value>",
    "</ifm|arg_value>",
];

fn call_pattern() -> &'static Pattern {
    static P: std::sync::OnceLock<Pattern> = std::sync::OnceLock::new();
    P.get_or_init(|| Pattern::new(r"(?s)<ifm\|tool_call>(.*?)</ifm\|tool_call>"))
}

fn arg_pattern() -> &'static Pattern {
    static P: std::sync::OnceLock<Pattern> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        Pattern::new(
            r"(?s)<ifm\|arg_key>(.*?)</ifm\|arg_key>\s*(?:<ifm\|arg_type>(.*?)</ifm\|arg_type>\s*)?<ifm\|arg_value>(.*?)</ifm\|arg_value>",
        )
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Xml,
    XmlTyped,
}

/// Python's `str.strip()`.
fn strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

pub(super) struct K2Tools {
    tools: Vec<Value>,
    tool_choice: ToolChoice,
    /// `_request_tool_format`: the format, or the `ValueError` it raises.
    format: Result<Format, ApiError>,
    failure: FailureSlot,
    /// The streamed text from the cursor on (`_stream_text[cursor:]`).
    text: String,
    /// The text starts at the group's opener.
    in_group: bool,
    resolved: bool,
    pending_content: String,
    content_seen: bool,
}

/// A call's rejection (`ValueError`, `JSONDecodeError`, `TypeError`).
struct Rejected;

impl K2Tools {
    pub(super) fn new(ctx: &ChatContext) -> K2Tools {
        let format = ctx.template_kwargs.get("tool_call_format").cloned().unwrap_or(Value::from("xml"));
        let format = match format.as_str() {
            Some("json") => Ok(Format::Json),
            Some("xml") => Ok(Format::Xml),
            Some("xml_typed") => Ok(Format::XmlTyped),
            _ => Err(ApiError::bad_request(format!(
                "Unsupported tool_call_format {}. Supported values: json, xml, xml_typed.",
                repr_value(&format)
            ))),
        };
        K2Tools {
            tools: ctx.tools.clone(),
            tool_choice: ctx.tool_choice.clone(),
            format,
            failure: FailureSlot::default(),
            text: String::new(),
            in_group: false,
            resolved: false,
            pending_content: String::new(),
            content_seen: false,
        }
    }

    fn checked_format(&self) -> Option<Format> {
        match &self.format {
            Ok(f) => Some(*f),
            Err(e) => {
                self.failure.record(e.clone());
                None
            }
        }
    }

    fn properties(&self, name: &str) -> Option<&Map<String, Value>> {
        self.tools.iter().find_map(|t| {
            let f = t.get("function")?;
            (f.get("name")?.as_str()? == name).then(|| f.get("parameters")?.get("properties")?.as_object()).flatten()
        })
    }

    /// `_validate_tool_name`.
    fn validate_name(&self, name: Option<&Value>) -> Result<String, Rejected> {
        let name = name.and_then(Value::as_str).filter(|n| !n.is_empty()).ok_or(Rejected)?;
        if name.chars().any(|c| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)) {
            return Err(Rejected);
        }
        let known = self.tools.iter().any(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(name));
        if !self.tools.is_empty() && !known {
            return Err(Rejected);
        }
        if matches!(&self.tool_choice, ToolChoice::Named(n) if n != name) {
            return Err(Rejected);
        }
        Ok(name.to_string())
    }

    /// `_parse_json_call`.
    fn json_call(&self, body: &str) -> Result<(String, Map<String, Value>), Rejected> {
        let Some(Value::Object(call)) = loads(strip(body)) else { return Err(Rejected) };
        let name = self.validate_name(call.get("name"))?;
        let arguments = match call.get("arguments") {
            None => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => return Err(Rejected),
        };
        let properties = self.properties(&name);
        let arguments = arguments
            .into_iter()
            .map(|(k, v)| {
                let schema = properties.and_then(|p| p.get(&k));
                let v = match schema {
                    Some(s @ Value::Object(_)) => {
                        let raw = v.as_str().map_or_else(|| dumps(&v), str::to_string);
                        coerce_str(&raw, &schema_types(Some(s)))
                    }
                    _ => v,
                };
                (k, v)
            })
            .collect();
        Ok((name, arguments))
    }

    /// `_parse_xml_call`.
    fn xml_call(&self, body: &str, format: Format) -> Result<(String, Map<String, Value>), Rejected> {
        let Some(first) = body.find(ARG_KEY_START) else {
            if ARG_MARKERS.iter().any(|m| body.contains(m)) {
                return Err(Rejected);
            }
            return Ok((self.validate_name(Some(&Value::from(strip(body))))?, Map::new()));
        };
        let name = self.validate_name(Some(&Value::from(strip(&body[..first]))))?;
        let properties = self.properties(&name);
        let mut arguments = Map::new();
        let mut position = first;
        for m in arg_pattern().finditer(&body[first..]) {
            let (start, end) = (first + m.start, first + m.end);
            if !strip(&body[position..start]).is_empty() {
                return Err(Rejected);
            }
            let key = strip(m.group(1).unwrap_or(""));
            if key.is_empty() || arguments.contains_key(key) {
                return Err(Rejected);
            }
            let explicit = m.group(2).map(strip);
            match (format, explicit) {
                (Format::Xml, Some(_)) => return Err(Rejected),
                (Format::XmlTyped, None | Some("")) => return Err(Rejected),
                _ => {}
            }
            let value = coerce_xml_value(m.group(3).unwrap_or(""), properties.and_then(|p| p.get(key)), explicit);
            arguments.insert(key.to_string(), value);
            position = end;
        }
        if position == first || !strip(&body[position..]).is_empty() {
            return Err(Rejected);
        }
        Ok((name, arguments))
    }

    /// `extract_tool_calls` once the format is known.
    fn extract(&self, text: &str, format: Format) -> Extracted {
        let none = || Extracted { tools_called: false, calls: Vec::new(), content: content_or_none(text) };
        if self.tool_choice == ToolChoice::None {
            return none();
        }
        let Some(group_start) = text.find(TOOL_CALLS_START) else { return none() };
        let body_start = group_start + TOOL_CALLS_START.len();
        let Some(group_end) = text[body_start..].find(TOOL_CALLS_END).map(|i| body_start + i) else { return none() };
        let body = &text[body_start..group_end];
        let matches = call_pattern().finditer(body);
        if matches.is_empty() || !strip(&call_pattern().remove(body)).is_empty() {
            return none();
        }
        let mut calls = Vec::new();
        for m in &matches {
            let body = m.group(1).unwrap_or("");
            let parsed = match format {
                Format::Json => self.json_call(body),
                _ => self.xml_call(body, format),
            };
            let Ok((name, arguments)) = parsed else { return none() };
            calls.push(FunctionCall { id: None, name, arguments: dumps(&Value::Object(arguments)) });
        }
        let content = format!("{}{}", &text[..group_start], &text[group_end + TOOL_CALLS_END.len()..]);
        Extracted { tools_called: true, calls, content: content_or_none(&content) }
    }

    /// `_emit_content`: whitespace before the first real content waits.
    fn emit(&mut self, addition: &str, last: bool) -> Option<String> {
        if !addition.is_empty() {
            if self.content_seen {
                return Some(addition.to_string());
            }
            self.pending_content.push_str(addition);
            if !strip(&self.pending_content).is_empty() {
                self.content_seen = true;
                return Some(std::mem::take(&mut self.pending_content));
            }
        }
        if last {
            self.pending_content.clear();
        }
        None
    }
}

/// `_content_or_none`.
fn content_or_none(content: &str) -> Option<String> {
    (!strip(content).is_empty()).then(|| content.to_string())
}

/// `_coerce_xml_value`: the schema's types, narrowed (or replaced, without
/// a schema) by the argument's own type tag.
fn coerce_xml_value(value: &str, schema: Option<&Value>, explicit: Option<&str>) -> Value {
    let explicit = explicit.filter(|t| !t.is_empty()).map(|t| t.split('[').next().unwrap_or("").trim().to_lowercase());
    let mut types = schema_types(schema);
    match schema {
        Some(Value::Object(_)) => {
            if let Some(t) = explicit.as_ref().filter(|t| types.contains(t)) {
                if types.len() > 1 {
                    types = vec![t.clone()];
                }
            }
        }
        _ if explicit.as_deref() == Some("any") => return Value::String(value.to_string()),
        _ => {
            if let Some(t) = explicit {
                types = vec![t];
            }
        }
    }
    let raw = if types.iter().any(|t| t == "string") { value } else { strip(value) };
    coerce_str(raw, &types)
}

fn message(content: Option<String>, tool_calls: Vec<DeltaToolCall>) -> Option<Delta> {
    (content.is_some() || !tool_calls.is_empty()).then(|| Delta { content, tool_calls, ..Default::default() })
}

impl ToolParser for K2Tools {
    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        match self.checked_format() {
            Some(format) => self.extract(text, format),
            None => Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) },
        }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let format = self.checked_format()?;
        if self.tool_choice == ToolChoice::None || self.resolved {
            return message(self.emit(t.delta, false), Vec::new());
        }
        self.text.push_str(t.delta);
        let mut content = None;
        if !self.in_group {
            let Some(start) = self.text.find(TOOL_CALLS_START) else {
                let sendable = self.text.len() - partial_tag_overlap(&self.text, TOOL_CALLS_START);
                let sent: String = self.text.drain(..sendable).collect();
                return message(self.emit(&sent, false), Vec::new());
            };
            self.in_group = true;
            let before: String = self.text.drain(..start).collect();
            content = self.emit(&before, false);
        }
        let body_start = TOOL_CALLS_START.len();
        let Some(end) = self.text[body_start..].find(TOOL_CALLS_END) else { return message(content, Vec::new()) };
        let group_end = body_start + end + TOOL_CALLS_END.len();
        let text = std::mem::take(&mut self.text);
        let parsed = self.extract(&text[..group_end], format);
        self.resolved = true;
        if !parsed.tools_called {
            let failed = self.emit(&text, false);
            return message(join(content, failed), Vec::new());
        }
        let calls = parsed
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| DeltaToolCall::opening(i as i64, crate::parse::random_tool_call_id(), c.name, Some(c.arguments)))
            .collect();
        let suffix = self.emit(&text[group_end..], false);
        message(join(content, suffix).filter(|c| !c.is_empty()), calls)
    }

    fn supports_required_and_named(&self) -> bool {
        false
    }

    fn engine_based(&self) -> bool {
        true
    }

    fn finish_streaming(&mut self) -> Option<Delta> {
        let rest = if self.resolved { String::new() } else { std::mem::take(&mut self.text) };
        self.resolved = true;
        message(self.emit(&rest, true), Vec::new())
    }

    fn failure(&self) -> Option<ApiError> {
        self.failure.get()
    }

    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        Some(self)
    }
}

fn join(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or_default() + &b.unwrap_or_default()),
    }
}

crate::impl_snapshot!(K2Tools { text, in_group, resolved, pending_content, content_seen });
