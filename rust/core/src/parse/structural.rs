//! The xgrammar structural tags vLLM puts in `structured_outputs` for tool
//! calls, one builder per `structural_tag_model`: vLLM's own (`hermes`,
//! `minimax`, `glm_4_7`) and xgrammar 0.2.9's builtins (`llama`, `kimi`,
//! `deepseek_r1`, `deepseek_v3_1`, `qwen_3_coder`, `glm_4_7` when every tool is
//! strict), as vLLM asks for them: no reasoning prefix, parallel calls (a
//! single call is applied afterwards, `strict::limit_to_single_tool_call`).
//! Formats are written field by field in pydantic's `model_dump` order.

use serde_json::{json, Value};

use super::pyjson::dumps;

/// A parser's `structural_tag_model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagModel {
    Hermes,
    Minimax,
    Glm47,
    Llama,
    Kimi,
    DeepSeekR1,
    DeepSeekV31,
    QwenCoder,
}

impl TagModel {
    /// vLLM's model key.
    pub fn from_name(name: &str) -> Option<TagModel> {
        Some(match name {
            "hermes" => TagModel::Hermes,
            "minimax" => TagModel::Minimax,
            "glm_4_7" => TagModel::Glm47,
            "llama" => TagModel::Llama,
            "kimi" => TagModel::Kimi,
            "deepseek_r1" => TagModel::DeepSeekR1,
            "deepseek_v3_1" => TagModel::DeepSeekV31,
            "qwen_3_coder" => TagModel::QwenCoder,
            _ => return None,
        })
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
    fn schema(&self) -> Value {
        match self.parameters {
            Some(p) if self.strict => p.clone(),
            _ => Value::Bool(true),
        }
    }
}

/// The tag for `tools` (already filtered to the named tool when forced).
pub fn build(model: TagModel, tools: &[TagTool], choice: Choice) -> Value {
    match model {
        TagModel::Hermes => hermes(tools, choice),
        TagModel::Minimax => minimax(tools, choice),
        TagModel::Glm47 => glm47(tools, choice),
        TagModel::Llama => llama(tools, choice),
        TagModel::Kimi => kimi(tools, choice),
        TagModel::DeepSeekR1 => deepseek(true, tools, choice),
        TagModel::DeepSeekV31 => deepseek(false, tools, choice),
        TagModel::QwenCoder => qwen_coder(tools, choice),
    }
}

/// The `structured_outputs.structural_tag` text: vLLM dumps the tag with
/// `json.dumps` defaults, so non-ASCII (tool names, enum values) is escaped.
pub fn tag_text(format: Value) -> String {
    let opts = super::pyjson::DumpOptions { ensure_ascii: true, ..Default::default() };
    super::pyjson::dumps_with(&json!({"type": "structural_tag", "format": format}), &opts)
}

/// `JSONSchemaFormat`.
pub fn content(schema: Value, style: &str) -> Value {
    json!({"type": "json_schema", "json_schema": schema, "style": style, "any_order": false, "max_whitespace_cnt": null, "excludes": []})
}

pub fn const_string(value: &str) -> Value {
    json!({"type": "const_string", "value": value})
}

fn tag(begin: &str, content: Value, end: &str) -> Value {
    json!({"type": "tag", "begin": begin, "content": content, "end": end})
}

fn triggered(triggers: &[&str], tags: Vec<Value>, at_least_one: bool, excludes: &[&str]) -> Value {
    json!({"type": "triggered_tags", "triggers": triggers, "tags": tags, "at_least_one": at_least_one,
        "stop_after_first": false, "excludes": excludes})
}

fn separated(tags: Vec<Value>, separator: &str, stop_after_first: bool) -> Value {
    json!({"type": "tags_with_separator", "tags": tags, "separator": separator, "at_least_one": true,
        "stop_after_first": stop_after_first})
}

fn sequence(elements: Vec<Value>) -> Value {
    json!({"type": "sequence", "elements": elements})
}

const THINK: [&str; 2] = ["<think>", "</think>"];

/// Hermes (`<tool_call>{"name": ..., "arguments": ...}</tool_call>`): every
/// tool, with and without the newlines.
fn hermes(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = Vec::new();
    for t in tools {
        for (open, close) in [("<tool_call>\n", "}\n</tool_call>"), ("<tool_call>", "}</tool_call>")] {
            let begin = format!("{open}{{\"name\": \"{}\", \"arguments\": ", t.name);
            tags.push(tag(&begin, content(t.schema(), "json"), close));
        }
    }
    match choice {
        Choice::Auto => triggered(&["<tool_call>"], tags, false, &[]),
        Choice::Forced => separated(tags, "", true),
        Choice::Required => separated(tags, "", false),
    }
}

/// MiniMax-M2 (`<minimax:tool_call>\n<invoke name="NAME">\n...`).
fn minimax(tools: &[TagTool], choice: Choice) -> Value {
    let tags: Vec<Value> = tools
        .iter()
        .map(|t| tag(&format!("<invoke name=\"{}\">\n", t.name), content(t.schema(), "minimax_xml"), "</invoke>\n"))
        .collect();
    match choice {
        Choice::Auto => {
            let block = tag("<minimax:tool_call>\n", separated(tags, "", false), "</minimax:tool_call>");
            triggered(&["<minimax:tool_call>"], vec![block], false, &THINK)
        }
        _ => sequence(vec![
            const_string("\n<minimax:tool_call>\n"),
            separated(tags, "", choice == Choice::Forced),
            const_string("</minimax:tool_call>"),
        ]),
    }
}

/// Llama 3 JSON (`{"name": "NAME", "parameters": {...}}`).
fn llama(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = tools
        .iter()
        .map(|t| tag(&format!("{{\"name\": \"{}\", \"parameters\": ", t.name), content(t.schema(), "json"), "}"));
    match choice {
        Choice::Forced => tags.next().unwrap_or(Value::Null),
        _ => triggered(&["{\"name\": "], tags.collect(), choice == Choice::Required, &THINK),
    }
}

/// Qwen3-Coder XML (`<tool_call>\n<function=NAME>\n...`).
fn qwen_coder(tools: &[TagTool], choice: Choice) -> Value {
    let mut tags = tools.iter().map(|t| {
        tag(
            &format!("<tool_call>\n<function={}>\n", t.name),
            content(t.schema(), "qwen_xml"),
            "\n</function>\n</tool_call>",
        )
    });
    match choice {
        Choice::Forced => tags.next().unwrap_or(Value::Null),
        _ => triggered(&["<tool_call>\n<function="], tags.collect(), choice == Choice::Required, &THINK),
    }
}

/// Kimi-K2 (`<|tool_calls_section_begin|>` around `functions.NAME:IDX` calls).
fn kimi(tools: &[TagTool], choice: Choice) -> Value {
    use super::kimi_k2::{ARG_BEGIN, CALL_BEGIN, CALL_END, SECTION_BEGIN, SECTION_END};
    let mut tags = tools.iter().map(|t| {
        let body = sequence(vec![
            json!({"type": "regex", "pattern": "\\d+"}),
            const_string(ARG_BEGIN),
            content(t.schema(), "json"),
        ]);
        tag(&format!("{CALL_BEGIN}functions.{}:", t.name), body, CALL_END)
    });
    match choice {
        Choice::Auto => {
            let section = tag(SECTION_BEGIN, separated(tags.collect(), "", false), SECTION_END);
            triggered(&[SECTION_BEGIN], vec![section], false, &["<think>", "</think>", CALL_BEGIN])
        }
        Choice::Forced => {
            sequence(vec![const_string(SECTION_BEGIN), tags.next().unwrap_or(Value::Null), const_string(SECTION_END)])
        }
        Choice::Required => {
            sequence(vec![const_string(SECTION_BEGIN), separated(tags.collect(), "", false), const_string(SECTION_END)])
        }
    }
}

/// DeepSeek `deepseek_r1` (V3: fenced JSON, calls separated by a newline)
/// and `deepseek_v3_1`.
fn deepseek(v3: bool, tools: &[TagTool], choice: Choice) -> Value {
    use super::deepseek::{CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END};
    let sep = "<｜tool▁sep｜>";
    let open = |name: &str| {
        if v3 {
            format!("{CALL_BEGIN}function{sep}{name}\n```json\n")
        } else {
            format!("{CALL_BEGIN}{name}{sep}")
        }
    };
    let (close, separator) = if v3 { (format!("\n```{CALL_END}"), "\n") } else { (CALL_END.to_string(), "") };
    let tags = tools.iter().map(|t| tag(&open(t.name), content(t.schema(), "json"), &close));
    match choice {
        Choice::Forced => match tools.first() {
            Some(t) => tag(
                &format!("{CALLS_BEGIN}{}", open(t.name)),
                content(t.schema(), "json"),
                &format!("{close}{CALLS_END}"),
            ),
            None => Value::Null,
        },
        Choice::Required => tag(CALLS_BEGIN, separated(tags.collect(), separator, false), CALLS_END),
        Choice::Auto => {
            let calls = tag(CALLS_BEGIN, separated(tags.collect(), separator, false), CALLS_END);
            triggered(&[CALLS_BEGIN], vec![calls], false, &THINK)
        }
    }
}

/// What a GLM-4.7 argument value may not contain.
const GLM47_VALUE_EXCLUDES: [&str; 8] =
    ["<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"];

/// GLM-4.7 free text after the reasoning: anything but the markers, the
/// `<tool_call>` trigger aside.
fn glm47_text_excludes() -> Vec<&'static str> {
    GLM47_VALUE_EXCLUDES.into_iter().filter(|e| *e != "<tool_call>").collect()
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

/// vLLM's GLM-4.7 tag for one tool: the schema pinned when strict, else the
/// keys and basic value types of a plain schema.
fn glm47_tag(t: &TagTool) -> Value {
    let begin = format!("<tool_call>{}", t.name);
    if t.strict {
        return tag(&begin, content(t.schema(), "glm_xml"), "</tool_call>");
    }
    let body = match t.parameters.and_then(glm47_plain_properties) {
        Some(properties) => {
            let pairs: Vec<Value> = properties
                .iter()
                .map(|(key, prop)| {
                    sequence(vec![
                        const_string(&format!("<arg_key>{key}</arg_key><arg_value>")),
                        glm47_value(prop),
                        const_string("</arg_value>"),
                    ])
                })
                .collect();
            json!({"type": "star", "content": one_or_any(pairs)})
        }
        None => content(Value::Bool(true), "glm_xml"),
    };
    tag(&begin, body, "</tool_call>")
}

/// GLM-4.7 (`<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...`):
/// xgrammar's builtin when every tool is strict, else vLLM's per-tool tags.
fn glm47(tools: &[TagTool], choice: Choice) -> Value {
    if !tools.is_empty() && tools.iter().all(|t| t.strict) {
        let mut tags = tools
            .iter()
            .map(|t| tag(&format!("<tool_call>{}", t.name), content(t.schema(), "glm_xml"), "</tool_call>"));
        return match choice {
            Choice::Forced => tags.next().unwrap_or(Value::Null),
            _ => triggered(&["<tool_call>"], tags.collect(), choice == Choice::Required, &glm47_text_excludes()),
        };
    }
    let tags: Vec<Value> = tools.iter().map(glm47_tag).collect();
    match choice {
        Choice::Auto => triggered(&["<tool_call>"], tags, false, &glm47_text_excludes()),
        _ => separated(tags, "", choice == Choice::Forced),
    }
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

    fn tag_tools(tools: &[Value]) -> Vec<TagTool<'_>> {
        tools.iter().filter_map(TagTool::from_request).collect()
    }

