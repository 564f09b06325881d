//! `/tokenize` and `/detokenize`, as vLLM's render server has them.

use serde_json::{json, Value};

use super::body_object;
use super::messages::Origin;
use crate::error::ApiError;
use crate::parse::context::{ChatContext, TemplateDefaults};
use crate::pycompat::pydantic::{read, Errors, Loc};
use crate::served::Core;
use crate::wire::message_union;

impl Core {
    /// `POST /tokenize`: a `prompt`, or chat `messages` through the template.
    pub fn tokenize(&self, body: Option<&Value>) -> Result<Value, ApiError> {
        let o = body_object(body)?;
        let root = Loc::root("body");
        let mut errs = Errors::default();
        let chat = o.contains_key("messages");
        if chat {
            // `TokenizeRequest` is a union: a chat body whose messages fail
            // also failed the completion member, which wants a `prompt`.
            if let Some(messages) = read::list(&o["messages"], &root.field("messages"), &mut errs) {
                let mut message_errs = Errors::default();
                message_union::check_messages(messages, &root.field("messages"), &mut message_errs);
                if !message_errs.is_empty() {
                    errs.missing(&root.field("prompt"), &Value::Object(o.clone()));
                    errs.list.append(&mut message_errs.list);
                }
            }
        } else {
            match o.get("prompt") {
                None => errs.missing(&root.field("prompt"), &Value::Object(o.clone())),
                Some(p) => {
                    read::string(p, &root.field("prompt"), &mut errs);
                }
            }
        }
        if !errs.is_empty() {
            return Err(errs.into_api_error());
        }
        self.check_model(o.get("model").and_then(Value::as_str))?;
        // `validate_chat_template`, whatever writes the prompt.
        let untrusted = o.get("chat_template").is_some_and(|v| !v.is_null())
            || o.get("chat_template_kwargs").and_then(|k| k.get("chat_template")).is_some_and(|v| !v.is_null());
        if chat && untrusted && !self.settings.trust_request_chat_template {
            return Err(ApiError::bad_request("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template."));
        }
        let ids = if let (true, Some(harmony)) = (chat, &self.harmony) {
            // vLLM's tokenize request carries no reasoning effort.
            super::harmony_chat_prompt(harmony, o, o.get("tools").and_then(Value::as_array).map(Vec::as_slice), None)?
        } else if let (true, Some(tekken)) = (chat, self.model.tekken()) {
            let messages = o.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            let tools: Option<Vec<Value>> =
                o.get("tools").and_then(Value::as_array).map(|t| t.iter().map(super::messages::tool_dict).collect());
            self.mistral_ids(o, tekken, messages, tools.as_deref(), Origin::Request)?
        } else if chat && (self.writes_inkling() || self.writes_kimi_k3()) {
            let defaults =
                TemplateDefaults { kwargs: self.settings.template_defaults.kwargs.clone(), ..Default::default() };
            let ctx = ChatContext::from_request(o, &defaults);
            let tools: Option<Vec<Value>> =
                o.get("tools").and_then(Value::as_array).map(|t| t.iter().map(super::messages::tool_dict).collect());
            if self.writes_kimi_k3() {
                // The tokenize request's chat params carry no tool choice or format.
                let o = &super::messages::without_reasoning_content(o);
                self.kimi_k3_ids(o, &ctx, tools.as_deref(), Default::default())?
            } else {
                self.inkling_ids(o, &ctx, tools.as_deref())?
            }
        } else if chat {
            // vLLM's tokenization server is built without the effort map.
            let defaults =
                TemplateDefaults { kwargs: self.settings.template_defaults.kwargs.clone(), ..Default::default() };
            let ctx = ChatContext::from_request(o, &defaults);
            let tools: Option<Vec<Value>> =
                o.get("tools").and_then(Value::as_array).map(|t| t.iter().map(super::messages::tool_dict).collect());
            // The conversation a template (or V3.2's and V4's encoder) reads;
            // V4.1's encoder reads the request's own messages.
            let stripped = super::messages::without_reasoning_content(o);
            let from = if self.model.mode == crate::model::TokenizerMode::DeepseekV41 { o } else { &stripped };
            let text = self.apply_chat_template(from, &ctx, tools.as_deref(), Origin::Request)?;
            let tokenized = self.deepseek_tokenized(&ctx);
            self.encode(&text, !tokenized && o.get("add_special_tokens").and_then(Value::as_bool).unwrap_or(false))?
        } else {
            let prompt = o.get("prompt").and_then(Value::as_str).unwrap_or("");
            self.encode(prompt, o.get("add_special_tokens").and_then(Value::as_bool).unwrap_or(true))?
        };
        let token_strs = o.get("return_token_strs").and_then(Value::as_bool).unwrap_or(false).then(|| {
            ids.iter()
                .map(|&id| self.model.piece(i64::from(id)).map_or(Value::Null, |p| Value::String(p.to_string())))
                .collect::<Vec<_>>()
        });
        Ok(json!({
            "count": ids.len(),
            "max_model_len": self.settings.max_model_len,
            "tokens": ids,
            "token_strs": token_strs,
        }))
    }

    /// `POST /detokenize`: `tokens` back to text.
    pub fn detokenize(&self, body: Option<&Value>) -> Result<Value, ApiError> {
        let o = body_object(body)?;
        let root = Loc::root("body");
        let mut errs = Errors::default();
        let tokens = match o.get("tokens") {
            None => {
                errs.missing(&root.field("tokens"), &Value::Object(o.clone()));
                None
            }
            Some(t) => read::int_list(t, Some(0), &root.field("tokens"), &mut errs),
        };
        let Some(tokens) = tokens.filter(|_| errs.is_empty()) else { return Err(errs.into_api_error()) };
        self.check_model(o.get("model").and_then(Value::as_str))?;
        // tiktoken raises `KeyError` on an id past the tekken vocabulary
        // (vLLM answers it 500; a 400 here, with its message).
        if let Some(tekken) = self.model.tekken() {
            if let Some(&id) = tokens.iter().find(|&&id| !self.model.in_vocab(id)) {
                let rank = id - tekken.num_special() as i64;
                return Err(ApiError::invalid_param(format!("'Invalid token for decoding: {rank}'"), "tokens"));
            }
        }
        Ok(json!({ "prompt": self.model.decode(&tokens) }))
    }
}
