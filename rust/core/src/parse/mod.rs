//! The parser layer: reasoning and tool-call families turning one choice's
//! text into reasoning / content / tool calls, batch and streaming, with
//! vLLM 0.33's composition rules (`DelegatingParser`).

mod batch_completion;
mod call_stream;
mod coerce;
pub mod context;
mod delegating;
pub mod engine;
mod families;
pub mod family;
mod json_events;
mod partial_json;
pub mod plugin;
mod pyast;
mod registry;
mod required;
pub mod snapshot;
mod spec;
mod think;
pub mod unified;

pub use context::{ChatContext, TemplateDefaults, ToolChoice};
pub use delegating::{resolve_finish_reason, ChatStreamProcessor, DelegatingParser};
pub use families::response_template::is_strict as is_strict_tool;
pub use registry::{Kind, Listing, Registry};
pub use snapshot::{Snapshot, SnapshotError};
pub use spec::{ParserSpec, ParserSpecError};

use crate::error::ApiError;
use crate::wire::response::Delta;

/// A parsed function call (batch).
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall {
    /// The parser's own id, when its format carries one.
    pub id: Option<String>,
    pub name: String,
    pub arguments: String,
}

/// `ExtractedToolCallInformation`.
#[derive(Debug, Clone, Default)]
pub struct Extracted {
    pub tools_called: bool,
    pub calls: Vec<FunctionCall>,
    pub content: Option<String>,
}

/// The token-id view of a stream so far (`previous` / `current` / `delta`).
pub struct Ids<'a> {
    pub previous: &'a [i64],
    pub current: &'a [i64],
    pub delta: &'a [i64],
}

/// The text view of a stream so far.
pub struct Texts<'a> {
    pub previous: &'a str,
    pub current: &'a str,
    pub delta: &'a str,
}

/// vLLM's `ReasoningParser` (legacy interface).
pub trait ReasoningParser: Send {
    /// A held stop token (its text) that this parser drops from the text
    /// wherever it comes (an engine's unconfigured special token): it shows
    /// nothing, so the stream decodes it at once, as vLLM's does.
    fn drops_token(&self, token: &str) -> bool {
        let _ = token;
        false
    }
    /// Batch: `(reasoning, content)`.
    fn extract_reasoning(&self, text: &str, ctx: &ChatContext) -> (Option<String>, Option<String>);
    /// Does the reasoning section end within `ids` (e.g. the prompt)?
    fn is_reasoning_end(&self, ids: &[i64]) -> bool;
    fn is_reasoning_end_streaming(&self, current: &[i64], delta: &[i64]) -> bool {
        let _ = delta;
        self.is_reasoning_end(current)
    }
    /// `false` where vLLM's parser leaves `is_reasoning_end` unimplemented
    /// (Python's `None`): render reports `reasoning_ended` as null.
    fn reports_reasoning_end(&self) -> bool {
        true
    }
    /// The ids after the end marker.
    fn extract_content_ids(&self, ids: &[i64]) -> Vec<i64>;
    fn extract_reasoning_streaming(&mut self, texts: &Texts, ids: &Ids) -> Option<Delta>;
    fn adjust_initial_state_from_prompt(&mut self, prompt: &[i64]) {
        let _ = prompt;
    }
    /// `set_prompt_token_ids`: engine parsers learn whether the prompt
    /// already closed reasoning.
    fn set_prompt_token_ids(&mut self, prompt: &[i64]) {
        let _ = prompt;
    }
    /// Engine-based parsers stream from the delta alone and report the end
    /// of reasoning themselves.
    fn engine_based(&self) -> bool {
        false
    }
    fn engine_confirmed_end(&self) -> bool {
        false
    }
    /// The end marker (token id, text) the engine drops when it arrives
    /// after the reasoning ended (batch drops a repeated `</think>`).
    fn end_marker_dropped_after_end(&self) -> Option<(i64, &str)> {
        None
    }
    /// Batch returns the whole text as content (thinking switched off):
    /// streams then skip the reasoning phase, as batch does.
    fn passthrough(&self) -> bool {
        false
    }
    /// The output starts outside reasoning and the tool parser reads it all,
    /// reasoning markup included (an engine not waiting for reasoning, read
    /// without the prompt: vLLM's `is_reasoning_end` of a prompt with no
    /// marker).
    fn ended_before_output(&self) -> bool {
        false
    }
    /// Flush text an engine still holds (`finish_streaming`).
    fn finish_streaming(&mut self) -> Option<Delta> {
        None
    }
    /// `get_streaming_fallback_content`: content a stream that ends with its
    /// reasoning still open gets at the end, from the text so far (Nemotron
    /// V3 promotes the streamed reasoning when the request forces content).
    fn streaming_fallback_content(&self, previous_text: &str, ctx: &ChatContext) -> Option<String> {
        let _ = (previous_text, ctx);
        None
    }
    /// Batch reads tool calls from the content this parser leaves of the
    /// whole text, where vLLM's stream hands the raw text to the tool
    /// parser once the prompt closed reasoning (MiniCPM-V without
    /// thinking): the stream then filters every delta through it, as
    /// batch does, and has no reasoning phase.
    fn filters_content(&self) -> bool {
        false
    }
    /// Could `tail`, text a filtering parser took without showing it, still
    /// become one of its markers (held back, not dropped)?
    fn may_hold(&self, tail: &str) -> bool {
        let _ = tail;
        false
    }
    /// Rewrites a batch message's reasoning or content once parsed
    /// (MiniCPM-V's unified parser recovers escaped newlines).
    fn rewrite_text(&self, text: Option<String>) -> Option<String> {
        text
    }
    /// With no tool parser, the content a stream sends once reasoning has
    /// ended is recomputed from the whole text so far, wrapper markers
    /// stripped (Kimi K3's `strip_content_streaming`): what follows
    /// `previous` (the text before the delta, empty on the chunk that ends
    /// reasoning) in `current`.
    fn restreams_content(&self) -> bool {
        false
    }
    fn streamed_content(&self, previous: &str, current: &str) -> Option<String> {
        let _ = previous;
        let _ = current;
        None
    }
    /// ...and every streamed delta, tool phase included (`finished`: the
    /// stream's last).
    fn rewrite_delta(&mut self, delta: Option<Delta>, finished: bool) -> Option<Delta> {
        let _ = finished;
        delta
    }
    /// The streaming state as a value (the compact stream state); `None`
    /// when it cannot be serialized (plugins), and the stream carries history.
    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        None
    }
    /// Does it read the text and ids before the delta (`Texts::previous`,
    /// `current`)? A compact stream then carries them.
    fn reads_history(&self) -> bool {
        !self.engine_based()
    }
    /// A plugin parser's first error (built-in parsers cannot fail).
    fn failure(&self) -> Option<ApiError> {
        None
    }
    /// As `ToolParser::left_batch`, for the reasoning side; `text`: the
    /// text so far, where the parser reads history (else empty).
    fn left_batch(&self, text: &str) -> bool {
        let _ = text;
        false
    }
}

