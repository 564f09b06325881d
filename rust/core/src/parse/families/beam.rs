//! Reflection's Beam (`vllm/parser/beam.py`, names `beam`): the
//! response-template parser (`response_template`), whose `adjust_request`
//! constrains every request with a structural tag derived from the
//! checkpoint's template (`VLLM_BEAM_ALWAYS_CONSTRAIN_OUTPUT`, on by
//! default): reasoning, then calls to the request's functions with their
//! arguments' schemas, or the answer. Forced choices are enforced by it, so
//! nothing is refused up front as `hf` refuses it.

use serde_json::{Map, Value};

use super::response_template::grammar::{
    answer_rest_structural_tag, json_compiles, message_start_anchors, regex_compiles, tool_call_structural_tag,
    TagOptions,
};
use super::response_template::{self, CONTENT, THINKING, TOOLS};
use crate::error::ApiError;
use crate::parse::family::{Composition, Family, ReasoningFamily, ToolFamily};
use crate::parse::unified::{Grammar, GrammarRequest, Route, Selected};
use crate::parse::{Registry, ToolChoice};
use crate::structured::{RequestFormat, StrictLevel};

pub const NAMES: [&str; 1] = ["beam"];

/// The tool choice as Beam's `adjust_request` reads it.
#[derive(Debug, PartialEq)]
enum Choice<'a> {
    None,
    /// Given as `null` (chat): parsed like `"auto"`, but not `"auto"`.
    Null,
    Auto,
    Required,
    Named(&'a str),
    /// A Responses choice of hosted or allowed tools: no tool parsing.
    Other,
}

fn choice<'a>(request: &'a GrammarRequest) -> Choice<'a> {
    if let Route::Responses { tool_choice, .. } = request.route {
        return match tool_choice {
            None => Choice::Auto,
            Some(Value::String(s)) => match s.as_str() {
                "none" => Choice::None,
                "required" => Choice::Required,
                _ => Choice::Auto,
            },
            Some(Value::Object(o)) => match o.get("type").and_then(Value::as_str) {
                Some("function" | "custom") => Choice::Named(o.get("name").and_then(Value::as_str).unwrap_or_default()),
                _ => Choice::Other,
            },
            Some(_) => Choice::Other,
        };
    }
    match &request.ctx.tool_choice {
        ToolChoice::None => Choice::None,
        ToolChoice::Null => Choice::Null,
        ToolChoice::Auto => Choice::Auto,
        ToolChoice::Required => Choice::Required,
        ToolChoice::Named(name) => Choice::Named(name),
    }
}

fn strict_true(v: Option<&Value>) -> bool {
    v.and_then(crate::pycompat::pydantic::read::lax_bool) == Some(true)
}

/// `_as_tool_dicts(constrained_tools or request.tools)`, as the functions
/// the grammar calls. `pinned`: `resolve_tool_strictness` pinned every
/// top-level function tool's `strict` (to this, or to its own `strict`).
fn functions(request: &GrammarRequest, pinned: Option<bool>) -> Vec<Map<String, Value>> {
    let mut out: Vec<Map<String, Value>> =
        request.ctx.tools.iter().filter_map(|t| t.get("function")?.as_object().cloned()).collect();
    // `strict` as pydantic reads a `bool | None` ("false" is false).
    for function in &mut out {
        if let Some(strict) = function.get("strict").and_then(crate::pycompat::pydantic::read::lax_bool) {
            function.insert("strict".into(), Value::Bool(strict));
        }
    }
    let Some(all) = pinned else { return out };
    // Namespaced and custom tools keep their own `strict`.
    let top_level: Vec<bool> = match request.route {
        Route::Chat => vec![true; out.len()],
        Route::Responses { tools, .. } => tools
            .iter()
            .flat_map(|t| match t.get("type").and_then(Value::as_str) {
                Some("function") => vec![true],
                Some("custom") => vec![false],
                Some("namespace") => {
                    let inner = t.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
                    let functions = inner.iter().filter(|f| f.get("type").and_then(Value::as_str) == Some("function"));
                    vec![false; functions.count()]
                }
                _ => Vec::new(),
            })
            .collect(),
    };
    for (function, top) in out.iter_mut().zip(top_level) {
        if top {
            let strict = all || strict_true(function.get("strict"));
            function.insert("strict".into(), Value::Bool(strict));
        }
    }
    out
}

