//! What a parser family registers. A family module (`parse::families`) or a
//! plugin (`--tool-parser-plugin`) gives its names, what it needs from the
//! vocabulary, and a loader that checks the model's vocabulary once at
//! startup and returns a factory. The factory answers what render needs to
//! know (vLLM's `adjust_request`, the structural-tag model) and builds a
//! fresh parser per request or streamed choice.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::unified::UnifiedFactory;
use super::{ChatContext, ReasoningParser, ToolParser};
use crate::model::Model;
use crate::structured::{json_schema, structural_tag, StrictLevel, TagModel, TagRequest};

/// When a tool parser's `adjust_request` sets `skip_special_tokens=False`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepSpecial {
    /// Never (the base `adjust_request` leaves it alone).
    Never,
    /// When tools are offered and `tool_choice` is not `"none"`.
    WithTools,
    /// Whenever `tool_choice` is not `"none"`, tools or not (parsers on the
    /// declarative engine: `ParserEngineToolAdapter`).
    Always,
}

/// Makes a fresh tool parser for one request (batch) or one streamed choice.
pub trait ToolParserFactory: Send + Sync {
    /// `with_reasoning`: a reasoning parser runs before this one.
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>, with_reasoning: bool) -> Box<dyn ToolParser>;
    /// Render: when `adjust_request` keeps special tokens.
    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::Never
    }
    /// Render leaves `spaces_between_special_tokens` on (when its
    /// `adjust_request` runs).
    fn keeps_special_token_spacing(&self) -> bool {
        true
    }
    /// `structural_tag_model`: the tag forced and strict tool choices get.
    fn tag_model(&self) -> Option<&'static TagModel> {
        None
    }
    /// The structural tag render puts in `structured_outputs`
    /// (`_apply_structural_tag` with the parser's `get_structural_tag`);
    /// `level`: `--tool-strict-level`.
    fn structural_tag(&self, level: Option<StrictLevel>, request: TagRequest) -> Option<String> {
        structural_tag(self.tag_model(), level, request)
    }
    /// Forced tool choices are answered as a JSON array and get a JSON
    /// schema; parsers with a tag model read them in their own format.
    fn supports_required_and_named(&self) -> bool {
        self.tag_model().is_none() && !self.native_forced_choices()
    }
    /// vLLM's parser skips the base `adjust_request` for forced choices and
    /// reads them in the model's own markup: no JSON schema, no
    /// function-tool check, parsed like `"auto"`.
    fn native_forced_choices(&self) -> bool {
        false
    }
    /// The JSON schema a forced choice gets (`get_json_schema_from_tools`);
    /// `only` names the forced tool. `None`: the request is left alone.
    fn forced_schema(&self, tools: &[Value], only: Option<&str>, parallel: bool) -> Option<Value> {
        (!self.native_forced_choices()).then(|| json_schema(tools, only, parallel))
    }
    /// The forced schema comes from the chat request, not the parser (a
    /// parser that opts out of the base `adjust_request`), so Responses
    /// requests get none.
    fn forced_schema_from_chat_request(&self) -> bool {
        false
    }
    /// Its `adjust_request` runs the base one, which refuses a forced call
    /// when no function tool is offered (`require_function_tools`).
    fn requires_function_tools(&self) -> bool {
        !self.native_forced_choices()
    }
    /// The parser this name stands for when it parses reasoning and tool
    /// calls as one (`parse::unified`).
    fn unified(&self) -> Option<&dyn UnifiedFactory> {
        None
    }
    /// Render constrains the output with the tokenizer's own grammar when
    /// it has one (Mistral's, on a tekken tokenizer).
    fn tokenizer_grammar(&self) -> bool {
        false
    }
}

