//! Chat prompts of vLLM's `deepseek_v32` tokenizer mode: the conversation
//! parsed as for any template (content format "string"), then written by
//! DeepSeek-V3.2's encoder (`template::deepseek_v32`) with the keywords
//! vLLM's renderer passes it.

use serde_json::Value;

use super::messages;
use crate::error::ApiError;
use crate::model::TokenizerMode;
use crate::parse::context::ChatContext;
use crate::pycompat::truthy;
use crate::served::Core;
use crate::template::deepseek_v32::{self, EncodeError};
use crate::template::ContentFormat;

impl Core {
    /// Whether chat prompts come from the V3.2 encoder.
    pub(crate) fn writes_deepseek_v32(&self) -> bool {
        self.model.mode == TokenizerMode::DeepseekV32
    }

    /// The request asks the encoder for ids (`chat_template_kwargs.tokenize`):
    /// the text is then tokenized without special tokens, whatever
    /// `add_special_tokens` says.
    pub(crate) fn deepseek_v32_tokenized(&self, ctx: &ChatContext) -> bool {
        self.writes_deepseek_v32() && ctx.request_kwargs.get("tokenize").is_some_and(truthy)
    }

    /// `DeepseekV32Tokenizer.apply_chat_template` up to the prompt text.
    pub(crate) fn deepseek_v32_prompt(
        &self,
        messages: &[Value],
        ctx: &ChatContext,
        tools: Option<&[Value]>,
    ) -> Result<String, ApiError> {
        let conversation = messages::conversation(messages, ContentFormat::String)?;
        // The renderer passes `conversation=` and `messages=` itself.
        for key in ["conversation", "messages"] {
            if ctx.request_kwargs.get(key).is_some_and(|v| !v.is_null()) {
                return Err(ApiError::bad_request(format!(
                    "vllm.utils.async_utils.make_async.<locals>._async_wrapper() got multiple values for keyword argument '{key}'"
                )));
            }
        }
        let kwargs = &ctx.template_kwargs;
        let thinking = ["thinking", "enable_thinking"].iter().any(|k| kwargs.get(*k).is_some_and(truthy));
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
        deepseek_v32::apply(&conversation, tools.as_ref(), thinking).map_err(|e| match e {
            // vLLM answers an uncaught IndexError/KeyError 500; a bad
            // request is what it is (docs/divergences.md).
            EncodeError::Invalid(m) | EncodeError::Internal(m) => ApiError::bad_request(m),
        })
    }
}