    const MODELS: [TagModel; 8] = [
        TagModel::Hermes,
        TagModel::Minimax,
        TagModel::Glm47,
        TagModel::Llama,
        TagModel::Kimi,
        TagModel::DeepSeekR1,
        TagModel::DeepSeekV31,
        TagModel::QwenCoder,
    ];

    #[test]
    fn every_tag_escapes_non_ascii_like_json_dumps() {
        let tools = vec![json!({"type": "function", "function": {"name": "天気", "parameters": {"type": "object"}}})];
        for model in MODELS {
            for choice in [Choice::Auto, Choice::Required, Choice::Forced] {
                let tag = tag_text(build(model, &tag_tools(&tools), choice));
                assert!(tag.is_ascii() && tag.contains(r"\u5929\u6c17"), "{model:?} {tag}");
            }
        }
    }

    #[test]
    fn only_strict_tools_pin_their_schema() {
        let tools = tools();
        let tag = build(TagModel::Minimax, &tag_tools(&tools), Choice::Required);
        let tags = tag["elements"][1]["tags"].as_array().unwrap();
        assert_eq!(tags[0]["content"]["json_schema"], true);
        assert_eq!(tags[1]["content"]["json_schema"], json!({"type": "object"}));
    }

    #[test]
    fn auto_tags_allow_text_around_triggered_calls() {
        let tools = tools();
        for model in MODELS {
            let tag = build(model, &tag_tools(&tools), Choice::Auto);
            assert_eq!(tag["type"], "triggered_tags", "{model:?}");
            assert_eq!(tag["at_least_one"], false, "{model:?}");
        }
    }

