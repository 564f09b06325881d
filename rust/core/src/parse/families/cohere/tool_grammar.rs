//! vLLM 0.33.0's Cohere tool-call constraint (`vllm/parser/cohere_command.py`):
//! `collect_tool_schema` turns each tool into xgrammar's EBNF for
//! `{tool_call_id, tool_name, parameters}`, prefixes every rule name with the
//! tool name, and joins the tools under `root ::= tools`;
//! `convert_schema_to_structural_tags` wraps that grammar, and the response
//! JSON schema if any, into the structural tag `adjust_request` installs.

use serde_json::{json, Map, Value};

use crate::structured::xgrammar::{json_schema_to_ebnf, XgrammarError};

/// vLLM's `MAX_STRUCTURED_OUTPUT_JSON_NESTING`.
const MAX_JSON_NESTING: usize = 64;

const ACTION_BEGIN: &str = "<|START_ACTION|>";
const ACTION_END: &str = "<|END_ACTION|>";
const RESPONSE_BEGIN: &str = "<|START_RESPONSE|>";
const RESPONSE_END: &str = "<|END_RESPONSE|>";
const TEXT_BEGIN: &str = "<|START_TEXT|>";
const TEXT_END: &str = "<|END_TEXT|>";

/// `MODEL_TO_TAG_STYLE`: which JSON wrappers an architecture may emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagStyle {
    /// `Cohere2ForCausalLM`: `<|START_RESPONSE|>` only.
    Response,
    /// `Cohere2VisionForConditionalGeneration`, `Cohere2MoeForCausalLM`:
    /// `<|START_RESPONSE|>`, then `<|START_TEXT|>`.
    ResponseAndText,
}

impl TagStyle {
    /// `None` for architectures vLLM has no Cohere tag style for (it then
    /// answers 400: "Failed to build structural_tag guided decoding
    /// constraints ...").
    pub fn for_architecture(architecture: &str) -> Option<TagStyle> {
        match architecture {
            "Cohere2ForCausalLM" => Some(TagStyle::Response),
            "Cohere2VisionForConditionalGeneration" | "Cohere2MoeForCausalLM" => Some(TagStyle::ResponseAndText),
            _ => None,
        }
    }

