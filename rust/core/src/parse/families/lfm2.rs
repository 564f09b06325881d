//! LiquidAI LFM2 / LFM2.5 (`lfm2`, vLLM's `Lfm2ToolParser`): pythonic calls
//! `[f(a=1), g()]` between `<|tool_call_start|>` and `<|tool_call_end|>`,
//! text around them content. Broken call text is repaired as vLLM repairs
//! it (`pythonic_repair`), and an echo of the call body the model writes
//! after the end marker is dropped (through its last end marker).

use std::sync::Arc;

use serde_json::json;

use super::pythonic::make_valid_python;
use super::pythonic_repair::{
    contains_broken_string_literal, escape_ctrl_chars, escape_nested_quotes, normalize_leading_zero_ints,
    rename_reserved_kwargs, restore_reserved_kwarg_names,
};
use crate::model::Model;
use crate::parse::call_stream::{skip_chars, CallStream};
use crate::parse::family::{token_ids, Family, KeepSpecial, ToolFamily, ToolParserFactory};
use crate::parse::partial_json::py_isspace;
use crate::parse::pyast::{parse_call_list, parses, NotCalls, PyCall};
use crate::parse::{random_tool_call_id, ChatContext, Extracted, FunctionCall, Ids, Registry, Texts, ToolParser};
use crate::wire::response::{Delta, DeltaToolCall};

const START: &str = "<|tool_call_start|>";
const END: &str = "<|tool_call_end|>";

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// `_strip_echo`: the text after the last end marker.
fn strip_echo(after: &str) -> &str {
    after.rfind(END).map_or(after, |i| &after[i + END.len()..])
}

/// `_extract_tool_call_text`: the call text and the content around it.
fn split_output(text: &str) -> Option<(&str, Option<String>)> {
    let start = text.find(START)?;
    let body = start + START.len();
    let before = py_strip(&text[..start]);
    let Some(len) = text[body..].find(END) else {
        return Some((&text[body..], (!before.is_empty()).then(|| before.to_string())));
    };
    let after = py_strip(strip_echo(&text[body + len + END.len()..]));
    let parts: Vec<&str> = [before, after].into_iter().filter(|p| !p.is_empty()).collect();
    Some((&text[body..body + len], (!parts.is_empty()).then(|| parts.join("\n"))))
}

/// A parsed call as vLLM's `handle_single_tool` (then `_restore_reserved`).
fn function_call(call: PyCall, renamed: bool) -> Result<FunctionCall, NotCalls> {
    let mut arguments = call.arguments.dumps()?;
    if renamed {
        arguments = restore_reserved_kwarg_names(&arguments);
    }
    Ok(FunctionCall { id: None, name: call.name, arguments })
}

/// Batch: the first rewrite of the call text that parses, read as calls.
fn batch_calls(tool_text: &str) -> Result<Vec<FunctionCall>, NotCalls> {
    let mut renamed = false;
    let text = if parses(tool_text) {
        tool_text.to_string()
    } else {
        let escaped = escape_ctrl_chars(&normalize_leading_zero_ints(tool_text));
        let mut candidates = vec![escaped.clone()];
        let (requoted, changed) = escape_nested_quotes(&escaped);
        if changed {
            candidates.push(escape_ctrl_chars(&requoted));
        }
        let (kw, kw_renamed) = rename_reserved_kwargs(candidates.last().map_or("", String::as_str));
        renamed = kw_renamed;
        if kw_renamed {
            candidates.push(kw);
        }
        candidates.into_iter().find(|c| parses(c)).ok_or(NotCalls)?
    };
    let list = parse_call_list(&text)?;
    if list.calls.is_empty() {
        return Err(NotCalls);
    }
    list.calls.into_iter().map(|c| function_call(c, renamed)).collect()
}

#[derive(Default)]
struct Lfm2Parser {
    /// `_trailing_emitted`.
    trailing_emitted: String,
    calls: CallStream,
}

