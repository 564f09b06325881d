//! The kit of vLLM's legacy streaming tool parsers: the bookkeeping its
//! `ToolParser` keeps while a stream runs (`current_tool_id`,
//! `current_tool_name_sent`, `prev_tool_call_arr`,
//! `streamed_args_for_tool`), the arguments left unstreamed at the end
//! (`get_remaining_unstreamed_args`), and the final delta that completes a
//! stream to the batch answer where vLLM's chunking lost part of it.
//!
//! A parser keeps its own algorithm and one `CallStream`, saved as one
//! nested field of its snapshot.

use serde_json::{json, Value};

use crate::parse::{random_tool_call_id, Extracted, FunctionCall};
use crate::pycompat::json::{dumps, loads};
use crate::wire::response::{Delta, DeltaToolCall};

/// `find_common_prefix`: the longest common prefix of two strings.
pub fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let end = a.char_indices().zip(b.chars()).find(|((_, x), y)| x != y).map(|((i, _), _)| i);
    &a[..end.unwrap_or_else(|| a.chars().zip(b.chars()).map(|(x, _)| x.len_utf8()).sum())]
}

/// `find_common_suffix`: the longest common suffix of non-alphanumeric
/// characters.
fn common_suffix<'a>(a: &'a str, b: &str) -> &'a str {
    let n = a.chars().rev().zip(b.chars().rev()).take_while(|(x, y)| x == y && !x.is_alphanumeric()).count();
    let cut = a.char_indices().rev().nth(n.wrapping_sub(1)).map_or(a.len(), |(i, _)| i);
    if n == 0 {
        ""
    } else {
        &a[cut..]
    }
}

/// `extract_intermediate_diff(curr, old)`: what the new partial JSON adds
/// between the text both share at the start and the closers both end with.
pub fn intermediate_diff(curr: &str, old: &str) -> String {
    let suffix = common_suffix(curr, old);
    // `old[::-1].replace(suffix[::-1], "", 1)[::-1]`: drop the suffix's last
    // occurrence.
    let drop_last = |s: &str| match s.rfind(suffix) {
        Some(i) if !suffix.is_empty() => format!("{}{}", &s[..i], &s[i + suffix.len()..]),
        _ => s.to_string(),
    };
    let old = drop_last(old);
    let prefix = common_prefix(curr, &old).to_string();
    let diff = drop_last(curr);
    if prefix.is_empty() {
        diff
    } else {
        diff.replacen(&prefix, "", 1)
    }
}

/// `obj.get(key)` on a parsed call: `None` where Python would raise (the
/// value is not a dict).
pub fn py_get<'a>(obj: &'a Value, key: &str) -> Option<Option<&'a Value>> {
    obj.as_object().map(|o| o.get(key))
}

/// `FunctionCall(name=call["name"], arguments=json.dumps(call["arguments"]))`
/// on a parsed `{"name": ..., "arguments": ...}`: `None` where Python
/// raises (not a dict, a key missing, a name that is not a string).
pub fn json_call(call: &Value) -> Option<FunctionCall> {
    let (Some(Some(name)), Some(Some(args))) = (py_get(call, "name"), py_get(call, "arguments")) else {
        return None;
    };
    Some(FunctionCall { id: None, name: name.as_str()?.to_string(), arguments: dumps(args) })
}

/// `s[n:]` in chars.
pub fn skip_chars(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or("", |(i, _)| &s[i..])
}

/// vLLM's per-stream tool-call bookkeeping, and which calls went out named.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CallStream {
    /// `current_tool_id`: the call being streamed, -1 before the first.
    pub current: i64,
    /// `current_tool_name_sent`: the current call's name went out.
    pub name_sent: bool,
    /// `prev_tool_call_arr`: each call as last parsed; its `arguments` are
    /// what the stream owes.
    pub prev: Vec<Value>,
    /// `streamed_args_for_tool`: per call, the argument text sent so far.
    pub streamed: Vec<String>,
    /// Per call, whether its opening delta (id, type, name) went out.
    pub named: Vec<bool>,
}

