//! `/v1/chat/completions/render` and `/v1/completions/render`: requests in,
//! vLLM 0.33's `GenerateRequest` out (token ids, sampling params, context).

mod anthropic;
mod anthropic_check;
mod cohere;
mod deepseek;
mod inkling;
mod kimi_k3;
mod messages;
mod mistral;
mod responses;
pub mod sampling;
mod tokenize;

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::parse::context::ChatContext;
use crate::parse::unified::{GrammarRequest, Route};
use crate::parse::ToolChoice;
use crate::pycompat::pydantic::{read, Errors, Loc};
use crate::served::Core;
use crate::structured;
use crate::tekken::Tekken;
use crate::template::harmony::{self, Harmony};
pub use crate::template::{ChatTemplate, TemplateError};
use crate::wire::request::{request_fields, request_prechecks, Api, Obj, OutputOptions};
use sampling::Sampling;

/// A rendered prompt's ids cut as `TokenizeParams` cuts them:
/// `truncate_prompt_tokens` (-1: the longest prompt that leaves room for
/// output) from `truncation_side` (left by default).
fn truncate_ids(o: &Obj, mut ids: Vec<u32>, truncate: Option<i64>, max_input: i64, max_out: Option<i64>) -> Vec<u32> {
    if let Some(t) = truncate {
        let keep = if t < 0 {
            if max_out == Some(0) {
                max_input
            } else {
                (max_input - 1).max(0)
            }
        } else {
            t
        } as usize;
        if keep < ids.len() {
            let left = o.get("truncation_side").and_then(Value::as_str).is_none_or(|side| side == "left");
            ids = if left { ids[ids.len() - keep..].to_vec() } else { ids[..keep].to_vec() };
        }
    }
    ids
}

/// The `tools=` keyword vLLM's code renderers read: the request's
/// `chat_template_kwargs.tools`, else its tools, else the server's default
/// kwargs' tools.
fn tools_keyword(ctx: &ChatContext, tools: Option<&[Value]>) -> Option<Value> {
    let given = |v: &&Value| !v.is_null();
    ctx.request_kwargs
        .get("tools")
        .filter(given)
        .cloned()
        .or_else(|| tools.map(|t| Value::Array(t.to_vec())))
        .or_else(|| ctx.template_kwargs.get("tools").filter(given).cloned())
}

/// The body as an object, with FastAPI's errors for a missing or non-object body.
pub(crate) fn body_object(body: Option<&Value>) -> Result<&Obj, ApiError> {
    let root = Loc::root("body");
    let mut errs = Errors::default();
    match body {
        None => errs.push("missing", &root, "Field required", None, None),
        Some(Value::Object(o)) => return Ok(o),
        Some(other) => errs.push(
            "model_attributes_type",
            &root,
            "Input should be a valid dictionary or object to extract fields from",
            Some(other),
            None,
        ),
    }
    Err(errs.into_api_error())
}

fn opt_i64(o: &Obj, key: &str) -> Option<i64> {
    o.get(key).and_then(|v| v.as_i64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)))
}

fn opt_f64(o: &Obj, key: &str) -> Option<f64> {
    o.get(key).and_then(Value::as_f64)
}

fn truthy(o: &Obj, key: &str) -> bool {
    o.get(key).is_some_and(crate::pycompat::truthy)
}

impl Core {
    /// The model's default sampling values (`get_diff_sampling_param`).
    fn generation_default(&self, key: &str) -> Option<&Value> {
        let key = if key == "max_tokens" { "max_new_tokens" } else { key };
        self.settings.generation_config.get(key).filter(|v| !v.is_null())
    }

    /// Request value → generation config → OpenAI default.
    fn sampling_float(&self, o: &Obj, key: &str, openai_default: f64) -> f64 {
        opt_f64(o, key).or_else(|| self.generation_default(key).and_then(Value::as_f64)).unwrap_or(openai_default)
    }

    /// `get_max_tokens`: the output budget left by the prompt, capped by the
    /// request (or the generation config's `max_new_tokens`) and by the
    /// server's `override_max_tokens`.
    fn max_tokens(&self, requested: Option<i64>, input_len: usize) -> i64 {
        let model_max = self.settings.max_model_len as i64 - input_len as i64;
        let fallback = requested.or_else(|| self.generation_default("max_tokens").and_then(Value::as_i64));
        [fallback, self.settings.override_max_tokens].into_iter().flatten().fold(model_max, i64::min)
    }

    /// `_token_len_check`: a prompt longer than the context is refused.
    fn check_prompt_len(&self, count: usize) -> Result<(), ApiError> {
        let max = self.settings.max_model_len;
        if count <= max {
            return Ok(());
        }
        let qualifier = if count == max + 1 { "at least " } else { "" };
        Err(ApiError::invalid_param(
            format!(
                "This model's maximum context length is {max} tokens. However, your prompt contains {qualifier}{count} input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value={count})"
            ),
            "input_tokens",
        ))
    }

    /// `TokenizeParams.__post_init__`: the output budget must fit the context.
    fn check_output_budget(&self, value: Option<i64>, param: &str) -> Result<(), ApiError> {
        let max = self.settings.max_model_len as i64;
        match value {
            Some(v) if v > max => Err(ApiError::invalid_param(
                format!("{param}={v} cannot be greater than max_model_len={max}. Please request fewer output tokens. (parameter={param}, value={v})"),
                param,
            )),
            _ => Ok(()),
        }
    }

