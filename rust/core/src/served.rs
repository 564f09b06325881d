//! The served model and the server's settings: what the render and derender
//! paths (sibling modules, each adding its operations to `Core`) share.

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::model::Model;
use crate::parse::{ParserSpec, ParserSpecError, Registry, TemplateDefaults};
use crate::stream::{StateCodec, StateMode};
use crate::structured::StrictLevel;
use crate::template::harmony::Harmony;
use crate::template::{ChatTemplate, ContentFormat, Probes, TemplateError};

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
    pub parser: Option<ParserSpec>,
    /// `--default-chat-template-kwargs` and `--reasoning-effort-map`.
    pub template_defaults: TemplateDefaults,
    /// `--anthropic-disabled-thinking-effort`; `None` (`auto`): probed
    /// from the template on first use.
    pub anthropic_disabled_thinking_effort: Option<String>,
    /// `--chat-template` (the template text); `None` uses the model's.
    pub chat_template: Option<String>,
    /// `--trust-request-chat-template`.
    pub trust_request_chat_template: bool,
    /// `--exclude-tools-when-tool-choice-none`.
    pub exclude_tools_when_tool_choice_none: bool,
    /// `--stream-state-mode` and `--stream-state-secret`.
    pub stream_state: StateCodec,
    /// `--chat-template-content-format`; `None` (`auto`): the template's.
    pub content_format: Option<ContentFormat>,
    /// The generation config render takes its default sampling values from
    /// (`--generation-config`, then `--override-generation-config`).
    pub generation_config: Map<String, Value>,
    /// `override_max_tokens`: a cap on every request's `max_tokens` (the
    /// directory's `max_new_tokens`, or the override's).
    pub override_max_tokens: Option<i64>,
}

/// The server's flags (`derender serve`, `vllm launch render`) as given,
/// before they are checked against the model: one place turns them into
/// `Settings` for the binding and the tests alike.
#[derive(Debug, Clone)]
pub struct Flags {
    /// `--served-model-name`; empty: the model argument.
    pub served_model_names: Vec<String>,
    pub max_model_len: Option<usize>,
    pub max_logprobs: i64,
    pub max_n_sequences: usize,
    pub skip_model_name_validation: bool,
    pub reasoning_parser: Option<String>,
    pub tool_call_parser: Option<String>,
    pub enable_auto_tool_choice: bool,
    pub tool_strict_level: Option<String>,
    /// `--default-chat-template-kwargs`, JSON text.
    pub default_chat_template_kwargs: Option<String>,
    /// `--reasoning-effort-map` (a JSON object).
    pub reasoning_effort_map: Option<String>,
    /// `--anthropic-disabled-thinking-effort` (`auto` or an effort).
    pub anthropic_disabled_thinking_effort: String,
    /// `--chat-template`, the template text.
    pub chat_template: Option<String>,
    pub trust_request_chat_template: bool,
    pub exclude_tools_when_tool_choice_none: bool,
    /// `--stream-state-mode`.
    pub stream_state_mode: String,
    pub stream_state_secret: Option<String>,
    pub stream_state_accepted_secrets: Vec<String>,
    /// `--chat-template-content-format`: `auto`, `string` or `openai`.
    pub chat_template_content_format: String,
    /// `--generation-config`: `auto` (the model's), `vllm` (none) or a
    /// directory holding a `generation_config.json`.
    pub generation_config: String,
    /// `--override-generation-config`, JSON text.
    pub override_generation_config: Option<String>,
}

impl Default for Flags {
    /// vLLM's defaults.
    fn default() -> Flags {
        Flags {
            served_model_names: Vec::new(),
            max_model_len: None,
            max_logprobs: 20,
            max_n_sequences: 16384,
            skip_model_name_validation: false,
            reasoning_parser: None,
            tool_call_parser: None,
            enable_auto_tool_choice: false,
            tool_strict_level: None,
            default_chat_template_kwargs: None,
            reasoning_effort_map: None,
            anthropic_disabled_thinking_effort: "auto".into(),
            chat_template: None,
            trust_request_chat_template: false,
            exclude_tools_when_tool_choice_none: false,
            stream_state_mode: "compact".to_string(),
            stream_state_secret: None,
            stream_state_accepted_secrets: Vec::new(),
            chat_template_content_format: "auto".to_string(),
            generation_config: "auto".to_string(),
            override_generation_config: None,
        }
    }
}

