//! vLLM 0.33's tool strict levels and `DelegatingParser._apply_structural_tag`:
//! when a tool-call grammar goes into `structured_outputs`, which tools pin
//! their argument schemas, and how it combines with `parallel_tool_calls:
//! false` and the request's own structured outputs.

use serde_json::Value;

use super::format::{self, Choice, TagModel, TagTool};

/// `tool_choice` after `check_tool_usage` filled its default.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolChoice {
    None,
    /// An explicit `null`: parsed like `"auto"`, but calls are not kept.
    Null,
    Auto,
    Required,
    Named(String),
}

/// `--tool-strict-level`: the floor for tool-call structural tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StrictLevel {
    /// Constrain calls by `tool_choice`; arguments only for `strict` tools.
    Auto,
    /// Constrain the call envelope for every request with tools.
    Function,
    /// Also pin every tool's argument schema, as if all were `strict`.
    Parameter,
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("Unknown tool strict level '{0}'; expected one of auto, function, parameter.")]
pub struct UnknownStrictLevel(pub String);

impl StrictLevel {
    /// `ToolStrictLevel.from_name`: case and surrounding space do not matter.
    pub fn from_name(name: &str) -> Result<StrictLevel, UnknownStrictLevel> {
        match name.trim().to_lowercase().as_str() {
            "auto" => Ok(StrictLevel::Auto),
            "function" => Ok(StrictLevel::Function),
            "parameter" => Ok(StrictLevel::Parameter),
            _ => Err(UnknownStrictLevel(name.to_string())),
        }
    }
}

/// The request's own structured outputs (`response_format` /
/// `structured_outputs`), as `_apply_structural_tag` sees them.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestFormat {
    Absent,
    /// Present, but xgrammar does not take it on its own
    /// (`_xgrammar_supports`): under `auto` the tools stay unconstrained.
    Unsupported,
    /// Present, as an xgrammar format (`structured_outputs_to_format`).
    Format(Value),
}

/// The request facts the tag depends on.
#[derive(Debug, Clone, Copy)]
pub struct TagRequest<'a> {
    pub tools: &'a [Value],
    pub tool_choice: &'a ToolChoice,
    pub parallel_tool_calls: bool,
    pub format: &'a RequestFormat,
}

/// `_apply_structural_tag`: the `structural_tag` text that replaces the
/// request's structured outputs, or `None` when the request is left alone.
/// `model` is the tool parser's `structural_tag_model`; `level` the server's
/// `--tool-strict-level` (`None`: the parser's default).
pub fn structural_tag(model: Option<&TagModel>, level: Option<StrictLevel>, req: TagRequest) -> Option<String> {
    let model = model?;
    let build = |tools: &[TagTool], choice| Some((model.build)(tools, choice));
    structural_tag_by(&build, model.default_level, level, req)
}

/// [`structural_tag`] for a parser whose `get_structural_tag` builds its own
/// tag (`build` may decline: `None` leaves the request alone);
/// `default_level` is the parser's `default_tool_strict_level`.
pub fn structural_tag_by(
    build: &dyn Fn(&[TagTool], Choice) -> Option<Value>,
    default_level: StrictLevel,
    level: Option<StrictLevel>,
    req: TagRequest,
) -> Option<String> {
    if req.tools.is_empty() {
        return None;
    }
    let choice = match req.tool_choice {
        ToolChoice::Auto => Choice::Auto,
        ToolChoice::Required => Choice::Required,
        ToolChoice::Named(_) => Choice::Forced,
        ToolChoice::None | ToolChoice::Null => return None,
    };
    let is_auto = choice == Choice::Auto;
    let has_format = *req.format != RequestFormat::Absent;
    let single_call = !req.parallel_tool_calls;
    let mut level = level.unwrap_or(default_level);
    if single_call && !(is_auto && has_format) {
        // Limiting the call count needs the call envelope in the grammar;
        // auto with structured outputs keeps its format-only grammar.
        level = level.max(StrictLevel::Function);
    }
    let tools = resolve_tool_strictness(req.tools, is_auto, level)?;
    let output = match req.format {
        RequestFormat::Format(f) if is_auto => Some(f),
        RequestFormat::Unsupported if is_auto => return None,
        _ => None,
    };
    // Under auto with an output format, the tools branch must call a tool:
    // plain text is the format's branch.
    let choice = if output.is_some() { Choice::Required } else { choice };
    let tools: Vec<TagTool> = match req.tool_choice {
        ToolChoice::Named(name) => tools.into_iter().filter(|t| t.name == name).take(1).collect(),
        _ => tools,
    };
    if tools.is_empty() {
        return None;
    }
    let mut tag = build(&tools, choice)?;
    if single_call {
        limit_to_single_tool_call(&mut tag);
    }
    let format = match output {
        Some(out) => serde_json::json!({"type": "or", "elements": [tag, out]}),
        None => tag,
    };
    Some(format::tag_text(format))
}

