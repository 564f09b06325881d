//! Streaming chat with a parser, in vLLM's history-replay state format:
//! every call rebuilds the parser and replays the output so far, chunk by
//! chunk, before parsing the new chunk (`_derender_chat_stream_parsed`).

use super::chat::top_limit;
use super::Derenderer;
use crate::detok::Window;
use crate::error::ApiError;
use crate::logprobs;
use crate::parse::{ChatContext, ChatStreamProcessor, ParserSpec};
use crate::wire::request::{OutputOptions, StreamRequest, StreamState};
use crate::wire::response::{ChatChunk, ChatStreamChoice, Delta};

impl Derenderer {
    pub(crate) fn chat_stream_parsed(
        &self,
        spec: &ParserSpec,
        req: &StreamRequest,
        ctx: &ChatContext,
        request: &OutputOptions,
    ) -> Result<(ChatChunk, StreamState), ApiError> {
        let invalid_state = |_| ApiError::bad_request("invalid stream_state: derender failed");
        let mut state = req.stream_state.clone().unwrap_or_default();
        let prompt = req.prompt_token_ids.as_deref();
        // With a reasoning parser, the engine reports the prompt on the first
        // chunk only and the state cannot carry it, so every call replays
        // without it: the answer stays the same on every call and matches the
        // batch answer for the same output (vLLM's stream uses the request's
        // `prompt_token_ids` and can disagree with its batch).
        let parser_prompt = if spec.has_reasoning() { None } else { prompt };
        let mut processor = ChatStreamProcessor::new(spec.build(ctx, &self.model), ctx);
        let mut window = Window::seed(&self.model, prompt, false);

        // Replay the history to rebuild the parser; its output was sent before.
        // A stop token held at the end of a chunk is decoded with the next.
        let mut held = Vec::new();
        let mut start = 0;
        for &len in &state.output_chunk_lens {
            let chunk = &state.output_token_ids[start..start + len as usize];
            start += len as usize;
            let plan = self.plan_chunk(held, chunk, None, None, Some(request), false);
            let text = window.decode(&self.model, &plan.ids[..plan.decode], false);
            processor.step(&text, &plan.ids, None, parser_prompt, ctx);
            held = plan.held;
        }
        processor.tools_streamed = state.tools_streamed;

        let hide_metadata = !ctx.include_reasoning;
        let return_token_ids = request.return_token_ids && !hide_metadata;
        let mut choices = Vec::with_capacity(1);
        let chunk = &req.generate_chunk;
        if let Some(choice) = chunk.choices.first() {
            let delta_ids: &[i64] = choice.token_ids.as_deref().unwrap_or(&[]);
            let finish = choice.finish_reason.as_deref();
            let plan = self.plan_chunk(held, delta_ids, finish, choice.stop_reason.as_ref(), Some(request), false);
            let (mut delta, mut finish_reason) = (None, None);
            if !delta_ids.is_empty() || finish.is_some() {
                let text = self.decode_chunk(&plan, &mut window, choice, Some(request), false);
                (delta, finish_reason) = processor.step(&text, &plan.ids, finish, parser_prompt, ctx);
            }
            let stop_reason = plan.stop_reason;
            if !delta_ids.is_empty() {
                state.output_token_ids.extend_from_slice(delta_ids);
                state.output_chunk_lens.push(delta_ids.len() as i64);
            }
            let logprobs = match &choice.logprobs {
                Some(l) if !hide_metadata => {
                    let limit = top_limit(Some(request));
                    let resolved = logprobs::resolve(&self.model, l, &state.logprob_context_token_ids, limit);
                    Some(resolved.map_err(invalid_state)?)
                }
                _ => None,
            };
            state.logprob_context_token_ids = logprobs::context_tail(&state.logprob_context_token_ids, delta_ids);
            let mut delta: Delta = delta.unwrap_or_default();
            // Pin tool-call ids by index: replay regenerates them.
            for tc in &mut delta.tool_calls {
                let Some(id) = &tc.id else { continue };
                match usize::try_from(tc.index).ok().and_then(|i| state.last_tool_call_ids.get(i)) {
                    Some(pinned) => tc.id = Some(pinned.clone()),
                    None => state.last_tool_call_ids.push(id.clone()),
                }
            }
            if !state.role_sent {
                delta.role = Some("assistant");
                state.role_sent = true;
            }
            choices.push(ChatStreamChoice {
                index: choice.index,
                delta,
                logprobs,
                finish_reason,
                stop_reason,
                token_ids: if return_token_ids { choice.token_ids.clone() } else { None },
                weight_versions: None,
            });
        }
        // A plugin parser that raised fails the call (replay included).
        if let Some(error) = processor.parser.failure() {
            return Err(error);
        }
        state.tools_streamed = processor.tools_streamed;
        Ok((self.chat_chunk(req, choices, request.return_token_ids), state))
    }
}