    fn json_tags(self) -> &'static [(&'static str, &'static str)] {
        match self {
            TagStyle::Response => &[(RESPONSE_BEGIN, RESPONSE_END)],
            TagStyle::ResponseAndText => &[(RESPONSE_BEGIN, RESPONSE_END), (TEXT_BEGIN, TEXT_END)],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolGrammarError {
    /// `check_json_nesting` on a tool's parameters (`VLLMValidationError`:
    /// 400 `BadRequestError`, no param).
    #[error("The JSON schema is nested too deeply: objects and arrays may nest at most 64 levels")]
    NestedTooDeeply,
    /// No entry of a non-empty `tools` list has a string name (`ValueError`: 400).
    #[error("No valid tool definitions could be parsed from the request for structural tag conversion.")]
    NoValidTools,
    /// xgrammar refused a tool's schema (vLLM answers 500, see
    /// [`XgrammarError::raised_text`]), or the port cannot reproduce it.
    #[error(transparent)]
    Xgrammar(#[from] XgrammarError),
    /// A tool name with a backslash: vLLM passes it to `regex.sub` as a
    /// replacement template, whose escape handling is not reproduced.
    #[error("tool name {0:?} contains a backslash, which the Cohere tool grammar port does not reproduce")]
    BackslashInName(String),
    /// A tool name puts a rule name next to a character (a combining mark, a
    /// non-ASCII digit or symbol) whose `\w`-ness decides vLLM's renaming and
    /// this port cannot tell.
    #[error("tool name {0:?} holds characters whose word-boundary handling the Cohere tool grammar port cannot tell")]
    UncertainWordBoundary(String),
}

/// A tool as `collect_tool_schema` sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct CohereTool {
    pub name: String,
    pub parameters: Map<String, Value>,
}

/// `_tool_definitions_to_schema_list`: unwraps `{"type": "function",
/// "function": {...}}`, keeps entries with a string `name`, and takes
/// `parameters` when it is an object (else `{}`).
pub fn normalized_tools(tools: &[Value]) -> Vec<CohereTool> {
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        let Some(mut definition) = tool.as_object() else { continue };
        if definition.get("type").and_then(Value::as_str) == Some("function") {
            if let Some(function) = definition.get("function").and_then(Value::as_object) {
                definition = function;
            }
        }
        let Some(name) = definition.get("name").and_then(Value::as_str) else { continue };
        let parameters = definition.get("parameters").and_then(Value::as_object).cloned().unwrap_or_default();
        out.push(CohereTool { name: name.to_string(), parameters });
    }
    out
}

/// `collect_tool_schema`: the `grammar` of the `<|START_ACTION|>` tag.
pub fn tool_grammar(tools: &[CohereTool]) -> Result<String, ToolGrammarError> {
    // A dict keyed by name: a repeated name keeps its first place and its last body.
    let mut blocks: Vec<(&str, String)> = Vec::with_capacity(tools.len());
    for tool in tools {
        if exceeds_json_nesting(&tool.parameters) {
            return Err(ToolGrammarError::NestedTooDeeply);
        }
        let text = json_schema_to_ebnf(&wrapper_schema(tool))?;
        if tool.name.contains('\\') {
            return Err(ToolGrammarError::BackslashInName(tool.name.clone()));
        }
        let block = format!("{name} ::= {name}root\n{}", prefix_rule_names(&text, &tool.name)?, name = tool.name);
        match blocks.iter_mut().find(|(name, _)| *name == tool.name) {
            Some(slot) => slot.1 = block,
            None => blocks.push((&tool.name, block)),
        }
    }
    let names: Vec<&str> = blocks.iter().map(|(name, _)| *name).collect();
    let bodies: Vec<&str> = blocks.iter().map(|(_, block)| block.as_str()).collect();
    // The source's f-string indents every line after the first by four spaces.
    Ok(format!(
        "root ::= tools\n    tools ::= ws \"[\" ws tool (ws \",\" ws tool)* ws \"]\" ws\n    ws    ::= (\" \" | \"\\t\" | \"\\n\")*\n    tool ::= {}\n    {}\n    ",
        names.join(" | "),
        bodies.join("\n    ")
    ))
}

/// `convert_schema_to_structural_tags` for a chat request: the response
/// JSON schema (already extracted from `response_format` / `structured_outputs`)
/// and the request's `tools` (OpenAI tool objects, as sent). `Ok(None)` when
/// there is neither (vLLM then leaves the request alone). Key order is
/// vLLM's; serialise with `json.dumps` defaults (`", "`, `": "`, ASCII only).
pub fn structural_tag(
    style: TagStyle,
    response_schema: Option<&Value>,
    tools: Option<&[Value]>,
) -> Result<Option<Value>, ToolGrammarError> {
    let mut triggers = Vec::new();
    let mut tags = Vec::new();
    if let Some(schema) = response_schema {
        for (begin, end) in style.json_tags() {
            let content = object([("type", json!("json_schema")), ("json_schema", schema.clone())]);
            triggers.push(json!(begin));
            tags.push(object([("begin", json!(begin)), ("content", content), ("end", json!(end))]));
        }
    }
    if let Some(tools) = tools.filter(|tools| !tools.is_empty()) {
        let normalized = normalized_tools(tools);
        if normalized.is_empty() {
            return Err(ToolGrammarError::NoValidTools);
        }
        let content = object([("type", json!("grammar")), ("grammar", Value::String(tool_grammar(&normalized)?))]);
        triggers.push(json!(ACTION_BEGIN));
        tags.push(object([("begin", json!(ACTION_BEGIN)), ("content", content), ("end", json!(ACTION_END))]));
    }
    if tags.is_empty() {
        return Ok(None);
    }
    let format =
        object([("type", json!("triggered_tags")), ("triggers", Value::Array(triggers)), ("tags", Value::Array(tags))]);
    Ok(Some(object([("type", json!("structural_tag")), ("format", format)])))
}

/// A JSON object with these keys, in this order.
fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(entries.into_iter().map(|(key, value)| (key.to_string(), value)).collect())
}

/// The per-tool schema vLLM hands xgrammar; `$defs` / `definitions` move from
/// the parameters to the top so `#/$defs/...` references resolve.
fn wrapper_schema(tool: &CohereTool) -> Value {
    let mut parameters = tool.parameters.clone();
    let mut hoisted = Vec::new();
    for key in ["$defs", "definitions"] {
        if let Some(definitions) = parameters.shift_remove(key) {
            hoisted.push((key, definitions));
        }
    }
    let properties = object([
        ("tool_call_id", object([("type", json!("string")), ("pattern", json!("^[0-9]+$"))])),
        ("tool_name", object([("type", json!("string")), ("const", Value::String(tool.name.clone()))])),
        ("parameters", Value::Object(parameters)),
    ]);
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), properties);
    for (key, definitions) in hoisted {
        schema.insert(key.into(), definitions);
    }
    Value::Object(schema)
}

