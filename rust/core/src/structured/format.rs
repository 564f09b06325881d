//! The xgrammar structural tags vLLM puts in `structured_outputs` for tool
//! calls: the format nodes every family's builder is made of, and the JSON
//! schemas forced choices get without a tag. Each family's builder (vLLM's
//! own models and xgrammar 0.2.9's builtins) lives in its family module and
//! builds the tag as vLLM asks for it: no reasoning prefix, parallel calls
//! (a single call is applied afterwards, `strict::limit_to_single_tool_call`).
//! Formats are written field by field in pydantic's `model_dump` order.

use serde_json::{json, Value};

use super::tool_tags::StrictLevel;

/// A parser's `structural_tag_model`: vLLM's key for it, the builder of
/// its tag, and the parser's `default_tool_strict_level`.
pub struct TagModel {
    pub name: &'static str,
    /// The tag for `tools` (already filtered to the named tool when forced).
    pub build: fn(&[TagTool], Choice) -> Value,
    pub default_level: StrictLevel,
}

impl std::fmt::Debug for TagModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TagModel({})", self.name)
    }
}

/// xgrammar's simplified tool choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Auto,
    Required,
    /// A named function.
    Forced,
}

/// A tool as the builders see it, `strict` already resolved
/// (`resolve_tool_strictness`).
#[derive(Debug, Clone)]
pub struct TagTool<'a> {
    pub name: &'a str,
    /// `parameters`, when it is an object.
    pub parameters: Option<&'a Value>,
    pub strict: bool,
}

impl<'a> TagTool<'a> {
    /// A request tool (`{"type": "function", "function": {...}}`); `strict`
    /// as sent (only `true` counts).
    pub fn from_request(tool: &'a Value) -> Option<TagTool<'a>> {
        let f = tool.get("function")?;
        Some(TagTool {
            name: f.get("name")?.as_str()?,
            parameters: f.get("parameters").filter(|p| p.is_object()),
            strict: f.get("strict") == Some(&Value::Bool(true)),
        })
    }

    /// `get_function_parameters`: the schema when strict, else anything.
    pub fn schema(&self) -> Value {
        match self.parameters {
            Some(p) if self.strict => p.clone(),
            _ => Value::Bool(true),
        }
    }
}

/// The `structured_outputs.structural_tag` text: vLLM dumps the tag with
/// `json.dumps` defaults, so non-ASCII (tool names, enum values) is escaped.
pub fn tag_text(format: Value) -> String {
    let opts = crate::pycompat::json::DumpOptions { ensure_ascii: true, ..Default::default() };
    crate::pycompat::json::dumps_with(&json!({"type": "structural_tag", "format": format}), &opts)
}

/// `JSONSchemaFormat`.
pub fn content(schema: Value, style: &str) -> Value {
    json!({"type": "json_schema", "json_schema": schema, "style": style, "any_order": false, "max_whitespace_cnt": null, "excludes": []})
}

pub fn const_string(value: &str) -> Value {
    json!({"type": "const_string", "value": value})
}

pub fn tag(begin: &str, content: Value, end: &str) -> Value {
    json!({"type": "tag", "begin": begin, "content": content, "end": end})
}

pub fn triggered(triggers: &[&str], tags: Vec<Value>, at_least_one: bool, excludes: &[&str]) -> Value {
    json!({"type": "triggered_tags", "triggers": triggers, "tags": tags, "at_least_one": at_least_one,
        "stop_after_first": false, "excludes": excludes})
}

pub fn separated(tags: Vec<Value>, separator: &str, stop_after_first: bool) -> Value {
    json!({"type": "tags_with_separator", "tags": tags, "separator": separator, "at_least_one": true,
        "stop_after_first": stop_after_first})
}

/// `AnyTextFormat`.
pub fn any_text(excludes: &[&str]) -> Value {
    json!({"type": "any_text", "excludes": excludes, "max_tokens": null, "max_chars": null})
}

pub fn optional(content: Value) -> Value {
    json!({"type": "optional", "content": content})
}

pub fn or(elements: Vec<Value>) -> Value {
    json!({"type": "or", "elements": elements})
}

pub fn sequence(elements: Vec<Value>) -> Value {
    json!({"type": "sequence", "elements": elements})
}

/// What text outside a call may not contain (the reasoning markers).
pub const THINK: [&str; 2] = ["<think>", "</think>"];

/// The JSON schema forcing a tool choice for formats without a structural
/// tag (`get_json_schema_from_tools`): a named tool's parameters, or an
/// array of `{name, parameters}` for `required`.
pub fn json_schema(tools: &[Value], only: Option<&str>, parallel: bool) -> Value {
    // `_params_or_empty_object`: missing, null or empty parameters.
    let params = |f: &Value| {
        f.get("parameters")
            .filter(|p| crate::pycompat::truthy(p))
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}))
    };
    if let Some(name) = only {
        return tools
            .iter()
            .filter_map(|t| t.get("function"))
            .find(|f| f.get("name").and_then(Value::as_str) == Some(name))
            .map(params)
            .unwrap_or(Value::Null);
    }
    let any_of: Vec<Value> = tools
        .iter()
        .filter_map(|t| t.get("function"))
        .map(|f| {
            let name = f.get("name").cloned().unwrap_or(Value::Null);
            json!({
                "properties": {"name": {"type": "string", "enum": [name]}, "parameters": params(f)},
                "required": ["name", "parameters"]
            })
        })
        .collect();
    let mut schema = json!({"type": "array", "minItems": 1, "items": {"type": "object", "anyOf": any_of}});
    if !parallel {
        schema["maxItems"] = json!(1);
    }
    schema
}

/// `StructuredOutputsParams` as it is serialised inside `sampling_params`.
pub fn params(json_schema: Option<Value>, structural_tag: Option<String>) -> Value {
    json!({
        "json": json_schema, "regex": null, "choice": null, "grammar": null, "json_object": null,
        "disable_any_whitespace": false, "disable_additional_properties": false,
        "whitespace_pattern": null, "structural_tag": structural_tag, "_backend": null, "_backend_was_auto": false
    })
}
