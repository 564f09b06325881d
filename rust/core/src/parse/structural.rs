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

/// The `structured_outputs.structural_tag` text: vLLM dumps the tag with
/// `json.dumps` defaults, so non-ASCII (tool names, enum values) is escaped.
fn tag_text(format: Value) -> String {
    let opts = super::pyjson::DumpOptions { ensure_ascii: true, ..Default::default() };
    super::pyjson::dumps_with(&json!({"type": "structural_tag", "format": format}), &opts)
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
    tag_text(
        json!({"type": "tags_with_separator", "tags": tags, "separator": "", "at_least_one": true, "stop_after_first": stop_after_first}),
    )
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
    tag_text(format)
}

/// Llama 3 JSON (`{"name": "NAME", "parameters": {...}}`, xgrammar's
/// builtin `llama` model): a single tag for a named tool, triggered tags for
/// `required`.
pub fn llama(tools: &[Value], only: Option<&str>, stop_after_first: bool) -> String {
    let tag = |name: &str, schema: Value| {
        json!({
            "type": "tag",
            "begin": format!("{{\"name\": \"{name}\", \"parameters\": "),
            "content": content(schema, "json"),
            "end": "}"
        })
    };
    let format = match only {
        Some(_) => allowed_tools(tools, only).map(|(n, s)| tag(n, s)).next().unwrap_or(Value::Null),
        None => json!({
            "type": "triggered_tags",
            "triggers": ["{\"name\": "],
            "tags": allowed_tools(tools, None).map(|(n, s)| tag(n, s)).collect::<Vec<_>>(),
            "at_least_one": true,
            "stop_after_first": stop_after_first,
            "excludes": ["<think>", "</think>"]
        }),
    };
    tag_text(format)
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
    tag_text(json!({"type": "sequence", "elements": [
        {"type": "const_string", "value": "\n<minimax:tool_call>\n"},
        {"type": "tags_with_separator", "tags": tags, "separator": "", "at_least_one": true, "stop_after_first": stop_after_first},
        {"type": "const_string", "value": "</minimax:tool_call>"}
    ]}))
}

/// xgrammar's `deepseek_r1` (V3, fenced JSON, calls separated by a newline)
/// and `deepseek_v3_1` builtin tags, as vLLM asks for them (no reasoning
/// prefix). `None` when vLLM leaves the request unconstrained: `auto` with
/// parallel calls and no strict tool.
pub fn deepseek(v3: bool, tools: &[Value], choice: &super::ToolChoice, parallel: bool) -> Option<String> {
    use super::deepseek::{CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END};
    use super::ToolChoice;
    let only = match choice {
        ToolChoice::Named(n) => Some(n.as_str()),
        ToolChoice::Auto | ToolChoice::Required => None,
        ToolChoice::None | ToolChoice::Null => return None,
    };
    let any_strict = tools.iter().any(|t| t.pointer("/function/strict") == Some(&Value::Bool(true)));
    if *choice == ToolChoice::Auto && parallel && !any_strict {
        return None;
    }
    let call_open = |name: &str| {
        if v3 {
            format!("{CALL_BEGIN}function<｜tool▁sep｜>{name}\n```json\n")
        } else {
            format!("{CALL_BEGIN}{name}<｜tool▁sep｜>")
        }
    };
    let (call_close, separator) = if v3 { (format!("\n```{CALL_END}"), "\n") } else { (CALL_END.to_string(), "") };
    let schema_of = |s: Value| if s.is_null() { Value::Bool(true) } else { s };
    let format = match only {
        Some(_) => {
            let (name, schema) = allowed_tools(tools, only).next()?;
            json!({"type": "tag", "begin": format!("{CALLS_BEGIN}{}", call_open(name)),
                "content": content(schema_of(schema), "json"), "end": format!("{call_close}{CALLS_END}")})
        }
        None => {
            let tags: Vec<Value> = allowed_tools(tools, None)
                .map(|(name, schema)| {
                    json!({"type": "tag", "begin": call_open(name), "content": content(schema_of(schema), "json"), "end": call_close})
                })
                .collect();
            // `limit_to_single_tool_call` stops every call list after one call.
            let list = json!({"type": "tags_with_separator", "tags": tags, "separator": separator,
                "at_least_one": true, "stop_after_first": !parallel});
            let calls = json!({"type": "tag", "begin": CALLS_BEGIN, "content": list, "end": CALLS_END});
            if *choice == ToolChoice::Auto {
                json!({"type": "triggered_tags", "triggers": [CALLS_BEGIN], "tags": [calls], "at_least_one": false,
                    "stop_after_first": !parallel, "excludes": ["<think>", "</think>"]})
            } else {
                calls
            }
        }
    };
    Some(tag_text(format))
}

