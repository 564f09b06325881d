//! `POST /v1/responses/render` (vLLM's `render_responses_request`, the
//! non-Harmony branch): a Responses request is validated, turned into the
//! chat render's inputs (a chat-shaped view: messages, chat tools, template
//! flags) and rendered by the same template, tokenizer and parser
//! adjustments as `/v1/chat/completions/render`. What differs is kept here:
//! `ResponsesRequest.to_sampling_params`, the request id taken verbatim, and
//! a `GenerateRequest` without `parse_context` or `reasoning_ended`.

mod items;
mod validate;

use serde_json::{Map, Value};

use super::messages::Origin;
use super::{body_object, opt_i64, structured};
use crate::error::ApiError;
use crate::parse::context::{ChatContext, TemplateDefaults};
use crate::parse::unified::{GrammarRequest, Route};
use crate::served::Core;
use crate::template::harmony::{self, responses, Harmony};
use crate::wire::request::{Api, Obj, OutputOptions};

/// Request fields the shared sampling and `GenerateRequest` code reads under
/// the same name and meaning.
const SHARED_FIELDS: &[&str] = &[
    "model",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "stop",
    "logit_bias",
    "vllm_xargs",
    "spaces_between_special_tokens",
    "stream",
    "cache_salt",
    "priority",
    "kv_transfer_params",
    "ec_transfer_params",
    "chat_template_kwargs",
    "parallel_tool_calls",
    "include_reasoning",
];

/// The Responses `tool_choice` in chat form (a named function or custom tool
/// becomes a named function; hosted-tool and allowed-tools choices force
/// nothing).
fn chat_tool_choice(choice: Option<&Value>) -> Value {
    match choice {
        None => Value::String("auto".into()),
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Object(o)) if matches!(o.get("type").and_then(Value::as_str), Some("function" | "custom")) => {
            let name = o.get("name").cloned().unwrap_or(Value::Null);
            serde_json::json!({"type": "function", "function": {"name": name}})
        }
        Some(_) => Value::Null,
    }
}

fn structured_outputs_twice() -> ApiError {
    ApiError::invalid_param(
        "Cannot specify both structured_outputs and text.format (parameter=structured_outputs)",
        "structured_outputs",
    )
}

/// `extract_structured_outputs`: `text.format` as structured outputs (or the
/// request's own `structured_outputs`; both at once is refused).
fn structured_outputs(o: &Obj) -> Result<Option<Value>, ApiError> {
    let format = o.get("text").and_then(|t| t.get("format")).filter(|f| !f.is_null());
    let given = o.get("structured_outputs").filter(|s| !s.is_null());
    let Some(format) = format else { return Ok(given.cloned()) };
    if given.is_some() {
        return Err(structured_outputs_twice());
    }
    Ok(match format.get("type").and_then(Value::as_str) {
        Some("json_object") => Some(serde_json::json!({"json_object": true})),
        Some("json_schema") => format.get("schema").filter(|s| !s.is_null()).map(|s| serde_json::json!({"json": s})),
        _ => None,
    })
}

/// The chat-completions view of a validated Responses request: what the
/// chat render's context, template and sampling code read. A conflict in
/// the structured outputs comes back beside it: vLLM meets it only when it
/// builds the sampling params, after the template rendered.
fn chat_view(o: &Obj, messages: Vec<Value>, tools: &[Value]) -> (Obj, Option<ApiError>) {
    let mut chat = Obj::new();
    for key in SHARED_FIELDS {
        if let Some(v) = o.get(*key) {
            chat.insert((*key).into(), v.clone());
        }
    }
    let continues = o.get("input").is_some_and(items::continues_final_message);
    chat.insert("add_generation_prompt".into(), Value::Bool(!continues));
    chat.insert("continue_final_message".into(), Value::Bool(continues));
    if let Some(effort) = o.get("reasoning").and_then(|r| r.get("effort")).filter(|e| !e.is_null()) {
        chat.insert("reasoning_effort".into(), effort.clone());
    }
    chat.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        chat.insert("tools".into(), Value::Array(tools.to_vec()));
    }
    chat.insert("tool_choice".into(), chat_tool_choice(o.get("tool_choice")));
    // `build_tok_params`: any truncation but "disabled" keeps the longest
    // prompt that leaves room for output.
    if o.get("truncation").is_some_and(|t| t.as_str() != Some("disabled")) {
        chat.insert("truncate_prompt_tokens".into(), Value::from(-1));
    }
    match structured_outputs(o) {
        Ok(Some(s)) => drop(chat.insert("structured_outputs".into(), s)),
        Ok(None) => {}
        Err(e) => return (chat, Some(e)),
    }
    (chat, None)
}

