//! MiniMax-M2 (`vllm/parser/minimax_m2.py`): `</think>` ends reasoning (the
//! model does not write `<think>`), tool calls are
//! `<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter></invoke></minimax:tool_call>`.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use std::sync::Arc;

use crate::model::Model;
use crate::parse::engine::{EngineReasoning, EngineReasoningFamily, EngineToolFamily};
use crate::parse::family::{Family, ReasoningFamily, ReasoningParserFactory, ToolFamily};
use crate::structured::tool_tags::StrictLevel;
use crate::structured::format::{const_string, content, separated, sequence, tag, triggered, Choice, TagModel, TagTool, THINK};
use crate::parse::{ChatContext, ReasoningParser, Registry};
use crate::parse::engine::{tr, ArgSyntax, EngineConfig, EventType as E, OpenValue as Streamed, State as S, Transition};
use crate::pycompat::json::{dumps, dumps_str};
use super::qwen3_args::{closer, end_window, prefix_of, word, ws, Param};

fn build() -> EngineConfig {
    let mut transitions: Vec<((S, &'static str), Transition)> = vec![
        ((S::Reasoning, "THINK_START"), tr(S::Reasoning, &[])),
        ((S::Reasoning, "THINK_END"), tr(S::Content, &[E::ReasoningEnd])),
        ((S::Content, "THINK_END"), tr(S::Content, &[])),
        ((S::Reasoning, "TOOL_START"), tr(S::ToolPreamble, &[E::ReasoningEnd])),
        ((S::Content, "TOOL_START"), tr(S::ToolPreamble, &[])),
        ((S::ToolArgs, "PARAM_START"), tr(S::ToolArgs, &[E::ArgValueChunk])),
        ((S::ToolArgs, "PARAM_END"), tr(S::ToolArgs, &[E::ArgValueChunk])),
        ((S::ToolPreamble, "TOOL_END"), tr(S::Content, &[])),
        ((S::ToolBetween, "TOOL_END"), tr(S::Content, &[])),
        ((S::Content, "TOOL_END"), tr(S::Content, &[])),
        ((S::ToolArgs, "INVOKE_END"), tr(S::ToolBetween, &[E::ToolCallEnd])),
    ];
    for state in [S::Content, S::ToolPreamble, S::ToolBetween] {
        for t in ["INVOKE_PREFIX_DQ", "INVOKE_PREFIX_SQ", "INVOKE_PREFIX_UNQUOTED"] {
            transitions.push(((state, t), tr(S::ToolName, &[E::ToolCallStart])));
        }
    }
    for t in ["NAME_END_DQ", "NAME_END_SQ", "NAME_END_UNQUOTED"] {
        transitions.push(((S::ToolName, t), tr(S::ToolArgs, &[])));
    }
    EngineConfig {
        name: "minimax_m2",
        terminals: vec![
            ("THINK_START", vec!["<think>"]),
            ("THINK_END", vec!["</think>"]),
            ("TOOL_START", vec!["<minimax:tool_call>"]),
            ("PARAM_START", vec!["<parameter name="]),
            ("PARAM_END", vec!["</parameter>"]),
            ("TOOL_END", vec!["</minimax:tool_call>"]),
            ("INVOKE_PREFIX_DQ", vec!["<invoke name=\""]),
            ("INVOKE_PREFIX_SQ", vec!["<invoke name='"]),
            ("INVOKE_PREFIX_UNQUOTED", vec!["<invoke name="]),
            ("INVOKE_END", vec!["</invoke>"]),
            ("NAME_END_DQ", vec!["\">"]),
            ("NAME_END_SQ", vec!["'>"]),
            ("NAME_END_UNQUOTED", vec![">"]),
        ],
        token_id_terminals: vec![
            ("THINK_START", "<think>"),
            ("THINK_END", "</think>"),
            ("TOOL_START", "<minimax:tool_call>"),
            ("TOOL_END", "</minimax:tool_call>"),
        ],
        transitions,
        content_events: EngineConfig::default_content_events(),
        initial_state: S::Reasoning,
        wait_for_reasoning: Some(true),
        tool_args_json: false,
        tool_call_body_array: false,
        preserve_tokens: Vec::new(),
        turn_boundary_tokens: Vec::new(),
        strip_trailing_reasoning_whitespace: true,
        arg_syntax: Some(&ARGS),
        validate_tool_names: true,
        strip_tool_names: false,
        drop_whitespace_only_content_before_tools: true,
        strip_content_whitespace_with_tools: true,
        stream_text_after_calls: true,
    }
}

pub fn config() -> &'static EngineConfig {
    static CONFIG: OnceLock<EngineConfig> = OnceLock::new();
    CONFIG.get_or_init(build)
}