/// Why the flags cannot serve the model (the server does not start).
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{0}: config.json declares no context length; pass --max-model-len")]
    NoContextLength(String),
    #[error(transparent)]
    Parsers(#[from] ParserSpecError),
    #[error("{0}")]
    Flag(String),
}

impl Settings {
    /// Check `flags` against `model` and the parser `registry`.
    pub fn resolve(flags: Flags, model: &Model, registry: &Registry) -> Result<Settings, SettingsError> {
        let mode: StateMode = flags.stream_state_mode.parse().map_err(SettingsError::Flag)?;
        let accepted = &flags.stream_state_accepted_secrets;
        let stream_state = StateCodec::new(mode, flags.stream_state_secret.as_deref().map(str::as_bytes))
            .accepting(accepted.iter().map(|s| s.as_bytes()));
        if !stream_state.signs() && accepted.iter().any(|s| !s.is_empty()) {
            // Without a signing secret nothing is verified: accepting more would mean nothing.
            let message = "--stream-state-accepted-secrets needs --stream-state-secret (the secret to sign with)";
            return Err(SettingsError::Flag(message.to_string()));
        }
        // Harmony's instructions in the system message change every
        // gpt-oss prompt: refused rather than ignored.
        let system_instructions = std::env::var("VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS").unwrap_or_default();
        if model.model_type.as_deref() == Some("gpt_oss")
            && system_instructions.trim().parse::<i64>().is_ok_and(|v| v != 0)
        {
            return Err(SettingsError::Flag(
                "VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS is set: derender renders Harmony's instructions in the developer message only (unset it)".into(),
            ));
        }
        let max_model_len = flags
            .max_model_len
            .or(model.config_max_len)
            .ok_or_else(|| SettingsError::NoContextLength(model.path.display().to_string()))?;
        let parser = ParserSpec::resolve(
            flags.reasoning_parser.as_deref(),
            flags.tool_call_parser.as_deref(),
            flags.enable_auto_tool_choice,
            model,
            registry,
        )?;
        let strict_level = flags.tool_strict_level.as_deref().map(StrictLevel::from_name).transpose();
        let strict_level = strict_level.map_err(|e| SettingsError::Flag(e.to_string()))?;
        let default_chat_template_kwargs = match flags.default_chat_template_kwargs.as_deref() {
            None => Map::new(),
            Some(text) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(m)) => m,
                _ => return Err(SettingsError::Flag("--default-chat-template-kwargs must be a JSON object".into())),
            },
        };
        let template_defaults = TemplateDefaults {
            kwargs: default_chat_template_kwargs,
            effort_map: effort_map(flags.reasoning_effort_map.as_deref())?,
        };
        let anthropic_disabled_thinking_effort = match flags.anthropic_disabled_thinking_effort.as_str() {
            "auto" => None,
            e if DISABLED_THINKING_EFFORTS.contains(&e) => Some(e.to_string()),
            e => {
                return Err(SettingsError::Flag(format!(
                    "--anthropic-disabled-thinking-effort: invalid choice: '{e}' (choose from 'auto', {})",
                    DISABLED_THINKING_EFFORTS.map(|e| format!("'{e}'")).join(", ")
                )))
            }
        };
        let content_format =
            ContentFormat::from_flag(&flags.chat_template_content_format).map_err(SettingsError::Flag)?;
        let generation_config =
            generation_config(model, &flags.generation_config, flags.override_generation_config.as_deref())?;
        let override_max_tokens = match flags.generation_config.as_str() {
            "auto" | "vllm" => flags
                .override_generation_config
                .as_deref()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .and_then(|o| o.get("max_new_tokens").and_then(Value::as_i64)),
            _ => generation_config.get("max_new_tokens").and_then(Value::as_i64),
        };
        let served_model_names = match flags.served_model_names {
            names if names.is_empty() => vec![model.path.display().to_string()],
            names => names,
        };
        Ok(Settings {
            served_model_names,
            max_model_len,
            max_logprobs: flags.max_logprobs,
            max_n_sequences: flags.max_n_sequences,
            skip_model_name_validation: flags.skip_model_name_validation,
            parser: parser.map(|p| p.with_tool_strict_level(strict_level)),
            template_defaults,
            anthropic_disabled_thinking_effort,
            chat_template: flags.chat_template,
            trust_request_chat_template: flags.trust_request_chat_template,
            exclude_tools_when_tool_choice_none: flags.exclude_tools_when_tool_choice_none,
            stream_state,
            content_format,
            generation_config,
            override_max_tokens,
        })
    }
}