/// The sampling options `to_sampling_params` takes from the request.
fn output_options(o: &Obj) -> OutputOptions {
    let logprobs = o
        .get("include")
        .and_then(Value::as_array)
        .is_some_and(|i| i.iter().any(|x| x.as_str() == Some("message.output_text.logprobs")));
    let flag = |k: &str| o.get(k).is_some_and(crate::pycompat::truthy);
    OutputOptions {
        stop: Vec::new(),
        stop_given: false,
        stop_token_ids: o
            .get("stop_token_ids")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default(),
        ignore_eos: flag("ignore_eos"),
        skip_special_tokens: o.get("skip_special_tokens").and_then(Value::as_bool),
        include_stop_str_in_output: flag("include_stop_str_in_output"),
        min_tokens: 0,
        logprobs_flag: false,
        top_logprobs: logprobs.then(|| opt_i64(o, "top_logprobs").unwrap_or(0)),
        logprob_token_ids: false,
        return_token_ids: false,
        raw: o.clone(),
    }
}

/// Where `SamplingParams` differs from the chat's: `watermarking` when set,
/// and `extra_args` written even empty unless transfer params were hoisted
/// out of it.
fn sampling_json(o: &Obj, mut sampling: Map<String, Value>) -> Map<String, Value> {
    let set = |k: &str| o.get(k).is_some_and(|v| v.as_object().is_some_and(|m| !m.is_empty()));
    let xargs_empty = o.get("vllm_xargs").and_then(Value::as_object).is_none_or(Map::is_empty);
    let empty_extra = xargs_empty && !set("kv_transfer_params") && !set("ec_transfer_params");
    let watermarking = o.get("watermarking").filter(|v| !v.is_null()).map(|v| Value::Bool(crate::pycompat::truthy(v)));
    let mut out = Map::new();
    for (k, v) in std::mem::take(&mut sampling) {
        if k == "bad_words" && empty_extra {
            out.insert("extra_args".into(), Value::Object(Map::new()));
        }
        let after_temperature = k == "temperature";
        out.insert(k, v);
        if let Some(w) = watermarking.clone().filter(|_| after_temperature) {
            out.insert("watermarking".into(), w);
        }
    }
    out
}

/// `_render_responses_with_harmony`: the preamble (custom tools only when
/// the request has some), then the input items.
fn harmony_prompt(harmony: &Harmony, o: &Obj, defaults: &TemplateDefaults) -> Result<Vec<u32>, ApiError> {
    // vLLM's Harmony branch prepends these (chat- or Harmony-shaped); not
    // built here, so refused rather than dropped.
    if o.get("previous_input_messages").and_then(Value::as_array).is_some_and(|m| !m.is_empty()) {
        return Err(ApiError::invalid_param(
            "previous_input_messages is not supported by derender's Harmony render yet (parameter=previous_input_messages)",
            "previous_input_messages",
        ));
    }
    let tools = o.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let given = o.get("instructions").filter(|i| !i.is_null());
    let input = o.get("input").unwrap_or(&Value::Null);
    let (from_input, items) = responses::split_instructions(input, given.is_some());
    let instructions = given.and_then(Value::as_str).map(str::to_string).or(from_input);
    let effort = o.get("reasoning").and_then(|r| r.get("effort")).and_then(Value::as_str);
    let effort = effort.map(|e| defaults.effort(e));
    let custom = responses::has_custom_tools(tools);
    let mut messages = harmony::preamble(instructions, custom.then_some(tools), effort)?;
    messages.extend(responses::input_messages(input, items)?);
    Ok(harmony.render(&messages))
}

impl Core {
    /// A rendered prompt must have tokens and fit the context.
    fn check_rendered(&self, ids: &[u32]) -> Result<(), ApiError> {
        if ids.is_empty() {
            return Err(ApiError::bad_request("No token_ids rendered"));
        }
        self.check_prompt_len(ids.len().min(self.settings.max_model_len + 1))
    }