/// `_exceeds_json_nesting(parameters, 64)`, breadth first like vLLM: more
/// than 64 levels of objects/arrays, counting the parameters object itself.
fn exceeds_json_nesting(parameters: &Map<String, Value>) -> bool {
    if parameters.is_empty() {
        return false;
    }
    let mut level: Vec<&Value> = parameters.values().filter(|v| v.is_object() || v.is_array()).collect();
    for _ in 1..MAX_JSON_NESTING {
        if level.is_empty() {
            return false;
        }
        level = level
            .into_iter()
            .flat_map(|node| -> Box<dyn Iterator<Item = &Value>> {
                match node {
                    Value::Object(map) => Box::new(map.values()),
                    Value::Array(items) => Box::new(items.iter()),
                    _ => Box::new(std::iter::empty()),
                }
            })
            .filter(|v| v.is_object() || v.is_array())
            .collect();
    }
    !level.is_empty()
}

/// vLLM's renaming: every `\w+` that precedes `::=` in xgrammar's text
/// (found once, on the original) is, in turn, replaced wherever it stands as
/// a whole word by `tool_name + word`, in the running text. Textual, so it
/// also rewrites matching words inside string literals and inside tool names
/// inserted earlier.
fn prefix_rule_names(text: &str, tool_name: &str) -> Result<String, ToolGrammarError> {
    let mut out = text.to_string();
    for name in defined_names(text) {
        out = replace_whole_word(&out, &name, &format!("{tool_name}{name}"))
            .ok_or_else(|| ToolGrammarError::UncertainWordBoundary(tool_name.to_string()))?;
    }
    Ok(out)
}

/// `re.findall(r"\b(\w+)\s*::=", text)` on xgrammar's (ASCII) text.
fn defined_names(text: &str) -> Vec<String> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let chars: Vec<char> = text.chars().collect();
    let mut names = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let starts_word = is_word(chars[index]) && (index == 0 || !is_word(chars[index - 1]));
        if !starts_word {
            index += 1;
            continue;
        }
        let mut end = index;
        while end < chars.len() && is_word(chars[end]) {
            end += 1;
        }
        let mut after = end;
        while after < chars.len() && (chars[after].is_whitespace() || matches!(chars[after], '\u{1c}'..='\u{1f}')) {
            after += 1;
        }
        if chars.get(after..after + 3) == Some(&[':', ':', '=']) {
            names.push(chars[index..end].iter().collect());
            index = after + 3;
        } else {
            index = end;
        }
    }
    names
}

/// `re.sub(rf"\b{re.escape(word)}\b", replacement, text)` for a `\w+` word;
/// `None` when a boundary falls next to a character whose `\w`-ness this
/// port cannot tell.
fn replace_whole_word(text: &str, word: &str, replacement: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut previous: Option<char> = None;
    while let Some(found) = rest.find(word) {
        let before = rest[..found].chars().next_back().or(previous);
        let after = rest[found + word.len()..].chars().next();
        let bounded = |c: Option<char>| c.map_or(Some(true), |c| is_word(c).map(|word| !word));
        if bounded(before)? && bounded(after)? {
            out.push_str(&rest[..found]);
            out.push_str(replacement);
            previous = word.chars().next_back();
            rest = &rest[found + word.len()..];
        } else {
            // Not a whole word here: move past its first character.
            let step = rest[found..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&rest[..found + step]);
            previous = rest[found..].chars().next();
            rest = &rest[found + step..];
        }
    }
    out.push_str(rest);
    Some(out)
}