/// vLLM's `ReasoningEffort` and `AnthropicDisabledThinkingEffort` literals.
const REASONING_EFFORTS: [&str; 7] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];
const DISABLED_THINKING_EFFORTS: [&str; 6] = ["none", "low", "medium", "high", "xhigh", "max"];

/// `--reasoning-effort-map`, checked as `validate_reasoning_effort_map` does.
fn effort_map(text: Option<&str>) -> Result<Map<String, Value>, SettingsError> {
    let Some(text) = text else { return Ok(Map::new()) };
    let map = match serde_json::from_str::<Value>(text) {
        Ok(Value::Null) => return Ok(Map::new()),
        Ok(Value::Object(m)) if m.values().all(Value::is_string) => m,
        _ => {
            return Err(SettingsError::Flag(
                "--reasoning-effort-map must be a JSON object mapping reasoning efforts to strings.".into(),
            ))
        }
    };
    let mut unknown: Vec<&String> = map.keys().filter(|k| !REASONING_EFFORTS.contains(&k.as_str())).collect();
    if !unknown.is_empty() {
        unknown.sort();
        let quoted = |items: Vec<&str>| items.iter().map(|e| format!("'{e}'")).collect::<Vec<_>>().join(", ");
        return Err(SettingsError::Flag(format!(
            "--reasoning-effort-map has unknown efforts [{}]; keys must be one of [{}].",
            quoted(unknown.iter().map(|s| s.as_str()).collect()),
            quoted(REASONING_EFFORTS.to_vec())
        )));
    }
    Ok(map)
}

/// `ModelConfig.get_diff_sampling_param`'s source: the model's generation
/// config (`auto`), none (`vllm`) or a directory's, with the override on top.
fn generation_config(model: &Model, source: &str, over: Option<&str>) -> Result<Map<String, Value>, SettingsError> {
    let mut config = match source {
        "auto" => model.generation_config.as_object().cloned().unwrap_or_default(),
        "vllm" => Map::new(),
        dir => {
            let path = std::path::Path::new(dir).join("generation_config.json");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| SettingsError::Flag(format!("--generation-config {dir}: {}: {e}", path.display())))?;
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => m,
                _ => {
                    return Err(SettingsError::Flag(format!(
                        "--generation-config {dir}: {} is not a JSON object",
                        path.display()
                    )))
                }
            }
        }
    };
    if let Some(text) = over {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => config.extend(m),
            _ => return Err(SettingsError::Flag("--override-generation-config must be a JSON object".into())),
        }
    }
    Ok(config)
}

/// What the render and derender paths share for one served model.
pub struct Core {
    pub model: std::sync::Arc<Model>,
    pub settings: Settings,
    /// The compiled chat template (`None` when the model has none).
    pub(crate) template: Option<ChatTemplate>,
    /// Template facts `/v1/messages/render` needs, probed on first use.
    pub(crate) anthropic_probes: std::sync::OnceLock<Probes>,
    /// A `gpt_oss` model's prompts are Harmony's, not a template's.
    pub(crate) harmony: Option<Harmony>,
    /// The inkling mode's block markers in this vocabulary.
    pub(crate) inkling: Option<crate::template::inkling::Markers>,
    /// The kimi_k3 mode's ordinary (no added token) text encoding.
    pub(crate) kimi_k3: Option<crate::template::kimi_k3::Ordinary>,
}

impl Core {
    /// Build the core; fails when the chat template does not compile.
    pub fn new(model: Model, settings: Settings) -> Result<Self, TemplateError> {
        let source = settings.chat_template.as_deref().or(model.chat_template.as_deref());
        let template = source.map(ChatTemplate::new).transpose()?;
        let harmony = Harmony::load(&model);
        let inkling = (model.mode == crate::model::TokenizerMode::Inkling)
            .then(|| crate::template::inkling::Markers::find(|s| model.tokenizer.token_to_id(s)))
            .transpose()
            .map_err(|e| TemplateError::Renderer("inkling", e))?;
        let kimi_k3 = (model.mode == crate::model::TokenizerMode::KimiK3)
            .then(|| crate::template::kimi_k3::Ordinary::of(&model.tokenizer))
            .transpose()
            .map_err(|e| TemplateError::Renderer("kimi_k3", e))?;
        let model = std::sync::Arc::new(model);
        let probes = std::sync::OnceLock::new();
        Ok(Core { model, settings, template, anthropic_probes: probes, harmony, inkling, kimi_k3 })
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