/// `<\s*parameter\s+name\s*=` at `i`: the index after `=`.
fn opener(c: &[char], i: usize) -> Option<usize> {
    if c.get(i) != Some(&'<') {
        return None;
    }
    let j = word(c, ws(c, i + 1), "parameter")?;
    let k = ws(c, j);
    if k == j {
        return None; // `\s+` needs at least one
    }
    let k = ws(c, word(c, k, "name")?);
    (c.get(k) == Some(&'=')).then_some(k + 1)
}

/// The name part and the index after the `>`; `bare` says which form.
fn name_part(c: &[char], j: usize) -> Option<(String, usize, bool)> {
    let j = ws(c, j);
    let (name, k, bare) = match c.get(j) {
        Some(&q @ ('"' | '\'')) => {
            let end = (j + 1..c.len()).find(|&k| c[k] == q)?;
            (c[j + 1..end].iter().collect::<String>(), end + 1, false)
        }
        Some(_) => {
            let end = (j..c.len()).find(|&k| c[k] == '>' || c[k].is_whitespace()).unwrap_or(c.len());
            if end == j {
                return None;
            }
            (c[j..end].iter().collect(), end, true)
        }
        None => return None,
    };
    let k = ws(c, k);
    (c.get(k) == Some(&'>')).then(|| (name, k + 1, bare))
}

fn param_at(c: &[char], i: usize) -> Option<Param> {
    let (name, vs, _) = name_part(c, opener(c, i)?)?;
    for k in vs..c.len() {
        if let Some(e) = closer(c, k) {
            return Some(Param { start: i, end: e, name, value: c[vs..k].iter().collect() });
        }
        if opener(c, k).is_some() {
            return Some(Param { start: i, end: k, name, value: c[vs..k].iter().collect() });
        }
    }
    None
}

/// The open trailing value of a partial parse.
struct OpenValue {
    name: String,
    value: String,
    bare: bool,
    /// Where its opener starts in `remaining` (the text without complete params).
    start: usize,
    remaining: Vec<char>,
}

/// `_minimax_m2_parse_args`: the params, and the open trailing value.
fn parse_args(raw: &str, partial: bool) -> (Map<String, Value>, Option<OpenValue>) {
    let c: Vec<char> = raw.chars().collect();
    let mut params = Map::new();
    let mut remaining = Vec::new();
    let (mut i, mut copied) = (0, 0);
    while i < c.len() {
        match param_at(&c, i) {
            Some(p) => {
                let name = p.name.trim().to_string();
                if !name.is_empty() {
                    params.insert(name, Value::String(p.value));
                }
                remaining.extend_from_slice(&c[copied..p.start]);
                i = p.end.max(i + 1);
                copied = p.end;
            }
            None => i += 1,
        }
    }
    remaining.extend_from_slice(&c[copied.min(c.len())..]);
    let mut open = None;
    if partial {
        for s in 0..remaining.len() {
            let Some(j) = opener(&remaining, s) else { continue };
            let Some((name, vs, bare)) = name_part(&remaining, j) else { continue };
            let name = name.trim().to_string();
            if !name.is_empty() {
                let value: String = remaining[vs..].iter().collect();
                params.insert(name.clone(), Value::String(value.clone()));
                open = Some(OpenValue { name, value, bare, start: s, remaining: remaining.clone() });
            }
            break;
        }
    }
    (params, open)
}

pub fn convert(raw: &str, partial: bool) -> String {
    dumps(&Value::Object(parse_args(raw, partial).0))
}

fn has_value_end(t: &[char]) -> bool {
    (0..t.len()).any(|i| closer(t, i).is_some() || opener(t, i).is_some())
}

/// Could `t` still grow into a value end (`</parameter>` or `<parameter name=`)?
fn may_become_end(t: &[char]) -> bool {
    prefix_of(t, &["<", "\\s*", "/", "\\s*", "parameter", "\\s*", ">"])
        || prefix_of(t, &["<", "\\s*", "parameter", "\\s+", "name", "\\s*", "="])
}

/// Streams the open last value until it may close.
fn open_value(raw: &str) -> Option<Streamed> {
    let (params, open) = parse_args(raw, true);
    let OpenValue { name, value, bare, start, remaining } = open?;
    if params.keys().next_back() != Some(&name) {
        return None;
    }
    if has_value_end(&remaining[..start]) || (bare && name.starts_with(['"', '\''])) {
        return None;
    }
    let window = end_window(&value.chars().collect::<Vec<_>>(), may_become_end).into_iter().collect();
    Some(Streamed { window, ..Default::default() })
}

fn extend_value(v: &mut Streamed, delta: &str) -> Option<String> {
    let mut text: Vec<char> = v.window.chars().collect();
    text.extend(delta.chars());
    if has_value_end(&text) {
        return None;
    }
    v.window = end_window(&text, may_become_end).into_iter().collect();
    let q = dumps_str(delta);
    Some(q[1..q.len() - 1].to_string())
}