    fn sampling(&self, o: &Obj, opts: &OutputOptions, max_tokens: i64, api: Api, skip_special: bool) -> Sampling {
        let stream = truthy(o, "stream");
        let (logprobs, prompt_logprobs) = match api {
            Api::Chat => {
                let lp = (opts.logprobs_flag && !opts.logprob_token_ids).then(|| opts.top_logprobs.unwrap_or(0));
                let plp =
                    opt_i64(o, "prompt_logprobs").or_else(|| truthy(o, "echo").then(|| opts.top_logprobs.unwrap_or(0)));
                (lp, plp)
            }
            Api::Completion => {
                let lp = opts.top_logprobs.filter(|_| !opts.logprob_token_ids);
                let plp =
                    opt_i64(o, "prompt_logprobs").or_else(|| if truthy(o, "echo") { opts.top_logprobs } else { None });
                (lp, plp)
            }
        };
        let mut extra: Map<String, Value> = o.get("vllm_xargs").and_then(Value::as_object).cloned().unwrap_or_default();
        extra.remove("kv_transfer_params");
        extra.remove("ec_transfer_params");
        let bad_words = o
            .get("bad_words")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|w| w.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        let logit_bias = o.get("logit_bias").and_then(Value::as_object).map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    let id: i64 = k.trim().parse().ok()?;
                    let b = v.as_f64()?.clamp(-100.0, 100.0);
                    Some((id.to_string(), serde_json::Number::from_f64(b).map_or(Value::Null, Value::Number)))
                })
                .collect()
        });
        let ids = |key: &str| {
            o.get(key).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_i64).collect::<Vec<i64>>())
        };
        let mut stop_token_ids = opts.stop_token_ids.clone();
        if let Some(defaults) = self.generation_default("stop_token_ids").and_then(Value::as_array) {
            stop_token_ids.extend(defaults.iter().filter_map(Value::as_i64));
        }
        Sampling {
            n: opt_i64(o, "n").unwrap_or(1),
            presence_penalty: self.sampling_float(o, "presence_penalty", 0.0),
            frequency_penalty: self.sampling_float(o, "frequency_penalty", 0.0),
            repetition_penalty: self.sampling_float(o, "repetition_penalty", 1.0),
            temperature: self.sampling_float(o, "temperature", 1.0),
            top_p: self.sampling_float(o, "top_p", 1.0),
            top_k: opt_i64(o, "top_k")
                .or_else(|| self.generation_default("top_k").and_then(Value::as_i64))
                .unwrap_or(0),
            min_p: self.sampling_float(o, "min_p", 0.0),
            seed: opt_i64(o, "seed"),
            stop: match o.get("stop") {
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(a)) => a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect(),
                _ => Vec::new(),
            },
            stop_token_ids,
            ignore_eos: opts.ignore_eos,
            max_tokens,
            min_tokens: opts.min_tokens,
            logprobs,
            prompt_logprobs,
            logprob_token_ids: ids("logprob_token_ids").filter(|v| !v.is_empty()),
            skip_special_tokens: skip_special,
            spaces_between_special_tokens: o
                .get("spaces_between_special_tokens")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            include_stop_str_in_output: opts.include_stop_str_in_output,
            stream,
            stream_interval: opt_i64(o, "stream_interval"),
            structured_outputs: structured::request_params(o),
            logit_bias,
            allowed_token_ids: ids("allowed_token_ids"),
            extra_args: Some(extra),
            bad_words,
            thinking_token_budget: opt_i64(o, "thinking_token_budget").filter(|&b| b != -1),
            repetition_detection: o.get("repetition_detection").and_then(Value::as_object).map(|p| {
                let field = |k: &str| p.get(k).cloned().filter(|v| !v.is_null()).unwrap_or(Value::from(0));
                serde_json::json!({
                    "max_pattern_size": field("max_pattern_size"),
                    "min_pattern_size": field("min_pattern_size"),
                    "min_count": field("min_count"),
                })
            }),
            watermarking: o.get("watermarking").and_then(Value::as_bool),
        }
    }

    /// What constructing vLLM's `SamplingParams` refuses: structured outputs
    /// left with other than one constraint once `response_format` is laid
    /// over them, then the parameters' own ranges.
    fn verify_sampling(&self, sampling: &Sampling) -> Result<(), ApiError> {
        if let Some(so) = sampling.structured_outputs.as_ref().and_then(Value::as_object) {
            crate::structured::checks::one_constraint(so)?;
        }
        sampling.verify(self.settings.max_n_sequences)
    }

    /// The fields every `GenerateRequest` ends with.
    #[allow(clippy::too_many_arguments)]
    fn generate_request(
        &self,
        o: &Obj,
        request_id: String,
        token_ids: Vec<u32>,
        sampling: &Sampling,
        reasoning_ended: Option<bool>,
        reasoning_parser_kwargs: Option<Value>,
        parse_context: Option<Value>,
    ) -> Value {
        let stream = truthy(o, "stream");
        let mut m = Map::new();
        m.insert("request_id".into(), Value::String(request_id));
        m.insert("token_ids".into(), Value::Array(token_ids.into_iter().map(Value::from).collect()));
        m.insert("token_offsets".into(), Value::Null);
        m.insert("features".into(), Value::Null);
        m.insert("content_parts".into(), Value::Null);
        m.insert("sampling_params".into(), Value::Object(sampling.to_json()));
        m.insert("model".into(), o.get("model").cloned().unwrap_or(Value::Null));
        m.insert("reasoning_ended".into(), reasoning_ended.map_or(Value::Null, Value::Bool));
        m.insert("reasoning_parser_kwargs".into(), reasoning_parser_kwargs.unwrap_or(Value::Null));
        m.insert("return_token_ids".into(), o.get("return_token_ids").cloned().unwrap_or(Value::Null));
        m.insert("output_mode".into(), Value::String("tokens".into()));
        m.insert("parse_context".into(), parse_context.unwrap_or(Value::Null));
        m.insert("stream".into(), Value::Bool(stream));
        let stream_options = match o.get("stream_options") {
            Some(Value::Object(so)) if stream => {
                let flag = |k: &str| so.get(k).cloned().filter(|v| !v.is_null()).unwrap_or(Value::Bool(false));
                let mut s = Map::new();
                s.insert("include_usage".into(), flag("include_usage"));
                s.insert("continuous_usage_stats".into(), flag("continuous_usage_stats"));
                Value::Object(s)
            }
            _ => Value::Null,
        };
        m.insert("stream_options".into(), stream_options);
        m.insert("cache_salt".into(), o.get("cache_salt").cloned().unwrap_or(Value::Null));
        m.insert("priority".into(), o.get("priority").cloned().filter(|v| !v.is_null()).unwrap_or(Value::from(0)));
        let hoisted =
            |k: &str| o.get(k).filter(|v| v.as_object().is_some_and(|m| !m.is_empty())).cloned().unwrap_or(Value::Null);
        m.insert("kv_transfer_params".into(), hoisted("kv_transfer_params"));
        m.insert("ec_transfer_params".into(), hoisted("ec_transfer_params"));
        Value::Object(m)
    }

    /// `POST /v1/chat/completions/render`.
    pub fn chat_render(&self, body: Option<&Value>, header_request_id: Option<&str>) -> Result<Value, ApiError> {
        let o = body_object(body)?;
        request_prechecks(o, Api::Chat)?;
        self.chat_render_checked(o, header_request_id)
    }

    /// Chat render of a body that passed `request_prechecks`.
    pub(crate) fn chat_render_checked(&self, o: &Obj, header_request_id: Option<&str>) -> Result<Value, ApiError> {
        let mut errs = Errors::default();
        let opts = request_fields(o, Api::Chat, &Loc::root("body"), &mut errs);
        let Some(opts) = opts.filter(|_| errs.is_empty()) else { return Err(errs.into_api_error()) };
        self.check_model(o.get("model").and_then(Value::as_str))?;
        if truthy(o, "use_beam_search") {
            return Err(ApiError::bad_request("Beam search is not supported by the render endpoint"));
        }
        let ctx = ChatContext::from_request(o, &self.settings.template_defaults);
        let parser = self.settings.parser.as_ref();
        let has_tool_parser = parser.is_some_and(|p| p.has_tool());
        let tekken = self.model.tekken();
        // Harmony renders any tool choice (`tool_parsing_unavailable`), so
        // does a Mistral tokenizer.
        if !has_tool_parser && self.harmony.is_none() && tekken.is_none() {
            match &ctx.tool_choice {
                ToolChoice::Auto if !parser.is_some_and(|p| p.enable_auto_tools) => {
                    return Err(ApiError::bad_request(
                        "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
                    ))
                }
                ToolChoice::Required => {
                    return Err(ApiError::bad_request("tool_choice=\"required\" requires --tool-call-parser to be set"))
                }
                ToolChoice::Named(name) => {
                    return Err(ApiError::bad_request(format!(
                        "tool_choice=function \"{name}\" requires --tool-call-parser to be set"
                    )))
                }
                _ => {}
            }
        }
        let tools = o.get("tools").and_then(Value::as_array).filter(|_| {
            !(ctx.tool_choice == crate::parse::ToolChoice::None && self.settings.exclude_tools_when_tool_choice_none)
        });
        let tool_dicts: Option<Vec<Value>> = tools.map(|t| t.iter().map(messages::tool_dict).collect());
        let (max_out, max_param) = match opt_i64(o, "max_completion_tokens") {
            Some(v) => (Some(v), "max_completion_tokens"),
            None => (opt_i64(o, "max_tokens"), "max_tokens"),
        };
        let (ids, offsets) = match (&self.harmony, tekken) {
            (None, Some(tekken)) => {
                (self.mistral_prompt(o, tekken, tools.map(Vec::as_slice), max_out, max_param)?, Value::Null)
            }
            (Some(harmony), _) => {
                let effort = o.get("reasoning_effort").and_then(Value::as_str);
                let effort = effort.map(|e| self.settings.template_defaults.effort(e));
                (harmony_chat_prompt(harmony, o, tools.map(Vec::as_slice), effort)?, Value::Null)
            }
            (None, None) => {
                let request_kwargs = o.get("chat_template_kwargs").and_then(Value::as_object);
                if !self.settings.trust_request_chat_template
                    && (o.get("chat_template").is_some_and(|v| !v.is_null())
                        || request_kwargs.is_some_and(|k| k.get("chat_template").is_some_and(|v| !v.is_null())))
                {
                    return Err(ApiError::bad_request(
                        "Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.",
                    ));
                }
                self.check_output_budget(max_out, max_param)?;
                if self.writes_inkling() || self.writes_kimi_k3() {
                    let truncate = self.truncate_prompt_tokens(o)?;
                    let ids = if self.writes_kimi_k3() {
                        self.kimi_k3_ids(o, &ctx, tool_dicts.as_deref(), kimi_k3::RouteParams::of_chat(o))?
                    } else {
                        self.inkling_ids(o, &ctx, tool_dicts.as_deref())?
                    };
                    (truncate_ids(o, ids, truncate, self.settings.max_model_len as i64, max_out), Value::Null)
                } else {
                    let text = self.apply_chat_template(o, &ctx, tool_dicts.as_deref(), messages::Origin::Request)?;
                    let tokenized = self.deepseek_tokenized(&ctx);
                    let add_special =
                        !tokenized && o.get("add_special_tokens").and_then(Value::as_bool).unwrap_or(false);
                    self.encode_prompt(o, &text, add_special, max_out)?
                }
            }
        };
        if ids.is_empty() {
            return Err(ApiError::bad_request("No token_ids rendered"));
        }
        self.check_prompt_len(ids.len().min(self.settings.max_model_len + 1))?;

        let has_reasoning = parser.is_some_and(|p| p.has_reasoning());
        // `adjust_request`: parsers need special tokens in the output text.
        // The parser's `adjust_request`: keep special tokens for its markers,
        // constrain forced tool choices.
        let params = structured::request_params(o);
        // `_apply_structural_tag` reads the request's constraints (with
        // `response_format` laid over them) before any tool choice replaces
        // them: more than one is refused there.
        let calls_tools = matches!(ctx.tool_choice, ToolChoice::Auto | ToolChoice::Required | ToolChoice::Named(_));
        if parser.is_some_and(|p| p.has_tool()) && calls_tools && !ctx.tools.is_empty() {
            if let Some(so) = params.as_ref().and_then(Value::as_object) {
                structured::checks::one_constraint(so)?;
            }
        }
        let request_format = structured::request_format(params.as_ref());
        let prompt_ids: Vec<i64> = ids.iter().map(|&i| i64::from(i)).collect();
        // A Mistral tokenizer's own grammar (`MistralParser.adjust_request`).
        let mistral = match (tekken, parser) {
            (Some(tekken), Some(p)) if p.tokenizer_grammar() => {
                Some(mistral::adjust(tekken, o, tools.map(Vec::as_slice))?)
            }
            _ => None,
        };
        let mut grammar = None;
        if let (Some(p), None) = (parser, &mistral) {
            let strict = ctx.tools.iter().any(crate::parse::is_strict_tool);
            let named = matches!(ctx.tool_choice, ToolChoice::Named(_));
            p.check_request(&ctx, !ctx.tools.is_empty(), strict, named)?;
            grammar = p.grammar(&GrammarRequest {
                ctx: &ctx,
                route: Route::Chat,
                output: params.as_ref(),
                format: &request_format,
                prompt: &prompt_ids,
                model: &self.model,
            })?;
        }
        let (keep_special, structured) = match &mistral {
            Some(mistral::Adjusted::Grammar(params)) => (false, Some(params.clone())),
            Some(mistral::Adjusted::Kept) => (true, None),
            None => {
                let (keep, forced) =
                    parser.map(|p| p.render_adjustments(&ctx, &request_format)).unwrap_or((false, None));
                // The Mistral parser's legacy branch forces its JSON schema
                // only when the request brings no structured outputs of its
                // own (nor a structural-tag response format).
                let own_output = o.get("structured_outputs").is_some_and(|v| !v.is_null())
                    || o.get("response_format").and_then(|f| f.get("type")).and_then(Value::as_str)
                        == Some("structural_tag");
                let legacy_mistral = parser.is_some_and(|p| p.forced_schema_from_chat_request());
                (keep, forced.filter(|_| !(own_output && legacy_mistral)))
            }
        };
        // A parser's own grammar replaces the request's constraint.
        let structured = match &grammar {
            Some(g) => Some(structured::params(None, Some(g.structural_tag.clone()))),
            None => structured,
        };
        let skip_special = if keep_special { false } else { opts.skip_special_tokens.unwrap_or(true) };
        let max_tokens = self.max_tokens(max_out, ids.len());
        let mut sampling = self.sampling(o, &opts, max_tokens, Api::Chat, skip_special);
        if parser.is_some_and(|p| !p.keeps_special_token_spacing(&ctx)) {
            sampling.spaces_between_special_tokens = false;
        }
        if structured.is_some() {
            sampling.structured_outputs = structured;
        }
        self.verify_sampling(&sampling)?;
        // `resolve_reasoning_ended`: a grammar from the message start covers
        // the reasoning (`_grammar_from_parser`).
        let reasoning_ended = if !ctx.include_reasoning
            || grammar.is_some_and(|g| g.from_message_start)
            || matches!(mistral, Some(mistral::Adjusted::Grammar(_)))
        {
            Some(true)
        } else if let (Some(tekken), Some(_)) = (tekken, &mistral) {
            mistral::reasoning_ended(tekken, &ids)
        } else if let Some(p) = parser.filter(|_| has_reasoning) {
            let built = p.build(&ctx, &self.model);
            let ended = built.reasoning_end(&prompt_ids);
            if let Some(error) = built.failure() {
                return Err(error);
            }
            ended
        } else {
            None
        };
        let kwargs = Value::Object(ctx.template_kwargs.clone());
        let reasoning_parser_kwargs =
            parser.filter(|_| has_reasoning).map(|p| p.reasoning_parser_kwargs(&ctx.template_kwargs));
        // Harmony reads no template kwargs.
        let kwargs = if self.harmony.is_some() { Value::Object(Default::default()) } else { kwargs };
        let parse_context = self.parse_context(o, &ctx, tool_dicts, kwargs);
        let base = header_request_id
            .map(str::to_string)
            .or_else(|| o.get("request_id").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(crate::ids::random_hex_id);
        let mut request = self.generate_request(
            o,
            format!("chatcmpl-{base}"),
            ids,
            &sampling,
            reasoning_ended,
            reasoning_parser_kwargs,
            Some(parse_context),
        );
        request["token_offsets"] = offsets;
        Ok(request)
    }

    /// `truncate_prompt_tokens`, which may not exceed the context.
    fn truncate_prompt_tokens(&self, o: &Obj) -> Result<Option<i64>, ApiError> {
        let max_input = self.settings.max_model_len as i64;
        let truncate = opt_i64(o, "truncate_prompt_tokens");
        if let Some(t) = truncate.filter(|&t| t > max_input) {
            return Err(ApiError::invalid_param(
                format!("truncate_prompt_tokens={t} cannot be greater than max_model_len = {max_input}. Please request a smaller truncation size. (parameter=truncate_prompt_tokens, value={t})"),
                "truncate_prompt_tokens",
            ));
        }
        Ok(truncate)
    }

    /// The chat prompt of a Mistral tokenizer (`MistralRenderer`): the
    /// render-only checks, vLLM's pass over the messages, mistral_common's
    /// encoding, then truncation as `TokenizeParams` applies it to ids.
    fn mistral_prompt(
        &self,
        o: &Obj,
        tekken: &Tekken,
        tools: Option<&[Value]>,
        max_out: Option<i64>,
        max_param: &str,
    ) -> Result<Vec<u32>, ApiError> {
        let raw = o.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        let cut = mistral::truncate_call_ids(raw)?;
        mistral::check_request_params(o)?;
        self.check_output_budget(max_out, max_param)?;
        let truncate = self.truncate_prompt_tokens(o)?;
        let ids = self.mistral_ids(o, tekken, &cut, tools, messages::Origin::Request)?;
        Ok(truncate_ids(o, ids, truncate, self.settings.max_model_len as i64, max_out))
    }

    /// `MistralTokenizer.apply_chat_template` over the request's messages
    /// (as `/tokenize` also renders them).
    pub(crate) fn mistral_ids(
        &self,
        o: &Obj,
        tekken: &Tekken,
        messages: &[Value],
        tools: Option<&[Value]>,
        origin: messages::Origin,
    ) -> Result<Vec<u32>, ApiError> {
        if origin == messages::Origin::Request {
            messages::check_content_parts(messages, true)?;
        }
        if crate::wire::chat_fields::has_media_part(o) {
            return Err(self.not_multimodal());
        }
        let messages = messages::with_parsed_arguments(messages)?;
        let add_generation_prompt = o.get("add_generation_prompt").and_then(Value::as_bool).unwrap_or(true);
        let continue_final = o.get("continue_final_message").and_then(Value::as_bool).unwrap_or(false);
        mistral::prompt_ids(tekken, &messages, tools, add_generation_prompt, continue_final)
    }

    /// Tokenize a text prompt as vLLM's `TokenizeParams` does: truncated to
    /// `truncate_prompt_tokens` (-1: the longest prompt that leaves room
    /// for output; `max_output` 0 leaves none) from `truncation_side`, else
    /// by the tokenizer's own truncation (from the left, room kept for the
    /// special tokens it adds). With `token_offsets` when the request
    /// sets `return_token_offsets`: each kept token's char-level
    /// `[start, end]` in `text`, as a fast tokenizer's `offset_mapping`
    /// gives them.
    fn encode_prompt(
        &self,
        o: &Obj,
        text: &str,
        add_special: bool,
        max_output: Option<i64>,
    ) -> Result<(Vec<u32>, Value), ApiError> {
        use tokenizers::PostProcessor;
        use tokenizers::TruncationDirection::{Left, Right};
        let max_input = self.settings.max_model_len as i64;
        let truncate = self.truncate_prompt_tokens(o)?;
        let longest = if max_output == Some(0) { max_input } else { (max_input - 1).max(0) };
        let keep = truncate.map(|t| if t < 0 { longest } else { t } as usize);
        let requested_side = o.get("truncation_side").and_then(Value::as_str);
        // vLLM loads every generating model's tokenizer with
        // `truncation_side="left"`, whatever its config says.
        let left = requested_side.is_none_or(|side| side == "left");
        let (text, trimmed) = self.pre_trim(text, truncate.is_some(), requested_side)?;
        if let Some(tekken) = self.model.tekken() {
            return self.encode_tekken_prompt(tekken, text, add_special, keep, requested_side);
        }
        let tokenizer = &self.model.tokenizer;
        let failed = |e: tokenizers::Error| ApiError::bad_request(format!("tokenization failed: {e}"));
        let mut encoding = tokenizer.encode_char_offsets(text, false).map_err(failed)?;
        // The tokenizer truncates only without an explicit side; the
        // requested side then slices the whole sequence, special tokens too.
        if let (Some(max), None) = (keep, requested_side) {
            let added =
                if add_special { tokenizer.get_post_processor().map_or(0, |p| p.added_tokens(false)) } else { 0 };
            if encoding.len() + added > max {
                encoding.truncate(max.saturating_sub(added), 0, if left { Left } else { Right });
            }
        }
        let encoding = tokenizer.post_process(encoding, None, add_special).map_err(failed)?;
        let mut ids = encoding.get_ids().to_vec();
        let mut offsets = encoding.get_offsets().to_vec();
        if let Some(max) = keep.filter(|&max| max < ids.len()) {
            let range = if left { ids.len() - max..ids.len() } else { 0..max };
            ids = ids[range.clone()].to_vec();
            offsets = offsets[range].to_vec();
        }
        // Only vLLM's hf renderer produces offsets (`_can_produce_offsets`).
        let offsets = if truthy(o, "return_token_offsets") && self.model.mode == crate::model::TokenizerMode::Hf {
            offsets.into_iter().map(|(start, end)| Value::from(vec![start + trimmed, end + trimmed])).collect()
        } else {
            Value::Null
        };
        Ok((ids, offsets))
    }

    /// `encode_prompt` for a tekken tokenizer (vLLM's Mistral tokenizer):
    /// `<s>` then the text's ids, truncated as the tokenizer truncates
    /// (from the left, room kept for `<s>`) or from the requested side. It
    /// has no offset mapping: `token_offsets` stays null.
    fn encode_tekken_prompt(
        &self,
        tekken: &Tekken,
        text: &str,
        add_special: bool,
        keep: Option<usize>,
        requested_side: Option<&str>,
    ) -> Result<(Vec<u32>, Value), ApiError> {
        let left = requested_side.is_none_or(|side| side == "left");
        let mut ids = tekken.encode(text);
        if let (Some(max), None) = (keep, requested_side) {
            let room = max.saturating_sub(usize::from(add_special));
            if ids.len() > room {
                ids.drain(..ids.len() - room);
            }
        }
        if add_special {
            ids.insert(0, tekken.special_id("<s>").unwrap_or(1));
        }
        if let Some(max) = keep.filter(|&max| max < ids.len()) {
            ids = if left { ids[ids.len() - max..].to_vec() } else { ids[..max].to_vec() };
        }
        Ok((ids, Value::Null))
    }

    /// `_text_len_check`: no text longer than the context times the longest
    /// vocabulary piece is tokenized. Without truncation it is refused; with
    /// truncation from a requested side it is cut to that many chars first.
    /// Also returns how many chars were cut from the left (offsets shift).
    fn pre_trim<'t>(&self, text: &'t str, truncating: bool, side: Option<&str>) -> Result<(&'t str, usize), ApiError> {
        let max_input = self.settings.max_model_len;
        let max_chars = max_input * self.model.max_chars_per_token;
        let chars = text.chars().count();
        if chars <= max_chars {
            return Ok((text, 0));
        }
        match (truncating, side) {
            (false, _) => Err(ApiError::invalid_param(
                format!("This model's maximum context length is {max_input} tokens. However, your prompt contains {chars} characters (more than {max_chars} characters, which is the upper bound for {max_input} input tokens). Please reduce the length of the input prompt. (parameter=input_text, value={chars})"),
                "input_text",
            )),
            (true, Some("left")) => {
                let cut = chars - max_chars;
                let start = text.char_indices().nth(cut).map_or(text.len(), |(i, _)| i);
                Ok((&text[start..], cut))
            }
            (true, Some(_)) => {
                let end = text.char_indices().nth(max_chars).map_or(text.len(), |(i, _)| i);
                Ok((&text[..end], 0))
            }
            (true, None) => Ok((text, 0)),
        }
    }

    fn parse_context(&self, o: &Obj, ctx: &ChatContext, tools: Option<Vec<Value>>, kwargs: Value) -> Value {
        let mut m = Map::new();
        m.insert("tools".into(), tools.map_or(Value::Null, Value::Array));
        let tool_choice = match o.get("tool_choice") {
            Some(v) => v.clone(),
            None if !ctx.tools.is_empty() => Value::String("auto".into()),
            None => Value::String("none".into()),
        };
        m.insert("tool_choice".into(), tool_choice);
        m.insert("parallel_tool_calls".into(), o.get("parallel_tool_calls").cloned().unwrap_or(Value::Bool(true)));
        m.insert("include_reasoning".into(), Value::Bool(ctx.include_reasoning));
        m.insert("chat_template_kwargs".into(), kwargs);
        m.insert("history_tool_call_cnt".into(), Value::from(history_tool_calls(o)));
        Value::Object(m)
    }

    /// Render the conversation through the chat template.
    pub(crate) fn apply_chat_template(
        &self,
        o: &Obj,
        ctx: &ChatContext,
        tools: Option<&[Value]>,
        origin: messages::Origin,
    ) -> Result<String, ApiError> {
        let from_request = origin == messages::Origin::Request;
        let request_kwargs = o.get("chat_template_kwargs").and_then(Value::as_object);
        if let Some(k) = request_kwargs {
            let bad: Vec<&String> = k.keys().filter(|k| *k == "chat_template").collect();
            if !bad.is_empty() && !self.settings.trust_request_chat_template {
                return Err(ApiError::bad_request(format!(
                    "Found unexpected chat template kwargs from request: {bad:?}"
                )));
            }
        }
        let messages = o.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        if self.writes_cohere() {
            if from_request {
                messages::check_content_parts(messages, false)?;
            }
            if crate::wire::chat_fields::has_media_part(o) {
                return Err(self.not_multimodal());
            }
            return self.cohere_prompt(messages, ctx, tools, o.get("chat_template").and_then(Value::as_str));
        }
        if self.writes_deepseek() {
            // V3.2's renderer parses contents as strings, V4's as parts.
            if from_request {
                messages::check_content_parts(messages, self.model.mode == crate::model::TokenizerMode::DeepseekV32)?;
            }
            if crate::wire::chat_fields::has_media_part(o) {
                return Err(self.deepseek_media_refusal(messages));
            }
            return self.deepseek_prompt(messages, ctx, tools);
        }
        let request_template = o.get("chat_template").and_then(Value::as_str);
        let owned;
        let template = match request_template {
            Some(src) => {
                owned = ChatTemplate::new(src).map_err(|e| ApiError::bad_request(e.to_string()))?;
                &owned
            }
            None => self.template.as_ref().ok_or_else(|| {
                ApiError::bad_request(
                    "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.",
                )
            })?,
        };
        let format = self.settings.content_format.unwrap_or(template.content_format);
        if from_request {
            messages::check_content_parts(messages, format == crate::template::ContentFormat::String)?;
        }
        if messages.is_empty() {
            return Err(ApiError::bad_request(
                "Cannot apply chat template to an empty conversation. Provide at least one message.",
            ));
        }
        if crate::wire::chat_fields::has_media_part(o) {
            return Err(self.not_multimodal());
        }
        let mut conversation = messages::conversation(messages, format)?;
        if !template.supports_developer {
            conversation = messages::developer_as_system(conversation);
        }
        let mut vars = self.model.special_tokens_map.clone();
        for (k, v) in &ctx.template_kwargs {
            vars.insert(k.clone(), v.clone());
        }
        vars.insert("messages".into(), Value::Array(conversation.clone()));
        vars.insert("tools".into(), tools.map_or(Value::Null, |t| Value::Array(t.to_vec())));
        let mut text = template.render(&Value::Object(vars)).map_err(|e| ApiError::bad_request(e.to_string()))?;
        if ctx.kwarg_true("continue_final_message") {
            // A list of parts continues its last text part.
            let last = match conversation.last().and_then(|m| m.get("content")) {
                Some(Value::Array(parts)) => {
                    let text = parts.iter().rev().find_map(|p| p.as_object().and_then(|o| o.get("text")));
                    let Some(text) = text else {
                        return Err(ApiError::bad_request(
                            "continue_final_message is set but we could not find any text to continue in the final message!",
                        ));
                    };
                    text.as_str().unwrap_or("")
                }
                other => other.and_then(Value::as_str).unwrap_or(""),
            };
            let needle = last.trim();
            match text.rfind(needle) {
                Some(i) if !needle.is_empty() => text.truncate(i + needle.len()),
                _ if needle.is_empty() => {}
                _ => {
                    return Err(ApiError::bad_request(
                        "continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.",
                    ))
                }
            }
        }
        Ok(text)
    }

    /// A completion `suffix`: each text prompt becomes a fill-in-the-middle
    /// prompt where the renderer writes them (`render_completion_suffix`),
    /// after vLLM's checks, in its order.
    fn fill_in_the_middle(&self, o: &Obj, prompts: Vec<Prompt>, suffix: &str) -> Result<Vec<Prompt>, ApiError> {
        let set = |key: &str| o.get(key).is_some_and(|v| !v.is_null());
        let texts = o
            .get("prompt")
            .is_some_and(|p| p.is_string() || p.as_array().is_some_and(|l| l.iter().all(Value::is_string)));
        let refuse = |message: &str| Err(ApiError::invalid_param(message, "suffix"));
        if truthy(o, "echo") {
            return refuse("Echo is unsupported with suffix.");
        }
        if set("prompt_embeds") {
            return refuse("suffix is not supported with prompt_embeds");
        }
        if set("truncate_prompt_tokens") {
            return refuse("suffix is not supported with truncate_prompt_tokens");
        }
        if !texts {
            return refuse("suffix requires text prompt input for FIM completion rendering");
        }
        let filled: Option<Vec<Prompt>> = prompts
            .iter()
            .map(|p| match p {
                Prompt::Text(t) => self.fim_prompt(t, suffix).map(Prompt::Text),
                Prompt::Ids(_) => None,
            })
            .collect();
        filled.map_or_else(|| refuse("suffix is only supported for models with FIM completion rendering"), Ok)
    }

    /// What a media part in a text-only model's messages gets.
    pub(crate) fn not_multimodal(&self) -> ApiError {
        let name = self.settings.served_model_names.first().map_or("The model", String::as_str);
        ApiError::bad_request(format!("{name} is not a multimodal model"))
    }

    pub(crate) fn encode(&self, text: &str, add_special: bool) -> Result<Vec<u32>, ApiError> {
        if let Some(tekken) = self.model.tekken() {
            return Ok(tekken_encode(tekken, text, add_special));
        }
        self.model
            .tokenizer
            .encode(text, add_special)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| ApiError::bad_request(format!("tokenization failed: {e}")))
    }

    /// `POST /v1/completions/render`: one `GenerateRequest` per prompt.
    pub fn completion_render(&self, body: Option<&Value>, header_request_id: Option<&str>) -> Result<Value, ApiError> {
        let o = body_object(body)?;
        request_prechecks(o, Api::Completion)?;
        let mut errs = Errors::default();
        let root = Loc::root("body");
        let prompts = prompt_field(o.get("prompt"), &root, &mut errs);
        let opts = request_fields(o, Api::Completion, &root, &mut errs);
        let Some(opts) = opts.filter(|_| errs.is_empty()) else { return Err(errs.into_api_error()) };
        let prompts = prompts.unwrap_or_default();
        if prompts.is_empty() {
            // An empty list passes `validate_prompt_and_prompt_embeds` and
            // fails in the renderer.
            let message = if o.get("prompt").is_some_and(Value::is_array) {
                "You must pass at least one prompt (parameter=prompt)"
            } else {
                "Either prompt or prompt_embeds must be provided and non-empty. (parameter=prompt)"
            };
            return Err(ApiError::invalid_param(message, "prompt"));
        }
        if o.get("prompt_embeds").is_some_and(|e| !e.is_null() && e.as_array().is_none_or(|a| !a.is_empty())) {
            return Err(ApiError::invalid_param(
                "You must set `--enable-prompt-embeds` to input `prompt_embeds`. (parameter=prompt_embeds)",
                "prompt_embeds",
            ));
        }
        self.check_model(o.get("model").and_then(Value::as_str))?;
        if truthy(o, "use_beam_search") {
            return Err(ApiError::bad_request("Beam search is not supported by the render endpoint"));
        }
        let prompts = match o.get("suffix").filter(|v| !v.is_null()) {
            Some(suffix) => self.fill_in_the_middle(o, prompts, suffix.as_str().unwrap_or_default())?,
            None => prompts,
        };
        let requested = match o.get("max_tokens") {
            None | Some(Value::Null) => Some(16),
            Some(_) => opt_i64(o, "max_tokens"),
        };
        self.check_output_budget(requested.filter(|&v| v != 0), "max_tokens")?;
        let add_special = o.get("add_special_tokens").and_then(Value::as_bool).unwrap_or(true);
        let base = header_request_id
            .map(str::to_string)
            .or_else(|| o.get("request_id").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(crate::ids::random_hex_id);
        let many = prompts.len() > 1;
        let mut out = Vec::with_capacity(prompts.len());
        for (i, prompt) in prompts.into_iter().enumerate() {
            // Token-id prompts have no text to point into: no offsets.
            let (ids, offsets): (Vec<u32>, Value) = match prompt {
                Prompt::Text(t) => {
                    // `CompletionRequest.build_tok_params`: `max_tokens or 0`.
                    let (ids, offsets) = self.encode_prompt(o, &t, add_special, Some(requested.unwrap_or(0)))?;
                    self.check_prompt_len(ids.len().min(self.settings.max_model_len + 1))?;
                    (ids, offsets)
                }
                Prompt::Ids(ids) => {
                    self.check_prompt_len(ids.len())?;
                    (ids.into_iter().map(|x| u32::try_from(x).unwrap_or(u32::MAX)).collect(), Value::Null)
                }
            };
            if ids.is_empty() {
                return Err(ApiError::bad_request("No token_ids rendered"));
            }
            let max_tokens = self.max_tokens(requested, ids.len());
            let skip_special = opts.skip_special_tokens.unwrap_or(true);
            let sampling = self.sampling(o, &opts, max_tokens, Api::Completion, skip_special);
            self.verify_sampling(&sampling)?;
            let id = if many { format!("cmpl-{base}-{i}") } else { format!("cmpl-{base}") };
            let mut request = self.generate_request(o, id, ids, &sampling, None, None, None);
            request["token_offsets"] = offsets;
            out.push(request);
        }
        Ok(Value::Array(out))
    }
}

