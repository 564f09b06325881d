//! Chat render in vLLM's `mistral` tokenizer mode (`MistralRenderer`): the
//! request's own messages go through mistral_common (`messages`: conversion,
//! validation, normalization; `encode`: the v13 token layout), not a chat
//! template; the Mistral parser then constrains the output with a Lark
//! grammar (`grammar`).

mod encode;
mod grammar;
mod messages;

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::structured::checks::one_constraint;
use crate::structured::request::{response_format_override, MAX_JSON_NESTING};
use crate::tekken::Tekken;
use grammar::{GrammarTool, Mode};

/// `truncate_tool_call_ids`: ids longer than 9 chars keep their last 9
/// (render only; `/tokenize` keeps them whole). A `null` result id fails
/// as Python's `len(None)` does.
pub(crate) fn truncate_call_ids(messages: &[Value]) -> Result<Vec<Value>, ApiError> {
    let last9 = |id: &str| -> String {
        let n = id.chars().count();
        id.chars().skip(n.saturating_sub(9)).collect()
    };
    let mut out = messages.to_vec();
    for m in out.iter_mut().filter_map(Value::as_object_mut) {
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                if let Some(Value::Array(calls)) = m.get_mut("tool_calls") {
                    for call in calls.iter_mut().filter_map(Value::as_object_mut) {
                        if let Some(Value::String(id)) = call.get("id") {
                            let cut = last9(id);
                            call.insert("id".into(), Value::String(cut));
                        }
                    }
                }
            }
            Some("tool" | "tool_results") => match m.get("tool_call_id") {
                Some(Value::Null) => return Err(ApiError::bad_request("object of type 'NoneType' has no len()")),
                Some(Value::String(id)) => {
                    let cut = last9(id);
                    m.insert("tool_call_id".into(), Value::String(cut));
                }
                _ => {}
            },
            _ => {}
        }
    }
    Ok(out)
}

/// `validate_request_params`: no request chat template, and only the
/// reasoning efforts Mistral models know.
pub(crate) fn check_request_params(o: &Map<String, Value>) -> Result<(), ApiError> {
    if o.get("chat_template").is_some_and(|v| !v.is_null())
        || o.get("chat_template_kwargs").is_some_and(|v| !v.is_null())
    {
        return Err(ApiError::invalid_param(
            "chat_template is not supported for Mistral tokenizers. (parameter=chat_template)",
            "chat_template",
        ));
    }
    if let Some(effort) = o.get("reasoning_effort").and_then(Value::as_str).filter(|e| !e.is_empty()) {
        if !["none", "high"].contains(&effort) {
            return Err(ApiError::invalid_param(
                format!("reasoning_effort={effort} is not supported by Mistral models. Supported values are: ['none', 'high']. (parameter=reasoning_effort)"),
                "reasoning_effort",
            ));
        }
    }
    Ok(())
}

/// `MistralTokenizer.apply_chat_template`: the generation-prompt checks,
/// then mistral_common's request (tools as the prompt shows them, messages
/// converted, validated and normalized) encoded. `messages` are vLLM's
/// request messages with tool-call arguments already parsed.
pub(crate) fn prompt_ids(
    tekken: &Tekken,
    messages: &[Value],
    tools: Option<&[Value]>,
    add_generation_prompt: bool,
    continue_final: bool,
) -> Result<Vec<u32>, ApiError> {
    if add_generation_prompt && continue_final {
        return Err(ApiError::bad_request(
            "Cannot set both `add_generation_prompt` and `continue_final_message` to True.",
        ));
    }
    let last_role = messages.last().ok_or_else(|| ApiError::bad_request("list index out of range"))?;
    let last_role = last_role.get("role").and_then(Value::as_str);
    if add_generation_prompt && last_role == Some("assistant") {
        return Err(ApiError::bad_request("Cannot set `add_generation_prompt` to True when the last message is from the assistant. Consider using `continue_final_message` instead."));
    }
    if continue_final && last_role != Some("assistant") {
        return Err(ApiError::bad_request(
            "Cannot set `continue_final_message` to True when the last message is not from the assistant.",
        ));
    }
    let refused = |message: String| ApiError::bad_request(message);
    let converted = messages::convert(messages, continue_final).map_err(refused)?;
    let tools = tools.unwrap_or(&[]);
    let schemas: Vec<(&str, Option<&Value>)> =
        tools.iter().map(|t| (function_str(t, "name"), t.get("function").and_then(|f| f.get("parameters")))).collect();
    messages::validate(&converted, &schemas, tekken.version).map_err(refused)?;
    let normal = messages::normalize(converted, tekken.version);
    let tools_json = (!tools.is_empty()).then(|| tools_json(tools));
    encode::encode(tekken, &normal, tools_json.as_deref()).map_err(refused)
}

fn function_str<'a>(tool: &'a Value, key: &str) -> &'a str {
    tool.get("function").and_then(|f| f.get(key)).and_then(Value::as_str).unwrap_or("")
}

/// The tools as V13 shows them: `Tool.model_dump()` without `strict`
/// (`parameters` `{}` and `description` `""` when missing).
fn tools_json(tools: &[Value]) -> String {
    let shown: Vec<Value> = tools
        .iter()
        .map(|t| {
            let f = t.get("function");
            let field = |key: &str, default: Value| {
                f.and_then(|f| f.get(key)).filter(|v| !v.is_null()).cloned().unwrap_or(default)
            };
            serde_json::json!({
                "type": "function",
                "function": {
                    "name": field("name", Value::Null),
                    "description": field("description", Value::String(String::new())),
                    "parameters": field("parameters", Value::Object(Map::new())),
                },
            })
        })
        .collect();
    messages::json_text(&Value::Array(shown))
}

