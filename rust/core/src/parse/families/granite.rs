//! IBM Granite 3.0 / 3.1 tool calls (`granite`, `vllm/parser/granite.py`
//! on the declarative engine): after `<|tool_call|>` (3.0, one special
//! token) or `<tool_call>` (3.1, text), a JSON array of `{"name": ...,
//! "arguments": {...}}` objects, one call per element; the `]` ends the
//! calls and text after it is content. Each call's arguments stream as the
//! verbatim text of its `arguments` object.
//!
//! And Granite 3.2 / 3.3's reasoning (`granite`, vLLM's
//! `GraniteReasoningParser`): English phrases, "Here is my thought
//! process:" ... "Here is my response:" (or "Here's"), split in batch by a
//! regex and in streams by re-reading the text so far, holding back what
//! may still become a phrase. vLLM's parser leaves `is_reasoning_end`
//! unimplemented (it answers `None`), so render reports `reasoning_ended`
//! as null and a stream never leaves its reasoning phase.

use std::sync::Arc;

use crate::model::Model;
use crate::parse::engine::json_member::member_object;
use crate::parse::engine::{tr, ArgSyntax, EngineConfig, EngineToolFamily, State as S};
use crate::parse::family::{Family, ReasoningFamily, ReasoningParserFactory, ToolFamily};
use crate::parse::{ChatContext, Ids, ReasoningParser, Registry, Texts};
use crate::wire::response::Delta;

const TOOL_TOKEN: &str = "<|tool_call|>";
const TOOL_STRING: &str = "<tool_call>";

/// `_granite_arg_converter`.
fn convert(raw: &str, partial: bool) -> Option<String> {
    match member_object(raw, "arguments") {
        Ok(Some(span)) => Some(span.to_string()),
        Ok(None) => Some(if partial { String::new() } else { "{}".to_string() }),
        Err(_) => None,
    }
}

static ARGS: ArgSyntax = ArgSyntax { convert: |raw, partial, _| convert(raw, partial), stream_deltas: true,
    structural_chars: None, open_value: |_| None, extend_value: |_, _| None };

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
        stream_text_after_calls: false,
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

// --- Reasoning ---------------------------------------------------------------

const THINK_STARTS: [&str; 2] = ["Here's my thought process:", "Here is my thought process:"];
const RESPONSE_STARTS: [&str; 2] = ["Here's my response:", "Here is my response:"];

/// The first occurrence in `text` (byte index) of any of `phrases`, and
/// the phrase.
fn first_of<'a>(text: &str, phrases: &[&'a str]) -> Option<(usize, &'a str)> {
    phrases.iter().filter_map(|p| text.find(p).map(|i| (i, *p))).min_by_key(|&(i, _)| i)
}

