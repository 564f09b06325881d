//! Chat prompts of vLLM's DeepSeek tokenizer modes (`deepseek_v32`,
//! `deepseek_v4`): the conversation parsed as for a template (content format
//! "string" for V3.2, "openai" for V4), then written by DeepSeek's encoder
//! (`template::deepseek`) with the keywords vLLM's renderer passes it.

use serde_json::Value;

use super::messages;
use crate::error::ApiError;
use crate::model::TokenizerMode;
use crate::parse::context::ChatContext;
use crate::pycompat::truthy;
use crate::served::Core;
use crate::template::deepseek::{v32, v4, EncodeError};
use crate::template::ContentFormat;

const FIM_BEGIN: &str = "<｜fim▁begin｜>";
const FIM_HOLE: &str = "<｜fim▁hole｜>";
const FIM_END: &str = "<｜fim▁end｜>";

impl Core {
    /// Whether chat prompts come from a DeepSeek encoder.
    pub(crate) fn writes_deepseek(&self) -> bool {
        matches!(self.model.mode, TokenizerMode::DeepseekV32 | TokenizerMode::DeepseekV4)
    }

    /// The request asks the encoder for ids (`chat_template_kwargs.tokenize`):
    /// the text is then tokenized without special tokens, whatever
    /// `add_special_tokens` says.
    pub(crate) fn deepseek_tokenized(&self, ctx: &ChatContext) -> bool {
        self.writes_deepseek() && ctx.request_kwargs.get("tokenize").is_some_and(truthy)
    }

    /// `render_completion_suffix`: V4's fill-in-the-middle prompt, `None`
    /// where the mode has none.
    pub(crate) fn fim_prompt(&self, prompt: &str, suffix: &str) -> Option<String> {
        (self.model.mode == TokenizerMode::DeepseekV4)
            .then(|| format!("{FIM_BEGIN}{prompt}{FIM_HOLE}{suffix}{FIM_END}"))
    }

    /// The tokenizer's `apply_chat_template` up to the prompt text.
    pub(crate) fn deepseek_prompt(
        &self,
        messages: &[Value],
        ctx: &ChatContext,
        tools: Option<&[Value]>,
    ) -> Result<String, ApiError> {
        let v4 = self.model.mode == TokenizerMode::DeepseekV4;
        let format = if v4 { ContentFormat::OpenAi } else { ContentFormat::String };
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
        // `tools=`: the request's kwargs, else its tools, else the server's
        // default kwargs.
        let given = |v: &&Value| !v.is_null();
        let tools = ctx
            .request_kwargs
            .get("tools")
            .filter(given)
            .cloned()
            .or_else(|| tools.map(|t| Value::Array(t.to_vec())))
            .or_else(|| kwargs.get("tools").filter(given).cloned());
        let written = if v4 {
            v4::apply(&conversation, tools.as_ref(), v4::Options::from_kwargs(kwargs))
        } else {
            let thinking = ["thinking", "enable_thinking"].iter().any(|k| kwargs.get(*k).is_some_and(truthy));
            v32::apply(&conversation, tools.as_ref(), thinking)
        };
        written.map_err(|e| match e {
            // vLLM answers an uncaught IndexError/KeyError 500; a bad
            // request is what it is (docs/divergences.md).
            EncodeError::Invalid(m) | EncodeError::Internal(m) => ApiError::bad_request(m),
        })
    }
}