/// xgrammar's `kimi` builtin tag for a forced choice (vLLM asks without
/// reasoning): the section around one named call, or around any number of
/// calls of the offered tools for `required`.
pub fn kimi(tools: &[Value], only: Option<&str>, stop_after_first: bool) -> Option<String> {
    use super::kimi_k2::{ARG_BEGIN, CALL_BEGIN, CALL_END, SECTION_BEGIN, SECTION_END};
    let schema_of = |s: Value| if s.is_null() { Value::Bool(true) } else { s };
    let tag = |name: &str, schema: Value| {
        json!({"type": "tag", "begin": format!("{CALL_BEGIN}functions.{name}:"),
            "content": {"type": "sequence", "elements": [
                {"type": "regex", "pattern": "\\d+"},
                const_string(ARG_BEGIN),
                content(schema_of(schema), "json")
            ]},
            "end": CALL_END})
    };
    let calls = match only {
        Some(_) => {
            let (name, schema) = allowed_tools(tools, only).next()?;
            tag(name, schema)
        }
        None => {
            let tags: Vec<Value> = allowed_tools(tools, None).map(|(n, s)| tag(n, s)).collect();
            if tags.is_empty() {
                return None;
            }
            json!({"type": "tags_with_separator", "tags": tags, "separator": "", "at_least_one": true,
                "stop_after_first": stop_after_first})
        }
    };
    let format =
        json!({"type": "sequence", "elements": [const_string(SECTION_BEGIN), calls, const_string(SECTION_END)]});
    Some(tag_text(format))
}

/// What a GLM-4.7 argument value may not contain.
const GLM47_VALUE_EXCLUDES: [&str; 8] =
    ["<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"];

fn const_string(value: &str) -> Value {
    json!({"type": "const_string", "value": value})
}

/// One format, or an `or` of several.
fn one_or_any(mut formats: Vec<Value>) -> Value {
    if formats.len() == 1 {
        formats.remove(0)
    } else {
        json!({"type": "or", "elements": formats})
    }
}

/// A GLM-4.7 value by its property schema: strings verbatim, enums as
/// constants, other types as bare JSON.
fn glm47_value(prop: &Value) -> Value {
    let any_text =
        || json!({"type": "any_text", "excludes": GLM47_VALUE_EXCLUDES, "max_tokens": null, "max_chars": null});
    if let Some(values) = prop.get("enum").and_then(Value::as_array) {
        return one_or_any(
            values.iter().map(|v| const_string(&v.as_str().map_or_else(|| dumps(v), str::to_string))).collect(),
        );
    }
    match prop.get("type") {
        Some(Value::Array(types)) => {
            let mut formats: Vec<Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("string"))
                .map(|t| glm47_value(&json!({"type": t})))
                .collect();
            if types.iter().any(|t| t.as_str() == Some("string")) {
                formats.push(any_text());
            }
            one_or_any(formats)
        }
        None | Some(Value::Null) => any_text(),
        Some(Value::String(t)) if t == "string" => any_text(),
        Some(t) => content(json!({"type": t}), "json"),
    }
}

