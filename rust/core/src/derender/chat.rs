//! `/v1/chat/completions/derender`, batch and stream (plain path).

use super::{skip_special, PARSER_NEEDS_CHAT_REQUEST, STREAM_STOP_STRINGS_ERROR};
use crate::detok::Window;
use crate::error::ApiError;
use crate::ids::now;
use crate::logprobs::{self, ChatLogprobs, LogprobError};
use crate::parse::{ChatContext, ParserSpec};
use crate::served::Core;
use crate::stats::Stats;
use crate::stream::{Opened, Outgoing, Payload};
use crate::wire::request::{ChatBatchRequest, OutputOptions, StreamRequest, StreamState};
use crate::wire::response::{
    normalize_metrics, normalize_prompt_logprobs, ChatChoice, ChatChunk, ChatCompletion, ChatMessage, ChatStreamChoice,
    Delta, Usage,
};

/// `_chat_top_logprobs_limit`: how many candidates chat keeps per position.
pub(crate) fn top_limit(request: Option<&OutputOptions>) -> Option<usize> {
    let r = request.filter(|r| r.logprobs_flag)?;
    if r.logprob_token_ids || r.top_logprobs == Some(-1) {
        return None;
    }
    Some(r.top_logprobs.unwrap_or(0).max(0) as usize)
}

impl Core {
    pub fn chat_batch(&self, req: &ChatBatchRequest, stats: &mut Stats) -> Result<ChatCompletion, ApiError> {
        self.check_model(req.model.as_deref())?;
        let gen = &req.generate_response;
        self.validate_bounds(std::slice::from_ref(gen))?;
        self.validate_prompt_len(req.prompt_token_ids.as_ref())?;
        let request = req.chat_request.as_ref();
        let parser = self.settings.parser.as_ref();
        if parser.is_some() && request.is_none() {
            return Err(ApiError::bad_request(PARSER_NEEDS_CHAT_REQUEST));
        }
        // With a parser, special tokens are kept so it can see its markers.
        let parsing =
            parser.zip(request).map(|(p, r)| (p, ChatContext::from_request(&r.raw, &self.settings.template_defaults)));
        let skip = skip_special(request, parsing.is_some());
        let hide_metadata = parsing.as_ref().is_some_and(|(_, ctx)| !ctx.include_reasoning);
        let seed_ids = req.prompt_token_ids.as_deref().or(gen.prompt_token_ids.as_deref());
        let seed = Window::seed(&self.model, seed_ids, skip);
        let limit = top_limit(request);
        let return_token_ids = request.is_some_and(|r| r.return_token_ids) && !hide_metadata;

        let mut choices = Vec::with_capacity(gen.choices.len());
        for choice in &gen.choices {
            let ids = match &choice.token_ids {
                Some(ids) if !ids.is_empty() => ids,
                _ => return Err(ApiError::bad_request(format!("choice {} has empty or null token_ids", choice.index))),
            };
            let logprobs = match &choice.logprobs {
                Some(l) if !hide_metadata => {
                    Some(logprobs::resolve(&self.model, l, &[], limit).map_err(logprob_error)?)
                }
                _ => None,
            };
            let (text, stop_reason) = self.decode_output(
                ids,
                choice.finish_reason.as_deref(),
                choice.stop_reason.as_ref(),
                request,
                &seed,
                skip,
            );
            let (message, finish_reason) = match &parsing {
                Some((spec, ctx)) => {
                    let prompt = gen.prompt_token_ids.as_deref();
                    let (parser, fields) = stats.parsing(|| {
                        let mut parser = spec.build(ctx, &self.model);
                        let fields = parser.parse_message(&text, ids, ctx, prompt);
                        (parser, fields)
                    });
                    if let Some(error) = parser.failure() {
                        return Err(error);
                    }
                    let made = !fields.tool_calls.is_empty();
                    let fr = crate::parse::resolve_finish_reason(choice.finish_reason.as_deref(), ctx, made);
                    (ChatMessage::assistant(fields.content, fields.reasoning, fields.tool_calls), fr)
                }
                None => {
                    let fr = choice.finish_reason.clone().unwrap_or_else(|| "stop".into());
                    (ChatMessage::assistant(Some(text), None, Vec::new()), fr)
                }
            };
            choices.push(ChatChoice {
                index: choice.index,
                message,
                logprobs,
                finish_reason: Some(finish_reason),
                stop_reason,
                token_ids: return_token_ids.then(|| ids.clone()),
                routed_experts: None,
                weight_versions: None,
            });
        }
        let completion_tokens: i64 = gen.choices.iter().map(|c| c.token_ids.as_ref().map_or(0, Vec::len) as i64).sum();
        Ok(ChatCompletion {
            id: gen.request_id.clone(),
            object: "chat.completion",
            created: now(),
            model: self.response_model(req.model.as_deref()),
            choices,
            service_tier: None,
            system_fingerprint: None,
            usage: Usage::new(req.prompt_tokens.unwrap_or(0), completion_tokens),
            prompt_logprobs: normalize_prompt_logprobs(&gen.prompt_logprobs),
            prompt_token_ids: if return_token_ids { gen.prompt_token_ids.clone() } else { None },
            prompt_text: None,
            kv_transfer_params: gen.kv_transfer_params.clone(),
            ec_transfer_params: None,
            metrics: normalize_metrics(&gen.metrics),
        })
    }