impl Default for CallStream {
    fn default() -> Self {
        Self::new()
    }
}

impl CallStream {
    pub fn new() -> Self {
        CallStream { current: -1, name_sent: false, prev: Vec::new(), streamed: Vec::new(), named: Vec::new() }
    }

    /// A call begins at `index`: its name is not sent, nor any argument.
    pub fn begin(&mut self, index: i64) {
        self.current = index;
        self.name_sent = false;
        self.streamed.push(String::new());
    }

    /// The current call's opening delta (a fresh id); its name is sent.
    pub fn open(&mut self, name: String) -> DeltaToolCall {
        self.name_sent = true;
        DeltaToolCall::opening(self.current, random_tool_call_id(), name, None)
    }

    /// Call `index` went out named.
    pub fn mark_named(&mut self, index: usize) {
        if self.named.len() <= index {
            self.named.resize(index + 1, false);
        }
        self.named[index] = true;
    }

    /// `diff` streams as more of call `index`'s arguments; `None` when the
    /// call has no entry (vLLM's `IndexError`: nothing is sent).
    pub fn send_args(&mut self, index: usize, diff: String) -> Option<DeltaToolCall> {
        self.streamed.get_mut(index)?.push_str(&diff);
        Some(DeltaToolCall::arguments(index as i64, diff))
    }

    /// `get_remaining_unstreamed_args`: what the last parsed call's
    /// arguments add to those streamed for it (a call without an
    /// `arguments` key owes `{}`).
    pub fn remaining(&self) -> String {
        let Some(last) = self.prev.last() else { return String::new() };
        let expected = match last.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => dumps(v),
            None => "{}".to_string(),
        };
        let actual = self.streamed.get(self.prev.len() - 1).map_or("", String::as_str);
        expected.strip_prefix(actual).unwrap_or("").to_string()
    }

    /// The call `remaining` belongs to (-1 with none parsed).
    pub fn remaining_index(&self) -> Option<i64> {
        i64::try_from(self.prev.len()).ok().map(|n| n - 1)
    }

    /// `remaining`, counted as streamed: the final delta carries it.
    pub fn take_remaining(&mut self) -> String {
        let rest = self.remaining();
        if let Some(index) = self.prev.len().checked_sub(1) {
            if self.streamed.len() <= index {
                self.streamed.resize(index + 1, String::new());
            }
            self.streamed[index].push_str(&rest);
        }
        rest
    }

    /// What call `index` lacks of `call` in the stream, counted as sent: its
    /// opening with the arguments not sent yet (an id of its own or a fresh
    /// one), or the rest of its arguments. Nothing where nothing is missing:
    /// no arguments streamed reads as `{}`, and white space alone changes no
    /// arguments; nor where what went out is not a prefix of the answer (it
    /// cannot be taken back).
    pub fn complete(&mut self, index: usize, call: &FunctionCall) -> Option<DeltaToolCall> {
        let named = self.named.get(index).copied().unwrap_or(false);
        let sent = self.streamed.get(index).map_or("", String::as_str);
        let rest = call.arguments.strip_prefix(sent)?;
        let delta = if named {
            let reads_as_empty = sent.is_empty() && loads(&call.arguments).is_some_and(|v| v == json!({}));
            if reads_as_empty || rest.trim().is_empty() {
                return None;
            }
            DeltaToolCall::arguments(index as i64, rest.to_string())
        } else {
            // Arguments all sent before the name go out no more.
            let arguments = (!rest.is_empty() || sent.is_empty()).then(|| rest.to_string());
            if index as i64 == self.current {
                self.name_sent = true;
            }
            let id = call.id.clone().unwrap_or_else(random_tool_call_id);
            DeltaToolCall::opening(index as i64, id, call.name.clone(), arguments)
        };
        self.mark_named(index);
        if self.streamed.len() <= index {
            self.streamed.resize(index + 1, String::new());
        }
        self.streamed[index].clone_from(&call.arguments);
        Some(delta)
    }

    /// The final delta that makes the stream so far assemble to the batch
    /// answer `target`: what each call lacks, or, where batch found no call,
    /// its content, unless part of a call already went out.
    pub fn finish_with(&mut self, target: Extracted) -> Option<Delta> {
        if !target.tools_called {
            let silent = !self.named.contains(&true) && self.streamed.iter().all(String::is_empty);
            return silent.then(|| Delta { content: target.content, ..Default::default() });
        }
        let calls: Vec<DeltaToolCall> =
            target.calls.iter().enumerate().filter_map(|(i, call)| self.complete(i, call)).collect();
        (!calls.is_empty()).then(|| Delta::tool_calls(calls))
    }
}

