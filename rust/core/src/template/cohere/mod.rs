//! Cohere's prompt formats (vLLM's `cohere` tokenizer mode): the config
//! cohere-melody's `render_cmd4` / `render_cmd3` take, the template
//! variables melody builds from it, and its Jinja templates (shipped as
//! data in `templates/`). Spec: `tests/models/cohere_command/TEMPLATING.md`.

mod jinja;
mod prepare;

use serde_json::{Map, Value};

pub use prepare::json_escape;

/// The prompt family (`chat_template_kwargs.cohere_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Cmd3,
    Cmd4,
}

/// A message role as melody reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Chatbot,
    Tool,
}

/// One content block of a melody message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    Thinking(String),
    /// An image's template placeholder.
    Image(String),
    /// A document (a JSON object): refused outside tool messages.
    Document(Map<String, Value>),
}

/// An assistant's tool call; `parameters` is JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub parameters: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: Option<String>,
}

/// A tool as melody's `Tool`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub parameters: Map<String, Value>,
}

/// melody's three-valued settings (`unknown` / `enabled` / `disabled`, ...),
/// upper-cased as the templates read them.
pub type Setting = &'static str;

/// What `render_cmd4` / `render_cmd3` are given (the fields vLLM can set).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub format: Format,
    pub messages: Vec<Message>,
    pub template_id: Option<String>,
    /// A trusted request's own template (`chat_template`).
    pub template_jinja: Option<String>,
    pub documents: Vec<Map<String, Value>>,
    pub tools: Vec<Tool>,
    /// `Some(enabled)` when a reasoning type is set (`unknown` counts as not enabled).
    pub reasoning: Option<ReasoningType>,
    pub dev_instruction: Option<String>,
    pub json_schema: Option<String>,
    pub json_mode: bool,
    /// cmd3: `NONE` / `STRICT` / `CONTEXTUAL` / `UNKNOWN`.
    pub safety_mode: Option<Setting>,
    /// cmd3: `ON` (melody's default) / `OFF` / `UNKNOWN`.
    pub citation_quality: Setting,
    pub skip_preamble: bool,
    /// cmd4: `ENABLED` (melody's default) / `DISABLED` / `UNKNOWN`.
    pub grounding: Setting,
    pub platform_instruction: Option<String>,
    /// Every other kwarg: template variables melody's own keys overwrite.
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningType {
    Unknown,
    Enabled,
    Disabled,
}

impl Config {
    pub fn new(format: Format) -> Config {
        Config {
            format,
            messages: Vec::new(),
            template_id: None,
            template_jinja: None,
            documents: Vec::new(),
            tools: Vec::new(),
            reasoning: None,
            dev_instruction: None,
            json_schema: None,
            json_mode: false,
            safety_mode: None,
            citation_quality: "ON",
            skip_preamble: false,
            grounding: "ENABLED",
            platform_instruction: None,
            extra: Map::new(),
        }
    }
}

/// melody's errors, worded as its Python binding raises them (vLLM
/// answers them 400 verbatim).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    #[error("Render error: Template validation error: {0}")]
    Validation(String),
    #[error("Render error: JSON serialization error: {0}")]
    Json(String),
    #[error("Render error: Template parsing error: {0}")]
    Template(String),
}

/// The prompt text `render_cmd4` / `render_cmd3` write for `config`.
pub fn render(config: &Config) -> Result<String, RenderError> {
    let vars = prepare::variables(config)?;
    // `template_id` wins over a request's own template.
    if let Some(id) = &config.template_id {
        return jinja::render_builtin(config.format, id, &vars);
    }
    match config.template_jinja.as_deref().filter(|t| !t.is_empty()) {
        Some(own) => jinja::render_source(own, &vars),
        None => jinja::render_builtin(config.format, default_id(config.format), &vars),
    }
}

fn default_id(format: Format) -> &'static str {
    match format {
        Format::Cmd3 => "cmd3-v1",
        Format::Cmd4 => "cmd4-v1",
    }
}