/// vLLM's `ToolParser` (legacy interface).
pub trait ToolParser: Send {
    fn extract_tool_calls(&self, text: &str, ctx: &ChatContext) -> Extracted;
    fn extract_tool_calls_streaming(&mut self, texts: &Texts, ids: &Ids, ctx: &ChatContext) -> Option<Delta>;
    /// Arguments parsed but not yet streamed (flushed when the stream ends,
    /// onto the last call of the final chunk).
    fn remaining_unstreamed_args(&mut self) -> String {
        String::new()
    }
    /// The call those remaining arguments belong to, when it can differ
    /// from the last call of the final delta (vLLM appends them there).
    fn remaining_args_index(&self) -> Option<i64> {
        None
    }
    /// A held stop token (its text) that this parser drops from the text
    /// wherever it comes (an engine's unconfigured special token): it shows
    /// nothing, so the stream decodes it at once, as vLLM's does.
    fn drops_token(&self, token: &str) -> bool {
        let _ = token;
        false
    }
    fn supports_required_and_named(&self) -> bool {
        true
    }
    /// Its output is read whatever the tool choice, and its content stands
    /// (Kimi K3's `KimiK3Parser`): under `none` the calls it finds are
    /// dropped; under the forced choices it reads the model's own markup.
    fn parses_every_choice(&self) -> bool {
        false
    }
    /// Engine-based parsers see only deltas and flush at the end.
    fn engine_based(&self) -> bool {
        false
    }
    /// Its stream is completed to its batch answer at the end where vLLM's
    /// falls short of it (`batch_completion`); it must read history.
    fn completes_to_batch(&self) -> bool {
        false
    }
    /// The reasoning family decides whether text after a streamed call is
    /// sent, as vLLM's stream sends it, or dropped, as batch drops it
    /// (`ReasoningParserFactory::tool_text_after_calls`; engines only).
    fn stream_text_after_calls(&mut self, on: bool) {
        let _ = on;
    }
    /// When the stream ends: what an engine still holds, or what a vLLM
    /// chunking bug kept a legacy parser from streaming (a parser that
    /// reproduces vLLM's chunks also reproduces its losses), so the stream
    /// still adds up to the batch answer.
    fn finish_streaming(&mut self) -> Option<Delta> {
        None
    }
    /// The streaming state as a value (the compact stream state); `None`
    /// when it cannot be serialized (plugins), and the stream carries history.
    fn snapshot(&mut self) -> Option<&mut dyn Snapshot> {
        None
    }
    /// Does it read the text and ids before the delta (`Texts::previous`,
    /// `current`)? A compact stream then carries them.
    fn reads_history(&self) -> bool {
        !self.engine_based()
    }
    /// A plugin parser's first error (built-in parsers cannot fail).
    fn failure(&self) -> Option<ApiError> {
        None
    }
    /// Has its stream sent what batch's answer will not have (or passed
    /// over what it will), as vLLM's stream does? From then on the stream
    /// can only be vLLM's, so it follows vLLM's on the points where derender
    /// otherwise answers as batch (`ChatStreamProcessor::follows_vllm`).
    fn left_batch(&self) -> bool {
        false
    }
}

/// `make_tool_call_id()`: `chatcmpl-tool-` + 16 hex digits.
pub fn random_tool_call_id() -> String {
    format!("chatcmpl-tool-{}", crate::ids::random_hex_id())
}