/// `count_history_tool_calls`: tool calls in earlier assistant messages.
/// `_make_request_with_harmony`: the chat request as Harmony messages
/// (`tools`: the request's, unless left out for `tool_choice` "none").
/// `MistralTokenizer.encode(text, add_special_tokens)`: `<s>` then the ids.
fn tekken_encode(tekken: &Tekken, text: &str, add_special: bool) -> Vec<u32> {
    let mut ids = tekken.encode(text);
    if add_special {
        ids.insert(0, tekken.special_id("<s>").unwrap_or(1));
    }
    ids
}

fn harmony_chat_prompt(
    harmony: &Harmony,
    o: &Obj,
    tools: Option<&[Value]>,
    effort: Option<&str>,
) -> Result<Vec<u32>, ApiError> {
    let messages = o.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if effort == Some("none") {
        return Err(ApiError::invalid_param(
            "Harmony does not support reasoning_effort='none' (parameter=reasoning_effort)",
            "reasoning_effort",
        ));
    }
    let (instructions, rest) = harmony::split_instructions(messages);
    let mut conversation = harmony::preamble(instructions, tools, effort)?;
    conversation.extend(harmony::chat_messages(rest)?);
    Ok(harmony.render(&conversation))
}

fn history_tool_calls(o: &Obj) -> i64 {
    o.get("messages")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
                .map(|m| m.get("tool_calls").and_then(Value::as_array).map_or(0, Vec::len) as i64)
                .sum()
        })
        .unwrap_or(0)
}

