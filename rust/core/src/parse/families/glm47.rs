//! GLM-4.5/4.7 (`vllm/parser/glm47_moe.py`): `<think>` reasoning and
//! `<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::model::Model;
use crate::parse::engine::{tr, ArgSyntax, ByThinking, EngineConfig, EventType as E, OpenValue, State as S, Transition};
use crate::parse::engine::{EngineReasoning, EngineToolFamily, VllmStreamReasoningFamily};
use crate::parse::family::{Family, ReasoningFamily, ToolFamily};
use crate::parse::{ChatContext, Registry};
use crate::pycompat::json::{dumps, dumps_str};
use crate::structured::format::{const_string, content, separated, sequence, tag, triggered, Choice, TagModel, TagTool};
use crate::structured::tool_tags::StrictLevel;

const ARG_VALUE_END: &str = "</arg_value>";

fn build(thinking: bool) -> EngineConfig {
    let mut terminals = Vec::new();
    let mut token_ids = Vec::new();
    let mut transitions: Vec<((S, &'static str), Transition)> = Vec::new();
    if thinking {
        terminals.extend([("THINK_START", vec!["<think>"]), ("THINK_END", vec!["</think>"])]);
        token_ids.extend([("THINK_START", "<think>"), ("THINK_END", "</think>")]);
        transitions.extend([
            ((S::Content, "THINK_START"), tr(S::Reasoning, &[E::ReasoningStart])),
            ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
            ((S::Content, "THINK_END"), tr(S::Content, &[])),
        ]);
    }
    terminals.extend([
        ("TOOL_START", vec!["<tool_call>"]),
        ("TOOL_END", vec!["</tool_call>"]),
        ("ARG_KEY_START", vec!["<arg_key>"]),
        ("ARG_KEY_END", vec!["</arg_key>"]),
        ("ARG_VALUE_START", vec!["<arg_value>"]),
        ("ARG_VALUE_END", vec![ARG_VALUE_END]),
    ]);
    token_ids.extend([("TOOL_START", "<tool_call>"), ("TOOL_END", "</tool_call>")]);
    transitions.extend([
        ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
        ((S::Reasoning, "TOOL_START"), tr(S::ToolName, &[E::ReasoningEnd, E::ToolCallStart])),
        ((S::Content, "TOOL_START"), tr(S::ToolName, &[E::ToolCallStart])),
        ((S::ToolName, "ARG_KEY_START"), tr(S::ToolArgs, &[E::ArgValueChunk])),
        ((S::ToolName, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
        ((S::ToolArgs, "TOOL_END"), tr(S::Content, &[E::ToolCallEnd])),
    ]);
    for t in ["ARG_KEY_START", "ARG_KEY_END", "ARG_VALUE_START", "ARG_VALUE_END"] {
        transitions.push(((S::ToolArgs, t), tr(S::ToolArgs, &[E::ArgValueChunk])));
    }
    EngineConfig {
        name: "glm47_moe",
        terminals,
        token_id_terminals: token_ids,
        transitions,
        content_events: EngineConfig::default_content_events(),
        initial_state: if thinking { S::Reasoning } else { S::Content },
        wait_for_reasoning: None,
        tool_args_json: false,
        tool_call_body_array: false,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: vec!["<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"],
        strip_trailing_reasoning_whitespace: true,
        arg_syntax: Some(&ARGS),
        validate_tool_names: true,
        strip_tool_names: true,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: true,
        stream_text_after_calls: false,
    }
}

pub fn config(thinking: bool) -> &'static EngineConfig {
    static CONFIGS: ByThinking = ByThinking::new();
    CONFIGS.get(thinking, build)
}

fn find(c: &[char], from: usize, pat: &str) -> Option<usize> {
    let p: Vec<char> = pat.chars().collect();
    if p.len() > c.len() {
        return None;
    }
    (from..=c.len() - p.len()).find(|&i| c[i..i + p.len()] == p[..])
}

/// `<arg_key>K</arg_key>\s*<arg_value>` at `i`: (key, index after the opener).
fn arg_head(c: &[char], i: usize) -> Option<(String, usize)> {
    let ks = i + "<arg_key>".len();
    if find(c, i, "<arg_key>") != Some(i) {
        return None;
    }
    let ke = find(c, ks, "</arg_key>")?;
    let mut j = ke + "</arg_key>".len();
    while j < c.len() && c[j].is_whitespace() {
        j += 1;
    }
    (find(c, j, "<arg_value>") == Some(j)).then(|| (c[ks..ke].iter().collect(), j + "<arg_value>".len()))
}

/// `_glm47_parse_args`: the arguments, and the key of the open last value.
fn parse_args(raw: &str, partial: bool) -> (Map<String, Value>, Option<String>) {
    let c: Vec<char> = raw.chars().collect();
    let mut params = Map::new();
    let mut remaining: Vec<char> = Vec::new();
    let mut i = 0;
    let mut copied = 0;
    while i < c.len() {
        let complete = arg_head(&c, i).and_then(|(k, vs)| find(&c, vs, ARG_VALUE_END).map(|ve| (k, vs, ve)));
        match complete {
            Some((k, vs, ve)) => {
                params.insert(k.trim().to_string(), Value::String(c[vs..ve].iter().collect()));
                remaining.extend_from_slice(&c[copied..i]);
                i = ve + ARG_VALUE_END.len();
                copied = i;
            }
            None => i += 1,
        }
    }
    remaining.extend_from_slice(&c[copied..]);
    let mut open = None;
    if partial {
        for i in 0..remaining.len() {
            if let Some((k, vs)) = arg_head(&remaining, i) {
                let key = k.trim().to_string();
                if !key.is_empty() {
                    params.insert(key.clone(), Value::String(remaining[vs..].iter().collect()));
                    open = Some(key);
                }
                break;
            }
        }
    }
    (params, open)
}

pub fn convert(raw: &str, partial: bool) -> String {
    dumps(&Value::Object(parse_args(raw, partial).0))
}

/// The last `keep` characters of `text`.
fn tail(text: &str, keep: usize) -> String {
    let start = text.char_indices().rev().nth(keep.saturating_sub(1)).map_or(0, |(i, _)| i);
    if keep == 0 {
        return String::new();
    }
    text[start..].to_string()
}

/// Streams the open last value until `</arg_value>` appears: the window
/// is the text that could still begin the end marker.
fn open_value(raw: &str) -> Option<OpenValue> {
    let (params, open) = parse_args(raw, true);
    let open = open?;
    if params.keys().next_back() != Some(&open) {
        return None;
    }
    Some(OpenValue { window: tail(raw, ARG_VALUE_END.chars().count() - 1), ..Default::default() })
}

fn extend_value(value: &mut OpenValue, delta: &str) -> Option<String> {
    let text = format!("{}{}", value.window, delta);
    if text.contains(ARG_VALUE_END) {
        return None;
    }
    value.window = tail(&text, ARG_VALUE_END.chars().count() - 1);
    let q = dumps_str(delta);
    Some(q[1..q.len() - 1].to_string())
}

/// GLM's `<arg_key>k</arg_key><arg_value>v</arg_value>` arguments.
static ARGS: ArgSyntax = ArgSyntax { convert: |raw, partial, _| Some(convert(raw, partial)), stream_deltas: true,
    structural_chars: None, open_value, extend_value };


// Registration: `glm45` (alias `glm47`) reasoning, `glm47` (alias `glm45`)
// tool calls. GLM-4.7 always constrains the call envelope.

pub(super) fn reasoning(ctx: &ChatContext, model: &Arc<Model>) -> EngineReasoning {
    EngineReasoning::switched(config, ctx.thinking_or_enable_thinking(), model)
}

static REASONING: ReasoningFamily =
    Family { names: &["glm45", "glm47"], needs: "", load: |_| Ok(Arc::new(VllmStreamReasoningFamily(reasoning))) };

static TOOLS: ToolFamily = Family {
    names: &["glm47", "glm45"],
    needs: "",
    load: |_| Ok(Arc::new(tools(&TAG))),
};

/// The tool parser under a tag model (GLM's own, or a sibling's strict level).
pub(super) fn tools(tag_model: &'static TagModel) -> EngineToolFamily {
    let config = |ctx: &ChatContext| config(ctx.thinking_or_enable_thinking());
    EngineToolFamily { config, tag_model: Some(tag_model), tool_header: None }
}

static TAG: TagModel = TagModel { name: "glm_4_7", build: tag_for, default_level: StrictLevel::Function };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
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
pub(super) fn tag_for(tools: &[TagTool], choice: Choice) -> Value {
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