/// The whole batch answer as the final delta of a stream that sent none of it.
pub fn whole_answer(target: Extracted) -> Option<Delta> {
    CallStream::new().finish_with(target)
}

crate::impl_snapshot!(CallStream { current, name_sent, prev, streamed, named }
    check |c| crate::parse::snapshot::check_index(c.current, "current"));

#[cfg(test)]
mod tests {
    #[test]
    fn intermediate_diffs_read_as_vllms() {
        use super::intermediate_diff;
        assert_eq!(intermediate_diff(r#"{"fruit": "apple"}"#, r#"{"fruit": "ap"}"#), "ple");
        assert_eq!(intermediate_diff(r#"{"a": 1, "b": 2}"#, r#"{"a": 1}"#), ", \"b\": 2");
        assert_eq!(intermediate_diff("{}", "{}"), "");
    }

    use super::*;

    fn call(name: &str, arguments: &str) -> FunctionCall {
        FunctionCall { id: None, name: name.into(), arguments: arguments.into() }
    }

    fn parts(d: &DeltaToolCall) -> (i64, bool, Option<&str>, Option<&str>) {
        let f = d.function.as_ref().expect("function");
        (d.index, d.id.is_some() && d.kind == Some("function"), f.name.as_deref(), f.arguments.as_deref())
    }

    #[test]
    fn remaining_is_what_the_last_call_owes() {
        let mut s = CallStream::new();
        assert_eq!(s.remaining(), "");
        s.begin(0);
        s.prev = vec![json!({"name": "f", "arguments": {"a": 1}})];
        s.send_args(0, "{\"a\"".into());
        assert_eq!(s.remaining(), ": 1}");
        assert_eq!(s.remaining_index(), Some(0));
        assert_eq!(s.take_remaining(), ": 1}");
        assert_eq!(s.remaining(), "");
        // No arguments key reads as `{}`; a string is the text itself.
        s.prev = vec![json!({}), json!({"arguments": "{\"b\": 2}"})];
        assert_eq!(s.remaining(), "{\"b\": 2}");
        s.prev.pop();
        assert_eq!(s.remaining(), "");
    }

    #[test]
    fn completing_sends_only_what_is_missing() {
        let mut s = CallStream::new();
        s.begin(0);
        let open = s.open("f".into());
        assert_eq!(parts(&open), (0, true, Some("f"), None));
        s.mark_named(0);
        s.send_args(0, "{\"a\": ".into());
        let target = Extracted {
            tools_called: true,
            calls: vec![call("f", "{\"a\": 1}"), call("g", "{}"), call("h", "{}")],
            content: None,
        };
        s.begin(1);
        s.mark_named(1);
        let d = s.finish_with(target.clone()).expect("delta");
        let got: Vec<_> = d.tool_calls.iter().map(parts).collect();
        assert_eq!(got, [(0, false, None, Some("1}")), (2, true, Some("h"), Some("{}"))]);
        assert!(s.finish_with(target).is_none());
    }

    #[test]
    fn without_calls_the_content_goes_out_unless_a_call_did() {
        let target = Extracted { tools_called: false, calls: Vec::new(), content: Some("text".into()) };
        assert_eq!(CallStream::new().finish_with(target.clone()).and_then(|d| d.content).as_deref(), Some("text"));
        let mut s = CallStream::new();
        s.begin(0);
        s.send_args(0, "{".into());
        assert!(s.finish_with(target).is_none());
    }
}