/// `(?:Here's|Here is) my thought process:(.*?)(?:Here's|Here is) my
/// response:(.*)`, its first match.
fn split_phrases(text: &str) -> Option<(&str, &str)> {
    let mut from = 0;
    // The leftmost thought-process phrase that a response phrase follows.
    while let Some((i, start)) = first_of(&text[from..], &THINK_STARTS) {
        let body = &text[from + i + start.len()..];
        if let Some((j, response)) = first_of(body, &RESPONSE_STARTS) {
            return Some((&body[..j], &body[j + response.len()..]));
        }
        from += i + 1;
    }
    None
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn string(c: &[char]) -> String {
    c.iter().collect()
}

/// Python's `s[a:b]` on chars with negative indices.
fn slice(c: &[char], a: isize, b: isize) -> &[char] {
    let n = c.len() as isize;
    let at = |i: isize| (if i < 0 { (n + i).max(0) } else { i.min(n) }) as usize;
    let (a, b) = (at(a), at(b));
    if a >= b {
        &[]
    } else {
        &c[a..b]
    }
}

/// Python's `s.rfind(sub)` in chars (-1: none).
fn rfind(c: &[char], sub: &str) -> isize {
    let sub = chars(sub);
    (0..=c.len().saturating_sub(sub.len()))
        .rev()
        .find(|&i| c.len() >= sub.len() && c[i..i + sub.len()] == sub[..])
        .map_or(-1, |i| i as isize)
}

fn is_prefix_of_any(text: &[char], phrases: &[&str]) -> bool {
    let text = string(text);
    phrases.iter().any(|p| p.starts_with(&text))
}

struct GraniteReasoning;

impl GraniteReasoning {
    /// `_get_content_sections`: reasoning, response phrase length, content.
    fn sections(text: &[char]) -> (Option<Vec<char>>, Option<usize>, Option<Vec<char>>) {
        let (mut chunk_start, mut start_reasoning) = (0usize, None::<usize>);
        for (end, _) in text.iter().enumerate().filter(|&(_, &c)| c == ':') {
            let chunk = &text[chunk_start..end];
            match start_reasoning {
                None => {
                    if THINK_STARTS.iter().any(|s| chunk == &chars(s)[..chars(s).len() - 1]) {
                        start_reasoning = Some(end + 1);
                        chunk_start = end + 1;
                    }
                }
                Some(start) => {
                    for response in RESPONSE_STARTS {
                        let r = chars(response);
                        if slice(chunk, -(r.len() as isize) + 1, chunk.len() as isize) == &r[..r.len() - 1] {
                            let end_reasoning = end as isize - r.len() as isize;
                            let reasoning = slice(text, start as isize, end_reasoning).to_vec();
                            return (Some(reasoning), Some(r.len()), Some(text[end + 1..].to_vec()));
                        }
                    }
                }
            }
        }
        match start_reasoning {
            // `if start_reasoning`: an index of 0 is falsy.
            Some(start) if start > 0 => (Some(text[start..].to_vec()), None, None),
            _ => (None, None, None),
        }
    }

    fn no_reasoning_bounds(current: &[char], delta: &[char]) -> (Option<String>, Option<String>) {
        let previous = &current[..current.len() - delta.len()];
        let (is, was) = (is_prefix_of_any(current, &THINK_STARTS), is_prefix_of_any(previous, &THINK_STARTS));
        if was && !is {
            return (None, Some(string(current)));
        }
        if is {
            return (None, None);
        }
        (None, Some(string(delta)))
    }

    fn no_response_bounds(current: &[char], reasoning: &[char], delta: &[char]) -> (Option<String>, Option<String>) {
        if RESPONSE_STARTS.iter().any(|r| current.ends_with(&chars(r))) {
            return (None, None);
        }
        // `reasoning[: -len(delta_text)]` (nothing for an empty delta: `[:-0]`).
        let previous = slice(reasoning, 0, -(delta.len() as isize));
        let current = reasoning;
        let (prev_idx, delta_idx) = (rfind(previous, "Here"), rfind(delta, "Here"));
        let from = |c: &[char], i: isize| slice(c, i, c.len() as isize).to_vec();
        let prev_was = prev_idx >= 0 && is_prefix_of_any(&from(previous, prev_idx), &RESPONSE_STARTS);
        let continues = prev_idx >= 0 && is_prefix_of_any(&from(current, prev_idx), &RESPONSE_STARTS);
        let new_substr = delta_idx >= 0 && is_prefix_of_any(&from(delta, delta_idx), &RESPONSE_STARTS);
        if continues {
            return (None, None);
        }
        if !prev_was {
            if new_substr {
                return (Some(string(slice(delta, 0, delta_idx))), None);
            }
            return (Some(string(delta)), None);
        }
        let held = from(previous, prev_idx);
        if new_substr {
            return (Some(string(&held) + &string(slice(delta, 0, delta_idx))), None);
        }
        (Some(string(&held) + &string(delta)), None)
    }

    fn both_bounds(
        delta: &[char],
        reasoning: &[char],
        content: &[char],
        current: &[char],
        response_len: usize,
    ) -> (Option<String>, Option<String>) {
        let n = delta.len() as isize;
        let delta_content = string(slice(delta, -(content.len() as isize), n));
        let end = n - (content.len() + response_len) as isize;
        let delta_reasoning = (end >= 0).then(|| {
            let start = (reasoning.len() + response_len + content.len()) as isize - 1;
            let offset = (start - (current.len() as isize - n)).max(0);
            string(slice(delta, offset, end))
        });
        (delta_reasoning, Some(delta_content))
    }
}

impl ReasoningParser for GraniteReasoning {
    fn extract_reasoning(&self, text: &str, _ctx: &ChatContext) -> (Option<String>, Option<String>) {
        match split_phrases(text) {
            None => (None, Some(text.to_string())),
            Some((reasoning, content)) => (Some(reasoning.to_string()), (!content.is_empty()).then(|| content.to_string())),
        }
    }

    fn is_reasoning_end(&self, _ids: &[i64]) -> bool {
        false
    }

    fn reports_reasoning_end(&self) -> bool {
        false
    }

    fn extract_content_ids(&self, _ids: &[i64]) -> Vec<i64> {
        Vec::new()
    }

    fn extract_reasoning_streaming(&mut self, t: &Texts, _ids: &Ids) -> Option<Delta> {
        let (current, delta) = (chars(t.current), chars(t.delta));
        // vLLM tests the sections' truthiness: an empty one counts as none.
        let (reasoning, content) = match Self::sections(&current) {
            (Some(r), Some(len), Some(c)) if !r.is_empty() && !c.is_empty() => {
                Self::both_bounds(&delta, &r, &c, &current, len)
            }
            (Some(r), _, _) if !r.is_empty() => Self::no_response_bounds(&current, &r, &delta),
            _ => Self::no_reasoning_bounds(&current, &delta),
        };
        let empty = |s: &Option<String>| s.as_deref().is_none_or(str::is_empty);
        (!empty(&reasoning) || !empty(&content)).then(|| Delta { reasoning, content, ..Default::default() })
    }
}

impl ReasoningParserFactory for GraniteReasoning {
    fn create(&self, _ctx: &ChatContext, _model: &std::sync::Arc<Model>) -> Box<dyn ReasoningParser> {
        Box::new(GraniteReasoning)
    }
}

static REASONING: ReasoningFamily = Family { names: &["granite"], needs: "", load: |_| Ok(Arc::new(GraniteReasoning)) };

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
    registry.reasoning_family(&REASONING);
}

#[cfg(test)]
mod tests {
    use crate::parse::engine::json_member::NotAnObject;
    use super::*;

    #[test]
    fn the_arguments_member_is_carved_out_verbatim() {
        let raw = r#"{"name": "f", "arguments": {"a": "}", "b": {"c": 1}}, "x": 2}"#;
        assert_eq!(member_object(raw, "arguments"), Ok(Some(r#"{"a": "}", "b": {"c": 1}}"#)));
        assert_eq!(member_object(r#"{"name": "f", "arguments": {"a": 1"#, "arguments"), Ok(Some(r#"{"a": 1"#)));
        assert_eq!(member_object(r#"{"name": "f", "arguments": "#, "arguments"), Ok(None));
        assert_eq!(member_object(r#"{"name": "f", "arguments": "x"}"#, "arguments"), Err(NotAnObject));
        // A key inside another value does not count.
        assert_eq!(member_object(r#"{"name": {"arguments": 1}}"#, "arguments"), Ok(None));
        assert_eq!(convert(r#"{"name": "f"}"#, false).as_deref(), Some("{}"));
        assert_eq!(convert(r#"{"name": "f""#, true).as_deref(), Some(""));
    }
}
