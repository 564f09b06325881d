//! What one streamed chunk contributes: which ids are decoded now, which
//! stop token is held for the next chunk, and where a stop string is cut.
//!
//! This is where derender's streams follow the batch answer where vLLM's
//! stream does not (docs/divergences.md): on a parser stream, a stop token
//! that ends a chunk without a finish reason is held until the next chunk
//! says whether it stopped the output (then it is dropped, as batch drops
//! it), and a stop string the engine reports on the final chunk is cut from
//! that chunk. Streams without parsers hold nothing, as vLLM's do, and a
//! parser stream that can only be vLLM's (its family's, or one whose text
//! has left batch's answer) holds and cuts nothing either.

use super::{cut_final_stop_string, drop_stop_token};
use crate::detok::Window;
use crate::served::Core;
use crate::wire::request::{GenChoice, OutputOptions, StopReason};

/// The plan for one chunk.
pub(crate) struct ChunkIds {
    /// Held ids from before plus this chunk's ids, minus a newly held one.
    pub ids: Vec<i64>,
    /// How many of `ids` are decoded (a dropped stop token is not).
    pub decode: usize,
    pub stop_reason: Option<StopReason>,
    /// A stop token held back for the next chunk.
    pub held: Vec<i64>,
}

impl Core {
    /// The plan on a parser stream: a stop token ending a chunk without a
    /// finish is held for the next chunk.
    pub(crate) fn plan_chunk(
        &self,
        held: Vec<i64>,
        delta: &[i64],
        finish: Option<&str>,
        stop_reason: Option<&StopReason>,
        request: Option<&OutputOptions>,
    ) -> ChunkIds {
        let mut ids = held;
        ids.extend_from_slice(delta);
        let (eos, model_eos) = (self.model.eos_token_id, &self.model.model_eos_ids);
        if finish.is_none() {
            let mut held = Vec::new();
            if let Some(&last) = ids.last() {
                let (keep, _) = drop_stop_token(&ids, Some("stop"), None, request, eos, model_eos);
                if keep < ids.len() {
                    held.push(last);
                    ids.pop();
                }
            }
            let decode = ids.len();
            return ChunkIds { ids, decode, stop_reason: stop_reason.cloned(), held };
        }
        let (decode, stop_reason) = drop_stop_token(&ids, finish, stop_reason, request, eos, model_eos);
        ChunkIds { ids, decode, stop_reason, held: Vec::new() }
    }

    /// The plan for a stream without parsers, a parser that reads ids, not
    /// text (Harmony), or a stream that follows vLLM's: nothing new is held
    /// back, so the chunks are the engine's as they came. A token `held` by a state an
    /// earlier build wrote for the same stream still goes first.
    pub(crate) fn plan_chunk_unheld(
        &self,
        held: Vec<i64>,
        delta: &[i64],
        finish: Option<&str>,
        stop_reason: Option<&StopReason>,
        request: Option<&OutputOptions>,
    ) -> ChunkIds {
        match finish {
            None => {
                let mut ids = held;
                ids.extend_from_slice(delta);
                ChunkIds { decode: ids.len(), ids, stop_reason: stop_reason.cloned(), held: Vec::new() }
            }
            Some(_) => self.plan_chunk(held, delta, finish, stop_reason, request),
        }
    }

    /// Decode a planned chunk, cutting the engine's stop string from the
    /// final chunk unless the stream follows vLLM's, which keeps it.
    pub(crate) fn decode_chunk(
        &self,
        plan: &ChunkIds,
        window: &mut Window,
        choice: &GenChoice,
        request: Option<&OutputOptions>,
        skip: bool,
        follows_vllm: bool,
    ) -> String {
        let text = window.decode(&self.model, &plan.ids[..plan.decode], skip);
        match (choice.finish_reason.as_deref(), choice.stop_reason.as_ref()) {
            (Some("stop"), Some(StopReason::Str(stop))) if !follows_vllm => {
                cut_final_stop_string(&text, stop, request.is_some_and(|r| r.include_stop_str_in_output))
            }
            _ => text,
        }
    }
}