/// Any tool `resolve_tool_strictness` reads as strict (`strict` is true on
/// a chat function or a top-level Responses function).
fn any_strict(request: &GrammarRequest) -> bool {
    match request.route {
        Route::Chat => request.ctx.tools.iter().any(|t| strict_true(t.get("function").and_then(|f| f.get("strict")))),
        Route::Responses { tools, .. } => tools
            .iter()
            .any(|t| t.get("type").and_then(Value::as_str) == Some("function") && strict_true(t.get("strict"))),
    }
}

/// `_xgrammar_supports`: what derender's request checks take, and of a JSON
/// schema or a regex, what XGrammar compiles (`validate_xgrammar_grammar`):
/// a constraint XGrammar refuses stays the request's own, untouched.
fn xgrammar_supports(format: &RequestFormat) -> bool {
    let RequestFormat::Format(f) = format else { return false };
    match f.get("type").and_then(Value::as_str) {
        Some("json_schema") => f.get("json_schema").is_some_and(json_compiles),
        Some("regex") => f.get("pattern").and_then(Value::as_str).is_some_and(regex_compiles),
        _ => true,
    }
}

/// The answer format as vLLM 0.33.0 dumps it: it pins xgrammar 0.2.8,
/// whose `GrammarFormat` has no `syntax` field (derender's formats carry
/// 0.2.9's `"syntax": "ebnf"`; a Lark grammar keeps its documented one).
fn xgrammar_028_dump(format: &Value) -> Value {
    let mut format = format.clone();
    if let Some(o) = format.as_object_mut() {
        if o.get("type") == Some(&Value::from("grammar")) && o.get("syntax") == Some(&Value::from("ebnf")) {
            o.remove("syntax");
        }
    }
    format
}

    /// `_template_tag`: the template grammar for the request, `None` to
    /// leave its output to its own constraint.
    fn template_tag(
        factory: &response_template::Factory,
        request: &GrammarRequest,
        selected: Selected,
        level: Option<StrictLevel>,
        prefix: &str,
        message_start: bool,
    ) -> Result<Option<Value>, ApiError> {
        let t = factory.template();
        let ctx = request.ctx;
        let choice = choice(request);
        let named = matches!(choice, Choice::Named(_));
        let tools_given = match request.route {
            Route::Chat => !ctx.tools.is_empty(),
            Route::Responses { tools, .. } => !tools.is_empty(),
        };
        let parsing = match choice {
            Choice::None | Choice::Other => false,
            Choice::Required | Choice::Named(_) => true,
            Choice::Auto | Choice::Null => selected.auto,
        };
        let tools_enabled = selected.tools && tools_given && parsing;
        let forced = tools_enabled && (choice == Choice::Required || named);
        // The prompt may still list the tools, so only the grammar keeps the
        // model from calling them.
        let tools_forbidden = tools_given && choice == Choice::None && t.field(TOOLS).is_some();
        // `VLLM_ENFORCE_STRICT_TOOL_CALLING` (on): tools are resolved whenever enabled.
        let level = level.unwrap_or(StrictLevel::Auto);
        let constrained = tools_enabled && !(choice == Choice::Auto && level == StrictLevel::Auto && !any_strict(request));
        let output = request.output.filter(|_| !forced);
        let answer = t.field(CONTENT);
        if let Some(o) = output {
            let tagged = o.get("structural_tag").is_some_and(|v| !v.is_null());
            if tagged || answer.is_none_or(|a| a.open.is_none()) || !xgrammar_supports(request.format) {
                return Ok(None);
            }
        }
        // `VLLM_BEAM_ALWAYS_CONSTRAIN_OUTPUT` (on): the output follows the template.
        let always = !forced;
        if !constrained && output.is_none() && !tools_forbidden && !always {
            return Ok(None);
        }
        // Inside an open answer only the answer's rest applies; inside open
        // reasoning the grammar needs the reasoning gate.
        let open_field = factory.open_field(prefix);
        let reasoning_gated = selected.reasoning && ctx.include_reasoning;
        let mut tag = None;
        if open_field == Some(CONTENT) {
            if always && output.is_none() {
                tag = answer.and_then(answer_rest_structural_tag);
            }
        } else if open_field != Some(THINKING) || reasoning_gated {
            let mut functions = if tools_enabled { functions(request, constrained.then_some(level >= StrictLevel::Parameter)) } else { Vec::new() };
            // vLLM fails a named custom tool with a 500 (`_named_tool` reads
            // `.function` off it); derender names the tool's function shim.
            if let Choice::Named(name) = choice {
                functions.retain(|f| f.get("name").and_then(Value::as_str) == Some(name));
            }
            let answer_format = match (output, request.format) {
                (Some(_), RequestFormat::Format(f)) => Some(xgrammar_028_dump(f)),
                _ => None,
            };
            let anchors = message_start_anchors(t);
            let options = TagOptions {
                parallel_tool_calls: !named && ctx.parallel_tool_calls,
                thinking: t.field(THINKING),
                answer: answer.filter(|_| !forced),
                answer_format: answer_format.as_ref(),
                message_start: message_start.then_some(anchors.as_slice()),
                requires_reasoning: ctx.enable_thinking(),
                // Beam drifts from schemas the grammar does not enforce, and
                // writes arguments sorted by name.
                sorted_arguments: true,
                strict_arguments: true,
            };
            let refs: Vec<&Map<String, Value>> = functions.iter().collect();
            tag = tool_call_structural_tag(t.field(TOOLS), &refs, &options)
                .map_err(|e| ApiError::invalid_param(format!("{e} (parameter=tools)"), "tools"))?;
        }
        if tag.is_none() && forced {
            let kind = if named { "named" } else { "required" };
            return Err(ApiError::invalid_param(
                format!("response_template parsing cannot guarantee {kind} tool choice for this request (parameter=tool_choice)"),
                "tool_choice",
            ));
        }
        Ok(tag)
}

