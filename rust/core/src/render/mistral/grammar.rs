//! The Lark grammar vLLM's Mistral parser puts in `structured_outputs`
//! (`adjust_request` → mistral_common's `GrammarFactory.get_lark_from_jinja`):
//! text, `[THINK]` blocks and `[TOOL_CALLS]name[ARGS]{json}` calls as the
//! tool choice allows, or a JSON schema. Special tokens are written as
//! llguidance references (`<[9]>`).

use serde_json::Value;

use crate::pycompat::json::{dumps_with, DumpOptions};
use crate::tekken::Tekken;

/// mistral_common's tool choice (`ToolChoiceEnum` or a named tool).
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Auto,
    None,
    Required,
    Named(String),
}

/// A tool as the grammar reads it (`Tool.from_openai`).
pub struct GrammarTool<'a> {
    pub name: &'a str,
    pub parameters: Option<&'a Value>,
    pub strict: bool,
}

fn json_text(value: &Value) -> String {
    dumps_with(value, &DumpOptions { ensure_ascii: false, ..Default::default() })
}

fn token(tekken: &Tekken, text: &str) -> Option<String> {
    tekken.special_id(text).map(|id| format!("<[{id}]>"))
}

/// `_validate_mode_and_tools`: the tool choice's tools must be offered.
pub fn check_mode(mode: &Mode, tools: &[GrammarTool]) -> Result<(), String> {
    match mode {
        Mode::Named(name) if tools.iter().all(|t| t.name != name) => {
            Err(format!("Tool choice requires the {name} tool but no tools with this name has been passed."))
        }
        Mode::Required if tools.is_empty() => {
            Err("When mode=<ToolChoiceEnum.required: 'required'> please ensure to pass tools, got tools=None."
                .to_string())
        }
        _ => Ok(()),
    }
}

/// `_convert_tool_calls`: one call, or one or more with parallel calls; a
/// strict tool pins its name and argument schema.
fn calls(tekken: &Tekken, mode: &Mode, tools: &[GrammarTool], parallel: bool) -> String {
    if *mode == Mode::None {
        return String::new();
    }
    let calls_token = token(tekken, "[TOOL_CALLS]").unwrap_or_default();
    let args_token = token(tekken, "[ARGS]").unwrap_or_default();
    let entries: Vec<(String, String)> = if !tools.iter().any(|t| t.strict) {
        let name = match mode {
            Mode::Named(name) => format!("\"{name}\""),
            _ => "/.+/".to_string(),
        };
        vec![(name, "{\"type\": \"object\"}".to_string())]
    } else {
        let chosen: Vec<&GrammarTool> = match mode {
            Mode::Named(name) => tools.iter().filter(|t| t.name == name).take(1).collect(),
            _ => tools.iter().collect(),
        };
        chosen
            .into_iter()
            .map(|t| {
                let args = match t.parameters.filter(|p| t.strict && p.as_object().is_some_and(|o| !o.is_empty())) {
                    Some(p) => json_text(p),
                    None if t.strict => {
                        "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}".into()
                    }
                    None => "{\"type\": \"object\"}".into(),
                };
                (format!("\"{}\"", t.name), args)
            })
            .collect()
    };
    let parts: Vec<String> = entries
        .iter()
        .map(|(name, args)| format!("{calls_token} SAFE_WS? {name} {args_token} SAFE_WS? %json {args} SAFE_WS?"))
        .collect();
    let call = if parts.len() > 1 {
        parts.iter().map(|p| format!("({p})")).collect::<Vec<_>>().join(" | ")
    } else {
        parts.into_iter().next().unwrap_or_default()
    };
    if parallel {
        format!("({call})+")
    } else {
        call
    }
}

/// The grammar for a request. `json_schema`: a JSON answer the grammar
/// also allows (only it, with `json_only`).
pub fn lark(
    tekken: &Tekken,
    mode: &Mode,
    tools: &[GrammarTool],
    json_schema: Option<&Value>,
    parallel: bool,
    json_only: bool,
) -> String {
    let fcall = calls(tekken, mode, tools, parallel);
    let schema = json_schema.filter(|s| crate::pycompat::truthy(s)).map(json_text);
    let think = (token(tekken, "[THINK]"), token(tekken, "[/THINK]"));
    // v15 tokenizers (model settings) may think before a JSON answer.
    let think_with_json = tekken.version >= 15;
    let mut out = String::new();
    match (think, tekken.version >= 13) {
        ((Some(begin), Some(end)), true) => {
            match &schema {
                Some(schema) => {
                    out.push_str(if json_only { "start: json_grammar\n" } else { "start: body | json_grammar\n" });
                    let think_prefix = if think_with_json { "think? " } else { "" };
                    out.push_str(&format!("json_grammar: {think_prefix}SAFE_WS? %json {schema}\n"));
                }
                None => out.push_str("start: body\n"),
            }
            out.push_str(match mode {
                Mode::Auto => "body: think? (content | fcalls)\n",
                Mode::Required | Mode::Named(_) => "body: think? fcalls\n",
                Mode::None => "body: think? content\n",
            });
            out.push_str(&format!("fcalls: content? {fcall}\n\n"));
            out.push_str("content: (/(.|\\n)+/)+\n\n");
            out.push_str(&format!("think: {begin} content {end}\n\n"));
        }
        _ => {
            match &schema {
                Some(schema) if json_only => out.push_str(&format!("start: SAFE_WS? %json {schema}\n")),
                Some(schema) => out.push_str(&format!("start: body | SAFE_WS? %json {schema}\n")),
                None => out.push_str("start: body\n"),
            }
            out.push_str(match mode {
                Mode::Auto => "body: content | (content? fcalls)\n",
                Mode::Required | Mode::Named(_) => "body: content? fcalls\n",
                Mode::None => "body: content\n",
            });
            out.push_str(&format!("fcalls: {fcall}\n\n"));
            out.push_str("content: (/(.|\\n)+/)+\n\n");
        }
    }
    out.push_str("SAFE_WS: /[ \\t\\r\\n]{1,8}/");
    out
}
