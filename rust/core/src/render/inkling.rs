//! Chat prompts of vLLM's `inkling` tokenizer mode: the messages parsed as
//! vLLM parses them (content format "string", for its checks), then
//! written to ids by Inkling's encoding (`template::inkling`) with the
//! keywords `InklingRenderer` reads.

use serde_json::Value;

use super::messages;
use crate::error::ApiError;
use crate::model::TokenizerMode;
use crate::parse::context::ChatContext;
use crate::served::Core;
use crate::template::inkling;
use crate::template::ContentFormat;
use crate::wire::request::Obj;

impl Core {
    /// Whether chat prompts come from Inkling's encoding (ids, no text).
    pub(crate) fn writes_inkling(&self) -> bool {
        self.model.mode == TokenizerMode::Inkling && self.inkling.is_some()
    }

    /// `InklingRenderer._render` over the request's messages.
    pub(crate) fn inkling_ids(
        &self,
        o: &Obj,
        ctx: &ChatContext,
        tools: Option<&[Value]>,
    ) -> Result<Vec<u32>, ApiError> {
        let raw = o.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        super::messages::check_content_parts(raw, true)?;
        if crate::wire::chat_fields::has_media_part(o) {
            return Err(self.not_multimodal());
        }
        self.inkling_messages_ids(raw, ctx, tools)
    }

    /// The same over messages already converted (Responses, Messages).
    pub(crate) fn inkling_messages_ids(
        &self,
        raw: &[Value],
        ctx: &ChatContext,
        tools: Option<&[Value]>,
    ) -> Result<Vec<u32>, ApiError> {
        messages::conversation(raw, ContentFormat::String)?;
        // The encoding reads the calls vLLM's parsing rewrote in place.
        let parsed = messages::with_parsed_arguments(raw)?;
        let bad = |e: inkling::EncodeError| ApiError::bad_request(e.0);
        let options = inkling::Options::from_kwargs(&ctx.template_kwargs).map_err(bad)?;
        let tools = super::tools_keyword(ctx, tools);
        let Some(markers) = &self.inkling else { return Err(ApiError::internal("the inkling encoding is not loaded")) };
        let tokenizer = &self.model.tokenizer;
        let encode = |text: &str| tokenizer.encode(text, false).map(|e| e.get_ids().to_vec()).unwrap_or_default();
        inkling::render(&parsed, tools.as_ref(), options, markers, &encode).map_err(bad)
    }
}
