//! Chat prompts of vLLM's `kimi_k3` tokenizer mode (`KimiK3Renderer`): the
//! messages parsed as for a template (content format "string"), each run of
//! tool results put in its calls' order, the request's thinking switches
//! translated into the tokenizer's keywords, then written to ids by K3's
//! own encoding (`template::kimi_k3`).

use serde_json::{Map, Value};

use super::messages;
use crate::error::ApiError;
use crate::model::TokenizerMode;
use crate::parse::context::ChatContext;
use crate::pycompat::repr::repr_value;
use crate::pycompat::truthy;
use crate::served::Core;
use crate::template::kimi_k3::{self, Encoders, Options};
use crate::template::ContentFormat;
use crate::wire::request::Obj;

/// What a route adds to the tokenizer's keywords besides the chat
/// template kwargs (`ChatParams.tool_choice` / `.response_format`).
#[derive(Debug, Default)]
pub(crate) struct RouteParams {
    /// The request's `tool_choice` when it lists tools.
    pub tool_choice: Option<Value>,
    /// The request's `response_format`, as pydantic dumps it.
    pub response_format: Option<Value>,
}

impl RouteParams {
    /// A chat request's: `tool_choice` only with tools (vLLM collapses the
    /// no-tools default), `response_format` as `model_dump(mode="json",
    /// exclude_none=True)` writes it.
    pub(crate) fn of_chat(o: &Obj) -> RouteParams {
        RouteParams {
            tool_choice: Self::tool_choice(o),
            response_format: o.get("response_format").and_then(dump_format),
        }
    }

    /// A Responses request's: its own tools (hosted ones count) and choice.
    pub(crate) fn tool_choice(o: &Obj) -> Option<Value> {
        o.get("tools").filter(|t| truthy(t))?;
        o.get("tool_choice").cloned()
    }
}