/// MiniMax-M2's `<parameter name="k">v</parameter>` arguments.
static ARGS: ArgSyntax = ArgSyntax { convert: |raw, partial, _| Some(convert(raw, partial)), stream_deltas: true,
    structural_chars: None, open_value, extend_value };


// Registration.

fn reasoning(_ctx: &ChatContext, model: &Arc<Model>) -> EngineReasoning {
    let mut engine = EngineReasoning::new(config(), model.clone());
    engine.content_ids_after_end_only = true;
    engine
}

/// Streams follow vLLM's: its stream reads the prompt, so a template that
/// closes the think block there (thinking off) makes the whole output
/// content, where batch still splits reasoning out; the stream also sends
/// the whitespace next to calls as vLLM's does, so following batch on the
/// reasoning alone made a stream that was neither answer.
struct Reasoning;

impl ReasoningParserFactory for Reasoning {
    fn create(&self, ctx: &ChatContext, model: &Arc<Model>) -> Box<dyn ReasoningParser> {
        EngineReasoningFamily(reasoning).create(ctx, model)
    }

    fn keep_special_tokens(&self) -> bool {
        true
    }

    fn stream_follows_vllm(&self) -> bool {
        true
    }
}

static REASONING: ReasoningFamily = Family { names: &["minimax_m2"], needs: "", load: |_| Ok(Arc::new(Reasoning)) };

static TOOLS: ToolFamily = Family {
    names: &["minimax_m2"],
    needs: "",
    load: |_| Ok(Arc::new(EngineToolFamily { config: |_| config(), tag_model: Some(&TAG), tool_header: None })),
};

static TAG: TagModel = TagModel { name: "minimax", build: tag_for, default_level: StrictLevel::Auto };

pub(super) fn register(registry: &mut Registry) {
    registry.reasoning_family(&REASONING);
    registry.tool_family(&TOOLS);
    registry.tag_model(&TAG);
}

/// MiniMax-M2 (`<minimax:tool_call>\n<invoke name="NAME">\n...`).
fn tag_for(tools: &[TagTool], choice: Choice) -> Value {
    let tags: Vec<Value> = tools
        .iter()
        .map(|t| tag(&format!("<invoke name=\"{}\">\n", t.name), content(t.schema(), "minimax_xml"), "</invoke>\n"))
        .collect();
    match choice {
        Choice::Auto => {
            let block = tag("<minimax:tool_call>\n", separated(tags, "", false), "</minimax:tool_call>");
            triggered(&["<minimax:tool_call>"], vec![block], false, &THINK)
        }
        _ => sequence(vec![
            const_string("\n<minimax:tool_call>\n"),
            separated(tags, "", choice == Choice::Forced),
            const_string("</minimax:tool_call>"),
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_quoted_bare_and_partial_params() {
        let raw = "<parameter name=\"city\">Paris</parameter><parameter name='unit'> cel </parameter>";
        // Values are verbatim: the whitespace inside the tags is data.
        assert_eq!(convert(raw, false), r#"{"city": "Paris", "unit": " cel "}"#);
        assert_eq!(
            convert("<parameter name=n>1</parameter><parameter name=\"q\">hel", true),
            r#"{"n": "1", "q": "hel"}"#
        );
        assert_eq!(convert("<parameter name=\"q\">hel", false), "{}");
        // A value ends at the next opener even without a closer.
        assert_eq!(convert("<parameter name=a>1<parameter name=b>2</parameter>", false), r#"{"a": "1", "b": "2"}"#);
        // Tolerant spacing, as the regex allows.
        assert_eq!(convert("< parameter  name = \"k\" >v< / parameter >", false), r#"{"k": "v"}"#);
    }

    #[test]
    fn extender_streams_the_open_value_until_it_may_close() {
        let mut e = open_value("<parameter name=\"q\">hel").unwrap();
        assert_eq!(extend_value(&mut e, "lo \"w\"").as_deref(), Some("lo \\\"w\\\""));
        // A `<` that could begin the closer is still streamed; the closer ends it.
        assert_eq!(extend_value(&mut e, "<").as_deref(), Some("<"));
        assert_eq!(extend_value(&mut e, "/parameter>"), None);
        // Not the last value, or a bare name that opens a quote: no extender.
        assert!(open_value("<parameter name=\"a\">1</parameter>").is_none());
        assert!(open_value("<parameter name=\"x>v").is_none());
    }

    #[test]
    fn config_matches_the_markup() {
        let c = config();
        assert_eq!(c.initial_state, S::Reasoning);
        assert!(c.transition(S::Content, "INVOKE_PREFIX_DQ").is_some());
        assert!(c.transition(S::ToolArgs, "INVOKE_END").is_some_and(|t| t.next == S::ToolBetween));
    }
}