/// `BeamParser._constrain_request`.
fn constrain(
    factory: &response_template::Factory,
    request: &GrammarRequest,
    selected: Selected,
    level: Option<StrictLevel>,
) -> Result<Option<Grammar>, ApiError> {
    let prefix = request.model.decode(request.prompt);
    let message_start = factory.starts_message(&prefix);
    let tag = template_tag(factory, request, selected, level, &prefix, message_start)?;
    let opts = crate::pycompat::json::DumpOptions { ensure_ascii: true, ..Default::default() };
    Ok(tag.map(|t| Grammar {
        structural_tag: crate::pycompat::json::dumps_with(&t, &opts),
        // From the message start, the tag also covers the reasoning.
        from_message_start: message_start,
        // The request's own format is folded into the tag.
        as_request_outputs: false,
    }))
}

static REASONING: ReasoningFamily =
    Family { names: &NAMES, needs: "a response_template", load: |m| Ok(response_template::load(m, Some(constrain))?) };
static TOOL: ToolFamily =
    Family { names: &NAMES, needs: "a response_template", load: |m| Ok(response_template::load(m, Some(constrain))?) };

static COMPOSITION: Composition = Composition { names: &NAMES, model_type: None, validate: response_template::validate };

pub(super) fn register(registry: &mut Registry) {
    registry.composition(&COMPOSITION);
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOL);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn request_formats_xgrammar_refuses_stay_the_requests_own() {
        let json = |schema: Value| RequestFormat::Format(json!({"type": "json_schema", "json_schema": schema}));
        let regex = |p: &str| RequestFormat::Format(json!({"type": "regex", "pattern": p}));
        assert!(xgrammar_supports(&json(json!({"type": "object", "properties": {"a": {"type": "integer"}}}))));
        // Strict mode: an array without items holds no item.
        assert!(!xgrammar_supports(&json(json!({"type": "array", "minItems": 1}))));
        assert!(!xgrammar_supports(&json(json!({"$ref": "#/$defs/missing"}))));
        assert!(xgrammar_supports(&regex("[a-z]+")));
        assert!(!xgrammar_supports(&regex(r"\bword")));
        assert!(!xgrammar_supports(&RequestFormat::Unsupported));
    }

    #[test]
    fn ebnf_answer_formats_are_dumped_as_xgrammar_0_2_8_dumps_them() {
        let ebnf = json!({"type": "grammar", "grammar": "root ::= \"a\"", "syntax": "ebnf"});
        assert_eq!(xgrammar_028_dump(&ebnf), json!({"type": "grammar", "grammar": "root ::= \"a\""}));
        let lark = json!({"type": "grammar", "grammar": "start: \"a\"", "syntax": "lark"});
        assert_eq!(xgrammar_028_dump(&lark), lark);
    }
}