/// Makes a fresh reasoning parser.
pub trait ReasoningParserFactory: Send + Sync {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser>;
    /// Render: does `adjust_request` keep special tokens?
    fn keep_special_tokens(&self) -> bool {
        false
    }
    /// As for tool parsers: its `adjust_request` turns the spacing off.
    fn keeps_special_token_spacing(&self) -> bool {
        true
    }
    /// What the parser's constructor writes into the `chat_template_kwargs`
    /// it is given (render echoes them as `reasoning_parser_kwargs`).
    fn adjust_template_kwargs(&self, kwargs: &mut Map<String, Value>) {
        let _ = kwargs;
    }
    /// As for tool parsers.
    fn unified(&self) -> Option<&dyn UnifiedFactory> {
        None
    }
    /// Streams follow vLLM's stream where it disagrees with batch: they
    /// settle the parser's start from the request's prompt ids
    /// (`is_reasoning_end(prompt)`), and `<think>` families keep a start
    /// marker that arrives inside a longer delta. Off by default: batch
    /// never reads the prompt, and those streams assemble to batch.
    fn stream_follows_vllm(&self) -> bool {
        false
    }
    /// vLLM's stream fails on a chunk without tokens (hunyuan_a13b's
    /// asserts one token per chunk), so a stream whose finish comes alone
    /// can only end as batch's answer.
    fn stream_fails_on_finish_alone(&self) -> bool {
        false
    }
    /// Whether the tool parser streams text after a call as vLLM's stream
    /// does (`Some(true)`) or drops it as batch does (`Some(false)`); `None`
    /// leaves it to the tool family. A stream that follows vLLM's sends it;
    /// one whose reasoning follows batch where vLLM's reads the prompt drops
    /// it, or the stream would be neither answer.
    fn tool_text_after_calls(&self) -> Option<bool> {
        self.stream_follows_vllm().then_some(true)
    }
}

/// Checks a model's vocabulary and makes the factory; the error is the
/// reason vLLM's parser constructor gives.
pub type Loader<F> = fn(&Model) -> Result<Arc<F>, String>;

/// One registration: a family under its vLLM names.
pub struct Family<F: ?Sized + 'static> {
    /// vLLM's registered names: the first is the family's, the rest aliases.
    pub names: &'static [&'static str],
    /// What the family needs from the vocabulary, for `derender parsers`.
    pub needs: &'static str,
    pub load: Loader<F>,
}

pub type ToolFamily = Family<dyn ToolParserFactory>;

/// The reason a model-claiming family refuses another parser, given the
/// slot's flag and the parser's name.
pub type Refusal = fn(&str, &str) -> String;

/// Checks the selected names (`reasoning`, `tool`) against a model.
pub type NameCheck = fn(&Model, Option<&str>, Option<&str>) -> Result<(), String>;

/// How a unified parser family composes with the other slot
/// (`ParserManager._compose_parser`), checked before any constructor runs.
pub struct Composition {
    /// Its names (either slot): a name here takes the other slot along,
    /// and cannot be combined with another family's parser.
    pub names: &'static [&'static str],
    /// The model type whose outputs always go through this family, whatever
    /// the flags name (vLLM's `is_harmony`); the reason any other parser
    /// is refused for it, given the slot's flag and name.
    pub model_type: Option<(&'static str, Refusal)>,
    /// The checks of the selected names (`reasoning`, `tool`) on the model
    /// before any constructor (the response template's metadata).
    pub validate: NameCheck,
}
pub type ReasoningFamily = Family<dyn ReasoningParserFactory>;

/// A family's single-token markers, looked up in `model`'s vocabulary:
/// `Err(reason)` unless all are there.
pub fn token_ids<const N: usize>(model: &Model, tokens: [&str; N], reason: &str) -> Result<[i64; N], String> {
    let mut ids = [0; N];
    for (slot, token) in ids.iter_mut().zip(tokens) {
        *slot = model.tokenizer.token_to_id(token).map(i64::from).ok_or_else(|| reason.to_string())?;
    }
    Ok(ids)
}
