//! Chat prompts of vLLM's DeepSeek tokenizer modes (`deepseek_v32`,
//! `deepseek_v4`, `deepseek_v41`): the conversation parsed as for a template
//! (content format "string" for V3.2, "openai" for V4 and V4.1), then
//! written by DeepSeek's encoder (`template::deepseek`) with the keywords
//! vLLM's renderer passes it. V4.1's encoder reads the request's messages
//! themselves, once the parsing has accepted them.

use serde_json::Value;

use super::messages;
use crate::error::ApiError;
use crate::model::TokenizerMode;
use crate::parse::context::ChatContext;
use crate::pycompat::truthy;
use crate::served::Core;
use crate::template::deepseek::{v32, v4, v41, EncodeError};
use crate::template::ContentFormat;

const FIM_BEGIN: &str = "<｜fim▁begin｜>";
const FIM_HOLE: &str = "<｜fim▁hole｜>";
const FIM_END: &str = "<｜fim▁end｜>";
/// The part types vLLM's chat parser names when it refuses one.
const SUPPORTED_PARTS: &str = "audio_embeds, audio_url, image_embeds, image_pil, image_url, input_audio, input_image, input_text, output_text, prompt_embeds, refusal, text, thinking, tool_reference, video_embeds, video_url";

impl Core {
    /// Whether chat prompts come from a DeepSeek encoder.
    pub(crate) fn writes_deepseek(&self) -> bool {
        matches!(self.model.mode, TokenizerMode::DeepseekV32 | TokenizerMode::DeepseekV4 | TokenizerMode::DeepseekV41)
    }

    /// The request asks the encoder for ids (`chat_template_kwargs.tokenize`):
    /// the text is then tokenized without special tokens, whatever
    /// `add_special_tokens` says.
    pub(crate) fn deepseek_tokenized(&self, ctx: &ChatContext) -> bool {
        self.writes_deepseek() && ctx.request_kwargs.get("tokenize").is_some_and(truthy)
    }

    /// `render_completion_suffix`: V4's (and V4.1's) fill-in-the-middle
    /// prompt, `None` where the mode has none.
    pub(crate) fn fim_prompt(&self, prompt: &str, suffix: &str) -> Option<String> {
        matches!(self.model.mode, TokenizerMode::DeepseekV4 | TokenizerMode::DeepseekV41)
            .then(|| format!("{FIM_BEGIN}{prompt}{FIM_HOLE}{suffix}{FIM_END}"))
    }

    /// Why a request's media parts are refused. V4.1 is multimodal in vLLM:
    /// its images are tiled by a multimodal processor derender does not
    /// build (docs/divergences.md), audio and video are limited to none, and
    /// a file is no chat content part.
    pub(crate) fn deepseek_media_refusal(&self, messages: &[Value]) -> ApiError {
        if self.model.mode != TokenizerMode::DeepseekV41 {
            return self.not_multimodal();
        }
        let parts = messages.iter().filter_map(|m| m.get("content")?.as_array()).flatten();
        let kinds: Vec<&str> = parts.filter_map(|p| p.get("type")?.as_str()).collect();
        let limited = |media: &str| {
            ApiError::validator(&format!("At most 0 {media}(s) may be provided in one prompt."), Some(media))
        };
        if kinds.contains(&"file") {
            return ApiError::invalid_param(format!("Unsupported chat content part type: 'file'. Supported types: {SUPPORTED_PARTS}. (parameter=type, value=file)"), "type");
        }
        if kinds.iter().any(|k| matches!(*k, "input_audio" | "audio_url" | "audio_embeds")) {
            return limited("audio");
        }
        if kinds.iter().any(|k| matches!(*k, "video_url" | "video_embeds")) {
            return limited("video");
        }
        ApiError::bad_request(
            "derender does not render images: DeepSeek V4.1 expands each image through its multimodal processor, which derender does not build; send text only (messages[].content image parts)",
        )
    }

    /// The tokenizer's `apply_chat_template` up to the prompt text.
    pub(crate) fn deepseek_prompt(
        &self,
        messages: &[Value],
        ctx: &ChatContext,
        tools: Option<&[Value]>,
    ) -> Result<String, ApiError> {
        let mode = self.model.mode;
        let format = if mode == TokenizerMode::DeepseekV32 { ContentFormat::String } else { ContentFormat::OpenAi };
        let conversation = messages::conversation(messages, format)?;
        // The renderer passes `conversation=` and `messages=` itself.
        for key in ["conversation", "messages"] {
            if ctx.request_kwargs.get(key).is_some_and(|v| !v.is_null()) {
                return Err(ApiError::bad_request(format!(
                    "vllm.utils.async_utils.make_async.<locals>._async_wrapper() got multiple values for keyword argument '{key}'"
                )));
            }
        }
        let kwargs = &ctx.template_kwargs;
        let tools = super::tools_keyword(ctx, tools);
        let written = match mode {
            TokenizerMode::DeepseekV4 => v4::apply(&conversation, tools.as_ref(), v4::Options::from_kwargs(kwargs)),
            TokenizerMode::DeepseekV41 => {
                // The encoder reads the calls vLLM's parsing rewrote in place.
                let messages = messages::with_parsed_arguments(messages)?;
                v41::Options::from_kwargs(kwargs).and_then(|options| v41::apply(&messages, tools.as_ref(), options))
            }
            _ => {
                let thinking = ["thinking", "enable_thinking"].iter().any(|k| kwargs.get(*k).is_some_and(truthy));
                v32::apply(&conversation, tools.as_ref(), thinking)
            }
        };
        written.map_err(|e| match e {
            // vLLM answers an uncaught IndexError/KeyError 500; a bad
            // request is what it is (docs/divergences.md).
            EncodeError::Invalid(m) | EncodeError::Internal(m) => ApiError::bad_request(m),
        })
    }
}