    #[test]
    fn deepseek_v3_fences_calls_and_separates_them_by_newlines() {
        let tools = tools();
        let required = build(TagModel::DeepSeekR1, &tag_tools(&tools), Choice::Required);
        assert_eq!(required["begin"], "<｜tool▁calls▁begin｜>");
        assert_eq!(required["content"]["separator"], "\n");
        assert_eq!(required["content"]["tags"][0]["end"], "\n```<｜tool▁call▁end｜>");
        let forced = build(TagModel::DeepSeekV31, &tag_tools(&tools[1..]), Choice::Forced);
        assert_eq!(forced["begin"], "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>b<｜tool▁sep｜>");
        assert_eq!(forced["end"], "<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
    }

    #[test]
    fn glm47_pins_keys_and_value_types_for_plain_schemas() {
        let tools = vec![json!({"type": "function", "function": {"name": "f", "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}, "n": {"type": ["integer", "string"]}, "u": {"enum": ["c", 1]}}
        }}})];
        let tag = build(TagModel::Glm47, &tag_tools(&tools), Choice::Auto);
        let pairs = &tag["tags"][0]["content"]["content"]["elements"];
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
        let tag = build(TagModel::Glm47, &tag_tools(&tools), Choice::Forced);
        assert_eq!(tag["stop_after_first"], true);
        assert_eq!(tag["tags"][0]["content"]["style"], "glm_xml");
        assert_eq!(tag["tags"][0]["content"]["json_schema"], true);
    }

    #[test]
    fn glm47_with_every_tool_strict_is_xgrammars_builtin() {
        let tools = tools();
        let strict: Vec<TagTool> = tag_tools(&tools).into_iter().map(|t| TagTool { strict: true, ..t }).collect();
        // The builtin's forced choice is a bare tag, required a triggered list.
        assert_eq!(build(TagModel::Glm47, &strict[..1], Choice::Forced)["type"], "tag");
        let required = build(TagModel::Glm47, &strict, Choice::Required);
        assert_eq!(
            (required["type"].as_str(), required["at_least_one"].as_bool()),
            (Some("triggered_tags"), Some(true))
        );
    }
}
