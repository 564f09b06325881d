//! DeepSeek's DSML tool calls (vLLM's `parser/deepseek_v32.py` and
//! `parser/deepseek_v4.py` on the declarative engine):
//!
//! ```text
//! <｜DSML｜tool_calls>                       (V3.2: function_calls)
//! <｜DSML｜invoke name="get_weather">
//! <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
//! <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! </｜DSML｜tool_calls>
//! ```
//!
//! A bare invoke is a call too; text after (and between) blocks is dropped.
//! `string="true"` values are kept as written, others read as JSON (falling
//! back to the text). Arguments wrapped in a lone `arguments` / `input` key
//! the tool does not declare are unwrapped (`_unwrap_wrapper_args`). V4 adds
//! `<think>` reasoning to the same engine; V4.1 respells V4's names with a
//! leading space (`<｜DSML｜ calls>`). Each version is a `Dialect`.

mod v32;
mod v4;
mod v41;

use serde_json::{Map, Value};

use crate::parse::engine::{tr, ArgSyntax, EventType as E, Properties, State as S, Transition};
use crate::parse::Registry;
use crate::pycompat::json::{dumps, loads};
use crate::structured::format::{const_string, content, separated, sequence, tag, triggered, Choice, TagTool, THINK};

/// One version's spellings.
pub struct Dialect {
    /// The block's opener(s) (the first is what tags and prompts write).
    pub tool_start: &'static [&'static str],
    pub tool_end: &'static str,
    pub invoke_prefix: &'static str,
    pub invoke_end: &'static str,
    pub param_start: &'static str,
    pub param_close: &'static str,
    /// The content style of its structural tag's arguments.
    pub xml_style: &'static str,
}

pub(super) fn register(registry: &mut Registry) {
    v32::register(registry);
    v4::register(registry);
    v41::register(registry);
}

/// The tool states' transitions, shared by every version.
fn tool_transitions() -> Vec<((S, &'static str), Transition)> {
    vec![
        ((S::Content, "TOOL_START"), tr(S::ToolPreamble, &[])),
        ((S::ToolPreamble, "INVOKE_PREFIX"), tr(S::ToolName, &[E::ToolCallStart])),
        ((S::Content, "INVOKE_PREFIX"), tr(S::ToolName, &[E::ToolCallStart])),
        ((S::ToolName, "INVOKE_NAME_END"), tr(S::ToolArgs, &[])),
        ((S::ToolArgs, "INVOKE_END"), tr(S::ToolBetween, &[E::ToolCallEnd])),
        ((S::ToolArgs, "TOOL_END"), tr(S::ToolBetween, &[E::ToolCallEnd])),
        ((S::ToolBetween, "INVOKE_PREFIX"), tr(S::ToolName, &[E::ToolCallStart])),
        // A call ends the turn: text after the block is dropped.
        ((S::ToolBetween, "TOOL_END"), tr(S::ToolBetween, &[])),
        ((S::ToolBetween, "TOOL_START"), tr(S::ToolPreamble, &[])),
    ]
}

/// The terminals of the tool states.
fn tool_terminals(d: &'static Dialect) -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("TOOL_START", d.tool_start.to_vec()),
        ("TOOL_END", vec![d.tool_end]),
        ("INVOKE_PREFIX", vec![d.invoke_prefix]),
        ("INVOKE_NAME_END", vec!["\">"]),
        ("INVOKE_END", vec![d.invoke_end]),
        ("PARAM_START", vec![d.param_start]),
        ("PARAM_CLOSE", vec![d.param_close]),
    ]
}

/// The argument syntax: the converter, then the wrapper unwrap.
const fn arg_syntax(convert: fn(&str, bool, Option<&Properties>) -> Option<String>) -> ArgSyntax {
    ArgSyntax { convert, stream_deltas: true, structural_chars: Some(">"), open_value: |_| None, extend_value: |_, _| None }
}

