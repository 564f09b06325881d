//! IBM Granite 3.0 / 3.1 tool calls (`granite`, `vllm/parser/granite.py`
//! on the declarative engine): after `<|tool_call|>` (3.0, one special
//! token) or `<tool_call>` (3.1, text), a JSON array of `{"name": ...,
//! "arguments": {...}}` objects, one call per element; the `]` ends the
//! calls and text after it is content. Each call's arguments stream as the
//! verbatim text of its `arguments` object.

use std::sync::Arc;

use crate::parse::engine::{tr, ArgSyntax, EngineConfig, EngineToolFamily, State as S};
use crate::parse::family::{Family, ToolFamily};
use crate::parse::Registry;

const TOOL_TOKEN: &str = "<|tool_call|>";
const TOOL_STRING: &str = "<tool_call>";
const WS: &[char] = &[' ', '\t', '\r', '\n'];

/// `scan_json_object_end`: the end (exclusive) of the object at
/// `raw[start..]` (a `{`), string- and escape-aware; `None` while open.
fn object_end(raw: &str, start: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escape) = (0i64, false, false);
    for (i, ch) in raw[start..].char_indices() {
        if escape {
            escape = false;
        } else if in_string {
            match ch {
                '\\' => escape = true,
                '"' => in_string = false,
                _ => {}
            }
        } else {
            match ch {
                '"' => in_string = true,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(start + i + 1);
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// `extract_json_member_object(raw, key)`: the verbatim text of the
/// top-level member `key`'s object (unterminated while it is open);
/// `Ok(None)` before the value starts, `Err` when it is not an object.
fn member_object<'a>(raw: &'a str, key: &str) -> Result<Option<&'a str>, ()> {
    let (mut depth, mut in_string, mut escape) = (0i64, false, false);
    let (mut string_start, mut last_string): (usize, Option<&str>) = (0, None);
    for (i, ch) in raw.char_indices() {
        if escape {
            escape = false;
            continue;
        }
        if in_string {
            match ch {
                '\\' => escape = true,
                '"' => {
                    in_string = false;
                    if depth == 1 {
                        last_string = Some(&raw[string_start + 1..i]);
                    }
                }
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => {
                in_string = true;
                string_start = i;
            }
            ':' if depth == 1 && last_string == Some(key) => {
                let value = raw[i + 1..].trim_start_matches(WS);
                let start = raw.len() - value.len();
                if value.is_empty() {
                    return Ok(None);
                }
                if !value.starts_with('{') {
                    return Err(());
                }
                return Ok(Some(object_end(raw, start).map_or(&raw[start..], |end| &raw[start..end])));
            }
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    Ok(None)
}

/// `_granite_arg_converter`.
fn convert(raw: &str, partial: bool) -> Option<String> {
    match member_object(raw, "arguments") {
        Ok(Some(span)) => Some(span.to_string()),
        Ok(None) => Some(if partial { String::new() } else { "{}".to_string() }),
        Err(()) => None,
    }
}

static ARGS: ArgSyntax = ArgSyntax { convert, open_value: |_| None, extend_value: |_, _| None };

fn build() -> EngineConfig {
    EngineConfig {
        name: "granite",
        terminals: vec![("TOOL_TOKEN", vec![TOOL_TOKEN]), ("TOOL_STRING", vec![TOOL_STRING])],
        token_id_terminals: vec![("TOOL_TOKEN", TOOL_TOKEN)],
        transitions: vec![
            // The marker opens the array; each element is a call.
            ((S::Content, "TOOL_TOKEN"), tr(S::ToolArgs, &[])),
            ((S::Content, "TOOL_STRING"), tr(S::ToolArgs, &[])),
        ],
        content_events: EngineConfig::default_content_events(),
        initial_state: S::Content,
        wait_for_reasoning: None,
        tool_args_json: true,
        tool_call_body_array: true,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: Vec::new(),
        strip_trailing_reasoning_whitespace: true,
        arg_syntax: Some(&ARGS),
        validate_tool_names: false,
        strip_tool_names: false,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: true,
    }
}

fn config() -> &'static EngineConfig {
    static CONFIG: std::sync::OnceLock<EngineConfig> = std::sync::OnceLock::new();
    CONFIG.get_or_init(build)
}

static TOOLS: ToolFamily = Family {
    names: &["granite"],
    needs: "",
    load: |_| Ok(Arc::new(EngineToolFamily { config: |_| config(), tag_model: None, tool_header: None })),
};

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_member_is_carved_out_verbatim() {
        let raw = r#"{"name": "f", "arguments": {"a": "}", "b": {"c": 1}}, "x": 2}"#;
        assert_eq!(member_object(raw, "arguments"), Ok(Some(r#"{"a": "}", "b": {"c": 1}}"#)));
        assert_eq!(member_object(r#"{"name": "f", "arguments": {"a": 1"#, "arguments"), Ok(Some(r#"{"a": 1"#)));
        assert_eq!(member_object(r#"{"name": "f", "arguments": "#, "arguments"), Ok(None));
        assert_eq!(member_object(r#"{"name": "f", "arguments": "x"}"#, "arguments"), Err(()));
        // A key inside another value does not count.
        assert_eq!(member_object(r#"{"name": {"arguments": 1}}"#, "arguments"), Ok(None));
        assert_eq!(convert(r#"{"name": "f"}"#, false).as_deref(), Some("{}"));
        assert_eq!(convert(r#"{"name": "f""#, true).as_deref(), Some(""));
    }
}
