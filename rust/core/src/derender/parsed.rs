//! Streaming chat with a parser. Each call resumes the stream where its
//! state left it, parses the new chunk and hands back the new state:
//!
//! - compact (ours, the default): the parser is restored from its snapshot,
//!   so a call costs what its chunk costs;
//! - history (vLLM's format, `--stream-state-mode replay`, and plugins whose
//!   parsers cannot be serialized): the parser is rebuilt and the output so
//!   far replayed chunk by chunk before the new one
//!   (`_derender_chat_stream_parsed`).
//!
//! Both give the same chunks: replaying a chunk is exactly what the
//! original call did, and a snapshot is the parser as that call left it.

use super::chat::top_limit;
use super::chunk::ChunkIds;
use crate::detok::Window;
use crate::error::ApiError;
use crate::logprobs;
use crate::parse::{ChatContext, ChatStreamProcessor, ParserSpec};
use crate::served::Core;
use crate::stats::Stats;
use crate::stream::{Opened, Outgoing, ParserState, Payload, StateMode};
use crate::wire::request::{OutputOptions, StopReason, StreamRequest, StreamState};
use crate::wire::response::{ChatChunk, ChatStreamChoice, Delta};

const REPLAY_FAILED: &str = "invalid stream_state: derender failed";

/// Where a stream stands before the new chunk.
#[derive(Clone)]
pub(super) struct Progress {
    window: Window,
    /// The window the prompt seeded (history states replay from it).
    seed: Window,
    held: Vec<i64>,
    pub(super) prompt_len: usize,
    pub(super) output_len: usize,
    /// vLLM's state fields (role, logprob context, tool ids, and the
    /// history when the stream carries one).
    vllm: StreamState,
    /// The stream carries its history (it did not start compact).
    history: bool,
}

impl Core {
    pub(crate) fn chat_stream_parsed(
        &self,
        spec: &ParserSpec,
        req: &StreamRequest,
        opened: Option<Opened>,
        ctx: &ChatContext,
        request: &OutputOptions,
        stats: &mut Stats,
    ) -> Result<(ChatChunk, Outgoing), ApiError> {
        if self.model.tekken().is_some() && !self.tekken_decodes(req, opened.as_ref()) {
            return Err(ApiError::bad_request(REPLAY_FAILED));
        }
        let mut processor = stats.parsing(|| ChatStreamProcessor::new(spec.build(ctx, &self.model), ctx));
        // Without a secret a compact state is the client's word: whatever
        // it makes a parser do is that client's problem, never a 5xx.
        let unverified = matches!(opened, Some(Opened::Ours(_))) && !self.settings.stream_state.signs();
        let run = std::panic::AssertUnwindSafe(|| {
            let mut progress = self.resume(spec, req, opened, ctx, request, &mut processor, stats)?;
            let chunk = self.parse_chunk(spec, req, ctx, request, &mut processor, &mut progress, stats)?;
            Ok((chunk, self.settings.stream_state.seal(self.next_state(&mut processor, progress))))
        });
        if !unverified {
            return run();
        }
        std::panic::catch_unwind(run).unwrap_or_else(|_| Err(ApiError::bad_request(REPLAY_FAILED)))
    }

    /// vLLM's Mistral tokenizer raises on an id past its vocabulary wherever
    /// a parser stream decodes one: the prompt tail that seeds each replay,
    /// and every output id, the history's included.
    fn tekken_decodes(&self, req: &StreamRequest, opened: Option<&Opened>) -> bool {
        let prompt = req.prompt_token_ids.as_deref().unwrap_or(&[]);
        let tail = &prompt[prompt.len().saturating_sub(7)..];
        let chunk = req.generate_chunk.choices.iter().flat_map(|c| c.token_ids.iter().flatten());
        let history: &[i64] = match opened {
            Some(Opened::Vllm(state)) => &state.output_token_ids,
            _ => &[],
        };
        tail.iter().chain(chunk).chain(history).all(|&id| self.model.in_vocab(id))
    }