/// `properties` of a plain object schema (no combinators, closed or default).
fn glm47_plain_properties(params: &Value) -> Option<&serde_json::Map<String, Value>> {
    let properties = params.get("properties")?.as_object().filter(|p| !p.is_empty())?;
    let combinator = ["$ref", "allOf", "anyOf", "oneOf", "patternProperties"].iter().any(|k| params.get(k).is_some());
    (params.get("additionalProperties") != Some(&Value::Bool(true)) && !combinator).then_some(properties)
}

fn glm47_tag(function: &Value) -> Value {
    let name = function.get("name").and_then(Value::as_str).unwrap_or("");
    let params = function.get("parameters").filter(|p| !p.is_null());
    let strict = function.get("strict").and_then(Value::as_bool) == Some(true);
    let plain = params.filter(|_| !strict).and_then(glm47_plain_properties);
    let body = match plain {
        Some(properties) => {
            let pairs: Vec<Value> = properties
                .iter()
                .map(|(key, prop)| {
                    json!({"type": "sequence", "elements": [
                        const_string(&format!("<arg_key>{key}</arg_key><arg_value>")),
                        glm47_value(prop),
                        const_string("</arg_value>")
                    ]})
                })
                .collect();
            json!({"type": "star", "content": one_or_any(pairs)})
        }
        None if strict => content(params.cloned().unwrap_or(Value::Bool(true)), "glm_xml"),
        None => content(Value::Bool(true), "glm_xml"),
    };
    json!({"type": "tag", "begin": format!("<tool_call>{name}"), "content": body, "end": "</tool_call>"})
}