    pub fn chat_stream(&self, req: &StreamRequest, stats: &mut Stats) -> Result<(ChatChunk, Outgoing), ApiError> {
        let opened = self.chat_stream_prechecks(req)?;
        let request = req.request.as_ref();
        if let (Some(spec), Some(r)) = (self.settings.parser.as_ref(), request) {
            let ctx = ChatContext::from_request(&r.raw, &self.settings.template_defaults);
            return self.chat_stream_parsed(spec, req, opened, &ctx, r, stats);
        }
        let chunk = &req.generate_chunk;
        let skip = skip_special(request, false);
        let (mut state, mut window) = self.plain_state(req, opened, skip)?;
        let return_token_ids = request.is_some_and(|r| r.return_token_ids);

        let mut choices = Vec::with_capacity(1);
        if let Some(choice) = chunk.choices.first() {
            let delta_ids: &[i64] = choice.token_ids.as_deref().unwrap_or(&[]);
            let held = std::mem::take(&mut state.held_token_ids);
            let finish = choice.finish_reason.as_deref();
            let plan = self.plan_chunk_unheld(held, delta_ids, finish, choice.stop_reason.as_ref(), request);
            let text = self.decode_chunk(&plan, &mut window, choice, request, skip, false);
            let stop_reason = plan.stop_reason;
            state.held_token_ids = plan.held;
            let logprobs: Option<ChatLogprobs> = match &choice.logprobs {
                Some(l) => Some(
                    logprobs::resolve(&self.model, l, &state.logprob_context_token_ids, top_limit(request))
                        .map_err(|_| ApiError::bad_request("invalid stream_state: derender failed"))?,
                ),
                None => None,
            };
            let include_role = !state.role_sent;
            state.role_sent = true;
            state.logprob_context_token_ids = logprobs::context_tail(&state.logprob_context_token_ids, delta_ids);
            choices.push(ChatStreamChoice {
                index: choice.index,
                delta: Delta {
                    role: include_role.then_some("assistant"),
                    content: (!text.is_empty()).then_some(text),
                    reasoning: None,
                    tool_calls: Vec::new(),
                    citations: Vec::new(),
                },
                logprobs,
                finish_reason: choice.finish_reason.clone(),
                stop_reason,
                token_ids: if return_token_ids { choice.token_ids.clone() } else { None },
                weight_versions: None,
            });
        }
        state.prev_tokens = window.prev_tokens;
        state.prefix_offset = window.prefix_offset as i64;
        state.read_offset = window.read_offset as i64;
        let state = self.settings.stream_state.seal(Payload::Plain { state });
        Ok((self.chat_chunk(req, choices, return_token_ids, false), state))
    }

    /// vLLM's checks on a stream call, in its order; the request's state, opened.
    pub(crate) fn chat_stream_prechecks(&self, req: &StreamRequest) -> Result<Option<Opened>, ApiError> {
        self.check_model(req.model.as_deref())?;
        let request = req.request.as_ref();
        if request.is_some_and(|r| r.stop_given) {
            return Err(ApiError::bad_request(STREAM_STOP_STRINGS_ERROR));
        }
        let parser = self.settings.parser.as_ref();
        if parser.is_some() && request.is_none() {
            return Err(ApiError::bad_request(PARSER_NEEDS_CHAT_REQUEST));
        }
        let opened = self.open_state(req)?;
        // Streams on our own state need the prompt only on their first call,
        // unless a history replays a parser that reads it (each call's
        // replay reads the prompt again).
        let replays_prompt = parser.is_some_and(ParserSpec::stream_follows_vllm)
            && matches!(opened, Some(Opened::Ours(Payload::History { .. })));
        let remembers_prompt = opened.as_ref().is_some_and(|o| o.prompt_len().is_some()) && !replays_prompt;
        if parser.is_some() && req.prompt_token_ids.is_none() && !remembers_prompt {
            return Err(ApiError::bad_request(
                "prompt_token_ids is required when a tool or reasoning parser is configured. Without it parse_delta cannot tell whether the prompt left reasoning open (e.g. a chat template that pre-opens <think>) and would misclassify reasoning content as plain content.",
            ));
        }
        let chunk = &req.generate_chunk;
        if chunk.choices.len() > 1 {
            return Err(ApiError::bad_request(format!(
                "derender_chat_stream expects at most one choice per chunk (got {}).",
                chunk.choices.len()
            )));
        }
        let prompt_len = req.prompt_token_ids.as_ref().map(Vec::len).or(opened.as_ref().and_then(Opened::prompt_len));
        let prompt_len = prompt_len.unwrap_or(0);
        let prior_len = opened.as_ref().map_or(0, Opened::output_len);
        let delta_len: usize = chunk.choices.iter().map(|c| c.token_ids.as_ref().map_or(0, Vec::len)).sum();
        self.check_stream_len(prompt_len, prior_len, delta_len)?;
        Ok(opened)
    }