    /// `POST /v1/responses/render`.
    pub fn responses_render(&self, body: Option<&Value>) -> Result<Value, ApiError> {
        let o = validate::model_validators(body_object(body)?)?;
        validate::fields(&o)?;
        self.check_model(o.get("model").and_then(Value::as_str))?;
        if o.get("previous_response_id").is_some_and(|v| !v.is_null()) {
            return Err(ApiError {
                status: 400,
                kind: "invalid_request_error",
                message: "previous_response_id is not supported by the stateless render endpoint.".into(),
                param: Some("previous_response_id".into()),
            });
        }
        let request_kwargs = o.get("chat_template_kwargs").and_then(Value::as_object);
        if !self.settings.trust_request_chat_template
            && request_kwargs.is_some_and(|k| k.get("chat_template").is_some_and(|v| !v.is_null()))
        {
            return Err(ApiError::bad_request(
                "Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.",
            ));
        }
        let tools = items::chat_tools(o.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]));
        let given = o.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
        let max_out = opt_i64(&o, "max_output_tokens");
        let (chat, conflict, ctx, ids, offsets) = match &self.harmony {
            Some(_) => {
                let raw_tools = o.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
                responses::check_named_choice(raw_tools, o.get("tool_choice"))?;
                let (chat, conflict) = chat_view(&o, Vec::new(), &tools);
                let ctx = ChatContext::from_request(&chat, &self.settings.template_defaults);
                self.check_output_budget(max_out, "max_output_tokens")?;
                // Rendered after the parser's `adjust_request`, as vLLM does.
                (chat, conflict, ctx, Vec::new(), Value::Null)
            }
            None => {
                let instructions = o.get("instructions").and_then(Value::as_str);
                let messages = items::input_messages(instructions, o.get("input").unwrap_or(&Value::Null))?;
                let (chat, conflict) = chat_view(&o, messages, &tools);
                let ctx = ChatContext::from_request(&chat, &self.settings.template_defaults);
                self.check_output_budget(max_out, "max_output_tokens")?;
                // DeepSeek's encoders take an empty conversation (V4 writes BOS);
                // mistral_common's fails on its own (`messages[-1]`).
                let empty = chat.get("messages").and_then(Value::as_array).is_some_and(Vec::is_empty);
                let own_check = self.writes_deepseek()
                    || self.writes_inkling()
                    || self.writes_kimi_k3()
                    || self.writes_cohere()
                    || self.model.tekken().is_some();
                if empty && !own_check {
                    return Err(ApiError::bad_request(
                        "Cannot apply chat template to an empty conversation. Provide at least one message.",
                    ));
                }
                if let Some(m) = chat.get("messages").and_then(Value::as_array).filter(|m| items::has_media(m)) {
                    if self.model.mode == crate::model::TokenizerMode::DeepseekV41 {
                        return Err(self.deepseek_media_refusal(m));
                    }
                    let name = self.settings.served_model_names.first().map_or("model", String::as_str);
                    return Err(ApiError::bad_request(format!("{name} is not a multimodal model")));
                }
                let excluded = ctx.tool_choice == crate::parse::ToolChoice::None
                    && self.settings.exclude_tools_when_tool_choice_none;
                // Hosted tools alone still give the template a (empty) tool list.
                let template_tools = (given && !excluded).then_some(tools.as_slice());
                if let Some(tekken) = self.model.tekken() {
                    // mistral_common renders the converted messages.
                    let messages = chat.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
                    let ids = self.mistral_ids(&chat, tekken, &messages, template_tools, Origin::Converted)?;
                    (chat, conflict, ctx, ids, Value::Null)
                } else if self.writes_kimi_k3() {
                    let messages = chat.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
                    let params = super::kimi_k3::RouteParams {
                        tool_choice: super::kimi_k3::RouteParams::tool_choice(&o),
                        response_format: None,
                    };
                    let ids = self.kimi_k3_messages_ids(&messages, &ctx, template_tools, params)?;
                    (chat, conflict, ctx, ids, Value::Null)
                } else if self.writes_inkling() {
                    let messages = chat.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
                    let ids = self.inkling_messages_ids(&messages, &ctx, template_tools)?;
                    (chat, conflict, ctx, ids, Value::Null)
                } else {
                    let text = self.apply_chat_template(&chat, &ctx, template_tools, Origin::Converted)?;
                    // `build_tok_params` leaves `add_special_tokens` at `TokenizeParams`'
                    // default (true), unlike chat: templates that write their own BOS get
                    // a second one, as vLLM renders them.
                    let tokenized = self.deepseek_tokenized(&ctx);
                    let (ids, offsets) = self.encode_prompt(&chat, &text, !tokenized, max_out)?;
                    (chat, conflict, ctx, ids, offsets)
                }
            }
        };
        if self.harmony.is_none() {
            self.check_rendered(&ids)?;
        }

        // The parser's `adjust_request`, as for chat. A forced call needs a
        // function tool (`require_function_tools`).
        let parser = self.settings.parser.as_ref();
        let hosted_only = given && tools.is_empty();
        let constrains = parser.is_some_and(|p| p.requires_function_tools() && !p.forced_schema_from_chat_request());
        if hosted_only && constrains && ctx.tool_choice == crate::parse::ToolChoice::Required {
            return Err(ApiError::invalid_param(
                "tool_choice requires a function call, but tools contains no function tool the model can call. (parameter=tool_choice)",
                "tool_choice",
            ));
        }
        if let Some(e) = conflict {
            return Err(e);
        }
        if let Some(p) = parser {
            let raw_tools = o.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            let strict = raw_tools.iter().any(crate::parse::is_strict_tool);
            let choice_type = o.get("tool_choice").and_then(|c| c.get("type")).and_then(Value::as_str);
            let named = matches!(choice_type, Some("function" | "custom"));
            p.check_request(&ctx, given, strict, named)?;
        }
        let output = structured::request_params(&chat);
        let format = structured::request_format(output.as_ref());
        let grammar = match parser {
            Some(p) => {
                let prompt: Vec<i64> = ids.iter().map(|&i| i64::from(i)).collect();
                let raw_tools = o.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
                p.grammar(&GrammarRequest {
                    ctx: &ctx,
                    route: Route::Responses { tools: raw_tools, tool_choice: o.get("tool_choice") },
                    output: output.as_ref(),
                    format: &format,
                    prompt: &prompt,
                    model: &self.model,
                })?
            }
            None => None,
        };
        let (mut keep_special, mut adjusted) =
            parser.map(|p| p.render_adjustments(&ctx, &format)).unwrap_or((false, None));
        // A parser's own grammar replaces the request's constraint
        // (`_parser_structured_outputs`); set before `text.format` is read,
        // it then counts as the request's own `structured_outputs`.
        let format_given = o.get("text").and_then(|t| t.get("format")).is_some_and(|f| !f.is_null());
        if grammar.as_ref().is_some_and(|g| g.as_request_outputs) && format_given {
            return Err(structured_outputs_twice());
        }
        if let Some(g) = grammar {
            adjusted = Some(structured::params(None, Some(g.structural_tag)));
        }
        if let Some(p) = parser {
            // Hosted tools count as tools for the parser's `adjust_request`.
            keep_special |=
                hosted_only && p.tool_keeps_special_tokens() && ctx.tool_choice != crate::parse::ToolChoice::None;
            // The Mistral parser on a grammar-capable tekken tokenizer is
            // always asked to adjust the request, whatever the tool choice.
            keep_special |= p.tokenizer_grammar() && self.model.tekken().is_some_and(|t| t.version >= 11);
            if p.forced_schema_from_chat_request() && ctx.forces_tool_calls() {
                adjusted = None;
            }
        }
        let ids = match &self.harmony {
            Some(harmony) => {
                let ids = harmony_prompt(harmony, &o, &self.settings.template_defaults)?;
                self.check_rendered(&ids)?;
                ids
            }
            None => ids,
        };
        let opts = output_options(&o);
        let skip_special = !keep_special && opts.skip_special_tokens.unwrap_or(true);
        let max_tokens = self.max_tokens(max_out, ids.len());
        let mut sampling = self.sampling(&chat, &opts, max_tokens, Api::Completion, skip_special);
        if parser.is_some_and(|p| !p.keeps_special_token_spacing(&ctx)) {
            sampling.spaces_between_special_tokens = false;
        }
        if adjusted.is_some() {
            sampling.structured_outputs = adjusted;
        }
        self.verify_sampling(&sampling)?;
        let reasoning_parser_kwargs =
            // vLLM builds no parser here, so no constructor adjusts them.
            parser.filter(|p| p.has_reasoning()).map(|_| serde_json::json!({"chat_template_kwargs": ctx.template_kwargs}));
        let request_id = match o.get("request_id").and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => format!("resp_{}", crate::ids::random_hex_id()),
        };
        let mut request = self.generate_request(&chat, request_id, ids, &sampling, None, reasoning_parser_kwargs, None);
        request["token_offsets"] = offsets;
        request["sampling_params"] = Value::Object(sampling_json(&o, sampling.to_json()));
        Ok(request)
    }
}