/// GLM-4.7 (`<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...`):
/// its parser constrains the call envelope for every request with tools,
/// `auto` included (vLLM's `ToolStrictLevel.FUNCTION` default).
pub fn glm47(tools: &[Value], choice: &super::ToolChoice, parallel: bool) -> String {
    use super::ToolChoice;
    let only = match choice {
        ToolChoice::Named(n) => Some(n.as_str()),
        _ => None,
    };
    let tags: Vec<Value> = tools
        .iter()
        .filter_map(|t| t.get("function"))
        .filter(|f| only.is_none_or(|o| f.get("name").and_then(Value::as_str) == Some(o)))
        .map(glm47_tag)
        .collect();
    let forced = only.is_some() || !parallel;
    let format = if *choice == ToolChoice::Auto {
        let excludes: Vec<&str> = GLM47_VALUE_EXCLUDES.into_iter().filter(|e| *e != "<tool_call>").collect();
        json!({"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": tags, "at_least_one": false, "stop_after_first": !parallel, "excludes": excludes})
    } else {
        json!({"type": "tags_with_separator", "tags": tags, "separator": "", "at_least_one": true, "stop_after_first": forced})
    };
    tag_text(format)
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

/// Mistral's guided schema for a forced choice on pre-v11 tokenizers
/// (`_build_guided_schema_pre_v11`): an array of `{name, arguments}`, one
/// item at most for a named tool; `None` when the named tool is unknown.
pub fn mistral_json_schema(tools: &[Value], only: Option<&str>) -> Option<Value> {
    let any_of: Vec<Value> = tools
        .iter()
        .filter_map(|t| t.get("function"))
        .filter(|f| only.is_none_or(|o| f.get("name").and_then(Value::as_str) == Some(o)))
        .map(|f| {
            // `parameters or {"type": "object"}`: an empty or missing schema.
            let params = match f.get("parameters") {
                Some(p) if super::context::truthy(p) => p.clone(),
                _ => json!({"type": "object"}),
            };
            let name = f.get("name").cloned().unwrap_or(Value::Null);
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "enum": [name]}, "arguments": params},
                "required": ["name", "arguments"]
            })
        })
        .collect();
    if only.is_some() && any_of.is_empty() {
        return None;
    }
    let mut schema = serde_json::Map::new();
    schema.insert("type".into(), json!("array"));
    schema.insert("minItems".into(), json!(1));
    if only.is_some() {
        schema.insert("maxItems".into(), json!(1));
    }
    schema.insert("items".into(), json!({"type": "object", "anyOf": any_of}));
    Some(Value::Object(schema))
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
    fn every_tag_escapes_non_ascii_like_json_dumps() {
        let tools = vec![json!({"type": "function", "function": {"name": "天気", "parameters": {"type": "object"}}})];
        for tag in [
            hermes(&tools, None, false),
            qwen3_coder(&tools, None, false),
            llama(&tools, Some("天気"), true),
            minimax(&tools, None, false),
        ] {
            assert!(tag.is_ascii() && tag.contains(r"\u5929\u6c17"), "{tag}");
        }
    }

    #[test]
    fn deepseek_tags_escape_the_markers_and_constrain_auto_only_when_asked() {
        use super::super::ToolChoice;
        // Auto is free unless a tool is strict (here "b" is).
        assert_eq!(deepseek(true, &tools()[..1], &ToolChoice::Auto, true), None);
        assert!(deepseek(true, &tools(), &ToolChoice::Auto, true).is_some());
        let required = deepseek(true, &tools(), &ToolChoice::Required, true).unwrap();
        assert!(required
            .starts_with(r#"{"type": "structural_tag", "format": {"type": "tag", "begin": "<\uff5ctool\u2581calls"#));
        let tag: Value = serde_json::from_str(&required).unwrap();
        assert_eq!(tag["format"]["content"]["separator"], "\n");
        assert_eq!(tag["format"]["content"]["tags"][0]["end"], "\n```<｜tool▁call▁end｜>");
        // A single call limits auto too, through a triggered tag.
        let single: Value =
            serde_json::from_str(&deepseek(false, &tools(), &ToolChoice::Auto, false).unwrap()).unwrap();
        assert_eq!(single["format"]["type"], "triggered_tags");
        assert_eq!(single["format"]["stop_after_first"], true);
        assert_eq!(single["format"]["tags"][0]["content"]["stop_after_first"], true);
        let named: Value =
            serde_json::from_str(&deepseek(false, &tools(), &ToolChoice::Named("b".into()), true).unwrap()).unwrap();
        assert_eq!(named["format"]["begin"], "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>b<｜tool▁sep｜>");
        assert_eq!(named["format"]["content"]["json_schema"], json!({"type": "object"}));
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

    #[test]
    fn glm47_pins_keys_and_value_types_for_plain_schemas() {
        let tools = vec![json!({"type": "function", "function": {"name": "f", "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}, "n": {"type": ["integer", "string"]}, "u": {"enum": ["c", 1]}}
        }}})];
        let tag: Value = serde_json::from_str(&glm47(&tools, &super::super::ToolChoice::Auto, true)).unwrap();
        assert_eq!(tag["format"]["type"], "triggered_tags");
        let pairs = &tag["format"]["tags"][0]["content"]["content"]["elements"];
        assert_eq!(pairs[0]["elements"][0]["value"], "<arg_key>q</arg_key><arg_value>");
        assert_eq!(pairs[0]["elements"][1]["type"], "any_text");
        let n = &pairs[1]["elements"][1]["elements"];
        assert_eq!(n[0]["json_schema"], json!({"type": "integer"}));
        assert_eq!(n[1]["type"], "any_text");
        let u = &pairs[2]["elements"][1]["elements"];
        assert_eq!((u[0]["value"].as_str(), u[1]["value"].as_str()), (Some("c"), Some("1")));
    }

    #[test]
    fn glm47_falls_back_to_a_free_object_for_combinators() {
        let tools = vec![
            json!({"type": "function", "function": {"name": "f", "parameters": {"anyOf": [], "properties": {"a": {}}}}}),
        ];
        let tag: Value =
            serde_json::from_str(&glm47(&tools, &super::super::ToolChoice::Named("f".into()), true)).unwrap();
        assert_eq!(tag["format"]["stop_after_first"], true);
        assert_eq!(tag["format"]["tags"][0]["content"]["style"], "glm_xml");
        assert_eq!(tag["format"]["tags"][0]["content"]["json_schema"], true);
    }
}