    /// A stream may not grow past `max_model_len`.
    pub(crate) fn check_stream_len(
        &self,
        prompt_len: usize,
        prior_len: usize,
        delta_len: usize,
    ) -> Result<(), ApiError> {
        if prompt_len + prior_len + delta_len > self.settings.max_model_len {
            return Err(ApiError::bad_request(format!(
                "prompt_token_ids length ({prompt_len}) plus output_token_ids length ({prior_len}) plus delta ({delta_len}) exceeds max_model_len ({}).",
                self.settings.max_model_len
            )));
        }
        Ok(())
    }

    /// The chunk envelope around `choices`, shared by the plain and parser
    /// paths; its usage is vLLM's stream's when the stream follows it.
    pub(crate) fn chat_chunk(
        &self,
        req: &StreamRequest,
        choices: Vec<ChatStreamChoice>,
        return_prompt_ids: bool,
        follows_vllm: bool,
    ) -> ChatChunk {
        let chunk = &req.generate_chunk;
        ChatChunk {
            id: chunk.request_id.clone(),
            object: "chat.completion.chunk",
            created: now(),
            model: self.response_model(req.model.as_deref()),
            choices,
            usage: stream_usage(req, follows_vllm),
            system_fingerprint: None,
            prompt_token_ids: if return_prompt_ids { chunk.prompt_token_ids.clone() } else { None },
            prompt_text: None,
            metrics: normalize_metrics(&chunk.metrics),
            kv_transfer_params: None,
        }
    }

    /// The request's state, checked (signature, format version).
    pub(crate) fn open_state(&self, req: &StreamRequest) -> Result<Option<Opened>, ApiError> {
        let codec = &self.settings.stream_state;
        let opened = req.stream_state.as_ref().map(|s| codec.open(s)).transpose();
        opened.map_err(|e| ApiError::bad_request(e.to_string()))
    }

    /// The plain path's state (or a fresh one seeded from the prompt) and
    /// its decode window. A window the algorithm cannot have produced is
    /// refused instead of decoding garbage.
    pub(crate) fn plain_state(
        &self,
        req: &StreamRequest,
        opened: Option<Opened>,
        skip: bool,
    ) -> Result<(StreamState, Window), ApiError> {
        let s = match opened {
            None => {
                let ids = req.prompt_token_ids.as_deref().or(req.generate_chunk.prompt_token_ids.as_deref());
                return Ok((StreamState::default(), Window::seed(&self.model, ids, skip)));
            }
            Some(Opened::Vllm(s) | Opened::Ours(Payload::Plain { state: s })) => s,
            Some(Opened::Ours(_)) => {
                return Err(ApiError::bad_request("invalid stream_state: it belongs to a stream with parsers"))
            }
        };
        let window = Window {
            prev_tokens: s.prev_tokens.clone(),
            prefix_offset: s.prefix_offset as usize,
            read_offset: s.read_offset as usize,
        };
        if !window.is_consistent() {
            return Err(ApiError::bad_request(format!(
                "invalid stream_state: prefix_offset ({}) and read_offset ({}) must satisfy prefix_offset <= read_offset <= len(prev_tokens) ({})",
                s.prefix_offset,
                s.read_offset,
                s.prev_tokens.len()
            )));
        }
        Ok((s, window))
    }
}

/// Usage of a stream chunk: present only when the generate chunk had one.
/// `prompt_tokens` is the request's, else 0, as in the batch answer; a
/// stream that follows vLLM's falls back to the generate chunk's count, as
/// vLLM's stream does (docs/divergences.md).
pub(crate) fn stream_usage(req: &StreamRequest, follows_vllm: bool) -> Option<Usage> {
    let u = req.generate_chunk.usage.as_ref()?;
    let fallback = if follows_vllm { u.prompt_tokens } else { 0 };
    let prompt = req.prompt_tokens.unwrap_or(fallback);
    Some(Usage::new(prompt, u.completion_tokens.unwrap_or(0)))
}

pub(crate) fn logprob_error(e: LogprobError) -> ApiError {
    ApiError::bad_request(e.to_string())
}