/// What the Mistral parser's `adjust_request` makes of a request.
pub(crate) enum Adjusted {
    /// Its grammar replaces the request's structured outputs (special
    /// tokens are left to the request; reasoning counts as ended).
    Grammar(Value),
    /// The request asks for a constraint the grammar factory cannot join:
    /// it is kept, and special tokens are kept in the output.
    Kept,
}

const JSON_ANY: &str = r#"{"anyOf": [{"type": "object"}, {"type": "array"}]}"#;

/// `MistralParser.adjust_request` on a tekken tokenizer that supports
/// grammars (the structured outputs it sets, or none).
pub(crate) fn adjust(tekken: &Tekken, o: &Map<String, Value>, tools: Option<&[Value]>) -> Result<Adjusted, ApiError> {
    let so = o.get("structured_outputs").and_then(Value::as_object);
    let rf = o.get("response_format").and_then(Value::as_object);
    let set = |key: &str| so.is_some_and(|s| s.get(key).is_some_and(|v| !v.is_null()));
    let rf_type = rf.and_then(|r| r.get("type")).and_then(Value::as_str);
    if ["regex", "choice", "grammar", "whitespace_pattern", "structural_tag"].into_iter().any(set)
        || rf_type == Some("structural_tag")
    {
        return Ok(Adjusted::Kept);
    }
    let json_any = || serde_json::from_str::<Value>(JSON_ANY).unwrap_or(Value::Null);
    let mut rf_cleared = false;
    let schema: Option<Value> = match so {
        Some(s) if s.get("json_object").is_some_and(|v| !v.is_null()) => Some(json_any()),
        Some(s) => match s.get("json") {
            Some(Value::String(text)) => {
                if let Some(message) = crate::pycompat::json::loads_error(text) {
                    return Err(ApiError::bad_request(message));
                }
                let parsed = crate::pycompat::json::loads(text).unwrap_or(Value::Null);
                if crate::structured::request::exceeds_nesting(&parsed, MAX_JSON_NESTING) {
                    return Err(ApiError::bad_request(
                        "The JSON schema is nested too deeply: objects and arrays may nest at most 64 levels",
                    ));
                }
                Some(parsed)
            }
            Some(v @ Value::Object(_)) => Some(v.clone()),
            _ => None,
        },
        None => match rf_type {
            Some("json_object") => {
                rf_cleared = true;
                Some(json_any())
            }
            Some("json_schema") => {
                rf_cleared = true;
                rf.and_then(|r| r.get("json_schema"))
                    .and_then(|j| j.get("schema").or_else(|| j.get("json_schema")))
                    .cloned()
            }
            Some(_) => {
                rf_cleared = true;
                None
            }
            None => None,
        },
    };
    let mode = match o.get("tool_choice") {
        None | Some(Value::Null) => Mode::Auto,
        Some(Value::String(s)) if s == "none" => Mode::None,
        Some(Value::String(s)) if s == "required" => Mode::Required,
        Some(Value::String(_)) => Mode::Auto,
        Some(named) => Mode::Named(
            named.get("function").and_then(|f| f.get("name")).and_then(Value::as_str).unwrap_or("").to_string(),
        ),
    };
    // A request without tools defaults to "none" (pydantic), with tools to "auto".
    let mode = match (o.get("tool_choice"), tools.is_some_and(|t| !t.is_empty())) {
        (None, false) => Mode::None,
        _ => mode,
    };
    let grammar_tools: Vec<GrammarTool> = tools
        .unwrap_or(&[])
        .iter()
        .map(|t| GrammarTool {
            name: function_str(t, "name"),
            parameters: t.get("function").and_then(|f| f.get("parameters")).filter(|p| !p.is_null()),
            strict: t.get("function").and_then(|f| f.get("strict")).and_then(Value::as_bool).unwrap_or(false),
        })
        .collect();
    let parallel = o.get("parallel_tool_calls").and_then(Value::as_bool).unwrap_or(true);
    let lark = if mode == Mode::None && schema.is_some() {
        grammar::lark(tekken, &Mode::None, &[], schema.as_ref(), true, true)
    } else {
        grammar::check_mode(&mode, &grammar_tools).map_err(ApiError::bad_request)?;
        grammar::lark(tekken, &mode, &grammar_tools, schema.as_ref(), parallel, false)
    };
    let mut params = crate::structured::format::params(None, None);
    params["grammar"] = Value::String(lark);
    // `to_sampling_params` lays a `response_format` left on the request
    // over the grammar: two constraints, refused.
    if let (false, Some(rf)) = (rf_cleared, rf) {
        if let Some((key, value)) = response_format_override(rf) {
            params[key] = value;
        }
    }
    if let Some(p) = params.as_object() {
        one_constraint(p)?;
    }
    Ok(Adjusted::Grammar(params))
}

/// `is_reasoning_end` for the prompt (no grammar): scanning back, a
/// `[/THINK]` or `[TOOL_CALLS]` ends reasoning, a `[THINK]` opens it.
/// Without `[THINK]` (v11) the parser's markers are text, which vLLM does
/// not look for in the prompt: `None`.
pub(crate) fn reasoning_ended(tekken: &Tekken, prompt: &[u32]) -> Option<bool> {
    let id = |t: &str| tekken.special_id(t);
    let think = id("[THINK]")?;
    for &token in prompt.iter().rev() {
        if Some(token) == id("[/THINK]") || Some(token) == id("[TOOL_CALLS]") {
            return Some(true);
        }
        if token == think {
            return Some(false);
        }
    }
    Some(false)
}
