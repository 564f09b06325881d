//! The four derender operations (chat / completions × batch / stream) and
//! the pieces they share: decode parameters, stop handling, bounds.

mod chat;
mod chunk;
mod completion;
mod live;
mod parsed;
mod stop;

use crate::error::ApiError;
use crate::served::Core;
use crate::wire::request::{GenResponse, OutputOptions};

pub use live::LiveChatStream;
pub use stop::{check_stop_strings, drop_stop_token};

/// `(skip_special_tokens, spaces_between_special_tokens)` as `_decode_params`
/// derives them; only skip matters for fast tokenizers.
pub(crate) fn skip_special(request: Option<&OutputOptions>, preserve_special: bool) -> bool {
    !preserve_special && request.is_none_or(|r| r.skip_special_tokens != Some(false))
}

impl Core {
    /// `_validate_derender_bounds`: element counts, before any decode.
    fn validate_bounds(&self, responses: &[GenResponse]) -> Result<(), ApiError> {
        let s = &self.settings;
        if responses.len() > s.max_n_sequences {
            return Err(ApiError::bad_request(format!(
                "generate_responses count ({}) exceeds server maximum ({}). Set VLLM_MAX_N_SEQUENCES to increase this limit.",
                responses.len(),
                s.max_n_sequences
            )));
        }
        for gen in responses {
            if gen.choices.len() > s.max_n_sequences {
                return Err(ApiError::bad_request(format!(
                    "choices count ({}) in response '{}' exceeds server maximum ({}).",
                    gen.choices.len(),
                    gen.request_id,
                    s.max_n_sequences
                )));
            }
            for choice in &gen.choices {
                let n = choice.token_ids.as_ref().map_or(0, Vec::len);
                if n > s.max_model_len {
                    return Err(ApiError::bad_request(format!(
                        "token_ids length ({n}) in choice {} exceeds max_model_len ({}).",
                        choice.index, s.max_model_len
                    )));
                }
                if let Some(content) = choice.logprobs.as_ref().and_then(|l| l.content.as_ref()) {
                    if content.len() > s.max_model_len {
                        return Err(ApiError::bad_request(format!(
                            "logprobs.content length ({}) in choice {} exceeds max_model_len ({}).",
                            content.len(),
                            choice.index,
                            s.max_model_len
                        )));
                    }
                    for entry in content {
                        if s.max_logprobs >= 0 && entry.top_logprobs.len() as i64 > s.max_logprobs {
                            return Err(ApiError::bad_request(format!(
                                "top_logprobs count ({}) in choice {} exceeds max_logprobs ({}).",
                                entry.top_logprobs.len(),
                                choice.index,
                                s.max_logprobs
                            )));
                        }
                    }
                }
            }
            let n = gen.prompt_logprobs.as_ref().and_then(|p| p.as_array()).map_or(0, Vec::len);
            if n > s.max_model_len {
                return Err(ApiError::bad_request(format!(
                    "prompt_logprobs length ({n}) in response '{}' exceeds max_model_len ({}).",
                    gen.request_id, s.max_model_len
                )));
            }
        }
        Ok(())
    }

    fn validate_prompt_len(&self, ids: Option<&Vec<i64>>) -> Result<(), ApiError> {
        match ids {
            Some(ids) if ids.len() > self.settings.max_model_len => Err(ApiError::bad_request(format!(
                "prompt_token_ids length ({}) exceeds max_model_len ({}).",
                ids.len(),
                self.settings.max_model_len
            ))),
            _ => Ok(()),
        }
    }
}

pub(crate) const PARSER_NEEDS_CHAT_REQUEST: &str = "chat_request is required when a tool or reasoning parser is configured because plain detokenization would leak raw parser markup into content.";

pub(crate) const STREAM_STOP_STRINGS_ERROR: &str = "stop strings are not supported by streaming derender because text already sent cannot be cut. Use non-streaming derender or output_mode=text on /inference/v1/generate which holds stop strings back.";

impl Core {
    /// `_decode_output`: drop the stop token, decode from the seed window,
    /// then cut at the stop string that ended generation.
    pub(crate) fn decode_output(
        &self,
        ids: &[i64],
        finish_reason: Option<&str>,
        reported: Option<&crate::wire::request::StopReason>,
        request: Option<&OutputOptions>,
        seed: &crate::detok::Window,
        skip: bool,
    ) -> (String, Option<crate::wire::request::StopReason>) {
        use crate::wire::request::StopReason;
        let (keep, mut stop_reason) =
            drop_stop_token(ids, finish_reason, reported, request, self.model.eos_token_id, &self.model.model_eos_ids);
        let ids = &ids[..keep];
        let stops: Vec<String> = match reported {
            _ if finish_reason != Some("stop") => Vec::new(),
            Some(StopReason::Int(_)) => Vec::new(),
            Some(StopReason::Str(s)) => vec![s.clone()],
            None => request.map(|r| r.stop.clone()).unwrap_or_default(),
        };
        // Python slicing: ids[:min_tokens] / ids[min_tokens:].
        let min_tokens = request.map_or(0, |r| r.min_tokens);
        let split = if min_tokens >= 0 {
            (min_tokens as usize).min(ids.len())
        } else {
            ids.len().saturating_sub(min_tokens.unsigned_abs() as usize)
        };
        let mut window = seed.clone();
        let mut text = window.decode(&self.model, &ids[..split], skip);
        let tail = window.decode(&self.model, &ids[split..], skip);
        let tail_chars = tail.chars().count();
        text.push_str(&tail);
        let include = request.is_some_and(|r| r.include_stop_str_in_output);
        if let Some((stop, cut)) = check_stop_strings(&text, tail_chars, &stops, include) {
            stop_reason = Some(StopReason::Str(stop));
            if let Some(cut) = cut {
                text = text.chars().take(cut).collect();
            }
        }
        (text, stop_reason)
    }
}

/// The final chunk's text with the stop string that ended the output removed
/// (kept with `include`): the engine stops as soon as the string completes,
/// so it ends in this chunk, and text after it is not part of the answer.
pub(crate) fn cut_final_stop_string(text: &str, stop: &str, include: bool) -> String {
    if stop.is_empty() || text.is_empty() {
        return text.to_string();
    }
    if let Some((_, Some(cut))) = check_stop_strings(text, text.chars().count(), &[stop.to_string()], include) {
        return text.chars().take(cut).collect();
    }
    if text.contains(stop) {
        return text.to_string();
    }
    // The string began in an earlier chunk: all of this chunk belongs to it
    // (or follows it). With `include`, keep the part that completes it.
    if !include {
        return String::new();
    }
    let chars: Vec<char> = stop.chars().collect();
    (1..chars.len())
        .map(|k| chars[k..].iter().collect::<String>())
        .find(|suffix| text.starts_with(suffix.as_str()))
        .unwrap_or_default()
}
