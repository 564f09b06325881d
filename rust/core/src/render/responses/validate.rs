//! `ResponsesRequest` validation as vLLM runs it: the `mode="before"` model
//! validators first (each a `VLLMValidationError`, 400 naming the field),
//! then pydantic's field checks (one "N validation errors" 400).
//!
//! The big unions (`input` items, `tools`, `tool_choice`, `text.format`)
//! are checked for what the render path relies on; their errors name the
//! same first location as pydantic's, but do not list every union member
//! (docs/divergences.md).

use serde_json::Value;

use crate::error::ApiError;
use crate::pycompat::pydantic::{read, Errors, Loc};
use crate::wire::request::{check_cache_salt, Obj};

fn invalid(message: &str, param: &str) -> ApiError {
    ApiError::invalid_param(format!("{message} (parameter={param})"), param)
}

fn not_found() -> ApiError {
    invalid("Tool choice 'function' not found in 'tools' parameter.", "tool_choice")
}

/// The model validators, in the order pydantic runs them (the last defined
/// first). Returns the request with `tool_choice` normalised as
/// `check_tool_usage` leaves it.
pub fn model_validators(o: &Obj) -> Result<Obj, ApiError> {
    let mut o = o.clone();
    check_tool_usage(&mut o)?;
    if let Some(Value::Array(tools)) = o.get("tools") {
        let grammar = tools.iter().any(|t| {
            t.get("type").and_then(Value::as_str) == Some("custom")
                && t.get("format").and_then(|f| f.get("type")).and_then(Value::as_str) == Some("grammar")
        });
        if grammar {
            return Err(invalid(
                "Custom tools with a grammar format are not supported; only free-form text custom tools are accepted.",
                "tools",
            ));
        }
    }
    if o.get("prompt").is_some_and(|p| !p.is_null()) {
        return Err(invalid("prompt template is not supported", "prompt"));
    }
    let truthy = |k: &str| o.get(k).is_some_and(crate::pycompat::truthy);
    if truthy("background") && o.get("store").is_some_and(|s| !crate::pycompat::truthy(s)) {
        return Err(invalid("background can only be used when `store` is true", "background"));
    }
    check_cache_salt(&o)?;
    Ok(o)
}

/// `check_tool_usage`: no tools means no tool choice; a named choice must
/// name a tool (a namespaced one by its local name when that is unique).
fn check_tool_usage(o: &mut Obj) -> Result<(), ApiError> {
    let tools = o.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
    let choice = o.get("tool_choice").cloned().unwrap_or(Value::String("auto".into()));
    let named = choice.get("type").and_then(Value::as_str).is_some_and(|t| t == "function" || t == "custom");
    if tools.is_empty() {
        match choice.as_str() {
            Some("auto" | "none") => {
                o.insert("tool_choice".into(), Value::String("none".into()));
            }
            Some("required") => {
                return Err(invalid("Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice"))
            }
            _ if named => return Err(not_found()),
            _ => {}
        }
        return Ok(());
    }
    if !named {
        return Ok(());
    }
    let Some(name) = choice.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) else {
        return Err(not_found());
    };
    let resolved = resolve_named_choice(name, &tools)?;
    if resolved != name {
        let mut choice = choice.as_object().cloned().unwrap_or_default();
        choice.insert("name".into(), Value::String(resolved));
        o.insert("tool_choice".into(), Value::Object(choice));
    }
    Ok(())
}

/// `_resolve_named_tool_choice`.
fn resolve_named_choice(name: &str, tools: &[Value]) -> Result<String, ApiError> {
    let mut exact: Vec<String> = Vec::new();
    let mut local: Vec<(String, String)> = Vec::new();
    for tool in tools {
        if tool.get("type").and_then(Value::as_str) == Some("namespace") {
            let (Some(ns), Some(inner)) =
                (tool.get("name").and_then(Value::as_str), tool.get("tools").and_then(Value::as_array))
            else {
                return Ok(name.to_string());
            };
            for t in inner {
                if let Some(n) = t.get("name").and_then(Value::as_str) {
                    let flat = format!("{ns}__{n}");
                    exact.push(flat.clone());
                    local.push((n.to_string(), flat));
                }
            }
        } else if let Some(n) = tool.get("name").and_then(Value::as_str) {
            exact.push(n.to_string());
        }
    }
    if exact.iter().any(|n| n == name) {
        return Ok(name.to_string());
    }
    let candidates: Vec<&String> = local.iter().filter(|(n, _)| n == name).map(|(_, flat)| flat).collect();
    match candidates.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(not_found()),
        many => {
            let list = many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
            Err(invalid(
                &format!("Tool choice '{name}' is ambiguous: it is defined in more than one namespace ({list}). Select it by its full '<namespace>__<name>' name."),
                "tool_choice",
            ))
        }
    }
}