/// The `regex` module's Unicode `\w` where std can tell: letters, ASCII
/// digits, connector punctuation and joiners are word characters; white
/// space and ASCII punctuation are not. `None` for the rest (combining marks
/// and decimal digits are word characters there, other numbers and symbols
/// are not, and std has no tables to tell them apart).
fn is_word(c: char) -> Option<bool> {
    if c.is_ascii() {
        return Some(c.is_ascii_alphanumeric() || c == '_');
    }
    if c.is_alphabetic()
        || matches!(
            c,
            '\u{203f}' | '\u{2040}' | '\u{2054}' | '\u{fe33}' | '\u{fe34}' | '\u{fe4d}'..='\u{fe4f}' | '\u{ff3f}'
        )
        || matches!(c, '\u{200c}' | '\u{200d}')
    {
        return Some(true);
    }
    if c.is_whitespace() {
        return Some(false);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structured::xgrammar::tests::recorded_lines;

    /// Every tool list recorded by tests/reference/record_cohere_xgrammar.py
    /// (the corpora's, and seeded ones) against vLLM's own structural tag.
    #[test]
    fn recorded_tool_lists_build_vllms_tag() {
        let mut checked = 0;
        let mut failures = Vec::new();
        for case in recorded_lines() {
            let Some(tools) = case.get("tools").and_then(Value::as_array) else { continue };
            checked += 1;
            let schema = case.get("response_schema").filter(|s| !s.is_null());
            let architecture = case.get("architecture").and_then(Value::as_str).unwrap_or_default();
            let got = match TagStyle::for_architecture(architecture) {
                None => json!({"structural_tag": null}),
                Some(style) => match structural_tag(style, schema, Some(tools)) {
                    Ok(tag) => json!({"structural_tag": tag.map(|t| t.to_string())}),
                    Err(ToolGrammarError::Xgrammar(e)) => json!({"error": e.raised_text("00:00:00")}),
                    Err(e) => json!({"error": e.to_string()}),
                },
            };
            // The recorded tag is Python's `json.dumps` text: compare as
            // compact JSON, which keeps key order.
            let expected = match (case.get("structural_tag"), case.get("error")) {
                (_, Some(error)) => json!({"error": error}),
                (Some(Value::String(text)), _) => {
                    let tag: Value = serde_json::from_str(text).expect("recorded tag is JSON");
                    json!({"structural_tag": tag.to_string()})
                }
                _ => json!({"structural_tag": null}),
            };
            if got != expected {
                failures.push(format!("tools {}\n  expected {expected}\n  got      {got}", Value::from(tools.clone())));
            }
        }
        assert!(checked >= 60, "only {checked} tool lists recorded");
        assert!(failures.is_empty(), "{} of {checked} differ; first:\n{}", failures.len(), failures[0]);
    }

    #[test]
    fn one_tool_block_reads_like_vllms() {
        let tools = [json!({"type": "function", "function": {"name": "ping"}})];
        let grammar = tool_grammar(&normalized_tools(&tools)).unwrap_or_default();
        assert!(grammar.starts_with("root ::= tools\n    tools ::= ws \"[\" ws tool (ws \",\" ws tool)* ws \"]\" ws\n"));
        assert!(grammar.contains("\n    tool ::= ping\n    ping ::= pingroot\npingbasic_escape ::= "));
        assert!(grammar.contains("\npingroot_part_1 ::= (\"\" | ([ \\n\\r\\t]* \",\" [ \\n\\r\\t]* \"\\\"parameters\\\"\" [ \\n\\r\\t]* \":\" [ \\n\\r\\t]* pingbasic_any))\n"));
        assert!(grammar.ends_with("pingroot_prop_0_1 ::= Regex(\"^[0-9]+$\", json_string=true)\n\n    "));
    }

    #[test]
    fn the_tag_lists_response_wrappers_then_the_action() {
        let tools = [json!({"type": "function", "function": {"name": "f"}})];
        let schema = json!({"type": "object"});
        let tag = structural_tag(TagStyle::ResponseAndText, Some(&schema), Some(&tools)).ok().flatten();
        let triggers = tag.as_ref().map(|t| t["format"]["triggers"].clone());
        assert_eq!(triggers, Some(json!(["<|START_RESPONSE|>", "<|START_TEXT|>", "<|START_ACTION|>"])));
        assert_eq!(structural_tag(TagStyle::Response, None, Some(&[])), Ok(None));
        let nameless = [json!({"type": "function", "function": {"name": 5}})];
        assert_eq!(structural_tag(TagStyle::Response, None, Some(&nameless)), Err(ToolGrammarError::NoValidTools));
    }

    #[test]
    fn renaming_is_textual_and_word_bounded() {
        let text = "root ::= ((root_1 \"\\\"my-root\\\"\"))\nroot_1 ::= ((basic_string))\n";
        let renamed = prefix_rule_names(text, "t").unwrap_or_default();
        assert_eq!(renamed, "troot ::= ((troot_1 \"\\\"my-troot\\\"\"))\ntroot_1 ::= ((basic_string))\n");
    }

    #[test]
    fn nesting_counts_the_parameters_object() {
        let mut deep = json!({});
        for _ in 0..63 {
            deep = json!({"a": deep});
        }
        let Value::Object(ok) = deep.clone() else { return };
        assert!(!exceeds_json_nesting(&ok));
        let Value::Object(too_deep) = json!({"a": deep}) else { return };
        assert!(exceeds_json_nesting(&too_deep));
    }
}