/// Python's `\s` over a `str`.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// One parameter head `<｜DSML｜parameter\s+name="N"(?:\s+string="S")?\s*>`
/// at char `i`: `(name, string attribute, index after the head)`.
fn head(d: &Dialect, c: &[char], i: usize) -> Option<(String, Option<String>, usize)> {
    let start: Vec<char> = d.param_start.chars().collect();
    if !c[i..].starts_with(&start) {
        return None;
    }
    let mut j = i + start.len();
    let spaces = c[j..].iter().take_while(|&&x| py_space(x)).count();
    if spaces == 0 {
        return None;
    }
    j += spaces;
    let name_tag: Vec<char> = "name=\"".chars().collect();
    if !c[j..].starts_with(&name_tag) {
        return None;
    }
    j += name_tag.len();
    let name_len = c[j..].iter().take_while(|&&x| x != '"').count();
    if name_len == 0 || j + name_len >= c.len() {
        return None;
    }
    let name: String = c[j..j + name_len].iter().collect();
    j += name_len + 1;
    let close = |k: usize| {
        let k = k + c[k..].iter().take_while(|&&x| py_space(x)).count();
        (c.get(k) == Some(&'>')).then_some(k + 1)
    };
    // With the `string` attribute, else without it (the regex backtracks).
    let spaces = c[j..].iter().take_while(|&&x| py_space(x)).count();
    let attr: Vec<char> = "string=\"".chars().collect();
    if spaces > 0 && c[j + spaces..].starts_with(&attr) {
        let k = j + spaces + attr.len();
        let len = c[k..].iter().take_while(|&&x| x != '"').count();
        if k + len < c.len() {
            if let Some(end) = close(k + len + 1) {
                return Some((name, Some(c[k..k + len].iter().collect()), end));
            }
        }
    }
    close(j).map(|end| (name, None, end))
}

/// The end of a complete parameter's value from `from`: `(value end, match
/// end)` at the first `</｜DSML｜parameter>` or the next parameter head
/// (`(?=<｜DSML｜parameter\s+name=)`).
fn value_end(d: &Dialect, c: &[char], from: usize) -> Option<(usize, usize)> {
    let close: Vec<char> = d.param_close.chars().collect();
    let start: Vec<char> = d.param_start.chars().collect();
    (from..=c.len()).find_map(|p| {
        if c[p..].starts_with(&close) {
            return Some((p, p + close.len()));
        }
        if c[p..].starts_with(&start) {
            let k = p + start.len();
            let spaces = c[k..].iter().take_while(|&&x| py_space(x)).count();
            let name: Vec<char> = "name=".chars().collect();
            if spaces > 0 && c[k + spaces..].starts_with(&name) {
                return Some((p, p));
            }
        }
        None
    })
}

fn value_of(is_str: Option<&str>, text: &str, partial: bool) -> Option<Value> {
    if is_str == Some("true") {
        return Some(Value::String(text.to_string()));
    }
    match loads(text) {
        Some(v) => Some(v),
        // A complete value falls back to its text; a partial one waits.
        None => (!partial).then(|| Value::String(text.to_string())),
    }
}

/// `_dsml_arg_converter`: the parameters as a JSON object; with `partial`, a
/// trailing unclosed parameter too once its value reads.
fn convert(d: &Dialect, raw: &str, partial: bool) -> String {
    let c: Vec<char> = raw.chars().collect();
    let mut params = Map::new();
    let (mut i, mut last_end) = (0, 0);
    while i < c.len() {
        let found = head(d, &c, i).and_then(|(name, is_str, body)| {
            let (end, after) = value_end(d, &c, body)?;
            Some((name, is_str, c[body..end].iter().collect::<String>(), after))
        });
        match found {
            Some((name, is_str, text, after)) => {
                if let Some(v) = value_of(is_str.as_deref(), &text, false) {
                    params.insert(name, v);
                }
                last_end = after;
                // An empty match would not advance (it cannot be: the head
                // is never empty).
                i = after.max(i + 1);
            }
            None => i += 1,
        }
    }
    if partial {
        if let Some((name, is_str, body)) = (last_end..c.len()).find_map(|p| head(d, &c, p)) {
            let text: String = c[body..].iter().collect();
            if let Some(v) = value_of(is_str.as_deref(), &text, true) {
                params.insert(name, v);
            }
        }
    }
    dumps(&Value::Object(params))
}