const INCLUDE: &[&str] = &[
    "code_interpreter_call.outputs",
    "computer_call_output.output.image_url",
    "file_search_call.results",
    "message.input_image.image_url",
    "message.output_text.logprobs",
    "reasoning.encrypted_content",
];
const EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh", "max"];
const ROLES: &[&str] = &["user", "assistant", "system", "developer"];
/// Item types the OpenAI input union knows (others fit no member).
const ITEM_TYPES: &[&str] = &[
    "message",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "web_search_call",
    "function_call",
    "function_call_output",
    "reasoning",
    "image_generation_call",
    "code_interpreter_call",
    "local_shell_call",
    "local_shell_call_output",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "mcp_call",
    "custom_tool_call_output",
    "custom_tool_call",
    "item_reference",
    "compaction",
];
const TOOL_TYPES: &[&str] = &[
    "function",
    "file_search",
    "computer",
    "computer_use_preview",
    "web_search",
    "web_search_preview",
    "web_search_2025_08_26",
    "web_search_preview_2025_03_11",
    "mcp",
    "code_interpreter",
    "image_generation",
    "local_shell",
    "shell",
    "custom",
    "namespace",
    "apply_patch",
    "tool_search",
];

/// pydantic's field checks, in field order.
pub fn fields(o: &Obj) -> Result<(), ApiError> {
    let root = Loc::root("body");
    let mut errs = Errors::default();
    let get = |k: &str| read::opt(o, k);
    macro_rules! check {
        ($key:literal, $reader:expr) => {
            if let Some(v) = get($key) {
                let loc = root.field($key);
                #[allow(clippy::redundant_closure_call)]
                ($reader)(v, &loc, &mut errs);
            }
        };
    }
    let boolean = |v: &Value, l: &Loc, e: &mut Errors| {
        read::boolean(v, l, e);
    };
    let string = |v: &Value, l: &Loc, e: &mut Errors| {
        read::string(v, l, e);
    };
    let int = |v: &Value, l: &Loc, e: &mut Errors| {
        read::int(v, l, e);
    };
    let float = |v: &Value, l: &Loc, e: &mut Errors| {
        read::float(v, l, e);
    };
    let dict = |v: &Value, l: &Loc, e: &mut Errors| {
        read::dict(v, l, e);
    };
    let penalty = |v: &Value, l: &Loc, e: &mut Errors| {
        if let Some(x) = read::float(v, l, e) {
            if x > 2.0 {
                e.push(
                    "less_than_equal",
                    l,
                    "Input should be less than or equal to 2",
                    Some(v),
                    Some("{'le': 2.0}".into()),
                );
            } else if x < -2.0 {
                let ctx = Some("{'ge': -2.0}".into());
                e.push("greater_than_equal", l, "Input should be greater than or equal to -2", Some(v), ctx);
            }
        }
    };
    let int64 = |v: &Value, l: &Loc, e: &mut Errors| {
        let big_float = v.as_f64().filter(|f| v.is_f64() && f.fract() == 0.0 && *f >= 9.2e18);
        if v.as_u64().is_some_and(|u| u > i64::MAX as u64) || big_float.is_some() {
            // A JSON integer past u64 arrives as a float: show it as Python's int.
            let input = big_float.map_or_else(|| v.clone(), |f| Value::String(format!("{f:.0}")));
            let ctx = Some("{'le': 9223372036854775807}".into());
            e.push(
                "less_than_equal",
                l,
                "Input should be less than or equal to 9223372036854775807",
                Some(&input),
                ctx,
            );
        } else {
            read::int(v, l, e);
        }
    };
    check!("background", boolean);
    check!("include", |v: &Value, l: &Loc, e: &mut Errors| {
        if let Some(items) = read::list(v, l, e) {
            for (i, item) in items.iter().enumerate() {
                read::literal_str(item, INCLUDE, &l.index(i), e);
            }
        }
    });
    match o.get("input") {
        None => errs.push("missing", &root.field("input"), "Field required", Some(&Value::Object(o.clone())), None),
        Some(v) => input(v, &root.field("input"), &mut errs),
    }
    check!("instructions", string);
    check!("max_output_tokens", int);
    check!("max_tool_calls", int);
    check!("metadata", dict);
    check!("model", string);
    check!("logit_bias", |v: &Value, l: &Loc, e: &mut Errors| {
        if let Some(m) = read::dict(v, l, e) {
            for (k, x) in m {
                let _ = k;
                read::float(x, l, e);
            }
        }
    });
    check!("parallel_tool_calls", boolean);
    check!("previous_response_id", string);
    check!("reasoning", |v: &Value, l: &Loc, e: &mut Errors| {
        if let Some(r) = read::model(v, "Reasoning", l, e) {
            if let Some(effort) = read::opt(r, "effort") {
                read::literal_str(effort, EFFORTS, &l.field("effort"), e);
            }
            for key in ["summary", "generate_summary"] {
                if let Some(s) = read::opt(r, key) {
                    let lk = l.field(if key == "summary" { "summary" } else { "generate_summary" });
                    read::literal_str(s, &["auto", "concise", "detailed"], &lk, e);
                }
            }
        }
    });
    if let Some(v) = o.get("include_reasoning") {
        read::boolean(v, &root.field("include_reasoning"), &mut errs);
    }
    if let Some(v) = o.get("service_tier") {
        read::literal_str(v, &["auto", "default", "flex", "scale", "priority"], &root.field("service_tier"), &mut errs);
    }
    check!("store", boolean);
    check!("stream", boolean);
    check!("temperature", float);
    check!("text", text);
    if let Some(v) = o.get("tool_choice") {
        tool_choice(v, &root.field("tool_choice"), &mut errs);
    }
    if let Some(v) = o.get("tools") {
        tools(v, &root.field("tools"), &mut errs);
    }
    check!("top_logprobs", int);
    check!("top_p", float);
    check!("top_k", int);
    check!("min_p", float);
    check!("truncation", |v: &Value, l: &Loc, e: &mut Errors| {
        read::literal_str(v, &["auto", "disabled"], l, e);
    });
    check!("user", string);
    check!("skip_special_tokens", boolean);
    for key in ["spaces_between_special_tokens", "include_stop_str_in_output"] {
        if let Some(v) = o.get(key) {
            let l = root.field(if key == "include_stop_str_in_output" {
                "include_stop_str_in_output"
            } else {
                "spaces_between_special_tokens"
            });
            read::boolean(v, &l, &mut errs);
        }
    }
    check!("presence_penalty", penalty);
    check!("frequency_penalty", penalty);
    check!("prompt_cache_key", string);
    check!("safety_identifier", string);
    check!("watermarking", boolean);
    if let Some(v) = o.get("request_id") {
        read::string(v, &root.field("request_id"), &mut errs);
    }
    check!("session_id", string);
    if let Some(v) = o.get("priority") {
        int64(v, &root.field("priority"), &mut errs);
    }
    check!("cache_salt", string);
    check!("chat_template_kwargs", dict);
    check!("repetition_penalty", float);
    check!("seed", int64);
    check!("stop", |v: &Value, l: &Loc, e: &mut Errors| {
        if !v.is_string() {
            if let Some(items) = read::list(v, l, e) {
                for (i, item) in items.iter().enumerate() {
                    read::string(item, &l.index(i), e);
                }
            }
        }
    });
    check!("stop_token_ids", |v: &Value, l: &Loc, e: &mut Errors| {
        read::int_list(v, None, l, e);
    });
    if let Some(v) = o.get("ignore_eos") {
        read::boolean(v, &root.field("ignore_eos"), &mut errs);
    }
    check!("vllm_xargs", dict);
    check!("kv_transfer_params", dict);
    check!("ec_transfer_params", dict);
    check!("structured_outputs", dict);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.into_api_error())
    }
}

