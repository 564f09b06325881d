//! The served model and the server's settings: what the render and derender
//! paths (sibling modules, each adding its operations to `Core`) share.

use crate::error::ApiError;
use crate::model::Model;
use crate::template::{ChatTemplate, Probes, TemplateError};

/// Server-wide settings that shape derender answers.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `--served-model-name`; the first one is used when a request omits `model`.
    pub served_model_names: Vec<String>,
    pub max_model_len: usize,
    /// `--max-logprobs` (-1 = no bound).
    pub max_logprobs: i64,
    /// `VLLM_MAX_N_SEQUENCES`.
    pub max_n_sequences: usize,
    /// `VLLM_SKIP_MODEL_NAME_VALIDATION`.
    pub skip_model_name_validation: bool,
    /// Reasoning / tool-call parsers; `None` = the plain path.
    pub parser: Option<crate::parse::ParserSpec>,
    /// `--default-chat-template-kwargs`.
    pub default_chat_template_kwargs: serde_json::Map<String, serde_json::Value>,
    /// `--chat-template` (the template text); `None` uses the model's.
    pub chat_template: Option<String>,
    /// `--trust-request-chat-template`.
    pub trust_request_chat_template: bool,
    /// `--exclude-tools-when-tool-choice-none`.
    pub exclude_tools_when_tool_choice_none: bool,
    /// `--stream-state-mode` and `--stream-state-secret`.
    pub stream_state: crate::stream::StateCodec,
}

/// What the render and derender paths share for one served model.
pub struct Core {
    pub model: std::sync::Arc<Model>,
    pub settings: Settings,
    /// The compiled chat template (`None` when the model has none).
    pub(crate) template: Option<ChatTemplate>,
    /// Template facts `/v1/messages/render` needs, probed on first use.
    pub(crate) anthropic_probes: std::sync::OnceLock<Probes>,
}

impl Core {
    /// Build the core; fails when the chat template does not compile.
    pub fn new(model: Model, settings: Settings) -> Result<Self, TemplateError> {
        let source = settings.chat_template.as_deref().or(model.chat_template.as_deref());
        let template = source.map(ChatTemplate::new).transpose()?;
        Ok(Core { model: std::sync::Arc::new(model), settings, template, anthropic_probes: std::sync::OnceLock::new() })
    }

    /// `_check_model`: a named model must be one we serve.
    pub fn check_model(&self, model: Option<&str>) -> Result<(), ApiError> {
        match model {
            None | Some("") => Ok(()),
            Some(_) if self.settings.skip_model_name_validation => Ok(()),
            Some(m) if self.settings.served_model_names.iter().any(|n| n == m) => Ok(()),
            Some(m) => Err(ApiError::model_not_found(m, &self.settings.served_model_names)),
        }
    }

    /// The `model` field of a response: the request's, else the first name.
    pub fn response_model(&self, model: Option<&str>) -> String {
        match model {
            Some(m) if !m.is_empty() => m.to_string(),
            _ => self.settings.served_model_names.first().cloned().unwrap_or_default(),
        }
    }
}