/// `_unwrap_wrapper_args`: `{"arguments": X}` or `{"input": X}` around
/// arguments the tool declares, when the wrapper key is not a property.
fn unwrap_wrapper(args_json: String, props: Option<&Properties>) -> String {
    let Some(props) = props.filter(|p| !p.is_empty()) else { return args_json };
    let Some(Value::Object(args)) = loads(&args_json) else { return args_json };
    for wrapper in ["arguments", "input"] {
        if args.len() != 1 || !args.contains_key(wrapper) || props.contains_key(wrapper) {
            continue;
        }
        let inner = match &args[wrapper] {
            Value::String(s) => match loads(s) {
                Some(v) => v,
                None => return args_json,
            },
            other => other.clone(),
        };
        if let Value::Object(inner) = &inner {
            if inner.keys().all(|k| props.contains_key(k)) {
                return dumps(&Value::Object(inner.clone()));
            }
        }
    }
    args_json
}

/// xgrammar's DSML structural tag (`get_deepseek_v3_2_structural_tag`,
/// `_get_deepseek_v4_structural_tag`) in a dialect's spellings.
fn tag_for(d: &Dialect, tools: &[TagTool], choice: Choice) -> Value {
    let invoke = |t: &TagTool| {
        tag(&format!("{}{}\">\n", d.invoke_prefix, t.name), content(t.schema(), d.xml_style), &format!("{}\n", d.invoke_end))
    };
    let mut tags: Vec<Value> = tools.iter().map(invoke).collect();
    let begin = format!("{}\n", d.tool_start[0]);
    match choice {
        Choice::Auto => {
            let block = tag(&begin, separated(tags, "", false), d.tool_end);
            triggered(&[d.tool_start[0]], vec![block], false, &THINK)
        }
        Choice::Forced => sequence(vec![
            const_string(&format!("\n\n{begin}")),
            if tags.is_empty() { Value::Null } else { tags.swap_remove(0) },
            const_string(d.tool_end),
        ]),
        Choice::Required => sequence(vec![
            const_string(&format!("\n\n{begin}")),
            separated(tags, "", false),
            const_string(d.tool_end),
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_read_as_vllms_converter_reads_them() {
        let p = |name: &str, s: &str, v: &str| format!("<｜DSML｜parameter name=\"{name}\" string=\"{s}\">{v}</｜DSML｜parameter>");
        let raw = format!("\n{}\n{}\n{}", p("city", "true", "Paris"), p("days", "false", "3"), p("tags", "false", "[1, 2]"));
        assert_eq!(convert(&v32::DIALECT, &raw, false), r#"{"city": "Paris", "days": 3, "tags": [1, 2]}"#);
        // Not JSON: the text; no `string`: JSON if it reads; a later
        // duplicate overwrites in place; an unclosed one ends at the next.
        let raw = format!(
            "{}<｜DSML｜parameter name=\"n\">7</｜DSML｜parameter><｜DSML｜parameter name=\"a\" string=\"true\">x{}",
            p("a", "false", "not json"),
            p("b", "true", " y ")
        );
        assert_eq!(convert(&v32::DIALECT, &raw, false), r#"{"a": "x", "n": 7, "b": " y "}"#);
        // Streaming: a trailing open string value shows; an open JSON one
        // only once it reads.
        let open = format!("{}<｜DSML｜parameter name=\"b\" string=\"true\">Ly", p("a", "false", "1"));
        assert_eq!(convert(&v32::DIALECT, &open, true), r#"{"a": 1, "b": "Ly"}"#);
        let open = format!("{}<｜DSML｜parameter name=\"b\" string=\"false\">[1,", p("a", "false", "1"));
        assert_eq!(convert(&v32::DIALECT, &open, true), r#"{"a": 1}"#);
    }

    #[test]
    fn a_lone_wrapper_key_is_unwrapped_for_declared_properties() {
        let props: Properties = serde_json::from_str(r#"{"city": {"type": "string"}}"#).unwrap();
        let unwrap = |args: &str| unwrap_wrapper(args.to_string(), Some(&props));
        assert_eq!(unwrap(r#"{"input": {"city": "Oslo"}}"#), r#"{"city": "Oslo"}"#);
        assert_eq!(unwrap(r#"{"arguments": "{\"city\": \"Oslo\"}"}"#), r#"{"city": "Oslo"}"#);
        assert_eq!(unwrap(r#"{"input": {"town": "Oslo"}}"#), r#"{"input": {"town": "Oslo"}}"#);
        assert_eq!(unwrap(r#"{"input": "not json"}"#), r#"{"input": "not json"}"#);
        assert_eq!(unwrap_wrapper(r#"{"input": {"city": "x"}}"#.into(), None), r#"{"input": {"city": "x"}}"#);
    }
}