/// `input: str | list[ResponseInputOutputItem]`.
fn input(v: &Value, loc: &Loc, errs: &mut Errors) {
    if v.is_string() {
        return;
    }
    let Some(items) = v.as_array() else {
        errs.push("string_type", loc, "Input should be a valid string", Some(v), None);
        errs.push("list_type", loc, "Input should be a valid list", Some(v), None);
        return;
    };
    let bad = items.iter().position(|item| !item_fits(item));
    if let Some(i) = bad {
        // The first of pydantic's errors; the union members' own follow.
        errs.push("string_type", loc, "Input should be a valid string", Some(v), None);
        let item = &items[i];
        let l = loc.index(i);
        let l = l.field("EasyInputMessageParam");
        match item.as_object() {
            None => errs.push("dict_type", &l, "Input should be a valid dictionary", Some(item), None),
            Some(o) => errs.push(
                "union_tag_invalid",
                &l,
                "Input fits no input item type",
                Some(&Value::Object(o.clone())),
                None,
            ),
        }
    }
}

/// Whether an input item fits some member of the item union (as far as the
/// render path reads it).
fn item_fits(item: &Value) -> bool {
    let Some(o) = item.as_object() else { return false };
    let s = |k: &str| o.get(k).is_some_and(Value::is_string);
    let kind = o.get("type").and_then(Value::as_str);
    match kind {
        None | Some("message") => {
            let role_ok = o.get("role").and_then(Value::as_str).is_some_and(|r| ROLES.contains(&r));
            let content_ok = match o.get("content") {
                Some(Value::String(_)) => true,
                Some(Value::Array(parts)) => parts.iter().all(part_fits),
                _ => false,
            };
            role_ok && content_ok
        }
        Some("function_call") => s("call_id") && s("name") && s("arguments"),
        Some("function_call_output") => o.get("output").is_some_and(|x| x.is_string() || x.is_array()),
        Some("reasoning") => o.get("summary").is_some_and(Value::is_array),
        Some("custom_tool_call") => s("call_id") && s("name") && s("input"),
        Some("custom_tool_call_output") => s("call_id") && o.contains_key("output"),
        Some(other) => ITEM_TYPES.contains(&other),
    }
}