/// `resolve_tool_strictness`: `None` when `auto` needs no tag (level AUTO and
/// no strict tool), else every tool with `strict` pinned.
fn resolve_tool_strictness(tools: &[Value], is_auto: bool, level: StrictLevel) -> Option<Vec<TagTool<'_>>> {
    let tools: Vec<TagTool> = tools.iter().filter_map(TagTool::from_request).collect();
    if is_auto && level == StrictLevel::Auto && !tools.iter().any(|t| t.strict) {
        return None;
    }
    let all = level >= StrictLevel::Parameter;
    Some(tools.into_iter().map(|t| TagTool { strict: all || t.strict, ..t }).collect())
}

/// `limit_to_single_tool_call`: every tool-call list stops after one call.
/// Only format fields are walked, never a JSON schema.
pub fn limit_to_single_tool_call(format: &mut Value) {
    let Some(node) = format.as_object_mut() else { return };
    if matches!(
        node.get("type").and_then(Value::as_str),
        Some("triggered_tags" | "token_triggered_tags" | "tags_with_separator")
    ) {
        node.insert("stop_after_first".into(), Value::Bool(true));
    }
    for key in ["content", "elements", "tags"] {
        match node.get_mut(key) {
            Some(Value::Array(items)) => items.iter_mut().for_each(limit_to_single_tool_call),
            Some(child @ Value::Object(_)) => limit_to_single_tool_call(child),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn levels_read_like_vllms_from_name() {
        assert_eq!(StrictLevel::from_name(" Function "), Ok(StrictLevel::Function));
        assert_eq!(
            StrictLevel::from_name("loose").unwrap_err().to_string(),
            "Unknown tool strict level 'loose'; expected one of auto, function, parameter."
        );
        assert!(StrictLevel::Auto < StrictLevel::Function && StrictLevel::Function < StrictLevel::Parameter);
    }

    #[test]
    fn a_single_call_stops_every_call_list_but_never_touches_a_schema() {
        let schema = json!({"type": "triggered_tags", "stop_after_first": false});
        let mut tag = json!({"type": "sequence", "elements": [
            {"type": "tags_with_separator", "tags": [
                {"type": "tag", "begin": "<a>", "content": {"type": "json_schema", "json_schema": schema}, "end": "</a>"}
            ], "separator": "", "at_least_one": true, "stop_after_first": false},
            {"type": "triggered_tags", "triggers": [], "tags": [], "at_least_one": false, "stop_after_first": false, "excludes": []}
        ]});
        limit_to_single_tool_call(&mut tag);
        assert_eq!(tag["elements"][0]["stop_after_first"], true);
        assert_eq!(tag["elements"][1]["stop_after_first"], true);
        assert_eq!(tag["elements"][0]["tags"][0]["content"]["json_schema"], schema);
    }

    /// A model whose tag is one `tag` per tool.
    fn hermes() -> Option<&'static TagModel> {
        static MODEL: TagModel = TagModel {
            name: "test",
            build: |tools, _| serde_json::json!({"type": "tag", "begin": tools[0].name, "end": ""}),
            default_level: StrictLevel::Auto,
        };
        Some(&MODEL)
    }

    #[test]
    fn auto_with_a_format_keeps_its_level_for_a_single_call() {
        let tools = [json!({"type": "function", "function": {"name": "f"}})];
        let format = RequestFormat::Format(json!({"type": "regex", "pattern": "x"}));
        let req =
            |format| TagRequest { tools: &tools, tool_choice: &ToolChoice::Auto, parallel_tool_calls: false, format };
        // No strict tool, level AUTO: the format alone applies.
        assert_eq!(structural_tag(hermes(), None, req(&format)), None);
        // Without a format the single call raises the level to FUNCTION.
        assert!(structural_tag(hermes(), None, req(&RequestFormat::Absent)).is_some());
    }
}
