//! `/v1/completions/derender`, batch and stream. Completions never parse:
//! they only detokenize (as `/v1/completions` on `vllm serve`).

use super::chat::{logprob_error, stream_usage};
use super::{skip_special, STREAM_STOP_STRINGS_ERROR};
use crate::detok::Window;
use crate::error::ApiError;
use crate::ids::now;
use crate::logprobs::{self, LogprobError};
use crate::served::Core;
use crate::stream::{Outgoing, Payload};
use crate::wire::request::{CompletionBatchRequest, OutputOptions, StreamRequest};
use crate::wire::response::{
    normalize_metrics, Completion, CompletionChoice, CompletionChunk, CompletionStreamChoice, Usage,
};

/// `_completion_top_logprobs_limit`: `logprobs + 1` candidates per position.
fn top_limit(request: Option<&OutputOptions>) -> Option<usize> {
    let r = request?;
    match r.top_logprobs {
        _ if r.logprob_token_ids => None,
        None | Some(-1) => None,
        Some(k) => Some((k + 1).max(0) as usize),
    }
}

impl Core {
    pub fn completion_batch(&self, req: &CompletionBatchRequest) -> Result<Completion, ApiError> {
        self.check_model(req.model.as_deref())?;
        if req.generate_responses.is_empty() {
            return Err(ApiError::bad_request("generate_responses must not be empty"));
        }
        self.validate_bounds(&req.generate_responses)?;
        if let Some(all) = &req.prompt_token_ids {
            for ids in all.iter().flatten() {
                self.validate_prompt_len(Some(ids))?;
            }
        }
        let request = req.completion_request.as_ref();
        let skip = skip_special(request, false);
        let limit = top_limit(request);
        let return_token_ids = request.is_some_and(|r| r.return_token_ids);
        let mut choices = Vec::new();
        let (mut prompt_total, mut completion_total) = (0i64, 0i64);
        for (i, gen) in req.generate_responses.iter().enumerate() {
            let override_ids = req.prompt_token_ids.as_ref().and_then(|p| p.get(i)).and_then(|p| p.as_deref());
            let seed = Window::seed(&self.model, override_ids.or(gen.prompt_token_ids.as_deref()), skip);
            for choice in &gen.choices {
                let ids = match &choice.token_ids {
                    Some(ids) if !ids.is_empty() => ids,
                    _ => {
                        return Err(ApiError::bad_request(format!(
                            "choice {} in response {} has empty or null token_ids",
                            choice.index, gen.request_id
                        )))
                    }
                };
                let (text, stop_reason) = self.decode_output(
                    ids,
                    choice.finish_reason.as_deref(),
                    choice.stop_reason.as_ref(),
                    request,
                    &seed,
                    skip,
                );
                let logprobs = match &choice.logprobs {
                    Some(l) => {
                        let resolved = logprobs::resolve(&self.model, l, &[], limit).map_err(logprob_error)?;
                        Some(logprobs::to_completion(&resolved, l.content.as_deref().unwrap_or(&[]), 0))
                    }
                    None => None,
                };
                choices.push(CompletionChoice {
                    index: choices.len() as i64,
                    text,
                    logprobs,
                    finish_reason: choice.finish_reason.clone(),
                    stop_reason,
                    token_ids: return_token_ids.then(|| ids.clone()),
                    prompt_logprobs: None,
                    prompt_token_ids: if return_token_ids { gen.prompt_token_ids.clone() } else { None },
                    routed_experts: None,
                    weight_versions: None,
                });
                completion_total += ids.len() as i64;
            }
            prompt_total += req.prompt_tokens.as_ref().and_then(|p| p.get(i)).copied().unwrap_or(0);
        }
        let first = &req.generate_responses[0];
        let kv = if req.generate_responses[1..].iter().all(|r| r.kv_transfer_params == first.kv_transfer_params) {
            first.kv_transfer_params.clone()
        } else {
            None
        };
        Ok(Completion {
            id: first.request_id.clone(),
            object: "text_completion",
            created: now(),
            model: self.response_model(req.model.as_deref()),
            choices,
            service_tier: None,
            system_fingerprint: None,
            usage: Usage::new(prompt_total, completion_total),
            kv_transfer_params: kv,
            ec_transfer_params: None,
            metrics: if req.generate_responses.len() == 1 { normalize_metrics(&first.metrics) } else { None },
        })
    }

    pub fn completion_stream(&self, req: &StreamRequest) -> Result<(CompletionChunk, Outgoing), ApiError> {
        self.check_model(req.model.as_deref())?;
        let request = req.request.as_ref();
        if request.is_some_and(|r| r.stop_given) {
            return Err(ApiError::bad_request(STREAM_STOP_STRINGS_ERROR));
        }
        self.validate_prompt_len(req.prompt_token_ids.as_ref())?;
        let chunk = &req.generate_chunk;
        if chunk.choices.len() > 1 {
            return Err(ApiError::bad_request("derender_completion_stream expects at most one choice per chunk"));
        }
        let skip = skip_special(request, false);
        let opened = self.open_state(req)?;
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
            let logprobs = match &choice.logprobs {
                Some(l) => {
                    let resolved =
                        logprobs::resolve(&self.model, l, &state.logprob_context_token_ids, top_limit(request))
                            .map_err(|e| match e {
                                LogprobError::NegativeId(_) => {
                                    ApiError::bad_request("can't convert negative int to unsigned")
                                }
                                LogprobError::Undecodable(_) => {
                                    ApiError::bad_request(format!("invalid stream_state: detokenization failed ({e})"))
                                }
                                other => logprob_error(other),
                            })?;
                    Some(logprobs::to_completion(
                        &resolved,
                        l.content.as_deref().unwrap_or(&[]),
                        state.logprob_text_offset,
                    ))
                }
                None => None,
            };
            let mut next_offset = state.logprob_text_offset + text.chars().count() as i64;
            if let Some(lp) = &logprobs {
                if let (Some(off), Some(tok)) = (lp.text_offset.last(), lp.tokens.last()) {
                    next_offset = off + tok.chars().count() as i64;
                }
            }
            state.logprob_context_token_ids = logprobs::context_tail(&state.logprob_context_token_ids, delta_ids);
            state.logprob_text_offset = next_offset;
            choices.push(CompletionStreamChoice {
                index: choice.index,
                text,
                logprobs,
                finish_reason: choice.finish_reason.clone(),
                stop_reason,
                prompt_token_ids: if return_token_ids { chunk.prompt_token_ids.clone() } else { None },
                token_ids: if return_token_ids { choice.token_ids.clone() } else { None },
                weight_versions: None,
            });
        }
        state.prev_tokens = window.prev_tokens;
        state.prefix_offset = window.prefix_offset as i64;
        state.read_offset = window.read_offset as i64;
        let out = CompletionChunk {
            id: chunk.request_id.clone(),
            object: "text_completion",
            created: now(),
            model: self.response_model(req.model.as_deref()),
            choices,
            usage: stream_usage(req, false),
            system_fingerprint: None,
            metrics: normalize_metrics(&chunk.metrics),
            kv_transfer_params: None,
        };
        Ok((out, self.settings.stream_state.seal(Payload::Plain { state })))
    }
}