crate::impl_snapshot!(Lfm2Parser { trailing_emitted } nested { calls });

impl Lfm2Parser {
    /// The trailing content not streamed yet, after vLLM's echo rules.
    fn trailing(&mut self, current: &str) -> String {
        let Some(end) = current.find(END) else { return String::new() };
        let full = &current[end + END.len()..];
        let stripped = strip_echo(full);
        let final_trailing = if stripped.len() == full.len() {
            let head = full.trim_start();
            if head.starts_with('[') || head.starts_with('<') {
                self.trailing_emitted.clone()
            } else {
                full.to_string()
            }
        } else {
            stripped.to_string()
        };
        let out = final_trailing.strip_prefix(self.trailing_emitted.as_str()).unwrap_or("").to_string();
        self.trailing_emitted = final_trailing;
        out
    }

    /// The tool part of a streaming step; `Err` where vLLM's `try` fails.
    fn stream_calls(&mut self, tool_text: &str, has_end: bool) -> Result<StreamStep, NotCalls> {
        let mut text = escape_ctrl_chars(&normalize_leading_zero_ints(tool_text));
        if has_end && !parses(&text) {
            let (requoted, changed) = escape_nested_quotes(&text);
            if changed {
                text = escape_ctrl_chars(&requoted);
            }
        }
        let (kw, renamed) = rename_reserved_kwargs(&text);
        if renamed {
            text = kw;
        }
        if contains_broken_string_literal(&text) {
            return Ok(StreamStep::Withheld);
        }
        let Some((valid, added)) = make_valid_python(&text)? else { return Ok(StreamStep::Withheld) };
        let list = parse_call_list(&valid)?;
        if added.contains('}') && list.has_set {
            return Ok(StreamStep::Withheld);
        }
        let count = list.calls.len();
        let mut deltas = Vec::new();
        for (index, call) in list.calls.into_iter().enumerate() {
            if (index as i64) < self.calls.current {
                continue;
            }
            self.calls.current = index as i64;
            if self.calls.streamed.len() == index {
                self.calls.streamed.push(String::new());
            }
            let complete = index + 1 < count || !added.contains(")]");
            if complete {
                self.calls.current += 1;
            }
            let mut withheld = String::new();
            if !complete {
                let closers: Vec<char> = added.chars().collect();
                let kept = closers.len() - 2;
                withheld = closers[..kept].iter().collect();
                if closers[kept] == ')' {
                    withheld.push('}');
                }
                withheld = withheld.replace('\'', "\"");
            }
            let call = function_call(call, renamed)?;
            let args = call.arguments.strip_suffix(withheld.as_str()).ok_or(NotCalls)?;
            let sent = self.calls.streamed.get(index).ok_or(NotCalls)?;
            if sent.is_empty() {
                self.calls.streamed[index] = args.to_string();
                let id = random_tool_call_id();
                deltas.push(DeltaToolCall::opening(index as i64, id, call.name, Some(args.to_string())));
            } else {
                let diff = skip_chars(args, sent.chars().count()).to_string();
                if !diff.is_empty() {
                    deltas.extend(self.calls.send_args(index, diff));
                }
            }
        }
        if !deltas.is_empty() && self.calls.prev.is_empty() {
            self.calls.prev = vec![json!({"arguments": {}})];
        }
        Ok(StreamStep::Calls { deltas, nothing_added: added.is_empty() })
    }
}

enum StreamStep {
    /// Text that cannot be read as calls yet: content only.
    Withheld,
    Calls { deltas: Vec<DeltaToolCall>, nothing_added: bool },
}

impl ToolParser for Lfm2Parser {
    fn completes_to_batch(&self) -> bool {
        true
    }

    fn snapshot(&mut self) -> Option<&mut dyn crate::parse::Snapshot> {
        Some(self)
    }