    /// Bring `processor` to where the stream stands.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resume(
        &self,
        spec: &ParserSpec,
        req: &StreamRequest,
        opened: Option<Opened>,
        ctx: &ChatContext,
        request: &OutputOptions,
        processor: &mut ChatStreamProcessor,
        stats: &mut Stats,
    ) -> Result<Progress, ApiError> {
        let prompt = req.prompt_token_ids.as_deref();
        let (vllm, seed, prompt_len) = match opened {
            Some(Opened::Ours(Payload::Parser(state))) => return self.restore(state, processor),
            Some(Opened::Ours(Payload::Plain { .. })) => {
                return Err(ApiError::bad_request("invalid stream_state: it belongs to a stream without parsers"))
            }
            Some(Opened::Ours(Payload::History { state, seed, prompt_len })) => {
                // vLLM's validator checks this for its own format at parse time.
                let lens_fit = state.output_chunk_lens.iter().all(|&n| n > 0)
                    && state.output_chunk_lens.iter().try_fold(0i64, |a, &n| a.checked_add(n))
                        == Some(state.output_token_ids.len() as i64);
                if !lens_fit || !seed.is_consistent() {
                    return Err(ApiError::bad_request("invalid stream_state: its history does not add up"));
                }
                (state, seed, prompt_len)
            }
            Some(Opened::Vllm(state)) => (state, Window::seed(&self.model, prompt, false), 0),
            None => (StreamState::default(), Window::seed(&self.model, prompt, false), 0),
        };
        let prompt_len = prompt.map_or(prompt_len, <[i64]>::len);
        let parser_prompt = parser_prompt(spec, prompt);
        if let (None, Some(prompt)) = (parser_prompt, prompt) {
            processor.note_unread_prompt(prompt);
        }
        // Replay the history to rebuild the parser; its output was sent before.
        // A stop token held at the end of a chunk is decoded with the next.
        let mut window = seed.clone();
        let mut held = Vec::new();
        let mut start = 0;
        for &len in &vllm.output_chunk_lens {
            let chunk = &vllm.output_token_ids[start..start + len as usize];
            start += len as usize;
            let mut plan =
                self.plan_parsed(spec, processor, ctx, held, chunk, None, None, request, &window, parser_prompt);
            self.release_markup(&mut plan, &window, processor, parser_prompt);
            let text = window.decode(&self.model, &plan.ids[..plan.decode], false);
            stats.parsing(|| processor.step(&text, &plan.ids, None, parser_prompt, ctx));
            stats.parsing(|| self.release_held(&mut plan, &mut window, processor, parser_prompt, ctx));
            held = plan.held;
        }
        processor.tools_streamed = vllm.tools_streamed;
        let output_len = vllm.output_token_ids.len();
        Ok(Progress { window, seed, held, prompt_len, output_len, vllm, history: true })
    }

    /// Restore a compact state.
    fn restore(&self, state: ParserState, processor: &mut ChatStreamProcessor) -> Result<Progress, ApiError> {
        let invalid = |e: &dyn std::fmt::Display| ApiError::bad_request(format!("invalid stream_state: {e}"));
        processor.load_state(state.processor).map_err(|e| invalid(&e))?;
        if !state.window.is_consistent() {
            return Err(invalid(&"the decode window's offsets do not fit its tokens"));
        }
        if state.logprob_context_token_ids.len() > 4 || state.held_token_ids.len() > 1 {
            return Err(invalid(&"the logprob context or held tokens are too long"));
        }
        let vllm = StreamState {
            role_sent: state.role_sent,
            logprob_context_token_ids: state.logprob_context_token_ids,
            tools_streamed: processor.tools_streamed,
            last_tool_call_ids: state.last_tool_call_ids,
            ..Default::default()
        };
        Ok(Progress {
            window: state.window,
            seed: Window::default(),
            held: state.held_token_ids,
            prompt_len: state.prompt_len,
            output_len: state.output_len,
            vllm,
            history: false,
        })
    }

    /// Parse the request's chunk into the answer; `p` moves past it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn parse_chunk(
        &self,
        spec: &ParserSpec,
        req: &StreamRequest,
        ctx: &ChatContext,
        request: &OutputOptions,
        processor: &mut ChatStreamProcessor,
        p: &mut Progress,
        stats: &mut Stats,
    ) -> Result<ChatChunk, ApiError> {
        let parser_prompt = parser_prompt(spec, req.prompt_token_ids.as_deref());
        let hide_metadata = !ctx.include_reasoning;
        let return_token_ids = request.return_token_ids && !hide_metadata;
        let state = &mut p.vllm;
        let mut choices = Vec::with_capacity(1);
        if let Some(choice) = req.generate_chunk.choices.first() {
            let delta_ids: &[i64] = choice.token_ids.as_deref().unwrap_or(&[]);
            let finish = choice.finish_reason.as_deref();
            let held = std::mem::take(&mut p.held);
            let stop_reason = choice.stop_reason.as_ref();
            let mut plan = self.plan_parsed(
                spec,
                processor,
                ctx,
                held,
                delta_ids,
                finish,
                stop_reason,
                request,
                &p.window,
                parser_prompt,
            );
            self.release_markup(&mut plan, &p.window, processor, parser_prompt);
            let (mut delta, mut finish_reason) = (None, None);
            if !delta_ids.is_empty() || finish.is_some() {
                let stop_string = matches!(choice.stop_reason, Some(StopReason::Str(_))) && finish.is_some();
                let keep_stop = stop_string && (spec.stream_follows_vllm() || processor.follows_vllm(ctx));
                let text = self.decode_chunk(&plan, &mut p.window, choice, Some(request), false, keep_stop);
                (delta, finish_reason) = stats.parsing(|| processor.step(&text, &plan.ids, finish, parser_prompt, ctx));
                let released =
                    stats.parsing(|| self.release_held(&mut plan, &mut p.window, processor, parser_prompt, ctx));
                if let Some(more) = released {
                    delta = Some(delta.unwrap_or_default().then(more));
                }
            }
            let stop_reason = plan.stop_reason;
            p.held = plan.held;
            if !delta_ids.is_empty() {
                p.output_len += delta_ids.len();
                if p.history {
                    state.output_token_ids.extend_from_slice(delta_ids);
                    state.output_chunk_lens.push(delta_ids.len() as i64);
                }
            }
            let logprobs = match &choice.logprobs {
                Some(l) if !hide_metadata => {
                    let limit = top_limit(Some(request));
                    let resolved = logprobs::resolve(&self.model, l, &state.logprob_context_token_ids, limit);
                    Some(resolved.map_err(|_| ApiError::bad_request(REPLAY_FAILED))?)
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
        let usage_differs = req.generate_chunk.usage.is_some() && req.prompt_tokens.is_none();
        let follows_vllm = usage_differs && (spec.stream_follows_vllm() || processor.follows_vllm(ctx));
        Ok(self.chat_chunk(req, choices, request.return_token_ids, follows_vllm))
    }

    /// The plan for a parser stream's chunk. A stop token ending a chunk
    /// without a finish is decoded, as vLLM's stream decodes it, unless a
    /// finish coming alone next would leave the stream neither answer: it is
    /// then held back, and dropped if that finish comes, as batch drops it.
    /// Asked only when a token would be held: the answers rescan the text.
    #[allow(clippy::too_many_arguments)]
    fn plan_parsed(
        &self,
        spec: &ParserSpec,
        processor: &mut ChatStreamProcessor,
        ctx: &ChatContext,
        held: Vec<i64>,
        delta: &[i64],
        finish: Option<&str>,
        stop_reason: Option<&StopReason>,
        request: &OutputOptions,
        window: &Window,
        prompt: Option<&[i64]>,
    ) -> ChunkIds {
        if spec.takes_chunks_as_sent() {
            return self.plan_chunk_unheld(held, delta, finish, stop_reason, Some(request));
        }
        let plan = self.plan_chunk(held.clone(), delta, finish, stop_reason, Some(request));
        if plan.held.is_empty() {
            return plan;
        }
        let unheld = self.plan_chunk_unheld(held, delta, finish, stop_reason, Some(request));
        if processor.follows_vllm(ctx) || self.finish_alone_stays_vllm(spec, processor, ctx, &unheld, window, prompt) {
            return unheld;
        }
        plan
    }

    /// Would the stream still be vLLM's if it decoded the stop token now and
    /// the finish then came alone? Not once it has sent what vLLM's would
    /// not, nor where vLLM's stream fails on that finish. Otherwise it is
    /// tried on copies of the parser, the token decoded and held: it stays
    /// vLLM's when the finish sends nothing after the token (vLLM's
    /// token-less final chunk sends nothing, where derender's may complete
    /// batch's answer: a forced call, markup held back) and the token adds
    /// only its own text or none (text after a call's closing bracket can
    /// cut the call short); or when the chunk and the finish together send
    /// exactly what they send with the token held, which is batch's answer. Such a stream sends the token in the chunk vLLM's sends
    /// it, also when the output goes on past it.
    fn finish_alone_stays_vllm(
        &self,
        spec: &ParserSpec,
        processor: &mut ChatStreamProcessor,
        ctx: &ChatContext,
        plan: &ChunkIds,
        window: &Window,
        prompt: Option<&[i64]>,
    ) -> bool {
        if processor.left_vllm() || spec.stream_fails_on_finish_alone() {
            return false;
        }
        let Some(state) = processor.save_state() else { return false };
        // The chunk's text and delta, and the lone finish's delta.
        let run = |ids: &[i64]| {
            let mut trial = ChatStreamProcessor::new(spec.build(ctx, &self.model), ctx);
            trial.load_state(state.clone()).ok()?;
            let text = window.clone().decode(&self.model, ids, false);
            let (delta, _) = trial.step(&text, ids, None, prompt, ctx);
            let (finish, _) = trial.step("", &[], Some("stop"), prompt, ctx);
            Some((text, delta.unwrap_or_default(), finish.unwrap_or_default()))
        };
        let held = plan.ids.len().saturating_sub(1);
        let (Some((text, delta, finish)), Some((before, delta_held, finish_held))) =
            (run(&plan.ids), run(&plan.ids[..held]))
        else {
            return false;
        };
        let Some(token) = text.strip_prefix(before.as_str()) else { return false };
        let held_then_finish = delta_held.then(finish_held);
        // The token shows as its text, or as nothing (markup the parser drops,
        // such as PLaMo 3's `<|plamo:tag|>` releasing a held `<`).
        let stays_vllm = finish.sends_nothing() && [token, ""].iter().any(|t| delta.is_with_text(&held_then_finish, t));
        // Or the chunk and the finish together send what the held token's
        // stream sends (batch's answer), only split elsewhere: PLaMo 3's EOS
        // right after text defers that text to the finish, as vLLM's does.
        stays_vllm || delta.then(finish).is_with_text(&held_then_finish, "")
    }

    /// A stop token held back by a chunk whose text has just taken the
    /// stream away from batch's answer is parsed now, after that text, as
    /// in vLLM's stream, which the stream can only be from here on.
    fn release_held(
        &self,
        plan: &mut ChunkIds,
        window: &mut Window,
        processor: &mut ChatStreamProcessor,
        prompt: Option<&[i64]>,
        ctx: &ChatContext,
    ) -> Option<Delta> {
        if plan.held.is_empty() || !processor.follows_vllm(ctx) {
            return None;
        }
        let held = std::mem::take(&mut plan.held);
        let text = window.decode(&self.model, &held, false);
        processor.step(&text, &held, None, prompt, ctx).0
    }

    /// A stop token held back that the parser takes as markup showing no
    /// text (Beam's `<|call|>` closing a call) is decoded now, as vLLM's
    /// stream decodes it: batch's answer is the same whether it comes.
    fn release_markup(
        &self,
        plan: &mut ChunkIds,
        window: &Window,
        processor: &ChatStreamProcessor,
        prompt: Option<&[i64]>,
    ) {
        if plan.held.is_empty() {
            return;
        }
        let mut trial = window.clone();
        let before = trial.decode(&self.model, &plan.ids[..plan.decode], false);
        let token = trial.decode(&self.model, &plan.held, false);
        if processor.parser.takes_as_markup(&before, &token, prompt) {
            plan.ids.append(&mut plan.held);
            plan.decode = plan.ids.len();
        }
    }

    /// Compact when the mode asks for it and the parsers can be saved;
    /// otherwise the history (which every non-compact stream carries).
    pub(super) fn next_state(&self, processor: &mut ChatStreamProcessor, p: Progress) -> Payload {
        let compact = self.settings.stream_state.mode == StateMode::Compact;
        if let Some(snapshot) = processor.save_state().filter(|_| compact || !p.history) {
            return Payload::Parser(ParserState {
                window: p.window,
                role_sent: p.vllm.role_sent,
                logprob_context_token_ids: p.vllm.logprob_context_token_ids,
                held_token_ids: p.held,
                prompt_len: p.prompt_len,
                output_len: p.output_len,
                last_tool_call_ids: p.vllm.last_tool_call_ids,
                processor: snapshot,
            });
        }
        Payload::History { state: p.vllm, seed: p.seed, prompt_len: p.prompt_len }
    }
}

/// With a reasoning parser, streams ignore the prompt unless the family
/// says its stream reads it: the answer then matches the batch answer for
/// the same output (vLLM's stream uses the request's `prompt_token_ids`
/// and can disagree with its batch). Every call carries the same prompt,
/// so a history replay answers as the first call did.
fn parser_prompt<'a>(spec: &ParserSpec, prompt: Option<&'a [i64]>) -> Option<&'a [i64]> {
    if spec.has_reasoning() && !spec.stream_follows_vllm() {
        None
    } else {
        prompt
    }
}
