//! What a parser needs to know of the original `chat_request`.

use crate::pycompat::truthy;
use serde_json::{Map, Value};

pub use crate::structured::ToolChoice;

/// The request facts that change parsing.
#[derive(Debug, Clone)]
pub struct ChatContext {
    /// `tools` as sent (function definitions).
    pub tools: Vec<Value>,
    pub tool_choice: ToolChoice,
    pub include_reasoning: bool,
    /// `parallel_tool_calls` (only an explicit `false` filters).
    pub parallel_tool_calls: bool,
    /// `logprobs` was asked for (some parsers then answer an empty delta
    /// with `content: ""`, which carries the logprobs).
    pub logprobs: bool,
    /// The effective chat-template kwargs (server defaults under request).
    pub template_kwargs: Map<String, Value>,
    /// The request's own `chat_template_kwargs`, as sent (parsers that read
    /// `request.chat_template_kwargs` rather than the effective kwargs).
    pub request_kwargs: Map<String, Value>,
    /// `structured_outputs.structural_tag` is set: decoding was constrained
    /// by a grammar on text, so a marker may arrive split across tokens.
    pub structural_tag: bool,
}

/// The server's template defaults: `--default-chat-template-kwargs` and
/// `--reasoning-effort-map`.
#[derive(Debug, Clone, Default)]
pub struct TemplateDefaults {
    pub kwargs: Map<String, Value>,
    /// Requested effort -> the effort the template is given.
    pub effort_map: Map<String, Value>,
}

impl TemplateDefaults {
    /// `map_reasoning_effort`: efforts the map does not list pass unchanged.
    pub fn effort<'a>(&'a self, effort: &'a str) -> &'a str {
        self.effort_map.get(effort).and_then(Value::as_str).unwrap_or(effort)
    }
}

impl ChatContext {
    /// Read the context from a validated `chat_request` object.
    pub fn from_request(req: &Map<String, Value>, defaults: &TemplateDefaults) -> ChatContext {
        let tools: Vec<Value> = req.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
        let tool_choice = match req.get("tool_choice") {
            // `check_tool_usage`: tools without a tool_choice mean "auto".
            None if !tools.is_empty() => ToolChoice::Auto,
            None => ToolChoice::None,
            Some(Value::Null) => ToolChoice::Null,
            Some(Value::String(s)) => match s.as_str() {
                "auto" => ToolChoice::Auto,
                "required" => ToolChoice::Required,
                _ => ToolChoice::None,
            },
            Some(Value::Object(o)) => {
                let name = o.get("function").and_then(|f| f.get("name")).and_then(Value::as_str).unwrap_or("");
                ToolChoice::Named(name.to_string())
            }
            Some(_) => ToolChoice::None,
        };
        let include_reasoning = req.get("include_reasoning").map(truthy_bool).unwrap_or(true);
        let parallel_tool_calls = req.get("parallel_tool_calls").is_none_or(|v| v.as_bool() != Some(false));
        ChatContext {
            tools,
            tool_choice,
            include_reasoning,
            parallel_tool_calls,
            logprobs: req.get("logprobs").is_some_and(crate::pycompat::truthy),
            template_kwargs: effective_template_kwargs(req, defaults),
            request_kwargs: req.get("chat_template_kwargs").and_then(Value::as_object).cloned().unwrap_or_default(),
            structural_tag: req
                .get("structured_outputs")
                .and_then(|s| s.get("structural_tag"))
                .is_some_and(|t| !t.is_null()),
        }
    }

    /// A template kwarg as a boolean flag (Python truthiness).
    pub fn kwarg_true(&self, key: &str) -> bool {
        self.template_kwargs.get(key).is_some_and(truthy)
    }

    pub fn forces_tool_calls(&self) -> bool {
        matches!(self.tool_choice, ToolChoice::Required | ToolChoice::Named(_))
    }

    /// The JSON schema of a tool's parameters, by function name.
    /// `chat_template_kwargs.enable_thinking`, on unless given and falsy
    /// (Qwen3's switch).
    pub fn enable_thinking(&self) -> bool {
        self.template_kwargs.get("enable_thinking").is_none_or(truthy)
    }

    /// GLM's `thinking_enabled`: on unless `thinking` or `enable_thinking`
    /// is given (not null) and neither is truthy.
    pub fn thinking_or_enable_thinking(&self) -> bool {
        let given = |k: &str| self.template_kwargs.get(k).filter(|v| !v.is_null());
        let (t, e) = (given("thinking"), given("enable_thinking"));
        (t.is_none() && e.is_none()) || t.is_some_and(truthy) || e.is_some_and(truthy)
    }

    pub fn tool_parameters(&self, name: &str) -> Option<&Value> {
        self.tools.iter().find_map(|t| {
            let f = t.get("function")?;
            (f.get("name")?.as_str()? == name).then(|| f.get("parameters")).flatten()
        })
    }
}

fn truthy_bool(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => matches!(s.to_ascii_lowercase().as_str(), "1" | "on" | "t" | "true" | "y" | "yes"),
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    }
}

/// `merge(a, b)` of vLLM's chat params: `b` over `a`, skipping `None` and
/// `"auto"` values of `b`.
fn merge(mut base: Map<String, Value>, over: Map<String, Value>) -> Map<String, Value> {
    for (k, v) in over {
        if v.is_null() || v.as_str() == Some("auto") {
            continue;
        }
        base.insert(k, v);
    }
    base
}

/// `build_chat_params(...).with_defaults(default_chat_template_kwargs)
/// .chat_template_kwargs`: the kwargs the template (and parser) sees.
pub fn effective_template_kwargs(req: &Map<String, Value>, defaults: &TemplateDefaults) -> Map<String, Value> {
    let mut request_kwargs = req.get("chat_template_kwargs").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut fixed = Map::new();
    fixed
        .insert("add_generation_prompt".into(), req.get("add_generation_prompt").cloned().unwrap_or(Value::Bool(true)));
    fixed.insert(
        "continue_final_message".into(),
        req.get("continue_final_message").cloned().unwrap_or(Value::Bool(false)),
    );
    fixed.insert("documents".into(), req.get("documents").cloned().unwrap_or(Value::Null));
    let effort = match req.get("reasoning_effort") {
        Some(Value::String(e)) => Value::String(defaults.effort(e).to_string()),
        other => other.cloned().unwrap_or(Value::Null),
    };
    fixed.insert("reasoning_effort".into(), effort.clone());
    if let Some(e) = effort.as_str() {
        if !request_kwargs.contains_key("enable_thinking") {
            fixed.insert("enable_thinking".into(), Value::Bool(e != "none"));
        }
    }
    request_kwargs = merge(request_kwargs, fixed);
    let mut base = defaults.kwargs.clone();
    if !base.contains_key("cohere_format") {
        base.insert("cohere_format".into(), Value::String("cmd4".into()));
    }
    merge(base, request_kwargs)
}