/// `ResponseFormat.model_dump(mode="json", exclude_none=True)`: nulls go,
/// and the JSON schema's `schema` is written under its field name.
fn dump_format(format: &Value) -> Option<Value> {
    let o = format.as_object()?;
    let mut out = Map::new();
    for (k, v) in o.iter().filter(|(_, v)| !v.is_null()) {
        let v = match (k.as_str(), v) {
            ("json_schema", Value::Object(holder)) => {
                let mut dumped = Map::new();
                for (hk, hv) in holder.iter().filter(|(_, v)| !v.is_null()) {
                    dumped.insert(if hk == "schema" { "json_schema".into() } else { hk.clone() }, hv.clone());
                }
                Value::Object(dumped)
            }
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Some(Value::Object(out))
}

/// `_apply_k3_thinking_kwargs` and the tokenizer's defaults: the keywords
/// the encoding reads.
fn options(kwargs: &Map<String, Value>, params: RouteParams) -> Result<Options, ApiError> {
    let mut kw = kwargs.clone();
    if let Some(enable) = kw.remove("enable_thinking").filter(|v| !v.is_null()) {
        kw.entry("thinking").or_insert(enable);
    }
    match kw.remove("reasoning_effort") {
        Some(Value::String(e)) if e == "none" => {
            kw.entry("thinking").or_insert(Value::Bool(false));
        }
        Some(e) if !e.is_null() => {
            kw.entry("thinking_effort").or_insert(e);
        }
        _ => {}
    }
    if let Some(effort) = kw.get("thinking_effort").filter(|e| !e.is_null()) {
        if !effort.as_str().is_some_and(|e| kimi_k3::EFFORTS.contains(&e)) {
            let value = match effort {
                Value::String(s) => s.clone(),
                other => repr_value(other),
            };
            return Err(ApiError::invalid_param(
                format!("Kimi K3 supports thinking_effort values: low, high, max (parameter=thinking_effort, value={value})"),
                "thinking_effort",
            ));
        }
    }
    if let Some(choice) = params.tool_choice.filter(|c| !c.is_null() && c.as_str() != Some("auto")) {
        kw.insert("tool_choice".into(), choice);
    }
    if let Some(format) = params.response_format {
        kw.insert("response_format".into(), format);
    }
    let image_prompts = match kw.get("image_prompts") {
        Some(Value::Array(items)) => {
            Some(items.iter().map(|v| v.as_str().map_or_else(|| repr_value(v), str::to_string)).collect())
        }
        _ => None,
    };
    Ok(Options {
        thinking: kw.get("thinking").is_none_or(truthy),
        effort: Some(kw.get("thinking_effort").cloned().unwrap_or_else(|| Value::String("max".into()))),
        tool_choice: kw.get("tool_choice").cloned(),
        response_format: kw.get("response_format").cloned(),
        response_schema: kw.get("response_schema").filter(|v| !v.is_null()).cloned(),
        add_generation_prompt: kw.get("add_generation_prompt").is_none_or(truthy),
        image_prompts,
    })
}

/// `_normalize_k3_tool_messages`: after each assistant turn with calls, its
/// run of tool results, when every one names a call (by id, or by the alias
/// `NAME:POSITION`), is sorted into call order and each takes the call's
/// name as `tool` and its 1-based `index`; otherwise the run stays as is.
fn normalize_tool_messages(conversation: Vec<Value>) -> Vec<Value> {
    let role = |m: &Value| m.get("role").and_then(Value::as_str) == Some("tool");
    let mut out = Vec::with_capacity(conversation.len());
    let mut i = 0;
    while i < conversation.len() {
        let message = &conversation[i];
        out.push(message.clone());
        i += 1;
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let Some(calls) = message.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty()) else {
            continue;
        };
        let mut targets: Vec<(String, usize, String)> = Vec::new();
        for (position, call) in calls.iter().enumerate() {
            let Some(name) = call.get("function").and_then(|f| f.get("name")).and_then(Value::as_str) else {
                continue;
            };
            if name.is_empty() {
                continue;
            }
            let mut aliases = vec![format!("{name}:{position}")];
            if let Some(id) = call.get("id").filter(|id| truthy(id)) {
                aliases.insert(0, id.as_str().map_or_else(|| repr_value(id), str::to_string));
            }
            for alias in aliases {
                if !targets.iter().any(|(a, _, _)| *a == alias) {
                    targets.push((alias, position, name.to_string()));
                }
            }
        }
        let start = i;
        while i < conversation.len() && role(&conversation[i]) {
            i += 1;
        }
        let block = &conversation[start..i];
        let mut resolved = Vec::with_capacity(block.len());
        for (order, tool) in block.iter().enumerate() {
            let id = tool.get("tool_call_id").filter(|id| !id.is_null());
            let key = id.map(|id| id.as_str().map_or_else(|| repr_value(id), str::to_string));
            let Some((_, position, name)) = key.and_then(|k| targets.iter().find(|(a, _, _)| *a == k)) else {
                break;
            };
            let mut enriched = tool.clone();
            if let Some(o) = enriched.as_object_mut() {
                o.insert("tool".into(), Value::String(name.clone()));
                o.insert("index".into(), Value::from(position + 1));
            }
            resolved.push((*position, order, enriched));
        }
        if resolved.len() < block.len() {
            out.extend(block.iter().cloned());
        } else {
            resolved.sort_by_key(|(position, order, _)| (*position, *order));
            out.extend(resolved.into_iter().map(|(_, _, m)| m));
        }
    }
    out
}

impl Core {
    /// Whether chat prompts come from Kimi K3's encoding (ids, no text).
    pub(crate) fn writes_kimi_k3(&self) -> bool {
        self.model.mode == TokenizerMode::KimiK3 && self.kimi_k3.is_some()
    }

    /// `KimiK3Renderer.render_messages` over a request's own messages.
    pub(crate) fn kimi_k3_ids(
        &self,
        o: &Obj,
        ctx: &ChatContext,
        tools: Option<&[Value]>,
        params: RouteParams,
    ) -> Result<Vec<u32>, ApiError> {
        let raw = o.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        messages::check_content_parts(raw, true)?;
        if crate::wire::chat_fields::has_media_part(o) {
            return Err(ApiError::bad_request(
                "derender does not render images: Kimi K3 expands each image through its multimodal processor, which derender does not build; send text only (messages[].content image parts)",
            ));
        }
        self.kimi_k3_messages_ids(raw, ctx, tools, params)
    }

    /// The same over messages already converted (Responses, Messages).
    pub(crate) fn kimi_k3_messages_ids(
        &self,
        raw: &[Value],
        ctx: &ChatContext,
        tools: Option<&[Value]>,
        params: RouteParams,
    ) -> Result<Vec<u32>, ApiError> {
        let conversation = normalize_tool_messages(messages::conversation(raw, ContentFormat::String)?);
        let options = options(&ctx.template_kwargs, params)?;
        let tools = super::tools_keyword(ctx, tools);
        let Some(k3) = &self.kimi_k3 else { return Err(ApiError::internal("the kimi_k3 encoding is not loaded")) };
        let special =
            |text: &str| self.model.tokenizer.encode(text, false).map(|e| e.get_ids().to_vec()).unwrap_or_default();
        let ordinary = |text: &str| k3.encode(text);
        let encoders = Encoders { special: &special, ordinary: &ordinary };
        kimi_k3::render(&conversation, tools.as_ref(), &options, &encoders).map_err(|e| ApiError::bad_request(e.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_results_sorted_by_id_or_alias() {
        let conversation = vec![
            json!({"role": "assistant", "tool_calls": [
                {"id": "c1", "function": {"name": "f"}}, {"id": "c2", "function": {"name": "g"}}]}),
            json!({"role": "tool", "tool_call_id": "g:1", "content": "G"}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "F"}),
        ];
        let out = normalize_tool_messages(conversation);
        assert_eq!(out[1]["content"], "F");
        assert_eq!(out[1]["tool"], "f");
        assert_eq!(out[2]["index"], 2);
    }

    #[test]
    fn an_unmatched_result_keeps_its_run() {
        let conversation = vec![
            json!({"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f"}}]}),
            json!({"role": "tool", "tool_call_id": "zz", "content": "x"}),
        ];
        let out = normalize_tool_messages(conversation.clone());
        assert_eq!(out, conversation);
    }

    #[test]
    fn thinking_switches_become_keywords() {
        let kw = |v: Value| v.as_object().cloned().unwrap_or_default();
        let o = options(&kw(json!({"reasoning_effort": "none"})), RouteParams::default()).expect("ok");
        assert!(!o.thinking);
        let o = options(&kw(json!({"reasoning_effort": "low", "thinking_effort": "high"})), RouteParams::default())
            .expect("ok");
        assert_eq!(o.effort, Some(json!("high")));
        let e = options(&kw(json!({"thinking_effort": "medium"})), RouteParams::default()).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("thinking_effort"));
        let o = options(&kw(json!({"enable_thinking": false, "thinking": true})), RouteParams::default()).expect("ok");
        assert!(o.thinking);
    }
}