    fn extract_tool_calls(&self, text: &str, _ctx: &ChatContext) -> Extracted {
        let not_called = || Extracted { tools_called: false, calls: Vec::new(), content: Some(text.to_string()) };
        let Some((tool_text, content)) = split_output(text) else { return not_called() };
        let tool_text = py_strip(tool_text);
        // `\[.*\]$` (`re.match`, DOTALL) on stripped text.
        if !(tool_text.starts_with('[') && tool_text.len() >= 2 && tool_text.ends_with(']')) {
            return not_called();
        }
        match batch_calls(tool_text) {
            Ok(calls) => Extracted { tools_called: true, calls, content },
            Err(NotCalls) => not_called(),
        }
    }

    fn extract_tool_calls_streaming(&mut self, t: &Texts, _ids: &Ids, _ctx: &ChatContext) -> Option<Delta> {
        let Some(start) = t.current.find(START) else { return Some(Delta::content(t.delta)) };
        let leading = if t.previous.contains(START) {
            String::new()
        } else {
            let from = t.previous.chars().count();
            skip_chars(&t.current[..start], from).to_string()
        };
        let (has_end, had_end) = (t.current.contains(END), t.previous.contains(END));
        let trailing = if has_end { self.trailing(t.current) } else { String::new() };
        if has_end && !self.calls.prev.is_empty() && had_end {
            return Some(Delta::content(trailing));
        }
        let body = &t.current[start + START.len()..];
        let tool_text = body.split(END).next().unwrap_or("").trim_start_matches(py_isspace);
        let content = leading + &trailing;
        let content_only = || (!content.is_empty()).then(|| Delta::content(content.clone()));
        match self.stream_calls(tool_text, has_end) {
            Ok(StreamStep::Calls { deltas, nothing_added }) => {
                if !deltas.is_empty() || !content.is_empty() {
                    let content = (!content.is_empty()).then_some(content);
                    Some(Delta { content, tool_calls: deltas, ..Default::default() })
                } else if nothing_added && self.calls.current > 0 {
                    Some(Delta::content(""))
                } else {
                    None
                }
            }
            Ok(StreamStep::Withheld) | Err(NotCalls) => content_only(),
        }
    }

    fn remaining_unstreamed_args(&mut self) -> String {
        self.calls.remaining()
    }
}

struct Lfm2;

impl ToolParserFactory for Lfm2 {
    fn create(&self, _ctx: &ChatContext, _model: &Arc<Model>, _with_reasoning: bool) -> Box<dyn ToolParser> {
        Box::new(Lfm2Parser::default())
    }

    fn keep_special_tokens(&self) -> KeepSpecial {
        KeepSpecial::WithTools
    }
}

static TOOLS: ToolFamily = Family {
    names: &["lfm2"],
    needs: "<|tool_call_start|>, <|tool_call_end|> as single tokens",
    load: |model| {
        token_ids(model, [START, END], "LFM2 tool parser could not locate <|tool_call_start|>/<|tool_call_end|> tokens in the tokenizer!")?;
        Ok(Arc::new(Lfm2))
    },
};

pub(super) fn register(registry: &mut Registry) {
    registry.tool_family(&TOOLS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_repairs_and_drops_the_echo() {
        let ctx = ChatContext::from_request(&Default::default(), &Default::default());
        let p = Lfm2Parser::default();
        let text = "Sure.<|tool_call_start|>[f(from=07, cmd='a\nb')]<|tool_call_end|>[f(from=07)]<|tool_call_end|> Done.";
        let got = p.extract_tool_calls(text, &ctx);
        assert!(got.tools_called);
        assert_eq!(got.content.as_deref(), Some("Sure.\nDone."));
        assert_eq!(got.calls[0].arguments, r#"{"from": 7, "cmd": "a\nb"}"#);
        assert!(!p.extract_tool_calls("<|tool_call_start|>[]<|tool_call_end|>", &ctx).tools_called);
    }
}