fn part_fits(part: &Value) -> bool {
    let Some(p) = part.as_object() else { return false };
    let text = p.get("text").is_some_and(Value::is_string);
    match p.get("type").and_then(Value::as_str) {
        Some("input_text" | "output_text") => text,
        Some("refusal") => p.get("refusal").is_some_and(Value::is_string),
        Some("input_image" | "input_file" | "input_audio") => true,
        _ => false,
    }
}

/// `text: ResponseTextConfig`.
fn text(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(t) = read::model(v, "ResponseTextConfig", loc, errs) else { return };
    if let Some(f) = read::opt(t, "format") {
        let l = loc.field("format");
        let ok = match f.get("type").and_then(Value::as_str) {
            Some("text" | "json_object") => true,
            Some("json_schema") => {
                f.get("name").is_some_and(Value::is_string) && f.get("schema").is_some_and(Value::is_object)
            }
            _ => false,
        };
        if !ok {
            // pydantic's first error: the first member's `type`.
            let l = l.field("ResponseFormatText");
            read::literal_str(f.get("type").unwrap_or(&Value::Null), &["text"], &l.field("type"), errs);
        }
    }
    if let Some(verbosity) = read::opt(t, "verbosity") {
        read::literal_str(verbosity, &["low", "medium", "high"], &loc.field("verbosity"), errs);
    }
}

/// `tool_choice: ToolChoice` (a union of literals and typed objects).
fn tool_choice(v: &Value, loc: &Loc, errs: &mut Errors) {
    match v {
        Value::String(s) if ["none", "auto", "required"].contains(&s.as_str()) => {}
        Value::Object(o) if o.get("type").is_some_and(Value::is_string) => {}
        _ => {
            read::literal_str(v, &["none", "auto", "required"], loc, errs);
            errs.push(
                "model_attributes_type",
                &loc.field("ToolChoiceAllowed"),
                "Input should be a valid dictionary or object to extract fields from",
                Some(v),
                None,
            );
        }
    }
}

/// `tools: list[Tool]`.
fn tools(v: &Value, loc: &Loc, errs: &mut Errors) {
    let Some(items) = read::list(v, loc, errs) else { return };
    for (i, tool) in items.iter().enumerate() {
        let l = loc.index(i);
        let member = l.field("FunctionTool");
        let Some(t) = tool.as_object() else {
            errs.push(
                "model_attributes_type",
                &member,
                "Input should be a valid dictionary or object to extract fields from",
                Some(tool),
                None,
            );
            continue;
        };
        let kind = t.get("type").and_then(Value::as_str);
        if !kind.is_some_and(|k| TOOL_TYPES.contains(&k)) {
            // `FunctionTool` declares `name` before `type`.
            if t.get("name").is_none() {
                errs.push("missing", &member.field("name"), "Field required", Some(tool), None);
            }
            read::literal_str(t.get("type").unwrap_or(&Value::Null), &["function"], &member.field("type"), errs);
            continue;
        }
        let needs_name = matches!(kind, Some("function" | "custom" | "namespace"));
        if needs_name && !t.get("name").is_some_and(Value::is_string) {
            match t.get("name") {
                None => errs.push("missing", &member.field("name"), "Field required", Some(tool), None),
                Some(n) => {
                    read::string(n, &member.field("name"), errs);
                }
            }
        }
    }
}
