//! The xgrammar structural tags vLLM puts in `structured_outputs` when a
//! tool choice is forced (`required` or a named function), per format.

use serde_json::{json, Value};

use super::pyjson::dumps;

/// A tool's argument schema for a tag: the parameters when the tool is
/// `strict`, else `true` (anything).
fn allowed_tools<'a>(tools: &'a [Value], only: Option<&'a str>) -> impl Iterator<Item = (&'a str, Value)> + 'a {
    tools.iter().filter_map(move |tool| {
        let f = tool.get("function")?;
        let name = f.get("name")?.as_str()?;
        if only.is_some_and(|o| o != name) {
            return None;
        }
        let strict = f.get("strict").and_then(Value::as_bool) == Some(true);
        let schema = if strict { f.get("parameters").cloned().unwrap_or(Value::Bool(true)) } else { Value::Bool(true) };
        Some((name, schema))
    })
}

fn content(schema: Value, style: &str) -> Value {
    json!({"type": "json_schema", "json_schema": schema, "style": style, "any_order": false, "max_whitespace_cnt": null, "excludes": []})
}

/// Hermes (`<tool_call>{"name": ..., "arguments": ...}</tool_call>`): every
/// allowed tool, with and without the newlines.
pub fn hermes(tools: &[Value], only: Option<&str>, stop_after_first: bool) -> String {
    let mut tags = Vec::new();
    for (name, schema) in allowed_tools(tools, only) {
        let c = content(schema, "json");
        for (open, close) in [("<tool_call>\n", "}\n</tool_call>"), ("<tool_call>", "}</tool_call>")] {
            let begin = format!("{open}{{\"name\": \"{name}\", \"arguments\": ");
            tags.push(json!({"type": "tag", "begin": begin, "content": c.clone(), "end": close}));
        }
    }
    dumps(&json!({
        "type": "structural_tag",
        "format": {"type": "tags_with_separator", "tags": tags, "separator": "", "at_least_one": true, "stop_after_first": stop_after_first}
    }))
}

/// Qwen3-Coder XML (`<tool_call>\n<function=NAME>\n...`): a single tag for a
/// named tool, triggered tags for `required`.
pub fn qwen3_coder(tools: &[Value], only: Option<&str>, stop_after_first: bool) -> String {
    let tag = |name: &str, schema: Value| {
        json!({
            "type": "tag",
            "begin": format!("<tool_call>\n<function={name}>\n"),
            "content": content(schema, "qwen_xml"),
            "end": "\n</function>\n</tool_call>"
        })
    };
    let format = match only {
        Some(_) => allowed_tools(tools, only).map(|(n, s)| tag(n, s)).next().unwrap_or(Value::Null),
        None => json!({
            "type": "triggered_tags",
            "triggers": ["<tool_call>\n<function="],
            "tags": allowed_tools(tools, None).map(|(n, s)| tag(n, s)).collect::<Vec<_>>(),
            "at_least_one": true,
            "stop_after_first": stop_after_first,
            "excludes": ["<think>", "</think>"]
        }),
    };
    dumps(&json!({"type": "structural_tag", "format": format}))
}

/// MiniMax-M2 (`<minimax:tool_call>\n<invoke name="NAME">\n...`): the
/// wrapper as constant strings around the allowed tools' invoke tags.
pub fn minimax(tools: &[Value], only: Option<&str>, stop_after_first: bool) -> String {
    let tags: Vec<Value> = allowed_tools(tools, only)
        .map(|(name, schema)| {
            json!({
                "type": "tag",
                "begin": format!("<invoke name=\"{name}\">\n"),
                "content": content(schema, "minimax_xml"),
                "end": "</invoke>\n"
            })
        })
        .collect();
    dumps(&json!({
        "type": "structural_tag",
        "format": {"type": "sequence", "elements": [
            {"type": "const_string", "value": "\n<minimax:tool_call>\n"},
            {"type": "tags_with_separator", "tags": tags, "separator": "", "at_least_one": true, "stop_after_first": stop_after_first},
            {"type": "const_string", "value": "</minimax:tool_call>"}
        ]}
    }))
}

/// The JSON schema forcing a tool choice for formats without a structural
/// tag (`get_json_schema_from_tools`): a named tool's parameters, or an
/// array of `{name, parameters}` for `required`.
pub fn json_schema(tools: &[Value], only: Option<&str>, parallel: bool) -> Value {
    let params =
        |f: &Value| f.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object", "properties": {}}));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}),
            json!({"type": "function", "function": {"name": "b", "strict": true, "parameters": {"type": "object"}}}),
        ]
    }

    #[test]
    fn minimax_wraps_invoke_tags_in_the_tool_call_block() {
        let tag: Value = serde_json::from_str(&minimax(&tools(), None, false)).unwrap();
        let elements = &tag["format"]["elements"];
        assert_eq!(elements[0]["value"], "\n<minimax:tool_call>\n");
        assert_eq!(elements[2]["value"], "</minimax:tool_call>");
        let tags = elements[1]["tags"].as_array().unwrap();
        assert_eq!(tags[0]["begin"], "<invoke name=\"a\">\n");
        // Only a strict tool pins its schema.
        assert_eq!(tags[0]["content"]["json_schema"], true);
        assert_eq!(tags[1]["content"]["json_schema"], json!({"type": "object"}));
        assert_eq!(elements[1]["stop_after_first"], false);
    }

    #[test]
    fn minimax_named_keeps_only_that_tool() {
        let tag: Value = serde_json::from_str(&minimax(&tools(), Some("b"), true)).unwrap();
        let list = &tag["format"]["elements"][1];
        assert_eq!(list["tags"].as_array().unwrap().len(), 1);
        assert_eq!(list["stop_after_first"], true);
    }
}
