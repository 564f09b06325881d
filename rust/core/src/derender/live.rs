//! A parsed chat stream held in memory between chunks (the Python
//! `derender.StreamParser`): its parsers stay live instead of travelling in
//! `stream_state`, and [`LiveChatStream::state`] gives the `stream_state`
//! the server would have answered, so a stream can move between a process
//! that imports derender and a server, either way.
//!
//! Every chunk goes through the server's own code (`chat_stream_prechecks`,
//! `resume`, `parse_chunk`, `next_state`): the answers are the server's.

use serde_json::Value;

use super::parsed::Progress;
use crate::error::ApiError;
use crate::parse::{ChatContext, ChatStreamProcessor, ParserSpec};
use crate::served::Core;
use crate::stats::Stats;
use crate::stream::Outgoing;
use crate::wire::request::{parse_chat, ChatBody, GenChoice, OutputOptions, StreamRequest};
use crate::wire::response::ChatChunk;

pub struct LiveChatStream {
    /// The opening request (chat request, prompt ids); each chunk replaces
    /// its `generate_chunk` choices, as the next call's body would.
    req: StreamRequest,
    request: OutputOptions,
    spec: ParserSpec,
    ctx: ChatContext,
    processor: ChatStreamProcessor,
    progress: Progress,
}

impl Core {
    /// Open a stream from a `/v1/chat/completions/derender` stream body
    /// (its `chat_request`, `prompt_token_ids` and any `stream_state`; the
    /// chunk's choices are ignored): the server's 400s for a bad body.
    pub fn open_live_chat(&self, body: &Value) -> Result<LiveChatStream, ApiError> {
        let mut req = match parse_chat(Some(body))? {
            ChatBody::Stream(req) => *req,
            ChatBody::Batch(_) => return Err(ApiError::bad_request("a live stream opens on a stream body")),
        };
        req.generate_chunk.choices.clear();
        let opened = self.chat_stream_prechecks(&req)?;
        let (Some(spec), Some(request)) = (self.settings.parser.clone(), req.request.clone()) else {
            return Err(ApiError::bad_request(
                "a live chat stream parses reasoning and tool calls: the server has no parser configured",
            ));
        };
        let ctx = ChatContext::from_request(&request.raw, &self.settings.template_defaults);
        let mut processor = ChatStreamProcessor::new(spec.build(&ctx, &self.model), &ctx);
        let mut stats = Stats::default();
        let progress = self.resume(&spec, &req, opened, &ctx, &request, &mut processor, &mut stats)?;
        Ok(LiveChatStream { req, request, spec, ctx, processor, progress })
    }

    /// The server's answer to the stream's next chunk.
    pub fn push_live_chat(&self, live: &mut LiveChatStream, choice: GenChoice) -> Result<ChatChunk, ApiError> {
        let delta_len = choice.token_ids.as_ref().map_or(0, Vec::len);
        self.check_stream_len(live.progress.prompt_len, live.progress.output_len, delta_len)?;
        live.req.generate_chunk.choices = vec![choice];
        let LiveChatStream { req, request, spec, ctx, processor, progress } = live;
        self.parse_chunk(spec, req, ctx, request, processor, progress, &mut Stats::default())
    }

    /// The `stream_state` the server would have answered after the last chunk.
    pub fn live_chat_state(&self, live: &mut LiveChatStream) -> Outgoing {
        let progress = live.progress.clone();
        self.settings.stream_state.seal(self.next_state(&mut live.processor, progress))
    }
}