enum Prompt {
    Text(String),
    Ids(Vec<i64>),
}

/// `prompt: list[int] | list[list[int]] | str | list[str] | None`, with
/// pydantic's errors for every union member when nothing fits.
fn prompt_field(v: Option<&Value>, root: &Loc, errs: &mut Errors) -> Option<Vec<Prompt>> {
    let loc = root.field("prompt");
    let v = match v {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(v) => v,
    };
    match v {
        Value::String(s) if s.is_empty() => return Some(Vec::new()),
        Value::String(s) => return Some(vec![Prompt::Text(s.clone())]),
        Value::Array(items) if items.is_empty() => return Some(Vec::new()),
        Value::Array(items) => {
            if items.iter().all(|x| x.as_i64().is_some_and(|i| i >= 0)) {
                return Some(vec![Prompt::Ids(items.iter().filter_map(Value::as_i64).collect())]);
            }
            if items.iter().all(|x| x.as_array().is_some_and(|a| a.iter().all(|i| i.as_i64().is_some_and(|i| i >= 0))))
            {
                return Some(
                    items
                        .iter()
                        .map(|x| {
                            Prompt::Ids(
                                x.as_array().map(|a| a.iter().filter_map(Value::as_i64).collect()).unwrap_or_default(),
                            )
                        })
                        .collect(),
                );
            }
            if items.iter().all(Value::is_string) {
                return Some(items.iter().filter_map(|x| x.as_str().map(|s| Prompt::Text(s.to_string()))).collect());
            }
        }
        _ => {}
    }
    // Nothing fits: pydantic reports each member of the union in order.
    let mut scratch = Errors::default();
    read::int_list(v, Some(0), &loc, &mut scratch);
    if let Some(items) = v.as_array() {
        for (i, item) in items.iter().enumerate() {
            read::int_list(item, Some(0), &loc.index(i), &mut scratch);
        }
    } else {
        read::list(v, &loc, &mut scratch);
    }
    read::string(v, &loc, &mut scratch);
    if let Some(items) = v.as_array() {
        for (i, item) in items.iter().enumerate() {
            read::string(item, &loc.index(i), &mut scratch);
        }
    } else {
        read::list(v, &loc, &mut scratch);
    }
    errs.list.extend(scratch.list);
    None
}
